"""Lowering, step 3 (``lower.py``): the facts about a Program the code
generator asks -- how each value is read, which may be Python scalars --
and the sharing of a while loop's condition values with its body."""
from __future__ import annotations

from ..ir import Eqn, Lit, Program, Var, sub_programs
from ..transforms.simplify import atom_key, eqn_key
from .pyemit import PY_SCALARS

__all__ = ["use_kinds", "loop_only_values", "python_scalars", "share_condition_values"]


def use_kinds(prog, uses=None):
    """Var -> how it is read: ``"xs"`` (a ``for_loop``'s per-iteration
    input), ``"trip"`` (a ``for_loop``'s trip count) or ``"other"``."""
    uses = {} if uses is None else uses

    def note(x, kind):
        if not isinstance(x, Lit):
            uses.setdefault(x, set()).add(kind)

    for eqn in prog.eqns:
        rule = eqn.prim.emit
        kinds = rule.operand_uses(eqn) if rule is not None and "operand_uses" in rule.asks \
            else None
        for k, x in enumerate(eqn.inputs):
            note(x, "other" if kinds is None else kinds[k])
        for sub in sub_programs(eqn):
            use_kinds(sub, uses)
    for x in prog.outputs:
        note(x, "other")
    return uses


def loop_only_values(prog):
    """The Vars read only as a ``for_loop``'s per-iteration inputs
    (``xs``): a loop's stored residuals. Scalar ones can stay Python lists,
    indexed as they are, without stacking them into an array."""
    return {k for k, kinds in use_kinds(prog).items() if kinds == {"xs"}}


def python_scalars(prog, inputs=None, found=None):
    """The Vars that may hold a Python scalar when ``prog`` runs (a
    sound over-approximation): a Python scalar cannot be subscripted, and
    an operator on two of them gives a Python number. Scalar inputs may (a
    caller passes ``2.0``); an impl returns NumPy values, but ``dup`` and
    control flow pass values through (their rows' ``emit.python_scalars``
    say how), and a loop's index is a Python int. A loop carry is solved to
    a fixed point; a sub-program used twice gets the union."""
    found = set() if found is None else found
    if inputs is None:
        inputs = [v.aval.shape == () for v in prog.inputs]

    def py(x):
        return type(x.val) in PY_SCALARS if isinstance(x, Lit) else x in found

    def run(sub, flags):
        python_scalars(sub, flags, found)
        return [py(x) for x in sub.outputs]

    found.update(v for v, f in zip(prog.inputs, inputs) if f)
    for eqn in prog.eqns:
        rule = eqn.prim.emit
        outs = None
        if rule is not None and "python_scalars" in rule.asks:
            outs = rule.python_scalars(eqn, [py(x) for x in eqn.inputs], run)
        if outs is None:
            if not eqn.params or not list(sub_programs(eqn)):
                continue            # an impl's results are NumPy values
            # other holders of sub-programs (checkpointing): any scalar may be a Python one
            for sub in sub_programs(eqn):
                run(sub, [v.aval.shape == () for v in sub.inputs])
            outs = [v.aval.shape == () for v in eqn.outputs]
        found.update(v for v, f in zip(eqn.outputs, outs) if f)
    return found


def share_condition_values(prog):
    """``prog`` with each ``while_loop`` body reading the values its condition
    already computed in the same iteration (the condition runs just before
    the body, and both read the same consts and carry): ``while abs(y*y*y -
    a) >= tol: y = y - (y*y*y - a) / ...`` computes ``y*y*y - a`` once a step.
    A body equation equal to one of the condition's (same primitive, params
    and operands, the inputs matched by position) is dropped: the condition
    also returns that value, and the body reads it as an input of its own
    (the row's ``emit.prepare`` says where). The result is for code
    generation only, a Program ``verify`` accepts; the body's inputs for the
    shared values take the condition's names (``walk`` names the condition
    first), so the code assigns nothing for them."""
    eqns, changed = [], False
    for eqn in prog.eqns:
        if not eqn.params:          # no sub-Program to share values in
            eqns.append(eqn)
            continue
        params = {}
        for key, v in eqn.params.items():
            if isinstance(v, Program):
                v = share_condition_values(v)
            elif isinstance(v, tuple) and v and all(isinstance(p, Program) for p in v):
                v = tuple(share_condition_values(p) for p in v)
            params[key] = v
        rule = eqn.prim.emit
        if rule is not None and "prepare" in rule.asks:
            params = rule.prepare(eqn, params, _reuse_condition)
        if any(params[k] is not eqn.params[k] for k in params):
            eqn, changed = Eqn(eqn.prim, eqn.inputs, eqn.outputs, params), True
        eqns.append(eqn)
    return Program(prog.inputs, eqns, prog.outputs, prog.name) if changed else prog


def _reuse_condition(cond, body, operands):
    """(cond, body): ``cond`` also returning the values ``body`` recomputes,
    ``body`` reading them as extra inputs (in that order). An input is known
    by its position, a read-only one by its operand (``operands``: position
    -> operand; a loop may be passed the same value twice)."""
    key_of_input = {}
    for prog in (cond, body):
        for k, v in enumerate(prog.inputs):
            key_of_input[v] = atom_key(operands[k]) if k in operands else ("in", k)
    subst = {}

    def key(x):
        if isinstance(x, Lit):
            return atom_key(x)
        x = subst.get(x, x)
        return key_of_input.get(x, ("var", x))

    computed = {}
    for e in cond.eqns:
        k = eqn_key(e.prim, e.inputs, e.params, key)
        if k is not None:
            computed.setdefault(k, e.outputs)
    if not computed:
        return cond, body
    kept = []
    for e in body.eqns:
        k = eqn_key(e.prim, e.inputs, e.params, key)
        if k is not None and k in computed:
            subst.update(zip(e.outputs, computed[k]))      # body variable -> the condition's
            continue
        kept.append(e)
    if not subst:
        return cond, body
    shared = {}         # a condition's variable the body reads -> the body's input for it

    def read(x):
        x = x if isinstance(x, Lit) else subst.get(x, x)
        if x in computed_vars:
            if x not in shared:
                shared[x] = Var(x.aval, x.name, x.role)
            return shared[x]
        return x

    computed_vars = {w for outs in computed.values() for w in outs}
    eqns = [Eqn(e.prim, [read(x) for x in e.inputs], e.outputs, e.params) for e in kept]
    outs = [read(x) for x in body.outputs]
    return (Program(cond.inputs, cond.eqns, list(cond.outputs) + list(shared), cond.name),
            Program(list(body.inputs) + list(shared.values()), eqns, outs, body.name))
