"""The loops of converted code: ``for_stmt`` and ``while_stmt`` (reached as
``__wg.for_stmt`` / ``__wg.while_stmt`` through ``source.runtime``).

A loop runs as Python when nothing it depends on is traced or when its body
needs Python values (a slice bound, a list index); otherwise its body is
staged once (until the carried shapes and dtypes are stable) and recorded as
a ``for_loop`` or ``while_loop`` equation. ``break`` in a ``for`` loop makes
it a ``while_loop`` over the counter.

Layer: frontends.
"""
from __future__ import annotations

import builtins

import numpy as np

from ...core.errors import UnsupportedSyntax
from ...core.ir import Aval, Program, Var, aval_of
from ...primitives import arith, index as index_mod, ordering
from ... import control
from ...control.params import ForParams, WhileParams
from ...control.checkpoint_loop import checkpointed, checkpointed_loop
from ...control.checkpoint_while import checkpointed_while, online_schedule
from .env import EnvObject
from .blocks import Block, Undefined, as_kinds, assemble
from .specs import coerce_to, join_spec, spec_of, widens, zeros_of
from .ops import (
    NEEDS_CONCRETE, DimRange, TracedRange, TracedSequence, any_traced, probe, python_iterable,
    is_traced, and_, if_stmt, named, not_)
from ...core.pytree import flatten

__all__ = ["for_stmt", "while_stmt"]


def _undef_discovery(run_block, state, names):
    """Give loop variables first assigned inside the loop (unassigned before it)
    an initial value of the right spec (zeros) by staging the body once."""
    if not any(isinstance(v, Undefined) for v in state):
        return state
    block = run_block(state)
    new = list(state)
    for k, v in enumerate(state):
        kd, info = block.out_info[k]
        if isinstance(v, Undefined) and kd == "op":
            new[k] = zeros_of(info)           # a Python float's is 0.0
    return tuple(new)


def _dropped(where, name, value):
    """A Python value the loop changes: unknown after the loop, and an error
    only where it is read (after the loop, or in the body before the body
    assigns it)."""
    return Undefined(name, why=(
        f"{where}: {name!r} is changed by a loop that depends on a traced value, but is not an "
        f"array or a number ({value!r}), so it cannot be carried from one step to the next or "
        "out of the loop; use it only within one step (assign it before reading it in the "
        "body), build lists outside such loops, or loop over a Python range of fixed length"))


def _loop_fixpoint(run_block, state, names, where):
    """Stage the body until the carried specs are stable: ``s = 0`` before a
    loop that adds arrays to ``s`` carries an array."""
    state = _undef_discovery(run_block, state, names)
    for _ in range(4):
        block = run_block(state)
        changed = False
        new = list(state)
        for k, (v, o) in enumerate(zip(state, block.is_op)):
            kd, info = block.out_info[k]
            if not o:
                if kd == "py" and (info is v or isinstance(v, Undefined) and (
                        v.why or isinstance(info, Undefined))):
                    continue            # unchanged, or unknown after the loop anyway
                if kd == "op" and isinstance(v, tuple) and _numbers_like(v, info):
                    new[k] = coerce_to(v, info, repr(names[k]))   # (0.0, 0.0) -> (s, t)
                else:
                    new[k] = _dropped(where, names[k], info)
                changed = True
                continue
            if kd != "op":
                raise UnsupportedSyntax(f"{where}: {names[k]!r} stops being an array or a "
                                        f"number in the loop ({info!r})")
            a = spec_of(v)
            # a Python float that a step makes a NumPy one (``s = np.float64(c) + s``)
            # is a NumPy float from the start: the loop has one type per carry
            if widens(a, info):
                new[k] = coerce_to(v, join_spec(a, info, f"{where}: {names[k]!r}"),
                                   repr(names[k]))
                changed = True
        if not changed:
            # a scalar carry that a step makes a 0-d array (``y = np.where(...)``)
            # is taken for a possible array from the start: ``old = y; y += v``
            # at the top of the loop writes into it from the second step on
            arrays = block.carries_arrays()
            if not arrays:
                return block, state
            for k, scalars in arrays.items():
                new[k] = as_kinds(new[k], scalars)
            changed = True
        state = tuple(new)
    raise UnsupportedSyntax(f"{where}: a loop variable's shape or dtype keeps changing")


def _numbers_like(v, spec):
    """A tuple of Python numbers with the structure of the tuple ``spec``."""
    leaves, tree = flatten(v)
    return getattr(spec, "tree", None) == tree and all(
        isinstance(x, (int, float, bool)) for x in leaves)


# what a structured loop can iterate: ranges (Python, symbolic or traced
# bounds), arrays, and enumerate/zip over arrays
_STRUCTURED = (range, DimRange, TracedRange, np.ndarray, TracedSequence)


def for_stmt(iterable, body, state, names, brk, lineno, target=""):
    """``for target in iterable: body``; ``target``: the loop variable's
    name when it is a plain one, which the loop's counter (over a range) or
    its per-iteration value (over an array) keeps in the Program."""
    where = lineno
    if isinstance(iterable, EnvObject):
        # a list, tuple or dict found outside: its items, each read where it lives
        iterable = list(iterable)
    schedule = None
    if isinstance(iterable, checkpointed):
        # for i in wg.checkpointed(range(n), ...): a checkpointed_loop
        schedule, iterable = iterable.schedule, iterable.iterable
        if not isinstance(iterable, (range, DimRange, TracedRange)):
            raise UnsupportedSyntax(f"{where}: wg.checkpointed takes a range, got "
                                    f"{type(iterable).__name__}; loop over range(n)",
                                    construct="wg.checkpointed over a non-range")
        if brk:
            raise UnsupportedSyntax(f"{where}: break or return inside a checkpointed loop; its "
                                    "trip count must be known: set a flag and use np.where",
                                    construct="break in a checkpointed loop")
    if not (is_traced(iterable) or isinstance(iterable, _STRUCTURED)):
        # a Python iterable (a list, a dict or its views, a generator, map,
        # reversed): its length is fixed, the loop runs as Python
        return _loop_python(iterable, body, state, names, brk, where)
    if any(isinstance(v, (list, dict)) for v in state):
        # appending to a Python list, setting a dict's items: the loop runs as
        # Python (its length is fixed)
        if isinstance(iterable, TracedRange):
            raise UnsupportedSyntax(f"{where}: a list or dict is built in a loop whose length "
                                    "is traced; loop over a range of Python ints")
        return _loop_python(python_iterable(iterable), body, state, names, brk, where)
    n, item_of, xs, lead = _loop_items(iterable, where)
    loop_names = _loop_names(iterable, target)
    if target and not loop_names[0] and isinstance(iterable, (range, DimRange, TracedRange)):
        item_of = _named_item(item_of, target)
    try:
        return _structured_for(n, item_of, xs, lead, body, state, names, brk, where, schedule,
                               loop_names)
    except NEEDS_CONCRETE:
        if is_traced(n) or not isinstance(iterable, (range, DimRange, np.ndarray)):
            raise
        # the body needs a Python counter (a slice bound, a Python list index):
        # run the loop as Python, each step recorded
        return _loop_python(iterable, body, state, names, brk, where)


def _loop_names(iterable, target):
    """(counter's name, per-iteration values' names): the loop variable's
    where it is the counter (``range(n)``) or the one per-iteration value
    (an array's rows); "" (a print-time name) otherwise."""
    if isinstance(iterable, (range, DimRange)) and (iterable.start, iterable.step) == (0, 1):
        return target, []
    if is_traced(iterable) or isinstance(iterable, np.ndarray):
        return "", [target]
    return "", []


def _named_item(item_of, name):
    """``item_of`` whose value, the index ``start + k * step`` of a loop over
    ``range(start, stop, step)``, keeps the loop variable's name (the counter
    ``k`` has none)."""
    def item(i, x):
        return named(item_of(i, x), name)
    return item


def _structured_for(n, item_of, xs, lead, body, state, names, brk, where, schedule=None,
                    loop_names=("", [])):
    if brk:
        return _for_with_break(n, item_of, xs, lead, body, state, names, brk, where,
                               loop_names[0])

    def run_block(st):
        def fn(i, *rest):
            nxs = len(xs)
            x_i = rest[:nxs]
            return body(item_of(i, x_i), *rest[nxs:])
        return Block(fn, [Aval((), np.int64, weak=True)], st, names, "for_body", where=where,
                     loop=ForParams, xs_avals=lead, loop_names=loop_names)

    block, state = _loop_fixpoint(run_block, state, names, where)
    prog = block.prog               # in the loop's layout (i, consts, carry, xs)
    if schedule is None:
        res = control.for_loop(n, prog, block.consts, block.operands, xs)
    else:
        res = checkpointed_loop(n, prog, block.consts, block.operands, schedule)
    return _after_loop(names, state, block, res)


def _loop_python(iterable, body, state, names, brk, where=None):
    """The loop run as Python, each step recorded. Once a ``break`` depends on
    a traced test, each later step is a branch on it: taken where the loop
    has not broken, the state unchanged where it has."""
    k_brk = names.index(brk) if brk else None
    for item in iterable:
        flag = state[k_brk] if k_brk is not None else False
        if is_traced(flag):
            state = if_stmt(flag, lambda *st: st, lambda *st, item=item: body(item, *st),
                            state, names, where)
            continue
        if flag:
            break
        state = body(item, *state)
    return state


def _loop_items(iterable, where):
    """(n, item_of(i, x_i), xs, lead avals of x_i) for a structured loop."""
    if isinstance(iterable, range):
        return len(iterable), _range_item(iterable.start, iterable.step), [], []
    if isinstance(iterable, DimRange):
        return iterable.length(), _range_item(iterable.start, iterable.step), [], []
    if isinstance(iterable, TracedRange):
        r = iterable
        n = _range_length(r.start, r.stop, r.step)
        return n, (lambda i, x: arith.add(r.start, arith.mul(i, r.step))), [], []
    if is_traced(iterable) or isinstance(iterable, np.ndarray):
        a = aval_of(iterable)
        if not a.shape:
            raise UnsupportedSyntax(f"{where}: iteration over a 0-d array")
        return a.shape[0], (lambda i, x: x[0]), [iterable], [Aval(a.shape[1:], a.dtype)]
    if isinstance(iterable, TracedSequence):
        arrays = list(iterable.args)
        lengths = [aval_of(a).shape[0] for a in arrays]
        n = min(lengths)            # the first of equal lengths, symbolic ones included
        if iterable.kw.get("strict") and any(d != n for d in lengths):
            raise ValueError(f"zip(strict=True): arguments of lengths {sorted(lengths)}")
        arrays = [a if aval_of(a).shape[0] == n else index_mod.getitem(a, slice(0, n))
                  for a in arrays]
        lead = [Aval(aval_of(a).shape[1:], aval_of(a).dtype) for a in arrays]
        if iterable.kind is builtins.enumerate:
            start = iterable.start
            return n, (lambda i, x: (arith.add(i, start) if start else i, x[0])), arrays, lead
        return n, (lambda i, x: tuple(x)), arrays, lead
    raise UnsupportedSyntax(f"{where}: a for loop over {type(iterable).__name__} is not "
                            "supported; loop over range, an array, a list, enumerate or zip")


def _range_item(start, step):
    """item_of of a loop over a range: ``start + k * step`` from the counter
    ``k``, without an add of 0 or a product by 1 (a value the user's loop
    variable names)."""
    def item(i, x):
        k = i if type(step) is int and step == 1 else arith.mul(i, step)
        return k if type(start) is int and start == 0 else arith.add(start, k)
    return item


def _range_length(start, stop, step):
    # ceil((stop - start) / step), at least 0, as integer arithmetic
    span = arith.sub(stop, start)
    if step > 0:
        n = ordering.floor(arith.div(arith.add(span, step - 1), step))
    else:
        n = ordering.floor(arith.div(arith.add(span, step + 1), step))
    return arith.convert(ordering.maximum(n, 0), dtype=np.dtype(np.int64))


def _for_with_break(n, item_of, xs, lead, body, state, names, brk, where, counter=""):
    """A for loop with ``break``: a while loop over the counter (named
    ``counter`` where it is the loop variable)."""
    k_brk = names.index(brk)

    def cond(i, *st):
        return and_(lambda: ordering.less(i, n), lambda: not_(st[k_brk]))

    def step(i, *st):
        x_i = [index_mod.getitem(x, i) for x in xs]
        out = body(item_of(i, x_i), *st)
        return (arith.add(i, 1),) + tuple(out)

    out = _structured_while(cond, step, (np.int64(0),) + tuple(state),
                            (counter or "__wg_i",) + tuple(names), where)
    return out[1:]


def while_stmt(cond_fn, body_fn, state, names, lineno):
    where = lineno
    first = probe(cond_fn, *state)
    schedule = None
    if isinstance(first, checkpointed):
        # while wg.checkpointed(test, ...): a checkpointed_while, if structured
        schedule = online_schedule(first.schedule, f"{where}: ")
        cond_fn, first = _test_of(cond_fn), first.iterable
    if not is_traced(first) and not any_traced(state):
        # steps run as Python while the test is a Python value; where a step
        # makes it traced (``diff = abs(new - old)``), the rest of the loop
        # is a structured loop from the state reached
        c = first
        while c:
            state = body_fn(*state)
            c = probe(cond_fn, *state)
            if is_traced(c):
                return _structured_while(cond_fn, body_fn, state, names, where, schedule)
        return state

    try:
        return _structured_while(cond_fn, body_fn, state, names, where, schedule)
    except NEEDS_CONCRETE:
        if is_traced(first):
            raise
        c = first
        while c:
            state = body_fn(*state)
            c = probe(cond_fn, *state)
            if is_traced(c):
                raise
        return state


def _test_of(cond_fn):
    """The test of ``while wg.checkpointed(test)``, without its marker."""
    def test(*st):
        c = cond_fn(*st)
        return c.iterable if isinstance(c, checkpointed) else c
    return test


def _structured_while(cond_fn, body_fn, state, names, where, schedule=None):
    def run_block(st):
        return Block(body_fn, [], st, names, "while_body", where=where,
                     loop=WhileParams)

    block, state = _loop_fixpoint(run_block, state, names, where)
    cblock = Block(lambda *s: (cond_fn(*s),), [], state, ("__wg_cond",), "while_cond")
    # both programs take (cond consts, body consts, carry)
    cc, bc = cblock.consts, block.consts
    cprog = _with_inputs(cblock.prog, len(cc), [aval_of(c) for c in bc], after=True)
    bprog = _with_inputs(block.prog, len(bc), [aval_of(c) for c in cc], after=False)
    if schedule is None:
        res = control.while_loop(cprog, bprog, cc + bc, block.operands)
    else:
        res = checkpointed_while(cprog, bprog, cc + bc, block.operands, schedule)
    return _after_loop(names, state, block, res)


def _after_loop(names, state, block, res):
    """The state after a structured loop: the carries from ``res``, the
    Python values the loop leaves alone as they were."""
    merged = [("op", None) if o else ("py", v) for v, o in zip(state, block.is_op)]
    specs = dict(enumerate(block.in_specs))
    scalars = [a and b for a, b in zip(block.in_scalar, block.out_scalar)]
    return assemble(names, merged, specs, res[:len(block.operands)], scalars)


def _with_inputs(prog, nc, avals, after):
    """Add unused inputs for the other program's closed-over values, so both
    read (cond consts, body consts, carry)."""
    extra = [Var(a) for a in avals]
    ins = prog.inputs
    new = ins[:nc] + extra + ins[nc:] if after else extra + ins
    return Program(new, prog.eqns, prog.outputs, prog.name)
