"""The sparse derivatives in SciPy's solvers (``api/sparse.py``): ``solve_ivp(method="BDF",
jac=sparse_jacfwd(...))`` on a stiff 1-D reaction-diffusion system gives the solution the
dense ``jacfwd`` gives (and its Jacobian at the start equals the dense one, as a CSR array
SciPy keeps sparse); ``minimize(method="trust-constr")`` with sparse constraint Jacobians and
objective and constraint Hessians finds the optimum the dense derivatives find, feasible."""
from __future__ import annotations

import numpy as np
import scipy.integrate
import scipy.optimize
import scipy.sparse

import wengert as wg

import sparse_problems as P


def test_solve_ivp_bdf_with_a_sparse_jacobian():
    n = 40
    y0 = P.brusselator_start(n)
    jac = wg.sparse_jacfwd(P.brusselator, argnums=1)
    dense = wg.jacfwd(P.brusselator, argnums=1)
    j0 = jac(0.0, y0)
    assert isinstance(j0, scipy.sparse.csr_array)
    assert j0.nnz == 2 * (3 * n - 2) + 2 * n
    np.testing.assert_allclose(j0.toarray(), dense(0.0, y0), rtol=1e-14, atol=0)
    # u_j shares a row with u_{j-1..j+1} and v_{j-1..j+1}: 4 colors is the least
    assert jac.plan(0.0, y0).colors == 4
    kw = dict(method="BDF", rtol=1e-8, atol=1e-10)
    sparse_run = scipy.integrate.solve_ivp(P.brusselator, (0.0, 2.0), y0, jac=jac, **kw)
    dense_run = scipy.integrate.solve_ivp(P.brusselator, (0.0, 2.0), y0,
                                          jac=lambda t, y: dense(t, y), **kw)
    assert sparse_run.status == 0 and dense_run.status == 0
    assert sparse_run.njev >= 1
    np.testing.assert_allclose(sparse_run.y[:, -1], dense_run.y[:, -1], rtol=1e-9, atol=1e-9)


def test_trust_constr_with_sparse_jacobians_and_hessians():
    n = 16
    x0 = np.full(n, 0.5)
    h_con = wg.sparse_hessian(P.discs_lagrangian)
    sparse_con = scipy.optimize.NonlinearConstraint(
        P.discs, -np.inf, 1.5, jac=wg.sparse_jacfwd(P.discs), hess=lambda x, v: h_con(x, v))
    dense_h = wg.hessian(P.discs_lagrangian)
    dense_con = scipy.optimize.NonlinearConstraint(
        P.discs, -np.inf, 1.5, jac=wg.jacfwd(P.discs), hess=lambda x, v: dense_h(x, v))
    opts = dict(gtol=1e-10, xtol=1e-12, maxiter=3000)
    x = np.random.default_rng(0).normal(size=n)
    v = np.random.default_rng(1).normal(size=n - 1)
    np.testing.assert_allclose(h_con(x, v).toarray(), dense_h(x, v), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(wg.sparse_hessian(P.rosenbrock)(x).toarray(),
                               wg.hessian(P.rosenbrock)(x), rtol=1e-13)
    got = scipy.optimize.minimize(P.rosenbrock, x0, method="trust-constr", jac=wg.grad(P.rosenbrock),
                                  hess=wg.sparse_hessian(P.rosenbrock),
                                  constraints=[sparse_con], options=opts)
    want = scipy.optimize.minimize(P.rosenbrock, x0, method="trust-constr",
                                   jac=wg.grad(P.rosenbrock), hess=wg.hessian(P.rosenbrock),
                                   constraints=[dense_con], options=opts)
    assert got.status in (1, 2) and want.status in (1, 2)
    assert P.discs(got.x).max() <= 1.5 + 1e-8
    np.testing.assert_allclose(got.fun, want.fun, rtol=1e-7)
    np.testing.assert_allclose(got.x, want.x, atol=1e-5)
