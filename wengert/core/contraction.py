"""The index-set relation of a contraction (an einsum spec: ``matmul``, ``einsum``): which
operand elements each output element reads, a constant operand's zeros left out; the
``Deps`` operations it feeds are ``core/deps.py``'s.

Layer: core.
"""
from __future__ import annotations

import math

import numpy as np

from .deps import MAX_POINTS, dense, nonzero_mask, relate_all

__all__ = ["contraction", "contract"]


def contraction(spec, ops, k, out_shape):
    """The relation of an einsum ``spec`` (``"ij,jk->ik"``: every index one length) between
    its output and operand ``k``: (output positions, operand positions), where an output
    element reads the operand element through some term whose other factors may be nonzero
    (a known operand's zeros are zeros). None where the iteration space is too large to
    list (take it as dense)."""
    lhs, out = spec.split("->")
    terms = lhs.split(",")
    sizes = {}
    for term, op in zip(terms, ops):
        sizes.update(zip(term, op.shape))
    free = "".join(dict.fromkeys(out + terms[k]))       # the indices the relation keeps
    if math.prod(sizes[c] for c in free) > MAX_POINTS:
        return None
    others = [(t, nonzero_mask(op)) for j, (t, op) in enumerate(zip(terms, ops)) if j != k]
    shape = tuple(sizes[c] for c in free)
    may = np.ones(shape, bool)
    if others:
        seen = set("".join(t for t, _ in others))
        present = "".join(c for c in free if c in seen)
        # float counts: a sum of positive terms is never 0 (an int8 one could wrap)
        counts = np.einsum(",".join(t for t, _ in others) + "->" + present,
                           *[m.astype(np.float32) for _, m in others],
                           optimize=len(others) > 1)
        kept = tuple(sizes[c] if c in seen else 1 for c in free)
        may = np.broadcast_to((counts != 0).reshape(kept), shape)
    where = np.nonzero(may.reshape(-1))[0]
    coords = dict(zip(free, np.unravel_index(where, shape))) if free else {}
    out_pos = np.ravel_multi_index(tuple(coords[c] for c in out), out_shape) if out else \
        np.zeros(len(where), np.int64)
    in_pos = np.ravel_multi_index(tuple(coords[c] for c in terms[k]), ops[k].shape) \
        if terms[k] else np.zeros(len(where), np.int64)
    return out_pos, in_pos


def contract(spec, ops, shape, sources=None, full=None):
    """The Deps of the einsum ``spec`` of the ``ops`` (a result of ``shape``; ``full``: its
    shape as the spec sees it, if another of the same size): each operand by its
    ``contraction``; ``sources[k]``, where given, maps the positions of operand ``k`` as the
    spec sees it (broadcast) to its own."""
    relations = []
    for k, op in enumerate(ops):
        if op.deps is None:
            continue
        rel = contraction(spec, ops, k, full or shape)
        if rel is None:
            return dense(shape, *[o.deps for o in ops])
        out, ins = rel
        relations.append((op.deps, out, ins if sources is None else sources[k][ins]))
    return relate_all(shape, relations)
