"""Function-table cases for ``np.linalg`` (and ``np.prod`` at zeros, whose
rule the determinant's derivative relies on).

Singular vectors and eigenvectors are defined only up to sign (and the extra
columns of a full ``U`` or complete ``Q`` only up to rotation), so finite
differences of them are meaningless: the case functions return
gauge-invariant functions of them instead (``U f(S) Vh``, projectors
``U_k U_k^T``, squared entries). Operands are drawn with well separated
singular values / eigenvalues, where those functions are smooth.
"""
from __future__ import annotations

import numpy as np

from cases import NONDIFF, ZERO_DERIV, Arg, away, const, diagdom, real, spd
from fn_cases import F64, FnCase
from prim_cases_linalg import low_rank, spd_junk, spread, sym_junk, with_zeros


# --- svd ---------------------------------------------------------------------------
def svd_thin(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    # gauge-invariant: U f(S) Vh, and the projector on the first singular vector(s)
    return s, u @ (s[..., :, None] ** 2 * vh), u[..., :, :1] @ np.swapaxes(u[..., :, :1], -1, -2), \
        np.swapaxes(vh[..., :2, :], -1, -2) @ vh[..., :2, :]


def svd_full(a):
    u, s, vh = np.linalg.svd(a)
    k = s.shape[-1]
    # the complement's columns: only their projector is defined
    u2, v2 = u[..., :, k:], np.swapaxes(vh[..., k:, :], -1, -2)
    return s, u[..., :, :k] @ (np.exp(s)[..., :, None] * vh[..., :k, :]), \
        u2 @ np.swapaxes(u2, -1, -2), v2 @ np.swapaxes(v2, -1, -2), \
        (u[..., :, :1] ** 2).sum(-1)


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)


def svdvals_(a):
    return np.linalg.svdvals(a)


# --- eigh, eigvalsh -----------------------------------------------------------------
def eigh_lower(a):
    w, v = np.linalg.eigh(a)
    return w, v @ (np.sin(w)[..., :, None] * np.swapaxes(v, -1, -2)), v ** 2


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return w, v[..., :, :2] @ np.swapaxes(v[..., :, :2], -1, -2)


def eigvalsh_lower(a):
    return np.linalg.eigvalsh(a)


def eigvalsh_upper(a):
    return np.linalg.eigvalsh(a, UPLO="U")


# --- qr -------------------------------------------------------------------------------
def qr_reduced(a):
    q, r = np.linalg.qr(a)
    return q, r


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    n = a.shape[-1]
    q2 = q[..., :, n:]
    return q[..., :, :n], r, q2 @ np.swapaxes(q2, -1, -2)


def qr_r(a):
    return np.linalg.qr(a, mode="r")


# --- pinv, lstsq, matrix_rank, cond ------------------------------------------------------
def pinv_(a):
    return np.linalg.pinv(a)


def pinv_rcond(a):
    return np.linalg.pinv(a, rcond=1e-10)


def pinv_rtol(a):
    return np.linalg.pinv(a, rtol=1e-8)


def pinv_hermitian(a):
    return np.linalg.pinv(a, hermitian=True)


def lstsq_(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b)
    return x, res, rank, sv


def lstsq_rcond(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=1e-12)
    return x, res, sv


def matrix_rank_(a):
    return np.linalg.matrix_rank(a)


def matrix_rank_tol(a):
    return np.linalg.matrix_rank(a, tol=0.5)


def matrix_rank_hermitian(a):
    return np.linalg.matrix_rank(a, hermitian=True)


def matrix_rank_rtol(a):
    return np.linalg.matrix_rank(a, rtol=1e-3)


def cond_none(a):
    return np.linalg.cond(a)


def cond_m2(a):
    return np.linalg.cond(a, -2)


def cond_fro(a):
    return np.linalg.cond(a, "fro")


def cond_nuc(a):
    return np.linalg.cond(a, "nuc")


def cond_1(a):
    return np.linalg.cond(a, 1)


def cond_minf(a):
    return np.linalg.cond(a, -np.inf)


# --- norms -----------------------------------------------------------------------------------
def norm_default(x):
    return np.linalg.norm(x)


def norm_default_keep(x):
    return np.linalg.norm(x, keepdims=True)


def norm_vec(x, ord):
    return np.linalg.norm(x, ord)


def norm_axis(x, ord):
    return np.linalg.norm(x, ord, axis=-1)


def norm_axis0_keep(x, ord):
    return np.linalg.norm(x, ord, axis=0, keepdims=True)


def norm_mat(x, ord):
    return np.linalg.norm(x, ord)


def norm_mat_axes(x, ord):
    return np.linalg.norm(x, ord, axis=(2, 0))


def norm_mat_axes_keep(x, ord):
    return np.linalg.norm(x, ord, axis=(-1, -2), keepdims=True)


def vector_norm_all(x):
    return np.linalg.vector_norm(x, ord=3)


def vector_norm_axes(x):
    return np.linalg.vector_norm(x, axis=(0, 2), keepdims=True, ord=1.5)


def vector_norm_axis(x):
    return np.linalg.vector_norm(x, axis=-1, ord=-np.inf)


def matrix_norm_(x):
    return np.linalg.matrix_norm(x, ord="nuc", keepdims=True)


def matrix_norm_fro(x):
    return np.linalg.matrix_norm(x)


# --- matrix_power, multi_dot -----------------------------------------------------------------
def matrix_power_(a, n):
    return np.linalg.matrix_power(a, n)


def multi_dot_2(a, b):
    return np.linalg.multi_dot([a, b])


def multi_dot_3(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def multi_dot_vec(v, b, c, w):
    return np.linalg.multi_dot([v, b, c, w])


def multi_dot_row(v, b, c):
    return np.linalg.multi_dot((v, b, c))


# --- the array-API products ----------------------------------------------------------------------
def matrix_transpose_(x):
    return np.linalg.matrix_transpose(x)


def array_api_matrix_transpose(x):
    return np.matrix_transpose(x)       # the Array API's, in NumPy's namespace


def la_matmul(x, y):
    return np.linalg.matmul(x, y)


def la_outer(x, y):
    return np.linalg.outer(x, y)


def vecdot_(x, y):
    return np.linalg.vecdot(x, y)


def vecdot_axis(x, y):
    return np.linalg.vecdot(x, y, axis=0)


def la_trace(x):
    return np.linalg.trace(x, offset=1)


def la_diagonal(x):
    return np.linalg.diagonal(x, offset=-1)


def la_tensordot(x, y):
    return np.linalg.tensordot(x, y, axes=([1, 0], [0, 2]))


def cross_(x, y):
    return np.linalg.cross(x, y)


def cross_axis(x, y):
    return np.linalg.cross(x, y, axis=0)


def tensorsolve_(a, b):
    return np.linalg.tensorsolve(a, b)


def tensorsolve_axes(a, b):
    return np.linalg.tensorsolve(a, b, axes=(0,))


def tensorinv_(a):
    return np.linalg.tensorinv(a, ind=1)


def tensor_diagdom(shape, split, perm=None):
    """A diagonally dominant matrix of prod(shape[:split]) rows, reshaped to
    ``shape`` and then its axes permuted by ``perm``."""
    inner = diagdom(int(np.prod(shape[:split])))

    def draw(rng, dt):
        t = inner.draw(rng, dt).reshape(shape)
        return t if perm is None else np.ascontiguousarray(np.transpose(t, perm))
    return Arg(draw, f"tensor_diagdom{shape}{perm or ''}")


# --- solve, inv, det, slogdet, cholesky ------------------------------------------------------------
def solve_(a, b):
    return np.linalg.solve(a, b)


def inv_(a):
    return np.linalg.inv(a)


def det_(a):
    return np.linalg.det(a)


def slogdet_(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def det_at_zero_gradient(a):
    # the gradient of det is zero here, which would leave the dot-product
    # test nothing to compare: the trace gives it a nonzero linear part,
    # and the second order checks det's Hessian, which is not zero
    return np.linalg.det(a), np.trace(a)


def cholesky_lower(a):
    return np.linalg.cholesky(a)


def cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


# --- prod at zeros -------------------------------------------------------------------------------
def prod_all(x):
    return np.prod(x)


def prod_at_zero_gradient(x):
    # with two zeros the gradient is zero (see det_at_zero_gradient)
    return np.prod(x), np.sum(x)


def prod_axis(x):
    return np.prod(x, axis=1)


def prod_axes(x):
    return np.prod(x, axis=(0, 2), keepdims=True)


_VEC_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5, -1, -2.5]
_MAT_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


def _ord_id(o):
    return {np.inf: "inf", -np.inf: "-inf"}.get(o, repr(o).strip("'"))


CASES = [
    # svd: thin and full, tall, wide, square, batched; S alone
    FnCase("np.linalg.svd", svd_thin, (spread(4, 3),), id="thin_tall"),
    FnCase("np.linalg.svd", svd_thin, (spread(3, 5),), id="thin_wide"),
    FnCase("np.linalg.svd", svd_thin, (spread(2, 3, (3,)),), id="thin_batch", dtypes=(F64,)),
    FnCase("np.linalg.svd", svd_full, (spread(4, 2),), id="full_tall"),
    FnCase("np.linalg.svd", svd_full, (spread(2, 4),), id="full_wide"),
    FnCase("np.linalg.svd", svd_full, (spread(3, 3),), id="full_square"),
    FnCase("np.linalg.svd", svd_full, (spread(5, 3, (2,)),), id="full_batch", dtypes=(F64,)),
    FnCase("np.linalg.svd", svd_values, (spread(4, 3, (2,)),), id="values"),
    FnCase("np.linalg.svdvals", svdvals_, (spread(3, 4),)),
    # eigh, eigvalsh: the triangle NumPy ignores holds junk
    FnCase("np.linalg.eigh", eigh_lower, (sym_junk(4),), id="L"),
    FnCase("np.linalg.eigh", eigh_upper, (sym_junk(3, read="upper"),), id="U"),
    FnCase("np.linalg.eigh", eigh_lower, (sym_junk(3, (2,)),), id="batch", dtypes=(F64,)),
    FnCase("np.linalg.eigvalsh", eigvalsh_lower, (sym_junk(4),), id="L"),
    FnCase("np.linalg.eigvalsh", eigvalsh_upper, (sym_junk(3, (2,), read="upper"),), id="U"),
    # qr: square, tall, wide; reduced, complete, r; batched
    FnCase("np.linalg.qr", qr_reduced, (spread(3, 3),), id="square"),
    FnCase("np.linalg.qr", qr_reduced, (spread(5, 3),), id="tall"),
    FnCase("np.linalg.qr", qr_reduced, (spread(3, 5),), id="wide"),
    FnCase("np.linalg.qr", qr_reduced, (spread(4, 2, (2,)),), id="batch", dtypes=(F64,)),
    FnCase("np.linalg.qr", qr_complete, (spread(5, 3),), id="complete_tall"),
    FnCase("np.linalg.qr", qr_complete, (spread(3, 3, (2,)),), id="complete_batch",
           dtypes=(F64,)),
    FnCase("np.linalg.qr", qr_complete, (spread(2, 4),), id="complete_wide"),
    FnCase("np.linalg.qr", qr_r, (spread(4, 3),), id="r"),
    FnCase("np.linalg.qr", qr_r, (spread(2, 3),), id="r_wide"),
    # pinv: full rank, tall/wide/square, batched, cutoffs, hermitian
    FnCase("np.linalg.pinv", pinv_, (spread(4, 3),), id="tall"),
    FnCase("np.linalg.pinv", pinv_, (spread(2, 4),), id="wide"),
    FnCase("np.linalg.pinv", pinv_, (spread(3, 3, (2,)),), id="batch", dtypes=(F64,)),
    FnCase("np.linalg.pinv", pinv_rcond, (spread(3, 2),), id="rcond"),
    FnCase("np.linalg.pinv", pinv_rtol, (spread(3, 2),), id="rtol"),
    FnCase("np.linalg.pinv", pinv_hermitian, (sym_junk(3),), id="hermitian"),
    # lstsq: full rank; tall (residuals), square, wide; 1-D and 2-D right-hand sides
    FnCase("np.linalg.lstsq", lstsq_, (spread(5, 3), real((5,))), id="tall_vec"),
    FnCase("np.linalg.lstsq", lstsq_, (spread(5, 3), real((5, 2))), id="tall_mat"),
    FnCase("np.linalg.lstsq", lstsq_, (spread(3, 3), real((3, 2))), id="square"),
    FnCase("np.linalg.lstsq", lstsq_, (spread(2, 4), real((2,))), id="wide"),
    FnCase("np.linalg.lstsq", lstsq_rcond, (spread(4, 2), real((4, 3))), id="rcond"),
    # matrix_rank: an integer, no derivative
    FnCase("np.linalg.matrix_rank", matrix_rank_, (spread(4, 3),), id="full", mode=NONDIFF),
    FnCase("np.linalg.matrix_rank", matrix_rank_, (low_rank(4, 2, (3,)),), id="deficient",
           mode=NONDIFF),
    FnCase("np.linalg.matrix_rank", matrix_rank_tol, (spread(3, 3, lo=0.1),), id="tol",
           mode=NONDIFF),
    FnCase("np.linalg.matrix_rank", matrix_rank_rtol, (low_rank(3, 1),), id="rtol",
           mode=NONDIFF),
    FnCase("np.linalg.matrix_rank", matrix_rank_hermitian, (sym_junk(3),), id="hermitian",
           mode=NONDIFF),
    FnCase("np.linalg.matrix_rank", matrix_rank_, (real((4,)),), id="vector", mode=NONDIFF),
    # cond: from the singular values, or norm(A) * norm(inv(A))
    FnCase("np.linalg.cond", cond_none, (spread(3, 3),), id="None"),
    FnCase("np.linalg.cond", cond_none, (spread(4, 2, (2,)),), id="tall_batch", dtypes=(F64,)),
    FnCase("np.linalg.cond", cond_m2, (spread(3, 3),), id="-2"),
    FnCase("np.linalg.cond", cond_fro, (spread(3, 3, (2,)),), id="fro"),
    FnCase("np.linalg.cond", cond_nuc, (spread(3, 3),), id="nuc"),
    FnCase("np.linalg.cond", cond_1, (diagdom(3),), id="1"),
    FnCase("np.linalg.cond", cond_minf, (diagdom(3, (2,)),), id="-inf"),
    # norm: every vector and matrix order, axes, keepdims
    FnCase("np.linalg.norm", norm_default, (real((2, 3, 2)),), id="default_3d"),
    FnCase("np.linalg.norm", norm_default_keep, (real((2, 3)),), id="default_keep"),
    FnCase("np.linalg.norm", norm_vec, (away((4,)), const(0)), id="vec-0", mode=ZERO_DERIV),
    FnCase("np.linalg.norm", norm_axis, (away((2, 4)), const(0)), id="axis-0", mode=ZERO_DERIV),
    FnCase("np.linalg.norm", norm_vec, (away((5,)), const(None)), id="vec-None"),
    FnCase("np.linalg.vector_norm", vector_norm_all, (away((2, 3)),), id="all"),
    FnCase("np.linalg.vector_norm", vector_norm_axes, (away((2, 3, 2)),), id="axes"),
    FnCase("np.linalg.vector_norm", vector_norm_axis, (away((2, 3)),), id="axis"),
    FnCase("np.linalg.matrix_norm", matrix_norm_, (spread(3, 2, (2,)),), id="nuc"),
    FnCase("np.linalg.matrix_norm", matrix_norm_fro, (real((2, 2, 3)),), id="fro"),
    # matrix_power: positive, zero, negative powers; batched
    *[FnCase("np.linalg.matrix_power", matrix_power_, (diagdom(3), const(n)), id=str(n))
      for n in (1, 2, 3, 5, -1, -3)],
    # the identity, whatever a is
    FnCase("np.linalg.matrix_power", matrix_power_, (diagdom(3), const(0)), id="0",
           mode=ZERO_DERIV),
    FnCase("np.linalg.matrix_power", matrix_power_, (diagdom(2, (2,)), const(4)), id="batch"),
    # multi_dot: two to four operands, vectors at the ends
    FnCase("np.linalg.multi_dot", multi_dot_2, (real((2, 3)), real((3, 4))), id="2"),
    FnCase("np.linalg.multi_dot", multi_dot_3, (real((5, 2)), real((2, 6)), real((6, 3))), id="3"),
    FnCase("np.linalg.multi_dot", multi_dot_vec,
           (real((3,)), real((3, 4)), real((4, 2)), real((2,))), id="vec_ends"),
    FnCase("np.linalg.multi_dot", multi_dot_row, (real((3,)), real((3, 4)), real((4, 2))),
           id="vec_first"),
    # NumPy 2's array-API functions
    FnCase("np.linalg.matrix_transpose", matrix_transpose_, (real((2, 3, 4)),)),
    FnCase("np.matrix_transpose", array_api_matrix_transpose, (real((2, 3, 4)),)),
    FnCase("np.linalg.matmul", la_matmul, (real((2, 3, 4)), real((4, 2)))),
    FnCase("np.linalg.outer", la_outer, (real((3,)), real((4,)))),
    FnCase("np.linalg.vecdot", vecdot_, (real((2, 3)), real((3,)))),
    FnCase("np.linalg.vecdot", vecdot_axis, (real((3, 2)), real((3, 2))), id="axis"),
    FnCase("np.linalg.trace", la_trace, (real((2, 3, 4)),)),
    FnCase("np.linalg.diagonal", la_diagonal, (real((2, 4, 3)),)),
    FnCase("np.linalg.tensordot", la_tensordot, (real((2, 3, 4)), real((3, 5, 2)))),
    FnCase("np.linalg.cross", cross_, (real((2, 3)), real((3,)))),
    FnCase("np.linalg.cross", cross_axis, (real((3, 2)), real((3, 1))), id="axis"),
    FnCase("np.linalg.tensorsolve", tensorsolve_, (tensor_diagdom((2, 3, 6), 2), real((2, 3)))),
    FnCase("np.linalg.tensorsolve", tensorsolve_axes,
           (tensor_diagdom((2, 2, 4), 2, (2, 0, 1)), real((2, 2))), id="axes"),
    FnCase("np.linalg.tensorinv", tensorinv_, (tensor_diagdom((4, 2, 2), 1),)),
    # the functions of matrix.py
    FnCase("np.linalg.solve", solve_, (diagdom(3), real((3,))), id="vec"),
    FnCase("np.linalg.solve", solve_, (diagdom(3, (2,)), real((2, 3, 2))), id="batch"),
    FnCase("np.linalg.inv", inv_, (diagdom(3),)),
    FnCase("np.linalg.inv", inv_, (diagdom(2, (3,)),), id="batch"),
    FnCase("np.linalg.det", det_, (diagdom(3, negative=True),)),
    FnCase("np.linalg.det", det_, (diagdom(3, (2,)),), id="batch"),
    # singular: the gradient is adj(A)^T, finite and nonzero at rank n-1, and
    # zero at rank n-2, where the second derivative is not
    FnCase("np.linalg.det", det_, (low_rank(3, 2),), id="rank_n-1"),
    FnCase("np.linalg.det", det_, (low_rank(4, 2, (2,)),), id="rank_n-2", dtypes=(F64,)),
    FnCase("np.linalg.det", det_at_zero_gradient, (low_rank(2, 0),), id="zero_matrix",
           dtypes=(F64,)),
    FnCase("np.linalg.slogdet", slogdet_, (diagdom(3, negative=True),)),
    FnCase("np.linalg.slogdet", slogdet_, (diagdom(3, (2,)),), id="batch"),
    FnCase("np.linalg.cholesky", cholesky_lower, (spd_junk(3),), id="lower"),
    FnCase("np.linalg.cholesky", cholesky_upper, (spd_junk(3, read="upper"),), id="upper"),
    FnCase("np.linalg.cholesky", cholesky_lower, (spd(3, (2,)),), id="batch"),
    # np.prod right at zeros: one zero, two zeros (the derivative is then
    # zero, the second derivative is not)
    FnCase("np.prod", prod_all, (with_zeros((5,), [1]),), id="one_zero"),
    FnCase("np.prod", prod_at_zero_gradient, (with_zeros((5,), [1, 3]),), id="two_zeros"),
    FnCase("np.prod", prod_axis, (with_zeros((2, 7), [2, 8, 9]),), id="axis_zeros"),
    FnCase("np.prod", prod_axes, (with_zeros((3, 2, 3), [0, 4, 5]),), id="axes_zeros"),
]

CASES += [FnCase("np.linalg.norm", norm_vec, (away((4,)), const(o)), id=f"vec-{_ord_id(o)}")
          for o in _VEC_ORDS if o is not None]
CASES += [FnCase("np.linalg.norm", norm_axis, (away((2, 4)), const(o)), id=f"axis-{_ord_id(o)}")
          for o in _VEC_ORDS]
CASES += [FnCase("np.linalg.norm", norm_axis0_keep, (away((3, 2)), const(o)),
                 id=f"axis0_keep-{_ord_id(o)}", dtypes=(F64,)) for o in (2, -np.inf, -1)]
CASES += [FnCase("np.linalg.norm", norm_mat, (spread(3, 4), const(o)), id=f"mat-{_ord_id(o)}")
          for o in _MAT_ORDS]
CASES += [FnCase("np.linalg.norm", norm_mat_axes, (away((2, 3, 2)), const(o)),
                 id=f"mat_axes-{_ord_id(o)}", dtypes=(F64,)) for o in _MAT_ORDS]
CASES += [FnCase("np.linalg.norm", norm_mat_axes_keep, (spread(2, 3, (2,)), const(o)),
                 id=f"mat_keep-{_ord_id(o)}", dtypes=(F64,)) for o in ("nuc", -2, np.inf)]
