"""Sparse Jacobians and Hessians (``sparse_jacfwd``, ``sparse_hessian``) against the dense
``jacfwd``/``hessian`` and SciPy's sparse finite differences, at several sizes.

Jacobian: the residual of a 2-D nonlinear Poisson problem on a k x k grid (n = k^2
unknowns, zero boundary), ``r(u) = laplacian(u) - u^3 + 1`` (``u * u * u``: NumPy 2's ``u ** 3`` costs 100 times more): a five-point stencil, so a
column coloring needs 5 colors. Hessian: ``sum(x[0] * x[1:]^2) + sum(x[1:] * x[:-1]^2)``
(an arrowhead over a tridiagonal band: a dense row and column), where a column coloring
needs n colors and a star coloring 3.

Columns (per call, milliseconds, best of a few runs): ``f``: the function; ``sparse``: the
sparse derivative once its plan (pattern and coloring) is made; ``first``: the first call
(the pattern read from the Program, the coloring, the code generated); ``dense``: wengert's
dense ``jacfwd``/``hessian`` (where its n x n matrix fits the budget, else ``-``);
``FD``: ``scipy.optimize.approx_derivative(method="2-point", sparsity=...)`` given the exact
pattern (it colors the columns itself; of the gradient, for the Hessian: a column coloring,
n colors for an arrowhead, so it is timed up to 1e4 unknowns); ``colors``; ``sparse/(colors*f)``: the sparse
derivative's cost in units of colors times the function's; ``FD/sparse``. Values are checked
against the dense derivative (where timed) or against the finite differences before timing.

Run from the repository root:  ``python -m bench.sparse_bench``.
"""
from __future__ import annotations

import time
import timeit

import numpy as np

import wengert as wg

try:
    from scipy.optimize._numdiff import approx_derivative
except ImportError:         # SciPy missing: no finite-difference column
    approx_derivative = None

GRIDS = (32, 100, 316)          # n = 1024, 10000, 99856
HESSIAN_SIZES = (1_000, 10_000, 100_000)
DENSE_LIMIT = 3_000             # the dense derivative is timed up to this many unknowns
FD_HESSIAN_LIMIT = 10_000       # finite differences of an arrowhead take n gradients


def residual(u):
    """The 2-D nonlinear Poisson residual on a square grid (``u`` flat)."""
    k = int(round(np.sqrt(u.shape[0])))
    g = u.reshape(k, k)
    p = np.pad(g, 1)
    lap = p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4.0 * g
    return (lap - g * g * g + 1.0).reshape(-1)


def arrow_band(x):
    return np.sum(x[0] * (x[1:] * x[1:])) + np.sum(x[1:] * (x[:-1] * x[:-1]))


def best(fn, number=None):
    """Milliseconds per call, best of three runs."""
    if number is None:
        t = timeit.timeit(fn, number=1)
        if t > 2.0:             # a slow baseline: one more run is enough
            return min(t, timeit.timeit(fn, number=1)) * 1e3
        number = max(1, min(200, int(0.2 / max(t, 1e-6))))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e3


def row(name, n, t_f, t_sparse, t_first, t_dense, t_fd, colors):
    dense = f"{t_dense:10.2f}" if t_dense is not None else f"{'-':>10}"
    fd = f"{t_fd:10.2f}" if t_fd is not None else f"{'-':>10}"
    ratio = f"{t_fd / t_sparse:8.1f}" if t_fd is not None else f"{'-':>8}"
    print(f"{name:<10}{n:>8}{t_f:9.3f}{t_sparse:10.2f}{t_first:10.1f}{dense}{fd}{colors:>7}"
          f"{t_sparse / (colors * t_f):15.2f}{ratio}")


def header(title):
    print(title)
    print(f"{'problem':<10}{'n':>8}{'f':>9}{'sparse':>10}{'first':>10}{'dense':>10}"
          f"{'FD':>10}{'colors':>7}{'sparse/(c*f)':>15}{'FD/sp':>8}")


def jacobians():
    header("Jacobian of a 2-D nonlinear Poisson residual (times in ms)")
    rng = np.random.default_rng(0)
    for k in GRIDS:
        n = k * k
        u = rng.normal(size=n)
        d = wg.sparse_jacfwd(residual)
        start = time.perf_counter()
        j = d(u)
        t_first = (time.perf_counter() - start) * 1e3
        colors = d.plan(u).colors
        pattern = wg.jacobian_sparsity(residual, u)
        t_dense = None
        if n <= DENSE_LIMIT:
            dense = wg.jacfwd(residual)
            assert np.allclose(dense(u), j.toarray(), rtol=1e-13, atol=1e-13)
            t_dense = best(lambda: dense(u))
        t_fd = None
        if approx_derivative is not None:
            fd = approx_derivative(residual, u, method="2-point", sparsity=pattern)
            assert abs(fd - j).max() < 1e-4 * max(1.0, abs(j).max())
            t_fd = best(lambda: approx_derivative(residual, u, method="2-point",
                                                  sparsity=pattern))
        row("poisson2d", n, best(lambda: residual(u)), best(lambda: d(u)), t_first, t_dense,
            t_fd, colors)


def hessians():
    header("Hessian of an arrowhead-over-band function (times in ms)")
    rng = np.random.default_rng(1)
    for n in HESSIAN_SIZES:
        x = rng.normal(size=n)
        h = wg.sparse_hessian(arrow_band)
        start = time.perf_counter()
        hx = h(x)
        t_first = (time.perf_counter() - start) * 1e3
        colors = h.plan(x).colors
        g = wg.grad(arrow_band)
        t_dense = None
        if n <= DENSE_LIMIT:
            dense = wg.hessian(arrow_band)
            assert np.allclose(dense(x), hx.toarray(), rtol=1e-12, atol=1e-12)
            t_dense = best(lambda: dense(x))
        t_fd = None
        if approx_derivative is not None and n <= FD_HESSIAN_LIMIT:
            pattern = wg.hessian_sparsity(arrow_band, x)
            fd = approx_derivative(g, x, method="2-point", sparsity=pattern)
            assert abs(fd - hx).max() < 1e-3 * max(1.0, abs(hx).max())
            t_fd = best(lambda: approx_derivative(g, x, method="2-point", sparsity=pattern))
        row("arrowhead", n, best(lambda: arrow_band(x)), best(lambda: h(x)), t_first,
            t_dense, t_fd, colors)


if __name__ == "__main__":
    jacobians()
    print()
    hessians()
