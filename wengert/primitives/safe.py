"""Products in which an exactly zero derivative stays exactly zero:

    t = safe_mul (g, f)     g * f, but exactly 0 where g == 0 or f == 0
    t = safe_div (g, f)     g / f, but exactly 0 where g == 0

IEEE arithmetic gives ``0 * inf = nan`` and ``0 / 0 = nan``. A derivative
rule multiplies a tangent (forward mode) or a cotangent (reverse mode) by a
local derivative, which is infinite or undefined where a function is
singular: ``sqrt`` and ``x ** 0.5`` at 0, ``log`` at 0, ``arcsin`` at 1,
``x / y`` at ``y = 0``. A tangent or cotangent that is exactly zero there
(the branch ``np.where`` did not select, the diagonal ``np.tril`` masked
out, an element no output reads) means that no derivative flows that way:
it must contribute exactly zero, not nan, or one masked element turns the
whole gradient into nan (``np.where(x > 0, np.sqrt(x), 0.0)`` at 0). The
rows of singular functions write their derivative with these two, the
tangent or cotangent as the guard ``g``, so the rule holds in both modes
and, the rows being differentiable themselves, at every order.

``safe_mul`` is linear in each operand, and an exact zero in either gives
zero (a second derivative multiplies two derivatives, either of which may
be the zero one); ``safe_div`` is linear in its numerator, the guard. Where
no guard is zero they are ``*`` and ``/`` exactly, inf and nan included (a
derivative that is infinite stays so).

``wg.nan_safe(False)`` (``core.debug.NANS.safe``) turns the guard off:
``safe_mul`` and ``safe_div`` then bind the plain ``mul`` and ``div``.

The cost is one sum of the result (its nan check, ``(s := r.sum()) != s``
in the Python backend's code, ``np.isnan(r.sum())`` in numba's; ``has_nan``
in the impl, a Python sum of a small array's items),
and a select where a nan is found; ``simplify`` writes the plain operator
where an operand is a literal that makes the check needless (``1.0 / x``,
``g / 2.0``). ``lower`` writes a quotient into the divisor's buffer where
nothing reads it afterwards, never into the guard's, which the check
reads; a product is always a new array (the check reads both operands).

Layer: primitives.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..core import dims as _dims
from ..core.primitive import (BROADCASTING, ELEMENTWISE, PRIMITIVES, ZERO_IF_ANY, Linear, Primitive,
                              Zero, register)
from ..core.trace import bind
from ..core.debug import NANS
from ..core.dims import Dim, Scalar
from ..core.rules import ElementwiseLower, EmitRule, float64_operand
from ..core.shapes import elementwise_aval
from .fanout import add_any
from .shape import sum_to_shape
from ..core.ir import Eqn, Lit, aval_of
from ..core.atoms import is_duck_array

__all__ = ["safe_mul_p", "safe_mul", "safe_div_p", "safe_div", "has_nan", "zero_where",
           "mul_rules", "div_rules", "quotient_zero_rule", "SafeLower", "MUL_EMIT", "DIV_EMIT",
           "plain", "nonzero_number", "maybe_python_number"]


def has_nan(r):
    """Whether ``r`` (a number or an array) may hold a nan: its sum is nan
    (a sum of infinities of both signs is too: the select that follows
    changes nothing there). A small NumPy array is summed by Python, a
    fifth of NumPy's call on a few items."""
    if type(r) is float or type(r) is complex:
        return r != r
    if type(r) is np.ndarray and r.size <= _SMALL:
        s = sum(r.ravel().tolist())
    else:
        s = r.sum() if isinstance(r, np.ndarray) else np.sum(r)
    return bool(s != s)


_SMALL = 32     # up to this many items, Python's sum is cheaper than NumPy's call


def zero_where(r, g, f=None):
    """``r`` with exact zeros where ``g == 0`` (or ``f == 0``), of ``r``'s
    type (a Python number, a NumPy scalar or an array)."""
    zero = np.equal(g, 0) if f is None else np.logical_or(np.equal(g, 0), np.equal(f, 0))
    out = np.where(zero, np.zeros((), np.result_type(r)), r)
    if isinstance(r, np.ndarray) or is_duck_array(r):
        return out
    return type(r)(out[()]) if type(r) in (float, complex) else out[()]


def nonzero_number(x):
    """A number known while staging to be finite and nonzero; a length or a
    number computed from lengths (``dims``: ``1.0 / n``) counts as one
    without being compared (a comparison would pin it to its value here)."""
    if isinstance(x, (Dim, Scalar)):
        return True
    if type(x) in (float, int) or isinstance(x, (np.floating, np.integer)):
        return math.isfinite(x) and x != 0
    return False


def _sum_to(ct, like):
    shape = _dims.shape(like)
    return ct if _dims.shape(ct) == shape else sum_to_shape(ct, shape)


def _finite_lit(x, nonzero=False):
    """A literal (a number, or a constant array such as a cotangent of ones) whose
    entries are all finite (and none zero, ``nonzero``)."""
    if not isinstance(x, Lit) or hasattr(x.val, "_trace"):
        return False
    v = np.asarray(x.val)
    if v.dtype.kind not in "biufc":
        return False
    return bool(np.isfinite(v).all() and (not nonzero or (v != 0).all()))


def plain(name):
    """``simplify``: the plain row where the check cannot find anything: a
    guard that is a nonzero literal (never 0), or a finite factor (``0 *
    c``, ``0 / c`` are 0 already; a divisor must not be zero)."""
    def simplify(eqn, ins, copies):
        g, f = ins
        by_number = _finite_lit(g, nonzero=True) and (
            name == "mul" or not (f.aval.weak and f.aval.shape == ()))
        if by_number or _finite_lit(f, nonzero=True):
            return [Eqn(PRIMITIVES[name], (g, f), eqn.outputs, {})], list(eqn.outputs)
        return None
    simplify.__name__ = f"plain_{name}"
    return simplify


class SafeEmit(EmitRule):
    """``t = g * f`` and the check: for a number ``if t != t and g == 0: t =
    g * 0.0``; for an array ``if np.isnan(t.sum()): t = np.where(g == 0, ...)``
    (``g == 0`` or ``f == 0`` for a product: ``both``)."""

    fresh = True

    def __init__(self, op, both):
        self.op, self.both = op, both

    def statements(self, code, eqn, ins, py, outs, subs):
        g, f = ins
        if self.op == "/" and all(py):
            # two Python numbers: NumPy's division where Python's raises (a zero divisor)
            text = f"{g} / {f} if {f} else {code.np}.true_divide({g}, {f})"
        else:
            text = f"{g} {self.op} {f}"
        return [f"{outs[0]} = {text}"] + self.check(code, eqn, ins, outs[0])

    def python_floats(self, eqn, kinds):
        """As ``BinaryOperator``'s, every operand taken as a Python float (a
        quotient of two is written to divide as NumPy does)."""
        if len(kinds) != 2 or not all(map(float64_operand, eqn.inputs)):
            return None
        out = eqn.outputs[0].aval.shape == () and "np" not in kinds and "float" in kinds
        return (True, True), (out,)

    def check(self, code, eqn, ins, t):
        """The statements that zero ``t`` where a guard is 0, when a nan may
        have come of it (``test``)."""
        test = self.test(code, eqn, ins, t)
        if test is None:
            return []
        if code.foreign:       # another library's arrays: no value read, the select always
            return [f"{t} = {self.fixed(code, ins, t)}"]
        if eqn.outputs[0].aval.shape == ():
            g, f = ins          # a zero of t's type: the zero guard times 0.0
            zero = f"{g} * 0.0 if not {g} else {f} * 0.0" if self.both else f"{g} * 0.0"
            return [f"if {test}:", f"    {t} = {zero}"]
        return [f"if {test}:", f"    {t} = {self.fixed(code, ins, t)}"]

    def test(self, code, eqn, ins, t):
        """When a zero guard may have made a nan in ``t``: for a number
        ``t != t``; beside a number operand, a test of that number alone
        (cheap on small arrays: ``number_test``); else ``t``'s sum is nan.
        None: never (a nonzero literal numerator)."""
        g, f = ins
        if _finite_lit(eqn.inputs[0], nonzero=True) and not self.both:
            return None
        if eqn.outputs[0].aval.shape == ():
            zero = f"(not {g} or not {f})" if self.both else f"not {g}"
            return f"{t} != {t} and {zero}"
        found = self.number_test(eqn, ins)
        if found is not None:
            return found[1]
        if code.LOWERING["floats"]:     # the Python backend (numba's types its own numbers)
            # the sum compared with itself: a third cheaper than np.isnan of it
            s = code.fresh("s")
            return f"({s} := {t}.sum()) != {s}"
        return f"{code.np}.isnan({t}.sum())"

    def number_test(self, eqn, ins):
        """(position, test) of the number operand whose value alone says
        whether a nan may come of a zero guard, or None: a divisor that is 0
        or nan; a factor that is 0, inf or nan."""
        g_num, f_num = (x.aval.shape == () for x in eqn.inputs)
        g, f = ins
        # ``not f``: f is 0; ``f - f``: nan (true) for inf and nan, 0.0 (false) otherwise
        if f_num:
            return 1, (f"not {f} or {f} - {f}" if self.both else f"not {f} or {f} != {f}")
        if g_num and self.both:
            return 0, f"not {g} or {g} - {g}"
        return None

    def fixed(self, code, ins, t):
        """``t`` with zeros where a guard is 0."""
        g, f = ins
        np_ = code.np
        zero = f"({g} == 0) | ({f} == 0)" if self.both else f"{g} == 0"
        return f"{np_}.where({zero}, {np_}.zeros_like({t}), {t})"


class SafeLower(ElementwiseLower):
    """In place into an operand nothing reads afterwards: a quotient's
    divisor; beside a number operand whose value alone is the check
    (``SafeEmit.number_test``), the other operand too, the rare case (the
    number is 0, inf or nan) then computed as a new array first."""

    def __init__(self, ufunc, op, emit):
        super().__init__(ufunc, op)
        self.emit = emit

    def update(self, eqn):
        found = self.emit.number_test(eqn, ("g", "f"))
        free = 1 - found[0] if found is not None else (None if self.emit.both else 1)
        return tuple(p for p in super().update(eqn) if p == free or (p == 1 and not self.emit.both))

    def inplace(self, code, eqn, ins, py, outs, p):
        if code.foreign:
            return self.emit.statements(code, eqn, ins, py, outs, {})
        found = self.emit.number_test(eqn, ins)
        lines = super().inplace(code, eqn, ins, py, outs, p)
        if found is None or found[0] == p:
            return lines + self.emit.check(code, eqn, ins, outs[0])
        t = outs[0]
        return ([f"if {found[1]}:", f"    {t} = {ins[0]} {self.emit.op} {ins[1]}",
                 f"    {t} = {self.emit.fixed(code, ins, t)}", "else:"]
                + [f"    {line}" for line in lines])


MUL_EMIT, DIV_EMIT = SafeEmit("*", both=True), SafeEmit("/", both=False)


# --- safe_mul ------------------------------------------------------------
def _suspect(t, g, f, both):
    """Whether ``t`` (``g * f`` or ``g / f``) may hold a nan that a zero guard
    made: as ``SafeEmit.check`` tests it. On another library's arrays (a Dask
    array is computed only later) it may, without a look."""
    if is_duck_array(t) or is_duck_array(g) or is_duck_array(f):
        return True
    if np.ndim(t) == 0:
        return t != t
    if np.ndim(f) == 0:
        return f == 0 or (f - f != 0 if both else f != f)
    if both and np.ndim(g) == 0:
        return g == 0 or g - g != 0
    return has_nan(t)


def safe_mul_impl(g, f):
    t = g * f
    return zero_where(t, g, f) if _suspect(t, g, f, True) else t


def mul_rules(product):
    """The jvp and transpose of a guarded product whose derivatives are
    ``product`` (``safe_mul`` or, for a local derivative that may be
    infinite, ``unbounded_mul``: every derivative of one may be too)."""
    def jvp(primals, tangents):
        g, f = primals
        g_dot, f_dot = tangents
        out = product(g, f)
        terms = [product(g_dot, f) if type(g_dot) is not Zero else None,
                 product(g, f_dot) if type(f_dot) is not Zero else None]
        terms = [t for t in terms if t is not None]
        if not terms:
            return out, Zero(aval_of(out))
        return out, terms[0] if len(terms) == 1 else add_any(*terms)

    def transpose(ct, g, f):
        assert isinstance(g, Linear) != isinstance(f, Linear), "a product linear in one operand"
        if isinstance(g, Linear):
            return _sum_to(product(ct, f), g), None
        return None, _sum_to(product(g, ct), f)
    return jvp, transpose


safe_mul_jvp, safe_mul_transpose = mul_rules(lambda g, f: safe_mul(g, f))


safe_mul_p = register(Primitive(
    "safe_mul", nargs=2, impl=safe_mul_impl, jvp=safe_mul_jvp, transpose=safe_mul_transpose,
    abstract_eval=elementwise_aval("safe_mul", python_scalars=True), zero_rule=ZERO_IF_ANY,
    batch=BROADCASTING, simplify=plain("mul"), emit=MUL_EMIT,
    lower=SafeLower(np.multiply, "*", MUL_EMIT), complex_ok=True, sparsity=ELEMENTWISE))


def safe_mul(g, f):
    """``g * f``, exactly 0 where either is; the plain product where an
    operand is a finite nonzero number (which cannot meet an inf as a zero),
    or everywhere while ``wg.nan_safe`` is off (``NANS.safe``)."""
    if not NANS.safe or nonzero_number(g) or nonzero_number(f):
        return bind(PRIMITIVES["mul"], g, f)
    return bind(safe_mul_p, g, f)


# --- safe_div ------------------------------------------------------------
def safe_div_impl(g, f):
    if type(g) in (float, int) and type(f) in (float, int) and f == 0:
        g = np.float64(g)           # NumPy's division: 0 / 0 is nan, not an exception
    t = operator.truediv(g, f)
    return zero_where(t, g) if _suspect(t, g, f, False) else t


def div_rules(quotient, product):
    """The jvp and transpose of a guarded quotient (``safe_div``, or
    ``unbounded_div`` with ``unbounded_mul``)."""
    def jvp(primals, tangents):
        g, f = primals
        g_dot, f_dot = tangents
        out = quotient(g, f)
        # d(g/f) = dg/f - (g/f) df/f: each term guarded by the tangent it carries,
        # and the second by g too (through out); ``sub`` and ``neg`` are rows of
        # ``arith``, which builds on this module: looked up
        terms = []
        if type(g_dot) is not Zero:
            terms.append(quotient(g_dot, f))
        if type(f_dot) is not Zero:
            term = product(f_dot, quotient(out, f))
            if terms:
                return out, bind(PRIMITIVES["sub"], terms[0], term)
            return out, bind(PRIMITIVES["neg"], term)
        if not terms:
            return out, Zero(aval_of(out))
        return out, terms[0]

    def transpose(ct, g, f):
        assert isinstance(g, Linear) and not isinstance(f, Linear), \
            "a quotient is linear in its numerator only"
        return _sum_to(quotient(ct, f), g), None
    return jvp, transpose


safe_div_jvp, safe_div_transpose = div_rules(lambda g, f: safe_div(g, f),
                                              lambda g, f: safe_mul(g, f))


def quotient_zero_rule(name):
    """The ``zero_rule`` of the guarded quotient row ``name``: a zero
    numerator gives a zero (its divisor is never a tangent)."""
    def zero_rule(g, f):
        out = PRIMITIVES[name].abstract_eval(aval_of(g), aval_of(f))
        if isinstance(g, Zero):
            return Zero(out)
        raise AssertionError(f"{name}'s divisor is never a tangent")     # pragma: no cover
    return zero_rule


safe_div_p = register(Primitive(
    "safe_div", nargs=2, impl=safe_div_impl, jvp=safe_div_jvp, transpose=safe_div_transpose,
    abstract_eval=elementwise_aval("safe_div", float_out=True, python_scalars=True),
    zero_rule=quotient_zero_rule("safe_div"), batch=BROADCASTING, simplify=plain("div"),
    emit=DIV_EMIT, lower=SafeLower(np.divide, "/", DIV_EMIT), complex_ok=True, sparsity=ELEMENTWISE))


def safe_div(g, f):
    """``g / f``, exactly 0 where ``g`` is; the plain quotient where ``g``
    or ``f`` is a finite nonzero number (``1.0 / x``, ``t / n``), or
    everywhere while ``wg.nan_safe`` is off."""
    if (not NANS.safe or nonzero_number(f)
            or (nonzero_number(g) and not maybe_python_number(f))):
        return bind(PRIMITIVES["div"], g, f)
    return bind(safe_div_p, g, f)


def maybe_python_number(x):
    """A Python number or a value that may be one where the code runs (a
    weakly typed scalar): Python's ``/`` raises on its zero."""
    if isinstance(x, (int, float, complex)):
        return True
    av = aval_of(x)
    return av.weak and av.shape == ()
