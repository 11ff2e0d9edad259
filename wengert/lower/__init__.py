"""Program -> the imperative form the code generator writes.

    lower : Program -> Lowered        (the backends' code writers take a ``Lowered``)

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
   ``lower.inplace``); so is an elementwise row into an operand of its
   result's shape and dtype (``np.exp(t, out=t)``, ``t *= s``): no new
   array of that size. Control flow passes ownership into its sub-Programs
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

1b. ``promote``: a loop whose step reads the element the step before added
   to holds it in a scalar carried from step to step, and a store of zeros
   nothing reads again is dropped; ``merge_sums``: two additions to one
   element in a step are one.

The steps live in ``lower.sums`` (1), ``lower.carry`` (1b),
``lower.owner`` (2) and ``lower.facts`` (3). These modules name no primitive: every fact about a
row is its ``lower`` rule's (``core/rules.py``: ``LowerRule``).

Layer: lower.
"""
from __future__ import annotations

from ..core.ir import Var, sub_programs, verify
from .facts import (
    Floats, loop_only_values, python_floats, python_scalars, share_condition_values, use_kinds)
from .carry import merge_sums, promote
from .owner import LoweringError, Ownership, Root
from .sums import assemble, map_programs, schedule, share_outer_values, sink

__all__ = ["lower", "Lowered", "LoweringError", "Root", "Ownership", "sink", "schedule", "check",
           "share_outer_values", "share_condition_values", "python_scalars", "python_floats",
           "Floats",
           "loop_only_values", "use_kinds", "map_programs"]


class Lowered:
    """A Program ready for code generation and what lowering decided:
    ``inplace`` the equations written in place (-> the operand overwritten),
    ``copies`` per equation the
    operand positions copied before it runs, and the analyses (``read``,
    ``loop_only``, ``trip_only``, ``python_scalars``)."""

    __slots__ = ("source", "program", "inplace", "copies", "read", "loop_only", "trip_only",
                 "python_scalars", "floats")

    def __init__(self, source, program, inplace, copies, floats):
        self.source = source                     # the Program as given
        self.program, self.inplace, self.copies = program, inplace, copies
        kinds = use_kinds(program)
        self.read = set(kinds)                   # every Var something reads
        self.loop_only = {k for k, kind in kinds.items() if kind == {"xs"}}
        # a while loop's count read only as trip counts may be a Python int
        self.trip_only = {k for k, kind in kinds.items() if kind == {"trip"}}
        self.python_scalars = python_scalars(program)
        # where float64 scalars may be Python floats (``python_floats``), if asked for
        self.floats = python_floats(program, self.python_scalars, self.loop_only) if floats \
            else Floats()


def lower(prog, loops=True, floats=True):
    """``prog`` (a verified Program) in imperative form (``Lowered``);
    ``loops``: with step 1b (``lower.carry``; off: to compare against);
    ``floats``: with the Python-float stand-ins of step 3 (``python_floats``;
    off for a compiler that types its scalars itself)."""
    verify(prog)
    source = prog
    prog = share_outer_values(share_condition_values(prog))
    prog = assemble(sink(prog))
    if loops:
        prog = promote(merge_sums(prog))
    prog = schedule(prog)
    result = Ownership.analyze(prog, [frozenset({Root(False)}) if v.aval.shape else frozenset()
                                      for v in prog.inputs])
    inplace, copies = {}, {}
    result.commit(prog, inplace, copies)
    lowered = Lowered(source, prog, {e: p for e, p in inplace.items() if p is not None}, copies,
                      floats)
    check(lowered)
    return lowered


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
