"""Python code for the checkpointing equations (``primitives/checkpoint.py``),
for ``pycodegen``'s table of control-flow emitters.

* ``checkpoint``: its body inlined (plain evaluation stores nothing anyway);
* ``checkpointed_loop``: a ``for`` loop, as ``for_loop``;
* ``loop_forward`` / ``loop_reverse``: a ``for`` over the schedule's actions,
  the schedule object bound in the namespace (``ctz``, ``binomial``), the
  step (and the reverse step) inlined in their branches. A stored state is a
  tuple of the carry's variables in a dict keyed by position::

      for action, k in ctz.forward(100):
          if action == 0:  # advance
              ...the body...
          elif action == 1:  # store
              stored[k] = (x,)
          else:  # free
              del stored[k]

* ``checkpoint_lin``, ``loop_lin`` (a linear function evaluated forward,
  rare): the impl, called with its sub-programs as named constants.
"""
from __future__ import annotations

from .pycodegen import _assign, _comment, _for_loop, _inline, _suite

__all__ = ["EMITTERS"]


def _tuple(names):
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _schedule(em, schedule):
    name = repr(schedule).split("(")[0]
    return em.bind((name, f"{name}_schedule"), schedule,
                   f"{schedule!r} (wengert.transforms.checkpoint_schedules)")


def _count(n, atom):
    """The trip count as a Python int, as the impls' ``int(n)``."""
    from ..ir import Lit
    if isinstance(atom, Lit) and isinstance(atom.val, int) and not isinstance(atom.val, bool):
        return n
    return f"int({n})"


def _branches(kind, cases):
    """``if kind == 0: ... elif ...: ... else: ...`` over (code, comment, lines)."""
    lines = []
    for j, (code, note, body) in enumerate(cases):
        if j == 0:
            lines.append(f"if {kind} == {code}:  # {note}")
        elif j < len(cases) - 1:
            lines.append(f"elif {kind} == {code}:  # {note}")
        else:
            lines.append(f"else:  # {note}")
        lines += _suite(body)
    return lines


def _checkpoint(em, eqn, ins, py, outs, subs):
    return _inline(subs["body"], ins, outs)


def _checkpointed_loop(em, eqn, ins, py, outs, subs):
    from ..ir import Eqn
    from ..primitives.control import for_loop_p
    params = dict(eqn.params, reverse=False)
    del params["schedule"]
    loop = Eqn(for_loop_p, eqn.inputs, eqn.outputs, params)
    return _for_loop(em, loop, ins, py, outs, subs)


def _through_impl(em, eqn, ins, py, outs, subs):
    return [f"{_tuple(outs)} = {em.expression(eqn, ins, py)}"]


def _loop_forward(em, eqn, ins, py, outs, subs):
    from ..transforms.checkpoint_schedules import ADVANCE, STORE
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    body = subs["body"]
    n, consts, carry = ins[0], ins[1:1 + nc], ins[1 + nc:]
    index, carry_in = body.inputs[0], body.inputs[1 + nc:]
    out_carry, out_last, out_stored = outs[:nk], outs[nk:2 * nk], outs[2 * nk:]
    sched = _schedule(em, p["schedule"])
    store, kind, k, pos = em.fresh("stored"), em.fresh("action"), em.fresh("k"), em.fresh("p")
    lines = [_comment(body.prog) + f": the forward sweep, storing what {p['schedule']!r} keeps"]
    lines += [f"{i} = {o}" for i, o in zip(body.inputs[1:1 + nc], consts) if i != o]
    lines += _assign(carry_in, carry) + _assign(out_last, carry_in) + [f"{store} = {{}}"]
    lines.append(f"for {kind}, {k} in {sched}.forward({_count(n, eqn.inputs[0])}):")
    advance = _assign(out_last, carry_in) + [f"{index} = {k}"] + body.lines
    advance += _assign(carry_in, body.outputs)
    lines += _suite(_branches(kind, [(ADVANCE, "advance", advance),
                                     (STORE, "store", [f"{store}[{k}] = {_tuple(carry_in)}"]),
                                     (None, "free", [f"del {store}[{k}]"])]))
    lines += _assign(out_carry, carry_in)
    for j, (o, aval) in enumerate(zip(out_stored, body.prog.in_avals[1 + nc:])):
        dtype = "" if aval.dtype == "float64" else f", {em.dtype(aval.dtype)}"
        rows = f"[{store}[{pos}][{j}] for {pos} in sorted({store})]"
        lines.append(f"{o} = {em.np}.stack({rows}) if {store} else "
                     f"{em.np}.zeros({(0,) + aval.shape!r}{dtype})")
    return lines + [f"del {store}"]         # the stacked copies stay


def _loop_reverse(em, eqn, ins, py, outs, subs):
    from ..primitives.core import Zero, instantiate
    from ..transforms.checkpoint_schedules import ADVANCE, FREE, RESTORE, STORE
    p = eqn.params
    nc, nk = p["num_consts"], p["num_carry"]
    body, vjp = subs["body"], subs["body_vjp"]
    n_acc = sum(p["mask"][0])
    n, consts = ins[0], ins[1:1 + nc]
    last, stacked, ct = ins[1 + nc:1 + nc + nk], ins[1 + nc + nk:1 + nc + 2 * nk], \
        ins[1 + nc + 2 * nk:]
    acc, ct_out = outs[:n_acc], outs[n_acc:]
    index, carry_in = body.inputs[0], body.inputs[1 + nc:]
    v_index, v_state = vjp.inputs[0], vjp.inputs[1 + nc:1 + nc + nk]
    v_ct = vjp.inputs[1 + nc + nk:]
    sched = _schedule(em, p["schedule"])
    store, kind, k = em.fresh("stored"), em.fresh("action"), em.fresh("k")
    row, pos = em.fresh("j"), em.fresh("p")
    count = _count(n, eqn.inputs[0])
    lines = [_comment(body.prog) + f", {vjp.prog.name}: the reverse sweep of {p['schedule']!r}"]
    lines += [f"{i} = {o}" for i, o in zip(body.inputs[1:1 + nc], consts) if i != o]
    lines += [f"{i} = {o}" for i, o in zip(vjp.inputs[1:1 + nc], consts) if i != o]
    states = _tuple([f"{s}[{row}]" for s in stacked])
    lines.append(f"{store} = {{{pos}: {states} for {row}, {pos} in "
                 f"enumerate({sched}.stored({count}))}}")
    lines += _assign(carry_in, last) + _assign(v_ct, ct)
    zeros = [em.literal(instantiate(Zero(a))) for a, m in
             zip(eqn.params["body"].in_avals[1:1 + nc], p["mask"][0]) if m]
    lines += _assign(acc, zeros)
    lines.append(f"for {kind}, {k} in {sched}.reverse({count}):")
    advance = [f"{index} = {k}"] + body.lines + _assign(carry_in, body.outputs)
    step = [_comment(vjp.prog), f"{v_index} = {k}"] + _assign(v_state, carry_in) + vjp.lines
    step += [f"{a} = {a} + {o}" for a, o in zip(acc, vjp.outputs[:n_acc])]
    step += _assign(v_ct, vjp.outputs[n_acc:])
    lines += _suite(_branches(kind, [
        (ADVANCE, "advance", advance),
        (STORE, "store", [f"{store}[{k}] = {_tuple(carry_in)}"]),
        (RESTORE, "restore", [f"{', '.join(carry_in)}, = {store}[{k}]"]),
        (FREE, "free", [f"del {store}[{k}]"]),
        (None, "reverse step", step)]))
    return lines + _assign(ct_out, v_ct)


EMITTERS = {"checkpoint": _checkpoint, "checkpointed_loop": _checkpointed_loop,
            "loop_forward": _loop_forward, "loop_reverse": _loop_reverse,
            "checkpoint_lin": _through_impl, "loop_lin": _through_impl}

