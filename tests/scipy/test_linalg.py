"""``scipy.linalg`` and ``scipy.signal`` on traced values
(``wengert/scipy/linalg.py``, over the rows of ``primitives/triangular.py``,
``matfuncs.py``, ``correlation.py``) beyond the function table:

* identities: two functions equal in value (a decomposition and the solve it
  stands for, ``expm`` of a diagonal matrix and ``exp``...) have equal
  derivatives, forward, reverse and second order;
* functions that read one triangle of a matrix (or not its diagonal) have a
  derivative that is exactly zero in the entries they do not read, forward
  and reverse;
* what is refused says so with a typed error naming the user's line.

Source engine only: SciPy's functions are ``CALLS`` entries.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.signal as ss

import wengert as wg
from wengert.core.errors import NoDerivativeRule, ShapeMismatchError, UnsupportedDtypeError

import checks

RNG = np.random.default_rng(7)
M = RNG.uniform(-1.0, 1.0, (3, 3))
B = RNG.uniform(-1.0, 1.0, (3, 2))
X = RNG.uniform(-1.0, 1.0, 3)


def _spd(m):
    return m @ m.T + 3.0 * np.eye(3)


# --- identities ----------------------------------------------------------------------
def cho_solve_of_factor(m, b):
    return sl.cho_solve(sl.cho_factor(_spd(m)), b)


def cho_solve_lower_of_factor(m, b):
    return sl.cho_solve(sl.cho_factor(_spd(m), lower=True), b)


def solve_spd(m, b):
    return np.linalg.solve(_spd(m), b)


def lu_solve_of_factor(m, b):
    return sl.lu_solve(sl.lu_factor(m + 2.0 * np.eye(3)), b)


def lu_solve_T_of_factor(m, b):
    return sl.lu_solve(sl.lu_factor(m + 2.0 * np.eye(3)), b, trans=1)


def solve_shifted(m, b):
    return np.linalg.solve(m + 2.0 * np.eye(3), b)


def solve_shifted_T(m, b):
    return np.linalg.solve((m + 2.0 * np.eye(3)).T, b)


def scipy_cholesky_lower(m, b):
    return sl.cholesky(_spd(m), lower=True) @ b


def scipy_cholesky_upper_T(m, b):
    return sl.cholesky(_spd(m)).T @ b


def numpy_cholesky(m, b):
    return np.linalg.cholesky(_spd(m)) @ b


def solve_triangular_lower(m, b):
    return sl.solve_triangular(m + 3.0 * np.eye(3), b, lower=True)


def solve_lower_masked(m, b):
    return np.linalg.solve((m + 3.0 * np.eye(3)) * np.tril(np.ones((3, 3))), b)


def scipy_inv_det(m, b):
    return sl.inv(m + 2.0 * np.eye(3)) @ b * sl.det(m + 2.0 * np.eye(3))


def numpy_inv_det(m, b):
    return np.linalg.inv(m + 2.0 * np.eye(3)) @ b * np.linalg.det(m + 2.0 * np.eye(3))


def expm_of_diagonal(m, x):
    return sl.expm(x * np.eye(3)) + 0.0 * m[0, 0]


def exp_on_diagonal(m, x):
    return np.exp(x) * np.eye(3) + 0.0 * m[0, 0]


def expm_twice(m, b):
    return sl.expm(m) @ sl.expm(m) @ b


def expm_of_double(m, b):
    return sl.expm(2.0 * m) @ b


def sqrtm_squared(m, b):
    r = sl.sqrtm(_spd(m))
    return r @ r @ b


def spd_times(m, b):
    return _spd(m) @ b


def sylvester_residual(m, b):
    a = m + 3.0 * np.eye(3)
    x = sl.solve_sylvester(a, a.T, b @ b.T)
    return a @ x + x @ a.T


def outer_b(m, b):
    return b @ b.T + 0.0 * m


def convolve_(m, x):
    return ss.convolve(m, x[:2, None] * x[None, 1:])


def correlate_flipped(m, x):
    return ss.correlate(m, (x[:2, None] * x[None, 1:])[::-1, ::-1])


IDENTITIES = [
    ("cho_solve_of_cho_factor_is_solve", cho_solve_of_factor, solve_spd, B),
    ("cho_solve_lower_of_cho_factor_is_solve", cho_solve_lower_of_factor, solve_spd, B),
    ("lu_solve_of_lu_factor_is_solve", lu_solve_of_factor, solve_shifted, B),
    ("lu_solve_trans_is_solve_of_transpose", lu_solve_T_of_factor, solve_shifted_T, B),
    ("scipy_cholesky_lower_is_numpys", scipy_cholesky_lower, numpy_cholesky, B),
    ("scipy_cholesky_upper_is_numpys_transpose", scipy_cholesky_upper_T, numpy_cholesky, B),
    ("solve_triangular_is_solve_of_triangle", solve_triangular_lower, solve_lower_masked, B),
    ("scipy_inv_det_are_numpys", scipy_inv_det, numpy_inv_det, B),
    ("expm_of_diagonal_is_exp", expm_of_diagonal, exp_on_diagonal, X),
    ("expm_squared_is_expm_of_double", expm_twice, expm_of_double, B),
    ("sqrtm_squared_is_identity", sqrtm_squared, spd_times, B),
    ("sylvester_solution_solves", sylvester_residual, outer_b, B),
    ("convolve_is_correlate_with_flipped_kernel", convolve_, correlate_flipped, X),
]


@pytest.mark.parametrize("f, g, second", [pytest.param(f, g, s, id=name)
                                          for name, f, g, s in IDENTITIES])
def test_identity_same_derivatives(f, g, second):
    args = (M, second)
    rng = np.random.default_rng(3)
    t = tuple(checks.random_like(a, rng) for a in args)
    tol = checks.rtol("program", np.float64)
    checks.assert_close(f(*args), g(*args), checks.rtol("ref", np.float64), what="values")
    out_f, dot_f = wg.jvp(f, args, t, engine="source")
    _, dot_g = wg.jvp(g, args, t, engine="source")
    checks.assert_close(dot_f, dot_g, tol, what="jvp")
    checks.assert_close(dot_f, checks.fd_jvp(f, args, t), tol, what="jvp vs finite differences")
    ct = checks.random_like(out_f, rng)
    checks.assert_close(wg.vjp(f, *args, engine="source")[1](ct),
                        wg.vjp(g, *args, engine="source")[1](ct), tol, what="vjp")

    t2 = tuple(checks.random_like(a, rng) for a in args)
    checks.assert_close(wg.jvp(_jvp_along(f, t), args, t2, engine="source")[1],
                        wg.jvp(_jvp_along(g, t), args, t2, engine="source")[1],
                        checks.rtol("jvp2", np.float64), what="second order")


def _jvp_along(h, t):
    def h_dot(*p):
        return wg.jvp(h, p, t, engine="source")[1]
    return h_dot


# --- entries that are never read -------------------------------------------------------
def chol_upper(a, b):
    return sl.cholesky(a) @ b


def chol_lower(a, b):
    return sl.cholesky(a, lower=True) @ b


def cho_factor_solve_upper(a, b):
    return sl.cho_solve(sl.cho_factor(a), b)


def cho_solve_given_lower(a, b):
    return sl.cho_solve((a, True), b)


def cho_solve_given_upper(a, b):
    return sl.cho_solve((a, False), b)


def tri_lower(a, b):
    return sl.solve_triangular(a, b, lower=True)


def tri_upper_T(a, b):
    return sl.solve_triangular(a, b, trans="T")


def tri_lower_unit(a, b):
    return sl.solve_triangular(a, b, lower=True, unit_diagonal=True)


def tri_upper_unit_C(a, b):
    return sl.solve_triangular(a, b, trans="C", unit_diagonal=True)


def inv_pos_lower(a, b):
    return sl.inv(a, assume_a="pos", lower=True) @ b


def inv_sym_upper(a, b):
    return sl.inv(a, assume_a="sym") @ b


def inv_upper_triangular(a, b):
    return sl.inv(a, assume_a="upper triangular") @ b


def lu_solve_given(a, b):
    return sl.lu_solve((a, np.array([1, 2, 2], np.int32)), b)


_UPPER = np.triu(np.ones((3, 3)), 1) > 0           # strictly above the diagonal
_LOWER = _UPPER.T
_DIAG = np.eye(3) > 0

# (function, entries of its matrix operand it does not read)
UNREAD = [
    (chol_upper, _LOWER), (chol_lower, _UPPER), (cho_factor_solve_upper, _LOWER),
    (cho_solve_given_lower, _UPPER), (cho_solve_given_upper, _LOWER),
    (tri_lower, _UPPER), (tri_upper_T, _LOWER), (tri_lower_unit, _UPPER | _DIAG),
    (tri_upper_unit_C, _LOWER | _DIAG), (inv_pos_lower, _UPPER), (inv_sym_upper, _LOWER),
    (inv_upper_triangular, _LOWER),
]


@pytest.mark.parametrize("f, unread", [pytest.param(f, u, id=f.__name__) for f, u in UNREAD])
def test_unread_entries_have_zero_derivative(f, unread):
    a = _spd(M)
    a[unread] += 5.0 * RNG.uniform(-1.0, 1.0, unread.sum())   # garbage there: never read
    rng = np.random.default_rng(4)
    # forward: a direction on the unread entries only changes nothing
    t_a = np.where(unread, rng.standard_normal((3, 3)), 0.0)
    out, dot = wg.jvp(f, (a, B), (t_a, np.zeros_like(B)), engine="source")
    checks.assert_close(out, f(a, B), checks.rtol("ref", np.float64), what="value")
    assert np.all(dot == 0.0), f"tangent along unread entries: {dot}"
    # reverse: the cotangent of the unread entries is exactly zero, the rest is not
    ct_a, _ = wg.vjp(f, a, B, engine="source")[1](checks.random_like(out, rng))
    assert np.all(ct_a[unread] == 0.0), f"cotangent on unread entries: {ct_a[unread]}"
    assert np.all(ct_a[~unread] != 0.0)
    t = (rng.standard_normal((3, 3)), rng.standard_normal(B.shape))
    checks.assert_close(wg.jvp(f, (a, B), t, engine="source")[1], checks.fd_jvp(f, (a, B), t),
                        checks.rtol("jvp", np.float64), what="jvp vs finite differences")


# --- refusals ---------------------------------------------------------------------------
def complex_solve_triangular(a):
    return sl.solve_triangular(a, np.ones(3), lower=True)


def complex_cholesky(a):
    return sl.cholesky(a)


def complex_cho_factor(a):
    return sl.cho_factor(a, lower=True)[0]


def complex_inv_pos(a):
    return sl.inv(a, assume_a="pos")


def complex_lu_factor(a):
    return sl.lu_factor(a)[0]


def complex_expm(a):
    return sl.expm(a)


def complex_sqrtm(a):
    return sl.sqrtm(a)


def complex_sylvester(a):
    return sl.solve_sylvester(a, a, a)


def complex_convolve(a):
    return ss.convolve(a, a)


@pytest.mark.parametrize("f", [complex_solve_triangular, complex_cholesky, complex_cho_factor,
                               complex_inv_pos, complex_lu_factor, complex_expm,
                               complex_sqrtm, complex_sylvester, complex_convolve],
                         ids=lambda f: f.__name__)
def test_complex_operands_are_refused(f):
    a = (_spd(M) + 0.1j * M).astype(np.complex128)
    with pytest.raises(UnsupportedDtypeError, match="test_linalg.py:[0-9]+: .*complex"):
        wg.jvp(f, (a,), (np.ones_like(a),), engine="source")


def sqrtm_negative(a):
    return sl.sqrtm(a - 10.0 * np.eye(3))


def lu_factor_wide(a):
    return sl.lu_factor(a[:2])[0]


def convolve_bad_mode(a):
    return ss.convolve(a, a, mode="circular")


def correlate_bad_method(a):
    return ss.correlate(a, a, method="winograd")


def solve_triangular_bad_trans(a):
    return sl.solve_triangular(a, a, trans="H")


def lu_solve_bad_trans(a):
    return sl.lu_solve(sl.lu_factor(a), a, trans=3)


def inv_bad_assume(a):
    return sl.inv(a, assume_a="banded")


def sqrtm_disp(a):
    return sl.sqrtm(a, disp=False)


def correlate_ndim_mismatch(a):
    return ss.correlate(a, a[0])


def correlate_valid_neither_larger(a):
    return ss.correlate(a, np.ones((2, 4)), mode="valid")


REFUSED = [
    (sqrtm_negative, UnsupportedDtypeError, "complex"),
    (lu_factor_wide, NoDerivativeRule, "non-square"),
    (convolve_bad_mode, NoDerivativeRule, "mode"),
    (correlate_bad_method, NoDerivativeRule, "method"),
    (solve_triangular_bad_trans, NoDerivativeRule, "trans"),
    (lu_solve_bad_trans, NoDerivativeRule, "trans"),
    (inv_bad_assume, NoDerivativeRule, "assume_a"),
    (correlate_ndim_mismatch, ShapeMismatchError, "dimensionality"),
    (correlate_valid_neither_larger, ShapeMismatchError, "at least as large"),
] + ([(sqrtm_disp, NoDerivativeRule, "disp")]       # SciPy < 1.18 (1.18 removed disp=)
     if "disp" in inspect.signature(sl.sqrtm).parameters else [])


@pytest.mark.parametrize("f, error, words", [pytest.param(f, e, w, id=f.__name__)
                                             for f, e, w in REFUSED])
def test_refused_calls_name_the_line(f, error, words):
    with pytest.raises(error, match=f"test_linalg.py:[0-9]+: .*{words}"):
        wg.jvp(f, (_spd(M),), (np.ones((3, 3)),), engine="source")


# --- the NumPy-only correlation (used where SciPy is absent or few outputs remain) --
@pytest.mark.parametrize("xs, ks", [((7,), (3,)), ((4, 5), (2, 3)), ((3, 4, 5), (2, 1, 2)),
                                    ((6, 6), (5, 4)), ((3, 3), (3, 3))],
                         ids=["1d", "2d", "3d", "2d_kernel_larger_than_output", "1_output"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_shifted_sums_is_the_valid_correlation(xs, ks, dtype):
    from wengert.primitives import correlation
    rng = np.random.default_rng(5)
    x, k = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ks).astype(dtype)
    shape = tuple(n - m + 1 for n, m in zip(xs, ks))
    got = correlation._shifted_sums(x, k, shape, np.dtype(dtype))
    assert got.dtype == dtype
    checks.assert_close(got, ss.correlate(x.astype(np.float64), k.astype(np.float64), "valid",
                                          method="direct"),
                        checks.rtol("ref", dtype), what="shifted sums vs scipy")


# --- batch rules (Jacobians in one pass) ------------------------------------------------
def _batch_programs():
    from wengert.primitives import correlation, matfuncs, triangular
    a = _spd(M)
    k2 = RNG.standard_normal((2, 2))
    return [
        ("solve_triangular_rhs", lambda x: triangular.solve_triangular(a, x.reshape(3, 3), True, 1)),
        ("solve_triangular_matrix", lambda x: triangular.solve_triangular(
            a + x.reshape(3, 3), B, False, 0, True)),
        ("lu_factor", lambda x: triangular.lu_factor(a + x.reshape(3, 3))[0]),
        ("sylvester_q", lambda x: matfuncs.sylvester(a, a[:2, :2], x[:6].reshape(3, 2))),
        ("sylvester_ab", lambda x: matfuncs.sylvester(a + x.reshape(3, 3), a.T, B @ B.T)),
        ("expm", lambda x: matfuncs.expm(0.3 * x.reshape(3, 3))),
        ("sqrtm", lambda x: matfuncs.sqrtm(a + 0.1 * x.reshape(3, 3))),
        ("correlate_x", lambda x: correlation.correlate(x.reshape(3, 3), k2, ((1, 0), (1, 1)))),
        ("correlate_k", lambda x: correlation.correlate(M, x[:4].reshape(2, 2), ((0, 1), (1, 1)))),
    ]


@pytest.mark.parametrize("name", [n for n, _ in _batch_programs()])
def test_batched_linear_program_equals_one_tangent_at_a_time(name):
    from wengert.backends.interpret import interpret
    from wengert.transforms.batching import batch_eval
    from wengert.transforms.partial_eval import linearize_flat
    fn = dict(_batch_programs())[name]
    x = RNG.uniform(-0.5, 0.5, 9)
    _, lin = linearize_flat(lambda x: [fn(x)], [x])
    basis = RNG.standard_normal((4, 9))
    batched, = batch_eval(lin, [basis], 4)
    for k in range(4):
        one, = interpret(lin, basis[k])
        checks.assert_close(batched[k], one, 1e-12, what=f"tangent {k}")
    jac = wg.jacfwd(fn, engine="trace")(x)
    checks.assert_close(jac @ basis[0], checks.fd_jvp(fn, (x,), (basis[0],)),
                        checks.rtol("jvp", np.float64), what="jacfwd vs finite differences")
