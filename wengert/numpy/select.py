"""NumPy's sorting, gathering and selecting functions on traced values
(part of the ``numpy.shapes`` family, which lists them in its table).

``sort`` and ``partition`` gather their operand at index arrays that the
``argsort`` / ``partition_index`` primitives compute when the program runs,
``take`` and ``take_along_axis`` at the indices they are given (a traced
integer array is a run-time operand of ``getitem``), ``select`` is a chain
of ``where``. Their derivatives are those of the gather (a scatter-add
backwards) and of ``where``. (``piecewise``, which runs the user's
functions and so stages them, is ``numpy.piecewise``.)

Layer: numpy.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..primitives import arith, ordering, shape
from ..primitives import selection
from .arrayargs import as_operand, axis_in, ndim
from ..core.primitive import TracerBase
from ..primitives.gather import argsort, partition_index
from ..primitives.index import getitem
from .arrayargs import no_out, NO_VALUE, refuse
from ..core import dims as _dims
from ..core.errors import NonDifferentiableInputError, user_location
from ..core.ir import aval_of

__all__ = ["FUNCTIONS", "along_axis", "sort_along"]


def _no_order(order, fname):
    if order is not None:
        refuse(fname, "order", "order= sorts structured arrays by field, which traced values "
               "are not; sort the field you need")


def _kind(kind, stable):
    if stable:
        return "stable"
    return kind


def _along_axis(arr, indices, axis):
    """``np.take_along_axis(arr, indices, axis)``: each other axis indexed
    by its positions, shaped to broadcast against ``indices``."""
    nd = ndim(arr)
    size = _dims.shape(arr)
    idx = []
    for d in range(nd):
        if d == axis:
            idx.append(indices)
        else:
            place = [1] * nd
            place[d] = -1
            idx.append(np.arange(size[d]).reshape(place))
    return getitem(arr, tuple(idx))


def along_axis(arr, indices, axis):
    """``np.take_along_axis(arr, indices, axis)`` (``axis`` in range or negative)."""
    return _along_axis(arr, indices, axis % ndim(arr))


def sort_along(a, axis):
    """``np.sort(a, axis)``: ``a`` gathered at its stable ``argsort``."""
    axis = axis % ndim(a)
    return _along_axis(a, argsort(a, axis, "stable"), axis)


def _int_indices(indices, fname):
    indices = as_operand(indices)
    if aval_of(indices).dtype.kind not in "iu":
        raise IndexError(f"{user_location()}: {fname}: the indices must be integers, got "
                         f"{aval_of(indices).dtype}")
    return indices


# --- sorting -----------------------------------------------------------
def _no_descending(descending, fname):
    if descending not in (None, False, NO_VALUE):
        refuse(fname, "descending", "sort ascending and reverse: np.flip(np.sort(a, axis), axis)")


def _argsort_impl(a, axis, kind, order, stable, descending):
    _no_order(order, "np.argsort")
    _no_descending(descending, "np.argsort")
    a = as_operand(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    return argsort(a, axis_in(axis, max(ndim(a), 1), "argsort"), _kind(kind, stable))


def _sort_impl(a, axis, kind, order, stable, descending):
    _no_order(order, "np.sort")
    _no_descending(descending, "np.sort")
    a = as_operand(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = axis_in(axis, ndim(a), "sort")
    return _along_axis(a, argsort(a, axis, _kind(kind, stable)), axis)


# NumPy 2.5 added ``descending=``: the wrappers take the installed NumPy's parameters
DESCENDING = "descending" in inspect.signature(np.sort).parameters
if DESCENDING:
    def _argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=NO_VALUE):
        return _argsort_impl(a, axis, kind, order, stable, descending)

    def _sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=NO_VALUE):
        return _sort_impl(a, axis, kind, order, stable, descending)
else:
    def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
        return _argsort_impl(a, axis, kind, order, stable, None)

    def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
        return _sort_impl(a, axis, kind, order, stable, None)


def _partition(a, kth, axis=-1, kind="introselect", order=None):
    _no_order(order, "np.partition")
    a = as_operand(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = axis_in(axis, ndim(a), "partition")
    if isinstance(kth, TracerBase):
        raise NonDifferentiableInputError(f"{user_location()}: np.partition: kth must be a "
                                          "Python integer or a list of them")
    return _along_axis(a, partition_index(a, kth, axis), axis)


# --- gathering ---------------------------------------------------------
def _take_along_axis(arr, indices, axis=-1):
    arr = as_operand(arr)
    indices = _int_indices(indices, "np.take_along_axis")
    if axis is None:
        if ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = shape.reshape(arr, (-1,)), 0
    if ndim(indices) != ndim(arr):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return _along_axis(arr, indices, axis_in(axis, ndim(arr), "take_along_axis"))


def _take(a, indices, axis=None, out=None, mode="raise"):
    no_out(out, "np.take")
    a = as_operand(a)
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    indices = indices if isinstance(indices, (int, np.integer)) else \
        _int_indices(indices, "np.take")
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = axis_in(axis, ndim(a), "take")
    n = _dims.shape(a)[axis]
    if mode == "wrap":
        indices = ordering.remainder(indices, n)
    elif mode == "clip":
        indices = ordering.clip(indices, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return getitem(a, (slice(None),) * axis + (indices,))


# --- selecting ---------------------------------------------------------
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [as_operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if aval_of(c).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    # NumPy's result dtype, asked of NumPy with stand-ins of each dtype
    dtype = np.select([np.zeros((), bool)] * len(conds),
                      [_stand_in(c) for c in choicelist], _stand_in(default)).dtype
    out = cast_to(default, dtype)
    for cond, choice in reversed(list(zip(conds, choicelist))):
        out = selection.where(cond, cast_to(choice, dtype), out)     # the first true one wins
    full = _dims.broadcast(*[tuple(_dims.shape(x)) for x in (*conds, *choicelist, default)])
    return shape.broadcast_to(out, full) if tuple(_dims.shape(out)) != full else out


def _stand_in(x):
    if isinstance(x, TracerBase):
        av = aval_of(x)
        return np.zeros((), av.dtype) if not av.weak else {"f": 0.0, "i": 0, "b": False,
                                                           "c": 0j}[av.dtype.kind]
    return np.zeros((), np.asarray(x).dtype) if np.ndim(x) or not isinstance(
        x, (int, float, complex, bool)) else x


def cast_to(x, dtype):
    x = as_operand(x) if isinstance(x, (TracerBase, list, tuple)) else x
    av = aval_of(x)
    return x if av.dtype == dtype and not av.weak else arith.convert(x, dtype=dtype)


FUNCTIONS = {
    np.argsort: _argsort, np.sort: _sort, np.partition: _partition,
    np.take_along_axis: _take_along_axis, np.take: _take, np.select: _select,
}
