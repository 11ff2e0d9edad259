"""Elementwise primitives of NumPy's math ufuncs that a composite of
``arith``'s would compute less accurately than NumPy does: the inverse
hyperbolic functions (``log(x + sqrt(x*x + 1))`` cancels for negative x),
``cbrt`` (``x ** (1/3)`` is NaN for negative x), ``reciprocal`` (``1.0 / x``
turns NumPy's integer reciprocal into a float one), ``log2``/``log10``/``exp2``
(``log(x) / log(2)`` misses exact powers of two by an ulp), ``logaddexp2``
and ``hypot`` (``sqrt(x*x + y*y)`` overflows for large x, y); and
the integer positions ``np.interp`` reads (``interp_segment``,
``interp_period_order``), which are not differentiated.

Each block: banner, rule functions, one ``register`` call. The impls are
NumPy's ufuncs themselves (values are NumPy's to the bit); the jvp rules are
written with primitive wrappers, so they differentiate again.

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from .arith import add, div, mul, neg, sub
from .selection import where
from .ordering import equal
from .transcendental import sqrt
from ..core.pass_rules import DefinedCall
from .safe import safe_div
from .unbounded import unbounded_div
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import wrapper_of
from ..core.rules import unary_row
from ..core.shapes import elementwise_aval
from ..core.ir import Aval, aval_of

__all__ = ["arcsinh", "arccosh", "arctanh", "cbrt", "reciprocal", "log2", "log10", "exp2",
           "logaddexp2", "hypot", "interp_segment", "interp_period_order"]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _binary(name, impl, jvp):
    return register(Primitive(name, nargs=2, impl=impl, jvp=jvp, transpose=NOT_LINEAR,
                              abstract_eval=elementwise_aval(name, float_out=True),
                              batch=BROADCASTING))


def _weighted(x_dot, wx, y_dot, wy, out):
    """``x_dot * wx + y_dot * wy``, a symbolic zero tangent giving no term
    (``wx``/``wy``: functions, so a weight is formed only where needed)."""
    if type(x_dot) is Zero and type(y_dot) is Zero:
        return Zero(aval_of(out))
    if type(x_dot) is Zero:
        return mul(y_dot, wy())
    if type(y_dot) is Zero:
        return mul(x_dot, wx())
    return add(mul(x_dot, wx()), mul(y_dot, wy()))


# --- hypot -------------------------------------------------------------
def hypot_jvp(primals, tangents):
    x, y = primals
    out = hypot(x, y)
    # d|(x, y)| = (x dx + y dy) / |(x, y)|; at (0, 0), where the norm has no
    # derivative, 0 (a subgradient, as abs' is sign(0) = 0), not 0 / 0
    safe = where(equal(out, 0.0), 1.0, out)
    return out, _weighted(tangents[0], lambda: div(x, safe), tangents[1],
                          lambda: div(y, safe), out)


hypot_p = _binary("hypot", np.hypot, hypot_jvp)
hypot = wrapper_of(hypot_p)


# --- arcsinh, arccosh, arctanh -----------------------------------------
def arcsinh_jvp(primals, tangents):
    x, = primals
    # 1 / sqrt(x^2 + 1), as 1 / hypot(x, 1): no overflow of x^2
    return arcsinh(x), div(tangents[0], hypot(x, 1.0))


arcsinh_p = unary_row("arcsinh", np.arcsinh, arcsinh_jvp)
arcsinh = wrapper_of(arcsinh_p)


def arccosh_jvp(primals, tangents):
    x, = primals
    # 1 / sqrt(x^2 - 1) = 1 / (sqrt(x - 1) sqrt(x + 1)): exact near 1, no overflow
    return arccosh(x), unbounded_div(tangents[0], mul(sqrt(sub(x, 1.0)), sqrt(add(x, 1.0))))


arccosh_p = unary_row("arccosh", np.arccosh, arccosh_jvp)
arccosh = wrapper_of(arccosh_p)


def arctanh_jvp(primals, tangents):
    x, = primals
    # 1 / (1 - x^2) = 1 / ((1 - x)(1 + x)): no cancellation near +-1
    return arctanh(x), safe_div(tangents[0], mul(sub(1.0, x), add(1.0, x)))


arctanh_p = unary_row("arctanh", np.arctanh, arctanh_jvp)
arctanh = wrapper_of(arctanh_p)


# --- cbrt --------------------------------------------------------------
def cbrt_jvp(primals, tangents):
    out = cbrt(primals[0])
    # d x^(1/3) = dx / (3 x^(2/3)), for either sign of x
    return out, unbounded_div(tangents[0], mul(3.0, mul(out, out)))


cbrt_p = unary_row("cbrt", np.cbrt, cbrt_jvp)
cbrt = wrapper_of(cbrt_p)


# --- reciprocal --------------------------------------------------------
def reciprocal_jvp(primals, tangents):
    out = reciprocal(primals[0])
    return out, neg(mul(tangents[0], mul(out, out)))


# np.reciprocal itself: integers keep NumPy's integer semantics
# (reciprocal(2) is 0), which 1.0 / x would turn into floats
reciprocal_p = register(Primitive("reciprocal", nargs=1, impl=np.reciprocal, jvp=reciprocal_jvp,
                                  transpose=NOT_LINEAR,
                                  abstract_eval=elementwise_aval("reciprocal"), complex_ok=True,
                                  batch=BROADCASTING))
reciprocal = wrapper_of(reciprocal_p)


# --- log2, log10, exp2 -------------------------------------------------
def log2_jvp(primals, tangents):
    x, = primals
    return log2(x), safe_div(tangents[0], mul(x, _LN2))


log2_p = unary_row("log2", np.log2, log2_jvp, complex_ok=True)
log2 = wrapper_of(log2_p)


def log10_jvp(primals, tangents):
    x, = primals
    return log10(x), safe_div(tangents[0], mul(x, _LN10))


log10_p = unary_row("log10", np.log10, log10_jvp, complex_ok=True)
log10 = wrapper_of(log10_p)


def exp2_jvp(primals, tangents):
    out = exp2(primals[0])
    return out, mul(tangents[0], mul(out, _LN2))


exp2_p = unary_row("exp2", np.exp2, exp2_jvp, complex_ok=True)
exp2 = wrapper_of(exp2_p)


# --- logaddexp2 --------------------------------------------------------
def logaddexp2_jvp(primals, tangents):
    x, y = primals
    out = logaddexp2(x, y)
    # d log2(2^x + 2^y) = 2^(x - out) dx + 2^(y - out) dy: weights in [0, 1]
    return out, _weighted(tangents[0], lambda: exp2(sub(x, out)), tangents[1],
                          lambda: exp2(sub(y, out)), out)


logaddexp2_p = _binary("logaddexp2", np.logaddexp2, logaddexp2_jvp)
logaddexp2 = wrapper_of(logaddexp2_p)


# --- interp_segment, interp_period_order (integers, not differentiated) --
def interp_segment_impl(xp, x):
    # the segment [xp[j], xp[j + 1]] that holds x; the first or last one
    # for x outside [xp[0], xp[-1]] (np.interp's left/right take over there)
    j = np.searchsorted(xp, x, side="right") - 1
    return np.clip(j, 0, max(np.shape(xp)[0] - 2, 0))


def interp_segment_aval(xp, x):
    return Aval(x.shape, np.intp)


def interp_segment_batch(args, batched):
    """Sample points shared by the batch: one search of every example's points; each
    example's own sample points: NumPy's ``searchsorted`` has no batched form, so once per
    example (``NotImplemented``)."""
    if batched[0]:
        return NotImplemented
    return interp_segment(*args)


interp_segment_p = register(Primitive("interp_segment", nargs=2, impl=interp_segment_impl,
                                      jvp=None, transpose=NOT_LINEAR,
                                      abstract_eval=interp_segment_aval,
                                      emit=DefinedCall(interp_segment_impl, any_library=True),
                                      differentiable=False, batch=interp_segment_batch))
interp_segment = wrapper_of(interp_segment_p)


def interp_period_order_impl(xp, period):
    # np.interp with period=: the sample points reduced modulo the period,
    # in increasing order (a stable sort, as NumPy's)
    return np.argsort(np.remainder(xp, period), kind="stable")


def interp_period_order_aval(xp, period):
    return Aval(xp.shape, np.intp)


interp_period_order_p = register(Primitive(
    "interp_period_order", nargs=2, impl=interp_period_order_impl, jvp=None,
    transpose=NOT_LINEAR, abstract_eval=interp_period_order_aval,
    emit=DefinedCall(interp_period_order_impl, any_library=True), differentiable=False, batch=BROADCASTING))
interp_period_order = wrapper_of(interp_period_order_p)
