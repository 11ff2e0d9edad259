"""NumPy's functions that rearrange, drop, insert and select entries, on traced values:
``np.insert``, ``np.delete``, ``np.extract``, ``np.compress``, ``np.choose``,
``np.diagflat``, ``np.ediff1d``, ``np.broadcast_arrays``,
``np.lib.stride_tricks.sliding_window_view``, ``np.apply_along_axis``, ``np.unwrap``.

Most of them move entries without computing new ones: their result is a gather from the
operands' entries, and where it goes is found by NumPy itself, applied to the entries'
*positions* (``gather_by``: ``np.insert(positions, obj, markers)`` says where each entry of
``np.insert(arr, obj, values)`` comes from), so every rule of NumPy's (broadcasting the
values, negative and repeated indices, casting) is NumPy's own, and the derivative is the
gather's. The positions must be known when the code is made: a traced ``obj`` is the trace
engine's (where code is generated for every call it is refused with a
``ConcretizationError``, and ``engine="auto"`` falls back on the trace engine); a traced
condition (``np.extract``, ``np.compress``) is a mask, whose count the code reads when it
runs.

Layer: numpy.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..core.errors import ConcretizationError, user_location
from ..core.ir import aval_of
from ..core.shapes import result_dtype
from ..core.primitive import TracerBase
from ..primitives import arith, index, linalg, ordering, reduce, shape
from ..primitives.selection import where
from .arrayargs import along, axis_in, ndim, no_out
from .lists import as_array

__all__ = ["FUNCTIONS", "gather_by", "known", "operand"]


def operand(x):
    """A traced value as it is; a list or tuple (of traced values too) as NumPy's array."""
    if isinstance(x, TracerBase):
        return x
    return as_array(x) if type(x) in (list, tuple) else np.asarray(x)


def known(value, what, fname):
    """The value of an argument that decides where entries go: a Python or NumPy value, or
    a traced one whose value is known for this call (the trace engine)."""
    if not isinstance(value, TracerBase):
        return value
    val = value.concrete_value
    if val is None:
        raise ConcretizationError(
            f"{user_location()}: {fname}: {what} decides where the entries go, so its value "
            "must be known when the code is made; it is traced here (compute it from values "
            "you do not differentiate), or use engine='trace' (engine='auto' does so by "
            "itself)")
    return val


def gather_by(numpy_fn, arrays, *args, dtype=None, **kwargs):
    """``numpy_fn(*arrays, *args, **kwargs)`` for a function that only moves the entries of
    ``arrays`` (traced or not): NumPy's function applied to their flat positions (the k-th
    array's shifted past the ones before it), then those positions gathered from all
    their entries together. ``dtype``: the result's (by default the first array's)."""
    arrays = [operand(a) for a in arrays]
    dtype = np.dtype(dtype) if dtype is not None else aval_of(arrays[0]).dtype
    offsets, stand_ins, start = [], [], 0
    for a in arrays:
        shp = tuple(int(d) for d in aval_of(a).shape)
        size = int(np.prod(shp, dtype=np.int64))
        stand_ins.append(np.arange(start, start + size, dtype=np.intp).reshape(shp))
        offsets.append(start)
        start += size
    where_from = np.asarray(numpy_fn(*stand_ins, *args, **kwargs))
    flat = [shape.reshape(_as(a, dtype), (-1,)) for a in arrays]
    pool = flat[0] if len(flat) == 1 else index.concatenate(*flat)
    if where_from.size == 0:
        return np.zeros(where_from.shape, dtype)
    return index.getitem(pool, where_from)


def _as(a, dtype):
    return a if aval_of(a).dtype == dtype else arith.convert(a, dtype=dtype)


# --- insert, delete ------------------------------------------------------------------
def _insert(arr, obj, values, axis=None):
    arr, values = operand(arr), operand(values)
    obj = known(obj, "obj", "np.insert")
    return gather_by(lambda a, v: np.insert(a, obj, v, axis), [arr, values])


def _delete(arr, obj, axis=None):
    obj = known(obj, "obj", "np.delete")
    return gather_by(lambda a: np.delete(a, obj, axis), [operand(arr)])


# --- extract, compress, choose -------------------------------------------------------
def _extract(condition, arr):
    arr = operand(arr)
    cond = shape.reshape(operand(condition), (-1,))
    if aval_of(cond).dtype != np.bool_:
        cond = ordering.not_equal(cond, 0)
    flat = shape.reshape(arr, (-1,))
    n = aval_of(flat).shape[0]
    m = aval_of(cond).shape[0]
    if m is not None and n is not None and m != n:       # NumPy reads the common part
        k = min(m, n)
        cond, flat = index.getitem(cond, slice(0, k)), index.getitem(flat, slice(0, k))
    return index.getitem(flat, cond)


def _compress(condition, a, axis=None, out=None):
    no_out(out, "np.compress")
    a = operand(a)
    if axis is None:
        a, axis = shape.reshape(a, (-1,)), 0
    axis = axis_in(axis, ndim(a), "np.compress")
    cond = operand(condition)
    if ndim(cond) != 1:
        raise ValueError("condition must be a 1-d array")
    if aval_of(cond).dtype != np.bool_:
        cond = ordering.not_equal(cond, 0)
    n, m = aval_of(a).shape[axis], aval_of(cond).shape[0]
    if m is not None and n is not None and m > n:
        raise IndexError(f"index {n} is out of bounds for axis {axis} with size {n}")
    return along(a, axis, index.nonzero(cond)[0])


def _choose(a, choices, out=None, mode="raise"):
    no_out(out, "np.choose")
    a = operand(a)
    choices = [operand(c) for c in choices]
    k = len(choices)
    if mode == "wrap":
        a = ordering.remainder(a, k)
    elif mode == "clip":
        a = ordering.clip(a, 0, k - 1)
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    shp = np.broadcast_shapes(*(tuple(aval_of(c).shape) for c in choices),
                              tuple(aval_of(a).shape))
    dt = np.result_type(*(aval_of(c).dtype for c in choices))
    stacked = index.stack([shape.broadcast_to(_as(c, dt), shp) for c in choices], axis=0)
    idx = shape.broadcast_to(a, shp)
    picked = index.getitem(stacked, (idx,) + tuple(
        np.arange(n).reshape((-1,) + (1,) * (len(shp) - j - 1)) for j, n in enumerate(shp)))
    return picked


# --- diagflat, ediff1d, broadcast_arrays ---------------------------------------------
def _diagflat(v, k=0):
    return linalg.diag(shape.reshape(operand(v), (-1,)), k)


def _ediff1d(ary, to_end=None, to_begin=None):
    flat = shape.reshape(operand(ary), (-1,))
    dt = aval_of(flat).dtype
    n = aval_of(flat).shape[0]
    parts = []
    if to_begin is not None:
        parts.append(shape.reshape(_as(operand(to_begin), dt), (-1,)))
    if n and n > 1:
        parts.append(arith.sub(index.getitem(flat, slice(1, None)),
                               index.getitem(flat, slice(None, -1))))
    if to_end is not None:
        parts.append(shape.reshape(_as(operand(to_end), dt), (-1,)))
    if not parts:
        return np.zeros(0, dt)
    return parts[0] if len(parts) == 1 else index.concatenate(*parts)


def _broadcast_arrays(*args, subok=False):
    args = [operand(a) for a in args]
    shp = np.broadcast_shapes(*(tuple(aval_of(a).shape) for a in args))
    return tuple(shape.broadcast_to(a, shp) if isinstance(a, TracerBase) else
                 np.broadcast_to(a, shp) for a in args)


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if writeable:
        raise ValueError(f"{user_location()}: sliding_window_view(..., writeable=True) would "
                         "write into the traced array; take the windows read-only")
    return gather_by(lambda p: np.lib.stride_tricks.sliding_window_view(p, window_shape, axis),
                     [operand(x)])


# --- apply_along_axis ------------------------------------------------------------------
def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = operand(arr)
    nd = ndim(arr)
    axis = axis_in(axis, nd, "np.apply_along_axis")
    moved = shape.moveaxis(arr, axis, -1) if axis != nd - 1 else arr
    outer = tuple(int(d) for d in aval_of(moved).shape[:-1])
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [operand(func1d(index.getitem(moved, ind), *args, **kwargs))
               for ind in itertools.product(*(range(n) for n in outer))]
    res = index.stack(results, axis=0)
    res = shape.reshape(res, outer + tuple(aval_of(results[0]).shape))
    # the function's axes take the place of the axis it consumed
    k = ndim(results[0])
    return shape.transpose(res, tuple(range(axis)) + tuple(range(len(outer), len(outer) + k))
                           + tuple(range(axis, len(outer)))) if k else res


# --- unwrap -----------------------------------------------------------------------------
def _unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    p = operand(p)
    nd = ndim(p)
    axis = axis_in(axis, nd, "np.unwrap")
    n = aval_of(p).shape[axis]
    dd = arith.sub(along(p, axis, slice(1, None)), along(p, axis, slice(None, -1)))
    if discont is None:
        discont = arith.div(period, 2) if isinstance(period, TracerBase) else period / 2
    dtype = result_dtype(aval_of(dd), aval_of(period))     # a Python period is weakly typed
    if np.issubdtype(dtype, np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = arith.div(period, 2) if isinstance(period, TracerBase) else \
            period / 2, True
    low = arith.neg(high) if isinstance(high, TracerBase) else -high
    ddmod = arith.add(ordering.remainder(arith.sub(dd, low), period), low)
    if ambiguous:
        ddmod = where(ordering.logical_and(ordering.equal(ddmod, low), ordering.greater(dd, 0)),
                      high, ddmod)
    correct = arith.sub(ddmod, dd)
    correct = where(ordering.less(ordering.abs(dd), discont), 0, correct)
    up = _as(p, np.dtype(dtype))
    if not n or n < 2:
        return up
    rest = arith.add(along(up, axis, slice(1, None)), reduce.cumsum(correct, axis=axis))
    return index.concatenate(along(up, axis, slice(0, 1)), _as(rest, np.dtype(dtype)),
                             axis=axis)


FUNCTIONS = {
    np.insert: _insert, np.delete: _delete, np.extract: _extract, np.compress: _compress,
    np.choose: _choose, np.diagflat: _diagflat, np.ediff1d: _ediff1d,
    np.broadcast_arrays: _broadcast_arrays,
    np.lib.stride_tricks.sliding_window_view: _sliding_window_view,
    np.apply_along_axis: _apply_along_axis, np.unwrap: _unwrap,
}

NAMES = {np.lib.stride_tricks.sliding_window_view:
         "np.lib.stride_tricks.sliding_window_view"}
