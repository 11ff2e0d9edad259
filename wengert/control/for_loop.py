"""``for_loop``: a loop over ``range(n)`` as one equation.

    (*carry, *ys) = for_loop[body, num_consts, num_carry, reverse, length]
                            (n, *consts, *carry, *xs)
        body(i, *consts, *carry, *x_i) -> (*carry, *y_i) for i in range(n)
        (reversed if ``reverse``); ``x_i = x[i]``; ``ys[i] = y_i`` stacked on a
        new leading axis of length ``length`` (None: known at run time).

The layout is ``ForParams``'s (``params.py``). Forward mode runs one loop of
the jvp'd body, so memory stays that of the primal. Under linearize the body
is partially evaluated into a *known* body (primal work, emitting
per-iteration residuals as extra ``ys``) and a *linear* body reading them as
``xs``; the linear loop's transpose runs backwards over the stacked
residuals (cheap scalar ones are recomputed there from the stored carry
instead: ``recompute_residuals``). Code: a ``for`` over ``range``, the
``ys`` written row by row into arrays of ``n`` rows allocated once before it
(the impl does the same, ``YsBuffer``), so a store-all reverse sweep holds
its residuals once plus O(state).

The rules build sub-Programs with the transforms (``core.subprograms``).

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from ..core.dims import as_int
from ..core.errors import RAGGED_BATCH, UnsupportedSyntax
from ..core.atoms import cotangent_label
from ..core.ir import Aval, Eqn, Lit, Program, Role, Var, aval_of, reached_vars
from ..core.primitive import Linear, Primitive, Zero, instantiate, is_zero, register, zeros
from ..core.trace import bind, eval_program
from ..primitives.fanout import add_any
from ..primitives.shape import broadcast_to, moveaxis
from .loops import (
    LoopEmit, LoopLower, LoopTangents, carry_tangents, coherent_carries, jvp_body, loop_residuals,
    YsBuffer)
from .params import ForParams, split
from .passes import FOR_RULES
from .stage import stage_loop
from .cond import cond_p
from ..primitives.ordering import greater_p
from ..core.subprograms import batch_eval, linearize_program, transpose_program

__all__ = ["for_loop_p", "for_loop", "bind_for", "RAGGED_BATCH"]


def for_loop_impl(*args, **params):
    p = ForParams.of(params)
    n, consts, carry, xs = p.split_operands(args)
    body, n = p.body, max(int(n), 0)
    y_avals = p.body_output_groups(body.out_avals)[1]
    ys = [YsBuffer(a, n) for a in y_avals]
    # a Python scalar stored per iteration is read back as one (Aval.python_type)
    python = [v.aval.python_type for v in p.split_body_inputs(body.inputs)[3]]
    for i in (range(n - 1, -1, -1) if p.reverse else range(n)):
        x_i = [t(x[i]) if t else x[i] for x, t in zip(xs, python)]
        carry, y_i = p.body_output_groups(eval_program(body, p.join_operands(i, consts, carry,
                                                                             x_i)))
        for buf, y in zip(ys, y_i):
            buf.put(i, y)           # row i: a reverse loop fills its rows backwards
    return tuple(p.join_outputs(carry, [buf.result(n) for buf in ys]))


def for_loop_aval(*avals, **params):
    p = ForParams.of(params)
    carry, ys = p.body_output_groups(p.body.out_avals)
    return tuple(p.join_outputs(carry, [Aval((p.length,) + a.shape, a.dtype) for a in ys]))


def for_loop_jvp(primals, tangents, **params):
    p = ForParams.of(params)
    tans = LoopTangents(p, primals, tangents)
    jb = jvp_body(p, tans, f"{p.body.name}_jvp")
    res = bind_for(tans.lead[0], tans.consts + tans.nz_consts, tans.carry + tans.nz_carry,
                   tans.xs + tans.nz_xs, jb, p.reverse, p.length)
    carry_out, t_carry_out, rest = split(res, p.num_carry, len(tans.nz_carry))
    ys, t_ys = split(rest, p.num_ys)
    t_carry = carry_tangents(carry_out, t_carry_out, tans.m_carry)
    return tuple(p.join_outputs(carry_out, ys)), tuple(p.join_outputs(t_carry, t_ys))


def for_loop_linearize(primals, tangents, **params):
    p = ForParams.of(params)
    tans = LoopTangents(p, primals, tangents)
    known, lin, nres = linearize_program(p.body, tans.mask)
    known, lin_body, inv, held = loop_residuals(p, tans, known, lin, nres)
    n = tans.lead[0]
    carry_out, held_vals, ys, res = split(
        bind_for(n, tans.consts, tans.carry + [zeros(a) for a in held], tans.xs, known,
                 p.reverse, p.length), p.num_carry, len(held), p.num_ys)
    inv_vals = [tans.consts[j] for j in inv]
    t_out = bind_for(n, tans.nz_consts + inv_vals + held_vals, tans.nz_carry, res + tans.nz_xs,
                     lin_body, p.reverse, p.length)
    t_carry, t_ys = split(t_out, len(tans.nz_carry))
    t_carry = carry_tangents(carry_out, t_carry, tans.m_carry)
    return tuple(p.join_outputs(carry_out, ys)), tuple(p.join_outputs(t_carry, t_ys))


def live_cotangents(p, ct_carry, ct_ys):
    """Which carries' cotangents the transposed loop must carry: those not
    zero where it starts (the loop's end) and, to a fixed point, those whose
    carry reaches (a data path through the body) a live carry's new value or
    a per-iteration output with a cotangent. Every other one is zero at every
    step, exactly, and is neither carried nor computed: a carry that only the
    condition reads (``step`` in ``while step > tol``) would carry 0.0, and
    its transposed body's ``0.0 / step`` is NaN where the step is 0."""
    live = [not is_zero(c) for c in ct_carry]
    if all(live):
        return live
    carry_in = p.split_body_inputs(p.body.inputs)[2]
    carry_out, ys_out = p.body_output_groups(p.body.outputs)
    wanted = {v for v, c in zip(ys_out, ct_ys) if isinstance(v, Var) and not is_zero(c)}
    reach = [reached_vars(p.body, v) for v in carry_in]
    changed = True
    while changed:
        changed = False
        targets = wanted | {v for v, m in zip(carry_out, live) if m and isinstance(v, Var)}
        for j, r in enumerate(reach):
            if not live[j] and not r.isdisjoint(targets):
                live[j] = changed = True
    return live


def _transposed_input_labels(p, m_consts, m_xs, live):
    """The names and roles of the transposed loop's inputs, from the body's
    (``in_names``, ``in_roles`` of ``stage_loop``): its counter, the
    nonlinear consts and per-iteration values as they are, the carries'
    and the linear consts' cotangents (``ct_s``, ``ct_x``), the cotangents
    of the per-iteration outputs."""
    i, consts, carry, xs = p.split_body_inputs(p.body.inputs)
    ys = p.body_output_groups(p.body.outputs)[1]
    labels = ([(i.name, i.role)] + [(c.name, c.role) for c, m in zip(consts, m_consts) if not m]
              + [cotangent_label(c) for c, m in zip(carry, live) if m]
              + [cotangent_label(c) for c, m in zip(consts, m_consts) if m]
              + [(x.name, x.role) for x, m in zip(xs, m_xs) if not m]
              + [cotangent_label(y) for y in ys])
    return dict(in_names=[n for n, _ in labels], in_roles=[r for _, r in labels])


def for_loop_transpose(cts, *args, **params):
    """A loop backwards over the transposed body, carrying the carries'
    cotangents and the sums of the linear consts' ones."""
    p = ForParams.of(params)
    n, consts, carry, xs = p.split_operands(args)
    nk = p.num_carry
    # a linear loop carries tangents only; an initial carry that is a constant
    # is a zero tangent (an instantiated Zero), whose cotangent is dropped
    carry_is_linear = [isinstance(c, Linear) for c in carry]
    carry = [c if isinstance(c, Linear) else Linear(aval_of(c)) for c in carry]
    m_consts = [isinstance(c, Linear) for c in consts]
    m_xs = [isinstance(x, Linear) for x in xs]
    nl_consts = [c for c, m in zip(consts, m_consts) if not m]
    nl_xs = [x for x, m in zip(xs, m_xs) if not m]
    live = live_cotangents(p, *p.split_outputs(list(cts)))
    ct_carry, ct_ys = p.split_outputs([instantiate(c) for c in cts])
    ct_carry = [c for c, m in zip(ct_carry, live) if m]
    nl = sum(live)
    # the transposed body: (nonlinear inputs, cts of the live carries' new
    # values and of the per-iteration outputs) -> cts of the linear inputs
    body = p.body
    if nl < nk:
        carry_out, ys_out = p.body_output_groups(body.outputs)
        body = Program(body.inputs, body.eqns,
                       [v for v, m in zip(carry_out, live) if m] + list(ys_out), body.name)
    tb = transpose_program(body, p.join_operands(False, m_consts, [True] * nk, m_xs))
    lin_consts = [c.aval for c, m in zip(consts, m_consts) if m]
    n_lc = len(lin_consts)
    step_layout = ForParams(None, len(nl_consts), nl + n_lc)

    def step(*ins):
        # the loop: (i, nl_consts, ct_carry + sums, nl_xs + ct_ys) -> (ct_carry + sums, ct_xs)
        i, nl_c, carry_in, xs_in = step_layout.split_operands(ins)
        ct_k, acc = split(carry_in, nl)
        nl_x, ct_y = split(xs_in, len(nl_xs))
        out = eval_program(tb, p.join_operands(i, nl_c, [], nl_x) + ct_k + ct_y)
        ct_c, ct_prev, ct_x = split(out, n_lc, nk)
        ct_prev = [c for c, m in zip(ct_prev, live) if m]
        return step_layout.join_outputs(ct_prev + [add_any(s, c) for s, c in zip(acc, ct_c)],
                                        ct_x)

    # a per-iteration value keeps the body's typing: a Python scalar (weak)
    # is read back as one (``Aval.python_type``)
    x_vars = p.split_body_inputs(p.body.inputs)[3]
    x_weak = [v.aval.weak for v, m in zip(x_vars, m_xs) if not m]
    body_t, _ = stage_loop(
        step, ForParams, lead=[p.body.inputs[0].aval],    # the index, typed as the forward's
        consts=[aval_of(c) for c in nl_consts],
        carry=[c.aval for c, m in zip(carry, live) if m] + lin_consts,
        xs=([Aval(aval_of(x).shape[1:], aval_of(x).dtype, w) for x, w in zip(nl_xs, x_weak)]
            + [Aval(aval_of(c).shape[1:], aval_of(c).dtype) for c in ct_ys]),
        name=f"{p.body.name}_transpose", role=Role.COTANGENT,
        **_transposed_input_labels(p, m_consts, m_xs, live))
    zeros0 = [zeros(a) for a in lin_consts]
    out = bind_for(n, nl_consts, ct_carry + zeros0, nl_xs + ct_ys, body_t, not p.reverse,
                   p.length)
    ct_live, ct_consts, ct_xs = split(out, nl, n_lc)
    it_live = iter(ct_live)
    ct_carry0 = [next(it_live) if m else Zero(c.aval) for c, m in zip(carry, live)]
    it_c, it_x = iter(ct_consts), iter(ct_xs)
    return tuple(p.join_operands(None, [next(it_c) if m else None for m in m_consts],
                                 [c if m else None for c, m in zip(ct_carry0, carry_is_linear)],
                                 [next(it_x) if m else None for m in m_xs]))


def for_loop_batch(args, batched, **params):
    """A batch of loops as one loop over batched values: the body is batched
    (carries always, consts and xs as given); xs and ys keep the loop axis
    first inside the loop."""
    p = ForParams.of(params)
    b_n, b_consts, _, b_xs = p.split_operands(batched)
    if b_n:
        return NotImplemented                    # a batch of trip counts
    body = p.body
    dynamic = any(d is None for a in body.in_avals + body.out_avals for d in a.shape)
    # stacked values of varying length are lists: they cannot take a batch axis
    # (a batched xs is (batch, loop, ...): varying lengths show after the loop axis)
    xs_avals = [aval_of(x) for x in p.split_operands(args)[3]]
    ragged = any(b and None in a.shape[2:] for b, a in zip(b_xs, xs_avals))
    try:
        if ragged:
            raise ValueError("ragged")
        return _for_loop_batch(p, args, batched)
    except (TypeError, ValueError) as err:
        if not (dynamic or ragged):
            raise
        raise UnsupportedSyntax(
            "a Jacobian of this order through a loop that stores values whose length changes "
            "between iterations (a while loop, break or return inside another loop) is not "
            "supported by the source engine; use engine='trace' (engine='auto' does so by "
            "itself)", construct=RAGGED_BATCH) from err


def _for_loop_batch(p, args, batched):
    n, consts, carry, xs = p.split_operands(args)
    _, b_consts, b_carry, b_xs = p.split_operands(batched)
    size = next(_dims.shape(a)[0] for a, b in zip(args, batched) if b)
    carry = [c if b else broadcast_to(c, (size,) + tuple(_dims.shape(c)))
             for c, b in zip(carry, b_carry)]
    xs = [moveaxis(x, 0, 1) if b else x for x, b in zip(xs, b_xs)]
    flags = p.join_operands(False, b_consts, [True] * p.num_carry, b_xs)

    def run(*ins):
        return batch_eval(p.body, list(ins), size, flags)

    avals = [Aval((size,) + a.shape, a.dtype) if f else a for a, f in zip(p.body.in_avals, flags)]
    lead, c_av, k_av, x_av = p.operand_groups(avals)
    body_b, _ = stage_loop(run, ForParams, lead=lead, consts=c_av, carry=k_av, xs=x_av,
                           name=f"{p.body.name}_batched")
    carry_out, ys = p.split_outputs(bind_for(n, consts, carry, xs, body_b, p.reverse, p.length))
    return tuple(carry_out) + tuple(moveaxis(y, 1, 0) for y in ys)


class ForEmit(LoopEmit):
    PARAMS = ForParams

    def operand_uses(self, eqn):
        p = ForParams.of(eqn.params)
        _, consts, carry, xs = p.split_operands(eqn.inputs)
        return p.join_operands("trip", ["other"] * len(consts), ["other"] * len(carry),
                               ["xs"] * len(xs))

    def statements(self, code, eqn, ins, py, outs, subs):
        """``for i in range(n)`` (or backwards); the carry lives in the body's
        carry inputs, assigned once before the loop and after each step; the
        per-iteration values go to buffers of ``n`` rows allocated before
        the loop, row ``i`` written in step ``i`` (``CodeWriter.buffers``)."""
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
            # range(n) runs no step for n < 0: a length of an input is never
            # negative, a computed one may be (not compared here: that would be a guard)
            if type(n_static) is _dims.Dim:
                rows = code.dim(n_static)
                rows = rows if n_static.expr[0] == "in" else f"max({rows}, 0)"
            else:
                rows = repr(max(n_static, 0))
        else:
            count = n if n_lit.aval.dtype.kind in "iu" else f"int({n})"    # the impl's int(n)
            bounds = f"{count} - 1, -1, -1" if p.reverse else count
            rows = f"max({count}, 0)"
        y_avals = p.body_output_groups(p.body.out_avals)[1]
        before, store, _ = code.buffers(accs, ys, y_avals, p.split_outputs(eqn.outputs)[1],
                                        index, rows)
        lines = [code.comment(body.prog)]
        lines += [f"{i} = {o}" for i, o in zip(consts_in + carry_in, consts + carry) if i != o]
        lines += before
        lines.append(f"for {index} in range({bounds}):")
        # a Python scalar stored per iteration reads back as a Python number
        # (an array of them, stacked, gives NumPy scalars), as the impl does
        x_vars = p.split_body_inputs(p.body.inputs)[3]
        step = [f"{x_in} = {x}[{index}]" if v.aval.python_type is None
                else f"{x_in} = {v.aval.python_type.__name__}({x}[{index}])"
                for x_in, x, v in zip(xs_in, xs, x_vars)] + body.lines
        step += store + code.assign(carry_in, carry_new)
        lines += code.suite(step)
        return lines + code.assign(carry_out, carry_in)


def bind_for(n, consts, carry, xs, body, reverse, length):
    """Apply a ``for_loop`` whose carries keep one type (``coherent_carries``)."""
    p, carry = coherent_carries(ForParams(body, len(consts), len(carry), reverse=reverse,
                                          length=length), carry)
    return bind(for_loop_p, *p.join_operands(n, consts, carry, xs), **p.as_params())


def for_loop(n, body, consts, carry, xs=(), reverse=False):
    """Run ``body`` (a Program in loop form) ``n`` times."""
    length = as_int(n) if isinstance(n, (int, np.integer)) else None
    return bind_for(n, consts, carry, xs, body, reverse, length)


class ForLower(LoopLower):
    """A loop that only adds to a carry starting at zero (the cotangent of a
    value read in every iteration: ``ct_x[i] += ...``) adds to an
    accumulator as well: ``acc + loop(0)`` is ``loop(acc)`` -- no dense
    zeros and no dense sum per run of an inner loop."""

    PARAMS = ForParams

    def absorb(self, eqn, k, acc, out, sink):
        p = ForParams.of(eqn.params)
        _, _, carry, _ = p.operand_groups(list(range(len(eqn.inputs))))
        y = eqn.outputs[k]
        if k >= p.num_carry or not sink.zero(eqn.inputs[carry[k]]) \
                or any(acc is o for o in eqn.outputs) \
                or not sink.fits(y, out):
            return None
        _, _, c_in, _ = p.operand_groups(p.body.inputs)
        if not sink.additive(p.body, c_in[k], p.body.outputs[k]):
            return None
        if acc is None:
            return []
        inputs = list(eqn.inputs)
        inputs[carry[k]] = acc
        outputs = list(eqn.outputs)
        outputs[k] = out
        return [Eqn(eqn.prim, inputs, outputs, eqn.params)]

    def promote(self, eqn, carried):
        return for_loop_promote(eqn, carried)


def for_loop_sparsity(an, ops, outs, **params):
    """The body run on the analysis' values, an iteration at a time while the trip count is
    known, then to a fixed point (``Analysis.iterate``); ``ys`` stack the iterations."""
    p = ForParams.of(params)
    n, consts, carry, xs = p.split_operands(ops)
    counter = p.body.inputs[0]
    steady = not xs and not any(counter in e.inputs for e in p.body.eqns)

    def step(i, carry):
        x_i = [an.row(x, i) for x in xs]
        return p.body_output_groups(an.run(p.body, p.join_operands(i, consts, carry, x_i)))
    carry, count, rows, tail = an.iterate(step, carry, trips=n, reverse=p.reverse,
                                          steady=steady)
    ys = an.stacked(count, rows, tail, p.body_output_groups(p.body.out_avals)[1])
    return tuple(p.join_outputs(carry, ys))


for_loop_p = register(Primitive("for_loop", nargs=None, impl=for_loop_impl, jvp=for_loop_jvp,
                                linearize=for_loop_linearize, transpose=for_loop_transpose,
                                abstract_eval=for_loop_aval, multiple_results=True,
                                batch=for_loop_batch, dce=FOR_RULES[0], simplify=FOR_RULES[1],
                                print=FOR_RULES[2], emit=ForEmit(), lower=ForLower(),
                                complex_ok=True,
                                sparsity=for_loop_sparsity))


def for_loop_promote(eqn, carried):
    """The loop with the elements a step reads after the step before added to
    them held in scalar carries (``backends/lower_carry.py``: ``Carried``
    says which, and proves it), the additions written back after it, when a
    step ran; None where no carry qualifies. A loop going up needs a trip
    count known when the code is made (the write-back's position is ``n - 1
    + b``)."""
    p = ForParams.of(eqn.params)
    n = eqn.inputs[0]
    known = isinstance(n, Lit) and isinstance(n.val, int) and not isinstance(n.val, bool)
    if n.aval.dtype.kind not in "iu" or (not p.reverse and not known) \
            or (known and type(n.val) is int and n.val <= 0):
        return None
    index, consts_in, carry_in, xs_in = p.split_body_inputs(p.body.inputs)
    carry_new, ys = p.body_output_groups(p.body.outputs)
    _, consts, carry, xs = p.split_operands(eqn.inputs)
    carry_out, ys_out = p.split_outputs(eqn.outputs)
    plans = carried.plans(p.body, index, -1 if p.reverse else 1, carry_in, carry_new)
    drops = carried.dead_stores(p.body, index, carry_in, carry_new, carry_out)
    if not plans and not drops:
        return None
    for plan in plans:
        plan.dead = carried.dead(plan, carry_out[plan.k])
    body = p.body
    if drops:       # stores nothing reads again: the carry is the same array throughout
        body = Program(body.inputs, [e for e in body.eqns if e not in drops.values()],
                       body.outputs, body.name)
        carry_new = [carry_in[k] if k in drops else v for k, v in enumerate(carry_new)]
    eqns, c_in, c_new, carry_new = carried.body(body, plans, carry_new)
    body = Program(p.join_operands(index, consts_in, carry_in + c_in, xs_in), eqns,
                   carry_new + c_new + ys, p.body.name)
    c_init = [Lit(np.zeros((), c.aval.dtype) * -1.0) for c in c_in]       # -0.0
    c_out = [Var(c.aval, c.name, c.role) for c in c_in]
    ends = [Var(v.aval, v.name, v.role) for v in carry_out]
    promoted = {plan.k for plan in plans}
    loop_out = [ends[k] if k in promoted else v for k, v in enumerate(carry_out)]
    params = p.replace(body=body, num_carry=len(carry) + len(c_in)).as_params()
    loop = Eqn(eqn.prim, p.join_operands(n, consts, carry + c_init, xs),
               loop_out + c_out + list(ys_out), params)
    # the write-back: ``A[k_n + a] += c``, the last step's ``k + b``
    ins = [Var(ends[plan.k].aval, ends[plan.k].name, ends[plan.k].role) for plan in plans] \
        + [Var(c.aval, c.name, c.role) for c in c_in]
    backs = []
    for plan, a_var, c_var in zip(plans, ins, ins[len(plans):]):
        at = Lit(plan.b if p.reverse else n.val - 1 + plan.b)
        res = Var(a_var.aval, a_var.name, a_var.role)
        backs.append(Eqn(plan.add.prim, (a_var, c_var, at), (res,), plan.add.params))
    results = [carry_out[plan.k] for plan in plans]
    if not plans:
        return [loop]
    if known and type(n.val) is int:           # a step runs
        return [loop] + [Eqn(e.prim, (ends[plan.k], c, e.inputs[2]), (out,), e.params)
                         for e, plan, c, out in zip(backs, plans, c_out, results)]
    ran = Var(Aval((), np.bool_))
    wrote = Program(ins, backs, [e.outputs[0] for e in backs], "write_back")
    same = [Var(v.aval, v.name, v.role) for v in ins]
    kept = Program(same, [], same[:len(plans)], "write_back_none")
    return [loop, Eqn(greater_p, (n, Lit(0)), (ran,), {}),
            Eqn(cond_p, [ran] + [ends[plan.k] for plan in plans] + c_out, results,
                {"branches": (kept, wrote)})]
