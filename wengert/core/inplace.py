"""Augmented assignment on traced arrays (``y += v``), with NumPy's meaning.

NumPy writes ``y += v`` into ``y``'s memory: every other name of the same
array (``z = y``, a list that holds it) sees the change, and so does every
view of that memory (``y[1:]``, ``y.T``, ``y.reshape(...)``) and the array a
view looks into. A tracer has no memory to write. Left to Python, ``y += v``
would rebind ``y`` to ``y + v`` and every other name would keep the old
value: a wrong value and a wrong derivative, with no error.

So a traced array *becomes* its updated value (``become``: its slots are
replaced by those of ``y + v``), and every name of that tracer sees the
change, as in NumPy. Views cannot be followed that way: a trace links a
result to the operand whose memory NumPy's own result shares (``link_views``,
on concrete values), and an in-place update of a view, or of an array with a
view still alive, raises ``InPlaceUpdateError`` at the user's line. A value
NumPy would not write in place (a NumPy or Python scalar) is rebound, as
Python does; an array whose memory the trace cannot see (a symbolic value)
is refused.

Layer: core.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from .atoms import is_duck_array
from .primitive import TracerBase
from .errors import InPlaceUpdateError, ShapeMismatchError, UnsupportedDtypeError, user_location

__all__ = ["augmented", "assign", "replace", "distinct", "fresh", "link_views", "returns_new", "is_scalar",
           "array_value", "array_result", "scalar_value", "scalar_result"]


# --- scalars and 0-d arrays -----------------------------------------------------
# NumPy gives a 0-d *array* from ``x.copy()`` of one, ``np.copy``, ``np.array``,
# ``np.where``, ``x[...]``..., which ``y += v`` writes in place (every name of
# it sees the change), and a *scalar* from ufuncs, reductions and ``v[i]``,
# which ``y += v`` rebinds. A traced 0-d value is held as a scalar only where
# that is certain: a concrete NumPy scalar, or a staged value its row or
# input marked so (``StagingTracer.scalar``); anything else may be an array.

def is_scalar(v):
    """Whether ``v`` is a scalar for certain (a Python or NumPy number, or a
    traced 0-d value known to be one), never an array that ``v += w``
    writes into."""
    if isinstance(v, TracerBase):
        if v.aval.shape != ():
            return False
        c = _concrete(v)
        if c is not None:
            return type(c) is not np.ndarray
        return v.numpy_scalar()
    return isinstance(v, (int, float, complex, np.generic))


def scalar_value(v):
    """A concrete value or a tracer as a NumPy scalar where it is a 0-d array."""
    if isinstance(v, TracerBase):
        return v.as_scalar()
    if type(v) is np.ndarray and v.ndim == 0:
        return v[()]
    return v


def array_value(v):
    """A concrete value or a tracer as a 0-d array where it is a scalar
    (``np.asarray``'s kind, not its dtype: the tracer's aval is kept)."""
    if isinstance(v, TracerBase):
        return v.as_array()
    if isinstance(v, (int, float, complex, np.generic)):
        return np.asarray(v)
    return v


def needs_cast(y_shape, y_dtype, r_shape, r_dtype, symbol, where):
    """Whether NumPy's ``y op= v`` (``symbol``: ``op``; ``where``: the user's
    file:line) casts the result ``y op v`` (shape ``r_shape``, dtype
    ``r_dtype``) to ``y``'s dtype as it writes it into ``y``; raise where
    NumPy refuses, in NumPy's order: a cast the ``same_kind`` rule forbids
    (``int += float``), then a result broadcast to another shape."""
    cast = np.dtype(r_dtype) != np.dtype(y_dtype)
    if cast and not np.can_cast(r_dtype, y_dtype, "same_kind"):
        raise UnsupportedDtypeError(
            f"{where}: `y {symbol}= v` would store a {r_dtype} result into a {y_dtype} "
            f"array, which NumPy refuses (casting 'same_kind'); write y = y {symbol} v for a "
            "new array of the wider type, or convert v first")
    if len(r_shape) != len(y_shape) or any(a != b for a, b in zip(r_shape, y_shape)):
        raise ShapeMismatchError(
            f"{where}: `y {symbol}= v` on an array of shape {tuple(y_shape)} with a result of "
            f"shape {tuple(r_shape)}: NumPy cannot write it in place; write y = y {symbol} v "
            "for the broadcast result")
    return cast


def scalar_result(out):
    """``out``, the result of a NumPy function that answers a 0-d result with
    a scalar (``np.sum``, ``np.flip`` of a 0-d array), with its 0-d traced
    values made scalars where a rule handed back a 0-d array (its operand,
    an ``np.where``)."""
    if isinstance(out, TracerBase):
        return out if out.aval.shape else out.as_scalar()
    if type(out) in (tuple, list):
        return type(out)(scalar_result(o) for o in out)
    return out


def array_result(out, certain=True):
    """``out``, a NumPy function's result, with its 0-d values made arrays
    where they were scalars: the function's NumPy answer is an array
    (``certain``: ``np.copy``, ``np.full_like``, ``np.asarray`` of a scalar),
    or may be one (not ``certain``: a function that answers with a scalar
    where its operand is one, or one not classified). An uncertain answer
    only takes a staged value's certainty away (the source engine then
    refuses a write that another name would see); a concrete value keeps the
    type NumPy's own implementation gave it."""
    if isinstance(out, TracerBase):
        if out.aval.shape:
            return out
        return out.as_array() if certain else out.as_maybe_array()
    if certain and isinstance(out, np.generic):
        return np.asarray(out)      # computed now (np.full_like(x, 1.5) reads no value)
    if type(out) in (tuple, list):
        return type(out)(array_result(o, certain) for o in out)
    return out




def _concrete(x):
    """The concrete NumPy value under ``x`` (through nested tracers), or None."""
    return getattr(x, "concrete_value", None)


def link_views(out, args):
    """Record that ``out`` (a tracer of the trace that computed it from
    ``args``) is a view of an operand: NumPy's own result shares that
    operand's memory. Cheap when it is not: most results own their memory."""
    c = _concrete(out)
    if type(c) is not np.ndarray or c.base is None:
        return
    for a in args:
        if a is out or not hasattr(a, "become"):
            continue
        ca = _concrete(a)
        if type(ca) is np.ndarray and np.may_share_memory(c, ca):
            _link(out, a)
            return


def _link(view, base):
    """``view`` looks into ``base``'s memory. The base's weak references to
    its views are pruned of dead ones as they double, so a loop taking a
    slice of one array each step keeps them (and the scan of an in-place
    write, ``_live_view``) as long as the live views, not the steps."""
    view._base = base               # a view keeps what it looks into alive, as in NumPy
    views = getattr(base, "_views", None)
    if views is None:
        base._views = views = []
    views.append(weakref.ref(view))
    if len(views) >= 64 and len(views) & (len(views) - 1) == 0:
        views[:] = [r for r in views if r() is not None]


def fresh(x):
    """A copy of ``x`` (``x.copy()``, ``np.copy``): the same value, as another
    tracer, so that a later ``x += v`` (which changes ``x``'s tracer) does not
    reach it. Anything else (a plain array, a scalar) is copied as NumPy does."""
    clone = getattr(x, "clone", None)
    if clone is not None:
        return clone()
    return np.copy(x) if isinstance(x, np.ndarray) else x


def distinct(out, args, certain):
    """``out``, a NumPy function's result on ``args``, as a tracer of its own
    where a rule handed back an operand unchanged (``np.roll(y, 0)``,
    ``np.positive(y)``) but NumPy gives a new array: a later ``y += v`` must
    not reach it. ``certain``: NumPy always allocates (a ufunc); otherwise the
    new tracer is linked as a view of the operand, so that a later write into
    either raises instead of guessing."""
    if not isinstance(out, TracerBase) or not _among(out, args):
        return out
    copy = fresh(out)
    if not certain:
        _link(copy, out)
    return copy


def _among(out, args):
    for a in args:
        if a is out or type(a) in (list, tuple) and _among(out, a):
            return True
    return False


def returns_new(method):
    """An array method NumPy answers with a new array (``y.sum(axis=())``,
    ``y.round(20)``): never the tracer itself (``distinct``), and a NumPy
    scalar where it is 0-d (``a.sum()`` of a 0-d array is one)."""
    @functools.wraps(method)        # NumPy's parameters, as ``inspect.signature`` shows them
    def wrapper(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        return scalar_result(distinct(out, (self,), True) if out is self else out)
    return wrapper


def _live_view(y):
    views = getattr(y, "_views", None)
    if not views:
        return False
    views[:] = [r for r in views if r() is not None]
    return bool(views)


def augmented(symbol, name, op):
    """The ``__i<name>__`` method of tracers: ``y <symbol>= v`` as NumPy does it."""
    def method(self, other):
        return _update(self, other, op, symbol)
    method.__name__ = f"__i{name}__"
    return method


def assign(y, idx, v, index_set):
    """``y[idx] = v`` on a traced array, as NumPy does it: ``y`` becomes
    ``index_set(y, v, idx)`` (the functional update), which every name of it
    sees; refused as ``y op= v`` is where a view would have to change too.
    (``y[mask] += v`` is Python's ``t = y[mask]; t += v; y[mask] = t``.)"""
    val = _concrete(y)
    if val is not None and type(val) is not np.ndarray and not is_duck_array(val):
        raise TypeError(f"{type(val).__name__!r} object does not support item assignment")
    _check_writable(y, val, "`y[i] = v`", "write y = wg.at(y)[i].set(v) (a new array)")
    r = index_set(y, v, idx)
    if type(r) is not type(y) or r._trace is not y._trace:
        raise InPlaceUpdateError(
            f"{user_location()}: `y[i] = v` writes a value of an inner transformation into "
            "an array of an outer one; write y = wg.at(y)[i].set(v) (a new array)")
    y.become(r)


def replace(y, new, what):
    """``y`` becomes ``new``, a value of its own trace computed from it: what NumPy's
    in-place functions (``np.put(y, ...)``, ``np.copyto(y, ...)``, ``out=y``) make of
    ``y``, which every name of it sees; refused where a view would have to see it too."""
    _check_writable(y, _concrete(y), what, "use the function's functional form")
    if type(new) is not type(y) or new._trace is not y._trace:
        raise InPlaceUpdateError(
            f"{user_location()}: {what} writes a value of an inner transformation into an "
            "array of an outer one; compute a new array instead")
    y.become(new)


def _check_writable(y, val, what, instead):
    """Raise where the trace engine cannot write into ``y`` as NumPy would (its memory is
    not followed, or a view of it or the array it views would have to change too);
    ``what``: the write as the user wrote it, ``instead``: the way out."""
    where = user_location()
    if val is None or not hasattr(y, "become"):
        raise InPlaceUpdateError(
            f"{where}: {what} writes into a traced array whose memory wengert cannot follow "
            "here (a value being recorded symbolically): other names or views of it would "
            f"not see the change; {instead}")
    if getattr(y, "_base", None) is not None:
        raise InPlaceUpdateError(
            f"{where}: {what} writes into a view of another traced array (a slice, .T, a "
            "reshape): NumPy would change that array too, which the trace engine cannot "
            "follow. Take the view with .copy(), or use engine='source'")
    if _live_view(y):
        raise InPlaceUpdateError(
            f"{where}: {what} writes into a traced array while a view of it (a slice, .T, "
            "a reshape) is still held: NumPy would change the view too, which the trace "
            f"engine cannot follow. Copy the view (.copy()) where it is taken, or {instead}, "
            "or use engine='source'")


def _update(y, v, op, symbol):
    val = _concrete(y)
    if val is not None and type(val) is not np.ndarray:
        return NotImplemented       # a scalar: Python rebinds the name, as with NumPy's
    if val is None and not y.aval.shape:
        return NotImplemented       # a 0-d symbolic value: held as a scalar
    where = user_location()
    if val is None or not hasattr(y, "become"):
        raise InPlaceUpdateError(
            f"{where}: `y {symbol}= v` writes into a traced array whose memory wengert "
            "cannot follow here (a value being recorded symbolically): other names or "
            f"views of it would not see the change. Write y = y {symbol} v (a new array)")
    if getattr(y, "_base", None) is not None:
        raise InPlaceUpdateError(
            f"{where}: `{symbol}=` writes into a view of another traced array (a slice, "
            ".T, a reshape): NumPy would change that array too, which the trace engine "
            f"cannot follow. Write the view as a new array (v = v {symbol} w) and build the "
            "whole array from it, or take the view with .copy(), or use engine='source'")
    if _live_view(y):
        raise InPlaceUpdateError(
            f"{where}: `{symbol}=` writes into a traced array while a view of it (a slice, "
            ".T, a reshape) is still held: NumPy would change the view too, which the trace "
            f"engine cannot follow. Copy the view (.copy()) where it is taken, or write "
            f"y = y {symbol} v (a new array), or use engine='source'")
    r = op(y, v)
    if type(r) is not type(y) or r._trace is not y._trace:
        raise InPlaceUpdateError(
            f"{where}: `{symbol}=` writes a value of an inner transformation into an array "
            f"of an outer one; write y = y {symbol} v (a new array)")
    if needs_cast(y.aval.shape, y.aval.dtype, r.aval.shape, r.aval.dtype, symbol, where):
        r = r.astype(y.aval.dtype)
    if type(val) is np.ndarray and not y.aval.shape:
        r = r.as_array()            # a 0-d array stays one (NumPy writes into it)
    y.become(r)
    return y
