"""Transposition of a linear Program (seeds 000 and 003).

    transpose : (T a -o T b) -> (T b -o T a)

The equations are walked in reverse order; each linear primitive's transpose
rule turns the cotangent of its output into cotangents of its linear operands.
A variable used twice receives the sum of its cotangents (``add_any``: the
transpose of the implicit ``dup``); an equation whose output has no cotangent
is skipped (zero cotangents are never formed). Equations with no linear
operand (constants built inside the linear program) are evaluated forward.

    t1 = mul (t0, 3.0)             ct0 = mul (ct1, 3.0)
    (t2, t3) = dup (t1)     ==>    ct1 = add_any (ct2, ct3)
    t4 = add (t2, t3)              (ct2, ct3) = dup (ct4)

Layer: transforms.
"""
from __future__ import annotations

from ..core import debug
from ..core.atoms import cotangent_label
from ..core.ir import Lit, Role, derive, sub_programs
from ..core.primitive import Linear, TracerBase, Zero
from ..core.trace import TRACE_STATE, bind, tracing
from ..primitives.arith import cast_float
from ..primitives.fanout import add_any
from ..primitives.unbounded import unbounded_div_p, unbounded_mul_p
from ..core.staging import defining, stage

__all__ = ["backward_pass", "transpose_program"]

UNBOUNDED = (unbounded_mul_p, unbounded_div_p)


def backward_pass(prog, cts_out, mask=None, nonlinear_args=()):
    """Cotangents of ``prog``'s linear inputs given cotangents of its outputs
    (``Zero`` where an input receives nothing). ``mask[k]`` False marks input
    k as a non-linear operand (a residual), whose values are
    ``nonlinear_args`` in order. A Program from linearize (``all_linear``:
    every equation reads a tangent) is transposed without sorting."""
    naming = tracing()          # cotangents being recorded take the variables' names
    if not naming:
        return _backward(prog, cts_out, mask, nonlinear_args, naming)
    with defining(Role.COTANGENT):          # what it records are cotangents
        return _backward(prog, cts_out, mask, nonlinear_args, naming)


def _backward(prog, cts_out, mask, nonlinear_args, naming):
    every = mask is None and prog.all_linear      # every variable is linear
    if every:
        ins, lin_eqns, linear, values = prog.inputs, prog.eqns, None, None
    else:
        mask = mask or [True] * len(prog.inputs)
        ins = [v for v, m in zip(prog.inputs, mask) if m]
        lin_eqns, linear = [], {v for v in ins}
        values = {v: a for v, a in zip([v for v, m in zip(prog.inputs, mask) if not m],
                                           nonlinear_args)}

    def read(x):
        return x.val if type(x) is Lit else values[x]

    for eqn in () if every else prog.eqns:
        for x in eqn.inputs:
            if type(x) is not Lit and x in linear:
                lin_eqns.append(eqn)
                for v in eqn.outputs:
                    linear.add(v)
                break
        else:
            outer = TRACE_STATE.where
            TRACE_STATE.where = eqn.where or outer
            try:
                outs = bind(eqn.prim, *[read(x) for x in eqn.inputs], **eqn.params)
            finally:
                TRACE_STATE.where = outer
            outs = outs if eqn.prim.multiple_results else (outs,)
            values.update((v, o) for v, o in zip(eqn.outputs, outs))

    ct_env = {}
    # the variables whose cotangents may be infinite where the function is
    # finite (``primitives.unbounded``): all of them when the cotangents given
    # are (a loop body's, transposed by a rule that runs on wild ones)
    wild = {v for v in prog.outputs if type(v) is not Lit} if TRACE_STATE.wild else set()

    def accumulate(v, ct):
        if ct is None or type(ct) is Zero:
            return
        ct = cast_float(ct, v.aval)
        key = v
        prev = ct_env.get(key)
        ct_env[key] = ct if prev is None else add_any(prev, ct)

    for v, ct in zip(prog.outputs, cts_out):
        if type(v) is not Lit and (every or v in linear):
            accumulate(v, ct)

    state = TRACE_STATE
    outer = state.where
    try:
        for eqn in reversed(lin_eqns):
            # each cotangent is recorded under the line of the equation it transposes
            state.where = eqn.where or outer
            if debug.NANS.on:
                # the cotangents it gives, and their sums, are the line's work
                with debug.at(eqn, Role.COTANGENT):
                    _transpose_eqn(eqn, ct_env, accumulate, naming, every, linear, values, wild)
            else:
                _transpose_eqn(eqn, ct_env, accumulate, naming, every, linear, values, wild)
    finally:
        state.where = outer

    out = [ct_env.get(v, Zero(v.aval)) for v in ins]
    for v, ct in zip(ins, out) if naming else ():
        if (v.name or v.role is not Role.VALUE) and isinstance(ct, TracerBase):
            ct.name_hint(*derive(v.name, v.role, Role.COTANGENT))
    return out


def _transpose_eqn(eqn, ct_env, accumulate, naming, every, linear, values, wild):
    """Transpose one linear equation: the cotangent of its output (``ct_env``) to
    cotangents of its linear operands (``accumulate``); an output with no cotangent
    has nothing to pass on. The operands' cotangents are ``wild`` where the
    output's is, or where the rule applied an unbounded local derivative (one of
    ``primitives.unbounded``'s rows, itself or in a loop's body)."""
    prim = eqn.prim
    if prim.multiple_results:
        cts = [ct_env.pop(v, None) for v in eqn.outputs]
        if all(c is None for c in cts):
            return
        for v, c in zip(eqn.outputs, cts) if naming else ():
            if (v.name or v.role is not Role.VALUE) and isinstance(c, TracerBase):
                c.name_hint(*derive(v.name, v.role, Role.COTANGENT))
        ct = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outputs, cts)]
    else:
        v = eqn.outputs[0]
        ct = ct_env.pop(v, None)
        if ct is None:
            return
        if naming and (v.name or v.role is not Role.VALUE) and isinstance(ct, TracerBase):
            ct.name_hint(*derive(v.name, v.role, Role.COTANGENT))
    args = [x.val if type(x) is Lit else
            Linear(x.aval) if every or x in linear else values[x]
            for x in eqn.inputs]
    state = TRACE_STATE
    outer, count = state.wild, state.unbounded
    state.wild = any(v in wild for v in eqn.outputs) or any(map(_unbounded, sub_programs(eqn)))
    try:
        in_cts = prim.transpose(ct, *args, **eqn.params)
        is_wild = state.wild or state.unbounded != count
    finally:
        state.wild = outer
    for x, a, c in zip(eqn.inputs, args, in_cts):
        if type(a) is Linear:
            accumulate(x, c)
            if is_wild:
                wild.add(x)


def _unbounded(prog):
    """Whether ``prog`` applies an unbounded local derivative (a row of
    ``primitives.unbounded``), itself or in a Program inside it: a loop body's
    carries then come around wild."""
    return any(e.prim in UNBOUNDED or any(map(_unbounded, sub_programs(e))) for e in prog.eqns)


def transpose_program(prog, mask=None):
    """Program -> Program: output cotangents in, input cotangents out.
    With ``mask`` (False: a non-linear input, a residual), the transposed
    Program takes (non-linear inputs..., output cotangents...)."""
    mask = mask or [True] * len(prog.inputs)
    nonlin = [v for v, m in zip(prog.inputs, mask) if not m]
    labels = [(v.name, v.role) for v in nonlin] + [
        cotangent_label(v) for v in prog.outputs]
    k = len(nonlin)

    def run(*args):
        return backward_pass(prog, args[k:], mask, args[:k])

    return stage(run, [v.aval for v in nonlin] + [v.aval for v in prog.outputs],
                 name=f"{prog.name}_transpose", in_names=[n for n, _ in labels],
                 in_roles=[r for _, r in labels], role=Role.COTANGENT)
