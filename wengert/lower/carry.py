"""Lowering, step 1b (``lower.py``): cheaper loops over array elements.
Each is a Program -> Program rewrite that ``verify`` accepts and that
computes the same values (a merged sum to rounding); a loop the proof does
not cover is left as it is.

``merge_sums``: two additions to one element with only additions to
elements between (``A[i, j] += u; A[p, q] += s; A[i, j] += w``, a
stencil's reverse sweep) are one, ``A[i, j] += u + w``: one read and one
write of the element fewer. Additions commute, so this is the sum in
another order (equal to rounding, as ``sink``'s are).

``promote``: a loop whose step reads the element that the step before
added to (the reverse sweep of ``out[i] = out[i - 1] * x[i]``)::

    for k in range(n - 1, -1, -1):          c = -0.0
        r = A[k + 1]                        for k in range(n - 1, -1, -1):
        A[k + 1] = 0.0                          r = A[k + 1] + c
        ...                          ->         ...           (the store of 0.0
        A[k] += v                               c = v          dropped if dead)
                                            if n > 0:
                                                A[0] += c

goes through memory at every step (a store, then the next step's load of
it: on the critical path, and a compiler cannot keep the element in a
register, having no proof that nothing else reads it). Promoted, the
addition waits in the scalar ``c`` and reaches the array when the next
step reads it. The rows' ``lower.promote`` rule (the loop's) asks
``Carried`` for the carries it may promote and for the rewritten body;
the rows' ``lower.element`` rules say which equations read, set or add to
one element (``core/rules.py``). This module names no primitive.

Layer: lower.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, Eqn, Lit, Program, Var
from .sums import map_programs

__all__ = ["promote", "merge_sums", "Carried", "Plan"]

# an offset larger than this is refused: ``k + a`` stays far from int64's wrap
_LARGEST_OFFSET = 2 ** 31


def _element(eqn):
    rule = eqn.prim.lower
    return None if rule is None else rule.element(eqn)


def _uses(prog):
    """Var -> [(eqn or None for an output, operand position)]."""
    uses = {}
    for e in prog.eqns:
        for p, x in enumerate(e.inputs):
            if isinstance(x, Var):
                uses.setdefault(x, []).append((e, p))
    for p, x in enumerate(prog.outputs):
        if isinstance(x, Var):
            uses.setdefault(x, []).append((None, p))
    return uses


# --- merged sums --------------------------------------------------------------
# additions looked back through for a partner: a longer chain (an unrolled
# sweep adding to one element per step) would make the search quadratic;
# beyond it a pair is left unmerged, which only costs a read and a write
_LONGEST_CHAIN = 16

def merge_sums(prog):
    """``prog`` with each addition to an element merged into a later one to
    the same element (the same row, static positions and position operands)
    where a chain of element additions, each read only by the next, links
    the two, at every depth."""
    eqns = [map_programs(e, merge_sums) for e in prog.eqns]
    changed = any(a is not b for a, b in zip(eqns, prog.eqns))
    while True:
        new = _merge_one(Program(prog.inputs, eqns, prog.outputs, prog.name))
        if new is None:
            break
        eqns, changed = new, True
    return Program(prog.inputs, eqns, prog.outputs, prog.name) if changed else prog


def _same_positions(p1, p2):
    """Whether two element positions are the same at every run: the same
    Vars, or equal ints."""
    def const(p):
        return p.val if isinstance(p, Lit) else p

    return len(p1) == len(p2) and all(
        x is y or (not isinstance(x, Var) and not isinstance(y, Var)
                   and type(const(x)) is int and type(const(y)) is int and const(x) == const(y))
        for x, y in zip(p1, p2))


def _merge_one(prog):
    """The equations with one pair of additions merged, or None."""
    uses = _uses(prog)
    producer = {v: e for e in prog.eqns for v in e.outputs}
    for e2 in prog.eqns:
        el2 = _element(e2)
        if el2 is None or el2[0] != "add":
            continue
        link = e2
        for _ in range(_LONGEST_CHAIN):
            t = link.inputs[0]
            e1 = producer.get(t) if isinstance(t, Var) else None
            el1 = None if e1 is None else _element(e1)
            if el1 is None or el1[0] != "add" or len(uses.get(t, ())) != 1:
                break
            if e1.prim is e2.prim and _same_positions(el1[2], el2[2]):
                return _merged(prog.eqns, e1, e2, el1[1], el2[1])
            link = e1
    return None


def _merged(eqns, e1, e2, u, w):
    """``e1`` dropped (its reader reads its target), ``e2`` adding ``u + w``."""
    s = Var(Aval((), e2.outputs[0].aval.dtype), "", e2.outputs[0].role)
    t, x1 = e1.outputs[0], e1.inputs[0]
    out = []
    for e in eqns:
        if e is e1:
            continue
        ins = [x1 if x is t else x for x in e.inputs]
        if e is e2:
            out += [e2.prim.lower.element_sum(u, w, s),
                    Eqn(e.prim, [ins[0], s, *ins[2:]], e.outputs, e.params)]
        elif any(x is t for x in e.inputs):
            out.append(Eqn(e.prim, ins, e.outputs, e.params))
        else:
            out.append(e)
    return out


# --- promoted carries ---------------------------------------------------------
def promote(prog):
    """``prog`` with each loop's carried elements held in scalars (the loop
    rows' ``lower.promote``), at every depth."""
    eqns = [map_programs(e, promote) for e in prog.eqns]
    out, changed = [], any(a is not b for a, b in zip(eqns, prog.eqns))
    for j, e in enumerate(eqns):
        rule = e.prim.lower
        new = None if rule is None else rule.promote(e, Carried(eqns, prog.outputs, j + 1))
        if new is None:
            out.append(e)
        else:
            out += new
            changed = True
    return Program(prog.inputs, out, prog.outputs, prog.name) if changed else prog


class Plan:
    """One carry to promote: its position ``k`` among the carries, the array
    (the body's carry input), the offsets ``a`` (read) and ``b`` (added
    to), the equations ``read`` (``r = A[k + a]``), ``store`` (``A[k + a] =
    s``, or None) and ``add`` (``A[k + b] += v``), the added value ``v``,
    and ``dead``: whether no element the steps read is read after the loop."""

    __slots__ = ("k", "array", "a", "b", "read", "store", "add", "v", "dead")

    def __init__(self, **kw):
        for key, val in kw.items():
            setattr(self, key, val)


class Carried:
    """What a loop row's ``promote`` rule asks: ``plans`` (which carries to
    promote) and ``body`` (the rewritten body). ``later``, ``outputs``: the
    equations after the loop in its Program, and the Program's outputs (to
    prove a store dead).

    What is proven, for a loop over ``k = k_0, k_0 + s, ...`` (``s`` = +1 or
    -1, ``n`` steps) and a carry ``A`` (a 1-D float array) promoted with
    offsets ``a, b >= 0`` (so every position is ``>= 0``: Python reads none
    from the end, and distinct ``k`` give distinct positions):

    * the body reads ``A`` exactly twice: an element read ``r = A[k + a]``
      and either a store ``A1 = A[k + a] := s`` (any value) or the addition
      below; ``A1`` only by the addition ``A2 = A1[k + b] += v`` (``v`` of
      ``A``'s dtype, so stored unrounded), and ``A2`` is the carry's new
      value and nothing else; so ``v`` depends on ``A`` only through ``r``;
    * ``b = a + s``: the element added to at step ``t`` is the one read at
      step ``t + 1``, and no other step reads or writes it (positions ``k_u
      + a`` and ``k_u + b`` differ for every other step ``u``).

    Then with ``c_0 = -0.0`` (the identity of IEEE addition: ``x + -0.0`` is
    ``x``, signed zeros included) the promoted step ``r = A[k + a] + c; (the
    store); c = v`` keeps the invariant: the array equals the original's but
    at position ``k_t + a``, where the original holds ``B[k_t + a] + c_t``
    (at ``t = 0`` the same value; later the sum the original's addition
    computed, from the same two operands). So each ``r`` is the original's,
    bit for bit, and after the loop ``A[k_n + a] += c`` (``k_n + a`` is the
    last step's ``k + b``: ``b`` for a loop going down, which ends at ``k =
    0``, ``n - 1 + b`` going up) gives the original's array; it runs only if
    a step ran (``n > 0``), so a loop of no steps touches no element. A
    position out of bounds still raises: each ``k + b`` is read by the next
    step or by the write-back. Without a store the step writes ``r`` back
    (``A[k + a] = r``), as the original left it.

    A store is *dead* (dropped, or not added) when nothing reads an element
    ``k_t + a`` after step ``t``: later steps read other positions, and after
    the loop every reader of the loop's array reads (or sets, or adds to,
    whose result is read in the same way) one element at a literal position
    ``0 <= p < a``, which no step wrote; the array is no output of the
    Program. The same proof drops the stores of a carry that a step only
    reads and stores into at ``k + a`` (``dead_stores``). Every other loop
    is left as it is."""

    def __init__(self, eqns=(), outputs=(), start=0):
        # the equations after the loop are ``eqns[start:]``, sliced only when
        # a proof asks (every row with a lower rule is given one)
        self._eqns, self._start, self.outputs = eqns, start, outputs

    @property
    def later(self):
        return self._eqns[self._start:]

    def plans(self, body, counter, step, carry_in, carry_new):
        """The ``Plan`` of each carry that may be promoted (``counter``: the
        body's loop index; ``step``: +1 or -1)."""
        offsets = _offsets(body, counter)
        uses = _uses(body)
        found = []
        for k, (a_in, new) in enumerate(zip(carry_in, carry_new)):
            plan = _plan(k, a_in, new, step, offsets, uses)
            if plan is not None:
                found.append(plan)
        return found

    def dead(self, plan, out):
        """Whether the elements the steps read are read by nothing after
        the loop (``out``: the loop's result for the carry)."""
        return _unread(out, plan.a, self.later, self.outputs)

    def dead_stores(self, body, counter, carry_in, carry_new, carry_out):
        """{carry position: store} of the carries a step only reads and
        stores into at one position ``k + a`` (``r = A[k + a]; A[k + a] =
        0.0``, the carry's new value), whose stores are dead: no other step
        reads that position, and after the loop nothing reads a position
        the steps stored into (``_unread``). Dropped, the carry is the same
        array in every step."""
        offsets, uses = _offsets(body, counter), _uses(body)
        found = {}
        for k, (a_in, new, out) in enumerate(zip(carry_in, carry_new, carry_out)):
            readers = uses.get(a_in, [])
            if len(a_in.aval.shape) != 1 or len(readers) != 2 \
                    or any(e is None or p != 0 for e, p in readers):
                continue
            els = {(_element(e) or ("other",))[0]: (e, _element(e)) for e, _ in readers}
            if set(els) != {"read", "set"}:
                continue
            (read, el_r), (store, el_s) = els["read"], els["set"]
            a = _offset(el_r[2], offsets)
            if a is None or a < 0 or _offset(el_s[2], offsets) != a \
                    or store.outputs[0] is not new or len(uses.get(new, [])) != 1:
                continue
            if _unread(out, a, self.later, self.outputs):
                found[k] = store
        return found

    @staticmethod
    def body(body, plans, carry_new):
        """(equations, the scalars' inputs, their new values, the carries'
        new values) of the promoted body."""
        eqns, c_in, c_new = list(body.eqns), [], []
        carry_new = list(carry_new)
        for plan in plans:
            a_var, r = plan.array, plan.read.outputs[0]
            c = Var(Aval((), a_var.aval.dtype), a_var.name, a_var.role)
            m = Var(r.aval, r.name, r.role)
            rule = plan.add.prim.lower
            at = eqns.index(plan.read)
            pos = plan.read.inputs[1:]
            lines = [Eqn(plan.read.prim, plan.read.inputs, [m], plan.read.params),
                     rule.element_sum(m, c, r)]
            if plan.store is not None and not plan.dead:
                result = plan.store.outputs[0]
            elif plan.store is None and not plan.dead:
                result = Var(a_var.aval, a_var.name, a_var.role)
                lines.append(rule.element_store(a_var, r, pos[0], result))
            else:
                result = a_var
            eqns[at:at + 1] = lines
            eqns.remove(plan.add)
            if plan.store is not None and plan.dead:
                eqns.remove(plan.store)
            carry_new[plan.k] = result
            c_in.append(c)
            c_new.append(plan.v)
        return eqns, c_in, c_new, carry_new


def _offsets(body, counter):
    """Var -> ``a`` for the body's ints ``counter + a`` (the counter: 0), by
    the rows' ``algebra.offset`` (``k + 1``, ``k - 1``, ``1 + k``)."""
    found = {counter: 0}
    for e in body.eqns:
        algebra = e.prim.algebra
        if algebra is None or not algebra.offset or len(e.inputs) != 2 or len(e.outputs) != 1:
            continue
        out = e.outputs[0]
        if out.aval.shape != () or not (out.aval.weak or out.aval.dtype == np.int64):
            continue        # a narrower int may wrap
        x, y = e.inputs
        if isinstance(x, Var) and x in found and type(y) is Lit and type(y.val) is int:
            c = found[x] + algebra.offset * y.val
        elif algebra.offset > 0 and isinstance(y, Var) and y in found and type(x) is Lit \
                and type(x.val) is int:
            c = found[y] + x.val
        else:
            continue
        if abs(c) < _LARGEST_OFFSET:
            found[out] = c
    return found


def _offset(positions, offsets):
    """``a`` of a one-axis position ``counter + a``, else None."""
    if len(positions) != 1 or not isinstance(positions[0], Var):
        return None
    return offsets.get(positions[0])


def _plan(k, a_in, new, step, offsets, uses):
    aval = a_in.aval
    if len(aval.shape) != 1 or aval.dtype.kind != "f" or aval.weak:
        return None
    readers = uses.get(a_in, [])
    if len(readers) != 2 or any(e is None or p != 0 for e, p in readers):
        return None
    kinds = {}
    for e, _ in readers:
        el = _element(e)
        if el is None or el[0] in kinds:
            return None
        kinds[el[0]] = (e, el)
    if "read" not in kinds or len(kinds) != 2:
        return None
    read, (_, _, pos_r) = kinds["read"]
    store = None
    if "set" in kinds:
        store, (_, _, pos_s) = kinds["set"]
        if _offset(pos_s, offsets) is None or _offset(pos_s, offsets) != _offset(pos_r, offsets):
            return None
        s_out = store.outputs[0]
        after = uses.get(s_out, [])
        if len(after) != 1 or after[0][0] is None or after[0][1] != 0:
            return None
        add = after[0][0]
        el = _element(add)
    elif "add" in kinds:
        add, el = kinds["add"]
    else:
        return None
    if el is None or el[0] != "add" or add.outputs[0] is not new:
        return None
    if [u for u in uses.get(new, []) if u[0] is not None] or len(uses.get(new, [])) != 1:
        return None
    a, b = _offset(pos_r, offsets), _offset(el[2], offsets)
    if a is None or b is None or a < 0 or b < 0 or b != a + step:
        return None
    return Plan(k=k, array=a_in, a=a, b=b, read=read, store=store, add=add, v=el[1],
                dead=False)


def _unread(var, a, later, outputs):
    """Whether every reader of ``var`` among ``later`` reads, sets or adds to
    one element at a literal position in ``[0, a)`` (following a set's or an
    addition's result), and ``var`` is no output."""
    if any(x is var for x in outputs):
        return False
    for e in later:
        if not any(x is var for x in e.inputs):
            continue
        el = _element(e)
        if el is None or e.inputs[0] is not var or sum(1 for x in e.inputs if x is var) != 1:
            return False
        pos = el[2]
        if len(pos) != 1:
            return False
        p = pos[0].val if isinstance(pos[0], Lit) else pos[0]
        if type(p) is not int or not 0 <= p < a:
            return False
        if el[0] != "read" and not _unread(e.outputs[0], a, later, outputs):
            return False
    return True
