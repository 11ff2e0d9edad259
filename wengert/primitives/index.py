"""Indexing: ``getitem`` (integers, slices, None, Ellipsis, integer arrays,
boolean masks) and ``concatenate`` (and ``stack`` over it), whose transpose
slices the cotangent apart with ``getitem``. The two linear companions of
``getitem`` -- ``index_add`` (scatter-add, its transpose) and ``index_set``
(the functional ``x[i] = v``) -- are in ``scatter.py``.

The index is a static param: a tuple of ints, slices, None, Ellipsis and
integer arrays. Boolean masks become integer arrays (``nonzero``) when the
index is normalised, so every index is a fixed gather/scatter pattern. An
integer (or integer array) known only when the program runs (a loop counter
of a structured loop, an index array passed as an argument) is a *dynamic*
position: ``DYN`` in the static index, and an extra integer operand after the
array operands, in order.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims, libraries
from ..core.primitive import (MOVES, PRIMITIVES, ZERO_IF_ANY, Linear, Primitive, TracerBase, Zero,
                              moves, register, zeros as core_zeros)
from ..core.trace import bind
from ..core.rules import FRESH, EmitRule, LowerRule, constant_row
from ..core.shapes import broadcast_shapes, result_dtype, shape_error
from .shape import broadcast_to, expand_dims, reshape, transpose
from .batched import all_batched, batch_size, lane_index, spread, value_shaped
from ..core.dims import has_dims, slice_length
from ..core.errors import NonDifferentiableInputError, RuntimeLengthError
from ..core.ir import Aval, aval_of, is_duck_array


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
        if val is None and av.dtype.kind == "b" and av.shape:
            return nonzero(p)              # a mask known only at run time: its positions
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
        if type(p) is tuple:                # a traced mask's positions, one array per axis
            out.extend(DYN for _ in p)
            dyn.extend(p)
        elif isinstance(p, TracerBase) or is_duck_array(p) and p.dtype.kind in "iu":
            out.append(DYN)                 # (a Dask index array: a value of its own call)
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


def fill_index(idx, dyn):
    """The concrete index: dynamic positions take their operands' values."""
    if not dyn:
        return idx
    it = iter(dyn)
    return tuple(_position(next(it)) if p is DYN else p for p in idx)


def _position(v):
    return v if is_duck_array(v) else np.asarray(v) if np.ndim(v) else int(v)


def has_index_arrays(idx):
    return any(isinstance(p, np.ndarray) or p is DYN for p in idx)


def dummy_array(aval):
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


# --- nonzero: the positions of the true entries, one index array per axis ----
# a constant of the derivative (``constant_row``); how many positions there are depends on
# the values, so where code is generated for every call their length is None: the code
# reads it from the arrays ``np.nonzero`` makes when it runs
def nonzero_impl(x):
    return np.nonzero(x)


def nonzero_aval(x):
    return tuple(Aval((None,), np.intp) for _ in x.shape)


class NonzeroEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        return [f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {code.np}.nonzero({ins[0]})"]


nonzero_p = constant_row("nonzero", nonzero_impl, nonzero_aval, multiple_results=True,
                         emit=NonzeroEmit(), complex_ok=True,
                         batch=value_shaped("np.nonzero (np.where(cond), x[mask])"))


def nonzero(x):
    """``np.nonzero(x)``: a tuple of index arrays, one per axis of ``x``."""
    return bind(nonzero_p, x)


# --- getitem -----------------------------------------------------------
def getitem_impl(x, *dyn, idx):
    idx = fill_index(idx, dyn)
    return libraries.getitem(x, idx) if libraries.foreign(x, idx) else np.asarray(x)[idx]


def getitem_aval(x, *dyn, idx):
    if None in x.shape or any(None in d.shape for d in dyn):
        return Aval(index_shape(x.shape, idx, [d.shape for d in dyn]), x.dtype)
    shape = dummy_array(x)[fill_index(idx, [np.zeros(d.shape, np.intp) for d in dyn])].shape
    if has_dims(x.shape):
        shape = _basic_shape(x.shape, idx, dyn) or shape
    return Aval(shape, x.dtype)


def index_shape(shape, idx, dyn_shapes):
    """The shape of ``x[idx]`` by NumPy's rule, for lengths known only at run time (None:
    an index array from a traced mask, or an ``x`` of such a length): the index arrays
    (and the ints among them) broadcast to one shape, which takes the place of the axes
    they index where they are adjacent, else goes first; slices, None and the axes not
    indexed keep their lengths."""
    shapes = iter(dyn_shapes)
    parts = [("array", next(shapes)) if p is DYN else
             ("array", p.shape) if isinstance(p, np.ndarray) else
             ("int", ()) if isinstance(p, (int, np.integer)) else ("basic", p) for p in idx]
    parts = [("int", ()) if kind == "array" and s == () else (kind, s) for kind, s in parts]
    used = sum(kind != "basic" or (p is not None and p is not Ellipsis) for kind, p in parts)
    if any(kind == "basic" and p is Ellipsis for kind, p in parts):
        k = next(i for i, (kind, p) in enumerate(parts) if kind == "basic" and p is Ellipsis)
        parts[k:k + 1] = [("basic", slice(None))] * (len(shape) - used)
    arrays = [s for kind, s in parts if kind == "array"]
    advanced = [i for i, (kind, _) in enumerate(parts) if kind != "basic"] if arrays else []
    together = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True
    joined = broadcast_shapes(*arrays, name="indexing") if arrays else ()
    out, axis = [], 0
    for i, (kind, p) in enumerate(parts):
        if kind == "basic" and p is None:
            out.append(1)
            continue
        if kind == "basic":
            n = shape[axis]
            full = p.start is None and p.stop is None and p.step in (None, 1)
            out.append(n if full else None if n is None else slice_length(n, p))
        elif advanced and i == advanced[0] and together:
            out.extend(joined)
        axis += 1
    out.extend(shape[axis:])
    return tuple(out) if together else tuple(joined) + tuple(out)


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
    # index_add's row is in scatter.py, which builds on this module: found in the table
    return (bind(PRIMITIVES["index_add"], zeros, ct, *dyn, idx=idx),) + (None,) * len(dyn)


def _expand_ellipsis(idx, nd):
    """``idx`` with its Ellipsis written as the slices it stands for (``nd``: the rank of
    the array indexed)."""
    k = next((k for k, p in enumerate(idx) if p is Ellipsis), None)
    if k is None:
        return idx
    used = sum(p is not None and p is not Ellipsis for p in idx)
    return idx[:k] + (slice(None),) * (nd - used) + idx[k + 1:]


def batched_index(idx, dyn, bdyn, lane_nd, size):
    """(index, dynamic operands, perm): what reads each example's ``idx`` (with dynamic
    operands ``dyn``, those ``bdyn`` marks batched) out of a batch whose examples have
    ``lane_nd`` axes, and the transposition the result then needs (None: none).

    A basic index (no index array, no batched position) is the same after the batch
    axis. Otherwise the batch's own axis is indexed by each example's position
    (``lane_index``) alongside the other index arrays, broadcast with them, so the
    gathered block starts with the batch axis; where one example's block would sit after
    leading sliced axes (NumPy places adjacent index arrays where they are), ``perm``
    moves it back there."""
    idx = _expand_ellipsis(idx, lane_nd)
    it = iter(zip(dyn, bdyn))
    entries = []            # per index entry: (static part or DYN, value, batched, lane rank)
    for p in idx:
        if p is DYN:
            v, b = next(it)
            entries.append((p, v, b, np.ndim(v) - b))
        else:
            entries.append((p, None, False, np.ndim(p) if isinstance(p, np.ndarray) else 0))
    if not any(b or (p is DYN and r) or isinstance(p, np.ndarray) for p, _, b, r in entries):
        return (slice(None),) + idx, list(dyn), None
    # with index arrays, integers index as arrays too (NumPy): all of them form the block
    adv = [k for k, (p, _, _, _) in enumerate(entries) if p is not None
           and not isinstance(p, slice)]
    rank = max(r for k, (_, _, _, r) in enumerate(entries) if k in adv)
    lead = adv[0] if adv == list(range(adv[0], adv[-1] + 1)) else 0
    new_dyn = [lane_index(size, rank)]
    for p, v, b, r in entries:
        if p is DYN:
            if b and r < rank:
                shp = tuple(_dims.shape(v))
                v = reshape(v, shp[:1] + (1,) * (rank - r) + shp[1:])
            new_dyn.append(v)
    perm = None
    if lead:
        rest = (1 + rank + sum(1 for p in idx if p is None or isinstance(p, slice))
                + lane_nd - sum(1 for p in idx if p is not None))
        perm = ((0,) + tuple(range(1 + rank, 1 + rank + lead)) + tuple(range(1, 1 + rank))
                + tuple(range(1 + rank + lead, rest)))
    return (DYN,) + idx, new_dyn, perm


def getitem_batch(args, batched, idx):
    x, *dyn = args
    size = batch_size(args, batched)
    if not batched[0]:
        x = spread(x, size)
    new_idx, new_dyn, perm = batched_index(idx, dyn, batched[1:], np.ndim(x) - 1, size)
    out = bind(getitem_p, x, *new_dyn, idx=new_idx)
    return out if perm is None else transpose(out, perm)


def getitem_scalar(idx):
    """Full integer indexing (``v[i]``, ``A[i, j]``, ``a[()]``) gives NumPy
    scalars; ``a[...]``, ``v[i, ...]`` and slices give arrays, 0-d ones too."""
    return all(p is DYN or type(p) is int or type(p) is np.ndarray and p.ndim == 0
               for p in idx)


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
                return code.gather(code.atom(ins[0]), sub, eqn)

    def python_floats(self, eqn, kinds):
        """An element of a float64 array read as a Python float (``x.item(i)``,
        the same bits; NumPy's scalar maths on an ``np.float64`` is slower, and
        far slower on subnormals, where it reports the underflow)."""
        return (True,) * len(kinds), (float64_element(eqn, 1) and kinds[0] == "np",)


class GetitemLower(LowerRule):
    """A scalar element (full integer indexing) or an index array's gather is a new value;
    a basic slice is a view of the operand, and so is a 0-d result of one with an Ellipsis
    (``y[-1, ...]``, which a later ``y[-1, ...] = 0`` would change: issue 25 found
    ``np.linspace``'s gradient wrong in the source engine that way)."""

    def fresh(self, eqn):
        return (eqn.outputs[0].aval.shape == () and getitem_scalar(eqn.params["idx"])) \
            or not basic_index(eqn)

    def element(self, eqn):
        pos = element_positions(eqn, 1)
        return None if pos is None else ("read", None, pos)


getitem_p = register(Primitive("getitem", nargs=None, impl=getitem_impl, jvp=getitem_jvp,
                               transpose=getitem_transpose, abstract_eval=getitem_aval,
                               batch=getitem_batch,
                               numpy_scalar=getitem_scalar, zero_rule=ZERO_IF_ANY,
                               emit=GetitemEmit(), lower=GetitemLower(), complex_ok=True,
                               sparsity=moves(0)))


def float64_element(eqn, first):
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


def basic_index(eqn):
    """A basic index: no index array, scalar dynamic positions (``x[i] += v``
    then meets each position once, as ``np.add.at`` would)."""
    return not any(isinstance(p, np.ndarray) for p in eqn.params["idx"]) \
        and all(x.aval.shape == () for x in eqn.inputs[2:])


def element_positions(eqn, first):
    """The positions of a one-element access (``LowerRule.element``): per
    axis of the array, its dynamic operand (operands from ``first`` on, int
    scalars) or its static int; None if the index is anything else."""
    x, idx = eqn.inputs[0], eqn.params.get("idx")
    if set(eqn.params) != {"idx"} or not isinstance(idx, tuple) or not x.aval.shape \
            or len(idx) != len(x.aval.shape) or None in x.aval.shape:
        return None
    dyn = list(eqn.inputs[first:])
    if sum(p is DYN for p in idx) != len(dyn) \
            or any(d.aval.shape != () or d.aval.dtype.kind not in "iu" for d in dyn):
        return None
    found, it = [], iter(dyn)
    for p in idx:
        if p is DYN:
            found.append(next(it))
        elif type(p) is int:
            found.append(p)
        else:
            return None
    return tuple(found)


# --- concatenate -------------------------------------------------------
def concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


def concatenate_aval(*xs, axis):
    first = xs[0].shape
    for x in xs[1:]:
        if len(x.shape) != len(first) or any(a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != axis):
            raise shape_error(f"concatenate: shapes {first} and {x.shape} differ off axis {axis}")
    lengths = [x.shape[axis] for x in xs]
    size = None if None in lengths else sum(lengths)
    return Aval(first[:axis] + (size,) + first[axis + 1:], result_dtype(*xs))


def concatenate_jvp(primals, tangents, axis):
    out = concatenate(*primals, axis=axis)
    tans = [_dims.zeros(t.aval.shape, out.dtype) if isinstance(t, Zero) else t for t in tangents]
    return out, concatenate(*tans, axis=axis)


def concatenate_transpose(ct, *xs, axis):
    cts, start = [], 0
    for x in xs:
        n = _dims.shape(x)[axis]
        if n is None:
            raise RuntimeLengthError("concatenation, in reverse mode,")
        if isinstance(x, Linear):
            idx = (slice(None),) * axis + (slice(start, start + n),)
            cts.append(getitem(ct, idx))
        else:
            cts.append(None)
        start += n
    return tuple(cts)


def concatenate_batch(args, batched, axis):
    return concatenate(*all_batched(args, batched), axis=axis + 1)


class ConcatenateEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        if set(eqn.params) == {"axis"}:
            ops = ", ".join(ins) + ("," if len(ins) == 1 else "")
            return f"{code.np}.concatenate(({ops}), axis={code.param(eqn.params['axis'])})"


concatenate_p = register(Primitive("concatenate", nargs=None, impl=concatenate_impl,
                                   jvp=concatenate_jvp, transpose=concatenate_transpose,
                                   abstract_eval=concatenate_aval, batch=concatenate_batch,
                                   emit=ConcatenateEmit(), lower=FRESH, complex_ok=True,
                                   sparsity=MOVES))


def concatenate(*xs, axis=0):
    nd = np.ndim(xs[0])
    if nd == 0:
        raise shape_error("concatenate: zero-dimensional arrays cannot be concatenated; "
                                 "use stack")
    return bind(concatenate_p, *xs, axis=axis % nd)


def stack(xs, axis=0):
    nd = np.ndim(xs[0]) + 1
    return concatenate(*[expand_dims(x, axis % nd) for x in xs], axis=axis % nd)
