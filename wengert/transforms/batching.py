"""Batching: a function of one example run on a whole batch at once (``vmap``), and many
tangents in one pass (Jacobians, seed 002).

    batch : (a -> b) -> ([B] a -> [B] b)

A batched value carries its batch axis *first*: a ``BatchTracer`` holds a value of its
trace's parent whose leading axis of length B runs over the examples, and it answers for one
example (its ``aval`` has the axis dropped), so the user's code and every rule written for
one example see what they would see in a Python loop over the batch. Each application of a
primitive to batched operands asks the row's ``batch`` rule (``Primitive``), under the
parent trace, once for the whole batch:

    program f(x: f64[3]):          batched, x: f64[B,3]
      v1 = sin (x)          ==>      v1 = sin (x)                       # elementwise as it is
      v2 = reduce_sum[axes=(0,)]     v2 = reduce_sum[axes=(1,)] (v1)    # axes past the batch
      return (v2)                    return (v2)                        # f64[B]

The rules keep the invariant (every output they return is batched, its batch axis first) by
shifting their axis params past the batch axis and broadcasting operands; data is moved
(``moveaxis``, a view) only where NumPy's operation needs an axis elsewhere. An operand that
is not batched (a weight matrix, a constant) is never copied B times: ``x @ W`` with ``x``
batched is one ``matmul`` of the batch. ``BROADCASTING`` rows line their operands' ranks up
(``broadcasting``); ``PER_LANE`` rows (a call into the user's code) run once per example, as
a ``for_loop`` over the batch, which the source engine writes as one loop.

``BatchTrace`` is one interpreter among the others (``core.trace``): it handles its own
tracers and gives any other application to its parent, so it nests with jvp, linearize
and itself in any order (``vmap(grad(f))``, ``grad(vmap(f))``, ``vmap(vmap(f))``). A Python
``if`` on a batched value has no single answer: ``bool()`` raises ``BatchedConditionError``
(the source engine stages such an ``if`` as a ``cond``, which the ``cond`` row batches).

``batch_flat`` runs a flat function on batched values; ``batch_program`` stages a Program's
batched version (the rows with sub-Programs batch their bodies with it, through
``core.subprograms``); ``batch_eval`` is ``batch_flat`` of a Program, every output batched
(the Jacobians).

Layer: transforms.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from ..core.errors import RAGGED_BATCH, BatchedConditionError, UnsupportedSyntax, user_location
from ..core.ir import Aval, Role, aval_of
from ..core.primitive import BROADCASTING, PER_LANE
from ..core.trace import Trace, bind, eval_program, rules_under, set_current
from ..core.tracer import Tracer
from ..core.staging import stage
from ..control.for_loop import for_loop
from ..control.params import ForParams
from ..control.stage import stage_loop
from ..primitives.batched import batch_size, spread
from ..primitives.shape import broadcast_to, moveaxis, reshape

__all__ = ["BatchTrace", "BatchTracer", "batch_flat", "batch_program", "batch_eval",
           "broadcasting", "per_lane", "apply_rule", "lane_aval", "batched_aval",
           "batch_size", "spread", "moved"]


def lane_aval(aval):
    """The aval of one example of a batched value of ``aval`` (its batch axis dropped)."""
    return Aval(aval.shape[1:], aval.dtype)


def batched_aval(aval, size):
    """The aval of a batch of ``size`` values of ``aval``."""
    return Aval((size,) + tuple(aval.shape), aval.dtype)


class BatchTracer(Tracer):
    """A batch of values, one per example: ``val`` (a value of the trace's parent) holds
    them along its leading axis. It answers NumPy's questions (shape, dtype, methods) as one
    example would."""

    __slots__ = ("val", "_aval", "_base", "_views", "__weakref__")

    def __init__(self, trace, val):
        self._trace = trace
        self.val = val
        self._aval = None

    @property
    def aval(self):
        if self._aval is None:
            self._aval = lane_aval(aval_of(self.val))
        return self._aval

    # a batch has no one concrete value (``bool()``, ``int()``, ``float()`` refuse it)
    concrete_value = None

    def name_hint(self, name, role=Role.VALUE):
        if isinstance(self.val, Tracer):
            self.val.name_hint(name, role)

    def clone(self):
        return BatchTracer(self._trace, self.val)

    def batched_error(self, what):
        return BatchedConditionError(
            f"{user_location()}: {what} on a batched value (inside wg.vmap) has no single "
            "answer: each example of the batch may give another. The source engine (engine="
            "'source' or 'auto') stages `if` and `while` on such a value per example; or "
            "write the choice with np.where", trace=self._trace)

    def __bool__(self):
        raise self.batched_error("bool() / if / while")

    def __index__(self):
        raise self.batched_error("using an integer as an index or a trip count")

    def __int__(self):
        raise self.batched_error("int()")


class BatchTrace(Trace):
    """Batching: its tracers are batches (``BatchTracer``); an application with one among
    its operands runs the row's ``batch`` rule once under the parent, on the batches'
    values, an operand of no batch being the same for every example."""

    def __init__(self, size, parent=None):
        super().__init__(parent)
        self.size = size        # the batch's length (a Dim where the code is generic)

    def process(self, prim, args, params):
        vals, flags, own = [], [], False
        for a in args:
            if type(a) is BatchTracer and a._trace is self:
                vals.append(a.val)
                flags.append(True)
                own = True
            else:
                vals.append(a)
                flags.append(False)
        if not own:
            return self.parent.process(prim, args, params)
        with rules_under(self.parent):
            outs = apply_rule(prim, vals, flags, params)
        if prim.multiple_results or (prim.inline and isinstance(outs, (tuple, list))):
            return tuple(BatchTracer(self, o) for o in outs)
        return BatchTracer(self, outs)


def apply_rule(prim, vals, flags, params):
    """``prim`` on ``vals``, those ``flags`` marks batched (leading axis): its outputs,
    every one batched. Run under the trace the values belong to."""
    rule = prim.batch
    if rule is BROADCASTING:
        return broadcasting(prim, vals, flags, params)
    outs = NotImplemented
    if rule is not PER_LANE and rule is not None:
        outs = rule(list(vals), list(flags), **params)
    if outs is NotImplemented:
        outs = per_lane(prim, vals, flags, params)
    return outs


def broadcasting(prim, args, batched, params):
    """A row that maps over its operands' leading axes, broadcasting them
    (``batch=BROADCASTING``: every elementwise row): each batched operand gets the
    output's rank after its batch axis, so NumPy's broadcasting lines the other axes up,
    and the row is applied once."""
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


def per_lane(prim, vals, flags, params):
    """``prim`` once per example: a ``for_loop`` over the batch whose per-iteration
    inputs are the batched operands and whose stacked outputs are the row's (``PER_LANE``
    rows, and a rule that answers ``NotImplemented`` for a case it does not cover)."""
    size = batch_size(vals, flags)
    _refuse_ragged(prim, [v for v, f in zip(vals, flags) if f], lead=1)
    consts = [v for v, f in zip(vals, flags) if not f]
    xs = [v for v, f in zip(vals, flags) if f]

    def one(i, *ins):
        c, x = iter(ins[:len(consts)]), iter(ins[len(consts):])
        out = bind(prim, *[next(x) if f else next(c) for f in flags], **params)
        return list(out) if prim.multiple_results else [out]

    body, closed = stage_loop(one, ForParams, lead=[Aval((), np.int64)],
                              consts=[aval_of(c) for c in consts],
                              xs=[lane_aval(aval_of(x)) for x in xs],
                              name=f"{prim.name}_per_example", closure=True)
    _refuse_ragged(prim, body.outputs, lead=0)
    outs = for_loop(size, body, list(closed) + consts, [], xs)
    return tuple(outs) if prim.multiple_results else outs[0]


def _refuse_ragged(prim, vals, lead):
    """Values whose length is known only at run time past the batch axis (a while loop's
    stored values) cannot be stacked per example: a typed refusal."""
    if any(d is None for v in vals for d in aval_of(v).shape[lead:]):
        raise UnsupportedSyntax(
            f"a batch (a Jacobian of this order, or wg.vmap) through {prim.name} on values "
            "whose length is known only at run time (a while loop, or a break or return "
            "inside a loop, that stores values) is not supported by the source engine; use "
            "engine='trace' (engine='auto' does so by itself)", construct=RAGGED_BATCH)


def batch_flat(fn, vals, flags, size, trace=None):
    """Run ``fn(*flat) -> list`` on ``vals``, those ``flags`` marks being batches of
    ``size`` (leading axis); return (outs, out_flags): each output's value and whether it
    is batched (one that no batched value reaches is the same for every example).
    ``trace``: the ``BatchTrace`` to run under (a new one by default)."""
    trace = trace or BatchTrace(size)
    with set_current(trace):
        ins = [BatchTracer(trace, v) if f else v for v, f in zip(vals, flags)]
        outs = fn(*ins)
        res, out_flags = [], []
        for o in outs:
            own = type(o) is BatchTracer and o._trace is trace
            res.append(o.val if own else o)
            out_flags.append(own)
    return res, out_flags


def batch_program(prog, flags, size, force=None):
    """``prog``'s batched version: (Program, out_flags). Its inputs marked by ``flags``
    carry a leading batch axis of length ``size``; output ``k`` does where ``out_flags[k]``
    (every output that a batched input reaches, and those ``force`` marks, broadcast)."""
    force = force or [False] * len(prog.outputs)
    out_flags = [None]

    def run(*ins):
        outs, got = batch_flat(lambda *xs: eval_program(prog, xs), list(ins), flags, size)
        outs = [spread(o, size) if f and not g else o for o, g, f in zip(outs, got, force)]
        out_flags[0] = [g or f for g, f in zip(got, force)]
        return outs

    avals = [batched_aval(a, size) if f else a for a, f in zip(prog.in_avals, flags)]
    batched = stage(run, avals, name=f"{prog.name}_batched",
                    in_names=[v.name for v in prog.inputs], in_roles=[v.role for v in prog.inputs])
    return batched, out_flags[0]


def batch_eval(prog, args, size, batched=None):
    """Evaluate ``prog`` on operands that carry a leading batch axis of length ``size``
    (all of them, or those ``batched`` marks); every output carries it."""
    batched = batched or [True] * len(args)
    outs, flags = batch_flat(lambda *xs: eval_program(prog, xs), list(args), batched, size)
    return [o if f else broadcast_to(o, (size,) + tuple(x.aval.shape))
            for o, f, x in zip(outs, flags, prog.outputs)]


def moved(x, src, dst):
    """``x`` with axis ``src`` moved to ``dst`` (a view; ``x`` itself where they agree)."""
    nd = np.ndim(x)
    return x if src % nd == dst % nd else moveaxis(x, src, dst)
