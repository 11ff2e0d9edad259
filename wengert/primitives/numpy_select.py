"""NumPy's sorting, gathering and selecting functions on traced values
(part of the ``numpy_shapes`` family, which lists them in its table).

``sort`` and ``partition`` gather their operand at index arrays that the
``argsort`` / ``partition_index`` primitives compute when the program runs,
``take`` and ``take_along_axis`` at the indices they are given (a traced
integer array is a run-time operand of ``getitem``), ``select`` and
``piecewise`` are chains of ``where``. Their derivatives are those of the
gather (a scatter-add backwards) and of ``where``.
"""
from __future__ import annotations

import numpy as np

from . import arith, shape
from .core import TracerBase
from .gather import argsort, partition_index, piece_point
from .index import getitem, index_set
from .numpy_functions import refuse, no_out
from .. import dims as _dims
from ..errors import NonDifferentiableInputError, user_location
from ..ir import aval_of

__all__ = ["FUNCTIONS"]


def _arr(x):
    return x if isinstance(x, TracerBase) else np.asarray(x)


def _ndim(x):
    return len(_dims.shape(x))


def _axis(axis, nd, fname):
    axis = int(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd, fname)
    return axis % nd


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
    nd = _ndim(arr)
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


def _int_indices(indices, fname):
    indices = _arr(indices)
    if aval_of(indices).dtype.kind not in "iu":
        raise IndexError(f"{user_location()}: {fname}: the indices must be integers, got "
                         f"{aval_of(indices).dtype}")
    return indices


# --- sorting -----------------------------------------------------------
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order(order, "np.argsort")
    a = _arr(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    return argsort(a, _axis(axis, max(_ndim(a), 1), "argsort"), _kind(kind, stable))


def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order(order, "np.sort")
    a = _arr(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = _axis(axis, _ndim(a), "sort")
    return _along_axis(a, argsort(a, axis, _kind(kind, stable)), axis)


def _partition(a, kth, axis=-1, kind="introselect", order=None):
    _no_order(order, "np.partition")
    a = _arr(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = _axis(axis, _ndim(a), "partition")
    if isinstance(kth, TracerBase):
        raise NonDifferentiableInputError(f"{user_location()}: np.partition: kth must be a "
                                          "Python integer or a list of them")
    return _along_axis(a, partition_index(a, kth, axis), axis)


# --- gathering ---------------------------------------------------------
def _take_along_axis(arr, indices, axis=-1):
    arr = _arr(arr)
    indices = _int_indices(indices, "np.take_along_axis")
    if axis is None:
        if _ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = shape.reshape(arr, (-1,)), 0
    if _ndim(indices) != _ndim(arr):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return _along_axis(arr, indices, _axis(axis, _ndim(arr), "take_along_axis"))


def _take(a, indices, axis=None, out=None, mode="raise"):
    no_out(out, "np.take")
    a = _arr(a)
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    indices = indices if isinstance(indices, (int, np.integer)) else \
        _int_indices(indices, "np.take")
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = _axis(axis, _ndim(a), "take")
    n = _dims.shape(a)[axis]
    if mode == "wrap":
        indices = arith.remainder(indices, n)
    elif mode == "clip":
        indices = arith.clip(indices, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return getitem(a, (slice(None),) * axis + (indices,))


# --- selecting ---------------------------------------------------------
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [_arr(c) for c in condlist]
    for i, c in enumerate(conds):
        if aval_of(c).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    # NumPy's result dtype, asked of NumPy with stand-ins of each dtype
    dtype = np.select([np.zeros((), bool)] * len(conds),
                      [_stand_in(c) for c in choicelist], _stand_in(default)).dtype
    out = _cast(default, dtype)
    for cond, choice in reversed(list(zip(conds, choicelist))):
        out = arith.where(cond, _cast(choice, dtype), out)     # the first true one wins
    full = _dims.broadcast(*[tuple(_dims.shape(x)) for x in (*conds, *choicelist, default)])
    return shape.broadcast_to(out, full) if tuple(_dims.shape(out)) != full else out


def _stand_in(x):
    if isinstance(x, TracerBase):
        av = aval_of(x)
        return np.zeros((), av.dtype) if not av.weak else {"f": 0.0, "i": 0, "b": False,
                                                           "c": 0j}[av.dtype.kind]
    return np.zeros((), np.asarray(x).dtype) if np.ndim(x) or not isinstance(
        x, (int, float, complex, bool)) else x


def _cast(x, dtype):
    x = _arr(x) if isinstance(x, (TracerBase, list, tuple)) else x
    av = aval_of(x)
    return x if av.dtype == dtype and not av.weak else arith.convert(x, dtype=dtype)


def _piecewise(x, condlist, funclist, *args, **kw):
    x = _arr(x)
    n_funcs = len(funclist)
    if isinstance(condlist, (list, tuple)):
        # a list of Python booleans is one condition (NumPy's reading)
        many = isinstance(condlist[0], (list, np.ndarray, TracerBase)) or _ndim(x) == 0
    else:
        condlist = _arr(condlist)
        many = _ndim(condlist) >= 2 or (_ndim(condlist) == 1 and _ndim(x) == 0)
    conds = [_arr(c) for c in condlist] if many else [_arr(condlist)]
    conds = [c if aval_of(c).dtype == np.bool_ else arith.not_equal(c, 0) for c in conds]
    if len(conds) == n_funcs - 1:
        # the last function holds where no condition does
        anyc = conds[0]
        for c in conds[1:]:
            anyc = arith.logical_or(anyc, c)
        conds.append(arith.logical_not(anyc))
    elif len(conds) != n_funcs:
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    dtype = aval_of(x).dtype
    xs = tuple(_dims.shape(x))
    conds = [shape.broadcast_to(c, xs) if tuple(_dims.shape(c)) != xs else c for c in conds]
    known = [c if not isinstance(c, TracerBase) else c.concrete_value for c in conds]
    out = shape.zeros_like(x)
    if all(k is not None for k in known):
        # masks known now: each function sees just its entries, as in NumPy
        flat = shape.reshape(out, (-1,))
        xf = shape.reshape(x, (-1,))
        for mask, func in zip(known, funclist):
            where = np.nonzero(np.ravel(np.asarray(mask, bool)))
            if not callable(func):
                flat = index_set(flat, _cast(func, dtype), where)
            elif where[0].size:
                flat = index_set(flat, _cast(func(getitem(xf, where), *args, **kw), dtype),
                                 where)
        return shape.reshape(flat, xs)
    # masks known only when the program runs: each function is applied to
    # every entry (it must be elementwise), the entries outside its piece
    # replaced by one inside it, so it is never evaluated off its domain
    for cond, func in zip(conds, funclist):
        if callable(func):
            val = func(arith.where(cond, x, piece_point(x, cond)), *args, **kw)
        else:
            val = func
        out = arith.where(cond, _cast(val, dtype), out)
    return out


FUNCTIONS = {
    np.argsort: _argsort, np.sort: _sort, np.partition: _partition,
    np.take_along_axis: _take_along_axis, np.take: _take, np.select: _select,
    np.piecewise: _piecewise,
}
