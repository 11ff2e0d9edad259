"""Rows for values whose length is known only at run time: ``broadcast_like``,
``sum_like`` and ``length``.

A ``None`` in an aval's shape (``x[mask]``, ``np.nonzero``, ``np.unique``) is a length the
generated code reads from the values it computes. Broadcasting a value to such a shape (the
transpose of a sum over it, a scalar's tangent meeting it) needs a value that has that
shape when the code runs: the ``like`` operand, a primal value (in reverse mode a residual),
read for its shape only. The pair is each other's transpose, as ``broadcast_to`` and
``reduce_sum`` are:

    sum_like(x, like, axes, keep):     x summed over ``axes`` (those in ``keep`` kept as
                                       1s); x has like's shape
    broadcast_like(x, like, axes):     x, of like's shape with ``axes`` left out (or 1s),
                                       made like's shape

``length`` is such a length as a value (``len(x[m])``, the count ``np.mean(x[m])`` divides
by), a constant of the derivative.

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.ir import Aval, aval_of
from ..core.primitive import ZERO_IF_ANY, Primitive, register
from ..core.rules import EmitRule, constant_row
from ..core.trace import bind
from .arith import add
from .batched import batch_size, lane_index, shift, spread
from ..core.deps import dense, gather, ids, reduce_targets, relate

__all__ = ["broadcast_like", "sum_like", "length", "has_runtime_length"]


def has_runtime_length(x):
    """Whether a value's shape holds a length known only at run time (``None``)."""
    return None in aval_of(x).shape


# --- sum_like ----------------------------------------------------------------------
def sum_like_impl(x, like, axes, keep):
    out = (np.add.reduce(x, axis=axes, keepdims=bool(keep)) if isinstance(x, np.ndarray)
           else np.sum(x, axis=axes, keepdims=bool(keep)))     # Dask, CuPy: their own sum
    if keep and len(keep) < len(axes):
        out = np.squeeze(out, axis=tuple(a for a in axes if a not in keep))
    return out


def sum_like_aval(x, like, axes, keep):
    return Aval(tuple(1 if i in keep else d for i, d in enumerate(x.shape)
                      if i not in axes or i in keep), x.dtype)


def sum_like_jvp(primals, tangents, axes, keep):
    x, like = primals
    return sum_like(x, like, axes, keep), sum_like(tangents[0], like, axes, keep)


def sum_like_transpose(ct, x, like, axes, keep):
    return broadcast_like(ct, like, tuple(a for a in axes if a not in keep)), None


class SumLikeEmit(EmitRule):
    """``np.sum(x, axis=...)`` (with ``keepdims=True``, then ``np.squeeze`` of the axes
    not kept, where some are kept): ``like`` is read by the transpose only."""

    def expression(self, code, eqn, ins, py):
        axes, keep = eqn.params["axes"], eqn.params["keep"]
        if not keep:
            return f"{code.np}.sum({ins[0]}, axis={code.param(axes)})"
        text = f"{code.np}.sum({ins[0]}, axis={code.param(axes)}, keepdims=True)"
        drop = tuple(a for a in axes if a not in keep)
        return f"{code.np}.squeeze({text}, axis={code.param(drop)})" if drop else text


def sum_like_batch(args, batched, axes, keep):
    # ``like`` is read for its shape only: x itself, batched, is a value of x's shape
    x, like = args
    if not batched[0]:
        x = broadcast_like(x, like, (0,))
    return sum_like(x, like if batched[1] else x, shift(axes), shift(keep))
def sum_like_sparsity(an, ops, outs, axes, keep):
    """A reduction over ``axes`` (the kept ones stay as 1s: the same elements in order)."""
    x, shape = ops[0], outs[0].shape
    if not x.known_shape or None in shape:
        return dense(shape, x.deps)
    targets, _ = reduce_targets(x.shape, axes)
    return relate(shape, x.deps, targets, np.arange(len(targets)))


sum_like_p = register(Primitive("sum_like", nargs=2, impl=sum_like_impl, jvp=sum_like_jvp,
                                transpose=sum_like_transpose, abstract_eval=sum_like_aval,
                                zero_rule=ZERO_IF_ANY, numpy_scalar=True, emit=SumLikeEmit(),
                                complex_ok=True, sparsity=sum_like_sparsity,
                                batch=sum_like_batch))


def sum_like(x, like, axes, keep=()):
    """``x`` summed over ``axes`` (sorted; those also in ``keep`` kept as 1s), where
    ``like`` is a value of ``x``'s shape that the transpose broadcasts back to."""
    return bind(sum_like_p, x, like, axes=tuple(axes), keep=tuple(keep))


# --- broadcast_like ----------------------------------------------------------------
def broadcast_like_impl(x, like, axes):
    return np.broadcast_to(np.expand_dims(x, axes) if axes else x, np.shape(like))


def broadcast_like_aval(x, like, axes):
    return Aval(like.shape, x.dtype)


def broadcast_like_jvp(primals, tangents, axes):
    x, like = primals
    return broadcast_like(x, like, axes), broadcast_like(tangents[0], like, axes)


def broadcast_like_transpose(ct, x, like, axes):
    # the axes x lacks, and those where it has a 1 that was broadcast, are summed; the
    # latter stay as 1s
    shape = list(x.aval.shape)
    for a in axes:
        shape.insert(a, None)
    ones = tuple(i for i, (d, n) in enumerate(zip(shape, aval_of(like).shape))
                 if i not in axes and d == 1 and n != 1)
    return sum_like(ct, like, tuple(sorted(axes + ones)), ones), None


class BroadcastLikeEmit(EmitRule):
    """``np.broadcast_to(x, like.shape)``, ``x`` given its missing axes first."""

    def expression(self, code, eqn, ins, py):
        axes = eqn.params["axes"]
        x = ins[0]
        lead = axes == tuple(range(len(axes)))      # NumPy's broadcasting adds these itself
        if not lead:
            x = f"{code.np}.expand_dims({x}, {code.param(axes)})"
        return f"{code.np}.broadcast_to({x}, {code.np}.shape({ins[1]}))"


def broadcast_like_batch(args, batched, axes):
    # to a batched ``like``: its batch axis is one more axis x lacks, unless x has it; a
    # ``like`` shared by the batch is given the batch axis first (each example's position
    # plus it: read for its shape only)
    x, like = args
    if not batched[1]:
        like = add(lane_index(batch_size(args, batched), len(aval_of(like).shape)), like)
    return broadcast_like(x, like, shift(axes) if batched[0] else (0,) + shift(axes))
def broadcast_like_sparsity(an, ops, outs, axes):
    """Each element is the element of ``x`` broadcast to it (``like``'s value does not
    count); a shape known only at run time: dense."""
    x, shape = ops[0], outs[0].shape
    if not x.known_shape or None in shape:
        return dense(shape, x.deps)
    pos = ids(x.shape)
    return gather(shape, x.deps, np.broadcast_to(np.expand_dims(pos, axes) if axes else pos,
                                                 shape).reshape(-1))


broadcast_like_p = register(Primitive(
    "broadcast_like", nargs=2, impl=broadcast_like_impl, jvp=broadcast_like_jvp,
    transpose=broadcast_like_transpose, abstract_eval=broadcast_like_aval,
    zero_rule=ZERO_IF_ANY, emit=BroadcastLikeEmit(), complex_ok=True,
    sparsity=broadcast_like_sparsity,
    batch=broadcast_like_batch))


def broadcast_like(x, like, axes=None):
    """``x`` broadcast to the shape ``like`` has when the code runs; ``axes``: the axes of
    ``like`` that ``x`` lacks (by default its leading ones, as NumPy broadcasts)."""
    if axes is None:
        axes = tuple(range(len(aval_of(like).shape) - len(aval_of(x).shape)))
    return bind(broadcast_like_p, x, like, axes=tuple(axes))


# --- length: a length known only at run time, as a value -------------------------
def length_impl(x, axes):
    return math.prod(np.shape(x)[a] for a in axes)


def length_aval(x, axes):
    return Aval((), np.int64, weak=True)


class LengthEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        parts = [f"{code.np}.shape({ins[0]})[{a}]" for a in eqn.params["axes"]]
        return " * ".join(parts) if parts else "1"


def length_batch(args, batched, axes):
    # every example of a batch has the same lengths: one count, spread over the batch
    return spread(length(args[0], shift(axes)), batch_size(args, batched))


length_p = constant_row("length", length_impl, length_aval, emit=LengthEmit(),
                        complex_ok=True, batch=length_batch)


def length(x, axes):
    """The number of entries of ``x`` along ``axes``, read when the code runs (a Python
    int): where a length is None (``x[mask]``), the count is not known earlier."""
    return bind(length_p, x, axes=tuple(axes))
