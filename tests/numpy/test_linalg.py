"""``np.linalg`` on traced values (``wengert/numpy/linalg.py``, over the rows of
``primitives/matrix.py``, ``decomp.py``, ``lstsq.py``) beyond the function
table (``fn_cases_linalg.py``): identities the decompositions and their
tangents satisfy, derivatives at singular matrices and at zeros, and the
typed refusals.

* every decomposition, in both engines: the factors reconstruct the input
  and are orthogonal, and their tangents satisfy the same identities to
  first order (the tangent of the reconstruction is the input's tangent;
  ``Q^T dQ`` is antisymmetric), which checks the gauge of the sign- and
  rotation-ambiguous outputs that finite differences cannot;
* det's gradient at singular matrices is the transposed adjugate
  (cofactors), and its Hessian matches finite differences there;
* np.prod's gradient and Hessian at one and two exact zeros;
* norm's value for every order and axis against NumPy, and NumPy's errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import NoDerivativeRule, WengertError
from wengert.primitives.lstsq import RankDeficientError

import checks

ENGINES = ("trace", "source")
RNG = np.random.default_rng(7)


def matrix_transpose(x):
    return np.swapaxes(x, -1, -2)


def _orth_check(q, q_dot):
    """q^T q = I, and q^T dq + dq^T q = 0 (orthonormal columns stay so)."""
    k = q.shape[-1]
    checks.assert_close(matrix_transpose(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), 1e-12,
                        what="orthonormal columns")
    sym = matrix_transpose(q) @ q_dot
    checks.assert_close(sym + matrix_transpose(sym), np.zeros_like(sym), 1e-12,
                        what="tangent keeps the columns orthonormal")


# --- decompositions and their tangents ---------------------------------------------
def svd_thin(a):
    return np.linalg.svd(a, full_matrices=False)


def svd_full(a):
    return np.linalg.svd(a)


def qr_reduced(a):
    return np.linalg.qr(a)


def qr_complete(a):
    return np.linalg.qr(a, mode="complete")


def eigh_(a):
    return np.linalg.eigh(a)


def _svd_identities(a, a_dot, out, out_dot):
    u, s, vh = out
    du, ds, dvh = out_dot
    k = s.shape[-1]
    _orth_check(u, du)
    _orth_check(matrix_transpose(vh), matrix_transpose(dvh))
    uk, vhk, duk, dvhk = u[..., :, :k], vh[..., :k, :], du[..., :, :k], dvh[..., :k, :]
    checks.assert_close(uk @ (s[..., :, None] * vhk), a, 1e-12, what="U S Vh = A")
    recon_dot = duk @ (s[..., :, None] * vhk) + uk @ (ds[..., :, None] * vhk) \
        + uk @ (s[..., :, None] * dvhk)
    checks.assert_close(recon_dot, a_dot, 1e-10, what="dU S Vh + U dS Vh + U S dVh = dA")


def _qr_identities(a, a_dot, out, out_dot):
    q, r = out
    dq, dr = out_dot
    _orth_check(q, dq)
    checks.assert_close(q @ r, a, 1e-12, what="Q R = A")
    checks.assert_close(dq @ r + q @ dr, a_dot, 1e-10, what="dQ R + Q dR = dA")
    for m, what in ((r, "R"), (dr, "dR")):
        checks.assert_close(np.tril(m, -1), np.zeros_like(m), 0.0, what=f"{what} upper triangular")


def _eigh_identities(a, a_dot, out, out_dot):
    w, v = out
    dw, dv = out_dot
    _orth_check(v, dv)
    sym = np.tril(a) + matrix_transpose(np.tril(a, -1))        # what NumPy reads
    sym_dot = np.tril(a_dot) + matrix_transpose(np.tril(a_dot, -1))
    checks.assert_close(v @ (w[..., :, None] * matrix_transpose(v)), sym, 1e-12, what="V W V^T = A")
    recon_dot = dv @ (w[..., :, None] * matrix_transpose(v)) + v @ (dw[..., :, None] * matrix_transpose(v)) \
        + v @ (w[..., :, None] * matrix_transpose(dv))
    checks.assert_close(recon_dot, sym_dot, 1e-10, what="tangent of V W V^T = dA")


DECOMPOSITIONS = [
    pytest.param(svd_thin, (4, 3), _svd_identities, id="svd_thin_tall"),
    pytest.param(svd_thin, (2, 3, 5), _svd_identities, id="svd_thin_wide_batch"),
    pytest.param(svd_full, (5, 3), _svd_identities, id="svd_full_tall"),
    pytest.param(svd_full, (2, 2, 4), _svd_identities, id="svd_full_wide_batch"),
    pytest.param(qr_reduced, (5, 3), _qr_identities, id="qr_reduced_tall"),
    pytest.param(qr_reduced, (3, 5), _qr_identities, id="qr_wide"),
    pytest.param(qr_complete, (2, 5, 3), _qr_identities, id="qr_complete_batch"),
    pytest.param(eigh_, (4, 4), _eigh_identities, id="eigh"),
    pytest.param(eigh_, (3, 3, 3), _eigh_identities, id="eigh_batch"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun, shp, identities", DECOMPOSITIONS)
def test_decomposition_and_tangent_identities(fun, shp, identities, engine):
    a = RNG.standard_normal(shp)
    a_dot = RNG.standard_normal(shp)
    out, out_dot = wg.jvp(fun, (a,), (a_dot,), engine=engine)
    identities(a, a_dot, [np.asarray(o) for o in out], [np.asarray(o) for o in out_dot])


# --- det at singular matrices ----------------------------------------------------------
def _cofactor_adjugate(a):
    n = a.shape[-1]
    adj = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            adj[..., j, i] = (-1) ** (i + j) * np.linalg.det(minor)
    return adj


def det_(a):
    return np.linalg.det(a)


def det_sum(a):
    return np.sum(np.linalg.det(a))


SINGULAR = [
    pytest.param(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]), id="rank2_3x3"),
    pytest.param(np.array([[2.0, 1.0], [4.0, 2.0]]), id="rank1_2x2"),
    pytest.param(np.array([[1.0, 1.0, 0.0, 2.0], [1.0, 1.0, 0.0, 2.0], [0.0, 3.0, 1.0, 0.0],
                           [1.0, 4.0, 1.0, 2.0]]), id="rank3_4x4"),
    pytest.param(np.zeros((3, 3)), id="zero_3x3"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a", SINGULAR)
def test_det_gradient_at_singular_matrix_is_the_transposed_adjugate(a, engine):
    got = wg.grad(det_, engine=engine)(a)
    want = matrix_transpose(_cofactor_adjugate(a))
    assert np.all(np.isfinite(got))
    checks.assert_close(got, want, 1e-12, what="grad det = adj(A)^T")
    # a batch mixing singular and regular matrices
    batch = np.stack([a, a + np.eye(a.shape[-1])])
    checks.assert_close(wg.grad(det_sum, engine=engine)(batch), matrix_transpose(_cofactor_adjugate(batch)),
                        1e-12, what="batched grad det")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a", SINGULAR)
def test_det_hessian_at_singular_matrix(a, engine):
    hess = wg.hessian(det_, engine=engine)(a)
    n = a.shape[-1]
    want = checks.fd_jacobian(lambda x: matrix_transpose(_cofactor_adjugate(x)), (a,)).reshape(n, n, n, n)
    checks.assert_close(hess, want, 1e-6, what="Hessian of det vs FD of the cofactor gradient")


# --- np.prod at zeros ---------------------------------------------------------------------
def prod_(x):
    return np.prod(x)


def _brute_grad(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


def _brute_hessian(x):
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            if i != k:
                h[i, k] = np.prod(np.delete(x, [i, k]))
    return h


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("zeros", [[2], [0, 3], [1, 2, 4]], ids=["one", "two", "three"])
def test_prod_gradient_and_hessian_at_zeros(zeros, engine):
    x = np.array([1.5, -2.0, 0.5, 3.0, -1.25])
    x[zeros] = 0.0
    checks.assert_close(wg.grad(prod_, engine=engine)(x), _brute_grad(x), 1e-14,
                        what="grad prod")
    checks.assert_close(wg.hessian(prod_, engine=engine)(x), _brute_hessian(x), 1e-14,
                        what="Hessian of prod")


# --- norm: values for every order and axis; NumPy's errors ----------------------------------
VEC_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1, -2.5]
MAT_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


def _norm_calls():
    out = []
    for o in VEC_ORDS:
        for axis, keep in ((None, False), (0, False), (-1, True), (1, False)):
            shp = (5,) if axis is None else (3, 4)
            out.append(pytest.param(shp, o, axis, keep, id=f"vec-{o}-{axis}-{keep}"))
    for o in MAT_ORDS:
        for shp, axis, keep in (((3, 4), None, False), ((2, 3, 4), (2, 0), True),
                                ((2, 3, 4), (-1, -2), False)):
            out.append(pytest.param(shp, o, axis, keep, id=f"mat-{o}-{axis}-{keep}"))
    return out


def _norm(x, ord, axis, keepdims):
    return np.linalg.norm(x, ord, axis, keepdims)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shp, ord, axis, keepdims", _norm_calls())
def test_norm_values_for_every_order_and_axis(shp, ord, axis, keepdims, engine):
    x = RNG.standard_normal(shp)
    for arr in (x, x.astype(np.float32)):
        want = np.linalg.norm(arr, ord, axis, keepdims)
        got, _ = wg.jvp(lambda y: _norm(y, ord, axis, keepdims), (arr,), (np.ones_like(arr),),
                        engine=engine)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        checks.assert_close(got, want, checks.rtol("ref", arr.dtype), what="norm value")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shp, ord, axis", [((4,), "fro", None), ((4,), "nuc", 0),
                                            ((3, 4), 3, None), ((3, 4), 0, (0, 1)),
                                            ((2, 3, 4), 2, None), ((3, 4), None, (0, 0))])
def test_norm_invalid_order_or_axis_raises_value_error(shp, ord, axis, engine):
    x = RNG.standard_normal(shp)
    with pytest.raises(ValueError):
        np.linalg.norm(x, ord, axis)
    with pytest.raises(ValueError):
        wg.jvp(lambda y: _norm(y, ord, axis, False), (x,), (x,), engine=engine)


# --- refusals ------------------------------------------------------------------------------
def lstsq_x(a, b):
    return np.linalg.lstsq(a, b)[0]


def svd_hermitian(a):
    return np.linalg.svd(a, hermitian=True)[1]


def qr_raw(a):
    return np.linalg.qr(a, mode="raw")[0]


def pinv_per_matrix_rcond(a):
    return np.linalg.pinv(a, rcond=np.array([1e-3, 1e-4]))


def eigh_bad_uplo(a):
    return np.linalg.eigh(a, UPLO="X")[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_lstsq_rank_deficient_tall_raises_a_typed_error(engine):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])      # rank 1 < 2 columns
    b = np.array([1.0, 0.0, 2.0])
    assert np.linalg.lstsq(a, b)[1].shape == (0,)         # NumPy: no residuals
    with pytest.raises(RankDeficientError) as info:
        wg.jvp(lambda a: lstsq_x(a, b), (a,), (a,), engine=engine)
    assert isinstance(info.value, (WengertError, ValueError))
    assert "test_linalg.py" in str(info.value) and "pinv" in str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun, shp, error", [
    (svd_hermitian, (3, 3), NoDerivativeRule),
    (qr_raw, (3, 2), NoDerivativeRule),
    (pinv_per_matrix_rcond, (2, 3, 3), NoDerivativeRule),
    (eigh_bad_uplo, (3, 3), ValueError),
], ids=["svd_hermitian", "qr_raw", "pinv_array_rcond", "eigh_uplo"])
def test_unsupported_parameters_are_refused(fun, shp, error, engine):
    x = RNG.standard_normal(shp)
    with pytest.raises(error) as info:
        wg.jvp(fun, (x,), (x,), engine=engine)
    assert "test_linalg.py" in str(info.value)


# --- results named as NumPy names them ---------------------------------------------------------
def svd_by_name(a):
    res = np.linalg.svd(a, full_matrices=False)
    return res.U @ (res.S[:, None] * res.Vh)


def eigh_by_name(a):
    res = np.linalg.eigh(a)
    return res.eigenvectors @ (res.eigenvalues[:, None] * res.eigenvectors.T)


def qr_by_name(a):
    res = np.linalg.qr(a)
    return res.Q @ res.R


def whole_svd(a):
    return np.linalg.svd(a, full_matrices=False)


def whole_qr(a):
    return np.linalg.qr(a)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun", [svd_by_name, eigh_by_name, qr_by_name])
def test_results_are_read_by_numpys_names(fun, engine):
    a = RNG.standard_normal((3, 3))
    a = a + a.T         # eigh reads the lower triangle: make it the whole matrix
    t = RNG.standard_normal((3, 3))
    t = t + t.T
    out, out_dot = wg.jvp(fun, (a,), (t,), engine=engine)
    checks.assert_close(out, a, 1e-12, what="the named factors reconstruct A")
    checks.assert_close(out_dot, t, 1e-10, what="and their tangents dA")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun", [whole_svd, whole_qr])
def test_a_named_result_returns_as_a_tuple(fun, engine):
    a = RNG.standard_normal((4, 3))
    out, out_dot = wg.jvp(fun, (a,), (a,), engine=engine)
    want = fun(a)
    assert isinstance(out, tuple) and len(out) == len(want)
    checks.assert_close(list(out), list(want), 1e-12, what="values")
    assert len(out_dot) == len(want)


def lstsq_cut(a, b):
    return np.sum(np.linalg.lstsq(a, b, rcond=1e-3)[0] * np.arange(1.0, 6.0))


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_lstsq_derivative_cuts_what_rcond_cuts(engine):
    """lstsq with rcond drops singular values below rcond * s_max; its
    derivative must be that of the truncated solution (the jvp used a
    pseudo-inverse that kept them: 5.4e8 where the derivative is -2.56)."""
    u = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    v = np.linalg.qr(np.random.default_rng(1).standard_normal((5, 5)))[0]
    a = u @ np.diag([2.0, 1.0, 1e-4]) @ np.eye(3, 5) @ v.T
    b = np.array([1.0, -0.5, 0.3])
    t = np.random.default_rng(2).standard_normal(a.shape)
    h = 1e-6
    fd = (lstsq_cut(a + h * t, b) - lstsq_cut(a - h * t, b)) / (2 * h)
    _, got = wg.jvp(lstsq_cut, (a, b), (t, np.zeros(3)), engine=engine)
    np.testing.assert_allclose(got, fd, rtol=1e-4)   # FD near a 1e-4 singular value
