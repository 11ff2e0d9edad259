"""What the rows' batch rules share (``Primitive.batch``; the transform is
``transforms/batching.py``).

A batched operand carries its batch axis first; an operand that is not batched is the same
for every example. A rule keeps the batch axis first in what it returns:

* ``shifted(name, *params)``: the rule of a row whose params name axes of its operands
  (``axes=(0,)``, ``axis=1``): the same row with each axis one further on;
* ``lined_up``: batched operands given the rank of the widest one after their batch axis,
  so NumPy's broadcasting (of elements, or of stacks of matrices) lines the rest up;
* ``stacked``: the same for rows on stacks whose operands differ in core rank (a matrix and
  a vector);
* ``all_batched``: every operand batched (an operand shared by the batch broadcast to it,
  a view), for a row that needs its operands of one shape;
* ``batch_size``, ``spread``: the batch's length; one value as a batch of it;
* ``product_batch``: ``mul``'s rule, an outer product per example one ``einsum``;
* ``lane_index``: each example's position in the batch (``arange``), to gather or scatter
  each example's own elements; ``along``: a per-example flag shaped to select along a
  batched value;
* ``value_shaped``: the rule of a row whose result's length depends on the values
  (``nonzero``, ``unique``): a typed refusal, as each example may have its own length.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core import context, dims as _dims
from ..core.errors import RAGGED_BATCH, ShapeMismatchError, UnsupportedSyntax, user_location
from ..core.ir import aval_of
from ..core.primitive import PRIMITIVES
from ..core.trace import bind
from .shape import broadcast_to, reshape

__all__ = ["batch_size", "spread", "all_batched", "lined_up", "stacked", "shift", "shifted",
           "lane_index", "along", "product_batch", "value_shaped"]


def batch_size(vals, flags):
    """The batch's length: the leading axis of the first batched value."""
    return next(_dims.shape(v)[0] for v, f in zip(vals, flags) if f)


def spread(x, size):
    """``x``, the same for every example, as a batch of ``size`` (a broadcast view). A
    value whose length is known only at run time (a while loop's stored values) cannot
    be: a typed refusal, which ``engine="auto"`` answers with the trace engine."""
    shape = tuple(_dims.shape(x))
    if None in shape:
        raise UnsupportedSyntax(
            "a batch (a Jacobian of this order, or wg.vmap) through values whose length is "
            "known only at run time (a while loop, or a break or return inside a loop, that "
            "stores values) is not supported by the source engine; use engine='trace' "
            "(engine='auto' does so by itself)", construct=RAGGED_BATCH)
    return broadcast_to(x, (size,) + shape)


def all_batched(args, batched):
    """Every operand as a batch: the ones shared by the batch spread to it."""
    size = batch_size(args, batched)
    return [a if b else spread(a, size) for a, b in zip(args, batched)]


def lined_up(args, batched):
    """The operands with each batched one given the widest operand's rank after its batch
    axis (unit axes), so broadcasting cannot read a batch axis as another axis."""
    return stacked(args, batched, [0] * len(args))


def stacked(args, batched, cores):
    """Operands of a row on stacks (NumPy's linalg: the last ``cores[k]`` axes of operand
    ``k`` are one item, the axes before them a stack, broadcast between operands): each
    batched operand gets unit axes after its batch axis, so its stack has the rank of the
    widest operand's."""
    ranks = [np.ndim(a) - b - c for a, b, c in zip(args, batched, cores)]
    rank = max(ranks)
    out = []
    for a, b, r in zip(args, batched, ranks):
        if b and r < rank:
            shp = tuple(_dims.shape(a))
            a = reshape(a, shp[:1] + (1,) * (rank - r) + shp[1:])
        out.append(a)
    return out


def shift(axis):
    """An axis param past the batch axis: an int one further on, each of a tuple too;
    None stays None."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(shift(a) for a in axis)
    return int(axis) + 1


def shifted(name, *params):
    """The batch rule of the row ``name`` (found in the table when the rule runs) whose
    ``params`` are non-negative axes of its operands: the row on the batch, each of those
    axes one further on. Every operand is batched."""
    def rule(args, batched, **kwargs):
        for p in params:
            kwargs[p] = shift(kwargs[p])
        return bind(PRIMITIVES[name], *all_batched(args, batched), **kwargs)
    rule.__name__ = f"{name}_batch"
    return rule


def lane_index(size, rank=0):
    """``np.arange(size)`` shaped ``(size, 1, ..., 1)`` (``rank`` unit axes): each example's
    position, an integer index that picks the example's own row of a batch. Of a symbolic
    ``size`` the code makes it at every size (``("arange", size)``)."""
    n = int(size)
    idx = np.arange(n).reshape((n,) + (1,) * rank)
    context.remember(idx, (size,) + (1,) * rank, ("arange", size))
    return idx


def along(flag, x):
    """``flag`` (one value per example, ``(B,)``) shaped to broadcast along the batched
    ``x`` (``(B, 1, ..., 1)``)."""
    need = np.ndim(x) - np.ndim(flag)
    return reshape(flag, tuple(_dims.shape(flag)) + (1,) * need) if need > 0 else flag


def product_batch(args, batched):
    """The batch rule of ``mul``: operands lined up and multiplied once; where each
    example's product is an outer product (a column ``(m, 1)`` times a row ``(1, n)``: the
    cotangent of a vector-matrix product, per-example gradients of a layer's weights), one
    ``einsum`` of the batch, which NumPy computes two to three times faster than the
    broadcast multiply (a zero stride in its inner loop)."""
    mul = PRIMITIVES["mul"]
    lanes = [tuple(_dims.shape(a))[1:] if b else tuple(_dims.shape(a))
             for a, b in zip(args, batched)]
    if all(len(s) == 2 for s in lanes) and all(aval_of(a).dtype.kind in "fc" for a in args):
        col = next((k for k, s in enumerate(lanes) if s[1] == 1), None)
        row = None if col is None else 1 - col
        if row is not None and lanes[row][0] == 1:
            size = batch_size(args, batched)
            ops, subs = [], []
            for k, letter in ((col, "i"), (row, "j")):
                shp = lanes[k]
                ops.append(reshape(args[k], ((size,) if batched[k] else ())
                                   + (shp[0] if k == col else shp[1],)))
                subs.append(("a" if batched[k] else "") + letter)
            return bind(PRIMITIVES["einsum"], *ops, spec=f"{subs[0]},{subs[1]}->aij")
    return bind(mul, *lined_up(args, batched))


def value_shaped(what):
    """The batch rule of a row whose result's length depends on its operands' values
    (``what``: the user's spelling): each example of a batch may have another length, so
    no batch of them has one shape. Refused, with what to write instead (JAX refuses too)."""
    def rule(args, batched, **params):
        raise ShapeMismatchError(
            f"{user_location()}: {what} inside wg.vmap (or a batched Jacobian) gives a result "
            "whose length depends on the values, which may differ between the examples of a "
            "batch, so they have no common shape; keep the shape fixed: np.where(mask, x, 0) "
            "in place of x[mask], a count (np.sum(mask)) in place of len(np.nonzero(mask)[0]), "
            "np.bincount(x, minlength=n) and np.histogram with fixed bins")
    rule.__name__ = "value_shaped_batch"
    return rule
