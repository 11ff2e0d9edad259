"""Function-table cases for ``scipy.linalg`` and ``scipy.signal``
(``wengert/scipy/linalg.py``).

Every entry is a ``CALLS`` entry: SciPy's functions dispatch through no
protocol, so the trace engine never sees them (NumPy converts a traced value
with ``__array__`` before SciPy runs); the cases run in the source engine.

Operands whose other triangle SciPy does not read are drawn full (random
entries there): finite differences then check that the derivative with
respect to those entries is zero, as it is for SciPy's function.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sl
import scipy.signal as ss

from cases import F32, F64, diagdom, ints, real, spd
from fn_cases import FnCase
from prim_cases_linalg import spread, sym_junk
from prim_cases_scipy_linalg import pivoting, stable

SOURCE = ("source",)      # CALLS entries: the source engine only (see the docstring)


def case(name, fun, args, **kw):
    return FnCase(name, fun, tuple(args), engines=SOURCE, **kw)


# --- solve_triangular ------------------------------------------------------------
def st_lower(a, b):
    return sl.solve_triangular(a, b, lower=True)


def st_upper_T_vector(a, b):
    return sl.solve_triangular(a, b, trans="T")


def st_lower_C_unit(a, b):
    return sl.solve_triangular(a, b, trans=2, lower=True, unit_diagonal=True)


def st_upper_1_unit(a, b):
    return sl.solve_triangular(a, b, 1, False, True)


def st_N_positional(a, b):
    return sl.solve_triangular(a, b, "N", True, False, False, True)


# --- Cholesky ----------------------------------------------------------------------
def chol_default(a):
    return sl.cholesky(a)


def chol_lower(a):
    return sl.cholesky(a, lower=True)


def cho_factor_c(a):
    c, lower = sl.cho_factor(a)
    return c


def cho_factor_lower_c(a):
    c, lower = sl.cho_factor(a, lower=True)
    return c * 2.0 if lower else c


def cho_solve_of_factor(a, b):
    return sl.cho_solve(sl.cho_factor(a), b)


def cho_solve_lower_vector(a, b):
    return sl.cho_solve(sl.cho_factor(a, lower=True), b)


def cho_solve_given(c, b):
    # c's upper triangle holds random entries cho_solve must not read
    return sl.cho_solve((c, True), b)


# --- LU ------------------------------------------------------------------------------
def lu_factor_lu(a):
    lu, piv = sl.lu_factor(a)
    return lu


def lu_solve_of_factor(a, b):
    return sl.lu_solve(sl.lu_factor(a), b)


def lu_solve_trans1(a, b):
    return sl.lu_solve(sl.lu_factor(a), b, trans=1)


def lu_solve_trans2_vector(a, b):
    return sl.lu_solve(sl.lu_factor(a), b, 2)


def lu_solve_given(lu, piv, b):
    # any matrix with a nonzero diagonal packs valid factors
    return sl.lu_solve((lu, piv), b)


# --- inv, det ------------------------------------------------------------------------
def inv_(a):
    return sl.inv(a)


def inv_pos_lower(a):
    return sl.inv(a, assume_a="pos", lower=True)


def inv_sym_upper(a):
    return sl.inv(a, assume_a="sym")


def inv_upper_triangular(a):
    return sl.inv(a, assume_a="upper triangular")


def inv_lower_triangular(a):
    return sl.inv(a, assume_a="lower triangular")


def inv_diagonal(a):
    return sl.inv(a, assume_a="diagonal")


def inv_general(a):
    return sl.inv(a, assume_a="general")


def det_(a):
    return sl.det(a)


# --- matrix functions -----------------------------------------------------------------
def expm_(a):
    return sl.expm(a)


def sqrtm_(a):
    return sl.sqrtm(a)


def sylvester_(a, b, q):
    return sl.solve_sylvester(a, b, q)


# --- scipy.signal -----------------------------------------------------------------------
def conv_full(x, k):
    return ss.convolve(x, k)


def conv_same(x, k):
    return ss.convolve(x, k, mode="same")


def conv_valid(x, k):
    return ss.convolve(x, k, "valid")


def conv_valid_fft(x, k):
    return ss.convolve(x, k, mode="valid", method="fft")


def conv_same_direct(x, k):
    return ss.convolve(x, k, mode="same", method="direct")


def corr_full(x, k):
    return ss.correlate(x, k)


def corr_same(x, k):
    return ss.correlate(x, k, mode="same")


def corr_valid(x, k):
    return ss.correlate(x, k, mode="valid", method="direct")


def corr_same_fft(x, k):
    return ss.correlate(x, k, "same", "fft")


# --- eigh and svd: gauge-invariant functions of the factors (eigenvectors and
# singular vectors are defined up to sign)
def eigh_lower_(a):
    w, v = sl.eigh(a)
    return w, v @ (np.sin(w)[:, None] * v.T), v ** 2


def eigh_upper_(a):
    w, v = sl.eigh(a, lower=False)
    return w, v[:, :2] @ v[:, :2].T


def eigh_values_only(a):
    return sl.eigh(a, eigvals_only=True)


def svd_full_(a):
    u, s, vh = sl.svd(a)
    k = s.shape[0]
    return s, u[:, :k] @ (np.exp(s)[:, None] * vh[:k, :]), u[:, k:] @ u[:, k:].T


def svd_thin_(a):
    u, s, vh = sl.svd(a, full_matrices=False, lapack_driver="gesvd")
    return s, u @ (s[:, None] ** 2 * vh)


def svd_values_(a):
    return sl.svd(a, compute_uv=False)


ST = "scipy.linalg.solve_triangular"
CONV, CORR = "scipy.signal.convolve", "scipy.signal.correlate"

CASES = [
    case("scipy.linalg.eigh", eigh_lower_, [sym_junk(4)], id="lower"),
    case("scipy.linalg.eigh", eigh_upper_, [sym_junk(4)], id="upper"),
    case("scipy.linalg.eigh", eigh_values_only, [sym_junk(3)], id="eigvals_only"),
    case("scipy.linalg.svd", svd_full_, [spread(4, 2)], id="full_tall"),
    case("scipy.linalg.svd", svd_thin_, [spread(3, 5)], id="thin_wide_gesvd"),
    case("scipy.linalg.svd", svd_values_, [spread(4, 3)], id="values"),
    case(ST, st_lower, [diagdom(3), real((3, 2))], id="lower"),
    case(ST, st_upper_T_vector, [diagdom(4), real((4,))], id="upper_T_vector"),
    case(ST, st_lower_C_unit, [diagdom(3), real((3, 2))], id="lower_C_unit", dtypes=(F64,)),
    case(ST, st_upper_1_unit, [diagdom(3), real((3,))], id="upper_1_unit", dtypes=(F64,)),
    case(ST, st_N_positional, [diagdom(3), real((3, 2))], id="N_positional", dtypes=(F64,)),
    case(ST, st_lower, [diagdom(3, (2,)), real((2, 3, 2))], id="batch", dtypes=(F64,)),
    case(ST, st_lower, [diagdom(3), real((2, 3, 2))], id="broadcast_a", dtypes=(F64,)),

    case("scipy.linalg.cholesky", chol_default, [spd(3)], id="upper_default"),
    case("scipy.linalg.cholesky", chol_lower, [spd(4)], id="lower"),
    case("scipy.linalg.cholesky", chol_default, [spd(3, (2,))], id="batch", dtypes=(F64,)),
    case("scipy.linalg.cho_factor", cho_factor_c, [spd(3)], id="upper"),
    case("scipy.linalg.cho_factor", cho_factor_lower_c, [spd(3)], id="lower"),
    case("scipy.linalg.cho_solve", cho_solve_of_factor, [spd(3), real((3, 2))], id="of_factor"),
    case("scipy.linalg.cho_solve", cho_solve_lower_vector, [spd(4), real((4,))],
         id="lower_vector", dtypes=(F64,)),
    case("scipy.linalg.cho_solve", cho_solve_given, [diagdom(3), real((3, 2))], id="given_c",
         dtypes=(F64,)),

    case("scipy.linalg.lu_factor", lu_factor_lu, [pivoting(4)], id="pivoting"),
    case("scipy.linalg.lu_factor", lu_factor_lu, [diagdom(3)], id="no_pivoting", dtypes=(F64,)),
    case("scipy.linalg.lu_factor", lu_factor_lu, [pivoting(3, (2,))], id="batch",
         dtypes=(F64,)),
    case("scipy.linalg.lu_solve", lu_solve_of_factor, [pivoting(4), real((4, 2))],
         id="of_factor"),
    case("scipy.linalg.lu_solve", lu_solve_trans1, [pivoting(3), real((3, 2))], id="trans1",
         dtypes=(F64,)),
    case("scipy.linalg.lu_solve", lu_solve_trans2_vector, [pivoting(3), real((3,))],
         id="trans2_vector", dtypes=(F64,)),
    case("scipy.linalg.lu_solve", lu_solve_given,
         [diagdom(3), ints(np.array([2, 1, 2], np.int32)), real((3, 2))], id="given_lu_piv",
         dtypes=(F64,)),

    case("scipy.linalg.inv", inv_, [diagdom(3)]),
    case("scipy.linalg.inv", inv_pos_lower, [spd(3)], id="pos_lower", dtypes=(F64,)),
    case("scipy.linalg.inv", inv_sym_upper, [diagdom(3)], id="sym", dtypes=(F64,)),
    case("scipy.linalg.inv", inv_upper_triangular, [diagdom(3)], id="upper_triangular",
         dtypes=(F64,)),
    case("scipy.linalg.inv", inv_lower_triangular, [diagdom(3)], id="lower_triangular",
         dtypes=(F64,)),
    case("scipy.linalg.inv", inv_diagonal, [diagdom(3)], id="diagonal", dtypes=(F64,)),
    case("scipy.linalg.inv", inv_general, [diagdom(3, (2,))], id="general_batch",
         dtypes=(F64,)),
    # float32 operands give a float64 determinant (SciPy computes it in double)
    case("scipy.linalg.det", det_, [diagdom(3)]),
    case("scipy.linalg.det", det_, [diagdom(3, negative=True)], id="negative", dtypes=(F64,)),

    case("scipy.linalg.expm", expm_, [real((3, 3), -1.0, 1.0)]),
    case("scipy.linalg.expm", expm_, [real((2, 2, 2), -1.0, 1.0)], id="batch", dtypes=(F64,)),
    case("scipy.linalg.sqrtm", sqrtm_, [spd(3)]),
    # not symmetric: eigenvalues with positive real parts (diagonal dominance)
    case("scipy.linalg.sqrtm", sqrtm_, [diagdom(3)], id="nonsymmetric", dtypes=(F64,)),
    case("scipy.linalg.solve_sylvester", sylvester_, [stable(3), stable(2), real((3, 2))]),

    case(CONV, conv_full, [real((6,)), real((3,))], id="1d_full"),
    case(CONV, conv_same, [real((6,)), real((4,))], id="1d_same", dtypes=(F64,)),
    case(CONV, conv_same, [real((3,)), real((5,))], id="1d_same_kernel_longer", dtypes=(F64,)),
    case(CONV, conv_valid, [real((7,)), real((3,))], id="1d_valid", dtypes=(F64,)),
    case(CONV, conv_valid, [real((3,)), real((6,))], id="1d_valid_swapped", dtypes=(F64,)),
    case(CONV, conv_valid_fft, [real((4, 5)), real((2, 3))], id="2d_valid_fft"),
    case(CONV, conv_same_direct, [real((4, 5)), real((3, 2))], id="2d_same_direct",
         dtypes=(F64,)),
    case(CONV, conv_full, [real((3, 2, 4)), real((2, 2, 2))], id="3d_full", dtypes=(F64,)),
    case(CORR, corr_full, [real((6,)), real((3,))], id="1d_full"),
    case(CORR, corr_same, [real((5,)), real((4,))], id="1d_same", dtypes=(F64,)),
    case(CORR, corr_valid, [real((7,)), real((3,))], id="1d_valid", dtypes=(F64,)),
    case(CORR, corr_valid, [real((3,)), real((6,))], id="1d_valid_swapped", dtypes=(F64,)),
    case(CORR, corr_valid, [real((2, 5)), real((3, 6))], id="2d_valid_swapped", dtypes=(F64,)),
    case(CORR, corr_same_fft, [real((4, 5)), real((2, 3))], id="2d_same_fft"),
    case(CORR, corr_full, [real((3, 4)), real((2, 2))], id="2d_full", dtypes=(F64,)),
]
