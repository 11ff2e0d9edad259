"""NumPy's functions that write into an array, on traced values: ``np.put``,
``np.put_along_axis``, ``np.putmask``, ``np.place``, ``np.copyto``, ``np.fill_diagonal``;
the ufunc methods ``outer``, ``reduce``, ``accumulate`` and ``at`` (``np.add.at``); and
``out=`` of a ufunc call.

A write into a traced array makes it the updated value, as ``y[i] = v`` does
(``core.inplace.replace``): every name of it sees the change, a view that would have to see
it too is refused, and the caller's arrays are never written (a traced array is wengert's
value, not the caller's memory). The updated value is NumPy's function applied to the
entries' positions (``editing.gather_by``), so its rules (cycling the values, ``mode=``,
repeated indices) are NumPy's. Where the written array is symbolic (code generated for every
call) the write is refused with ``WriteThroughCallError`` (an ``InPlaceUpdateError`` and an
``UnsupportedSyntax``) naming the functional form, and
``engine="auto"`` falls back on the trace engine; a traced value written into a plain NumPy
array is refused as ``a[i] = v`` is.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..core import inplace
from ..core.errors import (InPlaceUpdateError, NoDerivativeRule, WriteThroughCallError,
                           user_location)
from ..core.ir import aval_of
from ..core.primitive import TracerBase
from ..primitives import arith, reduce, scan, scatter, shape
from ..primitives.selection import where
from ..primitives import index as index_mod
from .arrayargs import axes_in, ndim, no_out
from .editing import gather_by, known, operand

__all__ = ["FUNCTIONS", "ufunc_method", "write_out"]


def _write(fname, a, numpy_fn, values, *positions, instead):
    """``numpy_fn(a, *positions, values)`` (NumPy writing into ``a``): ``a`` becomes the
    result where it is traced; a plain ``a`` is written by NumPy where nothing written
    is traced. Returns None, as NumPy's functions do."""
    positions = tuple(known(p, "where it writes", fname) for p in positions)
    if isinstance(a, TracerBase):
        if a.concrete_value is None:
            raise WriteThroughCallError(
                f"{user_location()}: {fname} writes into its argument in place, which the "
                f"source engine does not follow through a call; write {instead}, or use "
                "engine='trace' (engine='auto' does so by itself)", construct=fname)
        new = gather_by(lambda A, V: _written(numpy_fn, A, positions, V), [a, values])
        inplace.replace(a, new, fname)
        return None
    if isinstance(values, TracerBase):
        raise InPlaceUpdateError(
            f"{user_location()}: {fname} writes a traced value into a NumPy array in place; "
            f"the array would keep its value and drop its derivative. Write {instead} with "
            "a traced array (a = a * 1.0 makes one)")
    numpy_fn(a, *positions, values)
    return None


def _written(numpy_fn, A, positions, V):
    out = A.copy()
    numpy_fn(out, *positions, V)
    return out


def _put(a, ind, v, mode="raise"):
    return _write("np.put", a, lambda A, i, V: np.put(A, i, V, mode), operand(v), ind,
                  instead="a = a.copy(); a.flat[ind] = v")


def _put_along_axis(arr, indices, values, axis):
    return _write("np.put_along_axis", arr,
                  lambda A, i, V: np.put_along_axis(A, i, V, axis), operand(values), indices,
                  instead="arr[index tuple] = values")


def _putmask(a, /, mask, values):
    return _write("np.putmask", a, lambda A, m, V: np.putmask(A, m, V), operand(values), mask,
                  instead="a = np.where(mask, values, a)")


def _place(arr, mask, vals):
    return _write("np.place", arr, lambda A, m, V: np.place(A, m, V), operand(vals), mask,
                  instead="arr[mask] = vals")


def _copyto(dst, src, casting="same_kind", where=True):
    src = operand(src)
    if not np.can_cast(aval_of(src).dtype, aval_of(dst).dtype, casting) and not (
            aval_of(src).weak and casting == "same_kind"):
        raise TypeError(f"Cannot cast array data from {aval_of(src).dtype} to "
                        f"{aval_of(dst).dtype} according to the rule {casting!r}")
    return _write("np.copyto", dst,
                  lambda A, w, V: np.copyto(A, V, casting="unsafe", where=w), src, where,
                  instead="dst = np.where(where, src, dst)")


def _fill_diagonal(a, val, wrap=False):
    return _write("np.fill_diagonal", a, lambda A, V: np.fill_diagonal(A, V, wrap),
                  operand(val), instead="a = a + np.diag(val - np.diagonal(a))")


FUNCTIONS = {
    np.put: _put, np.put_along_axis: _put_along_axis, np.putmask: _putmask,
    np.place: _place, np.copyto: _copyto, np.fill_diagonal: _fill_diagonal,
}


# --- ufunc methods ----------------------------------------------------------------------
# the reductions and running ones NumPy's common ufuncs are: a rule each
def _reducer(ufunc):
    return {np.add: reduce.reduce_sum, np.multiply: reduce.reduce_prod,
            np.maximum: reduce.reduce_max, np.minimum: reduce.reduce_min}.get(ufunc)


def ufunc_method(ufunc, method, call, inputs, kwargs):
    """``ufunc.<method>(*inputs, **kwargs)`` on traced values; ``call(*operands)`` applies
    the ufunc (its rule) elementwise."""
    inputs = [operand(x) for x in inputs]
    if method == "outer":
        a, b = inputs
        return call(shape.reshape(a, tuple(aval_of(a).shape) + (1,) * ndim(b)), b, **kwargs)
    if method == "reduce":
        return _reduce(ufunc, call, *inputs, **kwargs)
    if method == "accumulate":
        return _accumulate(ufunc, call, *inputs, **kwargs)
    if method == "at":
        return _at(ufunc, *inputs)
    raise NoDerivativeRule(f"{user_location()}: np.{ufunc.__name__}.{method} has no "
                           f"derivative rule; write it with np.{ufunc.__name__} and "
                           "reductions")


def _reduce(ufunc, call, array, axis=0, dtype=None, out=None, keepdims=False,
            initial=np._NoValue, where=True):
    if out is not None or where is not True:
        raise NoDerivativeRule(f"{user_location()}: np.{ufunc.__name__}.reduce(..., out=, "
                               "where=) is not supported on traced values")
    if dtype is not None:
        array = arith.convert(array, dtype=np.dtype(dtype))
    axes = axes_in(axis, ndim(array), f"{ufunc.__name__}.reduce")
    rule = _reducer(ufunc)
    if rule is not None and initial is np._NoValue:
        return rule(array, axis=axes, keepdims=keepdims)
    # any other ufunc: a fold along each axis in turn, from the left, as NumPy's
    out = array
    for ax in sorted(axes, reverse=True):
        n = aval_of(out).shape[ax]
        acc = None if initial is np._NoValue else initial
        for i in range(n):
            item = index_mod.getitem(out, (slice(None),) * ax + (i,))
            acc = item if acc is None else call(acc, item)
        out = acc
    if keepdims:
        out = shape.reshape(out, tuple(1 if i in axes else d
                                       for i, d in enumerate(aval_of(array).shape)))
    return out


def _accumulate(ufunc, call, array, axis=0, dtype=None, out=None):
    if out is not None:
        raise NoDerivativeRule(f"{user_location()}: np.{ufunc.__name__}.accumulate(..., "
                               "out=) is not supported on traced values")
    if dtype is not None:
        array = arith.convert(array, dtype=np.dtype(dtype))
    axis = axis % ndim(array)
    if ufunc is np.add:
        return reduce.cumsum(array, axis=axis)
    if ufunc is np.multiply:
        return scan.cumprod(array, axis)
    steps, acc = [], None
    for i in range(aval_of(array).shape[axis]):
        item = index_mod.getitem(array, (slice(None),) * axis + (i,))
        acc = item if acc is None else call(acc, item)
        steps.append(acc)
    return index_mod.stack(steps, axis=axis)


def _at(ufunc, a, indices, b=None):
    if ufunc not in (np.add, np.subtract):
        raise NoDerivativeRule(f"{user_location()}: np.{ufunc.__name__}.at has no derivative "
                               "rule (np.add.at and np.subtract.at have); write the update "
                               "with np.add.at of a difference")
    indices = known(indices, "indices", f"np.{ufunc.__name__}.at")
    b = operand(b)
    if ufunc is np.subtract:
        b = arith.neg(b)
    if isinstance(a, TracerBase):
        if a.concrete_value is None:
            raise WriteThroughCallError(
                f"{user_location()}: np.{ufunc.__name__}.at writes into its argument in "
                "place, which the source engine does not follow through a call; write "
                "a = wg.at(a)[indices].add(b), or use engine='trace' (engine='auto' does so "
                "by itself)", construct=f"np.{ufunc.__name__}.at")
        inplace.replace(a, scatter.index_add(a, b, indices), f"np.{ufunc.__name__}.at")
        return None
    raise InPlaceUpdateError(
        f"{user_location()}: np.{ufunc.__name__}.at writes a traced value into a NumPy array "
        "in place, which would keep its value and drop its derivative; write "
        "a = wg.at(a)[indices].add(b) with a traced a")


def write_out(out, result, fname):
    """``out=`` of a ufunc call: ``out`` (a traced array, or a tuple of one) becomes the
    result, cast to its dtype, and is returned."""
    target = out[0] if isinstance(out, tuple) else out
    if not isinstance(target, TracerBase):
        no_out(target, fname)           # a plain array would keep its value: refused
    if target.concrete_value is None:
        raise WriteThroughCallError(
            f"{user_location()}: {fname}(..., out=y) writes into y in place, which the "
            f"source engine does not follow through a call; write y = {fname}(...), or use "
            "engine='trace' (engine='auto' does so by itself)", construct="out=")
    if tuple(aval_of(result).shape) != tuple(aval_of(target).shape):
        result = shape.broadcast_to(result, tuple(aval_of(target).shape))
    if aval_of(result).dtype != aval_of(target).dtype:
        result = arith.convert(result, dtype=aval_of(target).dtype)
    # the result as a value of the target's own trace (it may be computed from constants)
    if not isinstance(result, TracerBase) or result._trace is not target._trace:
        result = where(np.True_, result, target)
    inplace.replace(target, result, f"{fname}(..., out=)")
    return target

