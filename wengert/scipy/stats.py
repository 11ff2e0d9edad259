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
``scipy.multivariate``; the distributions themselves, as functions of
primitives in a standardised ``z`` (or ``k``), are in ``scipy.densities``:
this module binds them to SciPy's call conventions and fills the tables.

Layer: scipy.
"""
from __future__ import annotations

import inspect

import numpy as np
from scipy import stats as st
from scipy.stats._distn_infrastructure import rv_frozen

from ..primitives import arith
from ..primitives.arith import div, sub
from ..primitives.selection import where
from ..primitives.ordering import greater, logical_and
from ..primitives.transcendental import exp, log
from ..core.primitive import TracerBase
from ..numpy.arrayargs import numpy_result
from .densities import CONTINUOUS, DISCRETE, log_probability
from ..core.errors import user_location
from ..core.ir import aval_of

__all__ = ["CALLS", "NAMES", "RESOLVE", "Frozen", "freezer", "frozen_method"]


def as_float64(x):
    """SciPy computes its distributions in float64 (float32 is promoted)."""
    if isinstance(x, TracerBase):
        av = aval_of(x)
        return arith.convert(x, dtype=np.float64) if av.dtype != np.float64 or av.weak else x
    if isinstance(x, (bool, int, float)):
        return float(x)
    return np.asarray(x, np.float64)


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
    logcdf = parts.get("logcdf") or (lambda z, *s: log_probability(cdf(z, *s)))
    logsf = parts.get("logsf") or (lambda z, *s: log_probability(sf(z, *s)))
    std = {"logpdf": logpdf, "pdf": logpdf, "cdf": cdf, "sf": sf, "logcdf": logcdf,
           "logsf": logsf}[method]
    valid = parts.get("valid", _positive_params)

    def wrapper(x, *args, **kwds):
        a = _bind(fname, sig, x, args, kwds)
        loc, scale = as_float64(a["loc"]), as_float64(a["scale"])
        z = _standardised(as_float64(a["x"]), loc, scale)
        params = [as_float64(a[s]) for s in shapes]
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


def _discrete_method(dist_name, shapes, logpmf, support, valid, method):
    fname = f"scipy.stats.{dist_name}.{method}"
    sig = _signature("k", shapes, discrete=True)

    def wrapper(k, *args, **kwds):
        a = _bind(fname, sig, k, args, kwds)
        k = as_float64(a["k"])
        if not _is(a["loc"], 0):
            k = sub(k, as_float64(a["loc"]))
        params = [as_float64(a[s]) for s in shapes]
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
for _name, (_shapes, _parts) in CONTINUOUS.items():
    _dist = getattr(st, _name)
    _methods = {}
    for _m in _CONTINUOUS_METHODS:
        _methods[_m] = _continuous_method(_name, _shapes, _parts, _m)
        CALLS[getattr(_dist, _m)] = _methods[_m]
        NAMES[getattr(_dist, _m)] = f"scipy.stats.{_name}.{_m}"
    CALLS[_dist] = freezer(_methods)
    NAMES[_dist] = f"scipy.stats.{_name}"

for _name, (_shapes, _logpmf, _support, _valid) in DISCRETE.items():
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
