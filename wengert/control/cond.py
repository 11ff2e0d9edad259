"""``cond``: the branch an index picks, as one equation.

    (outs...) = cond[branches=(b0, b1, ...)] (index, *ops)
        branch ``int(index)`` maps ops to outs; every branch has the same
        input and output avals.

Forward mode runs one cond of the jvp'd branches. Under linearize each
branch is partially evaluated into a known branch (its primal work, also
giving its residuals) and a linear one reading them: a primal cond, then a
linear cond over the residuals; the linear cond's transpose is a cond of the
transposed branches. On a batch (``wg.vmap``) with a batched index every branch runs and
``where`` joins them, NaN-safe (``cond_batch``). Code: ``if``/``elif``/``else`` on
``int(index)``.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, Lit, Program, Var, aval_of
from ..core.primitive import Linear, Primitive, instantiate, register, zeros
from ..core.trace import bind, eval_program
from ..core.rules import EmitRule, LowerRule, either
from .common import agreeing, tangent_mask
from .params import CondParams
from .passes import inline_program, needed_inputs, same_literal
from ..core.subprograms import batch_program, jvp_program, linearize_program, transpose_program
from ..core.errors import UnsupportedSyntax, user_location
from ..core.ir import runs_at_call
from ..primitives.batched import along, batch_size
from ..primitives.index import getitem
from ..primitives.ordering import equal, logical_not, logical_or
from ..primitives.reduce import argmax, reduce_max
from ..primitives.selection import where

__all__ = ["cond_p", "cond"]


def cond_impl(index, *ops, branches):
    return tuple(eval_program(branches[int(index)], ops))


def cond_aval(index, *ops, branches):
    # a length one branch knows only at run time (a while loop's stored
    # values) and another leaves empty (a residual slot's filler, whose
    # length 0 a transform may have made concrete): known at run time
    return tuple(_join_lengths(avals) for avals in zip(*[b.out_avals for b in branches]))


def _join_lengths(avals):
    first = avals[0]
    if all(a.shape == first.shape for a in avals[1:]):
        return first
    shape = tuple(None if any(a.shape[k] is None or a.shape[k] == 0 for a in avals)
                  and len({a.shape[k] for a in avals}) > 1 else first.shape[k]
                  for k in range(len(first.shape)))
    return Aval(shape, first.dtype, first.weak)


def _tangents(primals, tangents):
    """(index, ops, mask, nonzero tangents) of a cond's operands."""
    index, ops = CondParams.split_operands(primals)
    _, t_ops = CondParams.split_operands(tangents)
    mask = tangent_mask(t_ops, [aval_of(o) for o in ops])
    return index, ops, mask, [t for t, m in zip(t_ops, mask) if m]


def cond_jvp(primals, tangents, branches):
    index, ops, mask, nz = _tangents(primals, tangents)
    n_out = len(branches[0].outputs)
    jvps = tuple(jvp_program(b, mask) for b in branches)
    res = bind(cond_p, index, *ops, *nz, branches=agreeing(jvps))
    return tuple(res[:n_out]), tuple(res[n_out:])


def cond_linearize(primals, tangents, branches):
    index, ops, mask, nz = _tangents(primals, tangents)
    n_out = len(branches[0].outputs)
    # partial evaluation: a primal cond that also emits the taken branch's
    # residuals, then a linear cond reading them. A residual that is one of
    # the cond's operands is read from the operand; the others go through
    # slots that branches share by aval (a slot a branch does not fill holds
    # zeros).
    parts = [linearize_program(b, mask) for b in branches]
    slots, plans = [], []
    for known, _, _ in parts:
        used, plan = set(), []
        operand = {v: m for m, v in enumerate(known.inputs)}
        for r in known.outputs[n_out:]:
            if isinstance(r, Var) and r in operand:
                plan.append(("operand", operand[r]))
                continue
            a = r.aval
            # by shape, dtype and weak typing: a Python float and an np.float64
            # promote differently in the linear branch that reads the slot
            j = next((j for j, s in enumerate(slots) if j not in used and s.shape == a.shape
                      and s.dtype == a.dtype and s.weak == a.weak), None)
            if j is None:
                slots.append(Aval(a.shape, a.dtype, a.weak))
                j = len(slots) - 1
            used.add(j)
            plan.append(("slot", j))
        plans.append(plan)
    needed = sorted({m for plan in plans for kind, m in plan if kind == "operand"})
    knowns, lins = [], []
    for (known, lin, nres), plan in zip(parts, plans):
        res = known.outputs[n_out:]
        fill = {j: r for (kind, j), r in zip(plan, res) if kind == "slot"}
        outs = list(known.outputs[:n_out]) + [
            fill.get(j, Lit(_filler(a), a)) for j, a in enumerate(slots)]
        knowns.append(Program(known.inputs, known.eqns, outs, known.name))
        slot_in = {j: v for (kind, j), v in zip(plan, lin.inputs[:nres]) if kind == "slot"}
        op_in = {m: v for (kind, m), v in zip(plan, lin.inputs[:nres]) if kind == "operand"}
        ins = ([slot_in.get(j) or Var(a) for j, a in enumerate(slots)]
               + [op_in.get(m) or Var(aval_of(ops[m])) for m in needed])
        lins.append(Program(ins + lin.inputs[nres:], lin.eqns, lin.outputs, lin.name))
    out = bind(cond_p, index, *ops, branches=agreeing(knowns))
    res = out[n_out:]
    t_out = bind(cond_p, index, *res, *[ops[m] for m in needed], *nz, branches=agreeing(lins))
    return tuple(out[:n_out]), tuple(t_out)


def _filler(aval):
    """What a branch puts in a residual slot it does not fill (the other
    branch's; never read on this path): zeros, of length 0 along a length
    known only at run time (a while loop's stacked values)."""
    return zeros(Aval(tuple(0 if d is None else d for d in aval.shape), aval.dtype, aval.weak))


def cond_transpose(cts, index, *ops, branches):
    mask = [isinstance(o, Linear) for o in ops]
    nonlin = [o for o in ops if not isinstance(o, Linear)]
    cts = [instantiate(c) for c in cts]
    t_branches = tuple(transpose_program(b, mask) for b in branches)
    in_cts = iter(bind(cond_p, index, *nonlin, *cts, branches=agreeing(t_branches)))
    return (None,) + tuple(next(in_cts) if m else None for m in mask)


class CondEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """``if int(index) == 0: ... elif ... else:``, each branch inlined."""
        index, ops = CondParams.split_operands(ins)
        branches = subs["branches"]
        if len(branches) == 1:
            return code.inline(branches[0], ops, outs)
        if getattr(code, "lazy", False) and not py[0]:
            code.refuse_lazy(eqn, "an if (or a choice of branch)")
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
            outs = [either(a, b) for a, b in zip(outs, run(branch, ops))]
        return outs


def cond_simplify(eqn, ins, copies):
    """A branch chosen by a literal: its equations replace the cond. An output that
    every branch passes on from one operand (a cotangent a branch does not touch) is
    that operand, and one that every branch gives as one literal is that literal:
    what reads it reads them, and ``dce`` drops the output."""
    index, ops = CondParams.split_operands(ins)
    branches = CondParams.of(eqn.params).branches
    if isinstance(index, Lit) and not hasattr(index.val, "_trace"):
        return inline_program(branches[int(index.val)], ops)
    scalars = {k: x for k, x in enumerate(ops) if _scalar_lit(x)}
    if scalars:
        # a scalar literal operand is read as the literal inside the branches
        # (``ct_s * 1.0`` is then ``ct_s``); ``dce`` drops the operand
        branches = tuple(_reading(b, {b.inputs[k]: x for k, x in scalars.items()})
                         for b in branches)
        eqn = eqn.replace(eqn.inputs, eqn.outputs, CondParams(branches).as_params())
    outs, passed = list(eqn.outputs), bool(scalars)
    for m, out in enumerate(eqn.outputs):
        given = [b.outputs[m] for b in branches]
        pos = {next((k for k, v in enumerate(b.inputs) if v is g), None)
               for b, g in zip(branches, given)}
        if len(pos) == 1 and None not in pos:
            x = ops[pos.pop()]
            if x.aval == out.aval and x.aval.weak == out.aval.weak:
                outs[m], passed = x, True
        elif all(same_literal(g, given[0]) for g in given) and given[0].aval == out.aval:
            outs[m], passed = given[0], True
    if not passed:
        return None
    return [eqn.replace(ins, eqn.outputs, eqn.params)], outs


def _scalar_lit(x):
    return isinstance(x, Lit) and np.ndim(x.val) == 0 and not hasattr(x.val, "_trace") \
        and type(x.val) is not bool


def _reading(prog, subst):
    """``prog`` reading the literal ``subst[v]`` where it read its input ``v``."""
    def read(x):
        return subst.get(x, x) if isinstance(x, Var) else x
    eqns = [e.replace(tuple(read(x) for x in e.inputs), e.outputs, e.params)
            for e in prog.eqns]
    return Program(prog.inputs, eqns, [read(x) for x in prog.outputs], prog.name)


def cond_dce(eqn, used, dce):
    """``eqn`` without the outputs no one uses (``used``: a flag each), each branch
    without the work only they needed (``dce``: the pass), and without the operands
    no branch reads then: a reverse sweep's forward branch that computes the primal
    value ``grad`` throws away, and the ``np.sin`` it takes, is gone."""
    p = CondParams.of(eqn.params)
    index, ops = CondParams.split_operands(eqn.inputs)
    branches = [dce(Program(b.inputs, b.eqns, [o for o, u in zip(b.outputs, used) if u],
                            b.name)) for b in p.branches]
    needs = set().union(*[needed_inputs(b, b.outputs) for b in branches])
    keep = [k in needs for k in range(len(ops))]
    if all(used) and all(keep):
        return eqn
    branches = tuple(Program([v for v, k in zip(b.inputs, keep) if k], b.eqns, b.outputs,
                             b.name) for b in branches)
    return eqn.replace([index] + [x for x, k in zip(ops, keep) if k],
               [v for v, u in zip(eqn.outputs, used) if u], CondParams(branches).as_params())


def cond_print(eqn, names):
    return CondParams.of(eqn.params).sub_aliases(eqn.inputs, names)


def cond(index, branches, *ops):
    """Apply ``branches[index]`` (Programs) to ``ops``."""
    return bind(cond_p, index, *ops, branches=tuple(branches))


class CondLower(LowerRule):
    """A sum into an accumulator moves into the branches; an operand nothing
    reads after the ``if`` is handed to the branches, which may write it."""

    def absorb(self, eqn, k, acc, out, sink):
        """``acc + outs[k]`` (``acc`` from outside, or another output of this
        equation) computed in each branch: a branch whose ``outs[k]`` is a
        zero passes ``acc`` on."""
        y = eqn.outputs[k]
        if not sink.fits(y, out):
            return None
        if acc is None:
            return []
        _, ops = CondParams.split_operands(eqn.inputs)
        k2 = eqn.outputs.index(acc) if any(acc is o for o in eqn.outputs) else None
        branches = []
        for b in CondParams.of(eqn.params).branches:
            ins, eqns, outs = list(b.inputs), list(b.eqns), list(b.outputs)
            if k2 is None:
                # a literal accumulator (a constant array) is an operand like any
                a = Var(acc.aval, out.name, out.role) if isinstance(acc, Lit) \
                    else Var(acc.aval, acc.name, acc.role)
                ins.append(a)
            else:
                a = outs[k2]
            s = _summed(a, outs[k], out, eqns, sink)
            if k2 is None:
                outs[k] = s
            else:
                outs = [o for m, o in enumerate(outs) if m not in (k, k2)] + [s]
            branches.append(sink.program(Program(ins, eqns, outs, b.name)))
        params = CondParams(branches).as_params()
        if k2 is None:
            outputs = list(eqn.outputs)
            outputs[k] = out
            return [eqn.replace(list(eqn.inputs) + [acc], outputs, params)]
        outputs = [o for m, o in enumerate(eqn.outputs) if m not in (k, k2)] + [out]
        return [eqn.replace(eqn.inputs, outputs, params)]

    def operand_inputs(self, eqn):
        return [{v: k + 1 for k, v in enumerate(b.inputs)}
                for b in CondParams.of(eqn.params).branches]

    def with_operands(self, eqn, extra, programs):
        return eqn.replace(list(eqn.inputs) + list(extra), eqn.outputs,
                   CondParams(programs).as_params())

    def additive(self, eqn, m, p, check):
        """Output ``m`` is operand ``p`` plus others in every branch."""
        return p > 0 and all(check(b, b.inputs[p - 1], b.outputs[m])
                             for b in CondParams.of(eqn.params).branches)

    def ownership(self, eqn, ctx):
        ops = range(1, len(eqn.inputs))
        cands = [p for p in ops if ctx.transferable(p) and eqn.inputs[p].aval.shape]
        results = []
        for branch in CondParams.of(eqn.params).branches:
            res = ctx.analyze(branch, [ctx.sub_roots(p, p in cands) for p in ops])
            ctx.keep(branch, res)
            results.append(res)
        consumed = set().union(*(r.consumed for r in results))
        handed = set(consumed)
        outs, escaped = [], {}
        for m in range(len(eqn.outputs)):
            mine = [ctx.exclusive(r.outputs, m) for r in results]
            handed |= {r.origin for r in mine if r is not None and r.origin is not None}
            origins = {None if r is None else r.origin for r in mine}
            roots = set()
            if any(r is not None for r in mine):
                origin = next(iter(origins)) if len(origins) == 1 else None
                roots.add(ctx.taken_root(origin) if origin is not None else ctx.new_root())
            for r, res in zip(mine, results):
                if r is None:
                    roots |= ctx.back(res.outputs[m], escaped)
            outs.append(frozenset(roots))
        for p in sorted(handed):
            ctx.take(p, consumed=p in consumed)
        return outs


def _summed(a, y, out, eqns, sink):
    """``a + y`` in a branch (a zero passes the other on); ``eqns`` grows."""
    new, s = sink.add(a, y, Var(out.aval, out.name, out.role))
    eqns += new
    return s


def cond_batch(args, batched, branches):
    """A batch of conds. An index shared by the batch picks one branch, batched. A batched
    index picks per example: every branch taken by some example runs on the whole batch
    and ``where`` joins their outputs. NaN-safe, as reverse mode is, which runs the taken
    branch only: a branch sees, in the examples that do not take it, the operands of one
    that does (so it computes nothing there that the program itself would not), and a
    branch no example takes does not run (a ``cond`` on whether any does: its outputs are
    zeros). A branch with an effect (a random draw) would be made on every example:
    refused."""
    index, ops = CondParams.split_operands(args)
    b_index, b_ops = CondParams.split_operands(batched)
    size = batch_size(args, batched)
    n_out = len(branches[0].outputs)
    if not b_index or len(branches) == 1:
        progs = tuple(batch_program(b, b_ops, size, force=[True] * n_out)[0] for b in branches)
        return tuple(bind(cond_p, index if not b_index else 0, *ops, branches=agreeing(progs)))
    if any(runs_at_call(b) for b in branches):
        raise UnsupportedSyntax(
            f"{user_location()}: an if whose test is batched (wg.vmap) has a branch that makes "
            "a call with an effect (a random draw, I/O): both branches run on the batch, so it "
            "would be made for every example; make the call before the if",
            construct="effect in a batched branch")
    picks = _picks(index, len(branches))
    outs = [_on_its_examples(b, pick, ops, b_ops, size) for b, pick in zip(branches, picks)]
    if aval_of(index).dtype.kind == "b":
        return tuple(where(along(index, t), t, f) for f, t in zip(*outs))
    res = outs[-1]
    for pick, out in zip(picks[-2::-1], outs[-2::-1]):
        res = [where(along(pick, o), o, r) for o, r in zip(out, res)]
    return tuple(res)


def _picks(index, n):
    """Per branch, the examples that take it: ``index == k``, the last branch every other
    one (as the code's ``else``); a boolean index takes branch 1 where it holds."""
    if aval_of(index).dtype.kind == "b":
        return [logical_not(index), index]
    picks = [equal(index, k) for k in range(n - 1)]
    rest = picks[0]
    for p in picks[1:]:
        rest = logical_or(rest, p)
    return picks + [logical_not(rest)]


def _on_its_examples(branch, pick, ops, b_ops, size):
    """``branch`` on the batch, where the examples ``pick`` marks take it: a ``cond`` on
    whether any does (else zeros), the others' operands those of one that does."""
    taken = reduce_max(pick)
    at = argmax(pick)
    safe = [where(along(pick, o), o, getitem(o, at)) if b else o for o, b in zip(ops, b_ops)]
    prog, _ = batch_program(branch, b_ops, size, force=[True] * len(branch.outputs))
    untaken = Program([Var(a) for a in prog.in_avals], [],
                      [Lit(zeros(a), a) for a in prog.out_avals], f"{branch.name}_untaken")
    return list(bind(cond_p, taken, *safe, branches=agreeing((untaken, prog))))
def cond_sparsity(an, ops, outs, branches):
    """The branch a known index picks; else every branch, joined: what holds on any path."""
    index, ops = CondParams.split_operands(ops)
    if index.known:
        return tuple(an.run(branches[int(index.value)], ops))
    return tuple(an.join_all(list(v)) for v in zip(*[an.run(b, ops) for b in branches]))


cond_p = register(Primitive("cond", nargs=None, impl=cond_impl, jvp=cond_jvp,
                            linearize=cond_linearize, transpose=cond_transpose,
                            abstract_eval=cond_aval, multiple_results=True,
                            simplify=cond_simplify, print=cond_print, emit=CondEmit(),
                            lower=CondLower(), complex_ok=True, sparsity=cond_sparsity,
                            dce=cond_dce, batch=cond_batch))
