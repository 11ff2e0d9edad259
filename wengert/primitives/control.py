"""Structured control flow: equations that hold sub-Programs.

    (outs...)             = cond[branches=(b0, b1, ...)] (index, *ops)
        branch ``int(index)`` maps ops to outs; every branch has the same
        input and output avals.
    (carry..., ys...)     = for_loop[body, num_consts, num_carry, reverse, length]
                                    (n, *consts, *carry, *xs)
        body(i, *consts, *carry, *x_i) -> (*carry, *y_i) for i in range(n)
        (reversed if ``reverse``); ``x_i = x[i]``; ``ys[i] = y_i`` stacked on a
        new leading axis of length ``length`` (None: known at run time).
    (carry..., count, ys...) = while_loop[cond, body, num_consts, num_carry]
                                    (*consts, *carry)
        while cond(*consts, *carry): (*carry, *y) = body(*consts, *carry);
        ``count`` iterations ran; ``ys`` stacks the per-iteration y.

Derivatives (rules below). Forward mode runs one loop (or branch) of the
jvp'd body, so memory stays that of the primal. Under linearize the body is
partially evaluated into a *known* body (primal work, emitting per-iteration
residuals as extra ``ys``) and a *linear* body reading them as ``xs``; the
linear loop's transpose runs backwards over the stacked residuals (cheap
scalar ones are recomputed there from the stored carry instead:
``recompute_residuals``). A while loop's linear part is a ``for_loop`` over
the recorded trip count.

The rules build sub-Programs with the transforms (``jvp_program``,
``linearize_program``, ``transpose_program``), hence the imports inside them.
"""
from __future__ import annotations

import numpy as np

from .. import dims as _dims
from .core import (NOT_LINEAR, Linear, Primitive, Zero, bind, eval_program, instantiate,
                   register, zeros)
from ..dims import as_int
from ..ir import Aval, Eqn, Lit, Program, Role, Var, aval_of


def _is_float_aval(a):
    return a.dtype.kind in "fc"


def _reorder(prog, in_order, out_order, name=None):
    """The same equations with inputs and outputs listed in another order."""
    return Program([prog.inputs[k] for k in in_order], prog.eqns,
                   [prog.outputs[k] for k in out_order], name or prog.name)


def _with_extra_inputs(prog, avals, at, name=None):
    """``prog`` taking extra (unused) inputs of ``avals`` inserted at ``at``."""
    extra = [Var(a) for a in avals]
    ins = prog.inputs[:at] + extra + prog.inputs[at:]
    return Program(ins, prog.eqns, prog.outputs, name or prog.name)


def _tangent_mask(tangents, avals):
    return [not isinstance(t, Zero) and _is_float_aval(a) for t, a in zip(tangents, avals)]


# --- cond --------------------------------------------------------------
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


def cond_jvp(primals, tangents, branches):
    from ..transforms.jvp import jvp_program
    index, ops = primals[0], primals[1:]
    avals = [aval_of(o) for o in ops]
    mask = _tangent_mask(tangents[1:], avals)
    nz = [t for t, m in zip(tangents[1:], mask) if m]
    n_out = len(branches[0].outputs)
    jvps = tuple(jvp_program(b, mask) for b in branches)
    res = bind(cond_p, index, *ops, *nz, branches=_agreeing(jvps))
    return tuple(res[:n_out]), tuple(res[n_out:])


def cond_linearize(primals, tangents, branches):
    from ..transforms.partial_eval import linearize_program
    index, ops = primals[0], primals[1:]
    avals = [aval_of(o) for o in ops]
    mask = _tangent_mask(tangents[1:], avals)
    nz = [t for t, m in zip(tangents[1:], mask) if m]
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
    out = bind(cond_p, index, *ops, branches=_agreeing(knowns))
    res = out[n_out:]
    t_out = bind(cond_p, index, *res, *[ops[m] for m in needed], *nz, branches=_agreeing(lins))
    return tuple(out[:n_out]), tuple(t_out)


def _agreeing(branches):
    """``branches`` with outputs of one type: where one branch gives a Python
    scalar (weakly typed, a transposed branch's ``0.0``) and another a NumPy
    one, the Python one is made a NumPy scalar too (``convert``), so the
    cond's result promotes the same way on either path."""
    branches = tuple(branches)
    fixes = {}
    for k, avals in enumerate(zip(*[b.out_avals for b in branches])):
        if len({a.weak for a in avals}) > 1:
            fixes[k] = next(a for a in avals if not a.weak).dtype
    if not fixes:
        return branches
    return tuple(_numpy_outputs(b, {k: d for k, d in fixes.items() if b.outputs[k].aval.weak})
                 for b in branches)


def _numpy_outputs(prog, fixes):
    """``prog`` with output ``k`` converted to a NumPy value of dtype
    ``fixes[k]`` (a literal in place, a variable by a ``convert`` equation)."""
    if not fixes:
        return prog
    from .arith import convert_p
    eqns, outs = list(prog.eqns), list(prog.outputs)
    for k, dtype in fixes.items():
        x = outs[k]
        if isinstance(x, Lit):
            outs[k] = Lit(np.asarray(x.val, dtype)[()])
        else:
            v = Var(Aval(x.aval.shape, dtype), x.name, x.role)
            eqns.append(Eqn(convert_p, (x,), (v,), {"dtype": np.dtype(dtype)}))
            outs[k] = v
    return Program(prog.inputs, eqns, outs, prog.name)


def _coherent_carries(body, first, num_carry, carry, cond=None):
    """A loop whose carries keep one type. A transform may give a carry an
    initial value of another type than its body takes (a ``0.0`` zero for a
    float32 cotangent), or a body that returns a NumPy scalar for a carry
    that enters as a Python scalar (a tangent that ``cos`` makes an
    ``np.float64``), which promotes float32 values differently from the
    second step on. Such a carry is a NumPy scalar of the body's dtype from
    the start: the initial value converted, the body (and the condition)
    staged again; one that leaves the body as a Python scalar is converted on
    the way out. Returns (body, carry, cond)."""
    from ..staging import stage
    from .arith import convert
    carry = list(carry)
    for k in range(num_carry):       # the initial values take the body's dtypes
        a, want = aval_of(carry[k]), body.inputs[first + k].aval
        if a.dtype != want.dtype or (a.weak and not want.weak):
            carry[k] = convert(carry[k], dtype=want.dtype)
    while True:     # each round makes a weak carry strong: at most num_carry rounds
        ins, outs = body.inputs[first:first + num_carry], body.outputs[:num_carry]
        strong = [v.aval.weak and (not o.aval.weak or not aval_of(c).weak)
                  for v, o, c in zip(ins, outs, carry)]
        if not any(strong):
            break
        new = list(body.in_avals)
        for k, st in enumerate(strong):
            if st:
                a = new[first + k]
                new[first + k] = Aval(a.shape, a.dtype)

        def again(prog):
            return stage(lambda *xs: eval_program(prog, xs), new[:len(prog.inputs)],
                         name=prog.name, in_names=[v.name for v in prog.inputs],
                         in_roles=[v.role for v in prog.inputs])
        body = again(body)
        cond = None if cond is None else again(cond)
        carry = [convert(c, dtype=aval_of(c).dtype) if st and aval_of(c).weak else c
                 for c, st in zip(carry, strong)]
    ins, outs = body.inputs[first:first + num_carry], body.outputs[:num_carry]
    body = _numpy_outputs(body, {k: v.aval.dtype for k, (v, o) in enumerate(zip(ins, outs))
                                 if (o.aval.weak and not v.aval.weak)
                                 or o.aval.dtype != v.aval.dtype})
    return body, carry, cond


def _bind_for(n, consts, carry, xs, body, reverse, length):
    body, carry, _ = _coherent_carries(body, 1 + len(consts), len(carry), carry)
    return bind(for_loop_p, n, *consts, *carry, *xs, body=body, num_consts=len(consts),
                num_carry=len(carry), reverse=reverse, length=length)


def _bind_while(consts, carry, cond, body):
    body, carry, cond = _coherent_carries(body, len(consts), len(carry), carry, cond)
    return bind(while_loop_p, *consts, *carry, cond=cond, body=body, num_consts=len(consts),
                num_carry=len(carry))


def _filler(aval):
    """What a branch puts in a residual slot it does not fill (the other
    branch's; never read on this path): zeros, of length 0 along a length
    known only at run time (a while loop's stacked values)."""
    return zeros(Aval(tuple(0 if d is None else d for d in aval.shape), aval.dtype, aval.weak))


def cond_transpose(cts, index, *ops, branches):
    from ..transforms.transpose import transpose_program
    mask = [isinstance(o, Linear) for o in ops]
    nonlin = [o for o in ops if not isinstance(o, Linear)]
    cts = [instantiate(c) for c in cts]
    t_branches = tuple(transpose_program(b, mask) for b in branches)
    in_cts = iter(bind(cond_p, index, *nonlin, *cts, branches=_agreeing(t_branches)))
    return (None,) + tuple(next(in_cts) if m else None for m in mask)


cond_p = register(Primitive("cond", nargs=None, impl=cond_impl, jvp=cond_jvp,
                            linearize=cond_linearize, transpose=cond_transpose,
                            abstract_eval=cond_aval, multiple_results=True))


def cond(index, branches, *ops):
    """Apply ``branches[index]`` (Programs) to ``ops``."""
    return bind(cond_p, index, *ops, branches=tuple(branches))


# --- for_loop ----------------------------------------------------------
class RaggedStack(list):
    """Per-iteration values whose lengths differ between iterations (an inner
    while loop's residuals, stored by an outer loop): kept as a list, indexed
    like the stacked array it stands for."""

    def __init__(self, items, aval):
        super().__init__(items)
        self.aval = aval


def _stack(acc, aval, length):
    """Stack one ``ys`` output: an array, or a RaggedStack when the
    per-iteration value has a length known only at run time."""
    if any(d is None for d in aval.shape):
        return RaggedStack(acc, Aval((length,) + aval.shape, aval.dtype))
    return np.stack(acc) if acc else np.zeros((0,) + aval.shape, aval.dtype)


def _split(args, num_consts, num_carry):
    return (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
            list(args[num_consts + num_carry:]))


def for_loop_impl(n, *args, body, num_consts, num_carry, reverse, length):
    consts, carry, xs = _split(args, num_consts, num_carry)
    n = int(n)
    ys = [[] for _ in body.outputs[num_carry:]]
    order = range(n - 1, -1, -1) if reverse else range(n)
    # a Python scalar stored per iteration is read back as one (Aval.python_type)
    python = [v.aval.python_type for v in body.inputs[1 + num_consts + num_carry:]]
    for i in order:
        outs = eval_program(body, [i, *consts, *carry,
                                   *[p(x[i]) if p else x[i] for x, p in zip(xs, python)]])
        carry = outs[:num_carry]
        for acc, y in zip(ys, outs[num_carry:]):
            acc.append(y)
    if reverse:
        for acc in ys:
            acc.reverse()
    stacked = [_stack(acc, a, n) for acc, a in zip(ys, body.out_avals[num_carry:])]
    return tuple(carry) + tuple(stacked)


def for_loop_aval(n, *avals, body, num_consts, num_carry, reverse, length):
    outs = body.out_avals
    return tuple(outs[:num_carry]) + tuple(Aval((length,) + a.shape, a.dtype)
                                           for a in outs[num_carry:])


def _for_loop_masks(primals, tangents, num_consts, num_carry):
    """Which consts, carries and xs of a loop get a tangent, and those tangents."""
    n = primals[0]
    consts, carry, xs = _split(primals[1:], num_consts, num_carry)
    t_consts, t_carry, t_xs = _split(tangents[1:], num_consts, num_carry)
    m_consts = _tangent_mask(t_consts, [aval_of(c) for c in consts])
    # every float carry gets a tangent: the body may make a constant carry vary
    m_carry = [_is_float_aval(aval_of(c)) for c in carry]
    m_xs = _tangent_mask(t_xs, [aval_of(x) for x in xs])
    mask = [False] + m_consts + m_carry + m_xs
    nz_consts = [t for t, m in zip(t_consts, m_consts) if m]
    nz_carry = [instantiate(t) for t, m in zip(t_carry, m_carry) if m]
    nz_xs = [t for t, m in zip(t_xs, m_xs) if m]
    return (n, consts, carry, xs, m_consts, m_carry, m_xs, mask, nz_consts, nz_carry, nz_xs)


def for_loop_jvp(primals, tangents, body, num_consts, num_carry, reverse, length):
    from ..transforms.jvp import jvp_program
    (n, consts, carry, xs, m_consts, m_carry, m_xs, mask, nz_consts, nz_carry,
     nz_xs) = _for_loop_masks(primals, tangents, num_consts, num_carry)
    nc, nk, nx = len(consts), len(carry), len(xs)
    n_ys = len(body.outputs) - nk
    a, b, c = len(nz_consts), len(nz_carry), len(nz_xs)
    jb = jvp_program(body, mask)
    # jvp_program lists (i, consts, carry, xs, t_consts, t_carry, t_xs);
    # the loop wants (i, consts + t_consts, carry + t_carry, xs + t_xs)
    base = 1 + nc + nk + nx
    ins = ([0] + list(range(1, 1 + nc)) + list(range(base, base + a))
           + list(range(1 + nc, 1 + nc + nk)) + list(range(base + a, base + a + b))
           + list(range(1 + nc + nk, base)) + list(range(base + a + b, base + a + b + c)))
    jb = _reorder(jb, ins, _jvp_out_order(nk, n_ys, m_carry), f"{body.name}_jvp")
    res = _bind_for(n, [*consts, *nz_consts], [*carry, *nz_carry], [*xs, *nz_xs], jb,
                    reverse, length)
    carry_out, t_carry_out = res[:nk], res[nk:nk + b]
    ys, t_ys = res[nk + b:nk + b + n_ys], res[nk + b + n_ys:]
    return _merge_tangents(carry_out, ys, t_carry_out, t_ys, m_carry)


def for_loop_linearize(primals, tangents, body, num_consts, num_carry, reverse, length):
    from ..transforms.partial_eval import linearize_program
    (n, consts, carry, xs, m_consts, m_carry, m_xs, mask, nz_consts, nz_carry,
     nz_xs) = _for_loop_masks(primals, tangents, num_consts, num_carry)
    nc, nk = len(consts), len(carry)
    n_ys = len(body.outputs) - nk
    a, b = len(nz_consts), len(nz_carry)
    known, lin, nres = linearize_program(body, mask)
    known, lin_body, inv, n_stacked = _loop_residuals(known, lin, nres, nk + n_ys, 1, nc, a, b,
                                                      m_carry)
    out = _bind_for(n, consts, carry, xs, known, reverse, length)
    carry_out, ys, res = out[:nk], out[nk:nk + n_ys], out[nk + n_ys:]
    inv_vals = [consts[j] for j in inv]
    t_out = _bind_for(n, [*nz_consts, *inv_vals], nz_carry, [*res, *nz_xs], lin_body,
                      reverse, length)
    return _merge_tangents(carry_out, ys, t_out[:b], t_out[b:], m_carry)


def _loop_residuals(known, lin, nres, n_out, first, nc, a, b, m_carry):
    """Sort a body's residuals: the loop index and the loop's constants are
    not stored per iteration (the linear loop has them already); the rest are
    stacked. Returns (known body without those outputs, linear body in loop
    order (i, t_consts, invariant residuals, t_carry, stacked residuals, t_x),
    positions of the invariant residuals among the consts, number stacked).
    Cheap scalar residuals are recomputed from the body's inputs instead of
    stored (``recompute_residuals``)."""
    from ..transforms.partial_eval import recompute_residuals
    known, lin, nres = recompute_residuals(known, lin, nres, n_out, known.inputs[:first + nc])
    res_out = known.outputs[n_out:]
    index = known.inputs[0] if first else None
    const_ins = {v: j for j, v in enumerate(known.inputs[first:first + nc])}
    res_in = lin.inputs[:nres]
    idx_var, inv, inv_vars, stacked, stacked_vars = None, [], [], [], []
    for out_v, in_v in zip(res_out, res_in):
        if index is not None and out_v is index and idx_var is None:
            idx_var = in_v
        elif isinstance(out_v, Var) and out_v in const_ins:
            inv.append(const_ins[out_v])
            inv_vars.append(in_v)
        else:
            stacked.append(out_v)
            stacked_vars.append(in_v)
    known = Program(known.inputs, known.eqns, known.outputs[:n_out] + stacked, known.name)
    nk = len(m_carry)
    rest = lin.inputs[nres:]
    t_consts, t_carry, t_xs = rest[:a], rest[a:a + b], rest[a + b:]
    outs = [lin.outputs[j] for j in range(nk) if m_carry[j]] + lin.outputs[nk:]
    idx_var = idx_var or Var(Aval((), np.int64))
    body = Program([idx_var] + t_consts + inv_vars + t_carry + stacked_vars + t_xs, lin.eqns,
                   outs, lin.name)
    return known, body, inv, len(stacked)


def _jvp_out_order(nk, n_ys, m_carry):
    """A jvp'd body lists (carry, ys, t_carry, t_ys); a loop wants
    (carry, t_carry of the float carries, ys, t_ys)."""
    n_out = nk + n_ys
    return (list(range(nk)) + [n_out + k for k in range(nk) if m_carry[k]]
            + list(range(nk, n_out)) + list(range(n_out + nk, 2 * n_out)))


def _merge_tangents(carry_out, ys, t_carry_nz, t_ys, m_carry):
    t_iter = iter(t_carry_nz)
    t_carry = [next(t_iter) if m else Zero(aval_of(c)) for c, m in zip(carry_out, m_carry)]
    return tuple(carry_out) + tuple(ys), tuple(t_carry) + tuple(t_ys)


def for_loop_transpose(cts, n, *args, body, num_consts, num_carry, reverse, length):
    from ..transforms.transpose import transpose_program
    from ..staging import stage
    from .shape import add_any
    consts, carry, xs = _split(args, num_consts, num_carry)
    # a linear loop carries tangents only; an initial carry that is a constant
    # is a zero tangent (an instantiated Zero), whose cotangent is dropped
    carry_is_linear = [isinstance(c, Linear) for c in carry]
    carry = [c if isinstance(c, Linear) else Linear(aval_of(c)) for c in carry]
    m_consts = [isinstance(c, Linear) for c in consts]
    m_xs = [isinstance(x, Linear) for x in xs]
    nl_consts = [c for c, m in zip(consts, m_consts) if not m]
    nl_xs = [x for x, m in zip(xs, m_xs) if not m]
    ct_carry = [instantiate(c) for c in cts[:num_carry]]
    ct_ys = [instantiate(c) for c in cts[num_carry:]]
    # transposed body: (i, nl_consts, nl_x, ct_carry', ct_y) -> (ct_consts, ct_carry, ct_x)
    mask = [False] + m_consts + [True] * num_carry + m_xs
    tb = transpose_program(body, mask)
    lin_consts = [c.aval for c, m in zip(consts, m_consts) if m]
    nlc, nlx = len(nl_consts), len(nl_xs)
    n_lc = len(lin_consts)

    def step(i, *args):
        nl_c = args[:nlc]
        ct_k = args[nlc:nlc + num_carry]
        acc = args[nlc + num_carry:nlc + num_carry + n_lc]
        nl_x = args[nlc + num_carry + n_lc:nlc + num_carry + n_lc + nlx]
        ct_y = args[nlc + num_carry + n_lc + nlx:]
        out = eval_program(tb, [i, *nl_c, *nl_x, *ct_k, *ct_y])
        ct_c, ct_prev, ct_x = out[:n_lc], out[n_lc:n_lc + num_carry], out[n_lc + num_carry:]
        return list(ct_prev) + [add_any(s, c) for s, c in zip(acc, ct_c)] + list(ct_x)

    # a per-iteration value keeps the body's typing: a Python scalar (weak)
    # is read back as one (``Aval.python_type``)
    x_weak = [v.aval.weak for v, m in zip(body.inputs[1 + num_consts + num_carry:], m_xs)
              if not m]
    avals = ([Aval((), np.int64)] + [aval_of(c) for c in nl_consts]
             + [c.aval for c in carry] + lin_consts
             + [Aval(aval_of(x).shape[1:], aval_of(x).dtype, w) for x, w in zip(nl_xs, x_weak)]
             + [Aval(aval_of(c).shape[1:], aval_of(c).dtype) for c in ct_ys])
    body_t = stage(step, avals, name=f"{body.name}_transpose", role=Role.COTANGENT)
    zeros0 = [zeros(a) for a in lin_consts]
    out = _bind_for(n, nl_consts, [*ct_carry, *zeros0], [*nl_xs, *ct_ys], body_t,
                    not reverse, length)
    ct_carry0, ct_consts, ct_xs = (out[:num_carry], out[num_carry:num_carry + n_lc],
                                   out[num_carry + n_lc:])
    it_c, it_x = iter(ct_consts), iter(ct_xs)
    return ((None,) + tuple(next(it_c) if m else None for m in m_consts)
            + tuple(c if m else None for c, m in zip(ct_carry0, carry_is_linear))
            + tuple(next(it_x) if m else None for m in m_xs))


RAGGED_BATCH = "Jacobian through nested dynamic loops"   # the construct of that error


def for_loop_batch(args, batched, body, num_consts, num_carry, reverse, length):
    """A batch of loops as one loop over batched values: the body is batched
    (carries always, consts and xs as given); xs and ys keep the loop axis
    first inside the loop."""
    if batched[0]:
        return NotImplemented                    # a batch of trip counts
    dynamic = any(d is None for a in body.in_avals + body.out_avals for d in a.shape)
    # stacked values of varying length are lists: they cannot take a batch axis
    b_xs = batched[1 + num_consts + num_carry:]
    xs_avals = [aval_of(x) for x in args[1 + num_consts + num_carry:]]
    # (a batched xs is (batch, loop, ...): varying lengths show after the loop axis)
    if any(b and None in a.shape[2:] for b, a in zip(b_xs, xs_avals)):
        dynamic, batched = True, None
    try:
        if batched is None:
            raise ValueError("ragged")
        return _for_loop_batch(args, batched, body, num_consts, num_carry, reverse, length)
    except (TypeError, ValueError) as err:
        if not dynamic:
            raise
        from ..errors import UnsupportedSyntax
        raise UnsupportedSyntax(
            "a Jacobian of this order through a loop that stores values whose length changes "
            "between iterations (a while loop, break or return inside another loop) is not "
            "supported by the source engine; use engine='trace' (engine='auto' does so by "
            "itself)", construct=RAGGED_BATCH) from err


def _for_loop_batch(args, batched, body, num_consts, num_carry, reverse, length):
    from ..staging import stage
    from ..transforms.batching import batch_eval
    from .shape import broadcast_to, moveaxis
    n = args[0]
    size = next(_dims.shape(a)[0] for a, b in zip(args, batched) if b)
    consts, carry, xs = _split(args[1:], num_consts, num_carry)
    b_consts, _, b_xs = _split(batched[1:], num_consts, num_carry)
    carry = [c if b else broadcast_to(c, (size,) + tuple(_dims.shape(c)))
             for c, b in zip(carry, batched[1 + num_consts:1 + num_consts + num_carry])]
    xs = [moveaxis(x, 0, 1) if b else x for x, b in zip(xs, b_xs)]
    flags = [False] + list(b_consts) + [True] * num_carry + list(b_xs)

    def run(*ins):
        return batch_eval(body, list(ins), size, flags)

    def batched_aval(a, b):
        return Aval((size,) + a.shape, a.dtype) if b else a

    avals = [batched_aval(a, f) for a, f in zip(body.in_avals, flags)]
    body_b = stage(run, avals, name=f"{body.name}_batched")
    out = _bind_for(n, consts, carry, xs, body_b, reverse, length)
    return tuple(out[:num_carry]) + tuple(moveaxis(y, 1, 0) for y in out[num_carry:])


for_loop_p = register(Primitive("for_loop", nargs=None, impl=for_loop_impl, jvp=for_loop_jvp,
                                linearize=for_loop_linearize, transpose=for_loop_transpose,
                                abstract_eval=for_loop_aval, multiple_results=True,
                                batch=for_loop_batch))


def for_loop(n, body, consts, carry, xs=(), reverse=False):
    """Run ``body`` (a Program in loop form) ``n`` times."""
    length = as_int(n) if isinstance(n, (int, np.integer)) else None
    return _bind_for(n, consts, carry, xs, body, reverse, length)


# --- while_loop --------------------------------------------------------
def while_loop_impl(*args, cond, body, num_consts, num_carry):
    consts, carry = list(args[:num_consts]), list(args[num_consts:])
    ys = [[] for _ in body.outputs[num_carry:]]
    count = 0
    while eval_program(cond, consts + carry)[0]:
        outs = eval_program(body, consts + carry)
        carry = outs[:num_carry]
        for acc, y in zip(ys, outs[num_carry:]):
            acc.append(y)
        count += 1
    stacked = [_stack(acc, a, count) for acc, a in zip(ys, body.out_avals[num_carry:])]
    return tuple(carry) + (np.int64(count),) + tuple(stacked)


def while_loop_aval(*avals, cond, body, num_consts, num_carry):
    outs = body.out_avals
    return (tuple(outs[:num_carry]) + (Aval((), np.int64),)
            + tuple(Aval((None,) + a.shape, a.dtype) for a in outs[num_carry:]))


def _while_loop_masks(primals, tangents, num_consts):
    """Which consts and carries of a while loop get a tangent, and those tangents."""
    consts, carry = list(primals[:num_consts]), list(primals[num_consts:])
    t_consts, t_carry = list(tangents[:num_consts]), list(tangents[num_consts:])
    m_consts = _tangent_mask(t_consts, [aval_of(c) for c in consts])
    m_carry = [_is_float_aval(aval_of(c)) for c in carry]
    nz_consts = [t for t, m in zip(t_consts, m_consts) if m]
    nz_carry = [instantiate(t) for t, m in zip(t_carry, m_carry) if m]
    return consts, carry, m_consts, m_carry, nz_consts, nz_carry


def while_loop_jvp(primals, tangents, cond, body, num_consts, num_carry):
    from ..transforms.jvp import jvp_program
    consts, carry, m_consts, m_carry, nz_consts, nz_carry = _while_loop_masks(
        primals, tangents, num_consts)
    nc, nk = len(consts), len(carry)
    n_ys = len(body.outputs) - nk
    a, b = len(nz_consts), len(nz_carry)
    jb = jvp_program(body, m_consts + m_carry)
    base = nc + nk
    ins = (list(range(nc)) + list(range(base, base + a)) + list(range(nc, base))
           + list(range(base + a, base + a + b)))
    jb = _reorder(jb, ins, _jvp_out_order(nk, n_ys, m_carry), f"{body.name}_jvp")
    # the condition reads primal values only: give it the tangents as unused inputs
    jc = _with_extra_inputs(cond, [aval_of(t) for t in nz_consts], nc)
    jc = _with_extra_inputs(jc, [aval_of(t) for t in nz_carry], nc + a + nk)
    res = _bind_while([*consts, *nz_consts], [*carry, *nz_carry], jc, jb)
    carry_out, t_carry_out = res[:nk], res[nk:nk + b]
    count = res[nk + b]
    ys, t_ys = res[nk + b + 1:nk + b + 1 + n_ys], res[nk + b + 1 + n_ys:]
    primal, tangent = _merge_tangents(carry_out, ys, t_carry_out, t_ys, m_carry)
    return (primal[:nk] + (count,) + primal[nk:],
            tangent[:nk] + (Zero(Aval((), np.int64)),) + tangent[nk:])


def while_loop_linearize(primals, tangents, cond, body, num_consts, num_carry):
    from ..transforms.partial_eval import linearize_program
    consts, carry, m_consts, m_carry, nz_consts, nz_carry = _while_loop_masks(
        primals, tangents, num_consts)
    nc, nk = len(consts), len(carry)
    n_ys = len(body.outputs) - nk
    a, b = len(nz_consts), len(nz_carry)
    mask = m_consts + m_carry
    # the primal while loop records its trip count and per-iteration residuals;
    # the linear part is a for_loop over that count
    known, lin, nres = linearize_program(body, mask)
    known, lin_body, inv, _ = _loop_residuals(known, lin, nres, nk + n_ys, 0, nc, a, b, m_carry)
    out = _bind_while(consts, carry, cond, known)
    carry_out, count = out[:nk], out[nk]
    ys, res = out[nk + 1:nk + 1 + n_ys], out[nk + 1 + n_ys:]
    inv_vals = [consts[j] for j in inv]
    t_out = _bind_for(count, [*nz_consts, *inv_vals], nz_carry, res, lin_body, False, None)
    primal, tangent = _merge_tangents(carry_out, ys, t_out[:b], t_out[b:], m_carry)
    return (primal[:nk] + (count,) + primal[nk:],
            tangent[:nk] + (Zero(Aval((), np.int64)),) + tangent[nk:])


while_loop_p = register(Primitive("while_loop", nargs=None, impl=while_loop_impl,
                                  jvp=while_loop_jvp, linearize=while_loop_linearize,
                                  transpose=NOT_LINEAR, abstract_eval=while_loop_aval,
                                  multiple_results=True))


def while_loop(cond, body, consts, carry):
    return _bind_while(consts, carry, cond, body)
