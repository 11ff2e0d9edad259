"""The Jacobians' blocks: the identity as a batch of tangents (``_basis``),
its evaluation batched or, where a loop's stored values are ragged, one row
at a time, and the batched results cut into one block per (output leaf,
input leaf) and rebuilt into the pytrees of the call.
"""
from __future__ import annotations


import numpy as np

from ..core import context
from ..core.errors import RAGGED_BATCH, UnsupportedSyntax
from ..core.ir import aval_of
from ..core.trace import eval_program
from ..primitives.index import stack
from ..primitives.shape import reshape, transpose as transpose_axes
from ..core.pytree import unflatten
from ..transforms.batching import batch_eval


def identity_basis(leaves):
    """The identity as a batch of flat tangents: one batch row per scalar."""
    sizes = [aval_of(x).size for x in leaves]
    total = sum(sizes)
    rows, start = [], 0
    for x, n in zip(leaves, sizes):
        av = aval_of(x)
        eye = np.zeros((total, n), av.dtype)
        eye[start:start + n] = np.eye(n, dtype=av.dtype)
        row = eye.reshape((total,) + av.shape)
        # of symbolic lengths (the source engine's), the code makes it
        context.remember(row, (total,) + av.shape, ("eye", total, n, -start))
        rows.append(row)
        start += n
    return rows, total


def batch_or_loop(prog, basis, total):
    """``batch_eval`` of the basis; where a loop in ``prog`` stores values whose
    length varies between iterations (they cannot take a batch axis), one
    evaluation per basis vector, stacked."""
    try:
        return batch_eval(prog, basis, total)
    except UnsupportedSyntax as err:
        if getattr(err, "construct", None) != RAGGED_BATCH or not total:
            raise
    rows = [eval_program(prog, [b[k] for b in basis]) for k in range(total)]
    return [stack([row[j] for row in rows]) for j in range(len(prog.outputs))]


def jacobian_blocks(batched_outs, out_leaves, in_leaves, rev):
    """Split batched results into one block per (output leaf, input leaf),
    each shaped out_shape + in_shape."""
    table = []
    if not rev:   # batch runs over inputs: batched_outs[o] is (N_in, *out_shape)
        for o, b in zip(out_leaves, batched_outs):
            row, start = [], 0
            o_shape = aval_of(o).shape
            for x in in_leaves:
                i_shape = aval_of(x).shape
                n = aval_of(x).size
                blk = reshape(b[start:start + n], i_shape + o_shape)
                perm = tuple(range(len(i_shape), len(i_shape) + len(o_shape))) + tuple(range(len(i_shape)))
                row.append(transpose_axes(blk, perm))
                start += n
            table.append(row)
    else:         # batch runs over outputs: batched_outs[i] is (N_out, *in_shape)
        table = [[None] * len(in_leaves) for _ in out_leaves]
        for i, (x, b) in enumerate(zip(in_leaves, batched_outs)):
            start = 0
            for k, o in enumerate(out_leaves):
                n = aval_of(o).size
                table[k][i] = reshape(b[start:start + n], aval_of(o).shape + aval_of(x).shape)
                start += n
    return table


def assemble_jacobian(table, out_tree, in_tree, single):
    rows = []
    for row in table:
        per_in = unflatten(in_tree, row)
        rows.append(per_in[0] if single else tuple(per_in))
    return unflatten(out_tree, rows)
