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

Layer: transforms.
"""
from __future__ import annotations

from ..core.errors import RAGGED_BATCH, UnsupportedSyntax
from ..core.ir import Eqn, Lit, Program, Role, Var, aval_of, derive
from ..core.primitive import Zero, snapshot
from ..core.trace import set_current
from ..primitives.shape import zeros_like
from ..core.trace import eval_program
from ..core.staging import StagingTrace, StagingTracer
from .jvp import JVPTrace, JVPTracer

__all__ = ["LinearizeTrace", "linearize_flat", "linearize_program"]


class LinearizeTrace(JVPTrace):
    """Linearize: a jvp whose tangents are recorded. Its tracers carry a
    primal (a value of the parent trace) and a tangent (a variable of
    ``recorder``, the linear Program being recorded, whose parent is this
    trace's parent too). The rules run under the recorder: tangent work is
    recorded, primal work goes on to the parent. The row's rule is
    ``linearize`` (control flow splits into a primal and a linear part), or
    ``linearize_for_vjp`` where the linear Program is then transposed
    (``reverse``), else ``jvp``."""

    def __init__(self, reverse=True, parent=None):
        super().__init__(parent=parent)
        self.reverse = reverse
        self._copies = {}       # the outside arrays kept (``snapshot``), while it records
        self.recorder = StagingTrace(concrete=False, role=Role.TANGENT, parent=self.parent)
        self.rules_trace = self.recorder

    def rule_of(self, prim):
        rule = (self.reverse and prim.linearize_for_vjp) or prim.linearize
        return rule or prim.jvp

    def close(self):
        self.live = False
        self.recorder.close()


def linearize_flat(fn, primals, reverse=True, name="f", mask=None):
    """Return (outs, linear Program from input tangents to output tangents).
    ``mask[k]`` False: input k is held constant (it gets no tangent input)."""
    trace = LinearizeTrace(reverse)
    ltrace = trace.recorder
    mask = mask or [True] * len(primals)
    with set_current(trace):
        t_ins = [ltrace.new_input(aval_of(p), role=Role.TANGENT)
                 for p, m in zip(primals, mask) if m]
        tans = iter(t_ins)
        # the inputs are kept (residuals) until the linear Program is used:
        # copies, so the caller may write to its arrays meanwhile
        ins = [JVPTracer(trace, snapshot(p), next(tans) if m else Zero(aval_of(p)))
               for p, m in zip(primals, mask)]
        outs = fn(*ins)
        out_p, out_atoms = [], []
        for o in outs:
            primal, tangent = ((o.primal, o.tangent) if isinstance(o, JVPTracer)
                               and o._trace is trace else (o, Zero(aval_of(o))))
            if isinstance(tangent, Zero) and None in tangent.aval.shape:
                if None in tangent.aval.shape[1:]:
                    # per-iteration values of different lengths (an inner
                    # while loop's, stored by an outer loop): a list, whose
                    # tangent no array operation can stand for
                    raise UnsupportedSyntax(
                        "a derivative of this order through a loop that stores values whose "
                        "length changes between iterations (a while loop, break or return "
                        "inside another loop) is not supported by the source engine; use "
                        "engine='trace' (engine='auto' does so by itself)",
                        construct=RAGGED_BATCH)
                # zeros of a length known only at run time: shaped like the value
                tangent = zeros_like(primal)
            out_p.append(primal)
            out_atoms.append(ltrace.atom(tangent))
    lin = Program([t.atom for t in t_ins], ltrace.eqns, out_atoms, name=f"{name}_lin")
    # each recorded equation took a tangent operand (only those reach the
    # linear trace), so the transpose need not sort the equations
    lin.all_linear = True
    return out_p, lin


def linearize_program(prog, mask):
    """Partial evaluation of a Program, for control flow (seed 003):

        prog : (a, b) -> c      with ``mask`` marking the inputs that vary
        ==>  known : (a, b) -> (c, r)          all primal work, residuals r
             lin   : (r, T a) -o T c           linear in the tangents

    The split runs ``linearize_flat`` on symbolic primal inputs: the primal
    lines record into ``known``; the values the linear Program reads (its
    literals that are ``known``'s variables) become the residuals."""
    trace = StagingTrace(concrete=False)
    with set_current(trace):
        ins = [trace.new_input(a, name=v.name, role=v.role)
               for a, v in zip(prog.in_avals, prog.inputs)]
        outs, lin = linearize_flat(lambda *xs: eval_program(prog, xs), ins, mask=mask,
                                   name=prog.name)
        residuals, res_vars = {}, []

        def residual(x):
            """A literal of ``lin`` holding a value of ``known``: a residual input."""
            val = x.val
            if not (isinstance(val, StagingTracer) and val._trace is trace):
                return x
            atom = val.atom
            if isinstance(atom, Lit):
                return atom
            if atom not in residuals:
                residuals[atom] = Var(atom.aval, *derive(atom.name, atom.role, Role.RESIDUAL))
                res_vars.append(atom)
            return residuals[atom]

        eqns = [e.replace(tuple(residual(x) if isinstance(x, Lit) else x for x in e.inputs),
                    e.outputs, e.params) for e in lin.eqns]
        lin_outs = [residual(x) if isinstance(x, Lit) else x for x in lin.outputs]
        known = Program([t.atom for t in ins], trace.eqns,
                        [trace.atom(o) for o in outs] + res_vars, name=f"{prog.name}_known")
    lin_prog = Program([residuals[a] for a in res_vars] + lin.inputs, eqns, lin_outs,
                       name=f"{prog.name}_lin")
    return known, lin_prog, len(res_vars)
