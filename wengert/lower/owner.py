"""Lowering, step 2 (``lower.py``): which arrays the code owns, and so
which updates it may write in place. ``Ownership.analyze`` gives a
Program's ``Result``; the rows' ``lower.ownership`` rules pass ownership
through their sub-Programs with the ``Ownership`` context they are given.

Layer: lower.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Lit, Var, sub_programs
from ..core.literals import allocates

__all__ = ["LoweringError", "Root", "Result", "Ownership"]


class LoweringError(AssertionError):
    """A lowering decision that breaks the imperative form's rules (a bug)."""


class Root:
    """One buffer the code may hold: ``owned`` if the code may write it;
    ``origin`` the input position of the Program it came in by, if any;
    ``foreign`` if it is memory the caller can see (an argument, a constant
    of the code, a global read at run time, what a call made at run time
    returned): an output holding it is copied (``lower.fresh_outputs``)."""

    __slots__ = ("owned", "origin", "foreign")

    def __init__(self, owned, origin=None, foreign=False):
        self.owned, self.origin, self.foreign = owned, origin, foreign

    def __repr__(self):
        return (f"Root({'owned' if self.owned else 'shared'}, {self.origin}"
                f"{', foreign' if self.foreign else ''})")


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
                found.add(escaped.setdefault(r, Root(False, foreign=r.foreign)))
        return frozenset(found)

    def taken_root(self, p):
        """A new owned root for the buffer operand ``p`` handed over."""
        (root,) = self.operand_roots[p]
        return Root(True, root.origin)

    @staticmethod
    def new_root(owned=True):
        return Root(owned)

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
    ``literals.allocates``) is a new array where it runs (owned); any other
    array literal is a named constant (never)."""
    if not isinstance(x.val, np.ndarray) or x.val.ndim == 0:
        return frozenset()
    made = allocates(x.val, x.aval)
    return frozenset({Root(made, foreign=not made)})


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
            fresh = _fresh_default(eqn) and not eqn.prim.runtime
            outs = [frozenset({Root(True)}) if fresh else _view(ops, eqn.prim.runtime)
                    for _ in eqn.outputs]
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


def _view(ops, outside=False):
    """The roots of a result that may be a view of any operand: theirs, and
    one of its own that is not owned (a view is never written in place: a
    broadcast one repeats each element and is read-only); that one is the
    caller's memory where no operand has a root (a read of a global, a call
    made at run time: ``outside``)."""
    union = frozenset().union(*ops)
    return union | {Root(False, foreign=outside or not union)}


def _unknown_holder(eqn, ops, result):
    """A holder of sub-Programs without an ownership rule (checkpointed
    loops): its sub-Programs own nothing they are given; its results may
    share any operand's memory."""
    foreign = False
    for sub in sub_programs(eqn):
        res = Ownership.analyze(sub, [frozenset({Root(False)}) for _ in sub.inputs])
        result.subs.append((sub, res))
        foreign = foreign or any(r.foreign for rs in res.outputs for r in rs)
    shared = frozenset().union(*ops) | {Root(False, foreign=foreign)}
    return [shared for _ in eqn.outputs]


def _fresh_default(eqn):
    """A row without a ``lower`` rule: fresh when its impl is a ufunc or its
    code an operator (``emit.fresh``)."""
    return isinstance(eqn.prim.impl, np.ufunc) or getattr(eqn.prim.emit, "fresh", False)
