"""``scipy.stats.multivariate_normal`` and ``scipy.stats.dirichlet`` on
traced values (``CALLS``, source engine): ``logpdf`` and ``pdf``, with
every argument differentiated (the points, the mean and covariance, the
concentrations), frozen forms included.

The multivariate normal goes through the Cholesky factor of the covariance
built from its lower triangle, the part SciPy reads, so a derivative in an
upper entry is 0, as SciPy's value does not depend on it. Like SciPy's,
results are float64 for the normal (float32 promoted) and keep float32 for
the Dirichlet; length-1 axes of a result are squeezed away.

Layer: scipy.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as st

from ..primitives import linalg, special as sp
from ..primitives.arith import add, mul, sub
from ..primitives.transcendental import exp, log
from ..core.primitive import TracerBase
from ..primitives.matrix import cholesky, solve
from ..numpy.arrayargs import numpy_result, refuse
from ..primitives.reduce import reduce_sum
from .stats import as_float64, freezer, frozen_method
from ..primitives.index import concatenate
from ..primitives.shape import expand_dims, reshape, transpose
from ..core.errors import user_location

__all__ = ["CALLS", "NAMES", "RESOLVE"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _squeeze_all(out):
    """SciPy's ``_squeeze_output``: every length-1 axis dropped."""
    shape = tuple(d for d in np.shape(out) if d != 1)
    return out if shape == np.shape(out) else reshape(out, shape)


def _mvn_parameters(mean, cov):
    """The dimension, mean vector and covariance matrix, from SciPy's
    forms: a mean vector or None; cov a scalar, a vector (diagonal) or a
    matrix, of which SciPy reads the lower triangle only."""
    cov = as_float64(cov)
    mean = None if mean is None else as_float64(mean)
    cnd = np.ndim(cov)
    dim = np.shape(mean)[0] if mean is not None and np.ndim(mean) == 1 else \
        (np.shape(cov)[0] if cnd >= 1 else 1)
    if mean is None:
        mean = np.zeros(dim)
    if cnd == 0:
        cov = mul(cov, np.eye(dim))
    elif cnd == 1:
        cov = mul(cov, np.eye(dim))     # the vector's entries on the diagonal
    else:
        # the lower triangle mirrored: the derivative in an upper entry is
        # 0, as SciPy's value does not depend on it
        cov = add(mul(cov, np.tril(np.ones((dim, dim)))),
                  transpose(mul(cov, np.tril(np.ones((dim, dim)), -1))))
    return dim, mean, cov


def _mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    if allow_singular:
        refuse("scipy.stats.multivariate_normal.logpdf", "allow_singular",
               "a singular covariance has no Cholesky factor; pass a positive definite one")
    dim, mean, cov = _mvn_parameters(mean, cov)
    x = as_float64(x)
    xs = np.shape(x)
    # SciPy's _process_quantiles: a scalar is one point, a vector one point
    # (or, in 1 dimension, many)
    if len(xs) == 0:
        x = reshape(x, (1, 1))
    elif len(xs) == 1:
        x = reshape(x, (xs[0], 1) if dim == 1 else (1, xs[0]))
    batch = np.shape(x)[:-1]
    diff = reshape(sub(x, mean), (int(np.prod(batch, dtype=np.int64)), dim))
    chol = cholesky(cov)
    z = solve(chol, transpose(diff))              # (dim, n): L^-1 (x - mean)
    maha = reduce_sum(mul(z, z), axis=0)
    logdet = mul(2.0, reduce_sum(log(linalg.diagonal(chol))))
    out = mul(-0.5, add(add(maha, logdet), dim * 2.0 * _LOG_SQRT_2PI))
    return _squeeze_all(reshape(out, batch))


def mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    return numpy_result(_mvn_logpdf(x, mean, cov, allow_singular))


def mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    return numpy_result(exp(_mvn_logpdf(x, mean, cov, allow_singular)))


def _floating(x):
    """An array operand as a float array of its own precision (SciPy's
    dirichlet keeps float32)."""
    if isinstance(x, TracerBase) or isinstance(x, (float, int)):
        return x
    x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def _dirichlet_logpdf(x, alpha):
    """SciPy's: components along x's first axis, the last one left out
    (1 - the sum of the others) when x has one entry fewer than alpha."""
    alpha, x = _floating(alpha), _floating(x)
    k = np.shape(alpha)[0]
    if np.shape(x)[0] == k - 1:
        last = sub(1.0, reduce_sum(x, axis=0))
        x = concatenate(x, expand_dims(last, 0), axis=0)
    elif np.shape(x)[0] != k:
        raise ValueError(f"{user_location()}: scipy.stats.dirichlet: x must have as many entries "
                         f"as alpha ({k}) or one fewer, got shape {np.shape(x)}")
    a = alpha if np.ndim(x) == 1 else reshape(alpha, (k,) + (1,) * (np.ndim(x) - 1))
    lnb = sub(reduce_sum(sp.gammaln(alpha)), sp.gammaln(reduce_sum(alpha)))
    out = sub(reduce_sum(sp.xlogy(sub(a, 1.0), x), axis=0), lnb)
    return _squeeze_all(out)


def dirichlet_logpdf(x, alpha):
    return numpy_result(_dirichlet_logpdf(x, alpha))


def dirichlet_pdf(x, alpha):
    return numpy_result(exp(_dirichlet_logpdf(x, alpha)))


CALLS = {}
NAMES = {}
for _name, _methods in (("multivariate_normal", {"logpdf": mvn_logpdf, "pdf": mvn_pdf}),
                        ("dirichlet", {"logpdf": dirichlet_logpdf, "pdf": dirichlet_pdf})):
    _dist = getattr(st, _name)
    for _m, _fn in _methods.items():
        CALLS[getattr(_dist, _m)] = _fn
        NAMES[getattr(_dist, _m)] = f"scipy.stats.{_name}.{_m}"
    CALLS[_dist] = freezer(_methods)
    NAMES[_dist] = f"scipy.stats.{_name}"

# SciPy's frozen objects: the unfrozen method's parameters they hold
_FROZEN_PARAMS = {
    "multivariate_normal_frozen": ("multivariate_normal", lambda fr: (fr.mean, fr.cov)),
    "dirichlet_frozen": ("dirichlet", lambda fr: (fr.alpha,)),
}


def RESOLVE(f):
    """The wrapper of a method of SciPy's frozen ``multivariate_normal(mean,
    cov)`` or ``dirichlet(alpha)`` (parameters not traced); None otherwise."""
    owner = getattr(f, "__self__", None)
    known = _FROZEN_PARAMS.get(type(owner).__name__)
    if known is None:
        return None
    name, params = known
    return frozen_method(CALLS.get(getattr(getattr(st, name), getattr(f, "__name__", ""), None)),
                         params(owner), {})
