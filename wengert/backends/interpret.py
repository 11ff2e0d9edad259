"""The NumPy interpreter: walk a Program, one primitive per equation.

Evaluation binds each equation's primitive, so on concrete arrays this is a
NumPy evaluator, and on traced values it replays the Program into whatever
transformation is active (that is how a derivative Program is itself
differentiated).

Layer: backends.
"""
from __future__ import annotations

from ..core.errors import ShapeMismatchError
from ..core.ir import aval_of
from ..core.trace import eval_program

__all__ = ["interpret"]


def interpret(prog, *args):
    """Evaluate ``prog`` on ``args``; returns the list of outputs."""
    if len(args) != len(prog.inputs):
        raise TypeError(f"{prog.name} takes {len(prog.inputs)} inputs, got {len(args)}")
    for v, a in zip(prog.inputs, args):
        if aval_of(a).shape != v.aval.shape:
            raise ShapeMismatchError(f"{prog.name}: input of shape {aval_of(a).shape} given "
                                     f"where the program expects {v.aval.shape}")
    return eval_program(prog, args)
