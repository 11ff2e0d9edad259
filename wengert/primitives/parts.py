"""A floating-point number's parts: ``fmod`` (the remainder of truncated division),
``modf`` (fractional and integer parts), ``frexp`` (mantissa and exponent) and ``ldexp``
(``x * 2**i``), each computed by NumPy's ufunc, so the values are NumPy's bit for bit.

Their derivatives: ``fmod(x, y) = x - trunc(x / y) y`` has slope 1 in ``x`` and
``-trunc(x / y)`` in ``y``; ``modf``'s fractional part slope 1, its integer part none;
``frexp``'s mantissa ``x 2**-e`` slope ``2**-e`` (the exponent, an integer, none);
``ldexp`` is linear in ``x``. At the jumps (``x / y`` an integer, ``x`` a power of two)
the derivative is the one-sided one of the side NumPy's value is on.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, aval_of
from ..core.primitive import NOT_LINEAR, ZERO_IF_ANY, Primitive, Zero, register
from ..core.shapes import elementwise_aval
from ..core.trace import bind, wrapper_of
from .arith import div, mul, neg, sub
from .predicates import trunc
from .shape import sum_to_shape
from ..core.deps import elementwise

__all__ = ["fmod", "modf", "frexp", "ldexp"]


# --- fmod -----------------------------------------------------------------------------
def fmod_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = fmod(x, y)
    if type(y_dot) is Zero:
        return out, x_dot
    return out, sub(x_dot, mul(y_dot, trunc(div(x, y))))


fmod_p = register(Primitive("fmod", nargs=2, impl=np.fmod, jvp=fmod_jvp, transpose=NOT_LINEAR,
                            abstract_eval=elementwise_aval("fmod")))
fmod = wrapper_of(fmod_p)


# --- modf -----------------------------------------------------------------------------
def _parts_aval(x):
    out = elementwise_aval("modf", float_out=True)(x)
    return (out, out)


def modf_jvp(primals, tangents):
    frac, whole = modf(primals[0])
    return (frac, whole), (tangents[0], Zero(aval_of(whole)))


def first_part_sparsity(an, ops, outs):
    """The fraction (mantissa) follows its element; the whole part (exponent) is constant
    almost everywhere: it depends on nothing."""
    return elementwise(outs[0].shape, ops), None


modf_p = register(Primitive("modf", nargs=1, impl=np.modf, jvp=modf_jvp, transpose=NOT_LINEAR,
                            abstract_eval=_parts_aval, multiple_results=True,
                            numpy_scalar=True, sparsity=first_part_sparsity))


def modf(x):
    return bind(modf_p, x)


# --- frexp ----------------------------------------------------------------------------
def frexp_aval(x):
    out = elementwise_aval("frexp", float_out=True)(x)
    return (out, Aval(out.shape, np.int32))


def frexp_jvp(primals, tangents):
    mantissa, exponent = frexp(primals[0])
    return (mantissa, exponent), (ldexp(tangents[0], neg(exponent)), Zero(aval_of(exponent)))


frexp_p = register(Primitive("frexp", nargs=1, impl=np.frexp, jvp=frexp_jvp,
                             transpose=NOT_LINEAR, abstract_eval=frexp_aval,
                             multiple_results=True, numpy_scalar=True,
                             sparsity=first_part_sparsity))


def frexp(x):
    return bind(frexp_p, x)


# --- ldexp ----------------------------------------------------------------------------
def ldexp_aval(x, i):
    out = elementwise_aval("ldexp", float_out=True)(x, i)
    # NumPy's loops keep x's float dtype, whatever the exponents' integer type
    return Aval(out.shape, x.dtype if x.dtype.kind == "f" and not x.weak else np.float64)


def ldexp_jvp(primals, tangents):
    x, i = primals
    return ldexp(x, i), ldexp(tangents[0], i)


def ldexp_transpose(ct, x, i):
    return sum_to_shape(ldexp(ct, i), x.aval.shape), None


def ldexp_sparsity(an, ops, outs):
    """Elementwise; an exponent of 0 still passes the mantissa (not a product's zero)."""
    return elementwise(outs[0].shape, ops)


ldexp_p = register(Primitive("ldexp", nargs=2, impl=np.ldexp, jvp=ldexp_jvp,
                             transpose=ldexp_transpose, abstract_eval=ldexp_aval,
                             zero_rule=ZERO_IF_ANY, numpy_scalar=True,
                             sparsity=ldexp_sparsity))
ldexp = wrapper_of(ldexp_p)
