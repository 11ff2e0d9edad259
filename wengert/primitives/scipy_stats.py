"""``scipy.stats`` on traced values: the log-densities, densities and
distribution functions of the common distributions, as compositions of
primitives (``CALLS``: the source engine calls these wrappers in place of
the bound methods ``scipy.stats.norm.logpdf``...; the trace engine never
sees them, SciPy having converted the traced value first).

Each continuous method takes SciPy's ``(x, *args, **kwds)``, bound as SciPy
binds it: the distribution's shape parameters (``df``, ``a``, ``s``...),
then ``loc=0`` and ``scale=1``; discrete ones ``(k, *shapes, loc=0)``.
Every parameter is differentiated (``x``, ``loc``, ``scale``, the shapes),
except where a derivative needs one wengert does not have: the shape
parameters of the t, gamma and beta cdf/sf (incomplete beta and gamma
functions in their parameters) raise ``NoDerivativeRule`` when a tangent
reaches them. Like SciPy, every result is float64 (float32 operands are
promoted first), -inf (log) or 0 outside the support.

A frozen distribution with traced parameters, ``norm(loc, scale)``, is a
``Frozen`` object whose methods call the same wrappers; SciPy's own frozen
object (parameters not traced) has its methods resolved to them
(``RESOLVE``). ``multivariate_normal`` and ``dirichlet`` are in
``scipy_stats_multivariate``.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
from scipy import stats as st
from scipy.stats._distn_infrastructure import rv_frozen

from . import arith, ordering, special_prims as sp, transcendental
from .arith import add, div, mul, neg, sub, where
from .ordering import (abs, equal, greater, greater_equal, less, less_equal, logical_and,
                        maximum, minimum)
from .transcendental import exp, expm1, log, log1p
from .core import TracerBase
from .arrayargs import numpy_result
from .scipy_special import _log_expit, _ndtr
from ..errors import user_location
from ..ir import aval_of

__all__ = ["CALLS", "NAMES", "RESOLVE", "Frozen", "freezer", "frozen_method"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)
_LOG2 = math.log(2.0)


def _f64(x):
    """SciPy computes its distributions in float64 (float32 is promoted)."""
    if isinstance(x, TracerBase):
        av = aval_of(x)
        return arith.convert(x, dtype=np.float64) if av.dtype != np.float64 or av.weak else x
    if isinstance(x, (bool, int, float)):
        return float(x)
    return np.asarray(x, np.float64)


# --- the standardised distributions: z = (x - loc) / scale -------------------
def _norm_logpdf(z):
    return sub(mul(-0.5, mul(z, z)), _LOG_SQRT_2PI)


def _norm_parts():
    return dict(logpdf=_norm_logpdf, cdf=_ndtr, sf=lambda z: _ndtr(neg(z)),
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
    return dict(logpdf=lambda z: add(_log_expit(z), _log_expit(neg(z))),
                cdf=lambda z: sp.expit(z), sf=lambda z: sp.expit(neg(z)),
                logcdf=_log_expit, logsf=lambda z: _log_expit(neg(z)))


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
        return where(pos, _ndtr(v), 0.0)

    def sf(z, s):
        pos, v = u(z, s, -1.0)
        return where(pos, _ndtr(v), 1.0)

    def logcdf(z, s):
        pos, v = u(z, s, 1.0)
        return where(pos, sp.log_ndtr(v), -np.inf)

    def logsf(z, s):
        pos, v = u(z, s, -1.0)
        return where(pos, sp.log_ndtr(v), 0.0)
    return dict(logpdf=logpdf, cdf=cdf, sf=sf, logcdf=logcdf, logsf=logsf)


def _log_probability(p):
    """log p, -inf where p = 0 (outside the support) with a zero derivative
    there rather than 0 / 0."""
    some = greater(p, 0.0)
    return where(some, log(where(some, p, 1.0)), -np.inf)


# --- binding SciPy's (x, *args, **kwds) ----------------------------------------
_CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")


def _signature(first, shapes, discrete):
    params = [inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(s, inspect.Parameter.POSITIONAL_OR_KEYWORD) for s in shapes]
    params.append(inspect.Parameter("loc", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0))
    if not discrete:
        params.append(inspect.Parameter("scale", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=1))
    return inspect.Signature(params)


def _bind(fname, sig, x, args, kwds):
    try:
        bound = sig.bind(x, *args, **kwds)
    except TypeError as e:
        raise TypeError(f"{user_location()}: {fname}: {e}") from None
    bound.apply_defaults()
    return bound.arguments


def _standardised(x, loc, scale):
    """(x - loc) / scale, leaving out the defaults' no-op operations."""
    z = x if _is(loc, 0) else sub(x, loc)
    return z if _is(scale, 1) else div(z, scale)


def _is(value, number):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == number


def _nan_unless(conditions, out):
    """``out`` where every condition holds (valid parameters), nan
    elsewhere, as SciPy gives; no operation where all are Python's True."""
    conditions = [c for c in conditions if c is not True and c is not np.True_]
    if not conditions:
        return out
    ok = conditions[0]
    for c in conditions[1:]:
        ok = logical_and(ok, c)
    return where(ok, out, np.nan)


def _positive_params(*params):
    return [greater(p, 0.0) for p in params]


def _continuous_method(dist_name, shapes, parts, method):
    fname = f"scipy.stats.{dist_name}.{method}"
    sig = _signature("x", shapes, discrete=False)
    logpdf, cdf, sf = parts["logpdf"], parts["cdf"], parts["sf"]
    logcdf = parts.get("logcdf") or (lambda z, *s: _log_probability(cdf(z, *s)))
    logsf = parts.get("logsf") or (lambda z, *s: _log_probability(sf(z, *s)))
    std = {"logpdf": logpdf, "pdf": logpdf, "cdf": cdf, "sf": sf, "logcdf": logcdf,
           "logsf": logsf}[method]
    valid = parts.get("valid", _positive_params)

    def wrapper(x, *args, **kwds):
        a = _bind(fname, sig, x, args, kwds)
        loc, scale = _f64(a["loc"]), _f64(a["scale"])
        z = _standardised(_f64(a["x"]), loc, scale)
        params = [_f64(a[s]) for s in shapes]
        out = std(z, *params)
        if method in ("logpdf", "pdf") and not _is(scale, 1):
            out = sub(out, log(scale))
        if method == "pdf":
            out = exp(out)
        checks = [] if _is(scale, 1) else [greater(scale, 0.0)]
        return numpy_result(_nan_unless(checks + valid(*params), out))
    wrapper.__name__ = f"{dist_name}_{method}"
    wrapper.__qualname__ = wrapper.__name__
    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD),
         inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
         inspect.Parameter("kwds", inspect.Parameter.VAR_KEYWORD)])
    return wrapper


_CONTINUOUS = {
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
_DISCRETE = {
    "poisson": (("mu",), _poisson_logpmf, lambda k, mu: _in_support(k),
                lambda mu: [greater_equal(mu, 0.0)]),
    "binom": (("n", "p"), _binom_logpmf, lambda k, n, p: _in_support(k, n), _binom_valid),
    "nbinom": (("n", "p"), _nbinom_logpmf, lambda k, n, p: _in_support(k), _nbinom_valid),
}


def _discrete_method(dist_name, shapes, logpmf, support, valid, method):
    fname = f"scipy.stats.{dist_name}.{method}"
    sig = _signature("k", shapes, discrete=True)

    def wrapper(k, *args, **kwds):
        a = _bind(fname, sig, k, args, kwds)
        k = _f64(a["k"])
        if not _is(a["loc"], 0):
            k = sub(k, _f64(a["loc"]))
        params = [_f64(a[s]) for s in shapes]
        ok = support(k, *params)
        # a point outside the support is evaluated at 0, then masked
        out = where(ok, logpmf(where(ok, k, 0.0), *params), -np.inf)
        return numpy_result(_nan_unless(valid(*params), exp(out) if method == "pmf" else out))
    wrapper.__name__ = f"{dist_name}_{method}"
    wrapper.__qualname__ = wrapper.__name__
    return wrapper


# --- frozen distributions (traced parameters) -----------------------------------------
class Frozen:
    """``scipy.stats.<dist>(*params)`` with traced parameters: each method
    calls the unfrozen wrapper with them, as SciPy's frozen object does."""

    def __init__(self, methods, args, kwds):
        self._methods, self._args, self._kwds = methods, args, kwds

    def __getattr__(self, name):
        methods = self.__dict__.get("_methods", {})
        if name not in methods:
            raise AttributeError(f"{user_location()}: a frozen distribution with traced "
                                 f"parameters has no method {name!r} in wengert; it has "
                                 f"{sorted(methods)}")
        fn = methods[name]
        return lambda x, *a, **k: fn(x, *self._args, *a, **{**self._kwds, **k})


def freezer(methods):
    def freeze(*args, **kwds):
        return Frozen(methods, args, kwds)
    return freeze


CALLS = {}
NAMES = {}
for _name, (_shapes, _parts) in _CONTINUOUS.items():
    _dist = getattr(st, _name)
    _methods = {}
    for _m in _CONTINUOUS_METHODS:
        _methods[_m] = _continuous_method(_name, _shapes, _parts, _m)
        CALLS[getattr(_dist, _m)] = _methods[_m]
        NAMES[getattr(_dist, _m)] = f"scipy.stats.{_name}.{_m}"
    CALLS[_dist] = freezer(_methods)
    NAMES[_dist] = f"scipy.stats.{_name}"

for _name, (_shapes, _logpmf, _support, _valid) in _DISCRETE.items():
    _dist = getattr(st, _name)
    _methods = {}
    for _m in ("logpmf", "pmf"):
        _methods[_m] = _discrete_method(_name, _shapes, _logpmf, _support, _valid, _m)
        CALLS[getattr(_dist, _m)] = _methods[_m]
        NAMES[getattr(_dist, _m)] = f"scipy.stats.{_name}.{_m}"
    CALLS[_dist] = freezer(_methods)
    NAMES[_dist] = f"scipy.stats.{_name}"


# --- SciPy's own frozen objects (parameters not traced, x traced) --------------------
def RESOLVE(f):
    """The wrapper of a method of SciPy's frozen distribution
    (``norm(0.5, 2.0).logpdf``): the unfrozen method's, given the frozen
    parameters. None for anything else."""
    owner = getattr(f, "__self__", None)
    method = getattr(f, "__name__", None)
    if owner is None or method is None:
        return None
    if not isinstance(owner, rv_frozen):
        return None
    dist = getattr(st, getattr(owner.dist, "name", ""), None)
    return frozen_method(CALLS.get(getattr(dist, method, None)), owner.args, owner.kwds)


def frozen_method(rule, args, kwds):
    """``rule`` with the frozen parameters ``args``, ``kwds`` (None for None)."""
    if rule is None:
        return None

    def method(x, *a, **k):
        return rule(x, *args, *a, **{**kwds, **k})
    return method
