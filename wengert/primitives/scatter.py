"""The linear companions of ``getitem`` (``index.py``): ``index_add``
(scatter-add, the transpose of ``getitem``) and ``index_set`` (the
functional ``x[i] = v``), with their imperative forms (``x[i] += v`` in
place where nothing reads ``x`` afterwards, sums absorbed, one element at
a time: ``UpdateLower``), and ``wg.at``, JAX's ``x.at[i].set(v)``.

Layer: primitives.
"""
from __future__ import annotations

import re

import numpy as np

from ..core import dims as _dims, libraries
from ..core.lengths import linear_form
from ..core.ir import Aval, Eqn, Lit, Var, aval_of
from ..core.primitive import Linear, Primitive, Zero, instantiate, register
from ..core.rules import EmitRule, LowerRule
from ..core.trace import bind
from .arith import add_p
from .index import (DYN, concatenate_p, element_positions, fill_index, float64_element,
                    getitem_p, has_index_arrays, normalize_index)
from .shape import broadcast_to, reshape, reshape_p, sum_to_shape, transpose
from .batched import batch_size, spread
from .index import batched_index
from .shape import broadcast_to, reshape, reshape_p, sum_to_shape
from ..core.primitive import moves
from ..core.atoms import is_duck_array
from ..core.deps import broadcast_sel, dense, ids, relate_all

__all__ = ["index_add", "index_add_p", "index_set", "index_set_p", "IndexUpdater"]


# --- index_add (scatter-add) -------------------------------------------
def _into(x, v):
    """A copy of ``x`` to update with ``v``, and ``v`` as it is stored:
    the update keeps ``x``'s dtype, as NumPy's ``x[i] = v`` and ``x[i] += v``
    do (a float32 array stays float32, an integer one stores integers). On
    another library's arrays (Dask, CuPy) the copy is of that library, its own."""
    duck = v if is_duck_array(v) else x if is_duck_array(x) else None
    if duck is not None:
        out = np.asarray(x, like=duck).copy()
        v = v if hasattr(v, "dtype") else np.asarray(v, like=duck)     # (a Python float)
        return out, v if np.can_cast(v.dtype, out.dtype, "same_kind") else v.astype(out.dtype)
    out = np.array(x, copy=True)
    v = np.asarray(v)
    return out, v if np.can_cast(v.dtype, out.dtype, "same_kind") else v.astype(out.dtype)


def index_add_impl(x, v, *dyn, idx):
    out, v = _into(x, v)
    idx = fill_index(idx, dyn)
    if (libraries.foreign(out, idx) or is_duck_array(v)) and (
            has_index_arrays(idx) or libraries.foreign(None, idx)):
        out = libraries.add_at(out, idx, v)     # Dask's: a new array (no np.add.at there)
    elif has_index_arrays(idx):
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


def _zero_pair(prim, x, v, dyn, idx):
    """The zero rule of an update: zero only where both the array and the value are."""
    if isinstance(x, Zero) and isinstance(v, Zero):
        return Zero(prim.abstract_eval(x.aval, v.aval, idx=idx))
    return bind(prim, instantiate(x), instantiate(v), *dyn, idx=idx)


def _update_batch(prim, args, batched, idx):
    """Batch rule of index_add / index_set: each example's update of its own array, as one
    update of the batch (``index.batched_index``: the batch axis indexed alongside); the
    value ``v`` laid out as the part of the batch it updates."""
    x, v, *dyn = args
    size = batch_size(args, batched)
    if not batched[0]:
        x = spread(x, size)
    new_idx, new_dyn, perm = batched_index(idx, dyn, batched[2:], np.ndim(x) - 1, size)
    part = getitem_p.abstract_eval(aval_of(x), *[aval_of(d) for d in new_dyn],
                                   idx=new_idx).shape
    if batched[1]:
        shp, need = tuple(_dims.shape(v)), len(part) - np.ndim(v)
        if need > 0:            # v's own axes line up with the part's last ones
            v = reshape(v, shp[:1] + (1,) * need + shp[1:])
    if perm is not None:
        lane_layout = tuple(part[p] for p in perm)
        v = transpose(broadcast_to(v, lane_layout), tuple(np.argsort(perm).tolist()))
    return bind(prim, x, v, *new_dyn, idx=new_idx)


def index_add_zero_rule(x, v, *dyn, idx):
    return _zero_pair(index_add_p, x, v, dyn, idx)


def index_add_batch(args, batched, idx):
    return _update_batch(index_add_p, args, batched, idx)


def index_add(x, v, idx):
    idx, dyn = normalize_index(idx)
    return bind(index_add_p, x, v, *dyn, idx=idx)


# --- index_set (functional x[idx] = v) ---------------------------------
def index_set_impl(x, v, *dyn, idx):
    out, v = _into(x, v)
    idx = fill_index(idx, dyn)
    if libraries.foreign(out, idx) and (has_index_arrays(idx) or libraries.foreign(None, idx)):
        return libraries.set_at(out, idx, v)        # (a Dask position, CuPy's index arrays)
    out[idx] = v
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


def index_set_zero_rule(x, v, *dyn, idx):
    return _zero_pair(index_set_p, x, v, dyn, idx)


def index_set_batch(args, batched, idx):
    return _update_batch(index_set_p, args, batched, idx)


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
        ``lower/__init__.py``)."""
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
        if self.accumulate and (arrays or code.foreign and dyn):    # (Dask: a 0-d index)
            where = f"{code.np}.s_[{sub}]" if any(isinstance(p, slice) for p in idx) \
                else (sub if len(idx) == 1 else f"({sub})")
            one = len(idx) == 1 and (getattr(idx[0], "ndim", None) == 1 or (
                idx[0] is DYN and len(dyn[0].aval.shape) == 1))
            rows = None if not one else (
                (tuple(dyn[0].aval.shape if idx[0] is DYN else idx[0].shape)
                 + tuple(x.aval.shape[1:])), tuple(v.aval.shape))
            lines += code.add_at(target, where, value, rows)
        elif self.accumulate and v in code.floats and float64_element(eqn, 2):
            # a Python float added to the element as a Python float (NumPy's
            # sum of the two, and a tenth faster than ``+=``)
            lines.append(f"{target}[{sub}] = {target}.item({sub}) + {value}")
        elif not self.accumulate and code.foreign and (dyn or arrays):   # (Dask: a 0-d index)
            helper = code.bind("library_set_at", libraries.set_at, "core.libraries.set_at")
            lines.append(f"{target} = {helper}({target}, {code.np}.s_[{sub}], {value})")
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


def _nonnegative(d):
    """Whether a bound is an int or a length that is at least 0 at every
    size (``lengths.linear_form`` with no negative part): Python reads it as
    the position it is, never from the end."""
    form = linear_form(d)
    return form is not None and form[1] >= 0 and all(c > 0 for c in form[0].values())


class UpdateLower(LowerRule):
    """``x[idx] += v`` (``np.add.at`` for index arrays) or ``x[idx] = v`` on
    ``x`` itself when nothing reads ``x`` afterwards; else a new array."""

    def __init__(self, op, absorbs):
        self.op, self.absorbs = op, absorbs

    def fresh(self, eqn):
        return True

    def update(self, eqn):
        x, v = eqn.inputs[0], eqn.inputs[1]
        if set(eqn.params) != {"idx"} or not x.aval.shape or x.aval.dtype != eqn.outputs[0].aval.dtype:
            return ()
        if not np.can_cast(v.aval.dtype, x.aval.dtype, "same_kind") \
                or not all(d.aval.dtype.kind in "iu" for d in eqn.inputs[2:]):
            return ()
        return (0,)

    def inplace(self, code, eqn, ins, py, outs, p):
        return eqn.prim.emit.functional(code, eqn, ins, py, outs[0], inplace=True)

    def element(self, eqn):
        """One element set or added to, by a value of the array's dtype (a
        Python float into a float64 array), which is stored as it is."""
        x, v = eqn.inputs[0], eqn.inputs[1]
        pos = element_positions(eqn, 2)
        if pos is None or v.aval.shape != () or v.aval.dtype != x.aval.dtype:
            return None
        return ("add" if self.absorbs else "set", v, pos)

    @staticmethod
    def element_sum(a, b, out):
        """``out = a + b``: what ``x[i] += v`` computes for one element."""
        return Eqn(add_p, (a, b), (out,), {})

    @staticmethod
    def element_store(x, v, position, out):
        """``out = x`` with ``v`` stored at ``position`` (one axis)."""
        dyn = not isinstance(position, int)
        return Eqn(index_set_p, (x, v, position) if dyn else (x, v), (out,),
                   {"idx": (DYN if dyn else position,)})

    def accumulates(self, eqn):
        return (0,) if self.absorbs else ()

    def placed(self, eqn, sink):
        """``index_add(0, v, i)``: ``v`` at ``i``, zeros elsewhere."""
        return 1 if self.absorbs and sink.zero(eqn.inputs[0]) \
            and sink.fits(eqn.inputs[0], eqn.outputs[0]) else None

    def region(self, eqn):
        """``(start, stop)`` along the first axis when the update adds ``v``
        to a block of whole rows (``x[a:b] += v`` with ``v`` of that block's
        shape, ``x[k] += v``), bounds as lengths (``dims``); else None."""
        x, v = eqn.inputs[0], eqn.inputs[1]
        idx = eqn.params.get("idx")
        if not self.absorbs or set(eqn.params) != {"idx"} or len(eqn.inputs) != 2 \
                or not isinstance(idx, tuple) or len(idx) != 1 or not x.aval.shape \
                or v.aval.dtype != x.aval.dtype or None in x.aval.shape:
            return None
        n, p, rest = x.aval.shape[0], idx[0], tuple(x.aval.shape[1:])
        if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
            if tuple(v.aval.shape) != rest or not _nonnegative(p):
                return None
            return p, p + 1
        if isinstance(p, slice) and p.step in (None, 1) and len(v.aval.shape) == len(rest) + 1 \
                and tuple(v.aval.shape[1:]) == rest:
            start = 0 if p.start is None else p.start
            stop = n if p.stop is None else p.stop
            if _nonnegative(start) and _nonnegative(stop):
                return start, stop
        return None

    def assemble(self, pieces, out):
        """Equations making ``out`` from whole-row blocks that tile its first
        axis in order (``pieces``: ``(start, stop, v)``, ``v`` a block or,
        for one row, the row itself): one concatenation, a row given the
        block's shape first."""
        eqns, parts = [], []
        rest = tuple(out.aval.shape[1:])
        for start, stop, v in pieces:
            if len(v.aval.shape) == len(rest):
                w = Var(Aval((1,) + rest, v.aval.dtype), "", out.role)
                eqns.append(Eqn(reshape_p, [v], [w], {"shape": (1,) + rest}))
                v = w
            parts.append(v)
        if len(parts) == 1:
            return None
        return eqns + [Eqn(concatenate_p, parts, [out], {"axis": 0})]

    def absorb(self, eqn, k, acc, out, sink):
        """``acc + index_add(0, v, i)`` is ``index_add(acc, v, i)``; ``acc +
        index_add(b, v, i)``, where ``b`` takes an accumulator itself, is
        ``index_add(acc + b, v, i)``."""
        base = eqn.inputs[0]
        if not self.absorbs or not (sink.zero(base) or sink.absorbable(base)) \
                or not sink.fits(base, out):
            return None
        if acc is None:
            return []
        new, t = sink.add(acc, base, Var(out.aval, out.name, out.role))
        return new + [eqn.replace([t, *eqn.inputs[1:]], [out], eqn.params)]


def index_add_sparsity(an, ops, outs, idx):
    """Each entry depends on ``x``'s, and on the entries of ``v`` added there: ``v``
    broadcasts to ``x[idx]``, whose positions are ``getitem``'s on ``x``'s. An index known
    only at run time may add anywhere."""
    x, v, *dyn = ops
    shape = outs[0].shape
    if not (x.known_shape and v.known_shape) or not all(d.known for d in dyn):
        return dense(shape, x.deps, v.deps)
    targets = np.asarray(getitem_p.impl(ids(x.shape), *[d.value for d in dyn], idx=idx))
    every = np.arange(int(np.prod(x.shape)))
    return relate_all(shape, [(x.deps, every, every),
                              (v.deps, targets, broadcast_sel(v.shape, targets.shape))])


index_add_p = register(Primitive("index_add", nargs=None, impl=index_add_impl, jvp=index_add_jvp,
                                 transpose=index_add_transpose, abstract_eval=index_add_aval,
                                 batch=index_add_batch, zero_rule=index_add_zero_rule,
                                 emit=FunctionalUpdateEmit(accumulate=True),
                                 lower=UpdateLower("+=", absorbs=True), complex_ok=True,
                                 sparsity=index_add_sparsity))
index_set_p = register(Primitive("index_set", nargs=None, impl=index_set_impl, jvp=index_set_jvp,
                                 transpose=index_set_transpose, abstract_eval=index_add_aval,
                                 batch=index_set_batch, zero_rule=index_set_zero_rule,
                                 emit=FunctionalUpdateEmit(accumulate=False),
                                 lower=UpdateLower("=", absorbs=False), complex_ok=True,
                                 sparsity=moves(0, 1)))


class IndexUpdater:
    """Functional index updates: ``wg.at(x)[idx].set(v)`` and ``.add(v)``.

    JAX's ``x.at[idx].set(v)``: a new array, ``x`` is never written. Both engines
    differentiate it with respect to ``x`` and ``v``. (The source engine also turns
    ``x[i] = v`` into such an update.)

    Args:
        x: the array.
        idx: the index (given by ``[...]``): ints, slices, int arrays, masks.

    Raises:
        ShapeMismatchError: ``v`` does not broadcast to ``x[idx]``'s shape.

    Example:
        >>> import numpy as np, wengert as wg
        >>> x = np.zeros(3)
        >>> wg.at(x)[1].set(5.0), wg.at(x)[0].add(2.0), x
        (array([0., 5., 0.]), array([2., 0., 0.]), array([0., 0., 0.]))
    """

    __slots__ = ("x", "idx")

    def __init__(self, x, idx=None):
        self.x, self.idx = x, idx

    def __getitem__(self, idx):
        return IndexUpdater(self.x, idx)

    def set(self, v):
        return index_set(self.x, v, self.idx)

    def add(self, v):
        return index_add(self.x, v, self.idx)
