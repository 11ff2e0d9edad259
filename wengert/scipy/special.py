"""``scipy.special`` on traced values: its ufuncs (``UFUNCS``, both
engines, through ``__array_ufunc__``) and its Python functions
(``CALLS``: ``logsumexp``, ``softmax``, ``log_softmax``, ``polygamma``,
``multigammaln``; the source engine calls the wrapper in their place).

Imported by ``library.load_scipy`` only, so wengert needs SciPy only where a
SciPy function is used. A function is a composition of primitives where that
is accurate (``ndtr`` through ``erfc``, ``log_expit`` through ``logaddexp``,
``xlogy``...); the others are primitives of ``primitives.special``.

Every wrapper takes SciPy's parameters under SciPy's names; a value wengert
does not implement (a traced ``n`` of ``polygamma``...) raises
``NoDerivativeRule`` naming the user's line.

Layer: scipy.
"""
from __future__ import annotations

import math
import operator

import numpy as np
import scipy.special as sc

from ..primitives import arith, ordering, bessel, special as sp, transcendental
from ..numpy import composite
from ..primitives.arith import add, mul, neg, sub
from ..primitives.selection import where
from ..primitives.ordering import equal, greater, greater_equal, less, logical_and, logical_or
from ..primitives.transcendental import log, log1p
from ..numpy.arrayargs import refuse
from ..primitives.reduce import reduce_max, reduce_sum
from ..core.errors import NoDerivativeRule, user_location
from ..core.ir import aval_of

__all__ = ["UFUNCS", "CALLS", "NAMES"]

_SQRT2 = math.sqrt(2.0)


# --- compositions -------------------------------------------------------
def ndtr(x):
    # Phi(x) = erfc(-x / sqrt 2) / 2: accurate in the lower tail, where
    # (1 + erf) / 2 loses every digit
    return mul(0.5, sp.erfc(mul(x, -1.0 / _SQRT2)))


def _ndtri(p):
    return mul(-_SQRT2, sp.erfcinv(mul(2.0, p)))


def _logit(p):
    return sub(log(p), log1p(neg(p)))


def log_expit(x):
    # log(1 / (1 + e^-x)) = -log(e^0 + e^-x), stable both ways
    return neg(transcendental.logaddexp(0.0, neg(x)))


def _entr(x):
    """-x log x for x > 0, 0 at 0, -inf below (SciPy's convention)."""
    pos = greater(x, 0.0)
    value = neg(mul(x, log(where(pos, x, 1.0))))
    return where(less(x, 0.0), -np.inf, value)


def _rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 at x = 0, y >= 0; +inf elsewhere."""
    both = logical_and(greater(x, 0.0), greater(y, 0.0))
    value = mul(x, log(arith.div(where(both, x, 1.0), where(both, y, 1.0))))
    finite = logical_or(both, logical_and(equal(x, 0.0), greater_equal(y, 0.0)))
    return where(finite, value, np.inf)


def _in_loop_dtype(ufunc, fn):
    """``fn`` (a composition standing for ``ufunc``) computing in the dtype
    of the loop SciPy's ufunc picks for the operands: ``xlogy(2.0, x32)``
    is float64 (its first loop), ``rel_entr(x32, 2.0)`` float32. The
    operands are cast to it first, as NumPy does; the loop is found once per
    combination of operand dtypes, on stand-ins."""
    cache = {}

    def wrapper(*inputs):
        avals = [aval_of(x) for x in inputs]
        key = tuple((a.dtype, a.weak) for a in avals)
        dtype = cache.get(key)
        if dtype is None:
            stand_ins = [a.python_type(0) if a.python_type else np.ones(1, a.dtype)
                         for a in avals]
            with np.errstate(all="ignore"):
                dtype = cache[key] = np.asarray(ufunc(*stand_ins)).dtype
        inputs = [x if a.dtype == dtype and not a.weak else arith.convert(x, dtype=dtype)
                  for x, a in zip(inputs, avals)]
        return fn(*inputs)
    wrapper.__name__ = ufunc.__name__
    return wrapper


_COMPOSED = {sc.ndtr: ndtr, sc.ndtri: _ndtri, sc.logit: _logit, sc.log_expit: log_expit,
             sc.xlogy: sp.xlogy, sc.xlog1py: sp.xlog1py, sc.entr: _entr, sc.rel_entr: _rel_entr}

UFUNCS = {
    **{uf: _in_loop_dtype(uf, fn) for uf, fn in _COMPOSED.items()},
    sc.gammaln: sp.gammaln, sc.gamma: sp.gamma, sc.psi: sp.digamma, sc.beta: sp.beta,
    sc.betaln: sp.betaln, sc.erf: transcendental.erf, sc.erfc: sp.erfc, sc.erfinv: sp.erfinv,
    sc.erfcinv: sp.erfcinv, sc.log_ndtr: sp.log_ndtr, sc.expit: sp.expit, sc.i0: bessel.i0,
    sc.i0e: bessel.i0e, sc.i1: bessel.i1, sc.i1e: bessel.i1e, sc.jv: bessel.jv, sc.yv: bessel.yv,
    sc.iv: bessel.iv, sc.ive: bessel.ive, sc.kv: bessel.kv, sc.gammainc: sp.gammainc, sc.gammaincc: sp.gammaincc,
    sc.betainc: sp.betainc, sc.betaincc: sp.betaincc, sc.stdtr: sp.stdtr,
}


# --- logsumexp, softmax, log_softmax --------------------------------------
def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(operator.index(a) % ndim for a in axes)) if ndim else ()


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) along ``axis``, shifted by the maximum (which
    cancels, so the derivative is exact: softmax weights in a, exp(a - out)
    in b).

    Entries with b = 0 count for nothing, as in SciPy, even at a = inf, and
    the shift is the maximum over the others (an excluded a far above them
    would otherwise underflow every term). Their derivative in b,
    exp(a - out), is kept: a is clipped only 700 above the shift there,
    where exp(a - out) overflows anyway."""
    if b is None:
        if not return_sign:
            return composite.logsumexp(a, axis=axis, keepdims=keepdims)
        b = 1.0
        counted = a
    else:
        excluded = equal(b, 0)
        counted = where(excluded, -np.inf, a)    # also broadcasts a against b, as SciPy
    axes = _axes(axis, np.ndim(counted))
    shift = reduce_max(counted, axis=axes, keepdims=True)
    shift = where(ordering.isfinite(shift), shift, 0.0)
    if counted is not a:
        a = where(excluded, ordering.minimum(a, add(shift, 700.0)), a)
    total = reduce_sum(mul(b, transcendental.exp(sub(a, shift))), axis=axes, keepdims=True)
    if return_sign:
        out = add(log(ordering.abs(total)), shift)
        sign = ordering.sign(total)
        return composite.unkeep(out, axes, keepdims), composite.unkeep(sign, axes, keepdims)
    return composite.unkeep(add(log(total), shift), axes, keepdims)


def softmax(x, axis=None):
    return composite.softmax(x, axis=_axes(axis, np.ndim(x)))


def log_softmax(x, axis=None):
    return composite.log_softmax(x, axis=_axes(axis, np.ndim(x)))


# --- polygamma, multigammaln (an integer held fixed) ------------------------
def _fixed_int(value, fname, param):
    """A Python or NumPy integer: the order of a derivative, a dimension."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    refuse(fname, param, f"{param} must be a fixed integer (not an array or a traced value): "
                         "call the function once per value")


def _float64(x):
    """SciPy's Python-level special functions compute in float64."""
    av = aval_of(x)
    return x if av.dtype == np.float64 and not av.weak else arith.convert(x, dtype=np.float64)


def polygamma(n, x):
    n = _fixed_int(n, "scipy.special.polygamma", "n")
    if n < 0:
        raise NoDerivativeRule(f"{user_location()}: scipy.special.polygamma(n, x) with n = {n}: "
                               "n must be 0 or more")
    return sp.polygamma(_float64(x), n=n)


def multigammaln(a, d):
    """log of the multivariate gamma function: d(d-1)/4 log(pi) +
    sum_j gammaln(a - j/2), j = 0..d-1 (SciPy's definition)."""
    d = _fixed_int(d, "scipy.special.multigammaln", "d")
    if d < 1:
        raise ValueError(f"{user_location()}: scipy.special.multigammaln: d must be 1 or more, "
                         f"got {d}")
    a = _float64(a)
    total = d * (d - 1) / 4.0 * math.log(math.pi)
    for j in range(d):
        total = add(total, sp.gammaln(sub(a, j / 2.0)))
    return total


CALLS = {
    sc.logsumexp: logsumexp, sc.softmax: softmax, sc.log_softmax: log_softmax,
    sc.polygamma: polygamma, sc.multigammaln: multigammaln,
}

# ufuncs carry no module: the name a user writes
NAMES = {uf: f"scipy.special.{uf.__name__}" for uf in UFUNCS}
