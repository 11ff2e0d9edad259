"""``while_loop``: a loop that runs while a condition holds, as one equation.

    (*carry, count, *ys) = while_loop[cond, body, num_consts, num_carry]
                                    (*consts, *carry)
        while cond(*consts, *carry): (*carry, *y) = body(*consts, *carry);
        ``count`` iterations ran; ``ys`` stacks the per-iteration y.

The layout is ``WhileParams``'s (``params.py``). Forward mode runs one while
loop of the jvp'd body (the condition reads primal values only). Under
linearize the primal while loop records its trip count and per-iteration
residuals, and the linear part is a ``for_loop`` over that count (which
transposes as a ``for_loop`` does). On a batch whose condition is per example, the loop
runs until every example is done, a done one frozen (``batched_loops``). Code: a
``while True`` that breaks on
the condition; the ``ys`` go to arrays that start at ``WHILE_ROWS`` rows,
double when full and are cut to the count after the loop (``YsBuffer`` in
the impl).

Layer: control.
"""
from __future__ import annotations

import collections

import numpy as np

from ..core.ir import Aval, Var, aval_of
from ..core.primitive import NOT_LINEAR, Primitive, Zero, register, zeros
from ..core.trace import bind, eval_program
from .common import unused, with_inputs
from .for_loop import bind_for
from .loops import (
    LoopEmit, LoopLower, LoopTangents, carry_tangents, coherent_carries, jvp_body, loop_residuals,
    WHILE_ROWS, YsBuffer)
from .params import WhileParams, join, split
from ..core.rules import either, stand_in_flags
from .passes import WHILE_RULES
from .batched_loops import while_batched
from ..core.subprograms import linearize_program

__all__ = ["while_loop_p", "while_loop", "bind_while"]


def while_loop_impl(*args, **params):
    p = WhileParams.of(params)
    consts, carry = p.split_operands(args)
    y_avals = p.body_output_groups(p.body.out_avals)[1]
    ys = [YsBuffer(a) for a in y_avals]
    count = 0
    while eval_program(p.cond, p.join_operands(consts, carry))[0]:
        carry, y_i = p.body_output_groups(eval_program(p.body, p.join_operands(consts, carry)))
        for buf, y in zip(ys, y_i):
            buf.put(count, y)
        count += 1
    return tuple(p.join_outputs(carry, np.int64(count), [buf.result(count) for buf in ys]))


def while_loop_aval(*avals, **params):
    p = WhileParams.of(params)
    carry, ys = p.body_output_groups(p.body.out_avals)
    return tuple(p.join_outputs(carry, Aval((), np.int64),
                                [Aval((None,) + a.shape, a.dtype) for a in ys]))


def while_loop_jvp(primals, tangents, **params):
    p = WhileParams.of(params)
    tans = LoopTangents(p, primals, tangents)
    jb = jvp_body(p, tans, f"{p.body.name}_jvp")
    # the condition reads primal values only: give it the tangents as unused inputs
    consts_in, carry_in = p.split_body_inputs(p.cond.inputs)
    jc = with_inputs(p.cond, join(consts_in, unused([aval_of(t) for t in tans.nz_consts]),
                                  carry_in, unused([aval_of(t) for t in tans.nz_carry])))
    res = bind_while(tans.consts + tans.nz_consts, tans.carry + tans.nz_carry, jc, jb)
    jp = WhileParams(jb, len(tans.consts + tans.nz_consts), len(tans.carry + tans.nz_carry))
    carry_all, count, ys_all = jp.split_outputs(res)
    carry_out, t_carry = split(carry_all, p.num_carry)
    ys, t_ys = split(ys_all, p.num_ys)
    t_carry = carry_tangents(carry_out, t_carry, tans.m_carry)
    return (tuple(p.join_outputs(carry_out, count, ys)),
            tuple(p.join_outputs(t_carry, Zero(Aval((), np.int64)), t_ys)))


def while_loop_linearize(primals, tangents, **params):
    p = WhileParams.of(params)
    tans = LoopTangents(p, primals, tangents)
    # the primal while loop records its trip count and per-iteration residuals;
    # the linear part is a for_loop over that count
    known, lin, nres = linearize_program(p.body, tans.mask)
    known, lin_body, inv, held = loop_residuals(p, tans, known, lin, nres)
    # the residuals held once are carries the condition does not read
    consts_in, carry_in = p.split_body_inputs(p.cond.inputs)
    cond = with_inputs(p.cond, join(consts_in, carry_in, unused(held)))
    out = bind_while(tans.consts, tans.carry + [zeros(a) for a in held], cond, known)
    carry_out, held_vals, count, ys, res = split(out, p.num_carry, len(held), 1, p.num_ys)
    count = count[0]
    inv_vals = [tans.consts[j] for j in inv]
    t_out = bind_for(count, tans.nz_consts + inv_vals + held_vals, tans.nz_carry, res, lin_body,
                     False, None)
    t_carry, t_ys = split(t_out, len(tans.nz_carry))
    t_carry = carry_tangents(carry_out, t_carry, tans.m_carry)
    return (tuple(p.join_outputs(carry_out, count, ys)),
            tuple(p.join_outputs(t_carry, Zero(Aval((), np.int64)), t_ys)))


def _made_each_step(body, num_carry):
    """The body's per-iteration outputs that it makes anew in each step: a
    row's result that is a new array (its ``lower`` rule's ``fresh``), no
    carry's new value and no other output. Nothing writes into one after
    the step that made it (the next step makes another), so a list may keep
    it as it is."""
    outs = body.outputs
    made = set()
    for e in body.eqns:
        rule = e.prim.lower
        if rule is not None and rule.fresh(e):
            made.update(e.outputs)
    carries = set(x for x in outs[:num_carry] if isinstance(x, Var))
    ys = collections.Counter(x for x in outs[num_carry:] if isinstance(x, Var))
    return {y for y, k in ys.items() if k == 1 and y in made and y not in carries}


class WhileEmit(LoopEmit):
    PARAMS = WhileParams

    def statements(self, code, eqn, ins, py, outs, subs):
        """``while True``: the condition's program, ``break`` when it is
        false, then the body's; an ``np.int64`` counts the steps, as the impl
        does (a Python int where only loops read the count, none where
        nothing does). The per-iteration values go to buffers of
        ``WHILE_ROWS`` rows that double when full (``CodeWriter.buffers``),
        indexed by a Python int. The body may read the condition's values
        (``prepare``)."""
        p = WhileParams.of(eqn.params)
        if getattr(code, "lazy", False) and not p.cond.outputs[0].aval.weak:
            code.refuse_lazy(eqn, "a while loop's test")
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
        y_avals = p.body_output_groups(p.body.out_avals)[1]
        acc_vars = p.split_outputs(eqn.outputs)[2]
        fresh = _made_each_step(p.body, p.num_carry)
        made = {v for v, y in zip(acc_vars, p.body_output_groups(p.body.outputs)[1])
                if y in fresh}
        row = None
        if not all(code.kept_as_list(a, v, True, v in made) for a, v in zip(y_avals, acc_vars)):
            # the arrays' row index: the count where it is a Python int
            row = count if counted and count_var in code.trip_only else code.fresh("row")
            if row != count:
                lines.append(f"{row} = 0")
        before, store, after = code.buffers(accs, ys, y_avals, acc_vars, row, str(WHILE_ROWS),
                                            grows=True, made=made)
        lines += before
        lines.append("while True:")
        step = code.inline(cond, consts + carry_in, [], code.read)
        step += [f"if not {cond.outputs[0]}:", code.INDENT + "break"]
        # the values the condition shares with the body (``prepare``): the
        # same names, so no statement, unless a name had to differ
        step += code.assign(p.operand_groups(body.inputs)[3], cond.outputs[1:])
        step += [f"{i} = {o}" for i, o in zip(consts_in, consts) if i != o] + body.lines
        step += store + code.assign(carry_in, carry_new)
        step += [f"{c} += 1" for c in dict.fromkeys([count] * counted + [row] * bool(row))]
        lines += code.suite(step)
        return lines + after + code.assign(carry_out, carry_in)

    def prepare(self, eqn, params, reuse):
        """The body reads the values its condition computed in the same
        iteration (the condition runs just before it, on the same consts and
        carry): ``reuse(first, then, operands) -> (first, then)``, the
        condition returning them after its flag and the body reading them as
        inputs after its carries (``operands`` gives the operand of each
        read-only input position)."""
        p = WhileParams.of(params)
        consts = p.split_operands(eqn.inputs)[0]
        cond, body = reuse(p.cond, p.body, dict(enumerate(consts)))
        return p.replace(cond=cond, body=body).as_params() if body is not p.body else params

    def python_scalars(self, eqn, py_ins, run):
        """As a loop's, the body's inputs for the values the condition
        shares (``prepare``) as the condition's outputs."""
        p = WhileParams.of(eqn.params)
        consts, carry = p.split_operands(py_ins)
        sets = stand_in_flags(py_ins)
        while True:
            cond_out = run(p.cond, p.join_operands(consts, carry))
            new, ys = p.body_output_groups(run(p.body, p.join_operands(consts, carry)
                                               + cond_out[1:]))
            new = [either(a, b) for a, b in zip(carry, new)]
            if new == carry:
                break
            carry = new
        if sets:        # the count is a NumPy or Python int, never a stand-in
            return p.join_outputs(carry, frozenset(), ys)
        return p.join_outputs(carry, False, [False] * p.num_ys)


class WhileLower(LoopLower):
    PARAMS = WhileParams


def while_loop_batch(args, batched, **params):
    """A batch of while loops as one (``batched_loops.while_batched``): a condition the
    batch shares runs the batched body; a condition per example runs until every example
    is done, an example that is done keeping its carry."""
    return while_batched(WhileParams.of(params), args, batched, bind_while)
def while_loop_sparsity(an, ops, outs, **params):
    """The body run while the condition is known and holds, then to a fixed point (the
    union over every trip count: ``Analysis.iterate``)."""
    p = WhileParams.of(params)
    consts, carry = p.split_operands(ops)

    def more(carry):
        return an.run(p.cond, p.join_operands(consts, carry))[0]

    def step(i, carry):
        return p.body_output_groups(an.run(p.body, p.join_operands(consts, carry)))
    carry, count, rows, tail = an.iterate(step, carry, more=more)
    ys = an.stacked(count, rows, tail, p.body_output_groups(p.body.out_avals)[1])
    return tuple(p.join_outputs(carry, count, ys))


while_loop_p = register(Primitive("while_loop", nargs=None, impl=while_loop_impl,
                                  jvp=while_loop_jvp, linearize=while_loop_linearize,
                                  transpose=NOT_LINEAR, abstract_eval=while_loop_aval,
                                  multiple_results=True, dce=WHILE_RULES[0],
                                  simplify=WHILE_RULES[1], print=WHILE_RULES[2],
                                  emit=WhileEmit(), lower=WhileLower(), complex_ok=True,
                                  sparsity=while_loop_sparsity,
                                  batch=while_loop_batch))


def bind_while(consts, carry, cond, body):
    """Apply a ``while_loop`` whose carries keep one type (``coherent_carries``)."""
    p, carry = coherent_carries(WhileParams(body, len(consts), len(carry), cond=cond), carry)
    return bind(while_loop_p, *p.join_operands(consts, carry), **p.as_params())


def while_loop(cond, body, consts, carry):
    return bind_while(consts, carry, cond, body)
