"""``backend="numba"`` on three constructs that fell back to the Python backend:

* ``@`` on arrays of more than 2 dimensions (numba's ``@`` is 2-D only):
  ``numbamatmul``'s overload, every ndim pair 1..4 with batch axes broadcast
  both ways, on grad, jvp, vjp and ``wg.jit``;
* float32 loops: numba typed a Python number as float64 (``x * 0.5`` a
  float64 array, ``x[i] > 0.1`` compared in float64), so loops carrying a
  float32 array could not be typed, and a float32 threshold branched the
  other way from NumPy 2 (a wrong result with no error); the results keep
  the Python backend's dtype, values to float32 rounding;
* prod's gradient (``np.errstate``, which numba lacks): at no zero, one, two
  zeros, an overflow, over every axis and some axes.

Every call is ``fallback=False`` or checked for no ``NumbaFallbackWarning``.
numba's compile time grows faster than a program's length, so the matmul
programs are one product each (about 1 s a compile on 2 cores).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba import matmul as numbamatmul

from checks import assert_close, rtol
from test_numba_backend import _agree

pytestmark = pytest.mark.numba

# --- matmul: every ndim pair ----------------------------------------------------------
# a's of 1..4 dims (n=3, k=4) and b's (k=4, m=2), batch axes (2,) and (5, 1)
# for a, (2,) and (1, 2) for b: the pairs broadcast to (), (2,), (5, 2) or
# (1, 2), a's batch against b's and b's against a's
_A = [(4,), (3, 4), (2, 3, 4), (5, 1, 3, 4)]
_B = [(4,), (4, 2), (2, 4, 2), (1, 2, 4, 2)]
_PAIRS = [(sa, sb) for sa in _A for sb in _B]


def product(a, b):
    return np.sum(np.sin(a @ b))


def _pair(sa, sb, rng, dtype=np.float64):
    return rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb)


@pytest.mark.parametrize("sa,sb", _PAIRS, ids=[f"{len(a)}d@{len(b)}d" for a, b in _PAIRS])
def test_matmul_of_every_ndim_pair_compiles(sa, sb):
    # value_and_grad: the product itself and, in the reverse sweep, the
    # products of the transposes (1-D, N-D and broadcast batch on both sides)
    a, b = _pair(sa, sb, np.random.default_rng(len(sa) * 5 + len(sb)))
    got = wg.value_and_grad(product, (0, 1), engine="source", backend="numba",
                            fallback=False)(a, b)
    want = wg.value_and_grad(product, (0, 1), engine="source")(a, b)
    assert_close(got, want, rtol("exact", want), what=f"{sa} @ {sb}")
    assert_close(got[0], product(a, b), rtol("exact", a), what="the value, NumPy's")


# jvp and vjp on the pairs of a 1-D operand and of batch axes broadcast both ways
_SOME = [((4,), (1, 2, 4, 2)), ((2, 3, 4), (4,)), ((5, 1, 3, 4), (2, 4, 2)),
         ((2, 3, 4), (1, 2, 4, 2))]


@pytest.mark.parametrize("sa,sb", _SOME, ids=[f"{len(a)}d@{len(b)}d" for a, b in _SOME])
def test_matmul_jvp_and_vjp_compile(sa, sb):
    args = _pair(sa, sb, np.random.default_rng(7))
    modes = ("jvp", "vjp") if len(sa) == 3 else ("jvp",)
    fell = _agree(product, args, (0, 1), False, f"{sa} @ {sb}", modes)
    assert not fell, [str(w.message) for w in fell]


def test_matmul_of_mixed_dtypes_and_a_strided_operand():
    # float32 @ float64 meet at float64 (NumPy's); a reversed view is copied
    rng = np.random.default_rng(3)
    a, b = _pair((2, 3, 4), (1, 2, 4, 2), rng, np.float32)
    fn = wg.value_and_grad(product, (0, 1), engine="source", backend="numba", fallback=False)
    for x in (a, a[:, ::-1]):
        got, want = fn(x, b), wg.value_and_grad(product, (0, 1), engine="source")(x, b)
        assert [np.asarray(g).dtype for g in got[1]] == [np.asarray(w).dtype for w in want[1]]
        assert_close(got, want, rtol("exact", np.float32), what="mixed dtypes")


def test_batched_matmul_refuses_what_numpy_refuses():
    kernel = numbamatmul.kernel()
    a, b = np.ones((2, 3, 4)), np.ones((3, 4, 2))
    with pytest.raises(ValueError, match="broadcast"):
        kernel(a, b, (np.int64(2),), (np.int64(3),))
    with pytest.raises(ValueError, match="fit"):
        kernel(a, np.ones((3, 3, 2)), (np.int64(2),), (np.int64(1),))
    got = kernel(a, b[:1], (np.int64(2),), (np.int64(1),))
    np.testing.assert_array_equal(got, np.matmul(a, b[:1]))
    # a length-0 batch axis meeting a length-1 one broadcasts to 0, as in NumPy
    for za, zb in ((0, 1), (1, 0), (0, 0)):
        x, y = np.ones((za, 3, 4)), np.ones((zb, 4, 2))
        got = kernel(x, y, (np.int64(za),), (np.int64(zb),))
        assert got.shape == np.matmul(x, y).shape == (0, 3, 2)


# --- float32 loops ----------------------------------------------------------------------
def threshold(x):
    # at x[i] == float32(0.1) NumPy 2 compares in float32 (not greater)
    s = x[0] * 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.1:
            s = s + x[i] * x[i]
        else:
            s = s + 3.0 * x[i]
    return s


def stencil(x):
    y = x.copy()
    for t in range(3):
        y = 0.25 * y + 0.5 * np.roll(y, 1)
    return np.sum(y * y)


def clipped(x):
    y = x
    for i in range(2):
        y = np.where(y > 0.3, y * 1.5, 0.1) + np.maximum(y, 0.2)
    return np.sum(y)


def int_literals(x):
    out = np.zeros_like(x)
    acc = x[0]
    for i in range(x.shape[0]):
        acc = acc * 2 - 1 + x[i] / 3
        out[i] = acc
    return np.sum(out ** 2)


def recurrence(x):
    h = x[0]
    for i in range(1, x.shape[0]):
        h = np.tanh(0.5 * h + x[i]) * 2.0
    return h


def prefix_products(x):
    out = np.zeros_like(x)
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
        out[i] = p
    return np.sum(out)


_F32 = [threshold, stencil, clipped, int_literals, recurrence, prefix_products]
_X32 = np.array([0.1, 0.5, 0.1, 0.7, 0.25, -0.4], np.float32)


@pytest.mark.parametrize("fn", _F32, ids=lambda f: f.__name__)
def test_float32_loops_compile_and_keep_float32(fn):
    x = _X32.copy()
    for name, numba_fn, python_fn in (
            ("grad", wg.grad(fn, engine="source", backend="numba", fallback=False),
             wg.grad(fn, engine="source")),
            ("jit", wg.jit(fn, fallback=False), fn)):
        got, want = numba_fn(x), python_fn(x.copy())
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32, name
        assert_close(got, want, rtol("exact", np.float32), what=f"{fn.__name__} {name}")
    np.testing.assert_array_equal(x, _X32)


def test_a_float32_threshold_branches_as_numpy():
    # the value at a threshold of float32(0.1): numba compared it with the
    # float64 0.1 (greater), a silently other branch; NumPy 2: equal
    x = np.full(3, 0.1, np.float32)
    assert wg.jit(threshold, fallback=False)(x) == threshold(x)
    got = wg.grad(threshold, engine="source", backend="numba", fallback=False)(x)
    np.testing.assert_array_equal(got, np.full(3, 3.0, np.float32))


# --- prod's gradient --------------------------------------------------------------------
def prods(x):
    # over every axis, one axis, the other, and two of three (x: 2 x 3 x 4)
    return (np.prod(x) + np.sum(np.prod(x, axis=1) ** 2)
            + np.sum(np.sin(np.prod(x, axis=0))) + np.sum(np.prod(x, axis=(0, 2))))


def _with_zeros(count):
    x = np.linspace(0.6, 1.4, 24).reshape(2, 3, 4)
    x.flat[[5, 17, 11][:count]] = 0.0
    if count == 2:
        x[0, 0, :2] = 0.0           # two zeros in one row of the last axis
    return x


@pytest.mark.parametrize("x", [_with_zeros(0), _with_zeros(1), _with_zeros(2),
                               np.full((2, 3, 4), 1e20), -_with_zeros(1)],
                         ids=["no-zero", "one-zero", "two-zeros", "overflow", "negative"])
def test_prod_gradient_compiles_at_zeros_and_over_axes(x):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning)      # the overflow's
        fell = _agree(prods, (x,), 0, True, "prod", ("grad", "jvp"))
        got = wg.grad(prods, engine="source", backend="numba", fallback=False)(x)
    assert not fell and not [w for w in seen if issubclass(w.category, wg.NumbaFallbackWarning)]
    with np.errstate(all="ignore"):
        want = wg.grad(prods, engine="source")(x)
    assert_close(got, want, rtol("exact", want), what="prod grad")
