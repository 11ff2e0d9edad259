"""Applying a primitive: ``bind``, the single dispatch point, and the traces
that interpret applications.

``bind`` hands a primitive application to the current trace of the thread
(``set_current``): the root ``EvalTrace`` runs ``impl``; a transformation
in progress handles its own tracers, takes the values of the traces it is
nested in (its ancestors) as constants (closure over an outer derivative's
variable), and hands an application with no operand of its own to its
parent. ``eval_program`` evaluates a Program by binding each equation: the
NumPy interpreter on concrete values, a replay into the current trace on
tracers.

Layer: core.
"""
from __future__ import annotations

import functools
import threading

from numpy import asarray, ndarray

from . import context as _context, debug as _debug, dims as _dims, libraries as _libraries
from .constants import constant as _constant
from .ir import Lit, Role, programs_in, runs_at_call
from .atoms import TracerBase, is_duck_array, same_library
from .errors import LeakedTracerError, UnsupportedDtypeError, user_location
from .primitive import ZERO_IF_ANY, Zero, instantiate, is_complex, raise_typed, zeros_of

__all__ = ["Trace", "EvalTrace", "EVAL", "TRACE_STATE", "tracing", "set_current", "rules_under",
           "effects_made", "bind", "eval_program", "name_as", "wrapper_of"]


def wrapper_of(prim):
    """The user-facing function of a primitive: ``bind`` with the primitive
    fixed (a C-level partial, so a wrapper costs no Python frame)."""
    wrapper = functools.partial(bind, prim)
    wrapper.__name__ = prim.name
    return wrapper


# --- traces ----------------------------------------------------------------

class Trace:
    """An interpreter of primitive applications: the root runs ``impl``
    (``EvalTrace``), the others are transformations in progress. Each holds
    its ``parent``, the trace that was current when it started; ``bind``
    hands every application to the current trace.

    ``process`` interprets an application with a tracer among its operands:
    a trace handles its own tracers; the values of its ancestors are its
    constants; an application with no operand of its own goes to the parent.
    ``process_consts`` interprets one with no tracer at all (by default, the
    parent's business: in the end ``impl``). A transformation runs its rules
    under its parent (``rules_under``)."""

    live = True
    # a trace whose tracers carry tangents: ``drop_tangent(x)`` is ``x`` with
    # no tangent (``eval_program`` asks it for the operands of an equation
    # whose outputs' tangents reach no output of the Program it replays)
    drop_tangent = None

    def __init__(self, parent=None):
        self.parent = parent if parent is not None else TRACE_STATE.current

    def process(self, prim, args, params):
        return self.parent.process(prim, args, params)

    def process_consts(self, prim, args, params):
        return self.parent.process_consts(prim, args, params)

    def close(self):
        """The transformation is over: a tracer of it that is used again leaked."""
        self.live = False


class EvalTrace(Trace):
    """The root: applies ``impl`` to concrete values (a NumPy interpreter),
    with the checks that give wengert's typed errors."""

    def __init__(self):
        self.parent = None

    def process(self, prim, args, params):
        # a tracer reached the root: no trace in the current chain owns it
        # (a value of a transformation that is not an enclosing one)
        raise LeakedTracerError(
            f"{user_location()}: a traced value reached {prim.name} outside the "
            "transformation it belongs to (a custom rule or a stored function closing over "
            "a variable being differentiated); pass the value in as an argument instead")

    def process_consts(self, prim, args, params):
        # a loop or branch on constant operands whose Programs draw or read a
        # global is made at each call too: while a transformation is in
        # progress, never computed on the constant path of symbolic lengths
        ctx = _context.symbolic_now()
        if ctx is not None and not (TRACE_STATE.active and (
                prim.runtime or any(runs_at_call(p) for p in programs_in(params)))):
            return _constant(ctx, prim, args, params)
        if not prim.complex_ok:
            # a rule (det's jvp calls adjugate) evaluating a real-only row on a
            # complex value: refused (``core.refuse_complex``), here inline,
            # an array's dtype read directly (the interpreter's path)
            for a in args:
                if a.dtype.kind == "c" if type(a) is ndarray else is_complex(a):
                    raise UnsupportedDtypeError.complex_operand(prim.name)
        call = same_library(args)
        try:
            if call is not args and _libraries.lazy(call) and _libraries.own_numpy(prim):
                return _libraries.row_task(prim, call, params)  # (Dask's: one task)
            if call is not args and _libraries.numpy_only(prim):    # (CuPy's: refused)
                _libraries.refuse_numpy_only(prim, next(a for a in call if is_duck_array(a)),
                                             user_location())
            out = prim.impl(*_dims.plain_numbers(call), **params)
        except ValueError as err:
            raise_typed(prim, args, params, err)
        if _debug.NANS.on:
            _debug.check(prim, out)
        return out


EVAL = EvalTrace()


class _TraceState(threading.local):
    """The current trace of this thread: each thread differentiates under its
    own, so derivatives taken in several threads at once never see each
    other's tracers."""

    def __init__(self):
        self.current = EVAL     # the trace ``bind`` hands applications to
        self.active = 0         # transformations in progress (``set_current``)
        self.effects = 0        # applications of primitives with an effect so far
        # the user's line the equations recorded now come from (``core.where``),
        # and whether a recorder finds it itself, in the user's frames (the source frontend)
        self.where = None
        self.locate = False
        # ``wild``: the derivatives the rule now running is given may be infinite
        # where the function is finite (they came through a local derivative that
        # is: ``primitives.unbounded``), so its products with primal
        # factors guard their zeros; ``unbounded``: how many such local
        # derivatives have been applied (a transform compares it before and
        # after a rule to mark what the rule gave as wild)
        self.wild = False
        self.unbounded = 0


TRACE_STATE = _TraceState()


def tracing():
    """Whether a transformation is in progress in this thread."""
    return TRACE_STATE.active > 0


class rules_under:
    """``with rules_under(t):`` makes ``t`` (an existing trace: a parent, or
    a recorder) current for a rule's work, then restores the current trace."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        state = TRACE_STATE
        self.prev = state.current
        state.current = self.trace
        return self.trace

    def __exit__(self, *exc):
        TRACE_STATE.current = self.prev
        return False


class set_current(rules_under):
    """``with set_current(t):`` runs the block under ``t``, a new trace whose
    parent is the current one (``rules_under``, counted as a running
    transformation); afterwards ``t`` is closed (its tracers are leaked
    values) and its parent is current again."""

    __slots__ = ()

    def __enter__(self):
        TRACE_STATE.active += 1
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__()
        TRACE_STATE.active -= 1
        self.trace.close()
        return False


def effects_made():
    """How many primitives with an effect this thread has applied: a change
    across a piece of staging says it made (or recorded) a call with an effect."""
    return TRACE_STATE.effects


def bind(prim, *args, **params):
    """Apply ``prim``: hand the application to the current trace."""
    state = TRACE_STATE
    if prim.effect:
        state.effects += 1
    traced = has_zero = sequences = False
    for a in args:
        if isinstance(a, TracerBase):
            if not a._trace.live:
                raise LeakedTracerError(
                    f"{user_location()}: a traced value escaped its transformation and "
                    f"reached {prim.name}; return it from the function instead of storing "
                    "it outside")
            traced = True
        elif isinstance(a, Zero):
            has_zero = True
        elif type(a) is list or type(a) is tuple:
            sequences = True
    if sequences and not prim.inline:
        # a list or tuple operand is the array NumPy makes of it (np.digitize(x, [0, 1]))
        args = tuple(asarray(a) if type(a) is list or type(a) is tuple else a for a in args)
    if has_zero:
        rule = prim.zero_rule
        if rule is ZERO_IF_ANY:
            return zeros_of(prim, args, params)
        if rule is not None:
            return rule(*args, **params)
        args = tuple(instantiate(a) for a in args)
    current = state.current
    if traced:
        return current.process(prim, args, params)
    return current.process_consts(prim, args, params)


def eval_program(prog, args):
    """Evaluate a Program by binding each equation: on concrete values this is
    the NumPy interpreter; on tracers it replays the Program into their trace.
    While ``wg.debug_nans`` is on, each equation's work is its line's
    (``debug.at``)."""
    if _debug.NANS.on:
        return _eval_located(prog, args)
    env = {}
    for v, a in zip(prog.inputs, args):
        env[v] = name_as(a, v)
    value = _VALUE
    drop = TRACE_STATE.current.drop_tangent
    # forward mode replaying a Program: an equation whose tangents no output
    # needs runs on the primals alone (``grad`` then ``jvp``: the tangent of
    # an ``argmin`` path, which only feeds a comparison, is never formed)
    dead = tangent_dead(prog) if drop is not None else ()
    state = TRACE_STATE
    # a transform replaying the Program records each equation's work under its
    # line (``core.where``); the concrete interpreter's path skips it
    outer = state.where if state.active else _NOWHERE
    try:
        for k, eqn in enumerate(prog.eqns):
            ins = [x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs]
            if k in dead:
                ins = [drop(x) for x in ins]
            if outer is not _NOWHERE:
                state.where = eqn.where or outer
            outs = bind(eqn.prim, *ins, **eqn.params)
            # name_as, inline: most variables have no name or role (the hot concrete path)
            if eqn.prim.multiple_results:
                for v, o in zip(eqn.outputs, outs):
                    env[v] = o
                    if (v.name or v.role is not value) and isinstance(o, TracerBase):
                        o.name_hint(v.name, v.role)
            else:
                v = eqn.outputs[0]
                env[v] = outs
                if (v.name or v.role is not value) and isinstance(outs, TracerBase):
                    outs.name_hint(v.name, v.role)
    finally:
        if outer is not _NOWHERE:
            state.where = outer
    return [x.val if isinstance(x, Lit) else env[x] for x in prog.outputs]


_NOWHERE = object()


_VALUE = Role.VALUE


def _eval_located(prog, args):
    """``eval_program`` with each equation's work done ``at`` it."""
    env = {v: name_as(a, v) for v, a in zip(prog.inputs, args)}
    drop = TRACE_STATE.current.drop_tangent
    dead = tangent_dead(prog) if drop is not None else ()
    for k, eqn in enumerate(prog.eqns):
        ins = [x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs]
        if k in dead:
            ins = [drop(x) for x in ins]
        with _debug.at(eqn):
            outs = bind(eqn.prim, *ins, **eqn.params)
        outs = outs if eqn.prim.multiple_results else (outs,)
        for v, o in zip(eqn.outputs, outs):
            env[v] = name_as(o, v)
    return [x.val if isinstance(x, Lit) else env[x] for x in prog.outputs]


def tangent_dead(prog):
    """The positions of ``prog``'s equations none of whose outputs' tangents
    can reach a tangent of its outputs: a tangent flows from every inexact
    (float or complex) operand of an equation to each of its inexact outputs,
    and integers and booleans carry none (a comparison ends a path). A
    structured equation (a loop, a branch) counts as one, its outputs
    depending on all its operands."""
    need = {v for v in prog.outputs if not isinstance(v, Lit) and _inexact(v)}
    dead = set()
    for k in range(len(prog.eqns) - 1, -1, -1):
        eqn = prog.eqns[k]
        if any(v in need for v in eqn.outputs):
            need.update(x for x in eqn.inputs if not isinstance(x, Lit) and _inexact(x))
        else:
            dead.add(k)
    return dead


def _inexact(var):
    return var.aval.dtype.kind in "fc"


def name_as(value, var):
    """``value``, which stands for ``var`` of a Program being evaluated: a
    traced value takes ``var``'s user name and role into the Program being
    recorded (``d_p`` stays ``d_p`` when a Program is replayed)."""
    if (var.name or var.role is not _VALUE) and isinstance(value, TracerBase):
        value.name_hint(var.name, var.role)
    return value
