"""Helpers shared by the control-flow blocks: which operands get tangents,
and keeping the types of a branch's or a loop's values consistent.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, Eqn, Lit, Program, Var
from ..primitives.arith import convert_p
from ..core.primitive import Zero

__all__ = ["is_float_aval", "tangent_mask", "agreeing", "numpy_outputs", "with_inputs", "unused"]


def is_float_aval(a):
    return a.dtype.kind in "fc"


def tangent_mask(tangents, avals):
    """Which operands carry a (nonzero, float) tangent."""
    return [not isinstance(t, Zero) and is_float_aval(a) for t, a in zip(tangents, avals)]


def with_inputs(prog, inputs, name=None):
    """``prog`` reading ``inputs`` (its own input variables, rearranged, and
    fresh ones it does not read)."""
    return Program(inputs, prog.eqns, prog.outputs, name or prog.name)


def unused(avals):
    """Fresh input variables that a Program does not read."""
    return [Var(a) for a in avals]


def agreeing(branches):
    """``branches`` with outputs of one type: where one branch gives a Python
    scalar (weakly typed, a transposed branch's ``0.0``) and another a NumPy
    one, the Python one is made a NumPy scalar too (``convert``), so the
    cond's result promotes the same way on either path."""
    branches = tuple(branches)
    fixes = {}
    for k, avals in enumerate(zip(*[b.out_avals for b in branches])):
        if len({a.weak for a in avals}) > 1:
            fixes[k] = next(a for a in avals if not a.weak).dtype
    if not fixes:
        return branches
    return tuple(numpy_outputs(b, {k: d for k, d in fixes.items() if b.outputs[k].aval.weak})
                 for b in branches)


def numpy_outputs(prog, fixes):
    """``prog`` with output ``k`` converted to a NumPy value of dtype
    ``fixes[k]`` (a literal in place, a variable by a ``convert`` equation)."""
    if not fixes:
        return prog
    eqns, outs = list(prog.eqns), list(prog.outputs)
    for k, dtype in fixes.items():
        x = outs[k]
        if isinstance(x, Lit):
            outs[k] = Lit(np.asarray(x.val, dtype)[()])
        else:
            v = Var(Aval(x.aval.shape, dtype), x.name, x.role)
            eqns.append(Eqn(convert_p, (x,), (v,), {"dtype": np.dtype(dtype)}))
            outs[k] = v
    return Program(prog.inputs, eqns, outs, prog.name)
