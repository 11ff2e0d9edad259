"""NumPy's kernels for the transcendental ufuncs and ``where`` of numba code
(``wengert/backends/numba/simd.py``): ``np.exp(a)`` in the generated text
becomes ``simd_exp(a)``, which under numba calls NumPy's vectorised loop on a
large float array and numba's own ``np.exp`` elsewhere; ``np.where`` likewise.

Checked: the rewrite (which calls, which not) as text; the helper under numba
on every ufunc of ``SIMD_UFUNCS``, both sides of the size threshold, float32 and
float64, a scalar, a non-contiguous array, a 2-D array, with and without
``out``, equal to NumPy's (to the bit on the large path, which is NumPy's own
kernel) and never warning (numba's loops do not); derivatives under
``backend="numba"`` through each ufunc against the Python backend, the text
calling the helper; and the text run as plain Python (the helper's written
definition is ``np.f`` itself).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba import simd as S

from checks import assert_close, rtol

numba = pytest.importorskip("numba")

# the domain where every ufunc of the table is finite
_INSIDE = {"arccos": 0.9, "arcsin": 0.9, "arctanh": 0.9, "log": 1.0, "log2": 1.0, "log10": 1.0,
           "log1p": 1.0}


def _point(name, n, dtype=np.float64, seed=0):
    x = np.random.default_rng(seed).uniform(0.05, 1.0, n)
    return (x * _INSIDE.get(name, 1.0)).astype(dtype)


def test_the_rewrite_takes_calls_of_the_table_only():
    """``np.exp(a)``, ``np.log(a, out)`` become helper calls, bound in the namespace;
    ``np.sin`` (as fast in numba), a call with keywords, and another module's ``exp``
    stay as written."""
    source = ("def f(x, buf):\n"
              "    a = np.exp(x)\n"
              "    b = np.log(a, buf)\n"
              "    c = np.sin(x) + np.tanh(np.exp(x))\n"
              "    d = np.exp(x, out=buf)\n"
              "    e = math.exp(1.0)\n"
              "    return a, b, c, d, e\n")
    namespace = {"np": np}
    out = S.simd_calls(source, namespace)
    assert "a = simd_exp(x)" in out and "b = simd_log(a, buf)" in out
    assert "c = np.sin(x) + simd_tanh(simd_exp(x))" in out
    assert "d = np.exp(x, out=buf)" in out and "e = math.exp(1.0)" in out
    assert {k for k in namespace if k.startswith("simd_")} == {"simd_exp", "simd_log", "simd_tanh"}
    assert S.simd_calls(source.replace("np.", "numpy."), {"numpy": np}).count("simd_") == 4
    picked = S.simd_calls("def f(c, x):\n    return np.where(c, x, 0.0), np.where(c)\n", namespace)
    assert "simd_where(c, x, 0.0), np.where(c)" in picked


@pytest.mark.numba
@pytest.mark.parametrize("name, dtype", [(f.__name__, np.float64) for f in sorted(S.SIMD_UFUNCS, key=str)]
                         + [(name, np.float32) for name in ("exp", "log", "tanh")])
def test_the_helper_under_numba_equals_numpy(name, dtype):
    """Large arrays (NumPy's kernel: the same bits), small ones and scalars (numba's
    loop: within rounding), with and without ``out``, 2-D and strided; no warning."""
    helper = S._helper(name)
    ufunc = getattr(np, name)

    @numba.njit
    def new(x):
        return helper(x)

    @numba.njit
    def into(x, out):
        return helper(x, out)

    @numba.njit
    def scalar(x):
        return helper(x[0]) + helper(x[-1])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (3, S.SIMD_MIN_SIZE - 1, S.SIMD_MIN_SIZE, 3 * S.SIMD_MIN_SIZE):
            x = _point(name, n, dtype)
            want = ufunc(x)
            got = new(x)
            assert got.dtype == want.dtype and got.shape == want.shape
            if n >= S.SIMD_MIN_SIZE:
                assert np.array_equal(got, want)
            else:
                assert_close(got, want, rtol("exact", dtype))
            out = np.empty_like(x)
            assert into(x, out) is out or np.shares_memory(into(x, out), out)
            assert_close(out, want, rtol("exact", dtype))
            assert_close(scalar(x), ufunc(x[0]) + ufunc(x[-1]), rtol("exact", dtype))
        wide = _point(name, 4 * S.SIMD_MIN_SIZE, dtype).reshape(64, -1)[:, ::2]
        assert_close(new(wide), ufunc(wide), rtol("exact", dtype))
        big = np.full(S.SIMD_MIN_SIZE, 1e6 if name not in _INSIDE else 0.5, dtype)
        new(big)                # overflow to inf (exp, cosh...): no warning, as numba's loops



@pytest.mark.numba
def test_where_under_numba_equals_numpy():
    """``simd_where``: broadcast operands, small and large, float32, a Fortran-ordered
    operand, integers, Python and NumPy scalars, a 0-d selection: NumPy's values and
    dtype, a C-ordered result either side of the threshold."""
    helper = S._helper("where")

    @numba.njit
    def where(c, a, b):
        return helper(c, a, b)

    rng = np.random.default_rng(4)
    big = S.SIMD_MIN_SIZE
    cases = [(rng.random((big, 3)) > 0.5, rng.random((big, 1)), np.float64(0.0)),
             (rng.random((10, 5)) > 0.5, rng.random((10, 1)), np.float64(0.0)),
             (rng.random((big, 2)) > 0.5, rng.random((big, 2)).astype(np.float32), np.float32(1.0)),
             (rng.random((big, 2)) > 0.5, np.asfortranarray(rng.random((big, 2))), rng.random(2)),
             (True, rng.random(big), 1.0),
             (np.bool_(False), 2.0, 1.0),
             (rng.random(big) > 0.5, rng.integers(0, 5, big), rng.integers(0, 5, big))]
    for c, a, b in cases:
        got, want = where(c, a, b), np.where(c, a, b)
        assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
        assert np.array_equal(got, want)
        assert np.ndim(got) == 0 or got.flags.c_contiguous


def lse(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0])


def relu_net(x):
    return np.sum(np.maximum(x @ x.T, 0.0) ** 2) + np.sum(np.max(x, axis=0))


def mix(x):
    return np.sum(np.tanh(x) * np.log1p(x) + np.arctan(x) * np.cbrt(x) + np.expm1(x[0]))


@pytest.mark.numba
@pytest.mark.parametrize("f", [lse, mix, relu_net])
@pytest.mark.parametrize("shape", [(3, 4), (50, 300)])
def test_derivatives_through_the_helpers_equal_the_python_backend(f, shape):
    """Gradients and forward derivatives under numba, with the text calling the helpers,
    at a size below and above the threshold."""
    x = np.random.default_rng(1).uniform(0.1, 1.0, shape)
    t = np.random.default_rng(2).standard_normal(shape)
    g = wg.grad(f, backend="numba", fallback=False)
    assert_close(g(x), wg.grad(f)(x), rtol("ad", np.float64))
    assert "simd_" in g.source or f is relu_net and "where" not in g.source
    got = wg.jvp(f, (x,), (t,), backend="numba", fallback=False)
    assert_close(got, wg.jvp(f, (x,), (t,)), rtol("ad", np.float64))


@pytest.mark.numba
def test_the_text_runs_as_plain_python():
    """The helpers' written definitions are NumPy's ufuncs: the text run with NumPy
    alone gives the compiled code's gradient."""
    x = np.random.default_rng(3).uniform(0.1, 1.0, (40, 200))
    g = wg.grad(lse, backend="numba", fallback=False)
    want = g(x)
    scope = {"np": np}
    exec(g.source, scope)
    fn = scope[re.findall(r"^def (\w+)\(", g.source, re.M)[-1]]
    kept = len(set(re.findall(r"scratch\[(\d+)\]", g.source)))
    got = fn(x, tuple(np.empty(0) for _ in range(kept))) if kept else fn(x)
    results = got[0] if kept else got          # numba's code: (results, the buffers it keeps)
    assert_close(results[0], want, rtol("exact", np.float64))
