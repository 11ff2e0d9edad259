"""Stage a Python function as a loop body: the one way every loop gets its
body Program (``fori_loop``, the source engine's loops, checkpointing, a
loop's transpose and its batching).

    body, closed = stage_loop(fn, ForParams, lead=[i64], carry=avals, xs=x_avals)

``fn`` is called on symbolic values in the loop's body layout (``lead``,
``consts``, ``carry``, ``xs``: see ``params.py``) and returns the
body's outputs ``(*carry, *ys)``. With ``closure=True`` the values ``fn``
closes over that belong to an enclosing transformation (an outer
derivative's variables, a traced value of the caller) are recorded too and
become the first consts of the body (closure conversion); ``closed`` are
those values, the operands to pass in front of the loop's other consts.

Layer: control.
"""
from __future__ import annotations

from ..core.ir import Program, Role
from .params import join
from ..core.staging import closure_convert, stage

__all__ = ["stage_loop"]


def stage_loop(fn, params_type, *, lead=(), consts=(), carry=(), xs=(), name="body",
               role=Role.VALUE, in_names=None, in_roles=None, closure=False, keep_custom=False):
    """(body Program in ``params_type``'s layout, closed-over values)."""
    groups = [list(lead), list(consts), list(carry), list(xs)]
    prog = stage(fn, join(*groups), name=name, role=role, in_names=in_names, in_roles=in_roles,
                 dynamic=closure,
                 keep_custom=keep_custom)
    if not closure:
        return prog, []
    prog, closed = closure_convert(prog)
    if not closed:
        return prog, closed
    # closure_convert puts the closed-over values first: they join the consts
    layout = params_type(None, len(consts), len(carry))
    new, rest = prog.inputs[:len(closed)], prog.inputs[len(closed):]
    lead_in, consts_in, carry_in, xs_in = layout.operand_groups(rest)
    ins = layout.join_operand_groups(lead_in, new + consts_in, carry_in, xs_in)
    return Program(ins, prog.eqns, prog.outputs, prog.name), closed
