"""Programs for the sparse-derivative tests (``tests/api/test_sparse.py``): NumPy functions
whose Jacobians or Hessians are sparse, with loops (trip counts known and not), branches on
values, reductions, moves, constant matrices with zeros. Defined in a file so the source
engine reads them (control flow kept)."""
from __future__ import annotations

import numpy as np

import wengert as wg

BAND = np.diag(np.full(6, 2.0)) + np.diag(np.full(5, -1.0), 1) + np.diag(np.full(5, 0.5), -1)


def stencil(x):
    return x[2:] - 2.0 * x[1:-1] + x[:-2] + x[1:-1] ** 3


def laplace2d(x):
    u = x.reshape(4, 5)
    p = np.pad(u, 1)
    r = p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4.0 * u + u ** 2
    return r.reshape(-1)


def products(x):
    return np.concatenate([x[1:] * x[:-1], np.sin(x[:2]) * np.exp(x[-1:])])


def banded_matmul(x):
    band = np.diag(np.full(6, 2.0)) + np.diag(np.full(5, -1.0), 1) + np.diag(np.full(5, 0.5), -1)
    return band @ np.tanh(x)


def global_matmul(x):
    return BAND @ np.tanh(x)


def cumulative(x):
    return np.cumsum(x[::-1] ** 2) + np.maximum(x, 0.1)


def unrolled_loop(x):
    y = x
    for _ in range(3):
        y = y + 0.1 * np.concatenate([y[1:], y[:1] * 0.0]) * y
    return y


def data_while(x):
    y = x
    while np.sum(y * y) > 1.0:
        y = 0.5 * y + 0.1 * np.concatenate([y[:1], y[:-1]])
    return y


def branches(x):
    if x[0] > 0:
        y = x ** 2
    else:
        y = np.concatenate([x[1:], x[:1]])
    return y * x


def fori(x):
    def body(i, y):
        return y + 0.1 * np.sin(np.concatenate([y[1:], y[:1]]))
    return wg.fori_loop(4, body, x)


def checkpointed_loop(x):
    y = x
    for _ in wg.checkpointed(range(4)):
        y = y + 0.1 * np.sin(np.concatenate([y[1:], y[:1]])) * y
    return y


def _step(y):
    return y[1:] * y[:-1]


def checkpointed_call(x):
    return wg.checkpoint(_step)(np.exp(x)) + x[1:]


def where_abs(x):
    return np.where(x > 0, x ** 2, -x) + np.abs(x[::-1])


def two_args(x, y):
    return x[:3] * y[1:] + np.sum(y) * x[3:]


# name -> (function, an argument)
JACOBIANS = {
    "stencil": (stencil, (8,)),
    "laplace2d": (laplace2d, (20,)),
    "products": (products, (6,)),
    "banded_matmul": (banded_matmul, (6,)),
    "global_matmul": (global_matmul, (6,)),
    "cumulative": (cumulative, (5,)),
    "unrolled_loop": (unrolled_loop, (6,)),
    "data_while": (data_while, (6,)),
    "branches": (branches, (5,)),
    "fori": (fori, (6,)),
    "where_abs": (where_abs, (5,)),
    "checkpointed_loop": (checkpointed_loop, (6,)),
    "checkpointed_call": (checkpointed_call, (6,)),
}


def chain(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def arrowhead(x):
    return np.sum(x[0] * x[1:] ** 2) + np.sum(np.cos(x))


def banded_quadratic(x):
    return 0.5 * x @ (BAND + BAND.T) @ x + np.sum(x ** 4)


def loop_energy(x):
    e = 0.0
    for k in range(len(x) - 2):
        e = e + x[k] * x[k + 2]
    return e + np.sum(np.exp(x))


def branch_energy(x):
    if np.sum(x) > 0:
        return np.sum(x[1:] * x[:-1])
    return np.sum(x ** 3)


def grid_energy(x):
    u = x.reshape(3, 4)
    return np.sum((u[1:] - u[:-1]) ** 2) + np.sum((u[:, 1:] - u[:, :-1]) ** 4) + np.sum(u ** 3)


HESSIANS = {
    "chain": (chain, (7,)),
    "arrowhead": (arrowhead, (7,)),
    "banded_quadratic": (banded_quadratic, (6,)),
    "loop_energy": (loop_energy, (7,)),
    "branch_energy": (branch_energy, (6,)),
    "grid_energy": (grid_energy, (12,)),
}
