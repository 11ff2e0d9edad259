"""Checkpointed ``while`` loops: a loop whose trip count is known only when it
ends, reversed from O(log n) stored states (the ``for`` loops are in
``checkpoint_loop``, whose linear part and reverse sweep these reuse).

    carry = checkpointed_while[cond, body, num_consts, num_carry, schedule]
                              (*consts, *carry)
        ``while cond(*consts, *carry): carry = body(*consts, *carry)``, a
        plain loop; under linearize for reverse mode it becomes the one below
        and ``checkpoint_loop``'s ``loop_lin`` over the trip count it found.
    (carry, count, last, stored) = while_forward[same params] (*consts, *carry)
        the forward sweep, online: before step ``k`` runs (the condition
        held at ``s_k``), it takes the schedule's actions of step ``k``,
        which depend on ``k`` only (``CTZ.online()``): nothing needs the trip
        count in advance. At the end the stored states are those
        ``CTZ().forward(count)`` leaves, ``last`` is ``s_{count-1}`` and the
        rest is ``loop_forward``'s layout, so ``loop_lin`` and
        ``loop_reverse`` (the reverse sweep) run as for a ``for`` loop of
        ``count`` steps whose body ignores its counter.

Only the CTZ schedule is online: ``binomial`` (Revolve) needs the trip count
before the forward sweep and is refused. Forward mode (``jvp``, and
``linearize`` outside reverse mode) stores nothing to save: the row
differentiates as a ``while_loop``. ``while_forward`` is differentiated, when
a higher-order derivative reaches it, by its impl (``BY_IMPL``), as
``loop_forward`` is.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConcretizationError, UnsupportedSyntax
from ..core.ir import Aval, Eqn, Var, aval_of
from ..core.primitive import (
    BY_IMPL, DENSE, NOT_LINEAR, Primitive, TracerBase, Zero, instantiate, is_float, register,
    PER_LANE)
from ..core.trace import TRACE_STATE, bind, eval_program
from ..core.rules import EmitRule
from .checkpoint import refuse_effects
from .checkpoint_loop import loop_lin_p
from .passes import inside_dce
from .common import with_inputs
from .loops import coherent_carries
from .params import SweepParams, WhileParams, join, split
from .schedules import ADVANCE, CTZ, STORE, ctz_online, schedule_of
from .schedules_numba import TWINS
from .while_loop import (
    WhileEmit, while_loop_jvp, while_loop_linearize, while_loop_p, while_loop_sparsity)

__all__ = ["checkpointed_while_p", "while_forward_p", "checkpointed_while", "online_schedule"]


def online_schedule(schedule, where=""):
    """The schedule of a checkpointed ``while`` loop: one whose forward sweep
    needs no trip count (CTZ); binomial is refused."""
    schedule = schedule_of(schedule) if isinstance(schedule, str) else schedule
    if not isinstance(schedule, CTZ):
        raise UnsupportedSyntax(
            f"{where}a checkpointed while loop with schedule {schedule!r}: its trip count is "
            "known only when the loop ends, and the binomial schedule (Revolve) places its "
            "states from the trip count; use schedule='ctz', which stores at most "
            "floor(log2 n) + 1 states chosen as the steps come",
            construct="binomial schedule on a while loop")
    return schedule


def _plain(p):
    """The ``while_loop`` params of the same loop (forward mode, code)."""
    return WhileParams(p.body, p.num_consts, p.num_carry, cond=p.cond)


def _no_counter(p):
    """``p.body`` in the layout of a ``for`` loop's body, ``(i, *consts,
    *carry)``, not reading ``i``: the body ``loop_lin`` and ``loop_reverse``
    run (``SweepParams``)."""
    i = Var(Aval((), np.int64))
    body = with_inputs(p.body, [i] + list(p.body.inputs), f"{p.body.name}_step")
    return SweepParams(body, p.num_consts, p.num_carry, schedule=p.extra["schedule"],
                       length=None)


def _drop_count(p, outs):
    carry, _, _ = p.split_outputs(outs)
    return tuple(carry)


# --- checkpointed_while ------------------------------------------------
def checkpointed_while_impl(*args, **params):
    p = WhileParams.of(params)
    consts, carry = p.split_operands(args)
    while eval_program(p.cond, p.join_operands(consts, carry))[0]:
        carry = eval_program(p.body, p.join_operands(consts, carry))
    return tuple(carry)


def checkpointed_while_aval(*avals, **params):
    return tuple(WhileParams.of(params).body.out_avals)


def checkpointed_while_jvp(primals, tangents, **params):
    # forward mode stores nothing: the plain while loop's rule
    p = WhileParams.of(params)
    outs, t_outs = while_loop_jvp(primals, tangents, **_plain(p).as_params())
    return _drop_count(p, outs), _drop_count(p, t_outs)


def checkpointed_while_linearize(primals, tangents, **params):
    # linearize for forward mode (jacfwd) stores nothing either
    p = WhileParams.of(params)
    outs, t_outs = while_loop_linearize(primals, tangents, **_plain(p).as_params())
    return _drop_count(p, outs), _drop_count(p, t_outs)


def checkpointed_while_linearize_for_vjp(primals, tangents, **params):
    """The forward sweep stores the schedule's states and counts the steps;
    the linear part is ``loop_lin`` over that count (its transpose, the
    reverse sweep, is ``loop_reverse``)."""
    p = WhileParams.of(params)
    refuse_effects(p.body, "a checkpointed while loop")
    refuse_effects(p.cond, "the test of a checkpointed while loop")
    consts, carry = p.split_operands(primals)
    t_consts, t_carry = p.split_operands(tangents)
    m_consts = tuple(not isinstance(t, Zero) and is_float(aval_of(c))
                     for c, t in zip(consts, t_consts))
    sweep = _no_counter(p)
    # every float carry gets a tangent: the body may make a constant one vary
    m_carry = tuple(is_float(a) for a in sweep.carry_avals)
    out = bind(while_forward_p, *p.join_operands(consts, carry), **params)
    carry_out, (count,), last, stored = split(out, p.num_carry, 1, p.num_carry)
    nz = [t for t, m in zip(t_consts, m_consts) if m]
    nz += [instantiate(t) for t, m in zip(t_carry, m_carry) if m]
    t_out = iter(bind(loop_lin_p, *sweep.join_saved(count, consts, last, stored, nz),
                      mask=(m_consts, m_carry), **sweep.as_params()))
    return tuple(carry_out), tuple(next(t_out) if m else Zero(aval_of(c))
                                   for c, m in zip(carry_out, m_carry))


class CheckpointedWhileEmit(EmitRule):
    """A ``while`` loop, as the ``while_loop`` of its params would be (its
    count, which nothing reads, is not kept)."""

    def statements(self, code, eqn, ins, py, outs, subs):
        p = WhileParams.of(eqn.params)
        loop = _while_eqn(eqn, p)
        count = code.fresh("count")
        return WhileEmit().statements(code, loop, ins, py, list(outs) + [count], subs)


def _while_eqn(eqn, p):
    return Eqn(while_loop_p, eqn.inputs, list(eqn.outputs) + [Var(Aval((), np.int64))],
               _plain(p).as_params())


def checkpointed_while_sparsity(an, ops, outs, **params):
    """The ``while_loop`` it runs as (the schedule only changes what reverse
    mode stores), without its count."""
    p = WhileParams.of(params)
    return _drop_count(p, while_loop_sparsity(an, ops, outs, **_plain(p).as_params()))


checkpointed_while_p = register(Primitive(
    "checkpointed_while", nargs=None, impl=checkpointed_while_impl, jvp=checkpointed_while_jvp,
    linearize=checkpointed_while_linearize,
    linearize_for_vjp=checkpointed_while_linearize_for_vjp, transpose=NOT_LINEAR,
    abstract_eval=checkpointed_while_aval, multiple_results=True, emit=CheckpointedWhileEmit(),
    complex_ok=True, sparsity=checkpointed_while_sparsity, dce=inside_dce, batch=PER_LANE))


def checkpointed_while(cond, body, consts, carry, schedule="ctz"):
    """``while cond(*consts, *carry): carry = body(*consts, *carry)`` (two
    Programs in a ``while_loop``'s layout, no per-iteration outputs), whose
    reverse sweep follows the online ``schedule``."""
    p = WhileParams(body, len(consts), len(carry), cond=cond, schedule=online_schedule(schedule))
    if p.num_ys:
        raise ValueError("a checkpointed while loop's body returns its carries only")
    p, carry = coherent_carries(p, list(carry))
    return bind(checkpointed_while_p, *p.join_operands(consts, carry), **p.as_params())


# --- while_forward -----------------------------------------------------
def while_forward_impl(*args, **params):
    p = WhileParams.of(params)
    if any(isinstance(a, TracerBase) and a.concrete_value is None for a in args):
        _refuse_symbolic()
    consts, state = p.split_operands(args)
    state, last, stored, k = tuple(state), tuple(state), {}, 0
    actions = p.extra["schedule"].online()
    while eval_program(p.cond, p.join_operands(consts, state))[0]:
        # step k runs: the schedule's actions up to its advance
        for kind, j in actions:
            if kind == ADVANCE:
                break
            if kind == STORE:
                stored[j] = state
            else:
                del stored[j]
        last = state
        state = tuple(eval_program(p.body, p.join_operands(consts, state)))
        k += 1
    avals = _no_counter(p).carry_avals
    rows = [stored[j] for j in sorted(stored)]
    stacked = [np.stack([r[m] for r in rows]) if rows else np.zeros((0,) + a.shape, a.dtype)
               for m, a in enumerate(avals)]
    return tuple(join(state, [np.int64(k)], last, stacked))


def _refuse_symbolic():
    """A higher-order derivative reaching the forward sweep where the code is generated
    (``hessian(f, engine="source")``): the impl's loop would test a symbolic value, and
    the derivative of the reverse sweep unrolls it over a count known only at run time."""
    where = TRACE_STATE.where
    at = f"{where[0]}:{where[1]}: " if where else ""
    raise ConcretizationError(
        f"{at}a second derivative through a checkpointed while loop "
        "(`while wg.checkpointed(...)`) where wengert generates code: its trip count is "
        "known only when the loop runs, and the derivative of its reverse sweep unrolls "
        "the loop step by step. Use engine='trace' for this derivative (the loop runs on "
        "concrete values), or a plain `while` loop (which stores every step)")


def while_forward_aval(*avals, **params):
    carry = _no_counter(WhileParams.of(params)).carry_avals
    return tuple(join(carry, [Aval((), np.int64)], carry,
                      [Aval((None,) + a.shape, a.dtype) for a in carry]))


class WhileForwardEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """The forward sweep: a ``while True`` that breaks on the test, then
        takes the online schedule's actions of the step (``ctz_online``, a
        generator defined in the code) and runs the step inlined."""
        p = WhileParams.of(eqn.params)
        cond, body = subs["cond"], subs["body"]
        consts, carry = p.split_operands(ins)
        consts_in, carry_in = p.split_body_inputs(body.inputs)
        out_carry, (count,), out_last, out_stored = split(outs, p.num_carry, 1, p.num_carry)
        schedule = p.extra["schedule"]
        if type(schedule) is CTZ:       # defined in the code: Python alone
            online = f"{code.define(ctz_online, (), TWINS['ctz_online'])}()"
        else:                           # a subclass of the user's: the object
            online = code.bind(("ctz", "ctz_schedule"), schedule,
                               f"{schedule!r} (the same at every call)") + ".online()"
        store, kind, k, acts = (code.fresh("stored"), code.fresh("action"), code.fresh("k"),
                                code.fresh("actions"))
        lines = [f"# the online forward sweep of {schedule!r}"]
        lines += [f"{i} = {o}" for i, o in zip(consts_in, consts) if i != o]
        lines += code.assign(carry_in, carry) + code.assign(out_last, carry_in)
        lines += [f"{store} = {{}}", f"{count} = 0", f"{acts} = {online}",
                  "while True:"]
        step = code.inline(cond, consts + carry_in, [])
        step += [f"if not {cond.outputs[0]}:", code.INDENT + "break"]
        step += [f"for {kind}, {k} in {acts}:"]
        step += code.suite([f"if {kind} == {ADVANCE}:", code.INDENT + "break",
                            f"elif {kind} == {STORE}:",
                            code.INDENT + f"{store}[{k}] = {_tuple(carry_in)}",
                            "else:", code.INDENT + f"del {store}[{k}]"])
        step += code.assign(out_last, carry_in) + ["# the step"] + body.lines
        step += code.assign(carry_in, body.outputs) + [f"{count} += 1"]
        lines += code.suite(step)
        lines += code.assign(out_carry, carry_in)
        lines += code.stacked_states(store, out_stored, p.split_body_inputs(p.body.in_avals)[1])
        return lines + code.release([store, acts]) + [f"{count} = {code.np}.int64({count})"]


def _tuple(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


while_forward_p = register(Primitive(
    "while_forward", nargs=None, impl=while_forward_impl, jvp=BY_IMPL, transpose=NOT_LINEAR,
    abstract_eval=while_forward_aval, multiple_results=True, emit=WhileForwardEmit(),
    complex_ok=True, sparsity=DENSE, dce=inside_dce, batch=PER_LANE))
