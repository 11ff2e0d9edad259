"""The distributions of ``scipy.stats`` as functions of primitives, before any
binding to SciPy's call conventions: each continuous distribution standardised
(``z = (x - loc) / scale``, its shape parameters after ``z``), each discrete one
as its log-pmf in ``k``, with the support and the valid parameters.

``CONTINUOUS``: name -> (shape parameter names, parts), the parts a dict of
``logpdf``, ``cdf``, ``sf`` and, where a direct formula is more accurate than
``log(cdf)``, ``logcdf``/``logsf`` (``log_probability`` makes the others),
optionally ``valid`` (the conditions on the shape parameters; all positive
by default). ``DISCRETE``: name -> (shape parameter names, logpmf, support,
valid). Every function is written with primitive wrappers, so it differentiates
in every mode; a function evaluated outside its support is evaluated at a point
inside and masked, so no inf or nan reaches a derivative through the branch not
taken. ``scipy.stats`` binds them to SciPy's ``(x, *args, **kwds)``.

Layer: scipy.
"""
from __future__ import annotations

import math

import numpy as np

from ..primitives import ordering, special as sp, transcendental
from ..primitives.arith import add, div, mul, neg, sub
from ..primitives.selection import where
from ..primitives.ordering import (
    abs, equal, greater, greater_equal, less, less_equal, logical_and, maximum, minimum)
from ..primitives.transcendental import exp, expm1, log, log1p
from .special import log_expit, ndtr

__all__ = ["CONTINUOUS", "DISCRETE", "log_probability"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)
_LOG2 = math.log(2.0)


# --- the standardised distributions: z = (x - loc) / scale -------------------
def _norm_logpdf(z):
    return sub(mul(-0.5, mul(z, z)), _LOG_SQRT_2PI)


def _norm_parts():
    return dict(logpdf=_norm_logpdf, cdf=ndtr, sf=lambda z: ndtr(neg(z)),
                logcdf=sp.log_ndtr, logsf=lambda z: sp.log_ndtr(neg(z)))


def _t_parts():
    return dict(logpdf=lambda z, df: sp.t_logpdf(df, z), cdf=lambda z, df: sp.stdtr(df, z),
                sf=lambda z, df: sp.stdtr(df, neg(z)))


def _positive(z):
    """Where z > 0, and z with 1 elsewhere: a density outside its support is
    computed at a point inside, then masked, so no inf or nan reaches the
    derivative through the branch not taken."""
    pos = greater(z, 0.0)
    return pos, where(pos, z, 1.0)


def _edge(p):
    """(p - 1) log 0 at an edge of the support, as a constant: -inf, 0 (p = 1)
    or inf; computed apart, so no infinite slope of the log reaches a
    derivative."""
    return where(equal(p, 1.0), 0.0, where(greater(p, 1.0), -np.inf, np.inf))


def _gamma_logpdf(z, a):
    pos, zs = _positive(z)
    value = sub(sub(sp.xlogy(sub(a, 1.0), zs), zs), sp.gammaln(a))
    at_zero = sub(_edge(a), sp.gammaln(a))
    return where(pos, value, where(equal(z, 0.0), at_zero, -np.inf))


def _below_above(z, inside_fn, below, above=None, lower=0.0, upper=None):
    """``inside_fn(z)`` strictly inside (lower, upper), the constants
    ``below``/``above`` outside: the function is evaluated at a point
    inside there, so its slope (infinite at an edge for a < 1) is never
    multiplied by the zero tangent of the branch not taken."""
    inside = greater(z, lower) if upper is None else logical_and(greater(z, lower),
                                                                 less(z, upper))
    zs = where(inside, z, lower + 1.0 if upper is None else 0.5 * (lower + upper))
    out = where(inside, inside_fn(zs), below)
    return out if upper is None else where(greater_equal(z, upper), above, out)


def _gamma_parts():
    return dict(logpdf=_gamma_logpdf,
                cdf=lambda z, a: _below_above(z, lambda zs: sp.gammainc(a, zs), 0.0),
                sf=lambda z, a: _below_above(z, lambda zs: sp.gammaincc(a, zs), 1.0))


def _beta_logpdf(z, a, b):
    inside = logical_and(greater(z, 0.0), less(z, 1.0))
    zs = where(inside, z, 0.5)
    value = sub(add(sp.xlogy(sub(a, 1.0), zs), sp.xlog1py(sub(b, 1.0), neg(zs))),
                sp.betaln(a, b))
    edges = where(equal(z, 0.0), _edge(a), where(equal(z, 1.0), _edge(b), -np.inf))
    return where(inside, value, sub(edges, sp.betaln(a, b)))


def _beta_parts():
    return dict(logpdf=_beta_logpdf,
                cdf=lambda z, a, b: _below_above(z, lambda zs: sp.betainc(a, b, zs), 0.0, 1.0,
                                                 upper=1.0),
                sf=lambda z, a, b: _below_above(z, lambda zs: sp.betaincc(a, b, zs), 1.0, 0.0,
                                                upper=1.0))


def _expon_parts():
    def logpdf(z):
        return where(greater_equal(z, 0.0), neg(z), -np.inf)

    def cdf(z):
        return neg(expm1(neg(maximum(z, 0.0))))

    def logcdf(z):
        pos, zs = _positive(z)
        return where(pos, log(neg(expm1(neg(zs)))), -np.inf)
    return dict(logpdf=logpdf, cdf=cdf, sf=lambda z: exp(neg(maximum(z, 0.0))), logcdf=logcdf,
                logsf=lambda z: neg(maximum(z, 0.0)))


def _laplace_cdf(z):
    # exp of the clamped halves: neither branch overflows, so no inf meets
    # the zero cotangent of the branch not taken
    low, high = minimum(z, 0.0), maximum(z, 0.0)
    return where(less(z, 0.0), mul(0.5, exp(low)), sub(1.0, mul(0.5, exp(neg(high)))))


def _laplace_logcdf(z):
    low, high = minimum(z, 0.0), maximum(z, 0.0)
    return where(less(z, 0.0), sub(low, _LOG2), log1p(mul(-0.5, exp(neg(high)))))


def _laplace_parts():
    return dict(logpdf=lambda z: sub(neg(abs(z)), _LOG2), cdf=_laplace_cdf,
                sf=lambda z: _laplace_cdf(neg(z)), logcdf=_laplace_logcdf,
                logsf=lambda z: _laplace_logcdf(neg(z)))


def _cauchy_parts():
    return dict(logpdf=lambda z: sub(neg(log1p(mul(z, z))), _LOG_PI),
                cdf=lambda z: add(0.5, div(transcendental.arctan(z), math.pi)),
                sf=lambda z: sub(0.5, div(transcendental.arctan(z), math.pi)))


def _logistic_parts():
    return dict(logpdf=lambda z: add(log_expit(z), log_expit(neg(z))),
                cdf=lambda z: sp.expit(z), sf=lambda z: sp.expit(neg(z)),
                logcdf=log_expit, logsf=lambda z: log_expit(neg(z)))


def _lognorm_parts():
    def logpdf(z, s):
        pos, zs = _positive(z)
        lz = log(zs)
        value = sub(sub(sub(neg(log(s)), lz), _LOG_SQRT_2PI), div(mul(lz, lz), mul(2.0, mul(s, s))))
        return where(pos, value, -np.inf)

    def u(z, s, sign):
        pos, zs = _positive(z)
        return pos, mul(sign, div(log(zs), s))

    def cdf(z, s):
        pos, v = u(z, s, 1.0)
        return where(pos, ndtr(v), 0.0)

    def sf(z, s):
        pos, v = u(z, s, -1.0)
        return where(pos, ndtr(v), 1.0)

    def logcdf(z, s):
        pos, v = u(z, s, 1.0)
        return where(pos, sp.log_ndtr(v), -np.inf)

    def logsf(z, s):
        pos, v = u(z, s, -1.0)
        return where(pos, sp.log_ndtr(v), 0.0)
    return dict(logpdf=logpdf, cdf=cdf, sf=sf, logcdf=logcdf, logsf=logsf)


def log_probability(p):
    """log p, -inf where p = 0 (outside the support) with a zero derivative
    there rather than 0 / 0."""
    some = greater(p, 0.0)
    return where(some, log(where(some, p, 1.0)), -np.inf)


CONTINUOUS = {
    "norm": ((), _norm_parts()),
    "t": (("df",), _t_parts()),
    "gamma": (("a",), _gamma_parts()),
    "beta": (("a", "b"), _beta_parts()),
    "expon": ((), _expon_parts()),
    "laplace": ((), _laplace_parts()),
    "cauchy": ((), _cauchy_parts()),
    "logistic": ((), _logistic_parts()),
    "lognorm": (("s",), _lognorm_parts()),
}


# --- discrete: poisson, binom, nbinom (logpmf, pmf) --------------------------------
def _poisson_logpmf(k, mu):
    return sub(sub(sp.xlogy(k, mu), sp.gammaln(add(k, 1.0))), mu)


def _binom_logpmf(k, n, p):
    comb = sub(sp.gammaln(add(n, 1.0)), add(sp.gammaln(add(k, 1.0)),
                                            sp.gammaln(add(sub(n, k), 1.0))))
    return add(comb, add(sp.xlogy(k, p), sp.xlog1py(sub(n, k), neg(p))))


def _nbinom_logpmf(k, n, p):
    coeff = sub(sub(sp.gammaln(add(n, k)), sp.gammaln(add(k, 1.0))), sp.gammaln(n))
    return add(coeff, add(mul(n, log(p)), sp.xlog1py(k, neg(p))))


def _in_support(k, upper=None):
    """Integers from 0 (to ``upper``): a pmf is 0 elsewhere."""
    ok = logical_and(greater_equal(k, 0.0), equal(k, ordering.floor(k)))
    return ok if upper is None else logical_and(ok, less_equal(k, upper))


def _binom_valid(n, p):
    return [greater_equal(n, 0.0), equal(n, ordering.floor(n)), greater_equal(p, 0.0),
            less_equal(p, 1.0)]


def _nbinom_valid(n, p):
    return [greater(n, 0.0), greater(p, 0.0), less_equal(p, 1.0)]


# name: (shape parameters, logpmf, support in k, valid parameters)
DISCRETE = {
    "poisson": (("mu",), _poisson_logpmf, lambda k, mu: _in_support(k),
                lambda mu: [greater_equal(mu, 0.0)]),
    "binom": (("n", "p"), _binom_logpmf, lambda k, n, p: _in_support(k, n), _binom_valid),
    "nbinom": (("n", "p"), _nbinom_logpmf, lambda k, n, p: _in_support(k), _nbinom_valid),
}
