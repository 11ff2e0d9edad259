"""NumPy's functions on traced values: the registry's map from NumPy
functions to primitive wrappers (``numpy.array_methods`` dispatches to it; the ufuncs'
map is ``numpy.ufuncs``).

Contract: each entry of ``FUNCTIONS`` takes exactly the parameters of the
NumPy function it stands for, under NumPy's names, kinds and defaults (its
``inspect.signature``), so any call NumPy accepts reaches it as written
(``np.moveaxis(x, source=0, destination=1)``). A parameter is either
implemented or refused: a value other than its default that wengert does not
implement raises ``NoDerivativeRule`` naming the user's line, never dropped.

Layer: numpy.
"""
from __future__ import annotations

import math
import string

import numpy as np

from ..primitives import arith, einsum as einsum_mod, index, linalg, ordering, reduce, shape
from . import composite
from ..core import inplace
from ..primitives import selection
from .arrayargs import (
    NO_VALUE, keepdims_flag, like_dtype, masked, check_order, check_device, as_dtype, no_out, refuse)
from ..core.primitive import TracerBase
from ..core.errors import NonDifferentiableInputError, user_location
from ..core.ir import aval_of

shape_mod = shape       # for the functions whose NumPy parameter is called ``shape``

__all__ = ["FUNCTIONS", "reshape_in_order"]

# --- reductions --------------------------------------------------------
def np_sum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
         where=NO_VALUE):
    no_out(out, "np.sum")
    if dtype is None and where is NO_VALUE and initial is NO_VALUE:    # the common call
        return reduce.reduce_sum(a, axis=axis, keepdims=keepdims_flag(keepdims))
    r = reduce.reduce_sum(masked(as_dtype(a, dtype), where, 0), axis=axis,
                          keepdims=keepdims_flag(keepdims))
    return r if initial is NO_VALUE else like_dtype(arith.add(r, initial), r)


def np_prod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
          where=NO_VALUE):
    no_out(out, "np.prod")
    r = reduce.reduce_prod(masked(as_dtype(a, dtype), where, 1), axis=axis,
                           keepdims=keepdims_flag(keepdims))
    return r if initial is NO_VALUE else like_dtype(arith.mul(r, initial), r)


def np_mean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
    no_out(out, "np.mean")
    if where is not NO_VALUE and where is not True:
        refuse("np.mean", "where", "write np.sum(np.where(mask, a, 0)) / np.sum(mask)")
    return reduce.mean(as_dtype(a, dtype), axis=axis, keepdims=keepdims_flag(keepdims))


def _extremum(fname, reducer, pair):
    def fn(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        no_out(out, fname)
        if where is not NO_VALUE and where is not True:
            if initial is NO_VALUE:
                raise ValueError(f"{user_location()}: {fname} with where= needs initial= (the "
                                 "value of an empty selection), as NumPy does")
            a = selection.where(where, a, initial)
        r = reducer(a, axis=axis, keepdims=keepdims_flag(keepdims))
        return r if initial is NO_VALUE else like_dtype(pair(r, initial), r)
    fn.__name__ = fname.replace("np.", "")
    return fn


np_max = _extremum("np.max", reduce.reduce_max, ordering.maximum)
np_min = _extremum("np.min", reduce.reduce_min, ordering.minimum)


def _var_args(fname, out, where, mean, ddof, correction):
    no_out(out, fname)
    if where is not NO_VALUE and where is not True:
        refuse(fname, "where", "select the entries first (a[mask]) or weight them explicitly")
    if mean is not NO_VALUE:
        refuse(fname, "mean", "drop mean=; the mean is computed (and differentiated) for you")
    if correction is not NO_VALUE:
        if ddof != 0:
            raise ValueError(f"{user_location()}: {fname}: ddof and correction can't both be "
                             "given")
        ddof = correction
    return ddof


def np_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
         mean=NO_VALUE, correction=NO_VALUE):
    ddof = _var_args("np.var", out, where, mean, ddof, correction)
    return composite.var(as_dtype(a, dtype), axis=axis, ddof=ddof, keepdims=keepdims_flag(keepdims))


def np_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
         mean=NO_VALUE, correction=NO_VALUE):
    ddof = _var_args("np.std", out, where, mean, ddof, correction)
    return composite.std(as_dtype(a, dtype), axis=axis, ddof=ddof, keepdims=keepdims_flag(keepdims))


def np_cumsum(a, axis=None, dtype=None, out=None):
    no_out(out, "np.cumsum")
    return reduce.cumsum(as_dtype(a, dtype), axis=axis)


def _arg(fname, fn):
    def arg(a, axis=None, out=None, *, keepdims=NO_VALUE):
        no_out(out, fname)
        r = fn(a, axis)
        if keepdims_flag(keepdims):
            nd = np.ndim(a)
            r = shape.reshape(r, (1,) * nd) if axis is None else shape.expand_dims(r, axis % nd)
        return r
    arg.__name__ = fname.replace("np.", "")
    return arg


np_argmax = _arg("np.argmax", reduce.argmax)
np_argmin = _arg("np.argmin", reduce.argmin)


# --- products ----------------------------------------------------------
def np_dot(a, b, out=None):
    no_out(out, "np.dot")
    return linalg.dot(a, b)


def _outer(a, b, out=None):
    no_out(out, "np.outer")
    return linalg.outer(a, b)


def _inner(a, b, /):
    return linalg.inner(a, b)


def _tensordot(a, b, axes=2):
    return linalg.tensordot(a, b, axes)


def np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    no_out(out, "np.trace")
    return linalg.trace(as_dtype(a, dtype), offset, axis1, axis2)


def _diagonal(a, offset=0, axis1=0, axis2=1):
    return linalg.diagonal(a, offset, axis1, axis2)


def _diag(v, k=0):
    return linalg.diag(v, k)


def _sublist_spec(operands):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])``, NumPy's sublist form, as
    ``("ab,bc->ac", a, b)``: integers become letters, Ellipsis ``...``."""
    letters = string.ascii_letters

    def subs(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= int(s) < len(letters):
                out.append(letters[int(s)])
            else:
                raise ValueError(f"{user_location()}: einsum: a subscript in the sublist form "
                                 f"is an integer in [0, {len(letters)}) or Ellipsis, got {s!r}")
        return "".join(out)

    arrays, specs = list(operands[0::2]), [subs(s) for s in operands[1::2]]
    spec = ",".join(specs[:len(arrays)])
    if len(operands) % 2:          # an odd count: the last sublist is the output's
        spec += "->" + subs(arrays.pop())
    return (spec, *arrays)


def _einsum(*operands, out=None, optimize=False, **kwargs):
    extra = set(kwargs) - {"dtype", "order", "casting"}
    if extra:
        raise TypeError(f"einsum() got an unexpected keyword argument {sorted(extra)[0]!r}")
    no_out(out, "np.einsum")
    if operands and not isinstance(operands[0], str):
        operands = _sublist_spec(operands)
    dtype, casting = kwargs.get("dtype"), kwargs.get("casting", "safe")
    if dtype is not None:
        operands = (operands[0],) + tuple(as_dtype(o, dtype, casting, "np.einsum")
                                          for o in operands[1:])
    return einsum_mod.einsum(*operands, out=out, optimize=optimize)


# --- joining and shaping -----------------------------------------------
def _joined(parts, dtype, casting, fname):
    return [as_dtype(p, dtype, casting, fname) for p in parts]


def _concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    no_out(out, "np.concatenate")
    arrays = _joined(arrays, dtype, casting, "np.concatenate")
    if axis is None:
        arrays = [shape.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return index.concatenate(*arrays, axis=axis)


def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    no_out(out, "np.stack")
    return index.stack(_joined(arrays, dtype, casting, "np.stack"), axis=axis)


def _hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [shape.reshape(a, (1,)) if np.ndim(a) == 0 else a
              for a in _joined(tup, dtype, casting, "np.hstack")]
    return index.concatenate(*arrays, axis=0 if np.ndim(arrays[0]) == 1 else 1)


def _vstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [shape.reshape(a, (1, -1)) if np.ndim(a) < 2 else a
              for a in _joined(tup, dtype, casting, "np.vstack")]
    return index.concatenate(*arrays, axis=0)


def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    # ``newshape``: the name of older NumPy versions
    target = newshape if shape is None else shape
    if target is None:
        raise TypeError("reshape() missing required argument 'shape'")
    return reshape_in_order(a, target, order, "np.reshape")


def reshape_in_order(a, target, order, fname):
    """``a.reshape(target, order=order)``: Fortran order reverses the axes
    before and after a C-order reshape."""
    check_order(order, fname, ("C", "F"))
    if order == "F":
        target = (target,) if np.ndim(target) == 0 else tuple(target)
        return shape.transpose(shape.reshape(shape.transpose(a), target[::-1]))
    return shape.reshape(a, target)


def _ravel(a, order="C"):
    return reshape_in_order(a, (-1,), order, "np.ravel")


def _transpose(a, axes=None):
    return shape.transpose(a, axes)


def _swapaxes(a, axis1, axis2):
    return shape.swapaxes(a, axis1, axis2)


def _moveaxis(a, source, destination):
    src = [source] if np.ndim(source) == 0 else list(source)
    dst = [destination] if np.ndim(destination) == 0 else list(destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    nd = np.ndim(a)
    src, dst = [int(s) % nd for s in src], [int(d) % nd for d in dst]
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return shape.transpose(a, perm)


def _squeeze(a, axis=None):
    return shape.squeeze(a, axis)


def _expand_dims(a, axis):
    return shape.expand_dims(a, axis)


def _broadcast_to(array, shape, subok=False):
    return shape_mod.broadcast_to(array, tuple(np.atleast_1d(shape)) if np.ndim(shape)
                                  else (int(shape),))


def _atleast_1d(*arys):
    out = tuple(shape.reshape(a, (1,)) if np.ndim(a) == 0 else a for a in arys)
    return out[0] if len(out) == 1 else out       # several: a tuple, as NumPy gives


def _shape(a):
    return aval_of(a).shape


def _ndim(a):
    return aval_of(a).ndim


def _size(a, axis=None):
    s = aval_of(a).shape
    return math.prod(s) if axis is None else s[axis]


def _copy(a, order="K", subok=False):
    return inplace.fresh(a)     # the value, as a tracer a later ``a += v`` does not reach


def _astype(x, dtype, /, *, copy=True, device=None):
    check_device(device, "np.astype")
    return arith.convert(x, dtype=np.dtype(dtype))


# --- selection and elementwise helpers ---------------------------------
def _where(condition, x=None, y=None, /):
    if x is None and y is None:
        return _nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return selection.where(condition, x, y)


def _nonzero(condition):
    """``np.where(cond)``: the indices where ``cond`` holds, integers that
    carry no derivative (``index.nonzero``: how many there are is read when
    the code runs)."""
    if aval_of(condition).dtype != np.bool_:
        condition = ordering.not_equal(condition, 0)
    return index.nonzero(condition)


def np_clip(a, a_min=NO_VALUE, a_max=NO_VALUE, out=None, *, min=NO_VALUE, max=NO_VALUE,
          **kwargs):
    no_out(out, "np.clip")
    if kwargs:
        refuse("np.clip", sorted(kwargs)[0], "clip the result of a plain call instead")
    if (min is not NO_VALUE and a_min is not NO_VALUE) or (
            max is not NO_VALUE and a_max is not NO_VALUE):
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                         "are provided is forbidden.")
    lo = min if min is not NO_VALUE else a_min
    hi = max if max is not NO_VALUE else a_max
    return ordering.clip(a, None if lo is NO_VALUE else lo, None if hi is NO_VALUE else hi)


def np_round(a, decimals=0, out=None):
    no_out(out, "np.round")
    return ordering.round(a, decimals=decimals)


def _filled(fname, fill):
    """``np.zeros_like`` / ``np.ones_like``: constants, with NumPy's dtype
    and shape options."""
    def like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        check_device(device, fname)
        if shape is not None:
            return np.full(shape, fill, dtype or aval_of(a).dtype)
        out = (shape_mod.zeros_like if fill == 0 else shape_mod.ones_like)(a)
        return out if dtype is None else arith.convert(out, dtype=np.dtype(dtype))
    like.__name__ = fname.replace("np.", "")
    return like


_zeros_like = _filled("np.zeros_like", 0)
_ones_like = _filled("np.ones_like", 1)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_device(device, "np.full_like")
    av = aval_of(a)
    zeros = np.zeros(av.shape if shape is None else shape, dtype or av.dtype)
    return like_dtype(arith.add(zeros, fill_value), zeros)     # the fill takes the dtype


FUNCTIONS = {
    np.sum: np_sum, np.mean: np_mean, np.prod: np_prod, np.max: np_max, np.amax: np_max, np.min: np_min,
    np.amin: np_min, np.var: np_var, np.std: np_std, np.cumsum: np_cumsum, np.argmax: np_argmax,
    np.argmin: np_argmin, np.dot: np_dot, np.outer: _outer, np.inner: _inner,
    np.tensordot: _tensordot, np.trace: np_trace, np.diagonal: _diagonal, np.diag: _diag,
    np.einsum: _einsum, np.concatenate: _concatenate, np.stack: _stack, np.hstack: _hstack,
    np.vstack: _vstack, np.reshape: _reshape, np.ravel: _ravel, np.transpose: _transpose,
    np.swapaxes: _swapaxes, np.moveaxis: _moveaxis, np.squeeze: _squeeze,
    np.expand_dims: _expand_dims, np.broadcast_to: _broadcast_to, np.atleast_1d: _atleast_1d,
    np.shape: _shape, np.ndim: _ndim, np.size: _size, np.copy: _copy, np.astype: _astype,
    np.where: _where, np.clip: np_clip, np.round: np_round, np.around: np_round,
    np.zeros_like: _zeros_like, np.ones_like: _ones_like, np.full_like: _full_like,
}


