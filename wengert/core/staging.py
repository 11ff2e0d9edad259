"""The recorder: a trace whose tracers stand for Program variables.

Every primitive applied to a ``StagingTracer`` appends an equation to the
Program under construction; plain values and the values of the traces it is
nested in become literals. What it records is its own policy: a block
recorder (``dynamic``: a branch or loop body, a checkpointed region) also
records what the block computes from the values it closes over; a recorder
of primal work (``records_primal``) also records the runtime primitives
(a random draw) applied to constants. This is the tape of the trace
frontend and the way the transforms turn an interpreter into a Program ->
Program function (stage it out).

A staging tracer may carry the concrete value it stands for (``make_program``
runs user code, whose Python control flow needs values), or none (a linear
program whose inputs are symbolic tangents).

Layer: core.
"""
from __future__ import annotations

import numpy as np

from . import debug as _debug, dims as _dims
from .errors import LeakedTracerError, UnsupportedDtypeError, user_location
from .ir import Eqn, Ident, Lit, Program, Role, Var, aval_of, programs_in, runs_at_call
from .primitive import OPERAND_KIND, TracerBase, Zero, raise_typed, zeros
from .trace import TRACE_STATE, Trace, rules_under, set_current
from .where import locate
from .tracer import Tracer
from .inplace import array_value, is_scalar, link_views, scalar_value

__all__ = ["StagingTrace", "StagingTracer", "stage", "name_value", "closure_convert",
           "defining", "locating"]


def name_value(value, name, role=Role.VALUE):
    """Give the variable a recorded value stands for the user name ``name``
    and, unless its trace gave it one, the role ``role`` (a value keeps the
    first name it was given)."""
    atom = getattr(value, "atom", None)
    if type(value) is StagingTracer and isinstance(atom, Var) and not atom.name:
        atom.name = name
        if atom.role is Role.VALUE:
            atom.role = role
    return value


class StagingTracer(Tracer):
    # ``_base``/``_views``: as ``JVPTracer``'s (``inplace.link_views``)
    __slots__ = ("atom", "val", "scalar", "_base", "_views", "__weakref__")

    def __init__(self, trace, var, val=None, scalar=False):
        self._trace = trace
        self.atom = var       # a Var, or a Lit for a lifted constant
        self.val = val        # the concrete value, or None when symbolic
        # a 0-d value that is a NumPy or Python scalar for certain, which
        # ``y += v`` rebinds; False: it may be a 0-d array, which NumPy writes
        # in place (``inplace.is_scalar``). Set where the tracer is made: by
        # the row that computed it (``Primitive.numpy_scalar``), or from the
        # value an input stands for
        self.scalar = scalar

    @property
    def aval(self):
        return self.atom.aval

    def name_hint(self, name, role=Role.VALUE):
        name_value(self, name, role)

    @property
    def concrete_value(self):
        val = self.val
        return getattr(val, "concrete_value", val) if isinstance(val, Tracer) else val

    def become(self, new):
        """Turn into ``new``, a value of the same trace (``y += v``: ``inplace``)."""
        self.atom, self.val = new.atom, new.val

    def clone(self, scalar=None):
        """Another tracer of the same value (a copy: ``inplace.fresh``), of
        the same kind (``x.copy()`` of a NumPy scalar is one) or, given
        ``scalar``, of that kind."""
        return StagingTracer(self._trace, self.atom, self.val,
                             self.scalar if scalar is None else scalar)

    def numpy_scalar(self):
        return self.scalar

    def as_scalar(self):
        """This value as NumPy holds a scalar (``np.sum`` of a 0-d array)."""
        if self.scalar and type(self.val) is not np.ndarray:
            return self
        return StagingTracer(self._trace, self.atom, scalar_value(self.val), True)

    def as_maybe_array(self):
        return self.clone(scalar=False) if self.scalar and self.val is None else self

    def as_array(self):
        """This value as NumPy holds it after ``np.asarray``: a 0-d array."""
        if not self.scalar and (self.val is None or type(self.val) is np.ndarray):
            return self
        return StagingTracer(self._trace, self.atom, array_value(self.val), False)


class StagingTrace(Trace):
    """Records equations. ``concrete``: compute values alongside (user code).
    ``dynamic``: a block's recorder, which records every application with a
    traced operand (its own or an enclosing trace's), so what a block
    computes from values it closes over stays inside the block; otherwise an
    application with no operand of its own goes to the parent."""

    def __init__(self, concrete=False, role=Role.VALUE, dynamic=False, keep_custom=False, parent=None):
        super().__init__(parent)
        self.eqns = []
        self.concrete = concrete
        self.dynamic = dynamic
        self.keep_custom = keep_custom   # record custom-rule calls instead of their bodies
        self.role = role      # the role of the variables it defines (``ir.Role``)
        # a linear Program's recorder (linearize's tangents) holds no primal work:
        # what it is given on constants is its parent's
        self.records_primal = role is not Role.TANGENT
        if not self.records_primal:
            self.process_consts = self.parent.process_consts

    def new_input(self, aval, val=None, name="", role=Role.VALUE):
        return StagingTracer(self, Var(aval, name, role), val)

    def constant(self, x):
        """A value from outside (plain, or an enclosing trace's) as a literal."""
        if isinstance(x, TracerBase):
            self.check_enclosing(x)
        val = None
        if self.concrete:
            val = x.concrete_value if isinstance(x, Tracer) else x
        return StagingTracer(self, Lit(x), val, is_scalar(x))

    def check_enclosing(self, x):
        """``x``, a tracer that is not this trace's: one of an enclosing trace,
        a constant here. Any other (a custom rule closing over a variable
        being differentiated, which it sees under that trace's parent) would
        be recorded as a literal holding a tracer: refused."""
        owner, t = x._trace, self.parent
        while t is not None:
            if t is owner:
                return x
            t = t.parent
        raise LeakedTracerError(
            f"{user_location()}: a traced value reached a recording outside the "
            "transformation it belongs to (a custom rule or a stored function closing over "
            "a variable being differentiated); pass the value in as an argument instead")

    def process(self, prim, args, params):
        if not self.dynamic:
            for a in args:
                if type(a) is StagingTracer and a._trace is self:
                    break
            else:
                return self.parent.process(prim, args, params)
        return self.record(prim, args, params)

    def process_consts(self, prim, args, params):
        # a runtime primitive on constants is recorded where primal work is,
        # never computed while staging; and so is a loop or branch whose
        # Programs draw or read a global
        if self.records_primal and (prim.runtime or
                                    any(runs_at_call(p) for p in programs_in(params))):
            return self.record(prim, args, params)
        return self.parent.process_consts(prim, args, params)

    def record(self, prim, args, params):
        if prim.inline and not (self.keep_custom and prim.abstract_eval is not None):
            with rules_under(self):
                return prim.impl(*args, **params)
        if self.concrete:
            tracers = [a if type(a) is StagingTracer and a._trace is self else self.constant(a)
                       for a in args]
            atoms = [t.atom for t in tracers]
            vals = None
            if all(t.val is not None for t in tracers) and not prim.runtime:
                concrete = [t.val for t in tracers]
                try:
                    vals = prim.impl(*_dims.plain_numbers(concrete), **params)
                except ValueError as err:
                    raise_typed(prim, concrete, params, err)
                out_avals = ([aval_of(v) for v in vals] if prim.multiple_results
                             else aval_of(vals))
            else:
                out_avals = prim.abstract_eval(*[t.aval for t in tracers], **params)
        else:
            # symbolic recording (the linear program of linearize): the hot path
            atoms = [a.atom if type(a) is StagingTracer and a._trace is self else
                     Lit(self.check_enclosing(a) if isinstance(a, TracerBase) else a)
                     for a in args]
            vals = None
            out_avals = prim.abstract_eval(*[x.aval for x in atoms], **params)
        # (linearize's tangents mirror primal dtypes, already checked where they were staged)
        if self.records_primal and not prim.complex_ok and \
                _complex(atoms, out_avals, prim.multiple_results):
            raise UnsupportedDtypeError.complex_operand(prim.name)
        state = TRACE_STATE
        if state.locate:
            where = locate()
        elif _debug.NANS.on:    # wg.debug_nans: every equation knows its line
            where = _debug.WHERE.where or state.where or locate()
        else:
            where = state.where
        if prim.multiple_results:
            outs = [Var(a, "", self.role_of(a)) for a in out_avals]
            self.eqns.append(Eqn(prim, atoms, outs, params, where))
            scalars = [_scalar_result(prim, args, params, a) for a in out_avals]
            if vals is None:
                return tuple(StagingTracer(self, v, None, k) for v, k in zip(outs, scalars))
            res = tuple(StagingTracer(self, v, x, k) for v, x, k in zip(outs, vals, scalars))
            for r in res:
                link_views(r, args)
            return res
        out = Var(out_avals, "", self.role_of(out_avals))
        self.eqns.append(Eqn(prim, atoms, (out,), params, where))
        res = StagingTracer(self, out, vals, _scalar_result(prim, args, params, out_avals))
        if vals is not None:
            link_views(res, args)
        return res

    def role_of(self, aval):
        """The role of a variable of ``aval`` it defines: its own (``role``), except
        that an integer or a boolean is a value in any role (a reverse sweep's index
        arithmetic, ``i + 1``, is no cotangent: no derivative flows through it)."""
        if self.role is Role.VALUE or aval.dtype.kind in "fc":
            return self.role
        return Role.VALUE

    def atom(self, x):
        """The Program operand for an output value (Zero -> literal zeros)."""
        if isinstance(x, StagingTracer) and x._trace is self:
            return x.atom
        if isinstance(x, Zero):
            return Lit(zeros(x.aval))
        return Lit(x)


def _scalar_result(prim, args, params, aval):
    """Whether a result of ``prim`` is a scalar for certain: 0-d, and a
    Python number (``float(x)``, arithmetic of Python floats) or a NumPy
    scalar by its row (``Primitive.numpy_scalar``)."""
    if aval.shape:
        return False
    if aval.weak:
        return True
    kind = prim.numpy_scalar
    if kind is OPERAND_KIND:
        return is_scalar(args[0])
    return kind(**params) if callable(kind) else kind


def _complex(atoms, out_avals, multiple):
    """Whether an operand or a result is complex: refused on a primitive whose
    rules were not audited for complex values (``Primitive.complex_ok``),
    as a rule written for reals can be silently wrong on them (``sign``,
    an ordering comparison, ``abs``'s real derivative)."""
    outs = out_avals if multiple else (out_avals,)
    return any(a.dtype.kind == "c" for a in outs) or any(
        x.aval.dtype.kind == "c" for x in atoms)


def stage(fn, in_avals, name="f", in_names=None, concrete_vals=None, role=Role.VALUE,
          dynamic=False, keep_custom=False, in_roles=None):
    """Run ``fn(*tracers) -> list`` on fresh symbolic inputs; return the Program.
    ``in_names``/``in_roles``: the inputs' user names and roles; ``role``
    is the role of the variables it defines; ``dynamic``
    records the block's work on values it closes over too (``StagingTrace``);
    ``keep_custom`` keeps calls of custom-rule functions as equations."""
    trace = StagingTrace(concrete=concrete_vals is not None, role=role, dynamic=dynamic,
                         keep_custom=keep_custom)
    with set_current(trace):
        in_names = in_names or [""] * len(in_avals)
        in_roles = in_roles or [Role.VALUE] * len(in_avals)
        vals = concrete_vals or [None] * len(in_avals)
        ins = [trace.new_input(a, v, n, r)
               for a, v, n, r in zip(in_avals, vals, in_names, in_roles)]
        outs = fn(*ins)
        prog = Program([t.atom for t in ins], trace.eqns, [trace.atom(o) for o in outs], name)
    return prog


class defining:
    """``with defining(role):`` the current trace, where it records (a
    ``StagingTrace``), gives the variables it defines meanwhile the role
    ``role``: a reverse sweep's values are cotangents (``backward_pass``),
    which names them ``ct`` and shows generated code where the sweep starts."""

    __slots__ = ("role", "trace", "prev")

    def __init__(self, role):
        self.role = role

    def __enter__(self):
        trace = TRACE_STATE.current
        self.trace = trace if type(trace) is StagingTrace else None
        if self.trace is not None:
            self.prev, trace.role = trace.role, self.role

    def __exit__(self, *exc):
        if self.trace is not None:
            self.trace.role = self.prev


class locating:
    """``with locating():`` the equations recorded meanwhile take the line of the
    user's code that made them (``core.where.locate``): the source frontend
    staging a function."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = TRACE_STATE.locate
        TRACE_STATE.locate = True

    def __exit__(self, *exc):
        TRACE_STATE.locate = self.prev


def closure_convert(prog):
    """Literals holding traced values (a block closed over an enclosing
    transformation's variables) become leading inputs: (Program, values)."""
    consts, new_inputs, seen = [], [], {}

    def conv(x):
        if isinstance(x, Lit) and isinstance(x.val, Tracer):
            key = Ident(x.val)
            if key not in seen:
                # the input keeps the name and role of the variable it stands for
                atom = getattr(x.val, "atom", None)
                seen[key] = (Var(x.aval, atom.name, atom.role) if isinstance(atom, Var)
                             else Var(x.aval))
                new_inputs.append(seen[key])
                consts.append(x.val)
            return seen[key]
        return x

    eqns = [e.replace(inputs=tuple(conv(x) for x in e.inputs)) for e in prog.eqns]
    outputs = [conv(x) for x in prog.outputs]
    return Program(new_inputs + prog.inputs, eqns, outputs, prog.name), consts
