"""Reverse mode as a composition (seed 003): vjp = transpose . linearize.

    vjp : (a -> b) -> a -> (b, T b -o T a)

Nothing here knows a derivative rule: linearize gives the linear Program,
and transposing it needs transpose rules of linear primitives only.

Layer: transforms.
"""
from __future__ import annotations

from ..core.atoms import cotangent_label
from ..core.trace import eval_program
from ..core.staging import stage
from .partial_eval import linearize_flat
from .transpose import backward_pass

__all__ = ["vjp_flat", "vjp_program"]


def vjp_flat(fn, primals, mask=None):
    """(outs, lin, pullback) where pullback(cts) -> input cotangents (Zero
    allowed), for the inputs ``mask`` selects (all by default)."""
    outs, lin = linearize_flat(fn, primals, reverse=True, mask=mask)
    return outs, lin, (lambda cts: backward_pass(lin, cts))


def vjp_program(prog, mask=None):
    """Program -> Program taking (inputs..., output cotangents...) and
    returning (outputs..., input cotangents...): the forward sweep, then the
    transposed linear program in reverse order. ``mask[k]`` False: input k is
    not differentiated (no cotangent is returned for it)."""
    n = len(prog.inputs)

    def run(*args):
        outs, _, pullback = vjp_flat(lambda *xs: eval_program(prog, xs), list(args[:n]), mask)
        return list(outs) + list(pullback(args[n:]))

    labels = [(v.name, v.role) for v in prog.inputs] + [
        cotangent_label(v) for v in prog.outputs]
    return stage(run, prog.in_avals + prog.out_avals, name=f"{prog.name}_vjp",
                 in_names=[n for n, _ in labels], in_roles=[r for _, r in labels])
