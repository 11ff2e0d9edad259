"""Bessel functions as primitives: ``jv``, ``yv``, ``iv``, ``ive``, ``kv`` of
order ``v`` and argument ``x``, and SciPy's faster ufuncs for orders 0 and 1
(``i0``, ``i1``, ``i0e``, ``i1e``).

Each row is made as the other special-function rows are (``primitives.special``:
the impl calls SciPy, imported on first use; the dtype is SciPy's). A
derivative in ``x`` is the function's neighbours (``jv' = (j_{v-1} - j_{v+1})
/ 2``), written with these wrappers, so every order follows; a derivative in
the order ``v`` is not implemented: a tangent there raises
``NoDerivativeRule``, never a wrong value.

Layer: primitives.
"""
from __future__ import annotations

from .arith import add, mul, sub
from .ordering import sign
from ..core.primitive import Zero
from .special import special_row, refuse_tangent

__all__ = ["jv", "yv", "iv", "ive", "kv", "i0", "i1", "i0e", "i1e"]


# --- Bessel functions of order v (derivative in x only) -----------------------------
def _bessel_jvp(name, combine):
    def jvp(primals, tangents):
        wrapper = globals()[name]       # defined by the registration below
        v, x = primals
        v_dot, x_dot = tangents
        refuse_tangent(v_dot, f"the derivative of scipy.special.{name}(v, x) in the order v")
        out = wrapper(v, x)
        if isinstance(x_dot, Zero):
            return out, Zero.like(out)
        return out, mul(x_dot, combine(v, x, out))
    jvp.__name__ = f"{name}_jvp"
    return jvp


def _jv_slope(v, x, out):
    # J_v' = (J_{v-1} - J_{v+1}) / 2, and the same for Y_v
    return mul(0.5, sub(jv(sub(v, 1.0), x), jv(add(v, 1.0), x)))


def _yv_slope(v, x, out):
    return mul(0.5, sub(yv(sub(v, 1.0), x), yv(add(v, 1.0), x)))


def _iv_slope(v, x, out):
    # I_v' = (I_{v-1} + I_{v+1}) / 2
    return mul(0.5, add(iv(sub(v, 1.0), x), iv(add(v, 1.0), x)))


def _ive_slope(v, x, out):
    # ive = iv exp(-|x|): the sum rule, less sign(x) ive
    return sub(mul(0.5, add(ive(sub(v, 1.0), x), ive(add(v, 1.0), x))), mul(sign(x), out))


def _kv_slope(v, x, out):
    # K_v' = -(K_{v-1} + K_{v+1}) / 2
    return mul(-0.5, add(kv(sub(v, 1.0), x), kv(add(v, 1.0), x)))


jv_p, jv = special_row("jv", 2, _bessel_jvp("jv", _jv_slope))
yv_p, yv = special_row("yv", 2, _bessel_jvp("yv", _yv_slope))
iv_p, iv = special_row("iv", 2, _bessel_jvp("iv", _iv_slope))
ive_p, ive = special_row("ive", 2, _bessel_jvp("ive", _ive_slope))
kv_p, kv = special_row("kv", 2, _bessel_jvp("kv", _kv_slope))


# --- i0, i1, i0e, i1e (orders 0 and 1 of iv, ive: SciPy's faster ufuncs) -----------
def i0_jvp(primals, tangents):
    x, = primals
    return i0(x), mul(tangents[0], i1(x))


i0_p, i0 = special_row("i0", 1, i0_jvp)


def i1_jvp(primals, tangents):
    x, = primals
    # (I_0 + I_2) / 2: no division by x, so no special case at 0
    return i1(x), mul(tangents[0], mul(0.5, add(i0(x), iv(2.0, x))))


i1_p, i1 = special_row("i1", 1, i1_jvp)


def i0e_jvp(primals, tangents):
    x, = primals
    out = i0e(x)
    return out, mul(tangents[0], sub(i1e(x), mul(sign(x), out)))


i0e_p, i0e = special_row("i0e", 1, i0e_jvp)


def i1e_jvp(primals, tangents):
    x, = primals
    out = i1e(x)
    slope = sub(mul(0.5, add(i0e(x), ive(2.0, x))), mul(sign(x), out))
    return out, mul(tangents[0], slope)


i1e_p, i1e = special_row("i1e", 1, i1e_jvp)
