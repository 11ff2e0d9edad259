"""Lowering, step 3 (``lower.py``): the facts about a Program the code
generator asks -- how each value is read, which may be Python scalars,
which float64 scalars the code may hold as Python floats -- and the sharing
of a while loop's condition values with its body.

Layer: lower.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Lit, Program, Var, sub_programs
from ..core.shapes import python_operator
from ..core.ir import atom_key, eqn_key
from ..core.literals import PY_SCALARS, ufunc_call

__all__ = ["use_kinds", "loop_only_values", "python_scalars", "python_floats", "Floats",
           "share_condition_values"]


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
    say how), and a loop's index is a Python int; Python's operators give
    two Python numbers a Python number. A loop carry is solved to
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
                # an impl's results are NumPy values, but Python's operators
                # give Python numbers Python numbers (``a * 2.0``)
                if python_operator(eqn.prim.impl) and all(py(x) for x in eqn.inputs):
                    found.update(v for v in eqn.outputs if v.aval.shape == ())
                continue
            # other holders of sub-programs (checkpointing): any scalar may be a Python one
            for sub in sub_programs(eqn):
                run(sub, [v.aval.shape == () for v in sub.inputs])
            outs = [v.aval.shape == () for v in eqn.outputs]
        found.update(v for v, f in zip(eqn.outputs, outs) if f)
    return found


class Floats:
    """Where the code holds float64 (and comparison) scalars as Python
    floats (bools) standing in for the interpreter's NumPy scalars
    (``python_floats``): ``held``, the Vars that may be such a stand-in;
    ``literals``, the float64 literals written as Python floats, as
    (equation, operand) or (sub-Program, output); ``convert``, the (equation, operand) stand-ins converted to NumPy
    scalars first (their row takes no Python float there); ``wrapped``, the
    results of Python arithmetic converted to NumPy scalars where computed
    (a NumPy value is wanted there); ``returned``, the outputs of the whole
    Program converted on return (its results keep their NumPy types)."""

    __slots__ = ("held", "literals", "convert", "wrapped", "returned")

    def __init__(self, held=(), literals=(), convert=(), wrapped=(), returned=()):
        self.held, self.literals, self.convert = frozenset(held), frozenset(literals), \
            frozenset(convert)
        self.wrapped, self.returned = frozenset(wrapped), frozenset(returned)


def python_floats(prog, mirrors, loop_only):
    """``Floats`` of ``prog``: NumPy's scalar maths costs 3-10 times Python's
    float maths (10 times on subnormals, where it reports the underflow, and
    a Python float op that underflows leaves the flag for NumPy's next), and
    Python's ``+ - *``, comparisons, ``abs`` and stores into float64 arrays
    give NumPy's bits. So a float64 scalar is a Python float where every
    reader gives the interpreter's values with one: each row says which of
    its operands take one and which results are then one (``emit.
    python_floats``; control flow and ``dup`` pass them through, as their
    ``python_scalars`` rules say), and a scalar stored in a list by one loop
    and read back by a later one is what was stored.

    Where a stand-in comes from (its *origins*) is an element read
    (``x.item(i)``), a float64 literal, or Python arithmetic on stand-ins. A
    reader that takes no Python float gets an element read or a literal as
    a NumPy scalar (at no cost), else converts its operand. A value that may
    be a Python scalar in the interpreter too (``mirrors``: the
    ``python_scalars`` analysis) is never also a stand-in: where they meet
    (one branch returns each) the stand-in's origins are NumPy. The
    analysis is repeated until no origin changes (each round only makes more
    of them NumPy)."""
    blocked = set()
    while True:
        walk = _FloatWalk(mirrors, loop_only, blocked)
        outs = walk.program(prog, [frozenset()] * len(prog.inputs), top=True)
        walk.returned = {x for x, f in zip(prog.outputs, outs) if f}
        for v, f in walk.flags.items():
            if f and v in mirrors:
                walk.blocks |= f
        if walk.blocks <= blocked:
            return walk.result()
        blocked |= walk.blocks


class _FloatWalk:
    """One round of ``python_floats``: each Var's origins (a frozenset:
    Vars, and ``(eqn, k)`` for a literal operand), given the ``blocked``
    ones, and what this round finds must be blocked (``blocks``)."""

    def __init__(self, mirrors, loop_only, blocked):
        self.mirrors, self.loop_only, self.blocked = mirrors, loop_only, blocked
        self.flags, self.choosable, self.blocks = {}, set(), set()
        self.convert, self.wrapped, self.literals, self.returned = set(), set(), set(), set()

    def result(self):
        held = {v for v, f in self.flags.items() if f and v.aval.shape == ()}
        return Floats(held, self.literals, self.convert, self.wrapped, self.returned)

    def set(self, v, f):
        if v.aval.shape != () and v not in self.loop_only:
            f = frozenset()         # only a list of stored scalars holds stand-ins
        self.flags[v] = self.flags.get(v, frozenset()) | f

    def atom(self, where, k, x):
        """The origins of operand ``k`` of ``where`` (an equation, or a
        sub-Program's outputs; None: the whole Program's)."""
        if not isinstance(x, Lit):
            return self.flags.get(x, frozenset())
        origin = (where, k)
        if where is not None and origin not in self.blocked and (type(x.val) is np.float64 or (
                type(x.val) is np.ndarray and x.val.shape == () and x.val.dtype == np.float64)):
            self.choosable.add(origin)
            self.literals.add(origin)
            return frozenset({origin})
        return frozenset()

    def kind(self, x, f):
        if f:
            return "float"
        if isinstance(x, Lit):
            return "py" if type(x.val) in PY_SCALARS else "np"
        return "py" if x in self.mirrors or x.aval.weak else "np"

    def reject(self, eqn, k, f):
        """Operand ``k`` of ``eqn`` (``eqn`` None: a sub-Program's output)
        takes no stand-in: NumPy origins where that costs nothing, else a
        conversion before the reader."""
        if eqn is None or f <= self.choosable:
            self.blocks |= f
        else:
            self.convert.add((eqn, k))

    def run(self, sub, flags):
        return self.program(sub, [f if isinstance(f, frozenset) else frozenset()
                                  for f in flags])

    def program(self, prog, flags, top=False):
        for v, f in zip(prog.inputs, flags):
            self.set(v, f)
        for eqn in prog.eqns:
            ins = [self.atom(eqn, k, x) for k, x in enumerate(eqn.inputs)]
            rule = eqn.prim.emit
            outs = None
            if rule is not None and "python_scalars" in rule.asks:
                outs = rule.python_scalars(eqn, ins, self.run)
            if outs is None:
                outs = self.reader(eqn, ins)
            for v, f in zip(eqn.outputs, outs):
                self.set(v, f if isinstance(f, frozenset) else frozenset())
        return [self.atom(None if top else prog, k, x) for k, x in enumerate(prog.outputs)]

    @staticmethod
    def ask(eqn, kinds):
        """(accepts, made) of the row (``EmitRule.python_floats``)."""
        rule = eqn.prim.emit
        answer = None
        if rule is not None and "python_floats" in rule.asks:
            answer = rule.python_floats(eqn, kinds)
        elif ufunc_call(eqn) and all(x.aval.weak or x.aval.dtype == np.float64
                                     for x in eqn.inputs):
            answer = (True,) * len(kinds), (False,) * len(eqn.outputs)   # NumPy's call
        return answer or ((False,) * len(kinds), (False,) * len(eqn.outputs))

    def reader(self, eqn, ins):
        """The origins of the results of a row that reads its operands."""
        kinds = [self.kind(x, f) for x, f in zip(eqn.inputs, ins)]
        while True:
            accepts, made = self.ask(eqn, kinds)
            k = next((k for k, f in enumerate(ins) if f and not accepts[k]), None)
            if k is None:
                break
            # one operand converted may be enough (``a / b``: NumPy's division)
            self.reject(eqn, k, ins[k])
            ins = ins[:k] + [frozenset()] + ins[k + 1:]
            kinds[k] = "np"
        for sub in sub_programs(eqn):       # a holder that passes nothing through
            for k, f in enumerate(self.run(sub, [frozenset()] * len(sub.inputs))):
                if f:
                    self.reject(None, k, f)
        # a result made from no stand-in (an element read) is a NumPy scalar
        # at no cost; one made by Python's arithmetic on stand-ins is converted
        choosable = "float" not in kinds
        outs = []
        for v, m in zip(eqn.outputs, made):
            if not m or v.aval.shape != ():
                outs.append(frozenset())
            elif v in self.blocked:
                if not choosable:
                    self.wrapped.add(v)
                outs.append(frozenset())
            else:
                if choosable:
                    self.choosable.add(v)
                outs.append(frozenset({v}))
        return outs


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
            eqn, changed = eqn.replace(eqn.inputs, eqn.outputs, params), True
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
    eqns = [e.replace([read(x) for x in e.inputs], e.outputs, e.params) for e in kept]
    outs = [read(x) for x in body.outputs]
    return (Program(cond.inputs, cond.eqns, list(cond.outputs) + list(shared), cond.name),
            Program(list(body.inputs) + list(shared.values()), eqns, outs, body.name))
