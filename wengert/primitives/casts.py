"""The casts at the boundary with the user's Python: a value handed out has
the exact type the plain function would give (NEP 50: a Python float is
weakly typed and yields to an array's dtype, a NumPy float64 does not).

* ``python_scalar``: ``float(x)`` of a 0-d traced value, a Python scalar (a
  weak ``convert``), as ``float()`` and the ``math`` functions give;
* ``cast_exact``: a derivative handed out (``jvp``'s tangents, ``api``'s
  cotangents) with its value's dtype, a Python float for a Python float.

Inside a derivative ``arith.cast_float`` is enough (each value's derivative
is cast to its float dtype, whether a scalar is Python's or NumPy's changes
no dtype downstream); these two are applied where a value leaves wengert.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from .arith import cast_float, convert
from ..core.ir import aval_of

__all__ = ["python_scalar", "cast_exact"]


def python_scalar(x, dtype=np.float64):
    """``float(x)`` of a 0-d value: a Python scalar of ``dtype``'s kind, weakly
    typed (NEP 50), as ``float()`` and ``math`` functions give."""
    av = aval_of(x)
    if av.weak and av.dtype == np.dtype(dtype):
        return x
    return convert(x, dtype=np.dtype(dtype), weak=True)


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
