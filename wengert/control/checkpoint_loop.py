"""Checkpointed loops: a ``fori_loop`` whose reverse sweep recomputes the
states its schedule did not store (the region, ``wg.checkpoint``, is in
``checkpoint``; the ``while`` loops, whose sweeps reuse ``loop_lin`` and
``loop_reverse``, in ``checkpoint_while``).

    carry   = checkpointed_loop[body, schedule, num_consts, num_carry, length]
                                  (n, *consts, *carry)
        ``fori_loop(..., checkpoint=)``: ``carry = body(i, *consts, *carry)``
        for ``i in range(n)``, a plain loop; under linearize for reverse mode
        it splits into the three below.
    (carry, last, stored) = loop_forward[same params] (n, *consts, *carry)
        the forward sweep: also the state before the last step (``last``) and
        the states the schedule stores, stacked in position order;
    t_carry = loop_lin[same params, mask] (n, *consts, *last, *stored, *t_consts, *t_carry)
        the loop's linearization, linear in the tangents;
    (ct_consts, ct_carry) = loop_reverse[body, body_vjp, schedule, ...]
                                  (n, *consts, *last, *stored, *ct_carry)
        its transpose: the reverse sweep. It follows the schedule's actions
        (``transforms/checkpoint_schedules.py``): restore a stored state,
        advance with ``body``, store, and reverse one step with ``body_vjp``
        (``(i, consts, state, ct_next) -> (ct_consts, ct_state)``).

Forward mode (``jvp``, and ``linearize`` outside reverse mode: ``jacfwd``)
has no reverse sweep to save memory for: a ``checkpointed_loop``
differentiates as a ``for_loop``. The internal primitives (``loop_*``) are
differentiated, when a higher-order derivative reaches them (``hessian``:
forward over reverse), by running their impl on the jvp trace's values
(``BY_IMPL``): the impls are written with primitives, so this unrolls the
sweep (``n`` must then be known when the derivative is built). Each mode is
its own rule on the row: ``jvp`` (forward), ``linearize`` (forward-mode
linearize: jacfwd) and ``linearize_for_vjp`` (linearize for reverse mode).
The source engine's loop marker, ``checkpointed``, is here too.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import (
    BY_IMPL, NOT_LINEAR, Primitive, TracerBase, Zero, instantiate, is_float, register)
from ..core.trace import bind, eval_program
from ..core.errors import ConcretizationError
from ..core.ir import Aval, Role, aval_of
from .checkpoint import refuse_effects
from .passes import inside_dce
from . import for_loop_jvp, for_loop_linearize
from .params import ForParams, SweepParams, split
from .stage import stage_loop
from ..primitives.index import getitem, stack
from ..primitives.fanout import add_any
from .checkpoint_emit import (
    CheckpointedLoopEmit, LoopForwardEmit, LoopReverseEmit, ThroughImplEmit)
from .schedules import ADVANCE, FREE, RESTORE, STORE, schedule_of
from .batched_loops import sweep_batched
from ..core.subprograms import jvp_flat, vjp_flat
from ..core.primitive import DENSE
from .for_loop import for_loop_sparsity

__all__ = ["checkpointed_loop_p", "loop_forward_p", "loop_lin_p", "loop_reverse_p",
           "checkpointed_loop", "checkpointed"]


def _trip_count(n):
    if isinstance(n, TracerBase):
        val = n.concrete_value
        if val is None:
            raise ConcretizationError(
                "a checkpointed loop's trip count is symbolic where its sweep must be unrolled "
                "(a derivative of its reverse sweep); give the loop a Python int")
        n = val
    return int(n)


# --- the loops' helpers -----------------------------------------------
# The layouts of the four loops are ``SweepParams``'s (``control/params.py``).
def _step(p, consts):
    body = p.body
    return lambda k, state: tuple(eval_program(body, p.join_operands(k, consts, state)))


def _stack_states(states, avals):
    """One stacked array per carry leaf (zero rows when nothing is stored)."""
    if not states:
        return [np.zeros((0,) + a.shape, a.dtype) for a in avals]
    return [stack([s[j] for s in states]) for j in range(len(avals))]


# --- checkpointed_loop -------------------------------------------------
def checkpointed_loop_impl(*args, **params):
    p = SweepParams.of(params)
    n, consts, carry, _ = p.split_operands(args)
    step = _step(p, consts)
    for k in range(_trip_count(n)):
        carry = step(k, carry)
    return tuple(carry)


def checkpointed_loop_aval(*avals, **params):
    return tuple(SweepParams.of(params).body.out_avals)


def checkpointed_loop_jvp(primals, tangents, **params):
    # forward mode stores nothing: the plain loop's rule
    return for_loop_jvp(primals, tangents, **SweepParams.of(params).plain_loop().as_params())


def checkpointed_loop_linearize(primals, tangents, **params):
    # linearize for forward mode (jacfwd) stores nothing either: the plain loop's rule
    return for_loop_linearize(primals, tangents,
                              **SweepParams.of(params).plain_loop().as_params())


def checkpointed_loop_linearize_for_vjp(primals, tangents, **params):
    p = SweepParams.of(params)
    refuse_effects(p.body, "a checkpointed loop")
    n, consts, carry, _ = p.split_operands(primals)
    _, t_consts, t_carry, _ = p.split_operands(tangents)
    m_consts = tuple(not isinstance(t, Zero) and is_float(aval_of(c))
                     for c, t in zip(consts, t_consts))
    # every float carry gets a tangent: the body may make a constant one vary
    m_carry = tuple(is_float(a) for a in p.carry_avals)
    carry_out, last, stored = p.split_forward_outputs(
        bind(loop_forward_p, *p.join_operands(n, consts, carry), **params))
    nz_consts = [t for t, m in zip(t_consts, m_consts) if m]
    nz_carry = [instantiate(t) for t, m in zip(t_carry, m_carry) if m]
    t_out = iter(bind(loop_lin_p, *p.join_saved(n, consts, last, stored, nz_consts + nz_carry),
                      mask=(m_consts, m_carry), **params))
    return tuple(carry_out), tuple(next(t_out) if m else Zero(aval_of(c))
                                   for c, m in zip(carry_out, m_carry))


def checkpointed_loop_batch(args, batched, **params):
    return sweep_batched(checkpointed_loop_p, args, batched, params)
def checkpointed_loop_sparsity(an, ops, outs, **params):
    """The ``for_loop`` it runs as (the schedule only changes what reverse mode stores)."""
    return for_loop_sparsity(an, ops, outs, **SweepParams.of(params).plain_loop().as_params())


checkpointed_loop_p = register(Primitive(
    "checkpointed_loop", nargs=None, impl=checkpointed_loop_impl, jvp=checkpointed_loop_jvp,
    linearize=checkpointed_loop_linearize,
    linearize_for_vjp=checkpointed_loop_linearize_for_vjp, transpose=NOT_LINEAR,
    abstract_eval=checkpointed_loop_aval, multiple_results=True, emit=CheckpointedLoopEmit(),
    complex_ok=True, sparsity=checkpointed_loop_sparsity, dce=inside_dce,
    batch=checkpointed_loop_batch))


def checkpointed_loop(n, body, consts, carry, schedule):
    """Run ``body`` (a Program in loop form, no per-iteration inputs or
    outputs) ``n`` times; reverse mode follows ``schedule``."""
    length = int(n) if isinstance(n, (int, np.integer)) else None
    p = SweepParams(body, len(consts), len(carry), schedule=schedule, length=length)
    return bind(checkpointed_loop_p, *p.join_operands(n, consts, carry), **p.as_params())


# --- loop_forward ------------------------------------------------------
def loop_forward_impl(*args, **params):
    p = SweepParams.of(params)
    n, consts, state, _ = p.split_operands(args)
    state = tuple(state)
    n = _trip_count(n)
    step, stored, last = _step(p, consts), {}, state
    for kind, k in p.schedule.forward(n):
        if kind == ADVANCE:
            last = state
            state = step(k, state)
        elif kind == STORE:
            stored[k] = state
        else:
            del stored[k]
    states = [stored[j] for j in p.schedule.stored(n)]
    return tuple(p.join_forward_outputs(state, last, _stack_states(states, p.carry_avals)))


def loop_forward_aval(*avals, **params):
    p = SweepParams.of(params)
    carry = p.carry_avals
    rows = None if p.length is None else len(p.schedule.stored(p.length))
    return tuple(p.join_forward_outputs(carry, carry,
                                        [Aval((rows,) + a.shape, a.dtype) for a in carry]))


def loop_forward_batch(args, batched, **params):
    return sweep_batched(loop_forward_p, args, batched, params, stored_out=True)


loop_forward_p = register(Primitive(
    "loop_forward", nargs=None, impl=loop_forward_impl,
    jvp=BY_IMPL, transpose=NOT_LINEAR,
    abstract_eval=loop_forward_aval, multiple_results=True, emit=LoopForwardEmit(),
    complex_ok=True, sparsity=DENSE, dce=inside_dce, batch=loop_forward_batch))


# --- loop_lin ----------------------------------------------------------
def _initial_state(schedule, n, last, stored):
    """s_0: the first stored state (every schedule stores it when n > 1),
    or ``last`` for a single step."""
    if n == 1:
        return tuple(last)
    assert schedule.stored(n)[0] == 0, f"{schedule!r} does not store s_0"
    return tuple(getitem(s, 0) for s in stored)


def loop_lin_impl(*args, **params):
    """Tangents through the loop, forward (the linear function evaluated,
    not transposed): one jvp of the loop from s_0."""
    p = SweepParams.of(params)
    m_consts, m_carry = p.mask
    n, consts, last, stored, t_nz = p.split_saved(args)
    t_it = iter(t_nz)
    t_consts = [next(t_it) if m else Zero(aval_of(c)) for c, m in zip(consts, m_consts)]
    t_carry = [next(t_it) if m else Zero(a) for a, m in zip(p.carry_avals, m_carry)]
    n = _trip_count(n)
    if n == 0:
        return tuple(t for t, m in zip(t_carry, m_carry) if m)
    state0 = _initial_state(p.schedule, n, last, stored)

    def run(*xs):
        consts, state = split(xs, p.num_consts)
        step, state = _step(p, consts), tuple(state)
        for k in range(n):
            state = step(k, state)
        return list(state)

    _, dots = jvp_flat(run, list(consts) + list(state0), t_consts + t_carry)
    return tuple(instantiate(d) for d, m in zip(dots, m_carry) if m)


def loop_lin_aval(*avals, **params):
    p = SweepParams.of(params)
    return tuple(a for a, m in zip(p.carry_avals, p.mask[1]) if m)


def _step_vjp_program(p):
    """``(i, consts, state, ct_next) -> (ct_consts, ct_state)``: one step
    linearized at its state and transposed (cotangents for the differentiated
    consts and the float carries), a loop body whose per-iteration values are
    the cotangents."""
    m_consts, m_carry = p.mask
    carry = p.carry_avals
    layout = ForParams(None, p.num_consts, p.num_carry)

    def step_vjp(*ins):
        i, consts, state, ct = layout.split_operands(ins)
        ct = iter(ct)
        _, _, pullback = vjp_flat(lambda *xs: eval_program(p.body, [i, *xs]),
                                  list(consts) + list(state), list(m_consts) + list(m_carry))
        return list(pullback([next(ct) if m else Zero(a) for a, m in zip(carry, m_carry)]))

    lead, consts, _, _ = p.operand_groups(p.body.in_avals)
    body, _ = stage_loop(step_vjp, ForParams, lead=lead, consts=consts, carry=carry,
                         xs=[a for a, m in zip(carry, m_carry) if m],
                         name=f"{p.body.name}_vjp", role=Role.COTANGENT)
    return body


def loop_lin_transpose(cts, *args, **params):
    p = SweepParams.of(params)
    n, consts, last, stored, _ = p.split_saved(args)
    body_vjp = _step_vjp_program(p)
    ct = [instantiate(c) for c in cts]
    # (the params list body before body_vjp: their code blocks come in that order)
    out = bind(loop_reverse_p, *p.join_saved(n, consts, last, stored, ct),
               **p.replace(body_vjp=body_vjp).as_params())
    return tuple(p.join_saved(None, [None] * len(consts), [None] * len(last),
                              [None] * len(stored), out))


def loop_lin_batch(args, batched, **params):
    return sweep_batched(loop_lin_p, args, batched, params, stored_in=True)


loop_lin_p = register(Primitive(
    "loop_lin", nargs=None, impl=loop_lin_impl, jvp=BY_IMPL,
    transpose=loop_lin_transpose, abstract_eval=loop_lin_aval, multiple_results=True,
    emit=ThroughImplEmit(), complex_ok=True, sparsity=DENSE, dce=inside_dce,
    batch=loop_lin_batch))


# --- loop_reverse ------------------------------------------------------
def loop_reverse_impl(*args, body_vjp, **params):
    p = SweepParams.of(params)
    m_consts, _ = p.mask
    n, consts, last, stored, ct = p.split_saved(args)
    n = _trip_count(n)
    store = {j: tuple(getitem(s, row) for s in stored)
             for row, j in enumerate(p.schedule.stored(n))}
    acc = [instantiate(Zero(aval_of(c))) for c, m in zip(consts, m_consts) if m]
    step, state = _step(p, consts), tuple(last)
    vjp_layout = ForParams(body_vjp, p.num_consts, p.num_carry)
    for kind, k in p.schedule.reverse(n):
        if kind == ADVANCE:
            state = step(k, state)
        elif kind == STORE:
            store[k] = state
        elif kind == RESTORE:
            state = store[k]
        elif kind == FREE:
            del store[k]
        else:
            ct_consts, ct = split(eval_program(body_vjp, vjp_layout.join_operands(
                k, consts, state, ct)), len(acc))
            acc = [add_any(a, c) for a, c in zip(acc, ct_consts)]
    return tuple(acc) + tuple(ct)


def loop_reverse_aval(*avals, body_vjp, **params):
    return tuple(body_vjp.out_avals)


def loop_reverse_batch(args, batched, **params):
    return sweep_batched(loop_reverse_p, args, batched, params, stored_in=True)


loop_reverse_p = register(Primitive(
    "loop_reverse", nargs=None, impl=loop_reverse_impl,
    jvp=BY_IMPL, transpose=NOT_LINEAR,
    abstract_eval=loop_reverse_aval, multiple_results=True, emit=LoopReverseEmit(),
    complex_ok=True, sparsity=DENSE, dce=inside_dce, batch=loop_reverse_batch))


# --- the loop marker of the source engine ------------------------------
class checkpointed:
    """Marks a loop for checkpointing: ``for i in wg.checkpointed(range(n)):`` or
    ``while wg.checkpointed(test):``.

    The source engine turns the loop into one ``checkpointed_loop`` (a ``for``)
    or ``checkpointed_while`` (a ``while``), whose reverse sweep stores a few
    states and recomputes the others. A ``while`` loop's trip count is known
    only when it ends: its states are chosen online, as the steps come
    (``"ctz"`` only). Run by Python (the trace engine, or a loop on no traced
    value) it is just its range, or its test's truth.

    Args:
        iterable: a ``range``, or the test of a ``while`` loop.
        schedule: ``"ctz"`` (at most ``floor(log2 n) + 1`` states, O(log n)
            recomputations per step) or ``"binomial"`` (Revolve: ``snapshots``
            states, the fewest recomputations; ``for`` loops only).
        snapshots: the states ``"binomial"`` stores (default ``floor(log2 n) + 1``).

    Raises:
        ValueError: no schedule, or an unknown one.
        UnsupportedSyntax: a ``break`` in a ``for`` loop, a loop over another
            iterable, or ``"binomial"`` on a ``while`` loop.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     for i in wg.checkpointed(range(4), schedule="ctz"):
        ...         x = x * 0.5 + np.sin(x)
        ...     return x
        >>> wg.grad(f)(1.0)
        0.08186386417378409
    """

    def __init__(self, iterable, schedule="ctz", snapshots=None):
        self.iterable = iterable
        self.schedule = schedule_of(schedule, snapshots)
        if self.schedule is None:
            raise ValueError("wg.checkpointed needs a schedule: 'ctz' or 'binomial'")

    def __iter__(self):
        return iter(self.iterable)

    def __len__(self):
        return len(self.iterable)

    def __bool__(self):
        # ``while wg.checkpointed(test):`` run by Python
        return bool(self.iterable)

    def __repr__(self):
        return f"checkpointed({self.iterable!r}, schedule={self.schedule!r})"
