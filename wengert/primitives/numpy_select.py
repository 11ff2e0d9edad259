"""NumPy's sorting, gathering and selecting functions on traced values
(part of the ``numpy_shapes`` family, which lists them in its table).

``sort`` and ``partition`` gather their operand at index arrays that the
``argsort`` / ``partition_index`` primitives compute when the program runs,
``take`` and ``take_along_axis`` at the indices they are given (a traced
integer array is a run-time operand of ``getitem``), ``select`` and
``piecewise`` are chains of ``where``. Their derivatives are those of the
gather (a scatter-add backwards) and of ``where``.

``piecewise`` gives each function just the entries of its piece where the
conditions' values are known while staging (the trace engine, or masks
that are not traced), as NumPy does. Where they are known only when the
code runs (the source engine, conditions computed from the inputs), each
function is applied to the whole array with the entries off its piece
replaced by one on it, and the results selected: this is NumPy's result for
elementwise functions, which NumPy's documentation asks for, but not for a
function that mixes entries (``lambda v: v - v.mean()``).
"""
from __future__ import annotations

import inspect

import numpy as np

from . import arith, ordering, shape
from .arrayargs import as_operand, axis_in, ndim
from .core import TracerBase
from .gather import argsort, partition_index, piece_point
from .index import getitem, index_set
from .arrayargs import no_out, NO_VALUE, refuse
from .. import dims as _dims
from ..errors import NoDerivativeRule, NonDifferentiableInputError, user_location
from ..ir import aval_of

__all__ = ["FUNCTIONS"]


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
    x = as_operand(x) if isinstance(x, (TracerBase, list, tuple)) else x
    av = aval_of(x)
    return x if av.dtype == dtype and not av.weak else arith.convert(x, dtype=dtype)


# primitives that act entry by entry: a function of them alone gives on all
# entries what it gives on a subset (NumPy's piecewise calls it on x[cond])
_ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "neg", "pow", "abs", "convert", "where", "remainder",
    "floor_divide", "round", "erf", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "real", "imag", "conj", "zeros_like", "ones_like"})


def _is_elementwise(prim):
    # a ufunc without a core signature is elementwise; a gufunc (matmul,
    # vecdot) is not, whatever its name
    impl = prim.impl
    return (prim.name in _ELEMENTWISE
            or isinstance(impl, np.ufunc) and impl.signature is None
            or getattr(impl, "__module__", "").endswith("special_prims"))


def _check_elementwise(func, av, args, kw):
    """``func`` of piecewise, where the pieces are known only at run time,
    is applied to every entry: right only if it acts entry by entry (NumPy
    applies it to ``x[cond]``: ``lambda v: v - v.mean()`` differs). Staged
    once on an abstract ``x``, its equations must all be elementwise, and
    whatever it combines with x a scalar; else a typed refusal."""
    from ..staging import stage
    from ..ir import Aval, Var
    refusal = NoDerivativeRule(
        f"{user_location()}: np.piecewise with conditions computed from traced values calls "
        f"{getattr(func, '__name__', 'a function')} on every entry, which gives NumPy's value "
        "only for a function that acts entry by entry (arithmetic and elementwise NumPy "
        "functions of its argument and scalars); write the pieces with np.where, or use "
        "engine='trace', where the conditions are known")
    if any(isinstance(a, TracerBase) for a in (*args, *kw.values())):
        raise refusal
    try:
        prog = stage(lambda v: [func(v, *args, **kw)], [Aval(tuple(av.shape), av.dtype)])
    except Exception:           # noqa: BLE001 (any failure to stage it: not provably elementwise)
        raise refusal from None
    for eqn in prog.eqns:
        if not _is_elementwise(eqn.prim) or any(
                not isinstance(a, Var) and np.size(getattr(a, "val", 0)) != 1
                for a in eqn.inputs):
            raise refusal


def _piecewise(x, condlist, funclist, *args, **kw):
    x = as_operand(x)
    n_funcs = len(funclist)
    if isinstance(condlist, (list, tuple)):
        # a list of Python booleans is one condition (NumPy's reading)
        many = isinstance(condlist[0], (list, np.ndarray, TracerBase)) or ndim(x) == 0
    else:
        condlist = as_operand(condlist)
        many = ndim(condlist) >= 2 or (ndim(condlist) == 1 and ndim(x) == 0)
    conds = [as_operand(c) for c in condlist] if many else [as_operand(condlist)]
    conds = [c if aval_of(c).dtype == np.bool_ else ordering.not_equal(c, 0) for c in conds]
    if len(conds) == n_funcs - 1:
        # the last function holds where no condition does
        anyc = conds[0]
        for c in conds[1:]:
            anyc = ordering.logical_or(anyc, c)
        conds.append(ordering.logical_not(anyc))
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
    # every entry (so it must be elementwise: checked), the entries outside
    # its piece replaced by one inside it, so it is never evaluated off its
    # domain
    for cond, func in zip(conds, funclist):
        if callable(func):
            _check_elementwise(func, aval_of(x), args, kw)
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
