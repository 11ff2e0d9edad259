"""Lowering, step 1 (``lower.py``): sums moved into their accumulators,
values a branch recomputes read from before it, and reads of an update's
target scheduled before the update. Each is a Program -> Program rewrite
that ``verify`` accepts and that computes the same values (sums to
rounding).

Layer: lower.
"""
from __future__ import annotations

import numpy as np

from ..core.lengths import linear_form
from ..core.ir import Lit, Program, Var, acts, sub_programs
from ..core.ir import atom_key, dce, eqn_key

__all__ = ["map_programs", "Sink", "sink", "assemble", "share_outer_values", "schedule"]


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
    return eqn.replace(eqn.inputs, eqn.outputs, params) if changed else eqn


class Sink:
    """What a row's ``absorb`` rule may ask while sums move into their
    accumulators: ``program`` sinks the sums of a new sub-Program,
    ``zero(x)`` whether an atom is a literal of zeros, ``absorbable(x)``
    whether a value's producer would take an accumulator, ``fits(x, out)``
    whether ``x`` has ``out``'s shape and dtype, ``add(a, b, out)``
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
        return [self.sum_eqn.replace([a, b], [out], {})], out

    @staticmethod
    def program(prog):
        return sink(prog)

    @staticmethod
    def zero(x):
        return isinstance(x, Lit) and isinstance(x.val, (np.ndarray, np.generic, float, int)) \
            and not isinstance(x.val, bool) and np.ndim(x.val) >= 0 \
            and np.asarray(x.val).dtype.kind in "fc" and not np.asarray(x.val).any()

    @staticmethod
    def fits(x, out):
        """Whether ``x`` can stand for ``out``: the same shape and dtype."""
        return x.aval.shape == out.aval.shape and x.aval.dtype == out.aval.dtype

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
    # a scaled placement absorbed (``ScaleLower``) leaves the placement
    # unread when nothing else read it
    return dce(Program(prog.inputs, eqns, prog.outputs, prog.name))


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
                    or not Sink.fits(acc, out):
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


def assemble(prog):
    """``prog`` with each chain of updates that adds values to whole-row
    blocks of a literal of zeros, blocks that tile its first axis, made by
    the rows' ``lower.assemble`` instead (``np.concatenate``): the
    transpose of a concatenation or a stack, ``ct = np.zeros(n); ct[0:b] +=
    u; ct[b:n] += w`` is ``ct = np.concatenate((u, w))``, with no zeros and
    no adds. Bounds are compared as ``dims.linear_form``s, equal at every
    size. Each position receives one value, so the result is the same."""
    eqns = [map_programs(e, assemble) for e in prog.eqns]
    uses = {}
    for e in eqns:
        for x in e.inputs:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
    for x in prog.outputs:
        if isinstance(x, Var):
            uses[x] = uses.get(x, 0) + 1
    producer = {v: e for e in eqns for v in e.outputs}
    replaced, dropped = {}, set()
    for e in reversed(eqns):
        if e in dropped or e.prim.lower is None or e.prim.lower.region(e) is None:
            continue
        chain, link = [e], e
        while True:
            base = link.inputs[0]
            if Sink.zero(base) and Sink.fits(base, link.outputs[0]):
                break
            prev = producer.get(base) if isinstance(base, Var) else None
            if prev is None or uses.get(base) != 1 or prev.prim is not e.prim \
                    or prev.params.keys() != e.params.keys() or prev.prim.lower.region(prev) is None:
                chain = None
                break
            chain.append(prev)
            link = prev
        if chain is None or len(chain) < 2:
            continue
        pieces = _tiling([(*c.prim.lower.region(c), c.inputs[1]) for c in chain],
                         e.outputs[0].aval.shape[0])
        new = None if pieces is None else e.prim.lower.assemble(pieces, e.outputs[0])
        if new is None:
            continue
        replaced[e] = new
        dropped.update(chain[1:])
    if not replaced:
        return prog if all(a is b for a, b in zip(eqns, prog.eqns)) else \
            Program(prog.inputs, eqns, prog.outputs, prog.name)
    out = []
    for e in eqns:
        if e in dropped:
            continue
        out += replaced.get(e, [e])
    return Program(prog.inputs, out, prog.outputs, prog.name)


def _tiling(pieces, n):
    """``pieces`` (``(start, stop, value)``) in order when they tile ``0:n``
    exactly, at every size; else None."""
    form = linear_form
    if any(form(a) is None or form(b) is None for a, b, _ in pieces) or form(n) is None:
        return None
    order, at = [], form(0)
    left = list(pieces)
    while left:
        nxt = [p for p in left if form(p[0]) == at]
        if len(nxt) != 1 or form(nxt[0][1]) == at:
            return None
        order.append(nxt[0])
        left.remove(nxt[0])
        at = form(nxt[0][1])
    return order if at == form(n) else None


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
            kept.append(e if ins == list(e.inputs) else e.replace(ins, e.outputs, e.params))
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
