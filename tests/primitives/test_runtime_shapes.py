"""Lengths known only at run time (``wengert/primitives/runtime_shapes.py``, ``index.nonzero``
and ``index.index_shape``, ``core.shapes``' broadcasting of them): a ``None`` in an aval's
shape, which the source engine's code reads when it runs.

* ``index_shape`` is NumPy's shape of ``x[idx]`` with ``None`` for the lengths of index
  arrays from traced masks (checked against NumPy at stand-in lengths);
* broadcasting: ``None`` meets itself or 1; against another length it is a
  ``RuntimeLengthError`` (an ``UnsupportedSyntax``: ``engine="auto"`` falls back);
* the generated code reads the lengths (``np.nonzero``, ``np.shape``), and the same code is
  right at every mask;
* where the source engine cannot use such a length, ``auto`` gives the trace engine's
  derivative.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import RuntimeLengthError
from wengert.core.ir import Aval
from wengert.core.shapes import broadcast_shapes, elementwise_aval
from wengert.primitives.index import DYN, index_shape

from checks import assert_close, fd_jvp


@pytest.mark.parametrize("shape, idx, dyn, want", [
    ((5,), (DYN,), [(None,)], (None,)),
    ((4, 3), (DYN, DYN), [(None,), (None,)], (None,)),
    ((4, 3), (DYN,), [(None,)], (None, 3)),
    ((4, 3), (slice(None), DYN), [(None,)], (4, None)),
    ((4, 3, 2), (DYN, slice(1, 3), DYN), [(None,), (None,)], (None, 2)),
    ((4, 3, 2), (0, DYN), [(None,)], (None, 2)),
    ((None, 3), (slice(1, None),), [], (None, 3)),
    ((None, 3), (slice(None), 1), [], (None,)),
    ((None, 3), (None, Ellipsis, 0), [], (1, None)),
], ids=lambda v: str(v).replace(" ", ""))
def test_index_shape_is_numpys(shape, idx, dyn, want):
    assert index_shape(shape, idx, dyn) == want
    # at stand-in lengths (7 for every None), NumPy's own shape: the same rank, the same
    # known lengths
    stand = tuple(7 if d is None else d for d in shape)
    arrays = iter(np.zeros(7 if None in d else d, np.intp) for d in dyn)
    filled = tuple(next(arrays) if p is DYN else p for p in idx)
    got = np.zeros(stand)[filled].shape
    assert len(got) == len(want) and all(w is None or w == g for w, g in zip(want, got))


def test_broadcasting_lengths_known_at_run_time():
    assert broadcast_shapes((None,), ()) == (None,)
    assert broadcast_shapes((None, 3), (1, 3)) == (None, 3)
    assert broadcast_shapes((None,), (None,)) == (None,)
    assert broadcast_shapes((None, 1), (4,)) == (None, 4)
    with pytest.raises(RuntimeLengthError, match="known only at run time"):
        broadcast_shapes((None,), (3,))
    out = elementwise_aval("mul")(Aval((None, 2), np.float64), Aval((2,), np.float32))
    assert out.shape == (None, 2) and out.dtype == np.float64


def _positive_part(w):
    return np.sum(w[w > 0] ** 2) / len(w[w > 0])


def test_the_code_reads_the_lengths_it_needs():
    g = wg.grad(_positive_part, engine="source")
    for w in (np.array([0.5, -1.0, 2.0]), np.array([3.0, 1.0, -0.5]), np.array([1.0, 1.0, 1.0])):
        t = np.arange(1.0, 4.0)
        assert_close(np.dot(g(w), t), fd_jvp(_positive_part, (w,), (t,)), 1e-6)
    assert g.generations == 1
    assert "np.nonzero(" in g.source and "np.shape(" in g.source
    for text in ("(1,)", "(2,)", "(3,)"):           # no count fixed when it was generated
        assert f"broadcast_to(np.float64(1.0), {text})" not in g.source


def _against_a_fixed_length(w):
    return np.sum(w[w > 0] * np.arange(2.0))        # broadcasting a count against 2


def _concatenated(w):
    return np.sum(np.concatenate([w[w > 0], w]) ** 2)


@pytest.mark.parametrize("f", [_against_a_fixed_length, _concatenated],
                         ids=lambda f: f.__name__)
def test_what_the_source_engine_cannot_use_auto_takes_to_the_trace_engine(f):
    w = np.array([0.5, -1.0, 2.0])
    with pytest.raises(RuntimeLengthError, match="test_runtime_shapes.py:"):
        wg.grad(f, engine="source")(w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = wg.grad(f, engine="auto")(w)
    assert_close(got, wg.grad(f, engine="trace")(w), 1e-12)
    t = np.array([0.3, -0.2, 1.1])
    assert_close(np.dot(got, t), fd_jvp(f, (w,), (t,)), 1e-6)


def _masked_square(v):
    return np.sum(v[v > 0.7] ** 2) * np.sum(v)


def _masked_nested(v):
    w = v[v > 0.4]
    return np.sum(np.sin(w) * np.sum(w)) + np.sum(v[np.abs(v) < 1.0] ** 3)


@pytest.mark.parametrize("f", [_masked_square, _masked_nested])
def test_hessians_of_masked_values_match_the_gradients_finite_differences(f):
    """Forward over reverse through a masked value (``x[mask]``): the batch of Hessian
    columns gives a masked value's tangent a lane axis, a broadcast to ``(1, None)``,
    which crashed (raw ``TypeError`` in ``as_int``, 110 programs of ``make fuzz``).
    Both engines' Hessians equal each other and, column by column, the finite
    differences of the gradient; the mask changes with the point and the code follows."""
    for v in (np.array([0.3, 0.9, 1.2, 0.5]), np.array([0.8, -0.2, 0.95, 0.45, 1.3])):
        hs = wg.hessian(f, engine="source")(v)
        ht = wg.hessian(f, engine="trace")(v)
        assert_close(hs, ht, rtol=1e-12, atol=1e-12)
        grad = wg.grad(f, engine="trace")
        for k in range(v.size):
            e = np.zeros_like(v)
            e[k] = 1.0
            assert_close(hs[:, k], fd_jvp(grad, (v,), (e,)), rtol=1e-5, atol=1e-6)
