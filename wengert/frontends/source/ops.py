"""What converted code calls (through ``source.runtime``, its ``__wg``),
except calls: reading a variable, the boolean operators and conditional
expressions, subscripts, ranges over traced or symbolic lengths, and ``if``
statements, staged as ``cond`` where the test is traced.

Each helper runs plain Python when its deciding value is a Python value
(loop counters, shapes, flags), and records a structured equation when it is
traced. Structured constructs are staged from the user's blocks, which the
converter turned into functions of the variables they assign (``state``).

Layer: frontends.
"""
from __future__ import annotations

import builtins
import threading

import numpy as np

from ...core import dims
from ...core.errors import (
    ConcretizationError, NonDifferentiableInputError, UnsupportedSyntax, user_location)
from ...core.ir import Program, Var, aval_of
from ...primitives import arith, index as index_mod, ordering, scatter, selection
from ... import control
from ...control.checkpoint_loop import checkpointed
from ...numpy import lists as numpy_lists
from ...core.primitive import TracerBase
from ...core.inplace import array_value, is_scalar, needs_cast
from ...core.trace import effects_made, set_current
from ...core.staging import StagingTrace, name_value
from ...core.pytree import flatten
from .env import concrete
from .blocks import Block, Undefined, assemble, merge_pyvalues
from .specs import join_spec, n_leaves, same_spec

# what a block raises when it needs a Python value where it got a traced one
NEEDS_CONCRETE = (ConcretizationError, NonDifferentiableInputError, IndexError, TypeError)

__all__ = ["UNDEF", "read", "named", "is_", "not_", "and_", "or_", "none_of", "ifexp", "getitem",
           "setitem", "if_stmt", "guard_stmt", "TracedRange", "DimRange"]


UNDEF = Undefined()


def read(locs, name):
    return locs.get(name, Undefined(name))


def named(value, name):
    """Give a recorded value the user's variable name (for printed code)."""
    return name_value(value, name)


def is_traced(x):
    return isinstance(x, TracerBase)


def any_traced(xs):
    return any(isinstance(x, TracerBase) for x in flatten(list(xs))[0])


# --- boolean operators and conditional expressions ---------------------------

def is_(a, b):
    """``a is b`` of the values themselves (an outside object's proxy is not
    the object); of a value unknown here (``Undefined``), the error."""
    for x in (a, b):
        if isinstance(x, Undefined):
            x.fail()
    return concrete(a) is concrete(b)


def not_(x):
    return ordering.logical_not(x) if is_traced(x) else not x


def _all_evaluated(thunks, what):
    """The values of ``thunks``, each evaluated: what ``and``, ``or`` and ``x if
    c else y`` do when the deciding value is traced (they become selects).
    A call with an effect among them (a random draw) would then be made on
    every path, so it is refused."""
    before = effects_made()
    vals = [t() for t in thunks]
    if effects_made() != before and not _LOOK.depth:
        raise UnsupportedSyntax(
            f"a call with an effect (a random draw, I/O) inside {what} whose condition depends "
            "on a traced value: both sides are computed, so it would be made on every path; "
            "make the call before, or use an if statement", construct=f"effect inside {what}")
    return vals


class _Look(threading.local):
    depth = 0       # > 0 while _with_effects looks at thunks (this thread)


_LOOK = _Look()


def _with_effects(thunks):
    """Whether evaluating ``thunks`` makes a call with an effect (a random
    draw), found on a first look whose recording is thrown away. Within a
    look, a nested ``and``/``or``/``x if c else y`` evaluates all its parts
    at once (their draws are counted all the same): looking again at each
    level would cost twice per level of nesting."""
    if _LOOK.depth:
        return False
    before = effects_made()
    _LOOK.depth += 1
    try:
        probe(lambda: [t() for t in thunks])
    finally:
        _LOOK.depth -= 1
    return effects_made() != before


def _branch(test, if_true, if_false, what):
    """``if_true() if test else if_false()`` on a traced test, as a branch:
    only the path taken is computed at run time (so its draws only)."""
    out, = if_stmt(test, lambda: (if_true(),), lambda: (if_false(),), (), ("__wg_value",),
                   what)
    return out


def _unmarked(thunk, marks):
    """``thunk`` giving the test of ``wg.checkpointed(test)`` in place of the
    marker, which goes to ``marks``."""
    def run():
        v = thunk()
        if isinstance(v, checkpointed):
            marks.append(v)
            return v.iterable
        return v
    return run


def and_(*thunks):
    """``a and b``. A loop's test ``wg.checkpointed(a) and b`` (or a
    ``while`` with ``break``: ``not brk and test``) stays marked: the marker
    wraps the whole test."""
    marks = []
    out = _and(*[_unmarked(th, marks) for th in thunks])
    return checkpointed(out, marks[0].schedule) if marks else out


def or_(*thunks):
    """``a or b``, marked as ``and_``'s is."""
    marks = []
    out = _or(*[_unmarked(th, marks) for th in thunks])
    return checkpointed(out, marks[0].schedule) if marks else out


def _and(*thunks):
    val = True
    for k, th in enumerate(thunks):
        v = th()
        if is_traced(v):
            if k + 1 < len(thunks) and _with_effects(thunks[k + 1:]):
                # ``a and b``: b (and its draws) only where a holds
                return _branch(v, lambda: _and(*thunks[k + 1:]), lambda: v, "'and'")
            rest = _all_evaluated(thunks[k + 1:], "'and'")
            out = v
            for r in rest:
                out = ordering.logical_and(out, r)
            return out if val is True else ordering.logical_and(val, out)
        if not v:
            return v
        val = v
    return val


def _or(*thunks):
    val = False
    for k, th in enumerate(thunks):
        v = th()
        if is_traced(v):
            if k + 1 < len(thunks) and _with_effects(thunks[k + 1:]):
                return _branch(v, lambda: v, lambda: _or(*thunks[k + 1:]), "'or'")
            out = v
            for r in _all_evaluated(thunks[k + 1:], "'or'"):
                out = ordering.logical_or(out, r)
            return out
        if v:
            return v
        val = v
    return val


def none_of(*flags):
    return not_(or_(*[(lambda f=f: f) for f in flags]))


def ifexp(c, a, b):
    if is_traced(c) and _with_effects((a, b)):
        return _branch(c, a, b, "'x if c else y'")
    if is_traced(c):
        # both sides are computed; the select keeps the derivative of the taken one
        return selection.where(c, *_all_evaluated((a, b), "'x if c else y'"))
    return a() if c else b()


# --- subscripts ------------------------------------------------------------------

def getitem(x, idx):
    if isinstance(x, numpy_lists.CONCATENATORS) and any_traced(
            idx if isinstance(idx, tuple) else (idx,)):
        return numpy_lists.concatenator_getitem(x, idx)     # np.r_[a, b], np.c_[a, b]
    if not is_traced(x) and isinstance(x, np.ndarray) and any_traced(
            idx if isinstance(idx, tuple) else (idx,)):
        return index_mod.getitem(x, idx)       # a constant array read at a traced position
    if not is_traced(x):
        # a Python list or a constant read at a symbolic position (an int
        # input, a length): the item found is this position's only
        dims.pin(idx)
    return x[idx]


def setitem(x, idx, v):
    """``x[idx] = v`` as a new value: nothing the caller holds is written
    (a list or a dict: a new one, with the item replaced or added)."""
    if type(x) is list or type(x) is dict:
        out = type(x)(x)
        out[idx] = v
        return out
    if is_traced(x) or is_traced(v) or any_traced(idx if isinstance(idx, tuple) else (idx,)):
        return scatter.index_set(x, v, idx)
    out = np.array(x, copy=True)
    out[idx] = v
    return out


def augmented(old, new, symbol="+"):
    """``y op= v`` of a name, converted to ``y = augmented(y, y op v, op)``.
    Of a scalar, Python bound a new scalar: ``new``. Of an array, NumPy wrote
    ``y op v`` into ``y``, so the new value has ``y``'s shape and dtype (cast
    by NumPy's ``same_kind`` rule: a float32 ``y += x64`` stays float32), or
    raises where NumPy does (``inplace.needs_cast``); where ``y`` was a 0-d
    array it is still one (a later ``z = y; y += w`` writes into it again)."""
    if not (isinstance(old, np.ndarray) or is_traced(old) and not is_scalar(old)):
        return new
    if not (isinstance(new, (TracerBase, np.ndarray)) or np.isscalar(new)):
        return new
    (y_shape, y_dtype), (r_shape, r_dtype) = (
        (aval_of(x).shape, aval_of(x).dtype) if is_traced(x) else (np.shape(x), np.asarray(x).dtype)
        for x in (old, new))
    if needs_cast(y_shape, y_dtype, r_shape, r_dtype, symbol, user_location()):
        new = arith.convert(new, dtype=y_dtype) if is_traced(new) else \
            np.asarray(new).astype(y_dtype)
    if not r_shape:
        return array_value(new)     # a concrete one too: y + 1.0 of np.zeros(()) is a scalar
    return new


# --- a first look that leaves no equations ---------------------------------------
def probe(fn, *args):
    """``fn(*args)`` recorded into a Program that is thrown away: a first look
    at a value (is a loop's condition traced?) that, if traced, is computed
    again where it belongs, so the calls with an effect it makes (a random
    draw) must not stay in the enclosing Program. A traced result is only
    good for telling that it is traced."""
    trace = StagingTrace(dynamic=True)
    with set_current(trace):
        return fn(*args)


class TracedRange:
    """``range`` with a traced bound: only iterable by a structured loop."""

    def __init__(self, *args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            (args[0], args[1], 1) if len(args) == 2 else args)
        if is_traced(step):
            raise UnsupportedSyntax("range with a traced step is not supported; use a step "
                                    "that does not depend on differentiated values")
        self.start, self.stop, self.step = start, stop, step


class DimRange:
    """``range`` over a symbolic length (``range(x.shape[0])``): a structured
    loop's trip count stays that length; iterated directly, a Python range."""

    def __init__(self, *args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            (args[0], args[1], 1) if len(args) == 2 else args)
        self.start, self.stop, self.step = start, stop, step
        self.range = builtins.range(int(start), int(stop), int(step))

    def __len__(self):
        return len(self.range)

    def __iter__(self):
        return iter(self.range)

    def length(self):
        """The trip count, symbolic where the range is from 0 or by 1."""
        start, stop, step = self.start, self.stop, self.step
        if step == 1:
            return stop - start if stop >= start else 0
        return len(self.range)


class TracedSequence:
    """``enumerate(x)`` / ``zip(a, b)`` over traced arrays, for ``for_stmt``
    (structured), or iterated directly (a comprehension: element by element)."""

    def __init__(self, kind, args, kw):
        self.kind, self.kw = kind, kw
        if kind is builtins.enumerate:
            # enumerate(x, start): the count starts at a Python int
            self.args = args[:1]
            self.start = args[1] if len(args) > 1 else kw.get("start", 0)
            if is_traced(self.start):
                raise UnsupportedSyntax("enumerate with a start that depends on differentiated "
                                        "values is not supported; add the offset in the body")
        else:
            self.args, self.start = args, 0

    def __iter__(self):
        return iter(python_iterable(self))


# --- staging a block as a Program ---------------------------------------------------

def guard_stmt(test, true_fn, false_fn, state, names, lineno):
    """``if not exited: ...``, the statements after a ``return``, ``break`` or
    ``continue`` (the converter's guard): a variable they assign is defined on
    the path that did not exit, and read on that path only."""
    return if_stmt(test, true_fn, false_fn, state, names, lineno, guard=True)


def if_stmt(test, true_fn, false_fn, state, names, lineno, guard=False):
    if not is_traced(test):
        return true_fn(*state) if test else false_fn(*state)
    where = lineno
    fns = ((false_fn, "false"), (true_fn, "true"))
    blocks = [Block(fn, [], state, names, f"if_{tag}", where=where)
              for fn, tag in fns]
    merged = merge_pyvalues(names, [b.out_info for b in blocks], where)
    # outputs: a name that is an operand in both branches; specs joined. A
    # variable still unassigned on the other path is an operand too, filled
    # with zeros there, where it is the return value (set on the paths that
    # return) or assigned by a guard: those paths never read it
    exited = [b.exits for b in blocks]
    for k, nm in enumerate(names):
        infos = [b.out_info[k] for b in blocks]
        if merged[k][0] == "undef" and any(kd == "op" for kd, _ in infos) and all(
                isinstance(v, Undefined) and v.name in (nm, "") and (
                    nm == "__wg_ret" or guard or gone)
                for (kd, v), gone in zip(infos, exited) if kd == "py"):
            merged[k] = ("op", None)
    op_names = [k for k, (kd, _) in enumerate(merged) if kd == "op"]
    specs = {}
    for k in op_names:
        s0, s1 = (b.out_info[k][1] if b.out_info[k][0] == "op" else None for b in blocks)
        s0, s1 = (s1, s1) if s0 is None else ((s0, s0) if s1 is None else (s0, s1))
        specs[k] = join_spec(s0, s1, f"{where}: {names[k]!r}")
    coerce = [specs.get(k) for k in range(len(names))]

    def settled(b):
        """The branch already gives every output as the joined spec."""
        return all(b.out_info[k][0] == "op" and same_spec(b.out_info[k][1], specs[k])
                   for k in op_names)

    # a branch is staged again only if its outputs must be cast or filled
    blocks = [b if settled(b) else Block(fn, [], state, names, f"if_{tag}", coerce, where)
              for b, (fn, tag) in zip(blocks, fns)]
    # each branch keeps only the outputs both produce as operands, and both
    # take every branch's closed-over values
    progs = []
    all_consts = blocks[0].consts + blocks[1].consts
    for k, b in enumerate(blocks):
        where_out = b.output_slices()
        outs = [o for j in op_names for o in b.prog.outputs[where_out[j]]]
        nc = len(b.consts)
        before = [Var(aval_of(c)) for c in blocks[0].consts] if k == 1 else []
        after = [Var(aval_of(c)) for c in blocks[1].consts] if k == 0 else []
        ins = before + b.prog.inputs[:nc] + after + b.prog.inputs[nc:]
        progs.append(Program(ins, b.prog.eqns, outs, b.prog.name))
    # a boolean test selects branch 0 (false) or 1 (true) directly
    res = control.cond(test, progs, *all_consts, *blocks[0].operands)
    # a result is a scalar for certain where each branch gives one
    slices = [b.output_slices() for b in blocks]
    scalars = [all(b.out_scalar[sl[j].start + m] for b, sl in zip(blocks, slices))
               for j in op_names for m in range(n_leaves(specs[j]))]
    return assemble(names, merged, specs, res, scalars)


def python_iterable(it):
    if isinstance(it, TracedSequence):
        return it.kind(*[list(a) if is_traced(a) else a for a in it.args], **it.kw)
    return it


# the loops live in source.loops; converted code finds them here, as __wg.*
