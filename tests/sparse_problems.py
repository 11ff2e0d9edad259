"""Problems of the SciPy integrations of the sparse derivatives (``tests/api/
test_sparse_scipy.py``, ``bench/sparse_bench.py``): a 1-D Brusselator reaction-diffusion
system (a stiff ODE for ``solve_ivp(method="BDF")``) and a chained Rosenbrock function with
chained disc constraints (``minimize(method="trust-constr")``)."""
from __future__ import annotations

import numpy as np


def brusselator(t, y):
    """The right-hand side of 1-D Brusselator reaction-diffusion, ``u`` then ``v`` on ``n``
    cells with no-flux ends: a Jacobian of two tridiagonal blocks and two diagonals."""
    n = y.shape[0] // 2
    u, v = y[:n], y[n:]
    pu = np.concatenate([u[:1], u, u[-1:]])
    pv = np.concatenate([v[:1], v, v[-1:]])
    h2 = (n + 1) ** 2
    du = 0.02 * h2 * (pu[2:] - 2.0 * u + pu[:-2]) + 1.0 + u * u * v - 4.0 * u
    dv = 0.02 * h2 * (pv[2:] - 2.0 * v + pv[:-2]) + 3.0 * u - u * u * v
    return np.concatenate([du, dv])


def brusselator_start(n):
    xs = np.linspace(0.0, 1.0, n)
    return np.concatenate([1.0 + np.sin(2.0 * np.pi * xs), np.full(n, 3.0)])


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def discs(x):
    """``x[k]^2 + x[k+1]^2`` for each k: a bidiagonal Jacobian."""
    return x[1:] ** 2 + x[:-1] ** 2


def discs_lagrangian(x, v):
    """``v . discs(x)``: the constraint part of the Lagrangian's Hessian."""
    return v @ discs(x)
