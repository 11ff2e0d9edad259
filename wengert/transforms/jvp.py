"""Forward mode: a trace whose values carry a primal and a tangent.

    jvp : (a -> b) -> (a, T a) -> (b, T b)

Each primitive application runs its jvp rule once: the primal output and the
tangent output are computed together, line by line (seed 000's interleaved
form), so memory stays proportional to the primal program. Tangents that are
symbolically zero (``Zero``) are never formed; a primitive whose operands all
have zero tangents runs as the primal only.

``jvp_program`` stages the same interpreter into a Program:

    program f(x0: f64[]):            program f_jvp(x0: f64[], t0: f64[]):
      v1 = sin (x0)          ==>       v1 = sin (x0)
      return (v1)                      v2 = cos (x0)
                                       t1 = mul (t0, v2)
                                       return (v1, t1)

Layer: transforms.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ShapeMismatchError, WengertError, user_location
from ..core.ir import Role, aval_of, derive
from ..core.primitive import BY_IMPL, Zero, is_float, refuse_complex, snapshot
from ..core.trace import TRACE_STATE, Trace, bind, eval_program, set_current
from ..core import dims as _dims
from ..primitives.arith import cast_float
from ..primitives.casts import cast_exact
from ..primitives.shape import broadcast_to
from ..primitives.runtime_shapes import broadcast_like
from ..core.tracer import Tracer
from ..core.inplace import array_value, is_scalar, link_views, scalar_value
from ..core.staging import stage

__all__ = ["JVPTrace", "JVPTracer", "jvp_flat", "jvp_program"]


class JVPTracer(Tracer):
    # ``_base``/``_views``: the tracer this one is a view of, weak references to
    # its own views (``inplace.link_views``), set only where there are any
    # ``wild``: the tangent may be infinite where the value is finite (it came
    # through ``primitives.unbounded``); a tracer made while a rule runs on wild
    # tangents (a loop body's carries) starts wild
    __slots__ = ("primal", "tangent", "wild", "_aval", "_base", "_views", "__weakref__")

    def __init__(self, trace, primal, tangent, wild=None):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.wild = TRACE_STATE.wild if wild is None else wild
        self._aval = None

    @property
    def aval(self):
        if self._aval is None:
            self._aval = aval_of(self.primal)
        return self._aval

    @property
    def concrete_value(self):
        p = self.primal
        return p.concrete_value if isinstance(p, Tracer) else p

    def name_hint(self, name, role=Role.VALUE):
        # the primal keeps the name and role, its tangent is their tangent (d_name)
        if isinstance(self.primal, Tracer):
            self.primal.name_hint(name, role)
        if isinstance(self.tangent, Tracer):
            self.tangent.name_hint(*derive(name, role, Role.TANGENT))

    def become(self, new):
        """Turn into ``new``, a value of the same trace (``y += v``: ``inplace``)."""
        self.primal, self.tangent, self._aval = new.primal, new.tangent, new._aval
        self.wild = new.wild

    def clone(self):
        """Another tracer of the same value (a copy: ``inplace.fresh``)."""
        return JVPTracer(self._trace, self.primal, self.tangent, self.wild)

    def numpy_scalar(self):
        return is_scalar(self.primal)

    def as_array(self):
        primal = array_value(self.primal)
        return self if primal is self.primal else JVPTracer(self._trace, primal, self.tangent, self.wild)

    def as_scalar(self):
        primal = scalar_value(self.primal)
        return self if primal is self.primal else JVPTracer(self._trace, primal, self.tangent, self.wild)

    def as_maybe_array(self):
        p = self.primal
        primal = p.as_maybe_array() if isinstance(p, Tracer) else p
        return self if primal is p else JVPTracer(self._trace, primal, self.tangent, self.wild)


class JVPTrace(Trace):
    """Forward mode. Its tracers carry a primal and a tangent (values of the
    parent trace); each application of a primitive to them runs the row's
    rule under the parent (``rule_of``: ``jvp``, or ``jvp_for_grad`` where
    forward mode stands in for ``grad``, one float input: a ``custom_vjp``
    function refuses that with ``NeedsReverse``, as its gradient is its
    ``bwd``, so ``grad`` must take reverse mode)."""

    _copies = None      # linearize: the outside arrays kept (``snapshot``)

    def __init__(self, for_grad=False, parent=None):
        super().__init__(parent)
        self.for_grad = for_grad
        self.rules_trace = self.parent     # where the rules' work goes

    def drop_tangent(self, x):
        """``x`` with a zero tangent (``Trace.drop_tangent``): the equation it
        enters then runs as its primal only."""
        if type(x) is JVPTracer and x._trace is self and not isinstance(x.tangent, Zero):
            return JVPTracer(self, x.primal, Zero.like(x.primal), False)
        return x

    def rule_of(self, prim):
        """The row's rule for this transform (``Primitive``)."""
        if self.for_grad:
            return prim.jvp_for_grad or prim.jvp
        return prim.jvp

    def process(self, prim, args, params):
        primals, tangents, own, live, wild = [], [], False, False, False
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
                own = True
                if not isinstance(a.tangent, Zero):
                    live, wild = True, wild or a.wild
            else:
                primals.append(a)
                tangents.append(None)
        if not own:
            return self.parent.process(prim, args, params)
        copies = self._copies
        if copies is not None:
            # values from outside this trace: under linearize, a rule may keep
            # one (or a view of it) in the linear Program, so it gets a copy
            # its owner cannot write
            primals = [snapshot(p, copies) if t is None else p
                       for p, t in zip(primals, tangents)]
        state = TRACE_STATE
        prev = state.current
        if not live or not prim.differentiable:
            state.current = self.parent
            try:
                return self._primal_only(prim, primals, params, args)
            finally:
                state.current = prev
        rule = self.rule_of(prim)
        if rule is BY_IMPL:
            # the impl, written with primitives, runs on this trace's values
            state.current = self
            try:
                return prim.impl(*args, **params)
            finally:
                state.current = prev
        refuse_complex(prim, primals)   # a rule not audited for complex values
        tangents = [Zero.like(p) if t is None else t for p, t in zip(primals, tangents)]
        state.current = self.rules_trace
        outer_wild, count = state.wild, state.unbounded
        state.wild = wild
        try:
            try:
                out, out_dot = rule(primals, tangents, **params)
            except ValueError as e:
                raise_shape_error(prim, primals, e)
            # what a wild tangent or an unbounded local derivative gave is wild
            wild = wild or state.unbounded != count
            if prim.multiple_results or (prim.inline and isinstance(out, (tuple, list))):
                return _linked(tuple(JVPTracer(self, o, _tangent_for(o, t), wild)
                                     for o, t in zip(out, out_dot)), args)
            if type(out) is np.ndarray and out.dtype.kind in "fc" and \
                    getattr(out_dot, "shape", None) == out.shape and \
                    out_dot.dtype == out.dtype:                         # the common case, inline
                res = JVPTracer(self, out, out_dot, wild)
                if out.base is not None:
                    link_views(res, args)
                return res
            return _linked(JVPTracer(self, out, _tangent_for(out, out_dot), wild), args)
        finally:
            state.current = prev
            state.wild = outer_wild

    def _primal_only(self, prim, primals, params, args):
        """No tangent flows in (or none out): the primal alone, zero tangents."""
        if not prim.differentiable:
            refuse_complex(prim, primals)     # an ordering of complex values
        try:
            out = bind(prim, *primals, **params)
        except ValueError as e:
            raise_shape_error(prim, primals, e)
        if prim.multiple_results or (prim.inline and isinstance(out, (tuple, list))):
            return _linked(tuple(JVPTracer(self, o, Zero.like(o)) for o in out), args)
        return _linked(JVPTracer(self, out, Zero.like(out)), args)


def _linked(res, args):
    """``res`` (a tracer or a tuple of them), each linked to the operand it is
    a view of, if any (``inplace.link_views``)."""
    for r in (res if type(res) is tuple else (res,)):
        link_views(r, args)
    return res


def raise_shape_error(prim, operands, err):
    """NumPy's ValueError about shapes, as a typed error naming the user's line."""
    if isinstance(err, WengertError) or "shape" not in str(err) and "broadcast" not in str(err):
        raise err
    shapes = ", ".join(str(aval_of(o).shape) for o in operands)
    raise ShapeMismatchError(f"{user_location()}: {prim.name} on operands of shapes {shapes}: "
                             f"{err}. Reshape or index the operands so their shapes agree") from err


def _tangent_for(out, t):
    """The tangent of ``out``: none for integers and booleans; of ``out``'s
    dtype for floats (a float32 value's tangent is float32 even where a rule
    computed it against float64 operands, as NumPy's promotion does)..."""
    if type(out) is float:
        return t
    av = aval_of(out)
    if not is_float(av):
        return Zero(av)     # integer and boolean values carry no tangent
    if isinstance(t, Zero):
        return t
    t = cast_float(t, av)
    # and of ``out``'s shape: a rule may leave a tangent to broadcast (x % y
    # with y constant has tangent x_dot, of x's shape)
    shape = tuple(_dims.shape(t))
    if shape != tuple(av.shape):
        if None in av.shape:        # a length known only at run time: out's, when it runs
            return broadcast_like(t, out)
        if None not in shape:
            t = broadcast_to(t, shape=av.shape)
    return t


def jvp_flat(fn, primals, tangents, for_grad=False):
    """Run ``fn(*flat) -> list`` forward with tangents; return (outs, out_tangents)."""
    trace = JVPTrace(for_grad=for_grad)
    with set_current(trace):
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = fn(*ins)
        out_p, out_t = [], []
        for o in outs:
            if isinstance(o, JVPTracer) and o._trace is trace:
                out_p.append(o.primal)
                # the tangent handed out has its output's type: a Python
                # float's is a Python float, a NumPy value's a NumPy value
                t = o.tangent
                out_t.append(t if isinstance(t, Zero) else cast_exact(t, o.aval))
            else:
                out_p.append(o)
                out_t.append(Zero(aval_of(o)))
    return out_p, out_t


def jvp_program(prog, mask=None):
    """Program -> Program taking (primals..., tangents...) and returning
    (outputs..., output tangents...), primal and tangent lines interleaved.
    ``mask[k]`` False: input k is constant and has no tangent input. Output
    tangents that are zero are literal zeros."""
    n = len(prog.inputs)
    mask = mask or [True] * n

    def run(*args):
        tans = iter(args[n:])
        tangents = [next(tans) if m else Zero(a) for m, a in zip(mask, prog.in_avals)]
        outs, dots = jvp_flat(lambda *xs: eval_program(prog, xs), args[:n], tangents)
        return list(outs) + list(dots)

    labels = [(v.name, v.role) for v in prog.inputs] + [
        derive(v.name, v.role, Role.TANGENT) for v, m in zip(prog.inputs, mask) if m]
    avals = prog.in_avals + [a for a, m in zip(prog.in_avals, mask) if m]
    return stage(run, avals, name=f"{prog.name}_jvp", in_names=[n for n, _ in labels],
                 in_roles=[r for _, r in labels])
