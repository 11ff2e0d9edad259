"""The Python code of the control-flow equations (their ``emit`` rules).

``backends/pycodegen.py`` asks a row's ``emit`` for its statements; the
code writer ``code`` it passes gives the text helpers (``assign``,
``suite``, ``inline``, ``stack``, ``comment``) and the Emitter's names.
Each ``subs`` entry is the code block of a sub-Program: its input
identifiers, its statements and its output expressions. The semantics are
the impls' (``primitives/control.py``):

* ``cond``: ``if``/``elif``/``else`` on ``int(index)``, each branch inlined;
* ``for_loop``: a ``for`` over ``range`` whose per-iteration ``ys`` are
  collected in lists and stacked after it (shape ``(0, *y)`` when no
  iteration ran); the carry lives in the body's carry inputs;
* ``while_loop``: a ``while True`` that breaks on its condition and counts
  its iterations in an ``np.int64`` (a Python int when only loops read the
  count), its body reading the values the condition computed rather than
  computing them again (``prepare``).
"""
from __future__ import annotations

from ..ir import Lit
from .control_params import CondParams, ForParams, WhileParams
from .rules import EmitRule

__all__ = ["CondEmit", "ForEmit", "WhileEmit"]


class CondEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """``if int(index) == 0: ... elif ... else:``, each branch inlined."""
        index, ops = CondParams.split_operands(ins)
        branches = subs["branches"]
        if len(branches) == 1:
            return code.inline(branches[0], ops, outs)
        if len(branches) == 2 and eqn.inputs[0].aval.dtype.kind == "b":
            # a boolean test: the true branch (1) first, as the user wrote it
            return (["if " + index + ":"] + code.suite(code.inline(branches[1], ops, outs))
                    + ["else:"] + code.suite(code.inline(branches[0], ops, outs)))
        lines = []
        for k, branch in enumerate(branches):
            if k == 0:
                lines.append(f"if int({index}) == 0:")
            elif k < len(branches) - 1:
                lines.append(f"elif int({index}) == {k}:")
            else:
                lines.append("else:")
            lines += code.suite(code.inline(branch, ops, outs))
        return lines

    def python_scalars(self, eqn, py_ins, run):
        _, ops = CondParams.split_operands(py_ins)
        outs = [False] * len(eqn.outputs)
        for branch in CondParams.of(eqn.params).branches:
            outs = [a or b for a, b in zip(outs, run(branch, ops))]
        return outs


class _LoopEmit(EmitRule):
    PARAMS = None

    def python_scalars(self, eqn, py_ins, run):
        """A loop's index is a Python int; a carry may be a Python scalar
        if its initial value or the body's new value may be (a fixed point)."""
        p = self.PARAMS.of(eqn.params)
        lead, consts, carry, xs = p.operand_groups(py_ins)
        xs = [False] * len(xs)
        while True:
            flags = p.join_operand_groups([True] * len(lead), consts, carry, xs)
            outs = None
            for prog in p.sub_programs():
                outs = run(prog, flags)
            new = [a or b for a, b in zip(carry, p.body_output_groups(outs)[0])]
            if new == carry:
                break
            carry = new
        return p.join_output_groups(carry, [False] * p.MID, [False] * p.num_ys)


class ForEmit(_LoopEmit):
    PARAMS = ForParams

    def operand_uses(self, eqn):
        p = ForParams.of(eqn.params)
        _, consts, carry, xs = p.split_operands(eqn.inputs)
        return p.join_operands("trip", ["other"] * len(consts), ["other"] * len(carry),
                               ["xs"] * len(xs))

    def statements(self, code, eqn, ins, py, outs, subs):
        """``for i in range(n)`` (or backwards); the carry lives in the body's
        carry inputs, assigned once before the loop and after each step."""
        p = ForParams.of(eqn.params)
        body = subs["body"]
        n, consts, carry, xs = p.split_operands(ins)
        index, consts_in, carry_in, xs_in = p.split_body_inputs(body.inputs)
        carry_out, accs = p.split_outputs(outs)
        carry_new, ys = p.body_output_groups(body.outputs)
        n_lit = eqn.inputs[0]
        n_static = None
        if isinstance(n_lit, Lit) and isinstance(n_lit.val, int) and not isinstance(n_lit.val,
                                                                                     bool):
            n_static = n_lit.val
        if n_static is not None:
            bounds = (f"{code.dim(n_static - 1)}, -1, -1" if p.reverse
                      else code.dim(n_static))
        else:
            count = n if n_lit.aval.dtype.kind in "iu" else f"int({n})"    # the impl's int(n)
            bounds = f"{count} - 1, -1, -1" if p.reverse else count
        lines = [code.comment(body.prog)]
        lines += [f"{i} = {o}" for i, o in zip(consts_in + carry_in, consts + carry) if i != o]
        lines += [f"{acc} = []" for acc in accs]
        lines.append(f"for {index} in range({bounds}):")
        # a Python scalar stored per iteration reads back as a Python number
        # (an array of them, stacked, gives NumPy scalars), as the impl does
        x_vars = p.split_body_inputs(p.body.inputs)[3]
        step = [f"{x_in} = {x}[{index}]" if v.aval.python_type is None
                else f"{x_in} = {v.aval.python_type.__name__}({x}[{index}])"
                for x_in, x, v in zip(xs_in, xs, x_vars)] + body.lines
        step += [f"{acc}.append({y})" for acc, y in zip(accs, ys)]
        step += code.assign(carry_in, carry_new)
        lines += code.suite(step)
        y_avals = p.body_output_groups(p.body.out_avals)[1]
        lines += code.stack(accs, y_avals, n_static, p.reverse, p.split_outputs(eqn.outputs)[1])
        return lines + code.assign(carry_out, carry_in)


class WhileEmit(_LoopEmit):
    PARAMS = WhileParams

    def statements(self, code, eqn, ins, py, outs, subs):
        """``while True``: the condition's program, ``break`` when it is
        false, then the body's; an ``np.int64`` counts the steps, as the impl
        does (a Python int where only loops read the count, none where
        nothing does). The body may read the condition's values (``prepare``)."""
        p = WhileParams.of(eqn.params)
        cond, body = subs["cond"], subs["body"]
        consts, carry = p.split_operands(ins)
        consts_in, carry_in = p.split_body_inputs(body.inputs)
        carry_out, count, accs = p.split_outputs(outs)
        carry_new, ys = p.body_output_groups(body.outputs)
        count_var = p.split_outputs(eqn.outputs)[1]
        lines = code.assign(carry_in, carry)
        counted = count_var in code.read          # a count nothing reads is not kept
        if counted:
            lines.append(f"{count} = 0" if count_var in code.trip_only
                         else f"{count} = {code.np}.int64(0)")
        lines += [f"{acc} = []" for acc in accs]
        lines.append("while True:")
        step = code.inline(cond, consts + carry_in, [], code.read)
        step += [f"if not {cond.outputs[0]}:", code.INDENT + "break"]
        step += [code.comment(body.prog)]
        step += [f"{i} = {o}" for i, o in zip(consts_in, consts) if i != o] + body.lines
        step += [f"{acc}.append({y})" for acc, y in zip(accs, ys)]
        step += code.assign(carry_in, carry_new) + ([f"{count} += 1"] if counted else [])
        lines += code.suite(step)
        y_avals = p.body_output_groups(p.body.out_avals)[1]
        lines += code.stack(accs, y_avals, None, False, p.split_outputs(eqn.outputs)[2])
        return lines + code.assign(carry_out, carry_in)

    def prepare(self, eqn, params, reuse):
        """The body reads the values its condition computed in the same
        iteration (the condition runs just before it, on the same consts and
        carry): ``reuse(first, then, operands)``, ``operands`` giving the
        operand of each read-only input position."""
        p = WhileParams.of(params)
        consts = p.split_operands(eqn.inputs)[0]
        body = reuse(p.cond, p.body, dict(enumerate(consts)))
        return p.replace(body=body).as_params() if body is not p.body else params
