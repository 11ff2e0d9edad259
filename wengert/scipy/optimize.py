"""``scipy.optimize``'s test functions on traced values: ``rosen``, ``rosen_der``,
``rosen_hess`` and ``rosen_hess_prod`` (Rosenbrock's function, its gradient, Hessian and
Hessian-vector product), as SciPy writes them: values, and derivatives of those values
(``rosen_der``'s derivative is ``rosen_hess``).

SciPy converts its argument with ``np.asarray`` before any rule can see the call, so these
are ``CALLS``: the source engine calls them in place of SciPy's (``engine="auto"`` too);
the trace engine cannot see the call, and its error says so.

Layer: scipy.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as so

from ..core.ir import aval_of
from ..core.primitive import TracerBase
from ..numpy.lists import as_array
from ..primitives import arith, index, linalg, scatter

__all__ = ["CALLS", "NAMES"]


def _floating(x):
    x = x if isinstance(x, TracerBase) else as_array(x) if type(x) in (list, tuple) \
        else np.asarray(x)
    return x if aval_of(x).dtype.kind in "fc" else arith.convert(x, dtype=np.dtype(np.float64))


def rosen(x):
    x = _floating(x)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0,
                  dtype=aval_of(x).dtype)


def rosen_der(x):
    x = _floating(x)
    xm, xm_m1, xm_p1 = x[1:-1], x[:-2], x[2:]
    first = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    middle = 200 * (xm - xm_m1 ** 2) - 400 * (xm_p1 - xm ** 2) * xm - 2 * (1 - xm)
    last = 200 * (x[-1] - x[-2] ** 2)
    return index.concatenate(np.reshape(first, (1,) + tuple(aval_of(x).shape[1:])), middle,
                             np.reshape(last, (1,) + tuple(aval_of(x).shape[1:])))


def rosen_hess(x):
    x = _floating(x)
    h = linalg.diag(-400 * x[:-1], 1) - linalg.diag(400 * x[:-1], -1)
    n = aval_of(x).shape[0]
    diagonal = np.zeros(n, aval_of(x).dtype)
    diagonal = scatter.index_set(diagonal, 1200 * x[0] ** 2 - 400 * x[1] + 2, 0)
    diagonal = scatter.index_set(diagonal, 200.0, -1)
    diagonal = scatter.index_set(diagonal, 202 + 1200 * x[1:-1] ** 2 - 400 * x[2:],
                                 slice(1, -1))
    return h + linalg.diag(diagonal, 0)


def rosen_hess_prod(x, p):
    x = _floating(x)
    x = np.reshape(x, (1,)) if np.ndim(x) == 0 else x
    p = _floating(p)
    first = (1200 * x[0] ** 2 - 400 * x[1] + 2) * p[0] - 400 * x[0] * p[1]
    middle = (-400 * x[:-2] * p[:-2] + (202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]) * p[1:-1]
              - 400 * x[1:-1] * p[2:])
    last = -400 * x[-2] * p[-2] + 200 * p[-1]
    return index.concatenate(np.reshape(first, (1,)), middle, np.reshape(last, (1,)))


CALLS = {so.rosen: rosen, so.rosen_der: rosen_der, so.rosen_hess: rosen_hess,
         so.rosen_hess_prod: rosen_hess_prod}

NAMES = {so.rosen: "scipy.optimize.rosen", so.rosen_der: "scipy.optimize.rosen_der",
         so.rosen_hess: "scipy.optimize.rosen_hess",
         so.rosen_hess_prod: "scipy.optimize.rosen_hess_prod"}
