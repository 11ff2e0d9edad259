"""What the family wrappers of the library table share (``numpy.functions``,
``numpy.shapes``, ``numpy.select``, ``numpy.stencils``...): NumPy's
parameters (a value not given, one refused, ``out=``, ``keepdims``, dtypes),
operands as NumPy sees them, axes
checked as NumPy checks them, a slice or index array along one axis, and
values that decide a result's shape (which must be known when staging).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import arith
from ..primitives import selection
from ..core.primitive import TracerBase
from ..primitives.index import getitem
from ..primitives.shape import reshape
from ..core import dims as _dims
from ..core.errors import (
    InPlaceUpdateError, NoDerivativeRule, NonDifferentiableInputError, user_location)
from ..core.ir import aval_of

__all__ = ["as_operand", "ndim", "axis_in", "axes_in", "along", "static", "flat", "NO_VALUE",
           "refuse", "no_out", "numpy_result", "as_dtype"]


def as_operand(x):
    """A traced value as it is; anything else as NumPy sees it."""
    return x if isinstance(x, TracerBase) else np.asarray(x)


def ndim(x):
    return len(_dims.shape(x))


def axis_in(axis, nd, fname):
    axis = int(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd, fname)
    return axis % nd


def axes_in(axis, nd, fname):
    """A sorted tuple of distinct axes in range: ``None`` is every axis."""
    if axis is None:
        return tuple(range(nd))
    axes = [axis_in(a, nd, fname) for a in (axis if np.ndim(axis) else (axis,))]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis")
    return tuple(sorted(axes))


def along(x, axis, part):
    """``x[..., part]`` with ``part`` (a slice or an index array) on ``axis``."""
    return getitem(x, (slice(None),) * axis + (part,))


def static(value, what, fname):
    """A value that decides the output's shape, as a Python/NumPy value: a
    traced one is accepted only where its value is known for this call (the
    trace engine); where code is generated for every call it is refused."""
    if not isinstance(value, TracerBase):
        return value
    val = value.concrete_value
    if val is None or aval_of(value).dtype.kind not in "iub":
        raise NonDifferentiableInputError(
            f"{user_location()}: {fname}: {what} decides the shape of the result, so it must be "
            "a Python value (or computed from values you do not differentiate); it is traced "
            "here")
    return val


def flat(a):
    return reshape(a, (-1,))


# --- NumPy's parameters: not given, refused, out=, keepdims, dtype, order ---
# NumPy's own marker of an argument not given (``keepdims=<no value>``): the
# defaults below are NumPy's, so a call forwarded by NumPy with it is the same
NO_VALUE = np._NoValue


def refuse(fname, param, advice):
    """``fname(..., param=...)`` is not implemented for traced values."""
    raise NoDerivativeRule(f"{user_location()}: {fname}(..., {param}=...) is not supported on "
                           f"a traced value; {advice}")


def no_out(out, fname):
    """``out=`` writes the result into an array in place, where it would
    keep its value and drop its derivative (``a += b`` on a plain array is
    ``np.add(a, b, out=a)``)."""
    if out is not None:
        raise InPlaceUpdateError(
            f"{user_location()}: {fname}(..., out=...) writes a traced value into an array in "
            "place; drop out= and use the returned value. For a += b on a plain array write "
            "a = a + b, or use engine='source' (or 'auto'), which turns augmented assignment "
            "into a new value")


def numpy_result(out):
    """NumPy's functions and ufuncs return NumPy values: a result that came
    out a Python scalar (weakly typed, its operands being Python numbers)
    is the NumPy scalar NumPy gives (``np.sin(0.5)`` is an ``np.float64``,
    which, unlike a Python float, promotes a float32 array it meets)."""
    if isinstance(out, TracerBase):
        return arith.convert(out, dtype=out.aval.dtype) if out.aval.weak else out
    if type(out) in (tuple, list):
        return type(out)(numpy_result(o) for o in out)
    return out


def keepdims_flag(keepdims):
    return False if keepdims is NO_VALUE else bool(keepdims)


def check_device(device, fname):
    if device not in (None, "cpu"):
        refuse(fname, "device", "wengert computes with NumPy on the CPU: drop device=")


def as_dtype(x, dtype, casting="unsafe", fname=""):
    """``x`` computed in ``dtype`` (NumPy's ``dtype=`` of reductions and
    ufuncs: the operands are cast first); ``casting`` as NumPy checks it."""
    if dtype is None:
        return x
    dtype = np.dtype(dtype)
    av = aval_of(x)
    if av.dtype == dtype and not av.weak:
        return x
    if not av.weak and not np.can_cast(av.dtype, dtype, casting):
        raise TypeError(f"{user_location()}: {fname}: cannot cast {av.dtype} to {dtype} with "
                        f"casting={casting!r}")
    return arith.convert(x, dtype=dtype)


def like_dtype(x, like):
    """``x`` in the dtype of ``like``: NumPy casts a reduction's ``initial``
    and a fill value to the result's dtype."""
    dt = aval_of(like).dtype
    return x if aval_of(x).dtype == dt and not aval_of(x).weak else arith.convert(x, dtype=dt)


def masked(a, where, fill):
    """``where=`` of a reduction: the entries it masks out count as ``fill``."""
    if where is NO_VALUE or where is True:
        return a
    return selection.where(where, a, fill)


def named_result(name, fields):
    """A tuple class whose items are also read by name (NumPy's named results:
    ``np.unique_counts(x).counts``), without ``_fields``: wengert's pytrees read it as
    a plain tuple, so a function may return it whole."""
    def getattr_(self, attr):
        if attr in fields:
            return self[fields.index(attr)]
        raise AttributeError(f"{name} has no attribute {attr!r}; it has {', '.join(fields)}")
    return type(name, (tuple,), {"__slots__": (), "__getattr__": getattr_})


def check_order(order, fname, allowed=("C",)):
    if order not in allowed:
        refuse(fname, "order", f"order={order!r} depends on memory layout, which traced "
                               "values do not have; use the default order")
