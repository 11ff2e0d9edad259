"""What the family wrappers of the library table share (``numpy_shapes``,
``numpy_select``, ``numpy_stencils``): operands as NumPy sees them, axes
checked as NumPy checks them, a slice or index array along one axis, and
values that decide a result's shape (which must be known when staging).
"""
from __future__ import annotations

import numpy as np

from .core import TracerBase
from .index import getitem
from .shape import reshape
from .. import dims as _dims
from ..errors import NonDifferentiableInputError, user_location
from ..ir import aval_of

__all__ = ["as_operand", "ndim", "axis_in", "axes_in", "along", "static", "flat"]


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
