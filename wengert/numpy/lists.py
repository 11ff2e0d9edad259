"""Arrays written as Python lists and tuples of traced values:
``np.array([a, b * 2.0, 3.0])``, ``np.sum([a, b])``, ``np.stack([[a, 1.0], [b, c]])``.

NumPy has no dispatch protocol for these calls: it converts each element of
the list with ``__array__`` before any of its functions could see a traced
value. The source engine (``source.runtime.call``) calls the wrappers of
``CALLS`` in place of the NumPy callable whenever an argument holds a traced
value; each wrapper turns the lists into one traced array (``as_array``) and
calls the NumPy function on it, which then dispatches to its rule through
``__array_function__`` as any call on a traced array does. The trace engine
never sees these calls (``Tracer.__array__`` raises and names them).

Promotion is NumPy's own: the dtype and shape of the result are those NumPy
gives for the same nesting with every traced value replaced by a stand-in
of its dtype and shape (zeros, or a Python number for a traced Python
number), so ragged nesting, ``dtype=``, ``ndmin`` and mixed dtypes follow
NumPy exactly (``np.array([np.float32(1), 1.0])`` is float64 in NumPy 2).
The value is then built from the traced elements with ``stack``.

``np.r_[...]`` and ``np.c_[...]`` are subscripts of NumPy objects, not
calls: ``concatenator_getitem`` is what the source engine's ``getitem``
runs for them.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import arith, index, shape
from ..core.primitive import TracerBase
from .arrayargs import NO_VALUE, refuse
from ..core.errors import NoDerivativeRule, user_location
from ..core.ir import aval_of
from ..core.pytree import flatten

__all__ = ["CALLS", "NAMES", "as_array", "holds_traced", "concatenator_getitem",
           "CONCATENATORS"]


def holds_traced(x):
    """Whether ``x`` is a traced value or a list/tuple nesting that holds one."""
    if isinstance(x, TracerBase):
        return True
    if isinstance(x, (list, tuple)):
        return any(isinstance(leaf, TracerBase) for leaf in flatten(list(x))[0])
    return False


def _stand_in(x):
    """What NumPy would see in place of a traced value: a Python number for
    a traced Python number (weakly typed), else zeros of its shape and dtype."""
    av = aval_of(x)
    if av.weak:
        return av.python_type(0)
    return np.zeros(tuple(int(d) for d in av.shape), av.dtype)


def _template(x):
    if isinstance(x, TracerBase):
        return _stand_in(x)
    if isinstance(x, (list, tuple)):
        return [_template(e) for e in x]
    return x


def _build(x, dtype):
    """``x`` (a nesting of traced values and constants) as one array of
    ``dtype``; the shapes were checked by NumPy on the template."""
    if isinstance(x, TracerBase):
        av = aval_of(x)
        return x if av.dtype == dtype and not av.weak else arith.convert(x, dtype=dtype)
    if isinstance(x, (list, tuple)) and holds_traced(x):
        return index.stack([_build(e, dtype) for e in x], axis=0)
    return np.array(x, dtype=dtype)


def as_array(obj, dtype=None, ndmin=0, fname="np.array"):
    """``np.array(obj, dtype=dtype, ndmin=ndmin)`` of a nesting of lists and
    tuples holding traced values (or of a traced value itself)."""
    if isinstance(obj, TracerBase) and dtype is None and np.ndim(obj) >= ndmin:
        return obj          # a traced array as it is (np.sum(x) through its CALLS entry)
    template = np.array(_template(obj), dtype=dtype, ndmin=ndmin)
    if template.dtype.kind not in "biufc":
        raise NoDerivativeRule(
            f"{user_location()}: {fname} of a list holding traced values would make an array "
            f"of dtype {template.dtype}; its elements must be numbers or arrays of one shape")
    out = _build(obj, template.dtype)
    if np.ndim(out) < ndmin:
        out = shape.reshape(out, (1,) * (ndmin - np.ndim(out)) + tuple(np.shape(out)))
    return out


def _no_like(like, fname):
    if like is not None:
        refuse(fname, "like", "drop like= (traced values are NumPy arrays)")


def _device(device, fname):
    if device not in (None, "cpu"):
        refuse(fname, "device", "wengert computes with NumPy on the CPU: drop device=")


def _copied(obj, dtype, copy, fname):
    """``copy=False`` where NumPy would have to copy is NumPy's ValueError."""
    if copy is False and (isinstance(obj, (list, tuple)) or dtype is not None and
                          np.dtype(dtype) != aval_of(obj).dtype):
        raise ValueError(f"{user_location()}: {fname}(..., copy=False): unable to avoid "
                         "copying while creating an array as requested")


# --- array creation ----------------------------------------------------
def _array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0,
           like=None):
    # order and subok change the memory layout and the class, never the values
    _no_like(like, "np.array")
    if ndmax:
        refuse("np.array", "ndmax", "build the nesting you want and drop ndmax=")
    _copied(object, dtype, copy, "np.array")
    return as_array(object, dtype, ndmin, "np.array")


def _asarray_of(fname, ndmin=0):
    def fn(a, dtype=None, order=None, *, device=None, copy=None, like=None):
        _no_like(like, fname)
        _device(device, fname)
        _copied(a, dtype, copy, fname)
        return as_array(a, dtype, ndmin, fname)
    fn.__name__ = fname.replace("np.", "_")
    return fn


_asarray = _asarray_of("np.asarray")
_asanyarray = _asarray_of("np.asanyarray")


def _ascontiguousarray(a, dtype=None, *, like=None):
    _no_like(like, "np.ascontiguousarray")
    return as_array(a, dtype, 1, "np.ascontiguousarray")     # at least 1-d, as NumPy


# --- functions of a sequence of arrays: each element as NumPy converts it
def _elements(seq, fname):
    if isinstance(seq, (list, tuple)):
        return [as_array(e, fname=fname) if holds_traced(e) else e for e in seq]
    return as_array(seq, fname=fname) if holds_traced(seq) else seq


def _concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return np.concatenate(_elements(arrays, "np.concatenate"), axis, out, dtype=dtype,
                          casting=casting)


def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return np.stack(_elements(arrays, "np.stack"), axis, out, dtype=dtype, casting=casting)


def _hstack(tup, *, dtype=None, casting="same_kind"):
    return np.hstack(_elements(tup, "np.hstack"), dtype=dtype, casting=casting)


def _vstack(tup, *, dtype=None, casting="same_kind"):
    return np.vstack(_elements(tup, "np.vstack"), dtype=dtype, casting=casting)


def _at_least(x, nd, front):
    """``x`` with ones added to reach ``nd`` dimensions: ``front`` ones
    first, the rest after (``atleast_3d`` puts a 1-d array at (1, n, 1))."""
    s = tuple(np.shape(x))
    if len(s) >= nd:
        return x
    lead = min(front, nd - len(s))
    return shape.reshape(x, (1,) * lead + s + (1,) * (nd - len(s) - lead))


def _column_stack(tup):
    parts = [as_array(e, fname="np.column_stack") for e in tup]
    parts = [shape.reshape(p, tuple(np.shape(p)) + (1,)) if np.ndim(p) < 2 else p
             for p in (_at_least(p, 1, 1) for p in parts)]
    return _joined(parts, axis=1)


def _dstack(tup):
    parts = [as_array(e, fname="np.dstack") for e in tup]
    return _joined([_at_least(p, 3, 1 if np.ndim(p) == 1 else 0) for p in parts], axis=2)


def _joined(parts, axis):
    """``np.concatenate(parts, axis)``, in NumPy's common dtype."""
    dt = np.result_type(*[_stand_in(p) if isinstance(p, TracerBase) else p for p in parts])
    parts = [_build(p, dt) for p in parts]
    if not any(isinstance(p, TracerBase) for p in parts):
        return np.concatenate(parts, axis=axis)
    return index.concatenate(*parts, axis=axis)


def _block(arrays):
    # nested lists are the layout (never an array literal); the innermost
    # lists join along the last axis, the outermost along -depth
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0
    if isinstance(arrays, tuple):
        raise TypeError(f"{user_location()}: np.block: arrays is a tuple; only lists can be "
                        "used to arrange blocks (as NumPy)")
    if not isinstance(arrays, list):
        return as_array(arrays, fname="np.block")
    d = depth(arrays)
    leaves = flatten(arrays)[0]
    nd = max(d, max(np.ndim(x) for x in leaves))

    def join(x, level):
        if not isinstance(x, list):
            return _at_least(x, nd, nd)
        return _joined([join(e, level + 1) for e in x], axis=-(d - level))
    return join(arrays, 0)


def _append(arr, values, axis=None):
    arr, values = as_array(arr, fname="np.append"), as_array(values, fname="np.append")
    if axis is None:
        arr = arr if np.ndim(arr) == 1 else shape.reshape(arr, (-1,))
        values = values if np.ndim(values) == 1 else shape.reshape(values, (-1,))
        axis = np.ndim(arr) - 1
    return _joined([arr, values], axis=axis)


# --- reductions of a list ----------------------------------------------
def _sum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
         where=NO_VALUE):
    return np.sum(as_array(a, fname="np.sum"), axis, dtype, out, keepdims, initial, where)


def _prod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
          where=NO_VALUE):
    return np.prod(as_array(a, fname="np.prod"), axis, dtype, out, keepdims, initial, where)


def _mean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
    return np.mean(as_array(a, fname="np.mean"), axis, dtype, out, keepdims, where=where)


def _max(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
    return np.max(as_array(a, fname="np.max"), axis, out, keepdims, initial, where)


def _min(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
    return np.min(as_array(a, fname="np.min"), axis, out, keepdims, initial, where)


def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
         mean=NO_VALUE, correction=NO_VALUE):
    return np.var(as_array(a, fname="np.var"), axis, dtype, out, ddof, keepdims, where=where,
                  mean=mean, correction=correction)


def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *, where=NO_VALUE,
         mean=NO_VALUE, correction=NO_VALUE):
    return np.std(as_array(a, fname="np.std"), axis, dtype, out, ddof, keepdims, where=where,
                  mean=mean, correction=correction)


def _norm(x, ord=None, axis=None, keepdims=False):
    return np.linalg.norm(as_array(x, fname="np.linalg.norm"), ord, axis, keepdims)


CALLS = {
    np.array: _array, np.asarray: _asarray, np.asanyarray: _asanyarray,
    np.ascontiguousarray: _ascontiguousarray,
    np.concatenate: _concatenate, np.stack: _stack, np.hstack: _hstack, np.vstack: _vstack,
    np.column_stack: _column_stack, np.dstack: _dstack, np.block: _block, np.append: _append,
    np.sum: _sum, np.prod: _prod, np.mean: _mean, np.max: _max, np.min: _min, np.var: _var,
    np.std: _std, np.linalg.norm: _norm,
}

# np.array and friends are C functions whose __module__ is "numpy"
NAMES = {}


# --- np.r_[...] and np.c_[...] -------------------------------------------
CONCATENATORS = (type(np.r_), type(np.c_))


def concatenator_getitem(obj, key):
    """``np.r_[key]`` / ``np.c_[key]`` with traced items, as NumPy's
    ``AxisConcatenator.__getitem__`` computes it: slices become ranges,
    Python numbers and traced values arrays of at least ``ndmin``
    dimensions (1-d ones transposed as ``trans1d`` says), all cast to their
    common dtype, then concatenated along ``axis``. A first item that is a
    string sets ``axis[,ndmin[,trans1d]]``; the matrix directives ``'r'``
    and ``'c'`` are refused (``np.matrix`` is deprecated)."""
    name = "np.c_" if isinstance(obj, type(np.c_)) else "np.r_"
    key = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d = obj.axis, obj.ndmin, obj.trans1d
    if obj.matrix:
        raise NoDerivativeRule(f"{user_location()}: {name}: matrix results are not supported")
    objs, kinds = [], []
    for k, item in enumerate(key):
        if isinstance(item, str):
            if k != 0:
                raise ValueError(f"{user_location()}: {name}: special directives must be "
                                 "the first entry")
            if item in ("r", "c"):
                raise NoDerivativeRule(f"{user_location()}: {name}['{item}', ...] makes an "
                                       "np.matrix, which wengert does not support; drop the "
                                       "directive")
            try:
                vec = [int(v) for v in item.split(",")]
            except ValueError:
                raise ValueError(f"{user_location()}: {name}: unknown special directive "
                                 f"{item!r}") from None
            axis = vec[0]
            ndmin = vec[1] if len(vec) > 1 else ndmin
            trans1d = vec[2] if len(vec) > 2 else trans1d
            continue
        if isinstance(item, slice):
            if holds_traced([item.start, item.stop, item.step]):
                raise NoDerivativeRule(f"{user_location()}: {name}: a slice with traced "
                                       "bounds; slice bounds must be Python numbers")
            new = np.r_[item] if ndmin <= 1 else np.array(np.r_[item], ndmin=ndmin)
            if ndmin > 1 and trans1d != -1:
                new = new.swapaxes(-1, trans1d)
            objs.append(new)
            kinds.append(new.dtype)
            continue
        if type(item) in np.ScalarType:
            objs.append(item)
            kinds.append(item)
            continue
        nd = np.ndim(item) if not isinstance(item, (list, tuple)) else np.ndim(_template(item))
        new = as_array(item, ndmin=ndmin, fname=name)
        if trans1d != -1 and nd < ndmin:
            k2, k1 = ndmin - nd, trans1d
            k1 = k1 + k2 + 1 if k1 < 0 else k1
            axes = list(range(ndmin))
            new = np.transpose(new, axes[:k1] + axes[k2:] + axes[k1:k2])
        objs.append(new)
        weak = isinstance(new, TracerBase) and aval_of(new).weak
        kinds.append(_stand_in(new) if weak else np.result_type(
            _stand_in(new) if isinstance(new, TracerBase) else new))
    dt = np.result_type(*kinds)
    parts = [as_array(o, dt, ndmin, name) if holds_traced(o) else np.array(o, dt, ndmin=ndmin)
             for o in objs]
    if not any(isinstance(p, TracerBase) for p in parts):
        return np.concatenate(parts, axis=axis)
    return index.concatenate(*parts, axis=axis % np.ndim(parts[0]))
