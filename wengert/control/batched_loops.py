"""What the loops' batch rules share (``for_loop``, ``while_loop``, the checkpointed
loops): a batch of loops run as one loop over batched values.

* The trip count (or the condition) is the same for every example: one loop whose body is
  batched (``batched_body``). A carry is batched from the start where the body makes it
  so (a fixed point: ``s = 0.0`` before ``s = s + x[i]`` with ``x`` batched), and stays
  unbatched otherwise (a counter, a value of the shared weights).
* Each example has its own trip count, or its own condition: the loop runs until the last
  example is done; each step is *masked* (``masked_step``): an example that is done keeps
  its carry (``where``), and its per-iteration outputs are zeros. NaN-safe, as a loop run
  per example is: the body sees, in an example that is done, the values of one that is not
  (so it computes nothing the program would not: a Newton step at a root, ``0 / 0``), and
  its derivative there multiplies zeros by finite numbers.

Per-iteration values (``xs``, ``ys``) keep the loop's axis first inside the loop and the
batch axis first outside it (``loop_first``, ``batch_first``).

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import aval_of
from ..core.trace import eval_program
from ..core import dims as _dims
from ..core.subprograms import batch_program
from ..primitives.arith import add, convert
from ..primitives.batched import batch_size
from ..primitives.ordering import less
from ..primitives.reduce import argmax, reduce_max
from .params import ForParams, SweepParams
from ..core.trace import bind
from .stage import stage_loop
from ..primitives.batched import along, spread
from ..primitives.index import getitem
from ..primitives.selection import where
from ..primitives.shape import moveaxis, zeros_like

__all__ = ["batched_body", "spread_where", "loop_first", "batch_first", "masked_step",
           "counted", "for_batched", "for_masked", "while_batched", "sweep_batched"]


def batched_body(p, b_consts, b_carry, b_xs, size):
    """(body, carry flags): ``p``'s body batched on its consts and xs as flagged and on
    the carries the body makes batched (a fixed point over the carries), every
    per-iteration output batched."""
    carry = list(b_carry)
    lead = [False] * p.LEAD
    while True:
        flags = p.join_operand_groups(lead, b_consts, carry, b_xs)
        force = list(carry) + [True] * p.num_ys
        body, out = batch_program(p.body, flags, size, force=force)
        new = [c or o for c, o in zip(carry, out[:p.num_carry])]
        if new == carry:
            return body, carry
        carry = new


def spread_where(vals, flags, want, size):
    """``vals`` with those ``want`` marks batched and ``flags`` does not spread to the
    batch."""
    return [spread(v, size) if w and not f else v for v, f, w in zip(vals, flags, want)]


def loop_first(x):
    """A batch of per-iteration values (B, n, ...) as the loop reads them (n, B, ...)."""
    return moveaxis(x, 0, 1)


def batch_first(y):
    """A loop's stacked per-iteration values (n, B, ...) as a batch (B, n, ...)."""
    return moveaxis(y, 1, 0)


def masked_step(active, body, ins, flags, carry, n_carry):
    """One step of a masked loop: ``body`` (batched) on ``ins`` (``flags``: which are
    batched), in the examples ``active`` marks; each example that is done (not active)
    keeps its ``carry`` and gives zeros for its per-iteration outputs, and the body sees,
    there, the inputs of one that is active (the first: ``argmax``). Returns the body's
    outputs so masked."""
    at = argmax(active)
    safe = [where(along(active, x), x, getitem(x, at)) if f else x for x, f in zip(ins, flags)]
    outs = eval_program(body, safe)
    new = [where(along(active, o), o, c) for o, c in zip(outs[:n_carry], carry)]
    ys = [where(along(active, y), y, zeros_like(y)) for y in outs[n_carry:]]
    return new + ys


def counted(count, active):
    """Each example's step count, one more where it is active."""
    return add(count, convert(active, dtype=np.dtype(np.int64)))


def for_batched(p, args, batched, bind_for):
    """A for loop whose trip count the batch shares: the batched body, once."""
    n, consts, carry, xs = p.split_operands(args)
    _, b_consts, b_carry, b_xs = p.split_operands(batched)
    size = batch_size(args, batched)
    body, b_carry2 = batched_body(p, b_consts, b_carry, b_xs, size)
    carry = spread_where(carry, b_carry, b_carry2, size)
    xs = [loop_first(x) if b else x for x, b in zip(xs, b_xs)]
    carry_out, ys = p.split_outputs(bind_for(n, consts, carry, xs, body, p.reverse, p.length))
    return (tuple(spread_where(carry_out, b_carry2, [True] * p.num_carry, size))
            + tuple(batch_first(y) for y in ys))


def for_masked(p, args, batched, bind_for):
    """A for loop with a trip count per example: the largest, each step masked."""
    n, consts, carry, xs = p.split_operands(args)
    _, b_consts, _, b_xs = p.split_operands(batched)
    size = batch_size(args, batched)
    every = [True] * p.num_carry
    body, _ = batched_body(p, b_consts, every, b_xs, size)
    carry = spread_where(carry, p.split_operands(batched)[2], every, size)
    xs = [loop_first(x) if b else x for x, b in zip(xs, b_xs)]
    flags = p.join_operands(False, b_consts, every, b_xs)

    def step(i, n_each, *rest):
        _, c, k, x = p.split_operands((i,) + rest)
        return masked_step(less(i, n_each), body, p.join_operands(i, c, k, x), flags, k,
                           p.num_carry)

    lead, c_av, k_av, x_av = p.operand_groups(body.in_avals)
    masked, _ = stage_loop(step, ForParams, lead=lead, consts=[aval_of(n)] + c_av, carry=k_av,
                           xs=x_av, name=f"{p.body.name}_masked")
    carry_out, ys = p.split_outputs(bind_for(reduce_max(n), [n] + consts, carry, xs, masked,
                                             p.reverse, None))
    return tuple(carry_out) + tuple(batch_first(y) for y in ys)


def while_batched(p, args, batched, bind_while):
    """A batch of while loops as one. A condition the batch shares (it reads no batched
    value, the carries made batched by the body included): the batched body until it
    fails. A condition per example: the loop runs while any example's holds, each step
    masked, and each example's count is its own (a carry)."""
    consts, carry = p.split_operands(args)
    b_consts, b_carry = p.split_operands(batched)
    size = batch_size(args, batched)
    body, b_carry2 = batched_body(p, b_consts, b_carry, [], size)
    flags = p.join_operands(b_consts, b_carry2)
    cond, (b_pred,) = batch_program(p.cond, flags, size)
    if not b_pred:
        carry = spread_where(carry, b_carry, b_carry2, size)
        out, count, ys = p.split_outputs(bind_while(consts, carry, cond, body))
        return (tuple(spread_where(out, b_carry2, [True] * p.num_carry, size))
                + (spread(count, size),) + tuple(batch_first(y) for y in ys))
    every = [True] * p.num_carry
    body, _ = batched_body(p, b_consts, every, [], size)
    flags = p.join_operands(b_consts, every)
    cond, _ = batch_program(p.cond, flags, size, force=[True])
    carry = spread_where(carry, b_carry, every, size) + [_dims.zeros((size,), np.int64)]
    n_c = p.num_consts

    def active(ins):
        return eval_program(cond, ins[:n_c + p.num_carry])[0]

    def any_active(*ins):
        return [reduce_max(active(ins))]

    def step(*ins):
        running = active(ins)
        outs = masked_step(running, body, list(ins[:-1]), flags, ins[n_c:-1], p.num_carry)
        return outs[:p.num_carry] + [counted(ins[-1], running)] + outs[p.num_carry:]

    avals = [aval_of(x) for x in consts + carry]
    layout = type(p)(None, n_c, p.num_carry + 1)
    masked_cond, _ = stage_loop(any_active, type(p), consts=avals[:n_c], carry=avals[n_c:],
                                name=f"{p.cond.name}_any")
    masked_body, _ = stage_loop(step, type(p), consts=avals[:n_c], carry=avals[n_c:],
                                name=f"{p.body.name}_masked")
    out, _, ys = layout.split_outputs(bind_while(consts, carry, masked_cond, masked_body))
    return tuple(out[:-1]) + (out[-1],) + tuple(batch_first(y) for y in ys)


def sweep_batched(prim, args, batched, params, stored_in=False, stored_out=False):
    """A checkpointed loop's row (``SweepParams``: ``checkpointed_loop``, ``loop_forward``,
    ``loop_lin``, ``loop_reverse``) on a batch whose trip count it shares: every operand
    batched (those shared by the batch spread to it), the body (and ``body_vjp``) batched,
    the stored states ``(row, B, ...)`` inside and ``(B, row, ...)`` outside. A trip count
    per example: once per example (``NotImplemented``), each with its own schedule."""
    if batched[0]:
        return NotImplemented
    p = SweepParams.of(params)
    size = batch_size(args, batched)
    vals = [args[0]] + spread_where(args[1:], batched[1:], [True] * (len(args) - 1), size)
    if stored_in:
        n, consts, last, stored, rest = p.split_saved(vals)
        vals = p.join_saved(n, consts, last, [loop_first(x) for x in stored], rest)
    changes = {}
    for name in ("body", "body_vjp"):
        if name in params:
            prog = params[name]
            changes[name] = batch_program(prog, [False] + [True] * (len(prog.inputs) - 1),
                                          size, force=[True] * len(prog.outputs))[0]
    outs = list(bind(prim, *vals, **dict(params, **changes)))
    if stored_out:
        carry, last, stored = p.split_forward_outputs(outs)
        outs = p.join_forward_outputs(carry, last, [batch_first(x) for x in stored])
    return tuple(outs)
