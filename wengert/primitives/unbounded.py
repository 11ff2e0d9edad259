"""Products with a local derivative that may be infinite where the function
is finite, and the products of derivatives that may have come through one:

    t = unbounded_mul (g, f)    safe_mul, f possibly infinite where the function is finite
    t = unbounded_div (g, f)    safe_div, f possibly 0 there

``sqrt``, ``cbrt`` and ``x ** p`` (``p < 1``) at 0, ``arcsin`` and ``arccos``
at +-1 and ``arccosh`` at 1 are finite with an infinite derivative. Their
rules apply it with these rows: ``safe_mul``/``safe_div`` in value, code and
cost, so an exactly zero derivative still gives exactly 0, but rows of their
own, so that a transformation knows that the derivatives which come out of one
may be infinite (``TRACE_STATE.unbounded`` counts them). Such a derivative is
*wild*; it is right (the slope of ``sqrt`` at 0 is infinite) until it meets a
primal factor that is exactly zero: the chain rule then multiplies an infinite
slope by an exactly zero one, ``inf * 0 = nan``, where the composite is
constant and its derivative 0 (``np.cbrt(np.maximum(v * s, 0.0))`` at ``v = 0``
in ``s``; ``np.sqrt(x) * y`` at ``x = y = 0`` in ``x``). ``derivative_mul``,
the product of a derivative and a primal factor in ``mul``'s rules, is the
guarded ``safe_mul`` while the derivatives given to the rule are wild
(``TRACE_STATE.wild``, set by ``transforms.jvp`` and ``transforms.transpose``
from the tracers and cotangents they know to be wild) and the plain ``mul``
otherwise, so code with no such function pays nothing.

A loop body that applies one is transformed with its derivatives wild from the first
step: its cotangents (``transforms.transpose``), and its tangents, which may come around
the loop wild into a product that comes before the singular function in the body
(``control.loops.jvp_body``, which jvps such a body again). Not covered: a wild
derivative through ``dot``/``matmul``/``einsum`` (a sum of products, one of which is
``inf * 0``).

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import BROADCASTING, ELEMENTWISE, PRIMITIVES, ZERO_IF_ANY, Primitive, register
from ..core.trace import TRACE_STATE, bind
from ..core.debug import NANS
from ..core.shapes import elementwise_aval
from .safe import (DIV_EMIT, MUL_EMIT, SafeLower, div_rules, maybe_python_number, mul_rules,
                   nonzero_number, plain, quotient_zero_rule, safe_div_impl, safe_mul,
                   safe_mul_impl)

__all__ = ["unbounded_mul_p", "unbounded_mul", "unbounded_div_p", "unbounded_div",
           "derivative_mul"]


# --- unbounded_mul -------------------------------------------------------
unbounded_mul_jvp, unbounded_mul_transpose = mul_rules(lambda g, f: unbounded_mul(g, f))

unbounded_mul_p = register(Primitive(
    "unbounded_mul", nargs=2, impl=safe_mul_impl, jvp=unbounded_mul_jvp,
    transpose=unbounded_mul_transpose,
    abstract_eval=elementwise_aval("unbounded_mul", python_scalars=True), zero_rule=ZERO_IF_ANY,
    batch=BROADCASTING, simplify=plain("mul"), emit=MUL_EMIT,
    lower=SafeLower(np.multiply, "*", MUL_EMIT), complex_ok=True, sparsity=ELEMENTWISE))


def unbounded_mul(g, f):
    """``safe_mul(g, f)`` where ``f`` may be infinite while the function is
    finite: what comes of it is a wild derivative (counted)."""
    TRACE_STATE.unbounded += 1
    if not NANS.safe or nonzero_number(g) or nonzero_number(f):
        return bind(PRIMITIVES["mul"], g, f)
    return bind(unbounded_mul_p, g, f)


# --- unbounded_div -------------------------------------------------------
unbounded_div_jvp, unbounded_div_transpose = div_rules(lambda g, f: unbounded_div(g, f),
                                                       lambda g, f: unbounded_mul(g, f))


unbounded_div_p = register(Primitive(
    "unbounded_div", nargs=2, impl=safe_div_impl, jvp=unbounded_div_jvp,
    transpose=unbounded_div_transpose,
    abstract_eval=elementwise_aval("unbounded_div", float_out=True, python_scalars=True),
    zero_rule=quotient_zero_rule("unbounded_div"), batch=BROADCASTING, simplify=plain("div"),
    emit=DIV_EMIT, lower=SafeLower(np.divide, "/", DIV_EMIT), complex_ok=True,
    sparsity=ELEMENTWISE))


def unbounded_div(g, f):
    """``safe_div(g, f)`` where ``f`` may be 0 while the function is finite:
    what comes of it is a wild derivative (counted)."""
    TRACE_STATE.unbounded += 1
    if (not NANS.safe or nonzero_number(f)
            or (nonzero_number(g) and not maybe_python_number(f))):
        return bind(PRIMITIVES["div"], g, f)
    return bind(unbounded_div_p, g, f)


# --- the products a wild derivative meets ------------------------------------
def derivative_mul(a, b):
    """``a * b``, one a derivative and the other a primal factor (``mul``'s
    jvp and transpose): ``safe_mul`` while the derivatives of the rule being
    run are wild (``TRACE_STATE.wild``), so an exactly zero factor keeps an
    infinite slope out; the plain ``mul`` otherwise."""
    if TRACE_STATE.wild:
        return safe_mul(a, b)
    return bind(PRIMITIVES["mul"], a, b)
