"""Elementwise primitives defined by the order of the reals, each smooth (or
constant) between the points where it switches branch: ``abs`` and ``sign``
(``abs`` of a complex value is the modulus, with a rule of its own); ``floor``,
``ceil``, ``round``; ``maximum`` and ``minimum`` (ties split the derivative
evenly); ``remainder`` and ``floor_divide``; the comparisons and logical
operations that pick the branch (not differentiated); ``clip``.

At a switch point the derivative is one-sided or split, as documented per
block; nowhere is a derivative given where the function has none and a
value depends on it silently (``floor``'s is zero almost everywhere).

Layer: primitives.
"""
from __future__ import annotations

import operator

import numpy as np

from .arith import add, conj, div, mul, real, sub
from .safe import safe_mul
from .selection import where
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import wrapper_of
from ..core.rules import EmitRule, python_numbers_kept, unary_row
from ..core.shapes import elementwise_aval, python_operator
from ..core.pass_rules import BinaryOperator, PythonNumbersKept
from ..core.ir import Aval, aval_of
from ..core.primitive import ELEMENTWISE
from ..core.deps import elementwise


# --- abs, sign ---------------------------------------------------------
def abs_jvp(primals, tangents):
    x, = primals
    if aval_of(x).dtype.kind == "c":    # |z| is not holomorphic
        return complex_abs_jvp(x, tangents[0])
    # safe: an infinite tangent at a point where |x| is flat (a zero sign) gives 0
    return abs(x), safe_mul(tangents[0], sign(x))


def abs_aval(x):
    """|z| of a complex value is real (complex64 -> float32)."""
    out = _abs_elementwise_aval(x)
    if out.dtype.kind == "c":
        return Aval(out.shape, np.empty(0, out.dtype).real.dtype, weak=out.weak)
    return out


# Python's abs, like the operators above: np.absolute on arrays and NumPy
# scalars, and a Python float stays one (a ufunc on it costs ~6x more)
_abs_elementwise_aval = elementwise_aval("abs", python_scalars=True)


class AbsEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        return code.abs_call(ins[0]) if not eqn.params else None     # the impl is Python's abs

    def python_floats(self, eqn, kinds):
        """Python's ``abs`` of a float clears its sign bit, as NumPy's does."""
        if eqn.params or eqn.inputs[0].aval.dtype != np.float64:
            return None
        return (True,), (kinds[0] == "float",)


abs_p = register(Primitive("abs", nargs=1, impl=operator.abs, jvp=abs_jvp, transpose=NOT_LINEAR,
                           abstract_eval=abs_aval, emit=AbsEmit(), numpy_scalar=True,
                           complex_ok=True,
                           sparsity=ELEMENTWISE,
                           batch=BROADCASTING))
abs = wrapper_of(abs_p)


# --- sign, floor, ceil, round ------------------------------------------
# constant between the points where they jump, so their derivative is zero almost
# everywhere: their outputs carry no tangent (``differentiable=False``)
sign_p = unary_row("sign", np.sign, None, float_out=False, differentiable=False)
sign = wrapper_of(sign_p)

floor_p = unary_row("floor", np.floor, None, differentiable=False)
floor = wrapper_of(floor_p)

ceil_p = unary_row("ceil", np.ceil, None, differentiable=False)
ceil = wrapper_of(ceil_p)


def round_impl(x, decimals=0):
    return np.round(x, decimals)


class RoundEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        if set(eqn.params) <= {"decimals"}:
            return f"{code.np}.round({', '.join(ins + [code.param(eqn.params.get('decimals', 0))])})"


round_p = register(Primitive("round", nargs=1, impl=round_impl, jvp=None, transpose=NOT_LINEAR,
                             abstract_eval=elementwise_aval("round"), emit=RoundEmit(),
                             differentiable=False,
                             batch=BROADCASTING))
round = wrapper_of(round_p)


# --- |z| (the complex half of abs's rule) ------------------------------
def complex_abs_jvp(x, x_dot):
    """d|z| = Re(conj(z) dz) / |z|, real. At z = 0, where |z| has no
    derivative, the tangent is 0 (JAX's value there too)."""
    out = abs(x)
    safe = where(equal(out, 0), 1.0, out)
    return out, div(real(mul(conj(x), x_dot)), safe)


# --- maximum, minimum --------------------------------------------------
def _picked(first, tie, x_dot, y_dot):
    """``x_dot`` where ``first`` holds, the mean of both at ties, else ``y_dot``:
    selected, never multiplied by a 0/1 weight, so the side not picked
    contributes nothing, an infinite or nan tangent too (``0 * inf`` is nan)."""
    half = mul(add(x_dot, y_dot), 0.5)
    return where(first, x_dot, where(tie, half, y_dot))


def maximum_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = maximum(x, y)
    # ties split the derivative evenly, so max(x, x) has derivative 1
    return out, _picked(greater(x, y), equal(x, y), x_dot, y_dot)


def maximum_sparsity(an, ops, outs):
    """Elementwise; where both operands are known (a local analysis), the larger one (both
    at a tie or a NaN, where the jvp splits or propagates)."""
    return _pick_sparsity(ops, outs, np.greater)


def _pick_sparsity(ops, outs, first):
    x, y = ops
    keep = None
    if x.known and y.known:
        a, b = np.asarray(x.value), np.asarray(y.value)
        with np.errstate(invalid="ignore"):
            ax, bx = first(a, b), first(b, a)
        tie = ~ax & ~bx
        keep = [ax | tie, bx | tie]
    return elementwise(outs[0].shape, ops, keep)


maximum_p = register(Primitive("maximum", nargs=2, impl=np.maximum, jvp=maximum_jvp,
                               transpose=NOT_LINEAR, abstract_eval=elementwise_aval("maximum"),
                               sparsity=maximum_sparsity,
                               batch=BROADCASTING))
maximum = wrapper_of(maximum_p)


def minimum_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = minimum(x, y)
    return out, _picked(less(x, y), equal(x, y), x_dot, y_dot)


def minimum_sparsity(an, ops, outs):
    """Elementwise; where both are known, the smaller one (see ``maximum_sparsity``)."""
    return _pick_sparsity(ops, outs, np.less)


minimum_p = register(Primitive("minimum", nargs=2, impl=np.minimum, jvp=minimum_jvp,
                               transpose=NOT_LINEAR, abstract_eval=elementwise_aval("minimum"),
                               sparsity=minimum_sparsity,
                               batch=BROADCASTING))
minimum = wrapper_of(minimum_p)


# --- remainder, floor_divide ---------------------------------------------
def remainder_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = remainder(x, y)
    # x mod y = x - floor(x / y) y: slope 1 in x, -floor(x / y) in y
    if type(y_dot) is Zero:
        return out, x_dot
    return out, sub(x_dot, mul(y_dot, floor_divide(x, y)))


remainder_p = register(Primitive("remainder", nargs=2, impl=python_numbers_kept(np.remainder),
                                 jvp=remainder_jvp, transpose=NOT_LINEAR,
                                 abstract_eval=elementwise_aval("remainder", python_scalars=True),
                                 emit=PythonNumbersKept("remainder"),
                                 batch=BROADCASTING))
remainder = wrapper_of(remainder_p)

floor_divide_p = register(Primitive("floor_divide", nargs=2,
                                    impl=python_numbers_kept(np.floor_divide), jvp=None,
                                    transpose=NOT_LINEAR,
                                    abstract_eval=elementwise_aval("floor_divide",
                                                                   python_scalars=True),
                                    emit=PythonNumbersKept("floor_divide"), differentiable=False,
                                    batch=BROADCASTING))
floor_divide = wrapper_of(floor_divide_p)


# --- comparisons and logical operations (not differentiated) -----------
def _predicate(name, impl, nargs=2, **fields):
    prim = register(Primitive(name, nargs=nargs, impl=impl, jvp=None, transpose=NOT_LINEAR,
                              abstract_eval=elementwise_aval(name, out_dtype=np.bool_,
                                                             python_scalars=python_operator(impl)),
                              differentiable=False, **fields,
                              batch=BROADCASTING))
    return prim, wrapper_of(prim)


less_p, less = _predicate("less", operator.lt, emit=BinaryOperator("<"))
less_equal_p, less_equal = _predicate("less_equal", operator.le, emit=BinaryOperator("<="))
greater_p, greater = _predicate("greater", operator.gt, emit=BinaryOperator(">"))
greater_equal_p, greater_equal = _predicate("greater_equal", operator.ge,
                                            emit=BinaryOperator(">="))
# equality and finiteness are defined on complex values too (no derivative either way)
equal_p, equal = _predicate("equal", operator.eq, emit=BinaryOperator("=="), complex_ok=True)
not_equal_p, not_equal = _predicate("not_equal", operator.ne, emit=BinaryOperator("!="),
                                    complex_ok=True)
logical_and_p, logical_and = _predicate("logical_and", np.logical_and)
logical_or_p, logical_or = _predicate("logical_or", np.logical_or)
logical_xor_p, logical_xor = _predicate("logical_xor", np.logical_xor)
logical_not_p, logical_not = _predicate("logical_not", np.logical_not, nargs=1)
isfinite_p, isfinite = _predicate("isfinite", np.isfinite, nargs=1, complex_ok=True)


# --- clip (plain function over maximum and minimum) ------------------
def clip(x, lo=None, hi=None):
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x
