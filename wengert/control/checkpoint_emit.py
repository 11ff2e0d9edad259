"""The Python code of the checkpointing equations (``checkpoint.py``, ``checkpoint_loop.py``):
their ``emit`` rules (see ``control/for_loop.py``), for ``backends/pycodegen.py``.

* ``checkpoint``: its body inlined (plain evaluation stores nothing anyway);
* ``checkpointed_loop``: a ``for`` loop, as ``for_loop``;
* ``loop_forward`` / ``loop_reverse``: a ``for`` over the schedule's actions,
  given by functions the generated file defines (``schedules.SWEEP_FUNCTIONS``,
  plain Python: the code runs without wengert), the step (and the reverse
  step) inlined in their branches. A stored state is a tuple of the carry's
  variables in a dict keyed by position::

      for action, k in ctz_forward(100):
          if action == 0:  # advance
              ...the body...
          elif action == 1:  # store
              stored[k] = (x,)
          else:  # free
              del stored[k]

* ``checkpoint_lin``, ``loop_lin`` (a linear function evaluated forward,
  rare): the impl, called with its sub-programs as named constants.

Layer: control.
"""
from __future__ import annotations

from ..core.ir import Eqn, Lit
from .params import SweepParams, split
from ..core.rules import EmitRule
from . import for_loop_p
from .schedules import (
    ADVANCE, CTZ, FREE, RESTORE, STORE, SWEEP_FUNCTIONS, SWEEP_HELPERS, Binomial)
from ..core.primitive import Zero, instantiate
from .schedules_numba import TWINS

__all__ = ["CheckpointEmit", "CheckpointedLoopEmit", "LoopForwardEmit", "LoopReverseEmit",
           "ThroughImplEmit"]


def _tuple(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _sweeps(code, schedule):
    """The calls of ``schedule``'s forward sweep, stored positions and reverse sweep, each
    a function of the trip count's text: functions defined in the generated code
    (``schedules.SWEEP_FUNCTIONS``, written with Python alone), so it runs without wengert."""
    if type(schedule) not in (CTZ, Binomial):
        # a schedule of the user's own (a subclass): the object, read at each call
        name = repr(schedule).split("(")[0]
        obj = code.bind((name, f"{name}_schedule"), schedule,
                        f"the schedule object {schedule!r} (the same at every call)")
        return [lambda n, m=m: f"{obj}.{m}({n})" for m in ("forward", "stored", "reverse")]
    kind = "ctz" if type(schedule) is CTZ else "binomial"
    extra = "" if kind == "ctz" else f", {schedule.snapshots!r}"
    names = [code.define(f, SWEEP_HELPERS[kind], TWINS[f.__name__])
             for f in SWEEP_FUNCTIONS[kind]]
    return [lambda n, name=name: f"{name}({n}{extra})" for name in names]


def _count(n, atom):
    """The trip count as a Python int, as the impls' ``int(n)``."""
    if isinstance(atom, Lit) and isinstance(atom.val, int) and not isinstance(atom.val, bool):
        return n
    return f"int({n})"


def _branches(code, kind, cases):
    """``if kind == 0: ... elif ...: ... else: ...`` over (code, comment, lines)."""
    lines = []
    for j, (value, note, body) in enumerate(cases):
        if j == 0:
            lines.append(f"if {kind} == {value}:  # {note}")
        elif j < len(cases) - 1:
            lines.append(f"elif {kind} == {value}:  # {note}")
        else:
            lines.append(f"else:  # {note}")
        lines += code.suite(body)
    return lines


class CheckpointEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """Its body inlined (plain evaluation stores nothing anyway)."""
        return code.inline(subs["body"], ins, outs)


class CheckpointedLoopEmit(EmitRule):
    """A ``for`` loop, as the ``for_loop`` of its params would be."""

    def _loop(self, eqn):
        return Eqn(for_loop_p, eqn.inputs, eqn.outputs,
                   SweepParams.of(eqn.params).plain_loop().as_params())

    def statements(self, code, eqn, ins, py, outs, subs):
        loop = self._loop(eqn)
        return loop.prim.emit.statements(code, loop, ins, py, outs, subs)


class ThroughImplEmit(EmitRule):
    """``checkpoint_lin``, ``loop_lin`` (a linear function evaluated
    forward, rare): the impl, called with its sub-programs as named constants."""

    def statements(self, code, eqn, ins, py, outs, subs):
        return [f"{_tuple(outs)} = {code.expression(eqn, ins, py)}"]


class LoopForwardEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """The forward sweep: a ``for`` over the schedule's actions."""
        p = SweepParams.of(eqn.params)
        body = subs["body"]
        n, consts, carry, _ = p.split_operands(ins)
        index, consts_in, carry_in, _ = p.split_body_inputs(body.inputs)
        out_carry, out_last, out_stored = p.split_forward_outputs(outs)
        schedule = p.schedule
        forward = _sweeps(code, schedule)[0]
        store, kind, k = code.fresh("stored"), code.fresh("action"), code.fresh("k")
        lines = [f"{i} = {o}" for i, o in zip(consts_in, consts) if i != o]
        lines += code.assign(carry_in, carry) + code.assign(out_last, carry_in)
        lines += [f"{store} = {{}}"]
        lines.append(f"for {kind}, {k} in {forward(_count(n, eqn.inputs[0]))}:")
        advance = code.assign(out_last, carry_in) + [f"{index} = {k}"] + body.lines
        advance += code.assign(carry_in, body.outputs)
        lines += code.suite(_branches(code, kind, [
            (ADVANCE, "advance", advance),
            (STORE, "store", [f"{store}[{k}] = {_tuple(carry_in)}"]),
            (None, "free", [f"del {store}[{k}]"])]))
        lines += code.assign(out_carry, carry_in)
        lines += code.stacked_states(store, out_stored, p.carry_avals)
        return lines + code.release([store])      # the stacked copies stay


class LoopReverseEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """The reverse sweep: a ``for`` over the schedule's actions, the step
        and the reverse step (``body_vjp``) inlined in their branches."""
        p = SweepParams.of(eqn.params)
        body, vjp = subs["body"], subs["body_vjp"]
        m_consts = p.mask[0]
        n_acc = sum(m_consts)
        n, consts, last, stacked, ct = p.split_saved(ins)
        acc, ct_out = split(outs, n_acc)
        index, consts_in, carry_in, _ = p.split_body_inputs(body.inputs)
        # body_vjp reads (i, consts, state, ct_next)
        v_index, v_consts, v_state, v_ct = p.split_body_inputs(vjp.inputs)
        schedule = p.schedule
        _, stored, reverse = _sweeps(code, schedule)
        store, kind, k = code.fresh("stored"), code.fresh("action"), code.fresh("k")
        count = _count(n, eqn.inputs[0])
        lines = [f"{i} = {o}" for i, o in zip(consts_in, consts) if i != o]
        lines += [f"{i} = {o}" for i, o in zip(v_consts, consts) if i != o]
        lines += code.unstacked_states(store, stacked, stored(count))
        lines += code.assign(carry_in, last) + code.assign(v_ct, ct)
        const_avals = p.split_body_inputs(p.body.in_avals)[1]
        zeros = [code.literal(instantiate(Zero(a))) for a, m in zip(const_avals, m_consts) if m]
        lines += code.assign(acc, zeros)
        lines.append(f"for {kind}, {k} in {reverse(count)}:")
        advance = [f"{index} = {k}"] + body.lines + code.assign(carry_in, body.outputs)
        step = [f"{v_index} = {k}"] + code.assign(v_state, carry_in)
        step += vjp.lines
        step += [f"{a} = {a} + {o}" for a, o in zip(acc, vjp.outputs[:n_acc])]
        step += code.assign(v_ct, vjp.outputs[n_acc:])
        lines += code.suite(_branches(code, kind, [
            (ADVANCE, "advance", advance),
            (STORE, "store", [f"{store}[{k}] = {_tuple(carry_in)}"]),
            (RESTORE, "restore", [f"{', '.join(carry_in)}, = {store}[{k}]"]),
            (FREE, "free", [f"del {store}[{k}]"]),
            (None, "reverse step", step)]))
        return lines + code.assign(ct_out, v_ct)
