"""Elementwise arithmetic and transcendental primitives.

The arithmetic and comparison impls are Python's operators: on arrays they are
NumPy's ufuncs, and on two Python numbers they keep Python's semantics, as
the user's own ``x * 2.0`` does (a Python float stays weakly typed), and
generated code can write ``a * b``.

Each block: banner, rule functions, one ``register`` call. Rules are written
with the wrappers below (never NumPy), so they differentiate again. Wrappers
take NumPy broadcasting semantics; transpose rules sum cotangents back to an
operand's shape with ``sum_to_shape``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dims as _dims
from .core import (NOT_LINEAR, Linear, Primitive, Zero, instantiate, register, wrapper_of,
                   zero_if_any)
from .rules import elementwise_aval, python_operator
from .shape import broadcast_to, dup, elementwise_batch, sum_to_shape
from ..ir import Aval, aval_of


_wrap = wrapper_of


def _zero_jvp(out_fn):
    """jvp of a primitive whose derivative is zero almost everywhere."""
    def jvp(primals, tangents, **params):
        out = out_fn(*primals, **params)
        return out, Zero(aval_of(out))
    return jvp


def _unary(name, impl, jvp, float_out=True):
    prim = Primitive(name, nargs=1, impl=impl, jvp=jvp, transpose=NOT_LINEAR,
                     abstract_eval=elementwise_aval(name, float_out=float_out,
                                                    python_scalars=python_operator(impl)))
    return register(prim)


def _sum_to(ct, like):
    """Undo broadcasting: sum ``ct`` down to the shape of operand ``like``."""
    shape = _dims.shape(like)
    if _dims.shape(ct) == shape:
        return ct
    return sum_to_shape(ct, shape)


# --- add ---------------------------------------------------------------
def add_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return add(x, y), add(x_dot, y_dot)


def add_transpose(ct, x, y):
    ct_x, ct_y = dup(ct)
    return (_sum_to(ct_x, x) if isinstance(x, Linear) else None,
            _sum_to(ct_y, y) if isinstance(y, Linear) else None)


def add_zero_rule(x, y):
    out = add_p.abstract_eval(aval_of(x), aval_of(y))
    keep = y if isinstance(x, Zero) else x
    if isinstance(keep, Zero):
        return Zero(out)
    keep = convert(keep, dtype=out.dtype) if aval_of(keep).dtype != out.dtype else keep
    return keep if aval_of(keep).shape == out.shape else broadcast_to(keep, shape=out.shape)


add_p = register(Primitive("add", nargs=2, impl=operator.add, jvp=add_jvp, transpose=add_transpose,
                           abstract_eval=elementwise_aval("add", python_scalars=True), zero_rule=add_zero_rule))
add = _wrap(add_p)
add_p.batch = elementwise_batch(add)


# --- sub ---------------------------------------------------------------
def sub_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return sub(x, y), sub(x_dot, y_dot)


def sub_transpose(ct, x, y):
    ct_x, ct_y = dup(ct)
    return (_sum_to(ct_x, x) if isinstance(x, Linear) else None,
            _sum_to(neg(ct_y), y) if isinstance(y, Linear) else None)


def sub_zero_rule(x, y):
    if isinstance(x, Zero) and not isinstance(y, Zero):
        return add_zero_rule(x, neg(y))
    return add_zero_rule(x, y)


sub_p = register(Primitive("sub", nargs=2, impl=operator.sub, jvp=sub_jvp, transpose=sub_transpose,
                           abstract_eval=elementwise_aval("sub", python_scalars=True), zero_rule=sub_zero_rule))
sub = _wrap(sub_p)
sub_p.batch = elementwise_batch(sub)


# --- neg ---------------------------------------------------------------
def neg_jvp(primals, tangents):
    return neg(primals[0]), neg(tangents[0])


def neg_transpose(ct, x):
    return (neg(ct),)


neg_p = register(Primitive("neg", nargs=1, impl=operator.neg, jvp=neg_jvp, transpose=neg_transpose,
                           abstract_eval=elementwise_aval("neg", python_scalars=True)))
neg_p.zero_rule = zero_if_any(neg_p)
neg = _wrap(neg_p)
neg_p.batch = elementwise_batch(neg)


# --- mul ---------------------------------------------------------------
def mul_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    # a constant operand (zero tangent) is the common case: one term, no add
    if type(x_dot) is Zero:
        return mul(x, y), mul(x, y_dot)
    if type(y_dot) is Zero:
        return mul(x, y), mul(x_dot, y)
    if x is y and x_dot is y_dot:
        # x * x: one product with 2x, instead of x_dot x + x x_dot
        return mul(x, y), mul(x_dot, add(x, x))
    return mul(x, y), add(mul(x_dot, y), mul(x, y_dot))


def mul_transpose(ct, x, y):
    assert isinstance(x, Linear) != isinstance(y, Linear), "mul is linear in one operand"
    if isinstance(x, Linear):
        return _sum_to(mul(ct, y), x), None
    return None, _sum_to(mul(x, ct), y)


mul_p = register(Primitive("mul", nargs=2, impl=operator.mul, jvp=mul_jvp, transpose=mul_transpose,
                           abstract_eval=elementwise_aval("mul", python_scalars=True)))
mul_p.zero_rule = zero_if_any(mul_p)
mul = _wrap(mul_p)
mul_p.batch = elementwise_batch(mul)


# --- div ---------------------------------------------------------------
def div_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = div(x, y)
    # d(x/y) = dx/y - (x/y) dy/y; the second term only when y varies
    if type(y_dot) is Zero:
        return out, div(x_dot, y)
    return out, sub(div(x_dot, y), mul(div(out, y), y_dot))


def div_transpose(ct, x, y):
    assert isinstance(x, Linear) and not isinstance(y, Linear), "div is linear in its numerator only"
    return _sum_to(div(ct, y), x), None


def div_zero_rule(x, y):
    if isinstance(y, Zero):
        y = np.zeros(y.aval.shape, y.aval.dtype)   # dividing by a zero is not a zero
        if not isinstance(x, Zero):
            return div(x, y)
    out = div_p.abstract_eval(aval_of(x), aval_of(y))
    return Zero(out)


div_p = register(Primitive("div", nargs=2, impl=operator.truediv, jvp=div_jvp, transpose=div_transpose,
                           abstract_eval=elementwise_aval("div", float_out=True, python_scalars=True),
                           zero_rule=div_zero_rule))
div = _wrap(div_p)
div_p.batch = elementwise_batch(div)


# --- pow ---------------------------------------------------------------
def pow_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = pow(x, y)
    # d/dx x^y = y x^(y-1), which is 0 where y = 0 (x^0 is 1 everywhere; the
    # formula gives 0 * inf at x = 0)
    if isinstance(x_dot, Zero):
        dx = None
    elif isinstance(y, (int, float)):
        dx = None if y == 0 else mul(x_dot, mul(y, pow(x, y - 1)))
    else:
        dx = mul(x_dot, where(equal(y, 0), 0.0, mul(y, pow(x, sub(y, 1)))))
    # the y_dot term needs log(x); it is only formed when y carries a tangent,
    # so integer and constant exponents of negative bases stay finite. At
    # x = 0 it is 0 (x^y log x -> 0 as x -> 0, y > 0), not 0 * -inf. A
    # Python-number base keeps a Python-number log, so float32 stays float32
    if isinstance(y_dot, Zero):
        dy = None
    elif isinstance(x, (int, float)):
        dy = None if x == 0 else mul(y_dot, mul(out, float(np.log(x))))
    else:
        dy = mul(y_dot, mul(out, log(where(equal(x, 0), 1.0, x))))
    if dx is None and dy is None:
        return out, Zero(aval_of(out))
    return out, dy if dx is None else dx if dy is None else add(dx, dy)


def _python_numbers_kept(ufunc):
    """``ufunc`` as an impl that gives two Python numbers a Python number, as
    Python's own ``**``, ``%`` and ``//`` do (``s ** 2`` of a Python float
    is one, weakly typed: NEP 50): NumPy's value, Python's type."""
    def impl(x, y):
        out = ufunc(x, y)
        if type(x) in _PY_NUMBERS and type(y) in _PY_NUMBERS:
            return out.item()
        return out
    impl.__name__ = f"{ufunc.__name__}_impl"
    return impl


_PY_NUMBERS = (int, float, complex)


# np.power, not Python's **: NumPy < 2.3 gives ``x ** 2.0`` and ``x ** 0.5``
# fast paths of their own, which round differently in float32
pow_p = register(Primitive("pow", nargs=2, impl=_python_numbers_kept(np.power), jvp=pow_jvp,
                           transpose=NOT_LINEAR,
                           abstract_eval=elementwise_aval("pow", python_scalars=True)))
pow = _wrap(pow_p)


# --- exp, log, log1p, expm1, sqrt --------------------------------------
def exp_jvp(primals, tangents):
    out = exp(primals[0])
    return out, mul(tangents[0], out)


exp_p = _unary("exp", np.exp, exp_jvp)
exp = _wrap(exp_p)


def log_jvp(primals, tangents):
    x, = primals
    return log(x), div(tangents[0], x)


log_p = _unary("log", np.log, log_jvp)
log = _wrap(log_p)


def log1p_jvp(primals, tangents):
    x, = primals
    return log1p(x), div(tangents[0], add(x, 1.0))


log1p_p = _unary("log1p", np.log1p, log1p_jvp)
log1p = _wrap(log1p_p)


def expm1_jvp(primals, tangents):
    x, = primals
    out = expm1(x)
    return out, mul(tangents[0], add(out, 1.0))


expm1_p = _unary("expm1", np.expm1, expm1_jvp)
expm1 = _wrap(expm1_p)


def sqrt_jvp(primals, tangents):
    out = sqrt(primals[0])
    return out, div(tangents[0], mul(2.0, out))


sqrt_p = _unary("sqrt", np.sqrt, sqrt_jvp)
sqrt = _wrap(sqrt_p)


# --- sin, cos, tan -----------------------------------------------------
def sin_jvp(primals, tangents):
    x, = primals
    return sin(x), mul(tangents[0], cos(x))


sin_p = _unary("sin", np.sin, sin_jvp)
sin = _wrap(sin_p)


def cos_jvp(primals, tangents):
    x, = primals
    return cos(x), neg(mul(tangents[0], sin(x)))


cos_p = _unary("cos", np.cos, cos_jvp)
cos = _wrap(cos_p)


def tan_jvp(primals, tangents):
    out = tan(primals[0])
    return out, mul(tangents[0], add(1.0, mul(out, out)))


tan_p = _unary("tan", np.tan, tan_jvp)
tan = _wrap(tan_p)


# --- arcsin, arccos, arctan, arctan2 ------------------------------------
def arcsin_jvp(primals, tangents):
    x, = primals
    return arcsin(x), div(tangents[0], sqrt(sub(1.0, mul(x, x))))


arcsin_p = _unary("arcsin", np.arcsin, arcsin_jvp)
arcsin = _wrap(arcsin_p)


def arccos_jvp(primals, tangents):
    x, = primals
    return arccos(x), neg(div(tangents[0], sqrt(sub(1.0, mul(x, x)))))


arccos_p = _unary("arccos", np.arccos, arccos_jvp)
arccos = _wrap(arccos_p)


def arctan_jvp(primals, tangents):
    x, = primals
    return arctan(x), div(tangents[0], add(1.0, mul(x, x)))


arctan_p = _unary("arctan", np.arctan, arctan_jvp)
arctan = _wrap(arctan_p)


def arctan2_jvp(primals, tangents):
    y, x = primals
    y_dot, x_dot = tangents
    denom = add(mul(x, x), mul(y, y))
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    return arctan2(y, x), sub(mul(y_dot, div(x, denom)), mul(x_dot, div(y, denom)))


arctan2_p = register(Primitive("arctan2", nargs=2, impl=np.arctan2, jvp=arctan2_jvp,
                               transpose=NOT_LINEAR,
                               abstract_eval=elementwise_aval("arctan2", float_out=True)))
arctan2 = _wrap(arctan2_p)


# --- logaddexp ---------------------------------------------------------
def logaddexp_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = logaddexp(x, y)
    # d log(e^x + e^y) = e^(x-out) dx + e^(y-out) dy: both weights lie in
    # [0, 1], so the rule is stable where the naive form overflows
    if type(x_dot) is Zero:
        return out, mul(y_dot, exp(sub(y, out)))
    if type(y_dot) is Zero:
        return out, mul(x_dot, exp(sub(x, out)))
    return out, add(mul(x_dot, exp(sub(x, out))), mul(y_dot, exp(sub(y, out))))


logaddexp_p = register(Primitive("logaddexp", nargs=2, impl=np.logaddexp, jvp=logaddexp_jvp,
                                 transpose=NOT_LINEAR,
                                 abstract_eval=elementwise_aval("logaddexp", float_out=True)))
logaddexp = _wrap(logaddexp_p)


# --- sinh, cosh, tanh --------------------------------------------------
def sinh_jvp(primals, tangents):
    x, = primals
    return sinh(x), mul(tangents[0], cosh(x))


sinh_p = _unary("sinh", np.sinh, sinh_jvp)
sinh = _wrap(sinh_p)


def cosh_jvp(primals, tangents):
    x, = primals
    return cosh(x), mul(tangents[0], sinh(x))


cosh_p = _unary("cosh", np.cosh, cosh_jvp)
cosh = _wrap(cosh_p)


def tanh_jvp(primals, tangents):
    out = tanh(primals[0])
    return out, mul(tangents[0], sub(1.0, mul(out, out)))


tanh_p = _unary("tanh", np.tanh, tanh_jvp)
tanh = _wrap(tanh_p)


# --- erf ---------------------------------------------------------------
# NumPy has no erf; math.erf, elementwise, computes it (in float64, then
# cast to a float32 operand's dtype)
_erf_elementwise = np.frompyfunc(math.erf, 1, 1)


def erf_impl(x):
    a = np.asarray(x)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    return np.asarray(_erf_elementwise(a), dtype=dtype)[()]


def erf_jvp(primals, tangents):
    x, = primals
    # d erf(x) = 2 / sqrt(pi) exp(-x^2) dx
    return erf(x), mul(tangents[0], mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))))


erf_p = _unary("erf", erf_impl, erf_jvp)
erf = _wrap(erf_p)


# --- abs, sign ---------------------------------------------------------
def abs_jvp(primals, tangents):
    x, = primals
    if aval_of(x).dtype.kind == "c":
        from .complex_parts import complex_abs_jvp    # |z| is not holomorphic
        return complex_abs_jvp(x, tangents[0])
    return abs(x), mul(tangents[0], sign(x))


def abs_aval(x):
    """|z| of a complex value is real (complex64 -> float32)."""
    out = _abs_elementwise_aval(x)
    if out.dtype.kind == "c":
        return Aval(out.shape, np.empty(0, out.dtype).real.dtype, weak=out.weak)
    return out


# Python's abs, like the operators above: np.absolute on arrays and NumPy
# scalars, and a Python float stays one (a ufunc on it costs ~6x more)
_abs_elementwise_aval = elementwise_aval("abs", python_scalars=True)
abs_p = register(Primitive("abs", nargs=1, impl=operator.abs, jvp=abs_jvp, transpose=NOT_LINEAR,
                           abstract_eval=abs_aval))
abs = _wrap(abs_p)

sign_p = _unary("sign", np.sign, None, float_out=False)
sign = _wrap(sign_p)
sign_p.jvp = _zero_jvp(sign)


# --- floor, ceil, round (zero derivative) ------------------------------
floor_p = _unary("floor", np.floor, None)
floor = _wrap(floor_p)
floor_p.jvp = _zero_jvp(floor)

ceil_p = _unary("ceil", np.ceil, None)
ceil = _wrap(ceil_p)
ceil_p.jvp = _zero_jvp(ceil)


def round_impl(x, decimals=0):
    return np.round(x, decimals)


round_p = register(Primitive("round", nargs=1, impl=round_impl, jvp=None, transpose=NOT_LINEAR,
                             abstract_eval=elementwise_aval("round")))
round = _wrap(round_p)
round_p.jvp = _zero_jvp(round)


# --- where (select) ----------------------------------------------------
def where_jvp(primals, tangents, ):
    c, x, y = primals
    _, x_dot, y_dot = tangents
    return where(c, x, y), where(c, x_dot, y_dot)


def where_transpose(ct, c, x, y):
    zero = np.zeros((), aval_of(ct).dtype)
    return (None,
            _sum_to(where(c, ct, zero), x) if isinstance(x, Linear) else None,
            _sum_to(where(c, zero, ct), y) if isinstance(y, Linear) else None)


def where_aval(c, x, y):
    from .rules import broadcast_shapes, result_dtype
    return Aval(broadcast_shapes(c.shape, x.shape, y.shape, name="where"), result_dtype(x, y))


def where_zero_rule(c, x, y):
    if isinstance(x, Zero) and isinstance(y, Zero):
        return Zero(where_aval(aval_of(c), x.aval, y.aval))
    # the zero side as concrete zeros of its own aval (a Python float's is 0.0)
    return where(c, instantiate(x), instantiate(y))


where_p = register(Primitive("where", nargs=3, impl=np.where, jvp=where_jvp,
                             transpose=where_transpose, abstract_eval=where_aval,
                             zero_rule=where_zero_rule))
where = _wrap(where_p)
where_p.batch = elementwise_batch(where)


# --- maximum, minimum --------------------------------------------------
def _pick_weights(first, tie, dtype):
    """1 where ``first`` holds, 1/2 at ties, else 0, in the operands' dtype."""
    one, half, zero = (np.asarray(v, dtype) for v in (1.0, 0.5, 0.0))
    return where(first, one, where(tie, half, zero))


def maximum_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = maximum(x, y)
    # ties split the derivative evenly, so max(x, x) has derivative 1
    pick_x = _pick_weights(greater(x, y), equal(x, y), aval_of(out).dtype)
    return out, add(mul(x_dot, pick_x), mul(y_dot, sub(1.0, pick_x)))


maximum_p = register(Primitive("maximum", nargs=2, impl=np.maximum, jvp=maximum_jvp,
                               transpose=NOT_LINEAR, abstract_eval=elementwise_aval("maximum")))
maximum = _wrap(maximum_p)


def minimum_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = minimum(x, y)
    pick_x = _pick_weights(less(x, y), equal(x, y), aval_of(out).dtype)
    return out, add(mul(x_dot, pick_x), mul(y_dot, sub(1.0, pick_x)))


minimum_p = register(Primitive("minimum", nargs=2, impl=np.minimum, jvp=minimum_jvp,
                               transpose=NOT_LINEAR, abstract_eval=elementwise_aval("minimum")))
minimum = _wrap(minimum_p)


# --- remainder, floor_divide ---------------------------------------------
def remainder_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = remainder(x, y)
    # x mod y = x - floor(x / y) y: slope 1 in x, -floor(x / y) in y
    if type(y_dot) is Zero:
        return out, x_dot
    return out, sub(x_dot, mul(y_dot, floor_divide(x, y)))


remainder_p = register(Primitive("remainder", nargs=2, impl=_python_numbers_kept(np.remainder),
                                 jvp=remainder_jvp, transpose=NOT_LINEAR,
                                 abstract_eval=elementwise_aval("remainder", python_scalars=True)))
remainder = _wrap(remainder_p)

floor_divide_p = register(Primitive("floor_divide", nargs=2,
                                    impl=_python_numbers_kept(np.floor_divide), jvp=None,
                                    transpose=NOT_LINEAR,
                                    abstract_eval=elementwise_aval("floor_divide",
                                                                   python_scalars=True)))
floor_divide = _wrap(floor_divide_p)
floor_divide_p.jvp = _zero_jvp(floor_divide)


# --- comparisons and logical operations (not differentiated) -----------
def _predicate(name, impl, nargs=2):
    prim = register(Primitive(name, nargs=nargs, impl=impl, jvp=None, transpose=NOT_LINEAR,
                              abstract_eval=elementwise_aval(name, out_dtype=np.bool_,
                                                             python_scalars=python_operator(impl)),
                              differentiable=False))
    return prim, _wrap(prim)


less_p, less = _predicate("less", operator.lt)
less_equal_p, less_equal = _predicate("less_equal", operator.le)
greater_p, greater = _predicate("greater", operator.gt)
greater_equal_p, greater_equal = _predicate("greater_equal", operator.ge)
equal_p, equal = _predicate("equal", operator.eq)
not_equal_p, not_equal = _predicate("not_equal", operator.ne)
logical_and_p, logical_and = _predicate("logical_and", np.logical_and)
logical_or_p, logical_or = _predicate("logical_or", np.logical_or)
logical_xor_p, logical_xor = _predicate("logical_xor", np.logical_xor)
logical_not_p, logical_not = _predicate("logical_not", np.logical_not, nargs=1)
isfinite_p, isfinite = _predicate("isfinite", np.isfinite, nargs=1)


# --- convert (astype; float() with weak=True) ----------------------------
# ``weak``: the result is a Python scalar (``float(x)``, what ``math.sin``
# returns), which NumPy's promotion treats as weakly typed (NEP 50): it
# yields to an array's dtype, where a NumPy float64 would not
def convert_impl(x, dtype, weak=False):
    out = np.asarray(x).astype(dtype)
    # a 0-d result is a NumPy scalar, as NumPy's own operations give (not a
    # 0-d array, which a user would see as array(0.5))
    return out.item() if weak else out[()]


def convert_aval(x, dtype, weak=False):
    if weak and x.shape != ():
        from .rules import shape_error
        raise shape_error(f"convert: a Python scalar (weak=True) of shape {x.shape}")
    return Aval(x.shape, dtype, weak=weak)


def convert_jvp(primals, tangents, dtype, weak=False):
    x, = primals
    out = convert(x, dtype=dtype, **_weak(weak))
    if np.dtype(dtype).kind not in "fc":
        return out, Zero(aval_of(out))
    return out, convert(tangents[0], dtype=dtype, **_weak(weak))


def convert_transpose(ct, x, dtype, weak=False):
    # real -> complex transposes to the real part (cast_float), not to
    # NumPy's complex -> real cast, which warns
    return (convert(cast_float(ct, x.aval), dtype=x.aval.dtype),)


def convert_batch(args, batched, dtype, weak=False):
    # a batch of Python scalars is an array: the batched result is strong
    return convert(args[0], dtype=dtype)


def _weak(weak):
    """The params of a weak conversion (none for the usual, strong one, so
    its equations print and generate code as before)."""
    return {"weak": True} if weak else {}


convert_p = register(Primitive("convert", nargs=1, impl=convert_impl, jvp=convert_jvp,
                               transpose=convert_transpose, abstract_eval=convert_aval,
                               batch=convert_batch))
convert_p.zero_rule = zero_if_any(convert_p)
convert = _wrap(convert_p)


def python_scalar(x, dtype=np.float64):
    """``float(x)`` of a 0-d value: a Python scalar of ``dtype``'s kind, weakly
    typed (NEP 50), as ``float()`` and ``math`` functions give."""
    av = aval_of(x)
    if av.weak and av.dtype == np.dtype(dtype):
        return x
    return convert(x, dtype=np.dtype(dtype), weak=True)


def cast_float(t, aval):
    """A tangent or cotangent ``t`` of a value of ``aval``, of that value's
    float dtype: a float32 value's is float32 even where a rule computed it
    against float64 operands (as NumPy's promotion does). A Python scalar's
    (weakly typed) is left as it is: inside a derivative, whether a float64
    scalar is a Python or a NumPy one changes no dtype downstream (each
    value's derivative is cast to its dtype); ``cast_exact`` makes it so
    where a derivative is handed out.

    A complex ``t`` for a real value is its real part: a real operand of a
    complex operation (``1j * x``) was promoted to complex implicitly, and
    the transpose of that promotion is ``real`` (JAX's convention: a real
    value's cotangent is real). complex64 stays complex64 as float32 does."""
    dt = getattr(t, "dtype", None)
    if dt is None:
        return t.real if type(t) is complex and aval.dtype.kind == "f" else t
    if dt.kind == "c" and aval.dtype.kind == "f":
        from .complex_parts import real      # complex_parts builds on this module
        t = real(t)
        dt = aval_of(t).dtype
    if dt != aval.dtype and dt.kind in "fc" and dt.kind == aval.dtype.kind and not aval.weak:
        return convert(t, dtype=aval.dtype)
    return t


def cast_exact(t, aval):
    """``t`` as the derivative handed out for a value of ``aval``: its dtype,
    and a Python float for a Python float (weakly typed), a NumPy value for
    a NumPy one, so it promotes what it meets as the value does (NEP 50).
    A complex value's is of its complex dtype; a real value's is real."""
    if aval.dtype.kind == "c":
        have = aval_of(t)
        if aval.weak:       # a Python complex's is one
            return t if have.weak or aval.shape != () else python_scalar(t, aval.dtype)
        return convert(t, dtype=aval.dtype) if have.dtype != aval.dtype or have.weak else t
    if aval.dtype.kind != "f":
        return t
    t = cast_float(t, aval) if aval_of(t).dtype.kind == "c" else t
    have = aval_of(t)
    if have.dtype.kind == "f" and have.dtype != aval.dtype and not aval.weak:
        return convert(t, dtype=aval.dtype)     # a Python float's for a float32 value too
    if aval.weak:
        return t if have.weak or aval.shape != () else python_scalar(t, aval.dtype)
    return convert(t, dtype=aval.dtype) if have.weak else t


# --- plain functions over primitives (no rules of their own) -----------
def square(x):
    return mul(x, x)


def reciprocal(x):
    return div(1.0, x)


def clip(x, lo=None, hi=None):
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


def sigmoid(x):
    # written through tanh: stable for large |x| in both directions
    return mul(0.5, add(tanh(mul(0.5, x)), 1.0))
