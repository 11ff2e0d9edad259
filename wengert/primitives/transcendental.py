"""Transcendental elementwise primitives: ``pow``, ``exp``, ``log``,
``log1p``, ``expm1``, ``sqrt``, the trigonometric and hyperbolic functions
and their inverses, ``arctan2``, ``logaddexp``, ``erf``; ``sigmoid`` over
``tanh``.

Each block: banner, rule functions, one registration (``rules._unary`` for
the unary ones). Rules use the primitive wrappers, so they differentiate
again; more unary functions (``log2``, ``exp2``...) are in ``elementwise``.

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from .arith import add, div, mul, neg, sub
from .safe import safe_div, safe_mul
from .unbounded import unbounded_div, unbounded_mul
from .selection import where
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import wrapper_of
from .ordering import equal
from ..core.rules import python_numbers_kept, unary_row
from ..core.shapes import elementwise_aval
from ..core.pass_rules import DefinedCall, PythonNumbersKept, drops_identity
from ..core.ir import Lit, aval_of

_wrap = wrapper_of


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
        # y x^(y-1) is finite for finite x where y >= 1; below, it is infinite
        # at x = 0, where a zero tangent must stay zero (``safe``), and where
        # x ** y is finite (0 < y < 1) a wild derivative (``unbounded``)
        times = mul if y >= 1 else unbounded_mul if y > 0 else safe_mul
        dx = None if y == 0 else times(x_dot, mul(y, pow(x, y - 1)))
    else:
        dx = unbounded_mul(x_dot, where(equal(y, 0), 0.0, mul(y, pow(x, sub(y, 1)))))
    # the y_dot term needs log(x); it is only formed when y carries a tangent,
    # so integer and constant exponents of negative bases stay finite. At
    # x = 0 it is 0 (x^y log x -> 0 as x -> 0, y > 0), not 0 * -inf. A
    # Python-number base keeps a Python-number log, so float32 stays float32
    if isinstance(y_dot, Zero):
        dy = None
    elif isinstance(x, (int, float)):
        dy = None if x == 0 else safe_mul(y_dot, mul(out, float(np.log(x))))
    else:
        dy = safe_mul(y_dot, mul(out, log(where(equal(x, 0), 1.0, x))))
    if dx is None and dy is None:
        return out, Zero(aval_of(out))
    return out, dy if dx is None else dx if dy is None else add(dx, dy)


# np.power, not Python's **: NumPy < 2.3 gives ``x ** 2.0`` and ``x ** 0.5``
# fast paths of their own, which round differently in float32


class PowEmit(PythonNumbersKept):
    """``np.power(x, y)``; a real square by a Python ``2`` is ``x * x``, the
    same value (``pow(x, 2)`` is exact to the last bit, as a product is) at
    a tenth of the cost of a ufunc call on a scalar in a loop."""

    @staticmethod
    def _square(eqn):
        x, y = eqn.inputs
        return not eqn.params and isinstance(y, Lit) and type(y.val) in (int, float) \
            and y.val == 2 and x.aval.dtype.kind == "f" and x.aval.dtype.itemsize in (4, 8)

    def expression(self, code, eqn, ins, py):
        if self._square(eqn):
            base = code.atom(ins[0])
            return f"{base} * {base}"
        return super().expression(code, eqn, ins, py)

    def python_floats(self, eqn, kinds):
        if self._square(eqn):       # ``x * x``: a Python float's square is one
            if eqn.inputs[0].aval.dtype != np.float64:
                return None
            return (True, True), (kinds[0] == "float",)
        return super().python_floats(eqn, kinds)


pow_p = register(Primitive("pow", nargs=2, impl=python_numbers_kept(np.power), jvp=pow_jvp,
                           transpose=NOT_LINEAR,
                           abstract_eval=elementwise_aval("pow", python_scalars=True),
                           simplify=drops_identity(right=1.0), emit=PowEmit("power"),
                           complex_ok=True,
                           batch=BROADCASTING))
pow = _wrap(pow_p)


# --- exp, log, log1p, expm1, sqrt --------------------------------------
def exp_jvp(primals, tangents):
    out = exp(primals[0])
    return out, mul(tangents[0], out)


exp_p = unary_row("exp", np.exp, exp_jvp, complex_ok=True)
exp = _wrap(exp_p)


def log_jvp(primals, tangents):
    x, = primals
    return log(x), safe_div(tangents[0], x)


log_p = unary_row("log", np.log, log_jvp, complex_ok=True)
log = _wrap(log_p)


def log1p_jvp(primals, tangents):
    x, = primals
    return log1p(x), safe_div(tangents[0], add(x, 1.0))


log1p_p = unary_row("log1p", np.log1p, log1p_jvp, complex_ok=True)
log1p = _wrap(log1p_p)


def expm1_jvp(primals, tangents):
    x, = primals
    out = expm1(x)
    return out, mul(tangents[0], add(out, 1.0))


expm1_p = unary_row("expm1", np.expm1, expm1_jvp, complex_ok=True)
expm1 = _wrap(expm1_p)


def sqrt_jvp(primals, tangents):
    out = sqrt(primals[0])
    return out, unbounded_div(tangents[0], mul(2.0, out))


sqrt_p = unary_row("sqrt", np.sqrt, sqrt_jvp, complex_ok=True)
sqrt = _wrap(sqrt_p)


# --- sin, cos, tan -----------------------------------------------------
def sin_jvp(primals, tangents):
    x, = primals
    return sin(x), mul(tangents[0], cos(x))


sin_p = unary_row("sin", np.sin, sin_jvp, complex_ok=True)
sin = _wrap(sin_p)


def cos_jvp(primals, tangents):
    x, = primals
    return cos(x), neg(mul(tangents[0], sin(x)))


cos_p = unary_row("cos", np.cos, cos_jvp, complex_ok=True)
cos = _wrap(cos_p)


def tan_jvp(primals, tangents):
    out = tan(primals[0])
    return out, mul(tangents[0], add(1.0, mul(out, out)))


tan_p = unary_row("tan", np.tan, tan_jvp, complex_ok=True)
tan = _wrap(tan_p)


# --- arcsin, arccos, arctan, arctan2 ------------------------------------
def arcsin_jvp(primals, tangents):
    x, = primals
    return arcsin(x), unbounded_div(tangents[0], sqrt(sub(1.0, mul(x, x))))


arcsin_p = unary_row("arcsin", np.arcsin, arcsin_jvp)
arcsin = _wrap(arcsin_p)


def arccos_jvp(primals, tangents):
    x, = primals
    return arccos(x), neg(unbounded_div(tangents[0], sqrt(sub(1.0, mul(x, x)))))


arccos_p = unary_row("arccos", np.arccos, arccos_jvp)
arccos = _wrap(arccos_p)


def arctan_jvp(primals, tangents):
    x, = primals
    return arctan(x), div(tangents[0], add(1.0, mul(x, x)))


arctan_p = unary_row("arctan", np.arctan, arctan_jvp)
arctan = _wrap(arctan_p)


def arctan2_jvp(primals, tangents):
    y, x = primals
    y_dot, x_dot = tangents
    denom = add(mul(x, x), mul(y, y))
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    return arctan2(y, x), sub(safe_mul(y_dot, div(x, denom)), safe_mul(x_dot, div(y, denom)))


arctan2_p = register(Primitive("arctan2", nargs=2, impl=np.arctan2, jvp=arctan2_jvp,
                               transpose=NOT_LINEAR,
                               abstract_eval=elementwise_aval("arctan2", float_out=True),
                               batch=BROADCASTING))
arctan2 = _wrap(arctan2_p)


# --- logaddexp ---------------------------------------------------------
def logaddexp_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = logaddexp(x, y)
    # d log(e^x + e^y) = w dx + (1 - w) dy with w = e^x / (e^x + e^y) = 1 / (1 + e^(y-x)),
    # the logistic function of x - y: in [0, 1] (e^(y-x) overflows to inf, w to 0), and it
    # does not read ``out``, so a derivative that needs no value computes no logaddexp
    if type(x_dot) is Zero:
        return out, div(y_dot, add(1.0, exp(sub(x, y))))
    if type(y_dot) is Zero:
        return out, div(x_dot, add(1.0, exp(sub(y, x))))
    w = div(1.0, add(1.0, exp(sub(y, x))))
    return out, add(mul(x_dot, w), mul(y_dot, sub(1.0, w)))


logaddexp_p = register(Primitive("logaddexp", nargs=2, impl=np.logaddexp, jvp=logaddexp_jvp,
                                 transpose=NOT_LINEAR,
                                 abstract_eval=elementwise_aval("logaddexp", float_out=True),
                                 batch=BROADCASTING))
logaddexp = _wrap(logaddexp_p)


# --- sinh, cosh, tanh --------------------------------------------------
def sinh_jvp(primals, tangents):
    x, = primals
    return sinh(x), mul(tangents[0], cosh(x))


sinh_p = unary_row("sinh", np.sinh, sinh_jvp, complex_ok=True)
sinh = _wrap(sinh_p)


def cosh_jvp(primals, tangents):
    x, = primals
    return cosh(x), mul(tangents[0], sinh(x))


cosh_p = unary_row("cosh", np.cosh, cosh_jvp, complex_ok=True)
cosh = _wrap(cosh_p)


def tanh_jvp(primals, tangents):
    out = tanh(primals[0])
    return out, mul(tangents[0], sub(1.0, mul(out, out)))


tanh_p = unary_row("tanh", np.tanh, tanh_jvp, complex_ok=True)
tanh = _wrap(tanh_p)


# --- erf ---------------------------------------------------------------
# NumPy has no erf; math.erf, elementwise, computes it (in float64, then
# cast to a float32 operand's dtype)
def erf_impl(x):
    if hasattr(x, "shape") and not isinstance(x, (np.ndarray, np.generic)):
        # another library's array (CuPy's): SciPy's erf, a ufunc it takes as its own
        import scipy.special
        return scipy.special.erf(x)
    a = np.asarray(x)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(a), dtype=dtype)[()]


def erf_jvp(primals, tangents):
    x, = primals
    # d erf(x) = 2 / sqrt(pi) exp(-x^2) dx
    return erf(x), mul(tangents[0], mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))))


erf_p = unary_row("erf", erf_impl, erf_jvp, emit=DefinedCall(erf_impl, any_library=True))
erf = _wrap(erf_p)


# --- sigmoid (plain function over tanh) ------------------------------
def sigmoid(x):
    # written through tanh: stable for large |x| in both directions
    return mul(0.5, add(tanh(mul(0.5, x)), 1.0))


# --- plain functions over primitives (no rules of their own) -----------
def square(x):
    return mul(x, x)


def reciprocal(x):
    return div(1.0, x)
