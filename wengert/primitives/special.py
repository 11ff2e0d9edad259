"""Special-function primitives: the elementwise functions of ``scipy.special``
that no composition of NumPy primitives computes accurately (log-gamma and
its derivatives, the inverse error functions, the regularized incomplete
gamma and beta functions; the Bessel functions, made with the same helpers,
are in ``primitives.bessel``).

Contract: registered with every other primitive, so the registry is fixed
at import; their impls call SciPy, imported the first time one runs, so
wengert itself imports without SciPy (only ``scipy.special`` and
``scipy.stats``, loaded with SciPy, make these primitives). Each impl keeps
SciPy's dtype (float32 stays float32).

jvp rules are written with wrappers of primitives that have rules of their
own, so every order follows: gammaln -> digamma = polygamma[n=0] ->
polygamma[n=1] -> ... Derivatives in the order ``v`` of a Bessel function, in the
parameters of an incomplete gamma/beta function or in Student's ``df`` of
``stdtr`` are not implemented: a tangent there raises ``NoDerivativeRule``,
never a wrong value.

Layer: primitives.
"""
from __future__ import annotations

import importlib
import math

import numpy as np

from .arith import add, cast_float, div, mul, neg, sub
from .selection import where
from .ordering import equal, logical_and
from .transcendental import exp, log, log1p
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import wrapper_of
from ..core.shapes import broadcast_shapes
from ..core.pass_rules import ScipyCall, scipy_module
from ..core.rules import EmitRule
from ..core.ir import Aval, aval_of
from ..core.errors import NoDerivativeRule, user_location

__all__ = ["gammaln", "gamma", "polygamma", "digamma", "beta", "betaln", "erfc", "erfinv",
           "erfcinv", "log_ndtr", "expit", "gammainc", "gammaincc", "betainc", "betaincc", "stdtr",
           "xlogy", "xlog1py"]

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_special = {}


def scipy_special():
    """``scipy.special``, imported on first use (SciPy is optional)."""
    mod = _special.get("mod")
    if mod is None:
        mod = _special["mod"] = importlib.import_module("scipy.special")
    return mod


def _scipy_impl(name):
    """The impl calling ``scipy.special.<name>`` (a ufunc: dtype kept)."""
    def impl(*args):
        return getattr(scipy_special(), name)(*args)
    impl.__name__ = f"{name}_impl"
    return impl


def _loop_aval(name, impl):
    """Shape rule: broadcast shapes; dtype as the impl resolves it, asked on
    empty stand-ins of the operands (memoised). A SciPy ufunc picks the
    first of its loops the operands cast to, so ``gammainc(2.0, x32)`` is
    float64 where ``betainc(2.0, 3.0, x32)`` is float32: only asking gives it."""
    cache = {}

    def abstract_eval(*avals, **params):
        shape = broadcast_shapes(*(a.shape for a in avals), name=name)
        key = (tuple((a.dtype, a.weak) for a in avals), tuple(sorted(params.items())))
        dtype = cache.get(key)
        if dtype is None:
            stand_ins = [a.python_type(0) if a.python_type else np.ones(1, a.dtype)
                         for a in avals]
            with np.errstate(all="ignore"):
                dtype = cache[key] = np.asarray(impl(*stand_ins, **params)).dtype
        return Aval(shape, dtype)
    abstract_eval.__name__ = f"{name}_abstract_eval"
    abstract_eval.elementwise = True    # its rows' default ``sparsity`` is ``ELEMENTWISE``
    return abstract_eval


def _in_out_dtype(rule):
    """``rule`` with its tangent cast to the output's dtype: a loop that
    computes float32 operands in float64 (``gammainc(2.0, x32)``) has a
    float64 output, and its tangent must be float64 too."""
    def jvp(primals, tangents, **params):
        out, out_dot = rule(primals, tangents, **params)
        return out, out_dot if isinstance(out_dot, Zero) else cast_float(out_dot, aval_of(out))
    jvp.__name__ = rule.__name__
    return jvp


def special_row(name, nargs, jvp, impl=None, emit=None):
    """The row of ``scipy.special.<name>`` (or of ``impl``, written by ``emit``), and its
    wrapper; code calls SciPy's function by name where the impl is just that call."""
    if impl is None:
        emit, impl = ScipyCall(f"special.{name}"), _scipy_impl(name)
    prim = register(Primitive(name, nargs=nargs, impl=impl, jvp=_in_out_dtype(jvp),
                              transpose=NOT_LINEAR, abstract_eval=_loop_aval(name, impl),
                              emit=emit, batch=BROADCASTING))
    return prim, wrapper_of(prim)


def refuse_tangent(tangent, what):
    """A derivative wengert does not have: refuse it, never drop it."""
    if not isinstance(tangent, Zero):
        raise NoDerivativeRule(f"{user_location()}: {what} is not implemented in wengert; hold "
                               "it fixed (a constant, or a value not differentiated)")


def _sum_terms(*terms):
    """The sum of the terms that are not None (a tangent from each operand)."""
    terms = [t for t in terms if t is not None]
    out = terms[0]
    for t in terms[1:]:
        out = add(out, t)
    return out


def _times(t_dot, weight):
    """``t_dot * weight()``: None for a symbolic zero tangent (the weight is
    only formed where a tangent needs it)."""
    return None if isinstance(t_dot, Zero) else mul(t_dot, weight())


# --- xlogy, xlog1py (plain functions over primitives) ------------------
def xlogy(x, y):
    """``x log(y)``, 0 where x = 0 even at y = 0 (its derivative in y there
    is x / y = 0). ``y`` is replaced by 1 only where both are 0, so the
    derivative in x is log(y) wherever that is finite."""
    safe = where(logical_and(equal(x, 0), equal(y, 0)), 1.0, y)
    return mul(x, log(safe))


def xlog1py(x, y):
    """``x log1p(y)``, 0 where x = 0 even at y = -1."""
    safe = where(logical_and(equal(x, 0), equal(y, -1)), 0.0, y)
    return mul(x, log1p(safe))


# --- polygamma (digamma is n = 0) ----------------------------------------
def polygamma_impl(x, n):
    sc = scipy_special()
    if n == 0:
        return sc.psi(x)
    out = np.asarray(sc.polygamma(n, x))
    dtype = np.result_type(x) if np.result_type(x).kind == "f" else np.dtype(np.float64)
    return out.astype(dtype, copy=False)[()]


class PolygammaEmit(EmitRule):
    """``scipy.special.psi(x)`` for n = 0, else ``scipy.special.polygamma(n,
    x)``, cast back to a float32 operand's dtype as the impl does."""

    def expression(self, code, eqn, ins, py):
        if set(eqn.params) != {"n"} or type(eqn.params["n"]) is not int:
            return None
        n, scipy = eqn.params["n"], scipy_module(code)
        if n == 0:
            return f"{scipy}.special.psi({ins[0]})"
        dtype = eqn.outputs[0].aval.dtype
        cast = "" if dtype == np.float64 else f".astype({code.dtype(dtype)})"
        return f"{scipy}.special.polygamma({n}, {ins[0]}){cast}"


def polygamma_jvp(primals, tangents, n):
    x, = primals
    return polygamma(x, n=n), mul(tangents[0], polygamma(x, n=n + 1))


polygamma_p, polygamma = special_row("polygamma", 1, polygamma_jvp, impl=polygamma_impl,
                                       emit=PolygammaEmit())


def digamma(x):
    return polygamma(x, n=0)


# --- gammaln, gamma --------------------------------------------------------
def gammaln_jvp(primals, tangents):
    x, = primals
    return gammaln(x), mul(tangents[0], digamma(x))


gammaln_p, gammaln = special_row("gammaln", 1, gammaln_jvp)


def gamma_jvp(primals, tangents):
    x, = primals
    out = gamma(x)
    return out, mul(tangents[0], mul(out, digamma(x)))


gamma_p, gamma = special_row("gamma", 1, gamma_jvp)


# --- beta, betaln ------------------------------------------------------------
def _beta_slopes(a, b, a_dot, b_dot):
    """d log B(a, b) = (psi(a) - psi(a+b)) da + (psi(b) - psi(a+b)) db."""
    psi_ab = digamma(add(a, b))
    return _sum_terms(_times(a_dot, lambda: sub(digamma(a), psi_ab)),
                      _times(b_dot, lambda: sub(digamma(b), psi_ab)))


def betaln_jvp(primals, tangents):
    a, b = primals
    return betaln(a, b), _beta_slopes(a, b, *tangents)


betaln_p, betaln = special_row("betaln", 2, betaln_jvp)


def beta_jvp(primals, tangents):
    a, b = primals
    out = beta(a, b)
    return out, mul(out, _beta_slopes(a, b, *tangents))


beta_p, beta = special_row("beta", 2, beta_jvp)


# --- erfc, erfinv, erfcinv -----------------------------------------------------
def erfc_jvp(primals, tangents):
    x, = primals
    # d erfc(x) = -2 / sqrt(pi) exp(-x^2) dx
    return erfc(x), mul(tangents[0], mul(-2.0 / _SQRT_PI, exp(neg(mul(x, x)))))


erfc_p, erfc = special_row("erfc", 1, erfc_jvp)


def erfinv_jvp(primals, tangents):
    out = erfinv(primals[0])
    # the inverse's slope: 1 / erf'(out) = sqrt(pi) / 2 exp(out^2)
    return out, mul(tangents[0], mul(_SQRT_PI / 2.0, exp(mul(out, out))))


erfinv_p, erfinv = special_row("erfinv", 1, erfinv_jvp)


def erfcinv_jvp(primals, tangents):
    out = erfcinv(primals[0])
    return out, mul(tangents[0], mul(-_SQRT_PI / 2.0, exp(mul(out, out))))


erfcinv_p, erfcinv = special_row("erfcinv", 1, erfcinv_jvp)


# --- log_ndtr --------------------------------------------------------------
def log_ndtr_jvp(primals, tangents):
    x, = primals
    out = log_ndtr(x)
    # phi(x) / Phi(x) as exp(log phi - log Phi): finite for very negative x,
    # where both underflow (the ratio tends to -x)
    log_pdf = sub(mul(-0.5, mul(x, x)), _LOG_SQRT_2PI)
    return out, mul(tangents[0], exp(sub(log_pdf, out)))


log_ndtr_p, log_ndtr = special_row("log_ndtr", 1, log_ndtr_jvp)


# --- expit -----------------------------------------------------------------------
def expit_jvp(primals, tangents):
    x, = primals
    out = expit(x)
    # expit(x) expit(-x): accurate in both tails, where 1 - expit(x) is not
    return out, mul(tangents[0], mul(out, expit(neg(x))))


expit_p, expit = special_row("expit", 1, expit_jvp)


# --- regularized incomplete gamma and beta, Student's t cdf (derivative in x) ------
def _gamma_density(a, x):
    """x^(a-1) e^(-x) / Gamma(a): the slope of gammainc(a, x) in x."""
    return exp(sub(sub(xlogy(sub(a, 1.0), x), x), gammaln(a)))


def gammainc_jvp(primals, tangents):
    a, x = primals
    refuse_tangent(tangents[0], "the derivative of the regularized incomplete gamma function "
                             "(scipy.special.gammainc, scipy.stats.gamma.cdf) in its shape a")
    out = gammainc(a, x)
    return out, mul(tangents[1], _gamma_density(a, x))


gammainc_p, gammainc = special_row("gammainc", 2, gammainc_jvp)


def gammaincc_jvp(primals, tangents):
    a, x = primals
    refuse_tangent(tangents[0], "the derivative of the regularized upper incomplete gamma "
                             "function (scipy.special.gammaincc, scipy.stats.gamma.sf) in its "
                             "shape a")
    out = gammaincc(a, x)
    return out, neg(mul(tangents[1], _gamma_density(a, x)))


gammaincc_p, gammaincc = special_row("gammaincc", 2, gammaincc_jvp)


def _beta_density(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b): the slope of betainc(a, b, x) in x."""
    return exp(sub(add(xlogy(sub(a, 1.0), x), xlog1py(sub(b, 1.0), neg(x))), betaln(a, b)))


def _beta_params_fixed(tangents, fname):
    for t, p in zip(tangents[:2], "ab"):
        refuse_tangent(t, f"the derivative of the regularized incomplete beta function "
                       f"(scipy.special.{fname}, scipy.stats.beta's cdf/sf) in its parameter {p}")


def betainc_jvp(primals, tangents):
    a, b, x = primals
    _beta_params_fixed(tangents, "betainc")
    return betainc(a, b, x), mul(tangents[2], _beta_density(a, b, x))


betainc_p, betainc = special_row("betainc", 3, betainc_jvp)


def betaincc_jvp(primals, tangents):
    a, b, x = primals
    _beta_params_fixed(tangents, "betaincc")
    return betaincc(a, b, x), neg(mul(tangents[2], _beta_density(a, b, x)))


betaincc_p, betaincc = special_row("betaincc", 3, betaincc_jvp)


def t_logpdf(df, t):
    """log of Student's t density with ``df`` degrees of freedom at ``t``."""
    half = mul(0.5, add(df, 1.0))
    norm = sub(sub(gammaln(half), gammaln(mul(0.5, df))), mul(0.5, log(mul(math.pi, df))))
    return sub(norm, mul(half, log1p(div(mul(t, t), df))))


def stdtr_jvp(primals, tangents):
    df, t = primals
    refuse_tangent(tangents[0], "the derivative of Student's t cdf (scipy.special.stdtr, "
                             "scipy.stats.t.cdf/sf) in its degrees of freedom df")
    return stdtr(df, t), mul(tangents[1], exp(t_logpdf(df, t)))


stdtr_p, stdtr = special_row("stdtr", 2, stdtr_jvp)
