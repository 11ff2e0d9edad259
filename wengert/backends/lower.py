"""Program -> the imperative form the code generator writes.

    lower : Program -> Lowered        (``pycodegen.generate_source`` calls it)

A Program is functional: ``index_add(x, v, i)`` is a new array, ``x`` with
``v`` added at ``i``. Written as it reads, a loop that updates one element
per iteration copies the whole array each time, and the reverse sweep of a
loop that reads ``x[i]`` scatters each cotangent into a fresh ``np.zeros(n)``
and adds that to the accumulated one: O(n) per iteration, O(n^2) in all.
Lowering makes such code imperative where that is provably the same:

1. ``sink``: a sum into an accumulator, ``acc + index_add(0, v, i)``,
   becomes ``index_add(acc, v, i)``; a sum of a conditional's outputs moves
   into its branches, so each branch adds to the accumulator what it
   computed and a branch that computed nothing passes it on (no dense
   zeros, no dense sum). Sums may be added in another order than the
   Program's: the values agree to rounding.
2. ``Ownership``: which arrays the code owns. An array is *owned* when the
   code made it (a row's ``lower.fresh`` result, a literal ``np.zeros``), or
   was handed it by an owner that no longer reads it; the caller's arrays,
   constants, and views are never owned. An update whose target is owned
   and dead afterwards -- no later equation reads it or any value that may
   share its memory -- is written in place (``x[i] += v``: the row's
   ``lower.inplace``). Control flow passes ownership into its sub-Programs
   (``lower.ownership``): a conditional's operand that is dead after it, a
   loop's carry whose new value is owned by the body and held by nothing
   else. A loop whose body updates a carry in place copies the initial value
   once on entry when it is not owned (the caller's array, a constant).
3. The analyses the code generator asks: ``share_condition_values`` (a
   while loop's body reads the values its condition computed), which values
   may be Python scalars, which are read only per iteration or as trip
   counts.

The result, ``Lowered``, is the Program (rewritten by 1 and 3, a Program
``verify`` accepts) with the decisions of 2: the equations written in
place, and the operands copied on entry. ``check`` re-checks the
decisions independently: an in-place target is read by no later equation
of its Program and is no output of it.

This module names no primitive: every fact about a row is its ``lower``
rule's (``primitives/rules.py``: ``LowerRule``).
"""
from __future__ import annotations

import numpy as np

from ..ir import Eqn, Lit, Program, Var, acts, sub_programs, verify
from ..transforms.simplify import atom_key, eqn_key
from .pyemit import PY_SCALARS, Emitter

__all__ = ["lower", "Lowered", "LoweringError", "Root", "Ownership", "sink", "schedule", "check",
           "share_outer_values",
           "share_condition_values", "python_scalars", "loop_only_values", "use_kinds",
           "map_programs"]


class LoweringError(AssertionError):
    """A lowering decision that breaks the imperative form's rules (a bug)."""


class Lowered:
    """A Program ready for code generation and what lowering decided:
    ``inplace`` the equations written in place (-> the operand overwritten),
    ``copies`` per equation the
    operand positions copied before it runs, and the analyses (``read``,
    ``loop_only``, ``trip_only``, ``python_scalars``)."""

    __slots__ = ("program", "inplace", "copies", "read", "loop_only", "trip_only",
                 "python_scalars")

    def __init__(self, program, inplace, copies):
        self.program, self.inplace, self.copies = program, inplace, copies
        kinds = use_kinds(program)
        self.read = set(kinds)                   # every Var something reads
        self.loop_only = {k for k, kind in kinds.items() if kind == {"xs"}}
        # a while loop's count read only as trip counts may be a Python int
        self.trip_only = {k for k, kind in kinds.items() if kind == {"trip"}}
        self.python_scalars = python_scalars(program)


def lower(prog):
    """``prog`` (a verified Program) in imperative form (``Lowered``)."""
    prog = share_outer_values(share_condition_values(prog))
    prog = schedule(sink(prog))
    result = Ownership.analyze(prog, [frozenset({Root(False)}) if _array(v) else frozenset()
                                      for v in prog.inputs])
    inplace, copies = {}, {}
    result.commit(prog, inplace, copies)
    lowered = Lowered(prog, {e: p for e, p in inplace.items() if p is not None}, copies)
    check(lowered)
    return lowered


# --- 1. sums into accumulators ---------------------------------------------
def map_programs(eqn, fn):
    """``eqn`` with ``fn`` applied to each sub-Program of its params (the
    same Eqn when nothing changed)."""
    if not eqn.params:
        return eqn
    params, changed = {}, False
    for key, v in eqn.params.items():
        if isinstance(v, Program):
            new = fn(v)
        elif isinstance(v, tuple) and v and all(isinstance(p, Program) for p in v):
            new = tuple(fn(p) for p in v)
            new = v if all(a is b for a, b in zip(new, v)) else new
        else:
            new = v
        changed |= new is not v
        params[key] = new
    return Eqn(eqn.prim, eqn.inputs, eqn.outputs, params) if changed else eqn


class Sink:
    """What a row's ``absorb`` rule may ask while sums move into their
    accumulators: ``program`` sinks the sums of a new sub-Program,
    ``zero(x)`` whether an atom is a literal of zeros, ``absorbable(x)``
    whether a value's producer would take an accumulator, ``add(a, b, out)``
    the equations of a sum (the row of the sum being moved)."""

    def __init__(self, producers=None, uses=None, sum_eqn=None):
        self.producers = producers or {}
        self.uses = uses or {}
        self.sum_eqn = sum_eqn

    def add(self, a, b, out):
        """``out = a + b`` as a list of equations, by the row of the sum
        being moved (a zero passes the other operand on: then ``out`` is
        not defined and the caller reads the answer's second item)."""
        if self.zero(b):
            return [], a
        if self.zero(a):
            return [], b
        return [Eqn(self.sum_eqn.prim, [a, b], [out], {})], out

    @staticmethod
    def program(prog):
        return sink(prog)

    @staticmethod
    def zero(x):
        return isinstance(x, Lit) and isinstance(x.val, (np.ndarray, np.generic, float, int)) \
            and not isinstance(x.val, bool) and np.ndim(x.val) >= 0 \
            and np.asarray(x.val).dtype.kind in "fc" and not np.asarray(x.val).any()

    @staticmethod
    def additive(prog, start, end):
        """Whether ``end`` is ``start`` plus values that do not read it: a
        chain of sums and scatter-adds (the rows' ``lower.accumulates``, and
        ``lower.additive`` through a conditional's branches) that is the only
        reader of ``start`` and of each link."""
        uses, producer = {}, {}
        for e in prog.eqns:
            for x in e.inputs:
                if isinstance(x, Var):
                    uses[x] = uses.get(x, 0) + 1
            for v in e.outputs:
                producer[v] = e
        for x in prog.outputs:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
        x = end
        while x is not start:
            e = producer.get(x)
            if e is None or e.prim.lower is None:
                return False
            rule = e.prim.lower
            links = [p for p in rule.accumulates(e) if isinstance(e.inputs[p], Var)
                     and uses.get(e.inputs[p]) == 1]
            nxt = None
            for p in links:
                if Sink.reaches(prog, start, e.inputs[p], producer):
                    nxt = e.inputs[p]
                    break
            if nxt is None:
                m = e.outputs.index(x)
                for p, y in enumerate(e.inputs):
                    if isinstance(y, Var) and uses.get(y) == 1 \
                            and rule.additive(e, m, p, Sink.additive):
                        nxt = y
                        break
            if nxt is None:
                return False
            if any(e.inputs[q] is start for q in range(len(e.inputs))
                   if e.inputs[q] is not nxt):
                return False
            x = nxt
        return uses.get(start, 0) == 1

    @staticmethod
    def reaches(prog, start, x, producer):
        """Whether ``x`` is computed from ``start``."""
        seen, todo = set(), [x]
        while todo:
            y = todo.pop()
            if y is start:
                return True
            if y in seen or not isinstance(y, Var) or y not in producer:
                continue
            seen.add(y)
            todo += list(producer[y].inputs)
        return False

    def absorbable(self, x):
        if not isinstance(x, Var) or self.uses.get(x, 0) != 1 or x not in self.producers:
            return False
        eqn = self.producers[x]
        rule = eqn.prim.lower
        return rule is not None and rule.absorb(eqn, eqn.outputs.index(x), None, x,
                                                self) is not None


def sink(prog):
    """``prog`` with each sum into an accumulator moved into what computed
    the summand (the rows' ``lower.absorb``), at every depth."""
    eqns = [map_programs(e, sink) for e in prog.eqns]
    while True:
        new = _sink_one(eqns, prog.outputs)
        if new is None:
            break
        eqns = new
    if all(a is b for a, b in zip(eqns, prog.eqns)) and len(eqns) == len(prog.eqns):
        return prog
    return Program(prog.inputs, eqns, prog.outputs, prog.name)


def _sink_one(eqns, outputs, only=None):
    """The equations with one sum absorbed (the sum ``only``, if given), or
    None. A rewrite that leaves a new sum behind (``acc + (c + d)`` is
    ``(acc + c) + d``) counts only if that sum is absorbed in turn: every
    step removes an equation, so sinking ends."""
    uses, producer, position = {}, {}, {}
    for j, e in enumerate(eqns):
        for x in e.inputs:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
        for v in e.outputs:
            producer[v], position[v] = e, j
    for x in outputs:
        if isinstance(x, Var):
            uses[x] = uses.get(x, 0) + 1
    for j, e in enumerate(eqns):
        rule = e.prim.lower
        if rule is None or not rule.sums(e) or (only is not None and e is not only):
            continue
        helper = Sink(producer, uses, e)
        out = e.outputs[0]
        for acc, y in ((e.inputs[0], e.inputs[1]), (e.inputs[1], e.inputs[0])):
            if not isinstance(y, Var) or uses.get(y) != 1 or y not in producer \
                    or not _same_aval(acc, out):
                continue
            p = position[y]
            pe = eqns[p]
            prule = pe.prim.lower
            if prule is None or (isinstance(acc, Var) and producer.get(acc) is pe
                                 and uses.get(acc) != 1):
                continue
            new = prule.absorb(pe, pe.outputs.index(y), acc, out, helper)
            if new is None:
                continue
            # the new equations read ``acc`` and what ``pe`` read: they go where
            # ``pe`` was if ``acc`` is known there, else where the sum was if
            # nothing between reads ``pe``'s other outputs
            acc_at = position.get(acc, -1) if isinstance(acc, Var) else -1
            if producer.get(acc) is pe:
                acc_at = -1
            others = set(pe.outputs) - {y, acc}
            if acc_at < p:
                found = eqns[:p] + new + eqns[p + 1:j] + eqns[j + 1:]
            elif not any(x in others for e2 in eqns[p + 1:j] for x in e2.inputs):
                found = eqns[:p] + eqns[p + 1:j] + new + eqns[j + 1:]
            else:
                continue
            left = [n for n in new if n.prim.lower is not None and n.prim.lower.sums(n)]
            if left:
                found = _sink_one(found, outputs, left[0])
                if found is None:
                    continue
            return found
    return None


def _same_aval(x, out):
    a = x.aval
    return a.shape == out.aval.shape and a.dtype == out.aval.dtype


def share_outer_values(prog):
    """``prog`` with each branch of a conditional reading the values already
    computed before it rather than computing them again (``v = x[i]; if v >
    0: s = s + x[i] ** 2``): a branch equation equal to an earlier one of the
    enclosing Program (same row, params and operands, a branch input being
    its operand) becomes an input of the branch, fed by that value. Only
    rows that say their sub-Programs read their operands as they are share
    (``lower.operand_inputs``); nothing with an effect or a value read at run
    time moves."""
    seen, eqns, changed = {}, [], False

    def key(x):
        return atom_key(x)

    for e in prog.eqns:
        e2 = map_programs(e, share_outer_values)
        rule = e2.prim.lower
        if rule is not None and seen:
            maps = rule.operand_inputs(e2)
            if maps is not None:
                e2 = _share_into(e2, maps, seen, rule)
        changed |= e2 is not e
        k = None if e2.prim.runtime or len(e2.outputs) != 1 else eqn_key(
            e2.prim, e2.inputs, e2.params, key)
        if k is not None:
            seen.setdefault(k, e2.outputs[0])
        eqns.append(e2)
    return Program(prog.inputs, eqns, prog.outputs, prog.name) if changed else prog


def _share_into(eqn, maps, seen, rule):
    """``eqn`` whose sub-Programs read ``seen`` values as new operands."""
    extra, programs = [], []
    for sub, inputs in zip(sub_programs(eqn), maps):
        outer = {v: eqn.inputs[p] for v, p in inputs.items()}

        def key(x, outer=outer):
            if isinstance(x, Lit):
                return atom_key(x)
            return atom_key(outer[x]) if x in outer else ("inner", x)

        subst, kept, added = {}, [], {}
        for e in sub.eqns:
            ins = [subst.get(x, x) if isinstance(x, Var) else x for x in e.inputs]
            k = None if e.prim.runtime or len(e.outputs) != 1 or any(
                isinstance(x, Var) and x not in outer for x in ins) \
                else eqn_key(e.prim, ins, e.params, key)
            if k is not None and k in seen:
                v = seen[k]
                if v not in added:
                    added[v] = Var(v.aval, v.name, v.role)
                subst[e.outputs[0]] = added[v]
                continue
            kept.append(e if ins == list(e.inputs) else Eqn(e.prim, ins, e.outputs, e.params))
        outs = [subst.get(x, x) if isinstance(x, Var) else x for x in sub.outputs]
        programs.append((sub, kept, outs, added))
        extra += [v for v in added if v not in extra]
    if not extra:
        return eqn
    new = []
    for sub, kept, outs, added in programs:
        ins = list(sub.inputs) + [added.get(v) or Var(v.aval, v.name, v.role) for v in extra]
        new.append(Program(ins, kept, outs, sub.name))
    return rule.with_operands(eqn, extra, new)


def schedule(prog):
    """``prog`` with the reads of an update's target moved before the update
    where they can be (``ct_v = ct[i]`` before ``ct = index_set(ct, 0, i)``),
    so the update is the target's last use and may be written in place. A
    read moves only if everything it reads is known there and it has no
    effect; the Program computes the same values."""
    eqns = [map_programs(e, schedule) for e in prog.eqns]
    j = 0
    while j < len(eqns):
        e = eqns[j]
        rule = e.prim.lower
        targets = [e.inputs[p] for p in (rule.update(e) if rule is not None else ()) or ()
                   if isinstance(e.inputs[p], Var)]
        if targets:
            known = set(prog.inputs)
            for e2 in eqns[:j]:
                known.update(e2.outputs)
            moved = [k for k in range(j + 1, len(eqns))
                     if any(x is t for t in targets for x in eqns[k].inputs)]
            if moved and all(not acts(eqns[k]) and all(isinstance(x, Lit) or x in known
                                                       for x in eqns[k].inputs)
                             for k in moved):
                reads = [eqns[k] for k in moved]
                rest = [x for k, x in enumerate(eqns) if k > j and k not in moved]
                eqns = eqns[:j] + reads + [e] + rest
                j += len(reads)
        j += 1
    if all(a is b for a, b in zip(eqns, prog.eqns)):
        return prog
    return Program(prog.inputs, eqns, prog.outputs, prog.name)


# --- 2. ownership ------------------------------------------------------------
class Root:
    """One buffer the code may hold: ``owned`` if the code may write it;
    ``origin`` the input position of the Program it came in by, if any."""

    __slots__ = ("owned", "origin")

    def __init__(self, owned, origin=None):
        self.owned, self.origin = owned, origin

    def __repr__(self):
        return f"Root({'owned' if self.owned else 'shared'}, {self.origin})"


def _array(v):
    return len(v.aval.shape) > 0


class Result:
    """One analysis of a Program: the roots of its outputs, the decisions
    (in-place equations, copies) including those of its sub-Programs, and
    the input positions whose owned buffer something wrote (``consumed``)."""

    __slots__ = ("outputs", "inplace", "copies", "consumed", "subs")

    def __init__(self):
        self.outputs, self.inplace, self.copies = [], {}, {}
        self.consumed, self.subs = set(), []

    def commit(self, program, inplace, copies):
        """Merge the decisions into the tables: a Program analysed in two
        places is written in place only where every analysis says so; a copy
        made in one is made in all (a copy is always correct)."""
        for e in program.eqns:
            rule = e.prim.lower
            if rule is not None and rule.update(e):
                here = self.inplace.get(e)
                inplace[e] = here if inplace.get(e, here) == here else None
        for e, ps in self.copies.items():
            copies.setdefault(e, set()).update(ps)
        for prog, sub in self.subs:
            sub.commit(prog, inplace, copies)


class Ownership:
    """The ownership analysis of one equation, as its row's
    ``lower.ownership`` rule sees it: the roots of its operands, which of
    them it may take over (``transferable``), and the means to analyse its
    sub-Programs and say what it decided (``take``, ``copy``, ``keep``)."""

    def __init__(self, result, j, eqn, operand_roots, candidates, taken):
        self.result, self.j, self.eqn = result, j, eqn
        self.operand_roots = operand_roots
        self._candidates, self._taken = candidates, taken
        self._stand_in, self._back = {}, {}

    def sub_roots(self, p, owned=False):
        """The roots of a sub-Program's input fed by operand ``p``: a buffer
        handed over (``owned``; its origin is ``p``), or stand-ins of the
        operand's roots that own nothing (they keep its aliasing)."""
        if owned:
            return frozenset({Root(True, p)})
        return self.stand_ins(self.operand_roots[p])

    def stand_ins(self, roots):
        found = set()
        for r in roots:
            s = self._stand_in.get(r)
            if s is None:
                s = self._stand_in[r] = Root(False)
                self._back[s] = r
            found.add(s)
        return frozenset(found)

    def back(self, roots, escaped):
        """The roots, in this equation's terms, of a sub-Program value with
        ``roots``: stand-ins are their operands' roots, a buffer handed in by
        operand ``p`` may be any of ``p``'s, and a buffer made inside is one
        that escaped (``escaped``: one shared, unowned root per buffer)."""
        found = set()
        for r in roots:
            if r in self._back:
                found.add(self._back[r])
            elif r.origin is not None:
                found |= self.operand_roots[r.origin]
            else:
                found.add(escaped.setdefault(r, Root(False)))
        return frozenset(found)

    def taken_root(self, p):
        """A new owned root for the buffer operand ``p`` handed over."""
        (root,) = self.operand_roots[p]
        return Root(True, root.origin)

    @staticmethod
    def new_root(owned=True):
        return Root(owned)

    analyze = staticmethod(lambda prog, in_roots: Ownership.analyze(prog, in_roots))

    @staticmethod
    def analyze(prog, in_roots):
        """The ``Result`` of ``prog`` whose inputs have the roots ``in_roots``
        (frozensets of ``Root``): repeated until every ownership it assumed
        holds (an operand handed over is read by nothing later)."""
        denied = set()
        for _ in range(4 * len(prog.eqns) + 4):
            result, bad = _analyze_once(prog, in_roots, denied)
            if not bad:
                return result
            denied |= bad
        raise LoweringError(f"ownership of {prog.name} did not settle")

    def transferable(self, p):
        """Whether operand ``p``'s buffer may be handed over: owned, one
        root, read once by this equation and by no other operand's value."""
        return p in self._candidates

    def take(self, p, consumed=True):
        """Hand operand ``p``'s buffer over (checked afterwards: nothing
        later may read it); ``consumed``: it is written."""
        (root,) = self.operand_roots[p]
        self._taken.append((self.j, p, root))
        if consumed and root.origin is not None:
            self.result.consumed.add(root.origin)
        return root

    def copy(self, p):
        """Copy operand ``p`` before the equation runs (the copy is owned)."""
        self.result.copies.setdefault(self.eqn, set()).add(p)

    def keep(self, prog, result):
        """Keep ``result``, the final analysis of sub-Program ``prog``."""
        self.result.subs.append((prog, result))

    @staticmethod
    def exclusive(outputs, m):
        """Output ``m``'s single root, if it is owned and no other output
        holds it; else None."""
        roots = outputs[m]
        if len(roots) != 1:
            return None
        (root,) = roots
        if not root.owned or any(root in o for k, o in enumerate(outputs) if k != m):
            return None
        return root

    def all_operands(self):
        """Every root an operand has (what an unknown result may share)."""
        return frozenset().union(*self.operand_roots) if self.operand_roots else frozenset()


def _atom_roots(x, roots):
    if isinstance(x, Lit):
        return _literal_roots(x)
    return roots.get(x, frozenset())


def _literal_roots(x):
    """A literal written as ``np.zeros(...)`` (or ``np.full``, ``np.eye``:
    ``Emitter.allocates``) is a new array where it runs (owned); any other
    array literal is a named constant (never)."""
    if not isinstance(x.val, np.ndarray) or x.val.ndim == 0:
        return frozenset()
    return frozenset({Root(Emitter(()).allocates(x.val, x.aval))})


def _analyze_once(prog, in_roots, denied):
    result = Result()
    roots = {}
    for v, r in zip(prog.inputs, in_roots):
        roots[v] = r
    taken = []
    for j, eqn in enumerate(prog.eqns):
        ops = [_atom_roots(x, roots) for x in eqn.inputs]
        cands = set()
        for p, (x, r) in enumerate(zip(eqn.inputs, ops)):
            if (j, p) in denied or len(r) != 1 or not next(iter(r)).owned:
                continue
            if isinstance(x, Var) and sum(1 for y in eqn.inputs if y is x) != 1:
                continue
            if any(r & ops[q] for q in range(len(ops)) if q != p):
                continue
            cands.add(p)
        rule = eqn.prim.lower
        outs = None
        if rule is not None:
            ctx = Ownership(result, j, eqn, ops, cands, taken)
            outs = rule.ownership(eqn, ctx)
            if outs is None:
                outs = _plain(rule, eqn, ctx, result)
        elif list(sub_programs(eqn)):
            outs = _unknown_holder(eqn, ops, result)
        else:
            fresh = _fresh_default(eqn)
            outs = [frozenset({Root(True)}) if fresh else _view(ops) for _ in eqn.outputs]
        for v, r in zip(eqn.outputs, outs):
            roots[v] = r
    result.outputs = [_atom_roots(x, roots) for x in prog.outputs]
    # every handover holds if no value sharing the buffer is read later
    last = {}
    for j, eqn in enumerate(prog.eqns):
        for x in eqn.inputs:
            if isinstance(x, Var):
                last[x] = j
    for x in prog.outputs:
        if isinstance(x, Var):
            last[x] = len(prog.eqns)
    root_last = {}
    for v, rs in roots.items():
        at = last.get(v, -1)
        for r in rs:
            if root_last.get(r, -1) < at:
                root_last[r] = at
    bad = {(j, p) for j, p, r in taken if root_last.get(r, -1) > j}
    return result, bad


def _plain(rule, eqn, ctx, result):
    """A row without sub-Programs: in place when its target may be taken."""
    for p in rule.update(eqn) or ():
        if ctx.transferable(p) and _array(eqn.outputs[0]):
            root = ctx.take(p)
            result.inplace[eqn] = p
            return [frozenset({Root(True, root.origin)})]
    if rule.fresh(eqn):
        return [frozenset({Root(True)}) for _ in eqn.outputs]
    return [_view(ctx.operand_roots) for _ in eqn.outputs]


def _view(ops):
    """The roots of a result that may be a view of any operand: theirs, and
    one of its own that is not owned (a view is never written in place: a
    broadcast one repeats each element and is read-only)."""
    return frozenset().union(*ops) | {Root(False)}


def _unknown_holder(eqn, ops, result):
    """A holder of sub-Programs without an ownership rule (checkpointed
    loops): its sub-Programs own nothing they are given; its results may
    share any operand's memory."""
    for sub in sub_programs(eqn):
        res = Ownership.analyze(sub, [frozenset({Root(False)}) for _ in sub.inputs])
        result.subs.append((sub, res))
    shared = frozenset().union(*ops) | {Root(False)}
    return [shared for _ in eqn.outputs]


def _fresh_default(eqn):
    """A row without a ``lower`` rule: fresh when its impl is a ufunc or its
    code an operator (``emit.fresh``)."""
    return isinstance(eqn.prim.impl, np.ufunc) or getattr(eqn.prim.emit, "fresh", False)


def check(lowered):
    """The imperative form's rules, checked apart from the analysis that
    made the decisions: a Program ``verify`` accepts; an equation written in
    place has a row that says how, and a target read by no later equation
    of its Program, no output of it, no other operand, and no input of the
    whole Program (the caller's array)."""
    verify(lowered.program)
    seen = set()

    def walk(prog, top):
        later = {}
        for j, e in enumerate(prog.eqns):
            for x in e.inputs:
                if isinstance(x, Var):
                    later[x] = j
        outs = {x for x in prog.outputs if isinstance(x, Var)}
        for j, e in enumerate(prog.eqns):
            if e in lowered.inplace:
                seen.add(e)
                rule = e.prim.lower
                p = lowered.inplace[e]
                if rule is None or p not in (rule.update(e) or ()):
                    raise LoweringError(f"{e.prim.name} is written in place but has no "
                                        "in-place form")
                x = e.inputs[p]
                if isinstance(x, Var) and (later.get(x, -1) > j or x in outs
                                           or (top and x in prog.inputs)
                                           or sum(1 for y in e.inputs if y is x) != 1):
                    raise LoweringError(f"{e.prim.name} is written in place, but its target "
                                        "is read afterwards")
            for sub in sub_programs(e):
                walk(sub, False)

    walk(lowered.program, True)


# --- 3. the analyses the code generator asks -------------------------------
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
