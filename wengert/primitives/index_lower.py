"""The ``lower`` rules of the indexing rows (``index.py``): what
``backends/lower.py`` needs to write ``x[i] += v``, ``x[i] = v`` and
``x[i]`` imperatively (in place, absorbing sums, one element at a time)."""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from ..core.ir import Aval, Eqn, Var
from .arith import add_p
from .index import DYN, concatenate_p, getitem_p, index_add_p, index_set_p
from ..core.rules import FRESH, LowerRule
from .shape import reshape_p


def _basic(eqn):
    """A basic index: no index array, scalar dynamic positions (``x[i] += v``
    then meets each position once, as ``np.add.at`` would)."""
    return not any(isinstance(p, np.ndarray) for p in eqn.params["idx"]) \
        and all(x.aval.shape == () for x in eqn.inputs[2:])


def _element_positions(eqn, first):
    """The positions of a one-element access (``LowerRule.element``): per
    axis of the array, its dynamic operand (operands from ``first`` on, int
    scalars) or its static int; None if the index is anything else."""
    x, idx = eqn.inputs[0], eqn.params.get("idx")
    if set(eqn.params) != {"idx"} or not isinstance(idx, tuple) or not x.aval.shape \
            or len(idx) != len(x.aval.shape) or None in x.aval.shape:
        return None
    dyn = list(eqn.inputs[first:])
    if sum(p is DYN for p in idx) != len(dyn) \
            or any(d.aval.shape != () or d.aval.dtype.kind not in "iu" for d in dyn):
        return None
    found, it = [], iter(dyn)
    for p in idx:
        if p is DYN:
            found.append(next(it))
        elif type(p) is int:
            found.append(p)
        else:
            return None
    return tuple(found)


class GetitemLower(LowerRule):
    """A scalar element or an index array's gather is a new value; a basic
    slice is a view of the operand."""

    def fresh(self, eqn):
        return eqn.outputs[0].aval.shape == () or not _basic(eqn)

    def element(self, eqn):
        pos = _element_positions(eqn, 1)
        return None if pos is None else ("read", None, pos)


def _nonnegative(d):
    """Whether a bound is an int or a length that is at least 0 at every
    size (``dims.linear_form`` with no negative part): Python reads it as
    the position it is, never from the end."""
    form = _dims.linear_form(d)
    return form is not None and form[1] >= 0 and all(c > 0 for c in form[0].values())


class UpdateLower(LowerRule):
    """``x[idx] += v`` (``np.add.at`` for index arrays) or ``x[idx] = v`` on
    ``x`` itself when nothing reads ``x`` afterwards; else a new array."""

    def __init__(self, op, absorbs):
        self.op, self.absorbs = op, absorbs

    def fresh(self, eqn):
        return True

    def update(self, eqn):
        x, v = eqn.inputs[0], eqn.inputs[1]
        if set(eqn.params) != {"idx"} or not x.aval.shape or x.aval.dtype != eqn.outputs[0].aval.dtype:
            return ()
        if not np.can_cast(v.aval.dtype, x.aval.dtype, "same_kind") \
                or not all(d.aval.dtype.kind in "iu" for d in eqn.inputs[2:]):
            return ()
        return (0,)

    def inplace(self, code, eqn, ins, py, outs, p):
        return eqn.prim.emit.functional(code, eqn, ins, py, outs[0], inplace=True)

    def element(self, eqn):
        """One element set or added to, by a value of the array's dtype (a
        Python float into a float64 array), which is stored as it is."""
        x, v = eqn.inputs[0], eqn.inputs[1]
        pos = _element_positions(eqn, 2)
        if pos is None or v.aval.shape != () or v.aval.dtype != x.aval.dtype:
            return None
        return ("add" if self.absorbs else "set", v, pos)

    @staticmethod
    def element_sum(a, b, out):
        """``out = a + b``: what ``x[i] += v`` computes for one element."""
        return Eqn(add_p, (a, b), (out,), {})

    @staticmethod
    def element_store(x, v, position, out):
        """``out = x`` with ``v`` stored at ``position`` (one axis)."""
        dyn = not isinstance(position, int)
        return Eqn(index_set_p, (x, v, position) if dyn else (x, v), (out,),
                   {"idx": (DYN if dyn else position,)})

    def accumulates(self, eqn):
        return (0,) if self.absorbs else ()

    def placed(self, eqn, sink):
        """``index_add(0, v, i)``: ``v`` at ``i``, zeros elsewhere."""
        return 1 if self.absorbs and sink.zero(eqn.inputs[0]) \
            and sink.fits(eqn.inputs[0], eqn.outputs[0]) else None

    def region(self, eqn):
        """``(start, stop)`` along the first axis when the update adds ``v``
        to a block of whole rows (``x[a:b] += v`` with ``v`` of that block's
        shape, ``x[k] += v``), bounds as lengths (``dims``); else None."""
        x, v = eqn.inputs[0], eqn.inputs[1]
        idx = eqn.params.get("idx")
        if not self.absorbs or set(eqn.params) != {"idx"} or len(eqn.inputs) != 2 \
                or not isinstance(idx, tuple) or len(idx) != 1 or not x.aval.shape \
                or v.aval.dtype != x.aval.dtype or None in x.aval.shape:
            return None
        n, p, rest = x.aval.shape[0], idx[0], tuple(x.aval.shape[1:])
        if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
            if tuple(v.aval.shape) != rest or not _nonnegative(p):
                return None
            return p, p + 1
        if isinstance(p, slice) and p.step in (None, 1) and len(v.aval.shape) == len(rest) + 1 \
                and tuple(v.aval.shape[1:]) == rest:
            start = 0 if p.start is None else p.start
            stop = n if p.stop is None else p.stop
            if _nonnegative(start) and _nonnegative(stop):
                return start, stop
        return None

    def assemble(self, pieces, out):
        """Equations making ``out`` from whole-row blocks that tile its first
        axis in order (``pieces``: ``(start, stop, v)``, ``v`` a block or,
        for one row, the row itself): one concatenation, a row given the
        block's shape first."""
        eqns, parts = [], []
        rest = tuple(out.aval.shape[1:])
        for start, stop, v in pieces:
            if len(v.aval.shape) == len(rest):
                w = Var(Aval((1,) + rest, v.aval.dtype), "", out.role)
                eqns.append(Eqn(reshape_p, [v], [w], {"shape": (1,) + rest}))
                v = w
            parts.append(v)
        if len(parts) == 1:
            return None
        return eqns + [Eqn(concatenate_p, parts, [out], {"axis": 0})]

    def absorb(self, eqn, k, acc, out, sink):
        """``acc + index_add(0, v, i)`` is ``index_add(acc, v, i)``; ``acc +
        index_add(b, v, i)``, where ``b`` takes an accumulator itself, is
        ``index_add(acc + b, v, i)``."""
        base = eqn.inputs[0]
        if not self.absorbs or not (sink.zero(base) or sink.absorbable(base)) \
                or not sink.fits(base, out):
            return None
        if acc is None:
            return []
        new, t = sink.add(acc, base, Var(out.aval, out.name, out.role))
        return new + [Eqn(eqn.prim, [t, *eqn.inputs[1:]], [out], eqn.params)]


getitem_p.lower = GetitemLower()
index_add_p.lower = UpdateLower("+=", absorbs=True)
index_set_p.lower = UpdateLower("=", absorbs=False)
concatenate_p.lower = FRESH
