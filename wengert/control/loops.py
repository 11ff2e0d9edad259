"""What the loop blocks (``for_loop.py``, ``while_loop.py``) share, written
over the layouts of ``params.py``: per-iteration values, the tangents a
loop carries, the jvp'd body, the split of a body's residuals, and one type
per carry.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, Lit, Program, Var, acts, aval_of, is_duck_array, runs_at_call, sub_programs
from ..primitives.arith import convert
from ..core.primitive import Zero, instantiate
from ..core.trace import TRACE_STATE, eval_program
from ..core.rules import EmitRule, LowerRule, either, stand_in_flags
from .common import is_float_aval, numpy_outputs, tangent_mask, unused
from .params import ForParams, join, split
from .residuals import recompute_residuals
from ..core.staging import stage
from ..core.subprograms import jvp_program

__all__ = ["RaggedStack", "YsBuffer", "WHILE_ROWS", "LoopTangents", "jvp_body", "loop_residuals",
           "carry_tangents", "coherent_carries", "LoopEmit"]


class RaggedStack(list):
    """Per-iteration values whose lengths differ between iterations (an inner
    while loop's residuals, stored by an outer loop): kept as a list, indexed
    like the stacked array it stands for."""

    def __init__(self, items, aval):
        super().__init__(items)
        self.aval = aval


# the rows a while loop's buffer of per-iteration values starts with; it
# doubles when full (a for loop knows its trip count and allocates it once)
WHILE_ROWS = 8


class YsBuffer:
    """One ``ys`` output of a loop, stored as the generated code stores it:
    an array allocated once, ``(n, *shape)`` of the aval's dtype, written
    row by row (a while loop's, whose ``n`` is unknown, starts at
    ``WHILE_ROWS`` rows and doubles when full), so a store-all sweep holds
    the residuals once, never a list of them and their stack as well;
    values of varying length stay a list (``RaggedStack``).
    ``rows``: the trip count, or None (a while loop)."""

    __slots__ = ("aval", "rows", "data")

    def __init__(self, aval, rows=None):
        self.aval, self.rows = aval, rows
        self.data = None
        if any(d is None for d in aval.shape):
            self.data = [] if rows is None else [None] * rows

    def put(self, i, y):
        """Store row ``i`` (a while loop's rows come in order: 0, 1, ...)."""
        data = self.data
        if data is None:            # the shape from the first value: avals may be symbolic
            rows = WHILE_ROWS if self.rows is None else self.rows
            data = self.data = np.empty((rows,) + np.shape(y), dtype=self.aval.dtype,
                                        **({"like": y} if is_duck_array(y) else {}))
        elif i == len(data):        # a while loop's buffer (or list) is full
            if isinstance(data, list):
                data.append(y)
                return
            data = self.data = np.concatenate((data, np.empty_like(data)))
        data[i] = y

    def result(self, count):
        """The stacked ``(count, *shape)`` values (``(0, *shape)`` when no
        iteration ran)."""
        data, aval = self.data, self.aval
        if isinstance(data, list):
            return RaggedStack(data, Aval((count,) + aval.shape, aval.dtype))
        if data is None:
            return np.zeros((0,) + aval.shape, aval.dtype)
        return data if len(data) == count else data[:count]


class LoopTangents:
    """Which of a loop's operands get a tangent (``m_*``), and those tangents
    (``nz_*``): consts and xs with a nonzero float tangent, and every float
    carry (the body may make a constant carry vary)."""

    def __init__(self, p, primals, tangents):
        self.p = p
        self.lead, self.consts, self.carry, self.xs = p.operand_groups(primals)
        _, t_consts, t_carry, t_xs = p.operand_groups(tangents)
        self.m_consts = tangent_mask(t_consts, [aval_of(c) for c in self.consts])
        self.m_carry = [is_float_aval(aval_of(c)) for c in self.carry]
        self.m_xs = tangent_mask(t_xs, [aval_of(x) for x in self.xs])
        self.nz_consts = [t for t, m in zip(t_consts, self.m_consts) if m]
        self.nz_carry = [instantiate(t) for t, m in zip(t_carry, self.m_carry) if m]
        self.nz_xs = [t for t, m in zip(t_xs, self.m_xs) if m]

    @property
    def mask(self):
        """Per body input: whether it carries a tangent."""
        return self.p.join_operand_groups([False] * len(self.lead), self.m_consts,
                                          self.m_carry, self.m_xs)


def jvp_body(p, tans, name):
    """The jvp'd body in the loop's layout: (lead, consts + t_consts,
    carry + t_carry, xs + t_xs) -> (carry + t_carry, ys + t_ys), a tangent
    for the float carries only."""
    body = p.body
    state = TRACE_STATE
    count = state.unbounded
    jb = jvp_program(body, tans.mask)
    if state.unbounded != count and not state.wild:
        # the body applied a derivative that may be infinite where the function is finite
        # (``primitives.unbounded``): a tangent may come around the loop wild, into a product
        # that comes before its singular function in the body. The body again, its
        # tangents wild from the start (their products the guarded ones); a program
        # transform, so nothing of the first one runs
        state.wild = True
        try:
            jb = jvp_program(body, tans.mask)
        finally:
            state.wild = False
    n_in, n_out = len(body.inputs), len(body.outputs)
    lead, consts, carry, xs = p.operand_groups(jb.inputs[:n_in])
    t_consts, t_carry, t_xs = split(jb.inputs[n_in:], len(tans.nz_consts), len(tans.nz_carry))
    carry_o, ys_o = p.body_output_groups(jb.outputs[:n_out])
    t_carry_o, t_ys_o = p.body_output_groups(jb.outputs[n_out:])
    t_carry_o = [t for t, m in zip(t_carry_o, tans.m_carry) if m]
    return Program(p.join_operand_groups(lead, consts + t_consts, carry + t_carry, xs + t_xs),
                   jb.eqns, join(carry_o, t_carry_o, ys_o, t_ys_o), name)


def carry_tangents(carry_out, t_carry_nz, m_carry):
    """The tangent of each carry a loop gives: a Zero for each that got none."""
    t_iter = iter(t_carry_nz)
    return [next(t_iter) if m else Zero(aval_of(c)) for c, m in zip(carry_out, m_carry)]


def loop_residuals(p, tans, known, lin, nres):
    """Sort a body's residuals by how they vary over the loop: the loop
    index and the loop's constants are not stored (the linear loop has them
    already); a residual computed from the constants alone (``cos(a)`` for
    ``sin(a) * x[i]``) is the same in every iteration, so the known loop
    keeps it once, as a carry it overwrites (``invariant_values``); the rest
    are stored per iteration (its ``ys``). Cheap scalar residuals are
    recomputed from the body's inputs instead of stored
    (``recompute_residuals``).

    Returns (known, linear, inv, held): the known body with the held
    residuals as carries after its own (its inputs for them unread) and
    the stored ones as ys after its own; the linear body in ``for_loop``
    layout (i, t_consts + invariant residuals + held residuals, t_carry,
    stored residuals + t_xs); the positions among the loop's consts of the
    constant residuals; the held residuals' avals (the known loop's carries
    start as zeros of them: a loop that runs no step reads none)."""
    n_out = len(p.body.outputs)
    lead, consts_in, _, _ = p.operand_groups(known.inputs)
    known, lin, nres = recompute_residuals(known, lin, nres, n_out, lead + consts_in)
    res_out, res_in = known.outputs[n_out:], lin.inputs[:nres]
    index = lead[0] if lead else None
    const_ins = {v: j for j, v in enumerate(consts_in)}
    invariant = invariant_values(known, consts_in)
    idx_var, inv, inv_vars, stacked, stacked_vars, held, held_vars = (None, [], [], [], [],
                                                                      [], [])
    for out_v, in_v in zip(res_out, res_in):
        if index is not None and out_v is index and idx_var is None:
            idx_var = in_v
        elif isinstance(out_v, Var) and out_v in const_ins:
            inv.append(const_ins[out_v])
            inv_vars.append(in_v)
        elif out_v in invariant and None not in out_v.aval.shape:
            held.append(out_v)
            held_vars.append(in_v)
        else:
            stacked.append(out_v)
            stacked_vars.append(in_v)
    lead, consts_in, carry_in, xs_in = p.operand_groups(known.inputs)
    carry_o, ys_o = p.body_output_groups(known.outputs[:n_out])
    known = Program(p.join_operand_groups(lead, consts_in, carry_in + unused(
                        [v.aval for v in held]), xs_in),
                    known.eqns, carry_o + held + ys_o + stacked, known.name)
    t_consts, t_carry, t_xs = split(lin.inputs[nres:], len(tans.nz_consts), len(tans.nz_carry))
    carry_o, ys_o = p.body_output_groups(lin.outputs)
    outs = [t for t, m in zip(carry_o, tans.m_carry) if m] + ys_o
    idx_var = idx_var or Var(Aval((), np.int64))
    lin_params = ForParams(None, len(t_consts) + len(inv_vars) + len(held_vars), len(t_carry))
    body = Program(lin_params.join_operands(idx_var, t_consts + inv_vars + held_vars, t_carry,
                                            stacked_vars + t_xs), lin.eqns, outs, lin.name)
    return known, body, inv, [v.aval for v in held]


def invariant_values(prog, consts):
    """The Vars of ``prog`` computed from ``consts`` (and literals) alone,
    by equations without an effect or a runtime read: the same in every
    iteration of a loop whose body ``prog`` is."""
    found = set(consts)
    for e in prog.eqns:
        if all(isinstance(x, Lit) or x in found for x in e.inputs) and not (
                e.prim.runtime or acts(e) or any(runs_at_call(q) for q in sub_programs(e))):
            found.update(e.outputs)
    return found - set(consts)


def coherent_carries(p, carry):
    """A loop whose carries keep one type. A transform may give a carry an
    initial value of another type than its body takes (a ``0.0`` zero for a
    float32 cotangent), or a body that returns a NumPy scalar for a carry
    that enters as a Python scalar (a tangent that ``cos`` makes an
    ``np.float64``), which promotes float32 values differently from the
    second step on. Such a carry is a NumPy scalar of the body's dtype from
    the start: the initial value converted, the body (and the condition)
    staged again; one that leaves the body as a Python scalar is converted on
    the way out. Returns (params, carry)."""
    carry = list(carry)
    carry_avals = p.carry_avals
    for k, want in enumerate(carry_avals):       # the initial values take the body's dtypes
        a = aval_of(carry[k])
        if a.dtype != want.dtype or (a.weak and not want.weak):
            carry[k] = convert(carry[k], dtype=want.dtype)
    while True:     # each round makes a weak carry strong: at most num_carry rounds
        ins = p.operand_groups(p.body.inputs)[2]
        outs = p.body_output_groups(p.body.outputs)[0]
        strong = [v.aval.weak and (not o.aval.weak or not aval_of(c).weak)
                  for v, o, c in zip(ins, outs, carry)]
        if not any(strong):
            break
        lead, consts, carry_av, xs = p.operand_groups(p.body.in_avals)
        carry_av = [Aval(a.shape, a.dtype) if st else a for a, st in zip(carry_av, strong)]
        new = p.join_operand_groups(lead, consts, carry_av, xs)

        def again(prog):
            return stage(lambda *xs: eval_program(prog, xs), new[:len(prog.inputs)],
                         name=prog.name, in_names=[v.name for v in prog.inputs],
                         in_roles=[v.role for v in prog.inputs])
        p = p.map_programs(again)
        carry = [convert(c, dtype=aval_of(c).dtype) if st and aval_of(c).weak else c
                 for c, st in zip(carry, strong)]
    ins = p.operand_groups(p.body.inputs)[2]
    outs = p.body_output_groups(p.body.outputs)[0]
    body = numpy_outputs(p.body, {k: v.aval.dtype for k, (v, o) in enumerate(zip(ins, outs))
                                  if (o.aval.weak and not v.aval.weak)
                                  or o.aval.dtype != v.aval.dtype})
    return p.replace(body=body), carry


class LoopEmit(EmitRule):
    """What the loops' code shares: which values may be Python scalars."""

    PARAMS = None

    def python_scalars(self, eqn, py_ins, run):
        """A loop's index is a Python int; a carry may be a Python scalar
        if its initial value or the body's new value may be (a fixed point)."""
        p = self.PARAMS.of(eqn.params)
        lead, consts, carry, xs = p.operand_groups(py_ins)
        # stand-ins (sets): the index is no stand-in; scalars a loop stores in
        # a list and a later loop reads back are what was stored
        sets = stand_in_flags(py_ins)
        index, none = (frozenset(), frozenset()) if sets else (True, False)
        xs = xs if sets else [False] * len(xs)
        while True:
            flags = p.join_operand_groups([index] * len(lead), consts, carry, xs)
            outs = None
            for prog in p.sub_programs():
                outs = run(prog, flags)
            new_carry, ys = p.body_output_groups(outs)
            new = [either(a, b) for a, b in zip(carry, new_carry)]
            if new == carry:
                break
            carry = new
        return p.join_output_groups(carry, [none] * p.MID, ys if sets else [False] * p.num_ys)



class LoopLower(LowerRule):
    """A loop owns a carry whose new value the body owns and hands to no
    other output: the body may then write it in place, every iteration. A
    carry the body writes is handed over on entry when nothing reads its
    initial value afterwards, else copied once. A while loop's condition
    owns nothing: it only reads the carries (the values it passes on to the
    body share their memory)."""

    PARAMS = None

    def ownership(self, eqn, ctx):
        p = self.PARAMS.of(eqn.params)
        lead, consts, carry, xs = p.operand_groups(list(range(len(eqn.inputs))))
        carry_out = p.body_output_groups(list(range(len(p.body.outputs))))[0]
        owned = {q for q in carry if eqn.inputs[q].aval.shape}
        while True:
            results = self._analyze(p, ctx, owned, lead, consts, carry, xs)
            body = results[-1][1]
            kept = {q for q, m in zip(carry, carry_out)
                    if q in owned and ctx.exclusive(body.outputs, m) is not None}
            needed = {q for q in kept if any(q in r.consumed for _, r in results)}
            if needed == owned:
                break
            owned = needed
        for prog, res in results:
            ctx.keep(prog, res)
        outs = []
        # a carry the loop does not own may hold any operand's buffer but
        # those of the owned carries (each iteration hands those on to their
        # own carry alone: ``exclusive``)
        shared = frozenset().union(*(r for q, r in enumerate(ctx.operand_roots)
                                     if q not in owned)) | {ctx.new_root(False)}
        body_in = p.operand_groups(p.body.inputs)[2]
        for q, m, v in zip(carry, carry_out, body_in):
            if p.body.outputs[m] is v and q not in owned:
                # a carry no step changes is its initial value, that buffer
                outs.append(ctx.operand_roots[q])
            elif q not in owned and not eqn.inputs[q].aval.shape:
                outs.append(frozenset())        # a scalar holds no buffer
            elif q not in owned:
                outs.append(shared)
            elif ctx.transferable(q):
                ctx.take(q)
                outs.append(frozenset({ctx.taken_root(q)}))
            else:
                ctx.copy(q)
                outs.append(frozenset({ctx.new_root()}))
        for v in eqn.outputs[len(carry):]:
            # counts and stacked per-iteration values: new arrays (lists kept
            # as lists where lengths vary)
            outs.append(frozenset({ctx.new_root(None not in v.aval.shape)}))
        return outs

    @staticmethod
    def _analyze(p, ctx, owned, lead, consts, carry, xs):
        """(program, result) of each sub-Program, the body last."""
        body_roots = p.join_operand_groups(
            [frozenset()] * len(lead), [ctx.sub_roots(q) for q in consts],
            [ctx.sub_roots(q, q in owned) for q in carry], [])
        results = []
        progs = p.sub_programs()
        shared = [ctx.sub_roots(q) for q in xs]
        for prog in progs[:-1]:
            # a condition: it reads the body's carries through stand-ins
            stand = {}
            ins = []
            for roots in body_roots:
                s = frozenset(stand.setdefault(r, ctx.new_root(False)) for r in roots)
                ins.append(s)
            res = ctx.analyze(prog, ins)
            results.append((prog, res))
            back = {s: r for r, s in stand.items()}
            shared = [frozenset(back[r] if r in back else ctx.new_root(False) for r in roots)
                      for roots in res.outputs[1:]]
        body = progs[-1]
        n_in = len(body.inputs)
        roots = (body_roots + shared)[:n_in]
        res = ctx.analyze(body, roots)
        results.append((body, res))
        return results
