"""Checkpointed loops compiled by numba (issue 29): ``fori_loop(..., checkpoint=)`` under
every schedule of ``wengert/control/schedules.py`` and ``while wg.checkpointed(...)``,
their sweeps the numba twins of ``control/schedules_numba.py`` and their stored states a
typed dict (``backends/numba/codegen.py``'s ``stacked_states``, ``unstacked_states``).

Each derivative is compiled with ``fallback=False`` (a construct numba cannot compile
raises instead of running the Python backend) and must give the Python backend's values
(``COMPILED_RTOL``) and finite differences' (``PROGRAM_RTOL``), leaving the caller's
arrays unchanged. What once came back otherwise: every checkpointed loop fell back to the
Python backend (``NumbaCompileError: binomial_forward, wengert's NumPy code of a row``;
``ctz_online`` for a ``while``), the schedules being Python generators.

That the twins yield the schedules' actions is ``tests/control/test_schedules_numba.py``'s.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg

from checks import COMPILED_RTOL_F64 as COMPILED, assert_close, fd_jvp, rtol
from numba_checks import copies, fallbacks, unchanged

pytestmark = pytest.mark.numba
pytest.importorskip("numba")

X = np.array([0.3, -0.6, 0.9, 0.1])
H = 0.2
TRIPS = (0, 1, 2, 7, 50)
# every schedule wengert has: (checkpoint=, snapshots=)
SCHEDULES = [("ctz", None), ("binomial", None), ("binomial", 1), ("binomial", 2),
             ("binomial", 4)]


def euler(checkpoint, snapshots=None):
    """A loop with a differentiated constant (h), a carry of an array, a float and an
    int, and the trip count an argument (given when the code runs)."""
    def loss(x0, h, n):
        def step(i, c):
            x, s, k = c
            x = x + h * (np.sin(x) - x * x * x) + 0.01 * i
            return x, s * 0.9 + h * np.sum(x), k + 1
        x, s, k = wg.fori_loop(n, step, (x0, 0.5, 0), checkpoint=checkpoint,
                               snapshots=snapshots)
        return np.sum(x * x) * (k + 1) + s * s
    return loss


def _quiet(fn, *args):
    """``fn(*args)``, asserting numba compiled it (no ``NumbaFallbackWarning``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    assert not fallbacks(caught), [str(w.message) for w in fallbacks(caught)]
    return out


def _compiles(monkeypatch):
    """The signatures numba compiled wengert's generated functions for."""
    import numba.core.dispatcher as dispatcher
    real = dispatcher.Dispatcher.compile
    seen = []

    def compile_(self, sig):
        if (self.py_func.__module__ or "").startswith("wengert_numba_") and \
                tuple(sig) not in [tuple(s) for s in self.signatures]:
            seen.append((self.py_func.__name__, tuple(sig)))
        return real(self, sig)
    monkeypatch.setattr(dispatcher.Dispatcher, "compile", compile_)
    return seen


# --- fori_loop(checkpoint=) ---------------------------------------------------------------
@pytest.mark.parametrize("checkpoint,snapshots", SCHEDULES,
                         ids=[f"{c}{'' if s is None else s}" for c, s in SCHEDULES])
def test_fori_loop_gradient_at_every_trip_count_one_compile(monkeypatch, checkpoint,
                                                              snapshots):
    """One compiled code for trip counts 0, 1, 2, 7 and 50 given when it runs (the
    same file, no second compile), each the Python backend's and finite differences'."""
    f = euler(checkpoint, snapshots)
    seen = _compiles(monkeypatch)
    g = wg.grad(f, (0, 1), backend="numba", fallback=False)
    ref = wg.grad(f, (0, 1))
    files = set()
    for n in TRIPS:
        x = X.copy()
        before = copies((x,))
        got = _quiet(g, x, H, n)
        unchanged((x,), before)
        files.add(g.last.fn.filename)
        assert_close(got, ref(X, H, n), COMPILED, what=f"n={n}")
        dx, dh = np.linspace(0.3, -0.2, 4), 0.7
        fd = fd_jvp(lambda x, h: f(x, h, n), (X, H), (dx, dh))
        assert_close(got[0] @ dx + got[1] * dh, fd, rtol("program"), what=f"fd n={n}")
    assert len(files) == 1 and len(seen) == 1, (files, seen)
    assert "def " + ("ctz" if checkpoint == "ctz" else "binomial") in g.source


@pytest.mark.parametrize("n", [0, 7], ids=lambda n: f"n={n}")
def test_fori_loop_with_a_literal_trip_count(n):
    def f(x, h):
        return euler("binomial", 2)(x, h, n)
    got = _quiet(wg.grad(f, (0, 1), backend="numba", fallback=False), X, H)
    assert_close(got, wg.grad(f, (0, 1))(X, H), COMPILED)


def test_forward_mode_through_a_checkpointed_loop():
    """jvp and jacfwd store nothing: the loop runs as a plain one, compiled."""
    f = euler("binomial", 2)

    def fn(x, h):
        return f(x, h, 7)
    t = (np.ones(4), 0.5)
    got = _quiet(lambda: wg.jvp(fn, (X, H), t, backend="numba", fallback=False))
    assert_close(got, wg.jvp(fn, (X, H), t), COMPILED)
    assert_close(got[1], fd_jvp(fn, (X, H), t), rtol("program"))
    jac = _quiet(wg.jacfwd(fn, (0, 1), backend="numba", fallback=False), X, H)
    assert_close(jac, wg.jacfwd(fn, (0, 1))(X, H), COMPILED)
    assert_close(jac, wg.jacrev(fn, (0, 1))(X, H), rtol("ad"))


def scalar_loop(checkpoint, snapshots=None):
    """A loop on a carry of two floats (numba compiles the Hessian's unrolled code of an
    array carry for minutes: 215 lines, 123 s)."""
    def loss(x, h, n):
        def step(i, c):
            y, s = c
            return y + h * np.sin(y) * x[0], s * 0.9 + y * x[1]
        y, s = wg.fori_loop(n, step, (x[0], x[1]), checkpoint=checkpoint,
                            snapshots=snapshots)
        return y * y + s
    return loss


def test_hessian_through_a_checkpointed_loop():
    """Forward over reverse (the source engine unrolls the loop there, as the Python
    backend does): the Python backend's Hessian, the store-all loop's, and finite
    differences of the gradient."""
    f, x, n = scalar_loop("binomial", 2), np.array([0.3, -0.6]), 3
    got = _quiet(wg.hessian(f, backend="numba", fallback=False), x, H, n)
    assert_close(got, wg.hessian(f)(x, H, n), COMPILED)
    assert_close(got, wg.hessian(scalar_loop(None))(x, H, n), rtol("ad"))
    dx = np.array([0.3, -0.2])
    fd = fd_jvp(lambda x: wg.grad(f)(x, H, n), (x,), (dx,))
    assert_close(got @ dx, fd, rtol("jvp2"))


# --- while wg.checkpointed(...) -------------------------------------------------------
def euler_while(x, h, tol):
    t, s = 0.0, np.zeros(2)
    while wg.checkpointed(t < tol):
        x = x + h * (np.sin(x) - x * x * x)
        s = s * 0.5 + np.array([np.sum(x), t])
        t = t + 1.0
    return np.sum(x * x) + np.sum(s * s)


@pytest.mark.parametrize("n", [0, 1, 2, 13, 100], ids=lambda n: f"n={n}")
def test_while_checkpointed_gradient(n):
    g = wg.grad(euler_while, (0, 1), backend="numba", fallback=False)
    tol = n - 0.5
    x = X.copy()
    before = copies((x,))
    got = _quiet(g, x, H, tol)
    unchanged((x,), before)
    assert_close(got, wg.grad(euler_while, (0, 1))(X, H, tol), COMPILED)
    dx, dh = np.linspace(0.3, -0.2, 4), 0.7
    fd = fd_jvp(lambda x, h: euler_while(x, h, tol), (X, H), (dx, dh))
    assert_close(got[0] @ dx + got[1] * dh, fd, rtol("program"))


def test_forward_mode_through_a_checkpointed_while():
    """jvp and jacfwd of ``while wg.checkpointed(...)``: a plain while loop, compiled."""
    def fn(x, h):
        return euler_while(x, h, 12.5)
    t = (np.linspace(1.0, -1.0, 4), 0.5)
    got = _quiet(lambda: wg.jvp(fn, (X, H), t, backend="numba", fallback=False))
    assert_close(got, wg.jvp(fn, (X, H), t), COMPILED)
    assert_close(got[1], fd_jvp(fn, (X, H), t), rtol("program"))
    jac = _quiet(wg.jacfwd(fn, (0, 1), backend="numba", fallback=False), X, H)
    assert_close(jac, wg.jacrev(fn, (0, 1))(X, H), rtol("ad"))


_FRESH = """
import numpy as np, wengert as wg
def loss(x, h, tol):
    t = 0.0
    while wg.checkpointed(t < tol):
        x = x + h * (np.sin(x) - x * x * x)
        t = t + 1.0
    return np.sum(wg.fori_loop(9, lambda i, y: y * 0.9 + h * np.sin(y), x,
                               checkpoint="binomial", snapshots=2) ** 2)
g = wg.grad(loss, (0, 1), backend="numba", fallback=False)
got = g(np.array([0.3, -0.6, 0.9]), 0.2, 6.5)
want = wg.grad(loss, (0, 1))(np.array([0.3, -0.6, 0.9]), 0.2, 6.5)
assert np.allclose(got[0], want[0], rtol=1e-12) and np.isclose(got[1], want[1], rtol=1e-12)
print(g.last.fn.compile_seconds)
"""


def test_a_fresh_process_loads_the_compiled_sweeps_from_the_disk_cache(tmp_path):
    """numba's disk cache of code calling the twins' generators, loaded by a second
    process. What once failed there: ``ModuleNotFoundError: No module named '<dynamic>'``
    (a compiled generator's globals are found by its module's name, and the twins were
    compiled in a namespace of no module: ``twins._namespace`` registers one)."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=root, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               WENGERT_CACHE_DIR=str(tmp_path / "wengert"))
    script = tmp_path / "fresh_sweeps.py"        # (in a file: the source engine reads it)
    script.write_text(_FRESH)
    seconds = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=env, cwd=root, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        seconds.append(float(done.stdout.split()[-1]))
    assert seconds[0] > 0.5 and seconds[1] < 0.5 * seconds[0], seconds
