"""linearize = jvp + partial evaluation (seed 003).

    linearize : (a -> b) -> a -> (b, T a -o T b)

The function runs once under the jvp trace with *symbolic* tangents: every
primal computation happens now (it is known), and every operation on a
tangent is recorded into a Program instead of computed (it is unknown).
Because jvp rules are linear in the tangents, the recorded Program contains
linear primitives only; the primal values it needs (``cos x`` for ``sin``)
are its literals, the residuals.

    f(x) = sin(x) * x        linear program (x = 0.5 known):
                               t1 = mul (t0, 0.8775825618903728)
                               t2 = mul (t1, 0.5)
                               t3 = mul (0.479425538604203, t0)
                               t4 = add (t2, t3)
"""
from __future__ import annotations

from ..ir import Program, aval_of
from ..primitives.core import Zero, new_trace
from ..staging import StagingTrace
from .jvp import JVPTrace, JVPTracer

__all__ = ["linearize_flat"]


def linearize_flat(fn, primals, reverse=True, name="f"):
    """Return (outs, linear Program from input tangents to output tangents)."""
    jtrace = JVPTrace(reverse)
    ltrace = StagingTrace(concrete=False, role="t")
    # the linear trace sits above the jvp trace: tangent arithmetic inside a
    # rule records into it, and primal arithmetic goes below (now, or into an
    # outer transform)
    with new_trace(jtrace), new_trace(ltrace):
        t_ins = [ltrace.new_input(aval_of(p), hint="t") for p in primals]
        ins = [JVPTracer(jtrace, p, t) for p, t in zip(primals, t_ins)]
        outs = fn(*ins)
        out_p, out_atoms = [], []
        for o in outs:
            if isinstance(o, JVPTracer) and o._trace is jtrace:
                out_p.append(o.primal)
                out_atoms.append(ltrace.atom(o.tangent))
            else:
                out_p.append(o)
                out_atoms.append(ltrace.atom(Zero(aval_of(o))))
    lin = Program([t.atom for t in t_ins], ltrace.eqns, out_atoms, name=f"{name}_lin")
    return out_p, lin
