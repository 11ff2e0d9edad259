"""``convolve``: the full discrete convolution of two 1-D arrays, the one
primitive under ``np.convolve`` and ``np.correlate`` (their ``same`` and
``valid`` modes are slices of the full result, taken by the wrappers in
``numpy_math``).

It is bilinear, so its jvp is two convolutions and its transpose in either
operand is a correlation with the other (a full convolution with the other
reversed, sliced to the operand's length):

    c = convolve(a, v)       c[k] = sum_j a[j] v[k - j]
    ct_a[j] = sum_k ct[k] v[k - j] = convolve(ct, v[::-1])[len(v) - 1 + j]
"""
from __future__ import annotations

import numpy as np

from .arith import add
from .core import Linear, Primitive, Zero, register, wrapper_of, zero_if_any
from .index import getitem
from .rules import result_dtype, shape_error
from ..ir import Aval, aval_of

__all__ = ["convolve"]


# --- convolve ----------------------------------------------------------
def convolve_impl(a, v):
    return np.convolve(a, v)


def convolve_aval(a, v):
    if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
        raise shape_error(f"convolve: operands must be non-empty 1-D arrays, got shapes "
                          f"{a.shape} and {v.shape}")
    return Aval((a.shape[0] + v.shape[0] - 1,), result_dtype(a, v))


def convolve_jvp(primals, tangents):
    a, v = primals
    a_dot, v_dot = tangents
    out = convolve(a, v)
    if type(a_dot) is Zero:
        return out, convolve(a, v_dot)
    if type(v_dot) is Zero:
        return out, convolve(a_dot, v)
    return out, add(convolve(a_dot, v), convolve(a, v_dot))


def _correlate_back(ct, other, n):
    """The cotangent of an operand of length ``n`` convolved with ``other``."""
    m = aval_of(other).shape[0]
    full = convolve(ct, getitem(other, (slice(None, None, -1),)))
    return getitem(full, (slice(m - 1, m - 1 + n),))


def convolve_transpose(ct, a, v):
    assert isinstance(a, Linear) != isinstance(v, Linear), "convolve is linear in one operand"
    if isinstance(a, Linear):
        return _correlate_back(ct, v, a.aval.shape[0]), None
    return None, _correlate_back(ct, a, v.aval.shape[0])


convolve_p = register(Primitive("convolve", nargs=2, impl=convolve_impl, jvp=convolve_jvp,
                                transpose=convolve_transpose, abstract_eval=convolve_aval))
convolve_p.zero_rule = zero_if_any(convolve_p)
convolve = wrapper_of(convolve_p)
