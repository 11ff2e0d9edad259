"""Indexing: ``getitem`` (integers, slices, None, Ellipsis, integer arrays,
boolean masks) and its two linear companions, ``index_add`` (scatter-add, the
transpose of ``getitem``) and ``index_set`` (the functional ``x[i] = v``).

The index is a static param: a tuple of ints, slices, None, Ellipsis and
integer arrays. Boolean masks become integer arrays (``nonzero``) when the
index is normalised, so every index is a fixed gather/scatter pattern. An
integer (or integer array) known only when the program runs (a loop counter
of a structured loop, an index array passed as an argument) is a *dynamic*
position: ``DYN`` in the static index, and an extra integer operand after the
array operands, in order.

``concatenate`` (and ``stack`` over it) lives here too: its transpose slices
the cotangent apart with ``getitem``. The rows' ``lower`` rules (their
imperative forms) are in ``index_lower.py``.
"""
from __future__ import annotations

import re

import numpy as np

from ..core import dims as _dims
from ..core.primitive import (
    Linear, Primitive, TracerBase, Zero, instantiate, register, zero_if_any, zeros as core_zeros)
from ..core.trace import bind
from ..core.rules import EmitRule, result_dtype, shape_error
from .shape import broadcast_to, expand_dims, reshape, sum_to_shape
from ..core.dims import has_dims, slice_length
from ..core.errors import NonDifferentiableInputError
from ..core.ir import Aval, Lit, aval_of


class _Dynamic:
    """Marks an index position filled by an integer operand at run time."""

    def __repr__(self):
        return "DYN"


DYN = _Dynamic()


def _concrete_index_part(p):
    if isinstance(p, TracerBase):
        val = getattr(p, "concrete_value", None)
        av = aval_of(p)
        if val is None and av.dtype.kind in "iu":
            return p                       # a dynamic index: a counter, or an index array input
        if val is None or av.dtype.kind not in "iub":
            raise NonDifferentiableInputError(
                "an index computed from a differentiated value must be an integer or boolean "
                "array with a known value; index with integers, slices or masks derived from "
                "inputs you do not differentiate")
        p = val
    return p


def normalize_index(idx):
    """(static index, dynamic operands): a tuple with booleans turned into
    integer arrays and traced scalar integers replaced by ``DYN``."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out, dyn = [], []
    for p in idx:
        p = _concrete_index_part(p)
        if isinstance(p, TracerBase):
            out.append(DYN)
            dyn.append(p)
        elif isinstance(p, slice) and any(isinstance(b, TracerBase)
                                          for b in (p.start, p.stop, p.step)):
            raise NonDifferentiableInputError(
                "a slice whose bounds are only known when the program runs is not supported; "
                "index one position at a time, or use bounds that do not depend on loop "
                "counters")
        elif isinstance(p, (list, np.ndarray)) or (isinstance(p, np.generic) and p.dtype.kind == "b"):
            arr = np.asarray(p)
            if arr.dtype.kind == "b":
                out.extend(np.nonzero(arr))
                continue
            if arr.dtype.kind not in "iu":
                raise IndexError(f"arrays used as indices must be integer or boolean, got {arr.dtype}")
            out.append(arr)
        elif isinstance(p, (np.integer,)):
            out.append(int(p))
        else:
            out.append(p)
    return tuple(out), tuple(dyn)


def _fill(idx, dyn):
    """The concrete index: dynamic positions take their operands' values."""
    if not dyn:
        return idx
    it = iter(dyn)
    return tuple(_position(next(it)) if p is DYN else p for p in idx)


def _position(v):
    return np.asarray(v) if np.ndim(v) else int(v)


def _has_arrays(idx):
    return any(isinstance(p, np.ndarray) or p is DYN for p in idx)


def _dummy(aval):
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


# --- getitem -----------------------------------------------------------
def getitem_impl(x, *dyn, idx):
    return np.asarray(x)[_fill(idx, dyn)]


def getitem_aval(x, *dyn, idx):
    shape = _dummy(x)[_fill(idx, [np.zeros(d.shape, np.intp) for d in dyn])].shape
    if has_dims(x.shape):
        shape = _basic_shape(x.shape, idx, dyn) or shape
    return Aval(shape, x.dtype)


def _basic_shape(shape, idx, dyn):
    """The shape ``x[idx]`` has, in symbolic lengths (``dims``), for a basic
    index (ints, slices, None, Ellipsis, scalar dynamic positions); None for
    others (index arrays), whose shape is taken as it is."""
    dyn = iter(dyn)
    if any(isinstance(p, np.ndarray) or (p is DYN and next(dyn).shape) for p in idx):
        return None
    n_axes = sum(p is not None and p is not Ellipsis for p in idx)
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - n_axes) + idx[k + 1:]
    out, axis = [], 0
    for p in idx:
        if p is None:
            out.append(1)
            continue
        if isinstance(p, slice):
            out.append(slice_length(shape[axis], p))
        axis += 1
    return tuple(out) + tuple(shape[axis:])


def getitem_jvp(primals, tangents, idx):
    x, *dyn = primals
    return bind(getitem_p, x, *dyn, idx=idx), bind(getitem_p, tangents[0], *dyn, idx=idx)


def getitem_transpose(ct, x, *dyn, idx):
    zeros = core_zeros(Aval(x.aval.shape, aval_of(ct).dtype))   # ct may be a Python float
    return (bind(index_add_p, zeros, ct, *dyn, idx=idx),) + (None,) * len(dyn)


def getitem_batch(args, batched, idx):
    if _has_arrays(idx) or Ellipsis in idx or any(batched[1:]):
        return NotImplemented
    return getitem(args[0], (slice(None),) + idx)


def getitem_scalar(idx):
    """Full integer indexing (``v[i]``, ``A[i, j]``, ``a[()]``) gives NumPy
    scalars; ``a[...]``, ``v[i, ...]`` and slices give arrays, 0-d ones too."""
    return all(p is DYN or type(p) is int or type(p) is np.ndarray and p.ndim == 0
               for p in idx)


getitem_p = register(Primitive("getitem", nargs=None, impl=getitem_impl, jvp=getitem_jvp,
                               transpose=getitem_transpose, abstract_eval=getitem_aval,
                               batch=getitem_batch,
                               numpy_scalar=getitem_scalar))
getitem_p.zero_rule = zero_if_any(getitem_p)


class GetitemEmit(EmitRule):
    """``x[1:3, i]``; a Python scalar cannot be subscripted, and the impl
    takes ``int()`` of a dynamic position: other cases go through the impl."""

    def expression(self, code, eqn, ins, py):
        if set(eqn.params) == {"idx"} and not py[0] \
                and all(x.aval.dtype.kind in "iu" for x in eqn.inputs[1:]):
            sub = code.subscript(eqn.params["idx"], ins[1:])
            if sub is not None:
                if eqn.outputs[0] in code.floats:        # a stand-in (``python_floats``)
                    return f"{code.atom(ins[0])}.item({sub})"
                return f"{code.atom(ins[0])}[{sub}]"

    def python_floats(self, eqn, kinds):
        """An element of a float64 array read as a Python float (``x.item(i)``,
        the same bits; NumPy's scalar maths on an ``np.float64`` is slower, and
        far slower on subnormals, where it reports the underflow)."""
        return (True,) * len(kinds), (_element(eqn, 1) and kinds[0] == "np",)


getitem_p.emit = GetitemEmit()


def _element(eqn, first):
    """Whether ``eqn`` (a getitem or an update: its positions are its
    operands from ``first`` on) reads or writes one element of a float64
    array at integer positions."""
    x = eqn.inputs[0]
    idx = eqn.params.get("idx")
    return set(eqn.params) == {"idx"} and isinstance(idx, tuple) and len(idx) == len(x.aval.shape) \
        and x.aval.shape != () and x.aval.dtype == np.float64 \
        and all(p is DYN or type(p) is int for p in idx) \
        and all(d.aval.dtype.kind in "iu" and d.aval.shape == () for d in eqn.inputs[first:])


def getitem(x, idx):
    idx, dyn = normalize_index(idx)
    return bind(getitem_p, x, *dyn, idx=idx)


# --- concatenate -------------------------------------------------------
def concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


def concatenate_aval(*xs, axis):
    first = xs[0].shape
    for x in xs[1:]:
        if len(x.shape) != len(first) or any(a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != axis):
            raise shape_error(f"concatenate: shapes {first} and {x.shape} differ off axis {axis}")
    size = sum(x.shape[axis] for x in xs)
    return Aval(first[:axis] + (size,) + first[axis + 1:], result_dtype(*xs))


def concatenate_jvp(primals, tangents, axis):
    out = concatenate(*primals, axis=axis)
    tans = [_dims.zeros(t.aval.shape, out.dtype) if isinstance(t, Zero) else t for t in tangents]
    return out, concatenate(*tans, axis=axis)


def concatenate_transpose(ct, *xs, axis):
    cts, start = [], 0
    for x in xs:
        n = _dims.shape(x)[axis]
        if isinstance(x, Linear):
            idx = (slice(None),) * axis + (slice(start, start + n),)
            cts.append(getitem(ct, idx))
        else:
            cts.append(None)
        start += n
    return tuple(cts)


def concatenate_batch(args, batched, axis):
    b = next(_dims.shape(a)[0] for a, f in zip(args, batched) if f)
    fixed = [a if f else broadcast_to(a, (b,) + tuple(_dims.shape(a))) for a, f in zip(args, batched)]
    return concatenate(*fixed, axis=axis + 1)


concatenate_p = register(Primitive("concatenate", nargs=None, impl=concatenate_impl,
                                   jvp=concatenate_jvp, transpose=concatenate_transpose,
                                   abstract_eval=concatenate_aval, batch=concatenate_batch))


class ConcatenateEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        if set(eqn.params) == {"axis"}:
            ops = ", ".join(ins) + ("," if len(ins) == 1 else "")
            return f"{code.np}.concatenate(({ops}), axis={code.param(eqn.params['axis'])})"


concatenate_p.emit = ConcatenateEmit()


def concatenate(*xs, axis=0):
    nd = np.ndim(xs[0])
    if nd == 0:
        raise shape_error("concatenate: zero-dimensional arrays cannot be concatenated; "
                                 "use stack")
    return bind(concatenate_p, *xs, axis=axis % nd)


def stack(xs, axis=0):
    nd = np.ndim(xs[0]) + 1
    return concatenate(*[expand_dims(x, axis % nd) for x in xs], axis=axis % nd)


# --- index_add (scatter-add) -------------------------------------------
def _into(x, v):
    """A copy of ``x`` to update with ``v``, and ``v`` as it is stored:
    the update keeps ``x``'s dtype, as NumPy's ``x[i] = v`` and ``x[i] += v``
    do (a float32 array stays float32, an integer one stores integers)."""
    out = np.array(x, copy=True)
    v = np.asarray(v)
    return out, v if np.can_cast(v.dtype, out.dtype, "same_kind") else v.astype(out.dtype)


def index_add_impl(x, v, *dyn, idx):
    out, v = _into(x, v)
    idx = _fill(idx, dyn)
    if _has_arrays(idx):
        np.add.at(out, idx, v)        # an index array may repeat a position: accumulate
    else:
        out[idx] += v                 # a basic index meets each position once; np.add.at is ~5x slower
    return out


def index_add_aval(x, v, *dyn, idx):
    return Aval(x.shape, x.dtype)


def index_add_jvp(primals, tangents, idx):
    x, v, *dyn = primals
    return (bind(index_add_p, x, v, *dyn, idx=idx),
            bind(index_add_p, tangents[0], tangents[1], *dyn, idx=idx))


def index_add_transpose(ct, x, v, *dyn, idx):
    return ((ct if isinstance(x, Linear) else None,
             sum_to_shape(bind(getitem_p, ct, *dyn, idx=idx), v.aval.shape)
             if isinstance(v, Linear) else None) + (None,) * len(dyn))


def _instantiate_pair(prim):
    def rule(x, v, *dyn, idx):
        if isinstance(x, Zero) and isinstance(v, Zero):
            return Zero(prim.abstract_eval(x.aval, v.aval, idx=idx))
        return bind(prim, instantiate(x), instantiate(v), *dyn, idx=idx)
    return rule


def _update_batch(prim):
    """Batch rule of index_add / index_set with a basic index (ints, slices,
    None): the batch axis goes in front of the index, and a batched ``v`` is
    lined up with the indexed part's rank."""
    def rule(args, batched, idx):
        if _has_arrays(idx) or Ellipsis in idx or any(batched[2:]):
            return NotImplemented
        x, v = args[0], args[1]
        size = _dims.shape(args[0] if batched[0] else args[1])[0]
        if not batched[0]:
            x = broadcast_to(x, (size,) + tuple(_dims.shape(x)))
        if batched[1]:
            part = _dims.shape(_dummy(aval_of(x))[(slice(None),) + idx])
            v_rank = np.ndim(v) - 1
            if v_rank < len(part) - 1:
                v = reshape(v, (size,) + (1,) * (len(part) - 1 - v_rank) + tuple(_dims.shape(v)[1:]))
        return bind(prim, x, v, idx=(slice(None),) + idx)
    return rule


index_add_p = register(Primitive("index_add", nargs=None, impl=index_add_impl, jvp=index_add_jvp,
                                 transpose=index_add_transpose, abstract_eval=index_add_aval))
index_add_p.batch = _update_batch(index_add_p)
index_add_p.zero_rule = _instantiate_pair(index_add_p)


def index_add(x, v, idx):
    idx, dyn = normalize_index(idx)
    return bind(index_add_p, x, v, *dyn, idx=idx)


# --- index_set (functional x[idx] = v) ---------------------------------
def index_set_impl(x, v, *dyn, idx):
    out, v = _into(x, v)
    out[_fill(idx, dyn)] = v
    return out


def index_set_jvp(primals, tangents, idx):
    x, v, *dyn = primals
    return (bind(index_set_p, x, v, *dyn, idx=idx),
            bind(index_set_p, tangents[0], tangents[1], *dyn, idx=idx))


def index_set_transpose(ct, x, v, *dyn, idx):
    # overwritten places send nothing back to x; v receives what they got
    return ((bind(index_set_p, ct, np.zeros((), aval_of(ct).dtype), *dyn, idx=idx)
             if isinstance(x, Linear) else None,
             sum_to_shape(bind(getitem_p, ct, *dyn, idx=idx), v.aval.shape)
             if isinstance(v, Linear) else None) + (None,) * len(dyn))


index_set_p = register(Primitive("index_set", nargs=None, impl=index_set_impl, jvp=index_set_jvp,
                                 transpose=index_set_transpose, abstract_eval=index_add_aval))
index_set_p.zero_rule = _instantiate_pair(index_set_p)
index_set_p.batch = _update_batch(index_set_p)


def index_set(x, v, idx):
    idx, dyn = normalize_index(idx)
    return bind(index_set_p, x, v, *dyn, idx=idx)


# --- index_add / index_set as NumPy statements --------------------------
class FunctionalUpdateEmit(EmitRule):
    """The functional update as a person writes it: a copy of ``x``, then
    ``out[i] += v`` (``index_add``) or ``out[i] = v`` (``index_set``); an
    index array in an ``index_add`` is ``np.add.at``, which accumulates
    repeated positions as the impl does. A fresh array operand (``np.zeros``)
    is not copied again. Values the impl would cast (an update whose dtype
    cannot be cast ``same_kind`` into ``x``'s) and indices that are not
    integer ones go through the impl."""

    def __init__(self, accumulate):
        self.accumulate = accumulate

    def statements(self, code, eqn, ins, py, outs, subs):
        return self.functional(code, eqn, ins, py, outs[0])

    def functional(self, code, eqn, ins, py, out, inplace=False):
        """The lines making ``out`` a new array: ``x`` with ``v`` added or set
        (``inplace``: ``x`` itself, changed, when nothing reads it afterwards:
        ``backends/lower.py``)."""
        x, v, *dyn = eqn.inputs
        dtype = eqn.outputs[0].aval.dtype
        if set(eqn.params) != {"idx"} or not np.can_cast(v.aval.dtype, dtype, "same_kind") \
                or any(d.aval.dtype.kind not in "iu" for d in dyn):
            return None
        idx = eqn.params["idx"]
        sub = code.subscript(idx, ins[2:])
        if sub is None:
            return None
        value = ins[1]
        if isinstance(v, Lit) and np.ndim(v.val) == 0 and np.asarray(v.val).dtype == dtype \
                and dtype.kind in "fiu":
            # a scalar of the array's own dtype: as a Python number, the same
            # element is stored, without making a NumPy scalar at each run
            value = code.scalar(np.asarray(v.val).item()) or value
        if self.accumulate and py[1] and v.aval.dtype != dtype:
            # the impl adds the update as an array: a Python float added to a
            # float32 array would be rounded to float32 first
            value = f"{code.np}.asarray({value})"
        target, then = out, []
        if not inplace:
            lines = [f"{out} = {self._copy(code, eqn, ins[0])}"]
        elif ins[0].isidentifier():
            lines, target = [], ins[0]
            then = [f"{out} = {target}"] if out != target else []
        else:                                       # a literal making a new array
            lines = [f"{out} = {ins[0]}"]
        arrays = any(isinstance(p, np.ndarray) for p in idx) or any(d.aval.shape for d in dyn)
        if self.accumulate and arrays:
            where = f"{code.np}.s_[{sub}]" if any(isinstance(p, slice) for p in idx) \
                else (sub if len(idx) == 1 else f"({sub})")
            one = len(idx) == 1 and (getattr(idx[0], "ndim", None) == 1 or (
                idx[0] is DYN and len(dyn[0].aval.shape) == 1))
            rows = None if not one else (
                (tuple(dyn[0].aval.shape if idx[0] is DYN else idx[0].shape)
                 + tuple(x.aval.shape[1:])), tuple(v.aval.shape))
            lines += code.add_at(target, where, value, rows)
        elif self.accumulate and v in code.floats and _element(eqn, 2):
            # a Python float added to the element as a Python float (NumPy's
            # sum of the two, and a tenth faster than ``+=``)
            lines.append(f"{target}[{sub}] = {target}.item({sub}) + {value}")
        else:
            lines.append(f"{target}[{sub}] {'+=' if self.accumulate else '='} {value}")
        return lines + then

    def python_floats(self, eqn, kinds):
        """A float64 stand-in stored into a float64 array is the same number."""
        x, v = eqn.inputs[0], eqn.inputs[1]
        if x.aval.dtype != np.float64 or v.aval.dtype != np.float64:
            return None
        return (True, True) + (False,) * (len(kinds) - 2), (False,)

    @staticmethod
    def _copy(code, eqn, text):
        """``x`` as a new array: a literal that makes one (``np.zeros``) as it
        is; a scalar through ``np.array`` (it may be a Python or NumPy scalar,
        which cannot be written); else ``x.copy()``."""
        x = eqn.inputs[0]
        if isinstance(x, Lit) and re.match(rf"{re.escape(code.np)}\.(zeros|full)\(", text):
            return text
        if not x.aval.shape:
            return f"{code.np}.array({text})"
        return f"{code.atom(text)}.copy()"


index_add_p.emit = FunctionalUpdateEmit(accumulate=True)
index_set_p.emit = FunctionalUpdateEmit(accumulate=False)

class IndexUpdater:
    """``wg.at(x)[idx].set(v)`` / ``.add(v)``: functional updates, as JAX's
    ``x.at[idx].set(v)``; the caller's array is never written."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx=None):
        self.x, self.idx = x, idx

    def __getitem__(self, idx):
        return IndexUpdater(self.x, idx)

    def set(self, v):
        return index_set(self.x, v, self.idx)

    def add(self, v):
        return index_add(self.x, v, self.idx)
