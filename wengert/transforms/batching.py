"""Batched evaluation of a linear Program: many tangents (or cotangents) in
one pass (seed 002: tangents generic over a vector space).

A batched value carries a leading axis of length B. Each linear primitive's
``batch`` rule runs it on such operands directly (elementwise primitives line
up ranks and broadcast; reductions and shape primitives shift their axes); a
primitive without one falls back to a loop over the batch. ``jacfwd`` is then
one linearize plus one batched pass over the linear Program with the identity
as the batch of tangents; ``jacrev`` the same over the transposed Program.

Layer: transforms.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from ..core.errors import RAGGED_BATCH, UnsupportedSyntax
from ..core.ir import Lit, aval_of
from ..core.primitive import BROADCASTING
from ..core import debug
from ..core.trace import bind, name_as
from ..primitives.index import getitem, stack
from ..primitives.shape import broadcast_to, reshape

__all__ = ["batch_eval", "broadcasting"]


def _refuse_ragged(prim, vals):
    """Rows whose length is known only at run time (a while loop's stored
    values) cannot be stacked as staged: a typed refusal."""
    if any(d is None for v in vals for d in aval_of(v).shape):
        raise UnsupportedSyntax(
            f"a Jacobian of this order through {prim.name} on values whose length is known only "
            "at run time (a while loop, or a break or return inside a loop, that stores "
            "values) is not supported by the source engine; use engine='trace' "
            "(engine='auto' does so by itself)", construct=RAGGED_BATCH)


def _loop(prim, vals, flags, params):
    size = next(_dims.shape(v)[0] for v, f in zip(vals, flags) if f)
    _refuse_ragged(prim, vals)
    rows = [bind(prim, *[getitem(v, b) if f else v for v, f in zip(vals, flags)], **params)
            for b in range(size)]
    _refuse_ragged(prim, [x for r in rows for x in (r if prim.multiple_results else (r,))])
    if prim.multiple_results:
        return tuple(stack([r[k] for r in rows]) for k in range(len(rows[0])))
    return stack(rows)


def broadcasting(prim, args, batched, params):
    """An elementwise row on batched operands (``batch=BROADCASTING``): each batched one
    gets the output's rank after its leading axis, so NumPy broadcasting lines the other axes
    up, and the row is applied once."""
    rank = max(np.ndim(a) - b for a, b in zip(args, batched))
    fixed = []
    for a, b in zip(args, batched):
        if b:
            shp = _dims.shape(a)
            need = rank - (len(shp) - 1)
            if need:
                a = reshape(a, shp[:1] + (1,) * need + shp[1:])
        fixed.append(a)
    return bind(prim, *fixed, **params)


def _batched(eqn, vals, flags):
    """(outputs, whether they carry the batch axis) of one equation."""
    if not any(flags):
        return bind(eqn.prim, *vals, **eqn.params), False
    outs, rule = NotImplemented, eqn.prim.batch
    if rule is BROADCASTING:
        outs = broadcasting(eqn.prim, vals, flags, eqn.params)
    elif rule is not None:
        outs = rule(list(vals), list(flags), **eqn.params)
    if outs is NotImplemented:
        outs = _loop(eqn.prim, vals, flags, eqn.params)
    return outs, True


def batch_eval(prog, args, size, batched=None):
    """Evaluate ``prog`` on operands that carry a leading batch axis of length
    ``size`` (all of them, or those ``batched`` marks); every output carries
    it."""
    batched = batched or [True] * len(args)
    env = {v: (a, b) for v, a, b in zip(prog.inputs, args, batched)}

    def read(x):
        return (x.val, False) if isinstance(x, Lit) else env[x]

    for eqn in prog.eqns:
        vals, flags = zip(*[read(x) for x in eqn.inputs]) if eqn.inputs else ((), ())
        if debug.NANS.on:
            with debug.at(eqn):         # its values are the line's (``wg.debug_nans``)
                outs, batched = _batched(eqn, vals, flags)
        else:
            outs, batched = _batched(eqn, vals, flags)
        outs = outs if eqn.prim.multiple_results else (outs,)
        for v, o in zip(eqn.outputs, outs):
            env[v] = (name_as(o, v), batched)

    results = []
    for x in prog.outputs:
        val, batched = read(x)
        if not batched:
            val = broadcast_to(val, (size,) + x.aval.shape)
        results.append(val)
    return results
