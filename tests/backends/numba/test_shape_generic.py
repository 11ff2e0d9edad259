"""The numba backend's code is shape-generic: a Jacobian called at a new input size runs
the code numba compiled at the first size, with no compile of its own
(``wengert/backends/numba/compiled.py``), and gives the Python backend's values.

What once came back otherwise: GradBench's ba Jacobian (``jacrev`` of residuals summed
over the observations) wrote its seed basis as a constant of the generated code
(``c0 = constant f64[2,2,p]``, ``p`` the number of observations), so each ba instance was
new code and numba compiled it again (286-308 s a time). The basis is now made by the
code from the input's lengths (``np.broadcast_to(c0, (2, 2, x_shape1))`` over a
``(2, 2, 1)`` identity, ``np.eye(x_shape0, ...)`` for ``jacfwd``), on both backends.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg

from checks import assert_close, rtol
from numba_checks import fallbacks


pytestmark = pytest.mark.numba


def summed_columns(cam, x):
    """ba's shape: per-column residuals of (3, p) operands, summed over the columns."""
    rot = np.sin(cam) * x + np.cos(x) * cam[::-1]
    return np.sum(rot * rot / (1.0 + x * x), axis=1)


def summed_columns_python(cam, x):     # the same, its own code (no code shared with the above)
    rot = np.sin(cam) * x + np.cos(x) * cam[::-1]
    return np.sum(rot * rot / (1.0 + x * x), axis=1)


def elementwise(x):
    return np.tanh(x) * np.sum(x * x)


def _counting(monkeypatch):
    """numba's ``Dispatcher.compile`` of wengert's generated code counted: the
    signatures it was asked for that the dispatcher did not hold yet."""
    import numba.core.dispatcher as dispatcher
    real = dispatcher.Dispatcher.compile
    seen = []

    def compile_(self, sig):
        if self.py_func.__module__.startswith("wengert_numba_") and \
                tuple(sig) not in [tuple(s) for s in self.signatures]:
            seen.append((self.py_func.__name__, tuple(sig)))
        return real(self, sig)
    monkeypatch.setattr(dispatcher.Dispatcher, "compile", compile_)
    return seen


def _at_sizes(jac, inputs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [jac(*args) for args in inputs]
    assert not fallbacks(caught), [str(w.message) for w in fallbacks(caught)]
    return outs


def test_a_ba_like_jacrev_at_two_instance_sizes_compiles_once(monkeypatch):
    rng = np.random.default_rng(3)
    inputs = [(rng.uniform(-1, 1, (3, p)), rng.uniform(0.5, 2, (3, p))) for p in (5, 9)]
    seen = _counting(monkeypatch)
    jac = wg.jacrev(summed_columns, argnums=(0, 1), engine="source", backend="numba",
                    fallback=False)
    got = _at_sizes(jac, inputs)
    assert len(seen) == 1, seen
    assert "broadcast_to" in jac.source and "constant f64[3,3,5]" not in jac.source
    want = [wg.jacrev(summed_columns, argnums=(0, 1), engine="source")(*a) for a in inputs]
    for g, w, (cam, _) in zip(got, want, inputs):
        assert g[0].shape == (3, 3, cam.shape[1])
        assert_close(g, w, rtol("exact", w))


@pytest.mark.parametrize("transform", [wg.jacfwd, wg.jacrev], ids=["jacfwd", "jacrev"])
def test_a_square_jacobian_at_two_sizes_compiles_once(monkeypatch, transform):
    rng = np.random.default_rng(4)
    inputs = [(rng.normal(size=n),) for n in (4, 7)]
    seen = _counting(monkeypatch)
    jac = transform(elementwise, engine="source", backend="numba", fallback=False)
    got = _at_sizes(jac, inputs)
    assert len(seen) == 1, seen
    assert "np.eye(x_shape0" in jac.source
    for g, (x,) in zip(got, inputs):
        want = transform(elementwise, engine="source")(x)
        assert g.shape == (x.size, x.size)
        assert_close(g, want, rtol("exact", want))


def test_the_python_backend_makes_the_same_basis_at_every_size(monkeypatch):
    """The Python backend stages the code once (and once more at other lengths, to
    check that it holds there): a new size runs it, with no staging of its own."""
    import wengert.api.compiled as compiled
    made, real = [], compiled.Compiled.__init__

    def init(self, *args, **kwargs):
        made.append(1)
        real(self, *args, **kwargs)
    monkeypatch.setattr(compiled.Compiled, "__init__", init)
    jac = wg.jacrev(summed_columns_python, argnums=(0, 1), engine="source")
    texts = []
    for p in (4, 6, 9):
        cam, x = np.linspace(0.1, 0.5, 3 * p).reshape(3, p), np.full((3, p), 1.5)
        assert_close(jac(cam, x), wg.jacrev(summed_columns_python, argnums=(0, 1),
                                             engine="trace")(cam, x), 1e-12)
        texts.append(jac.source)
    assert len(made) == 2
    assert texts[0] == texts[1] == texts[2]
    assert "np.eye(cam_shape0, cam_shape0, 0)" in texts[0] and "constant f64[3" not in texts[0]
