"""The passes' rules the loop rows share (``dce``, ``simplify``, ``print``;
see ``core.Primitive``), written over the layouts of ``params.py``, so that
``transforms/simplify.py`` and ``printing.py`` ask the row and name no
primitive; and ``inline_program``, a Program's equations in place.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Lit, Program, Var, dce
from .params import ForParams, WhileParams

__all__ = ["loop_rules", "inline_program", "needed_inputs", "same_literal", "FOR_RULES",
           "WHILE_RULES", "inside_dce"]


# --- inlining ----------------------------------------------------------
def inline_program(prog, args):
    """(equations, outputs) of ``prog`` with its inputs replaced by ``args`` and
    fresh variables for everything it defines (a Program may be inlined twice)."""
    env = {v: a for v, a in zip(prog.inputs, args)}

    def read(x):
        return x if isinstance(x, Lit) else env.get(x, x)

    eqns = []
    for e in prog.eqns:
        outs = []
        for v in e.outputs:
            w = Var(v.aval, v.name, v.role)
            env[v] = w
            outs.append(w)
        eqns.append(e.replace(tuple(read(x) for x in e.inputs), tuple(outs), e.params))
    return eqns, [read(x) for x in prog.outputs]


# --- loops -------------------------------------------------------------
def needed_inputs(prog, outputs):
    """Positions of ``prog``'s inputs that computing ``outputs``, and the
    effects ``prog`` has, read: after ``dce``, so an equation holding
    sub-Programs reads only the operands that its rule keeps for the outputs
    used (a branch's primal value a loop carries, which nothing needs)."""
    pruned = dce(Program(prog.inputs, prog.eqns, list(outputs), prog.name))
    live = {x for x in outputs if not isinstance(x, Lit)}
    for eqn in pruned.eqns:
        live.update(x for x in eqn.inputs if not isinstance(x, Lit))
    return {k for k, v in enumerate(prog.inputs) if v in live}


def same_literal(a, b):
    """Whether two atoms are literals of one value, to the bit (signed zeros
    and all), of one shape (symbolic lengths included) and dtype."""
    if not (isinstance(a, Lit) and isinstance(b, Lit)) or a.aval != b.aval \
            or a.aval.weak != b.aval.weak:
        return False
    if a.val is b.val:
        return True
    va, vb = a.val, b.val
    if not all(isinstance(v, (np.ndarray, np.generic, float, int)) and not isinstance(v, bool)
               for v in (va, vb)):
        return False
    va, vb = np.asarray(va), np.asarray(vb)
    return va.dtype == vb.dtype and va.shape == vb.shape and va.dtype.kind in "biuf" \
        and va.tobytes() == vb.tobytes()


def _substitute(prog, subst):
    """``prog`` reading ``subst[v]`` (a literal) where it read the Var ``v``
    (its inputs stay; sub-Programs read only their own inputs)."""
    def read(x):
        return subst.get(x, x) if isinstance(x, Var) else x

    eqns = [e.replace(tuple(read(x) for x in e.inputs), e.outputs, e.params)
            for e in prog.eqns]
    return Program(prog.inputs, eqns, [read(x) for x in prog.outputs], prog.name)


def _pick(items, flags):
    return [x for x, f in zip(items, flags) if f]


def loop_rules(params_type):
    """(dce, simplify, print) of a loop row whose params read as ``params_type``."""

    def loop_simplify(eqn, ins, copies):
        """A carry whose new value is the body's carry input itself never
        changes: the loop's output is the initial value (also after no
        iteration). Nor does a carry whose initial value and new value are
        the same literal (a cotangent the body resets to zeros, starting
        from zeros): the body reads that literal instead (``ct + v`` is then
        ``v``, the zeros are not made at each step) and the carry is left to
        ``dce``."""
        p = params_type.of(eqn.params)
        carry_in = p.operand_groups(p.body.inputs)[2]
        carry_new = p.body_output_groups(p.body.outputs)[0]
        init = p.operand_groups(ins)[2]
        outs = list(eqn.outputs)
        fixed = {}
        for k, (v, new, x) in enumerate(zip(carry_in, carry_new, init)):
            if new is v:
                outs[k] = x
                if isinstance(x, Lit) and np.ndim(x.val) == 0 and x.aval == v.aval \
                        and x.aval.weak == v.aval.weak and not hasattr(x.val, "_trace"):
                    fixed[v] = x
            elif same_literal(new, x):
                outs[k] = x
                fixed[v] = new
        params = eqn.params
        if fixed:
            params = p.replace(body=_substitute(p.body, fixed)).as_params()
        return [eqn.replace(ins, eqn.outputs, params)], outs

    def loop_dce(eqn, used, dce):
        """``eqn`` without the carries, per-iteration outputs and operands
        that no used output needs (``dce``: the pass, for the pruned body).
        A carry stays while the body needs its value for something kept (a
        kept carry, a kept output, the condition)."""
        p = params_type.of(eqn.params)
        keep_carry, mid, keep_ys = p.output_groups(used)
        body = p.body
        # a while loop's condition reads every input the loop keeps running on
        others = [q for q in p.sub_programs() if q is not body]
        cond_needs = set().union(*[needed_inputs(q, q.outputs) for q in others])
        positions = p.operand_groups(range(len(body.inputs)))
        while True:
            outs = _pick(body.outputs, keep_carry + keep_ys)
            needs = needed_inputs(body, outs) | cond_needs
            more = [k or j in needs for j, k in zip(positions[2], keep_carry)]
            if more == keep_carry:
                break
            keep_carry = more
        lead, consts, _, xs = positions
        keep_in = p.join_operand_groups([True] * len(lead), [k in needs for k in consts],
                                        keep_carry, [k in needs for k in xs])
        keep_out = keep_carry + keep_ys
        if all(keep_in) and all(keep_out):
            return eqn
        new_consts = sum(p.operand_groups(keep_in)[1])
        changes = {"num_consts": new_consts, "num_carry": sum(keep_carry),
                   "body": dce(Program(_pick(body.inputs, keep_in), body.eqns,
                                               _pick(body.outputs, keep_out), body.name))}
        if others:
            cond = p.cond
            changes["cond"] = Program(_pick(cond.inputs, keep_in), cond.eqns, cond.outputs,
                                      cond.name)
        carry_out, mid_out, ys_out = p.output_groups(eqn.outputs)
        outs = p.join_output_groups(_pick(carry_out, keep_carry), mid_out,
                                    _pick(ys_out, keep_ys))
        params = p.replace(**changes).as_params()
        return eqn.replace(_pick(eqn.inputs, keep_in), outs, params)

    def loop_print(eqn, names):
        return params_type.of(eqn.params).sub_aliases(eqn.inputs, names)

    return loop_dce, loop_simplify, loop_print


FOR_RULES = loop_rules(ForParams)
WHILE_RULES = loop_rules(WhileParams)


# --- the other rows holding Programs ----------------------------------------------
def inside_dce(eqn, used, dce):
    """The ``dce`` rule of a row whose sub-Programs' interfaces its layout fixes (a
    checkpoint, a checkpointed loop's sweeps, a custom rule): each sub-Program without
    the equations none of its outputs (nor an effect) needs; its inputs and outputs,
    and so the equation's operands and results, stay."""
    changed, params = False, {}
    for k, v in eqn.params.items():
        if isinstance(v, Program):
            new = dce(v)
            changed = changed or len(new.eqns) != len(v.eqns)
            v = new
        elif isinstance(v, tuple) and v and all(isinstance(q, Program) for q in v):
            new = tuple(dce(q) for q in v)
            changed = changed or any(len(a.eqns) != len(b.eqns) for a, b in zip(new, v))
            v = new
        params[k] = v
    return eqn.replace(params=params) if changed else eqn
