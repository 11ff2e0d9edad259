"""Elementwise arithmetic: add, sub, neg, mul (its derivative products: ``unbounded``), div,
convert, the complex parts real, imag, conj (conventions below); ``cast_float``, a derivative
cast to its value's float dtype. Elsewhere: casts at the user's boundary (``casts``), ``where``
(``selection``), piecewise functions (``ordering``), exp, log, sin, pow (``transcendental``).

The arithmetic and comparison impls are Python's operators: on arrays they are NumPy's
ufuncs, and on two Python numbers they keep Python's semantics, as the user's own ``x *
2.0`` does (a Python float stays weakly typed), and generated code can write ``a * b``.

Each block: banner, rule functions, one ``register`` call. Rules are written with the
wrappers below (never NumPy), so they differentiate again. Wrappers take NumPy broadcasting
semantics; transpose rules sum cotangents back to an operand's shape with ``sum_to_shape``.

Complex values follow JAX's conventions, so users meet what they know:

* the tangent of a complex value is complex, of its dtype; a real value's tangent and
  cotangent are real;
* transposition is the *linear* transpose, without conjugation: the transpose of
  ``t -> a * t`` is ``ct -> a * ct``. A cotangent ``c`` pairs with a tangent ``t`` by
  ``Re(sum(c * t))`` (bilinear, no conjugate); the transpose of every rule, holomorphic or
  not, satisfies ``Re(sum(ct * L(t))) == Re(sum(L^T(ct) * t))``;
* so ``grad`` of a real function of ``z = x + iy`` is ``df/dx - i df/dy``
  (``grad(abs(z)**2)(3+4j) == 6-8j``), and of a holomorphic function (with
  ``holomorphic=True``) it is ``f'(z)``.

``real``, ``imag`` and ``conj`` are linear over the reals but not holomorphic: under the
pairing above their transposes are ``ct + 0j``, ``-1j * ct`` and ``conj(ct)``. A row whose
rules were audited for complex values says so (``complex_ok=True``: holomorphic, or written
with real/imag/conj as above, its transpose the linear one, its shape rule NumPy's complex
dtype); complex operands of any other row raise ``UnsupportedDtypeError`` naming it. Absent on
purpose: orderings (less, maximum, argmax, sign, floor, remainder, clip...); arctan2,
logaddexp, erf (real functions); slogdet, cholesky; custom rules (written for what the user
had in mind).

Layer: primitives.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core import dims as _dims
from ..core.primitive import (
    BROADCASTING, ELEMENTWISE, OPERAND_KIND, ZERO_IF_ANY, Linear, Primitive, Zero, register)
from ..core.trace import wrapper_of
from ..core.rules import PY_NUMBERS, ElementwiseLower, EmitRule, ScaleLower
from ..core.shapes import elementwise_aval, shape_error
from ..core.pass_rules import (
    Algebra, BinaryOperator, PartEmit, UnaryMinus, drops_identity, is_scalar_lit)
from .fanout import dup
from .safe import safe_div, safe_mul
from .unbounded import derivative_mul as dmul
from .batched import product_batch
from .shape import broadcast_to, sum_to_shape
from ..core.ir import Aval, Eqn, Lit, Role, Var, aval_of, is_duck_array



def sum_to(ct, like):
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
    return (sum_to(ct_x, x) if isinstance(x, Linear) else None,
            sum_to(ct_y, y) if isinstance(y, Linear) else None)


def add_zero_rule(x, y):
    out = add_p.abstract_eval(aval_of(x), aval_of(y))
    keep = y if isinstance(x, Zero) else x
    if isinstance(keep, Zero):
        return Zero(out)
    keep = convert(keep, dtype=out.dtype) if aval_of(keep).dtype != out.dtype else keep
    return keep if aval_of(keep).shape == out.shape else broadcast_to(keep, shape=out.shape)


def add_move_sign(prim, ins, plain, negated, out):
    """``a + (-b)`` is ``a - b``."""
    a, b = ins
    return [Eqn(sub_p, (a, plain[1]) if negated[1] else (b, plain[0]), (out,), {})]


def int_offset(k, c, out):
    """``out = k + c`` for an int ``c``, written with its sign: ``k - 1``, not ``k + -1``."""
    return Eqn(add_p, (k, Lit(c)), (out,), {}) if c >= 0 else Eqn(sub_p, (k, Lit(-c)), (out,), {})


add_p = register(Primitive(
    "add", nargs=2, impl=operator.add, jvp=add_jvp, transpose=add_transpose,
    abstract_eval=elementwise_aval("add", python_scalars=True), zero_rule=add_zero_rule,
    batch=BROADCASTING, simplify=drops_identity(left=0.0, right=0.0),
    algebra=Algebra(move_sign=add_move_sign, scalar_literals="always", offset=1,
                    with_offset=int_offset, broadcasts=True),
    emit=BinaryOperator("+"), lower=ElementwiseLower(np.add, "+"), complex_ok=True))
add = wrapper_of(add_p)


# --- sub ---------------------------------------------------------------
def sub_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return sub(x, y), sub(x_dot, y_dot)


def sub_transpose(ct, x, y):
    ct_x, ct_y = dup(ct)
    # summed to ``y``'s shape, then negated: the sign goes on the smaller array (``x - a``
    # with a scalar ``a``: one sum and a scalar's sign, not a negated copy of ``ct`` summed)
    return (sum_to(ct_x, x) if isinstance(x, Linear) else None,
            neg(sum_to(ct_y, y)) if isinstance(y, Linear) else None)


def sub_zero_rule(x, y):
    if isinstance(x, Zero) and not isinstance(y, Zero):
        return add_zero_rule(x, neg(y))
    return add_zero_rule(x, y)


def sub_move_sign(prim, ins, plain, negated, out):
    """``a - (-b)`` is ``a + b`` (``-a - b`` stays: ``-(a + b)`` differs at
    ``a = 0.0, b = -0.0``)."""
    return [Eqn(add_p, (ins[0], plain[1]), (out,), {})] if negated[1] else None


sub_p = register(Primitive(
    "sub", nargs=2, impl=operator.sub, jvp=sub_jvp, transpose=sub_transpose,
    abstract_eval=elementwise_aval("sub", python_scalars=True), zero_rule=sub_zero_rule,
    batch=BROADCASTING, simplify=drops_identity(right=0.0),
    algebra=Algebra(move_sign=sub_move_sign, scalar_literals="always", offset=-1,
                    with_offset=int_offset, broadcasts=True),
    emit=BinaryOperator("-"), lower=ElementwiseLower(np.subtract, "-"), complex_ok=True))
sub = wrapper_of(sub_p)


# --- neg ---------------------------------------------------------------
def neg_jvp(primals, tangents):
    return neg(primals[0]), neg(tangents[0])


def neg_transpose(ct, x):
    return (neg(ct),)


neg_p = register(Primitive(
    "neg", nargs=1, impl=operator.neg, jvp=neg_jvp, transpose=neg_transpose,
    abstract_eval=elementwise_aval("neg", python_scalars=True), zero_rule=ZERO_IF_ANY,
    batch=BROADCASTING, algebra=Algebra(negation=True), emit=UnaryMinus(),
    lower=ElementwiseLower(np.negative), complex_ok=True))
neg = wrapper_of(neg_p)


# --- mul ---------------------------------------------------------------
def mul_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    # a constant operand (zero tangent) is the common case: one term, no add
    if type(x_dot) is Zero:
        return mul(x, y), dmul(x, y_dot)
    if type(y_dot) is Zero:
        return mul(x, y), dmul(x_dot, y)
    if x is y and x_dot is y_dot:
        # x * x: one product with 2x, instead of x_dot x + x x_dot
        return mul(x, y), dmul(x_dot, add(x, x))
    return mul(x, y), add(dmul(x_dot, y), dmul(x, y_dot))


def mul_transpose(ct, x, y):
    assert isinstance(x, Linear) != isinstance(y, Linear), "mul is linear in one operand"
    if isinstance(x, Linear):
        return sum_to(dmul(ct, y), x), None
    return None, sum_to(dmul(x, ct), y)


def mul_simplify(eqn, ins, copies):
    """``0 * x`` is a zero of the product's type (a scalar) in a tangent or
    cotangent (a zero differentiation made: it stands for "no contribution",
    as a symbolic zero would), never in a primal value, where IEEE's ``0 *
    inf`` is nan and ``0 * -2`` is -0.0 (``x[0] * 0.0`` of the user's);
    ``1 * x`` is ``x``."""
    out = eqn.outputs[0].aval
    a, b = ins
    derivative = eqn.outputs[0].role in (Role.TANGENT, Role.COTANGENT)
    for z, other in ((a, b), (b, a)):
        if derivative and is_scalar_lit(z, 0.0) and out.shape == () and out.dtype.kind in "fc":
            # a float32 zero times a Python float is float32; a Python zero
            # stays a Python number
            weak = other.aval.weak and z.aval.weak
            return [], [Lit(0.0 if weak and out.dtype == np.float64 else np.zeros((), out.dtype))]
        if is_scalar_lit(z, 1.0) and not isinstance(other, Lit) \
                and tuple(other.aval.shape) == tuple(out.shape) and other.aval.dtype == out.dtype:
            return [], [other]
    return None


def odd_move_sign(prim, ins, plain, negated, out):
    """The ``move_sign`` of a row odd in each operand: ``(-a) * b`` is
    ``-(a * b)`` and ``(-a) * (-b)`` is ``a * b``; only where the result is
    no larger than the negated operand (a sign never grows with broadcasting)."""
    if any(n and x.aval.shape != out.aval.shape for x, n in zip(ins, negated)):
        return None
    if all(negated):
        return [Eqn(prim, plain, (out,), {})]
    w = Var(out.aval, "", out.role)         # a temporary: ``out`` keeps the name
    return [Eqn(prim, plain, (w,), {}), Eqn(neg_p, (w,), (out,), {})]


mul_p = register(Primitive(
    "mul", nargs=2, impl=operator.mul, jvp=mul_jvp, transpose=mul_transpose,
    abstract_eval=elementwise_aval("mul", python_scalars=True), zero_rule=ZERO_IF_ANY,
    batch=product_batch, simplify=mul_simplify,
    algebra=Algebra(move_sign=odd_move_sign, scalar_literals="always", broadcasts=True),
    emit=BinaryOperator("*"), lower=ScaleLower(np.multiply, "*", operands=(0, 1)),
    complex_ok=True))
mul = wrapper_of(mul_p)


# --- div ---------------------------------------------------------------
def div_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = div(x, y)
    # d(x/y) = dx/y - (x/y) dy/y (the second only when y varies), each 0 where its tangent is
    if type(y_dot) is Zero:
        return out, safe_div(x_dot, y)
    if type(x_dot) is Zero:
        return out, neg(safe_mul(y_dot, div(out, y)))
    return out, sub(safe_div(x_dot, y), safe_mul(y_dot, div(out, y)))


def div_transpose(ct, x, y):
    assert isinstance(x, Linear) and not isinstance(y, Linear), "div is linear in its numerator only"
    return sum_to(div(ct, y), x), None


def div_zero_rule(x, y):
    if isinstance(y, Zero):
        y = np.zeros(y.aval.shape, y.aval.dtype)   # dividing by a zero is not a zero
        if not isinstance(x, Zero):
            return div(x, y)
    out = div_p.abstract_eval(aval_of(x), aval_of(y))
    return Zero(out)


div_p = register(Primitive(
    "div", nargs=2, impl=operator.truediv, jvp=div_jvp, transpose=div_transpose,
    abstract_eval=elementwise_aval("div", float_out=True, python_scalars=True),
    zero_rule=div_zero_rule, batch=BROADCASTING,
    algebra=Algebra(move_sign=odd_move_sign, scalar_literals="always", broadcasts=True),
    emit=BinaryOperator("/"), lower=ScaleLower(np.divide, "/", operands=(0,)),
    complex_ok=True))
div = wrapper_of(div_p)


# --- real, imag, conj (complex values: the conventions are in the module's docstring)
def real_dtype(dtype):
    """float32 for complex64, float64 for complex128; a real dtype is kept."""
    return np.empty(0, dtype).real.dtype


def _part_aval(x):
    """The real part's aval: same shape, the real dtype of the same width."""
    return Aval(x.shape, real_dtype(x.dtype), weak=x.weak)


# --- real --------------------------------------------------------------
def real_impl(x):
    if type(x) in PY_NUMBERS:
        return float(x.real)            # a Python number's part is one (weakly typed)
    return np.real(x).copy()[()]        # a copy: NumPy's is a view of the operand


def real_jvp(primals, tangents):
    return real(primals[0]), real(tangents[0])


def real_transpose(ct, x):
    # Re(c * real(t)) = Re((c + 0j) * t) for real c: the cotangent is ct as complex
    return (convert(ct, dtype=x.aval.dtype) if x.aval.dtype.kind == "c" else ct,)


real_p = register(Primitive("real", nargs=1, impl=real_impl, jvp=real_jvp,
                            transpose=real_transpose, abstract_eval=_part_aval,
                            zero_rule=ZERO_IF_ANY, batch=BROADCASTING, complex_ok=True,
                            sparsity=ELEMENTWISE,
                            emit=PartEmit("{np}.real({x}).copy()[()]", "float({x}.real)")))
real = wrapper_of(real_p)


# --- imag --------------------------------------------------------------
def imag_impl(x):
    if type(x) in PY_NUMBERS:
        return float(x.imag)
    return np.imag(x).copy()[()]


def imag_jvp(primals, tangents):
    return imag(primals[0]), imag(tangents[0])


def imag_transpose(ct, x):
    # Re(c * imag(t)) = c * t_y = Re(-1j * c * t) for real c
    if x.aval.dtype.kind != "c":
        return (Zero(x.aval),)          # a real value's imaginary part is constant 0
    return (mul(ct, -1j),)


imag_p = register(Primitive("imag", nargs=1, impl=imag_impl, jvp=imag_jvp,
                            transpose=imag_transpose, abstract_eval=_part_aval,
                            zero_rule=ZERO_IF_ANY, batch=BROADCASTING, complex_ok=True,
                            sparsity=ELEMENTWISE,
                            emit=PartEmit("{np}.imag({x}).copy()[()]", "float({x}.imag)")))
imag = wrapper_of(imag_p)


# --- conj --------------------------------------------------------------
def conj_impl(x):
    if type(x) in PY_NUMBERS:
        return x.conjugate()
    return np.conjugate(x)[()]


def conj_jvp(primals, tangents):
    return conj(primals[0]), conj(tangents[0])


def conj_transpose(ct, x):
    # Re(c * conj(t)) = Re(conj(c) * t): conj is its own transpose
    return (conj(ct),)


def _same_aval(x):
    return x


conj_p = register(Primitive("conj", nargs=1, impl=conj_impl, jvp=conj_jvp,
                            transpose=conj_transpose, abstract_eval=_same_aval,
                            zero_rule=ZERO_IF_ANY, batch=BROADCASTING, complex_ok=True,
                            sparsity=ELEMENTWISE,
                            emit=PartEmit("{np}.conjugate({x})[()]", "{x}.conjugate()")))
conj = wrapper_of(conj_p)


# --- convert (astype; float() with weak=True) ----------------------------
# ``weak``: the result is a Python scalar (``float(x)``, what ``math.sin``
# returns), which NumPy's promotion treats as weakly typed (NEP 50): it
# yields to an array's dtype, where a NumPy float64 would not
def convert_impl(x, dtype, weak=False):
    out = (x if is_duck_array(x) else np.asarray(x)).astype(dtype)   # Dask's stays lazy
    # a 0-d result is a NumPy scalar, as NumPy's own operations give (not a
    # 0-d array, which a user would see as array(0.5))
    return out.item() if weak else out[()]


def convert_aval(x, dtype, weak=False):
    if weak and x.shape != ():
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


class ConvertEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        params = eqn.params
        if set(params) == {"dtype"}:
            dt = np.dtype(params["dtype"])
            if not eqn.outputs[0].aval.shape and dt.kind in "fiub" and dt.isnative and not code.foreign:
                return f"{code.np}.{dt.name}({ins[0]})"     # a NumPy scalar, as NumPy gives
            return f"{code.np}.asarray({ins[0]}{code.made()}).astype({code.dtype(dt)})"
        if params == {"dtype": np.dtype(np.float64), "weak": True}:
            return code.refuse_lazy(eqn, "float()") if code.lazy else f"float({ins[0]})"

    def python_floats(self, eqn, kinds):
        """A float64 stand-in rounds to a float scalar as an ``np.float64``
        does (not to an int: ``np.int64(1e300)`` raises on a Python float)."""
        dt = eqn.params.get("dtype")
        if eqn.inputs[0].aval.dtype != np.float64 or eqn.outputs[0].aval.shape != () \
                or dt is None or np.dtype(dt).kind != "f":
            return None
        return (True,), (False,)


convert_p = register(Primitive("convert", nargs=1, impl=convert_impl, jvp=convert_jvp,
                               transpose=convert_transpose, abstract_eval=convert_aval,
                               batch=convert_batch, numpy_scalar=OPERAND_KIND,
                               zero_rule=ZERO_IF_ANY, emit=ConvertEmit(), complex_ok=True,
                               sparsity=ELEMENTWISE))
convert = wrapper_of(convert_p)




def cast_float(t, aval):
    """A tangent or cotangent ``t`` of a value of ``aval``, of that value's
    float dtype: a float32 value's is float32 even where a rule computed it
    against float64 operands (as NumPy's promotion does). A Python scalar's
    (weakly typed) is left as it is: inside a derivative, whether a float64
    scalar is a Python or a NumPy one changes no dtype downstream (each
    value's derivative is cast to its dtype); ``casts.cast_exact`` makes it so
    where a derivative is handed out.

    A complex ``t`` for a real value is its real part: a real operand of a
    complex operation (``1j * x``) was promoted to complex implicitly, and
    the transpose of that promotion is ``real`` (JAX's convention: a real
    value's cotangent is real). complex64 stays complex64 as float32 does."""
    dt = getattr(t, "dtype", None)
    if dt is None:
        return t.real if type(t) is complex and aval.dtype.kind == "f" else t
    if dt.kind == "c" and aval.dtype.kind == "f":
        t = real(t)
        dt = aval_of(t).dtype
    if dt != aval.dtype and dt.kind in "fc" and dt.kind == aval.dtype.kind and not aval.weak:
        return convert(t, dtype=aval.dtype)
    return t
