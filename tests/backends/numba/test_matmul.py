"""NumPy's ``matmul`` in numba's subset (``wengert/backends/numba/matmul.py``):
numba's ``@`` is 2-D only, so ``@`` on arrays of more than 2 dimensions
fell back to the Python backend. The overload compiles every ndim pair 1..4
with batch axes broadcast both ways, on grad, jvp, vjp and ``wg.jit``, mixed
dtypes and strided operands included, and refuses what NumPy refuses.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba import matmul as numbamatmul

from checks import assert_close, rtol
from numba_checks import agree


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
    fell = agree(product, args, (0, 1), False, f"{sa} @ {sb}", modes)
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
