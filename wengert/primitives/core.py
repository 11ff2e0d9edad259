"""The Primitive type, the one registry, and ``bind``: the single dispatch point.

A primitive is declared once (see STYLE.md section 2) with these fields:

* ``impl(*args, **params)``      NumPy implementation on concrete values;
* ``abstract_eval(*avals, **params) -> Aval | tuple[Aval]``   shape/dtype rule;
* ``jvp(primals, tangents, **params) -> (out, out_dot)``       written with
  primitive wrappers, so it can itself be differentiated;
* ``transpose(ct, *args, **params) -> tuple``  only for primitives linear in
  some operands; operands being transposed arrive as ``Linear(aval)`` markers
  and the rule returns one cotangent per operand (``None`` where not linear);
  otherwise the explicit ``NOT_LINEAR``;
* ``zero_rule(*args, **params)``  what the primitive gives when an operand is a
  symbolic ``Zero`` tangent (zero propagation);
* ``batch(args, batched, **params)``  how a linear primitive runs on operands
  carrying a leading batch axis (Jacobians in one pass); ``None`` falls back
  to a loop over the batch;
* ``complex_ok``  its rules were audited for complex operands and results
  (JAX's conventions: complex tangents, the linear transpose without
  conjugation); complex values on any other primitive raise
  ``UnsupportedDtypeError`` naming it. The audited rows are listed in one
  place, ``complex_parts.COMPLEX_OK``.

``bind`` sends a primitive application to the trace of the highest level among
its operands (a transform in progress), or to ``impl`` when no operand is a
tracer.  Traces are nested by level; a value of a lower trace is a constant to
a higher one (closure over an outer derivative's variable).
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from .. import context as _context, dims as _dims
from .symbolic_constants import constant as _constant
from ..ir import Ident, Lit, aval_of, programs_in, runs_at_call
from ..errors import LeakedTracerError, UnsupportedDtypeError, WengertError, user_location

__all__ = ["Primitive", "PRIMITIVES", "register", "wrapper_of", "NOT_LINEAR", "Zero", "Linear", "bind",
           "snapshot", "effects_made",
           "Trace", "TracerBase", "new_trace", "instantiate", "is_zero", "zero_if_any",
           "eval_program", "is_float", "rule_error"]

PRIMITIVES: dict[str, "Primitive"] = {}


class _NotLinear:
    def __repr__(self):
        return "NOT_LINEAR"


NOT_LINEAR = _NotLinear()


class Primitive:
    """One row of the primitive table."""

    __slots__ = ("name", "nargs", "impl", "abstract_eval", "jvp", "transpose",
                 "zero_rule", "batch", "multiple_results", "inline", "differentiable",
                 "needs_trace", "runtime", "effect", "complex_ok", "__dict__")

    def __init__(self, name, *, nargs, impl, abstract_eval, jvp, transpose,
                 zero_rule=None, batch=None, multiple_results=False, inline=False,
                 differentiable=True, needs_trace=False, runtime=False, effect=False,
                 complex_ok=False):
        self.name = name
        self.nargs = nargs                  # None: variadic
        self.impl = impl
        self.abstract_eval = abstract_eval
        self.jvp = jvp
        self.transpose = transpose
        self.zero_rule = zero_rule
        self.batch = batch
        self.multiple_results = multiple_results
        self.inline = inline                # staging runs impl on tracers (custom rules)
        self.differentiable = differentiable  # False: outputs carry no tangent
        self.needs_trace = needs_trace      # jvp rule takes trace= (control flow)
        # runtime: its value is known only when the code runs (a global's
        # array now, a random draw), so staging records it and never computes
        # it (``bind``); effect: it also acts outside (draws, prints), so it is
        # never merged, dropped or run twice (``host``)
        self.runtime = runtime or effect
        self.effect = effect
        self.complex_ok = complex_ok        # rules right for complex values (see above)

    @property
    def linear(self):
        return self.transpose is not NOT_LINEAR

    def __repr__(self):
        return f"<primitive {self.name}>"


def wrapper_of(prim):
    """The user-facing function of a primitive: ``bind`` with the primitive
    fixed (a C-level partial, so a wrapper costs no Python frame)."""
    wrapper = functools.partial(bind, prim)
    wrapper.__name__ = prim.name
    return wrapper


def register(prim):
    if prim.name in PRIMITIVES:
        raise ValueError(f"primitive {prim.name!r} registered twice")
    PRIMITIVES[prim.name] = prim
    return prim


# --- symbolic zeros and linear markers -------------------------------------

class HasAval:
    """``shape``, ``ndim``, ``size`` and ``dtype`` read from ``self.aval``:
    symbolic values answer NumPy's shape questions like arrays."""

    __slots__ = ()

    @property
    def shape(self):
        return self.aval.shape

    @property
    def ndim(self):
        return self.aval.ndim

    @property
    def size(self):
        return self.aval.size

    @property
    def dtype(self):
        return self.aval.dtype


class Zero(HasAval):
    """A symbolic zero tangent or cotangent of a known aval.

    ``Zero.like(value)`` defers computing the aval until a rule asks for it:
    most zero tangents (those of constants) are only tested for, never read."""

    __slots__ = ("_aval", "_like")

    def __init__(self, aval):
        self._aval = aval

    @classmethod
    def like(cls, value):
        z = cls.__new__(cls)
        z._aval = None
        z._like = value
        return z

    @property
    def aval(self):
        if self._aval is None:
            self._aval = aval_of(self._like)
            self._like = None
        return self._aval

    def __repr__(self):
        return f"Zero({self.aval.short()})"


class Linear(HasAval):
    """Marks the operand a transpose rule is transposing with respect to."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Linear({self.aval.short()})"


def snapshot(x, memo=None):
    """``x`` as a value a derivative may keep: a writeable ndarray is copied
    (its owner may write to it before the derivative is used: ``w *= 0.25``
    after ``y = w * x``), read-only arrays, scalars and tracers are kept as
    they are, and so are constants of symbolic shape (``context``), which
    staging made and nobody else holds. ``memo`` (a dict that lives as long
    as one derivative's recording) keeps one copy of an array while it holds
    the same bytes: a loop that reads a global array at each step keeps one
    copy, not one per step."""
    if type(x) is not np.ndarray or not x.flags.writeable or _context.shape_of(x) is not None:
        return x
    if memo is None:
        return x.copy()
    key = Ident(x)          # holds x: its id is not reused while the memo lives
    kept = memo.get(key)
    if kept is None or not _same_bytes(kept, x):
        kept = memo[key] = x.copy()
    return kept


def _same_bytes(a, b):
    """Same shape, dtype and bytes (NaN equal to itself, 0.0 not -0.0)."""
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).reshape(-1).view(np.uint8),
        np.ascontiguousarray(b).reshape(-1).view(np.uint8))


def is_zero(x):
    return isinstance(x, Zero)


def is_float(aval):
    return aval.dtype.kind in "fc"


def instantiate(x):
    """A Zero becomes a concrete array of zeros (a Python 0.0 for the tangent
    of a Python float, which stays weakly typed); anything else is returned."""
    return zeros(x.aval) if isinstance(x, Zero) else x


def zeros(aval):
    """Concrete zeros of ``aval``: a Python 0.0 for a Python float's. Of a
    symbolic shape (``dims``), an array remembered as having that shape."""
    if aval.weak and aval.shape == () and aval.dtype == np.float64:
        return 0.0
    return _dims.zeros(aval.shape, aval.dtype)


def _out_avals(prim, args, params):
    avals = [aval_of(a) for a in args]
    return prim.abstract_eval(*avals, **params)


def zero_if_any(prim):
    """Zero rule for a primitive that is linear in each operand separately
    (``mul``, ``matmul``, ``reduce_sum``...): a zero operand gives a zero."""
    def rule(*args, **params):
        out = _out_avals(prim, args, params)
        return tuple(Zero(a) for a in out) if prim.multiple_results else Zero(out)
    return rule


# --- traces ----------------------------------------------------------------

class TracerBase(HasAval):
    """A value of a trace in progress. Subclasses carry what their trace needs;
    ``frontends``/``transforms`` define them, ``primitives.numpy_api`` gives them
    NumPy's face (operators, ufuncs, methods)."""

    __slots__ = ("_trace",)

    def name_hint(self, hint):
        """Pass a user's variable name on to the Program being recorded (if any)."""


class Trace:
    """A transformation in progress. ``process`` interprets one primitive
    application whose operands include at least one of its tracers; ``lift``
    makes a tracer of a value that belongs to no trace or to a lower one.

    A *dynamic* trace (the recording of a branch or loop body) also takes the
    operations on lower traces' values made while it is on top: what a block
    computes from values it closes over stays inside the block."""

    level = 0
    dynamic = False
    records_primal = False      # records primal work into a Program (see bind)

    def lift(self, x):
        raise NotImplementedError

    def process(self, prim, args, params):
        raise NotImplementedError


class _TraceState(threading.local):
    """The traces active in this thread: each thread differentiates on its
    own stack, so derivatives taken in several threads at once never see
    each other's tracers."""

    def __init__(self):
        self.stack = []         # active traces, innermost last
        self.dynamic = None     # the innermost dynamic trace, if it is on top of the stack
        self.effects = 0        # applications of primitives with an effect so far


_STATE = _TraceState()


def tracing():
    """Whether a transformation is in progress in this thread."""
    return bool(_STATE.stack)


class new_trace:
    """``with new_trace(t):`` pushes ``t`` above every trace now active."""

    __slots__ = ("trace",)

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        state = _STATE
        self.trace.level = len(state.stack) + 1
        state.stack.append(self.trace)
        state.dynamic = self.trace if self.trace.dynamic else None
        return self.trace

    def __exit__(self, *exc):
        state = _STATE
        state.stack.pop()
        self.trace.level = -self.trace.level   # a tracer that escapes is recognised as leaked
        top = state.stack[-1] if state.stack else None
        state.dynamic = top if top is not None and top.dynamic else None
        return False


def _primal_stager():
    """The innermost active trace that records primal equations into a
    Program (``records_primal``): where a runtime primitive applied to
    constants belongs. None when no Program is being recorded (the value is
    then wanted now)."""
    for t in reversed(_STATE.stack):
        if t.records_primal:
            return t
    return None


def effects_made():
    """How many primitives with an effect this thread has applied: a change
    across a piece of staging says it made (or recorded) a call with an effect."""
    return _STATE.effects


def bind(prim, *args, **params):
    """Apply ``prim``: to the highest trace among the operands, else ``impl``."""
    if prim.effect:
        _STATE.effects += 1
    trace = None
    has_zero = False
    for a in args:
        if isinstance(a, TracerBase):
            t = a._trace
            if trace is None or t.level > trace.level:
                if t.level <= 0:
                    raise LeakedTracerError(
                        f"a traced value escaped its transformation and reached {prim.name}; "
                        "return it from the function instead of storing it outside")
                trace = t
        elif isinstance(a, Zero):
            has_zero = True
    if has_zero:
        if prim.zero_rule is not None:
            return prim.zero_rule(*args, **params)
        args = tuple(instantiate(a) for a in args)
    if trace is None:
        # a loop or branch on constant operands whose Programs draw or read a
        # global is made at each call too, never computed while staging
        if _STATE.stack and (prim.runtime or any(runs_at_call(p) for p in programs_in(params))):
            # never computed while staging: recorded where primal work is
            stager = _primal_stager()
            if stager is not None:
                return stager.process(prim, args, params)
        elif (ctx := _context.symbolic_now()) is not None:
            return _constant(ctx, prim, args, params)
        if not prim.complex_ok and any(_is_complex(a) for a in args):
            # a rule (det's jvp calls adjugate) evaluating a primitive whose
            # rules are for real values on a complex one: its value would be
            # wrong (a cast to float drops the imaginary part), not refused
            raise UnsupportedDtypeError.complex_operand(prim.name)
        try:
            return prim.impl(*_dims.plain_numbers(args), **params)
        except ValueError as err:
            typed = rule_error(prim, args, params)
            if typed is None:
                raise
            raise typed from err
    dyn = _STATE.dynamic
    if dyn is not None and trace.level < dyn.level:
        trace = dyn
    return trace.process(prim, args, params)


def _is_complex(x):
    return type(x) is complex or getattr(getattr(x, "dtype", None), "kind", "") == "c"


def rule_error(prim, args, params):
    """Why ``prim`` refuses ``args``, in wengert's terms: the typed error its
    shape rule raises on their avals (with the user's file:line), or None.

    Concrete values skip the shape rule (NumPy checks them as it computes),
    so where NumPy refuses them (a ValueError of its own wording) the rule is
    asked: the error is then the same as where the rule runs first (staging,
    the source engine), whichever way the value was computed."""
    if prim.abstract_eval is None:
        return None
    try:
        avals = [aval_of(a) for a in args]
        prim.abstract_eval(*avals, **params)
    except WengertError as err:
        where = user_location()
        return err if str(err).startswith(where) else type(err)(f"{where}: {err}")
    except Exception:   # noqa: BLE001 -- the rule has nothing to add; NumPy's error stands
        return None
    return None


def eval_program(prog, args):
    """Evaluate a Program by binding each equation: on concrete values this is
    the NumPy interpreter; on tracers it replays the Program into their trace."""
    env = {}
    for v, a in zip(prog.inputs, args):
        env[v] = a
    for eqn in prog.eqns:
        ins = [x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs]
        outs = bind(eqn.prim, *ins, **eqn.params)
        if eqn.prim.multiple_results:
            for v, o in zip(eqn.outputs, outs):
                env[v] = o
                if v.hint and isinstance(o, TracerBase):
                    o.name_hint(v.hint)
        else:
            v = eqn.outputs[0]
            env[v] = outs
            if v.hint and isinstance(outs, TracerBase):
                outs.name_hint(v.hint)
    return [x.val if isinstance(x, Lit) else env[x] for x in prog.outputs]
