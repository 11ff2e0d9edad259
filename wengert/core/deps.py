"""Index sets: for each element of a value, the independent variables it depends on. They are
what the sparsity analysis (``transforms/sparsity.py``) computes with, and what the rows'
``sparsity`` rules (``Primitive``) are written in.

An independent variable is a column: the flat position of a differentiated input's element
among all of them. A ``Deps`` holds one sorted set of columns per element of a value (C
order), in one of two forms:

* per element: element ``e`` depends on ``cols[start[e]:stop[e]]``. Rows may share storage,
  so moving elements (a slice, a transpose, a broadcast) copies no column: it picks
  ``start`` and ``stop`` (``gather``);
* uniform: every element depends on all of ``cols`` (a dense mix, such as a matrix inverse,
  or a value whose length is known only at run time: ``shape`` then holds None).

Every rule is a few calls of four operations, each the union over a relation between output
and operand elements (``-1`` in a position array: no operand element):

    gather(shape, deps, sel)        out[e] = deps[sel[e]]            (a move)
    combine(shape, [(deps, sel)])   out[e] = U_k deps_k[sel_k[e]]    (elementwise)
    relate(shape, deps, out, ins)   out[out[j]] U= deps[ins[j]]      (a reduction, a contraction)
    dense(shape, deps...)           out[e] = every column of them    (a dense mix)

A rule meets its operands as ``Abstract`` values: a shape and dtype, the value itself where
it is known (a constant; in a local analysis every value), and the ``Deps`` of a value that
depends on an independent variable (None where it depends on none). Known values let a rule
be exact: a product with a constant is independent of the operand where the constant is 0,
``where`` with a constant condition picks a side, a gather at a constant index is a move.

Layer: core.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Deps", "Abstract", "UNKNOWN", "ids", "gather", "combine", "relate", "relate_all", "dense",
           "union", "stack", "elementwise", "broadcast_sel", "reduce_targets", "across", "prefix", "running", "nonzero_mask", "MAX_POINTS",
           "sorted_unique"]


class _Unknown:
    def __repr__(self):
        return "UNKNOWN"


# the value of an Abstract that is not known while the analysis runs
UNKNOWN = _Unknown()
_NONE = np.zeros(0, np.int64)
# a contraction's iteration space beyond this many points is taken as dense (``contraction``)
MAX_POINTS = 2 ** 25


def ids(shape, offset=0):
    """The flat positions of an array of ``shape``, in that shape (int64)."""
    return np.arange(offset, offset + math.prod(shape), dtype=np.int64).reshape(shape)


class Deps:
    """The columns each element of a value of ``shape`` depends on (see the module)."""

    __slots__ = ("shape", "start", "stop", "cols")

    def __init__(self, shape, start, stop, cols):
        self.shape = tuple(shape)
        self.start, self.stop, self.cols = start, stop, cols

    @classmethod
    def identity(cls, shape, offset=0):
        """Element ``e`` depends on column ``offset + e`` alone."""
        n = math.prod(shape)
        return cls(shape, np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64),
                   np.arange(offset, offset + n, dtype=np.int64))

    @classmethod
    def uniform(cls, shape, cols):
        return cls(shape, None, None, np.asarray(cols, np.int64))

    @property
    def is_uniform(self):
        return self.start is None

    @property
    def known_shape(self):
        return None not in self.shape

    @property
    def size(self):
        return math.prod(self.shape)

    def rows(self):
        """(start, stop), one per element (of a known shape)."""
        if self.start is None:
            n = self.size
            return np.zeros(n, np.int64), np.full(n, len(self.cols), np.int64)
        return self.start, self.stop

    def csr(self):
        """(indptr, indices): the sets stored one after the other, each sorted."""
        if self.start is None:
            n = self.size
            return (np.arange(n + 1, dtype=np.int64) * len(self.cols), np.tile(self.cols, n))
        lengths = self.stop - self.start
        indptr = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=indptr[1:])
        if len(self.cols) == indptr[-1] and np.array_equal(self.start, indptr[:-1]):
            return indptr, self.cols            # stored compactly already
        return indptr, self.cols[_ranges(self.start, lengths)]

    def all_cols(self):
        """Every column some element depends on, sorted."""
        if self.start is None:
            return self.cols
        return sorted_unique(self.csr()[1])

    def nnz(self):
        if self.start is None:
            return self.size * len(self.cols) if self.known_shape else len(self.cols)
        return int(np.sum(self.stop - self.start))

    def same(self, other):
        """Whether both hold the same sets (of the same shape)."""
        if other is self:
            return True
        if other is None or self.shape != other.shape:
            return False
        if self.start is None and other.start is None:
            return np.array_equal(self.cols, other.cols)
        if not self.known_shape:
            return False
        a, b = self.csr(), other.csr()
        return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])

    def __repr__(self):
        kind = "uniform" if self.start is None else "per element"
        return f"Deps({self.shape}, {kind}, {self.nnz()} entries)"


class Abstract:
    """A value as the analysis holds it: its ``aval``, the value where known (else
    ``UNKNOWN``), and its ``Deps`` (None: it depends on no independent variable)."""

    __slots__ = ("aval", "value", "deps")

    def __init__(self, aval, value=UNKNOWN, deps=None):
        self.aval, self.value, self.deps = aval, value, deps

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def known(self):
        return self.value is not UNKNOWN

    @property
    def known_shape(self):
        return None not in self.aval.shape

    def __repr__(self):
        value = "?" if self.value is UNKNOWN else "known"
        return f"Abstract({self.aval.short()}, {value}, {self.deps!r})"


# --- the operations ------------------------------------------------------------
def sorted_unique(keys):
    """The distinct values of an int array, sorted (as ``np.unique``, whose hashing path
    NumPy 2.3+ takes for ints is several times slower than a sort on millions of keys)."""
    keys = np.sort(np.asarray(keys, np.int64).reshape(-1))
    if len(keys) < 2:
        return keys
    keep = np.empty(len(keys), bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _ranges(start, lengths):
    """The positions ``start[k] + 0 .. lengths[k] - 1``, for every k, one after the other."""
    total = int(lengths.sum())
    if total == 0:
        return _NONE
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(start - (ends - lengths), lengths)


def _pairs(deps, out, ins):
    """(out rows, columns): element ``out[j]`` gets the columns of operand element ``ins[j]``."""
    start, stop = deps.rows()
    s, lengths = start[ins], stop[ins] - start[ins]
    return np.repeat(out, lengths), deps.cols[_ranges(s, lengths)]


def _from_pairs(shape, rows, cols):
    """The Deps holding (row, column) pairs, duplicates merged."""
    n = math.prod(shape)
    if len(rows) == 0:
        return Deps(shape, np.zeros(n, np.int64), np.zeros(n, np.int64), _NONE)
    width = int(cols.max()) + 1
    keys = sorted_unique(rows * width + cols)
    rows, cols = np.divmod(keys, width)
    stop = np.cumsum(np.bincount(rows, minlength=n))
    return Deps(shape, stop - np.bincount(rows, minlength=n), stop, cols)


def gather(shape, deps, sel):
    """``out[e] = deps[sel[e]]`` (``sel``: operand positions, -1 for none): no column copied."""
    sel = np.asarray(sel, np.int64).reshape(-1)
    if deps.start is None and (sel >= 0).all():
        return Deps.uniform(shape, deps.cols)
    start, stop = deps.rows()
    none = sel < 0
    safe = np.where(none, 0, sel)
    s, e = start[safe], stop[safe]
    if none.any():
        s, e = np.where(none, 0, s), np.where(none, 0, e)
    return Deps(shape, s, e, deps.cols)


def combine(shape, parts):
    """``out[e]`` is the union of ``deps_k[sel_k[e]]`` over the parts ``(deps_k, sel_k)``."""
    parts = [(d, np.asarray(s, np.int64).reshape(-1)) for d, s in parts if d is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return gather(shape, *parts[0])
    if all(d.start is None and (s >= 0).all() for d, s in parts):
        return Deps.uniform(shape, sorted_unique(np.concatenate([d.cols for d, _ in parts])))
    if sum((s >= 0).astype(np.int8) for _, s in parts).max(initial=0) <= 1:
        # each element from one part at most (a concatenation, an update): no union to take
        return _select(shape, parts)
    rows, cols = [], []
    for d, s in parts:
        out = np.nonzero(s >= 0)[0]
        r, c = _pairs(d, out, s[out])
        rows.append(r)
        cols.append(c)
    return _from_pairs(shape, np.concatenate(rows), np.concatenate(cols))


def _select(shape, parts):
    """``combine`` where each element takes its columns from one part at most."""
    n = math.prod(shape)
    start, stop = np.zeros(n, np.int64), np.zeros(n, np.int64)
    base, cols = 0, []
    for d, s in parts:
        st, sp = d.rows()
        hit = np.nonzero(s >= 0)[0]
        start[hit] = st[s[hit]] + base
        stop[hit] = sp[s[hit]] + base
        cols.append(d.cols)
        base += len(d.cols)
    return Deps(shape, start, stop, np.concatenate(cols))


def stack(row_shape, rows):
    """The Deps of values of ``row_shape`` (``rows``: a Deps or None each) stacked along a
    new leading axis."""
    shape = (len(rows),) + tuple(row_shape)
    if all(d is None for d in rows):
        return None
    if None in row_shape or any(d is not None and d.shape != tuple(row_shape) for d in rows):
        return dense(shape, *rows)
    m = math.prod(row_shape)
    starts, stops, cols, base = [], [], [_NONE], 0
    for d in rows:
        if d is None:
            starts.append(np.zeros(m, np.int64))
            stops.append(np.zeros(m, np.int64))
            continue
        st, sp = d.rows()
        starts.append(st + base)
        stops.append(sp + base)
        cols.append(d.cols)
        base += len(d.cols)
    return Deps(shape, np.concatenate(starts), np.concatenate(stops), np.concatenate(cols))


def relate(shape, deps, out, ins):
    """``out[out[j]]`` gets the columns of ``deps[ins[j]]`` for every j (a relation between
    output and operand positions: a reduction, a scatter, a contraction)."""
    if deps is None:
        return None
    out, ins = np.asarray(out, np.int64).reshape(-1), np.asarray(ins, np.int64).reshape(-1)
    return _from_pairs(shape, *_pairs(deps, out, ins))


def relate_all(shape, relations):
    """The union of ``relate`` over ``(deps, out, ins)`` triples (None where none)."""
    rows, cols = [], []
    for deps, out, ins in relations:
        if deps is not None:
            r, c = _pairs(deps, np.asarray(out, np.int64).reshape(-1),
                          np.asarray(ins, np.int64).reshape(-1))
            rows.append(r)
            cols.append(c)
    if not rows:
        return None
    return _from_pairs(shape, np.concatenate(rows), np.concatenate(cols))


def dense(shape, *deps):
    """Every element depends on every column of ``deps`` (None where there is none)."""
    deps = [d for d in deps if d is not None]
    if not deps:
        return None
    cols = deps[0].all_cols() if len(deps) == 1 else sorted_unique(
        np.concatenate([d.all_cols() for d in deps]))
    return Deps.uniform(shape, cols)


def union(a, b):
    """The element-by-element union of two Deps of one shape (None for none)."""
    if a is None or b is None:
        return b if a is None else a
    if a.same(b):
        return a
    if a.shape != b.shape or not a.known_shape:
        shape = a.shape if a.shape == b.shape else tuple(
            x if x == y else None for x, y in zip(a.shape, b.shape))
        return dense(shape, a, b)
    every = np.arange(a.size, dtype=np.int64)
    return combine(a.shape, [(a, every), (b, every)])


# --- what the rules share ------------------------------------------------------
def broadcast_sel(shape, out_shape):
    """For each element of ``out_shape``, the element of an operand of ``shape`` that NumPy
    broadcasting reads there."""
    return np.broadcast_to(ids(shape), out_shape).reshape(-1)


def elementwise(shape, ops, keep=None):
    """The Deps of an elementwise result of ``shape``: each element depends on the elements
    its operands broadcast to it; ``keep[k]`` (a boolean array broadcasting to ``shape``, or
    None) says where operand ``k`` counts at all."""
    if None in shape or any(not op.known_shape for op in ops if op.deps is not None):
        return dense(shape, *[op.deps for op in ops])
    parts = []
    for k, op in enumerate(ops):
        if op.deps is None:
            continue
        sel = broadcast_sel(op.shape, shape)
        if keep is not None and keep[k] is not None:
            mask = np.broadcast_to(keep[k], shape).reshape(-1)
            sel = np.where(mask, sel, -1)
        parts.append((op.deps, sel))
    return combine(shape, parts)


def nonzero_mask(op):
    """Where an operand may be nonzero: a constant's nonzeros, everywhere for any other
    value (a known value that depends on a column is known at one point only: a local
    analysis; its zeros there are not structural)."""
    if op.known and op.deps is None:
        return np.asarray(op.value) != 0
    return np.ones(op.shape, bool)


def reduce_targets(shape, axes):
    """For each element of an array of ``shape``, its position in the reduction over
    ``axes`` (which drops them)."""
    kept = tuple(1 if k in axes else d for k, d in enumerate(shape))
    out = tuple(d for k, d in enumerate(shape) if k not in axes)
    return np.broadcast_to(ids(out).reshape(kept), shape).reshape(-1), out


def across(deps, shape, out_shape, axes):
    """Each element of ``out_shape`` depends on every element of the operand (of ``shape``)
    that shares its coordinates off ``axes`` (a mix along them: a transform along an axis,
    the others' product); ``shape`` and ``out_shape`` differ on ``axes`` only."""
    if deps is None:
        return None
    if None in shape or None in out_shape or deps.is_uniform:
        return dense(out_shape, deps)
    targets, reduced = reduce_targets(shape, axes)
    per_slice = relate(reduced, deps, targets, np.arange(len(targets)))
    return gather(out_shape, per_slice, reduce_targets(out_shape, axes)[0])


def running(x, axis, reverse=False):
    """The Deps of a running reduction of the ``Abstract`` ``x`` along ``axis``: each entry
    depends on those before it (after it if ``reverse``) and on itself."""
    pairs = prefix(x.shape, axis, reverse) if x.known_shape else None
    if pairs is None:
        return dense(x.shape, x.deps)
    return relate(x.shape, x.deps, *pairs)


def prefix(shape, axis, reverse=False):
    """The relation (output positions, operand positions) of a running sum along ``axis``:
    element ``k`` of a line reads elements ``j <= k`` (``j >= k`` if ``reverse``); None
    where it has too many pairs to list."""
    length = shape[axis]
    lines = math.prod(shape) // max(length, 1)
    if lines * length * (length + 1) // 2 > MAX_POINTS:
        return None
    k, j = np.tril_indices(length)
    if reverse:
        k, j = length - 1 - k, length - 1 - j
    moved = np.moveaxis(ids(shape), axis, -1).reshape(-1, length)
    return moved[:, k].reshape(-1), moved[:, j].reshape(-1)
