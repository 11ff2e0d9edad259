"""The Primitive type, the one registry, and ``bind``: the single dispatch point.

A primitive is declared once (see STYLE.md section 2) with these fields:

* ``impl(*args, **params)``      NumPy implementation on concrete values;
* ``abstract_eval(*avals, **params) -> Aval | tuple[Aval]``   shape/dtype rule;
* ``jvp(primals, tangents, **params) -> (out, out_dot)``       written with
  primitive wrappers, so it can itself be differentiated; or ``BY_IMPL``:
  the transform runs ``impl`` (written with primitives) on its own values;
* ``linearize``, ``linearize_for_vjp``, ``jvp_for_grad``: optional rules of
  the same form that one transform uses in place of ``jvp`` (each trace picks
  its rule, see ``transforms/jvp.py``): ``linearize`` where the tangents are
  recorded into a linear Program (control flow splits into a primal and a
  linear part), ``linearize_for_vjp`` where that Program is then transposed
  (checkpoints, custom_vjp's fwd/bwd), ``jvp_for_grad`` where forward mode
  stands in for ``grad``;
* ``transpose(ct, *args, **params) -> tuple``  only for primitives linear in
  some operands; operands being transposed arrive as ``Linear(aval)`` markers
  and the rule returns one cotangent per operand (``None`` where not linear);
  otherwise the explicit ``NOT_LINEAR``;
* ``zero_rule(*args, **params)``  what the primitive gives when an operand is a
  symbolic ``Zero`` tangent (zero propagation);
* ``batch(args, batched, **params)``  how a linear primitive runs on operands
  carrying a leading batch axis (Jacobians in one pass); ``None`` falls back
  to a loop over the batch;
* ``dce(eqn, used, dce) -> eqn``  the equation without the parts (loop
  carries, operands) that its ``used`` outputs (one flag each) do not need
  (``dce``: the pass, for the sub-Programs it prunes);
* ``simplify(eqn, ins, copies) -> (eqns, outs) | None``  a rewrite of the
  equation (operands ``ins``): the equations in its place and an atom for
  each output (a ``cond`` on a literal index is its branch; ``x + 0`` is
  ``x``);
* ``algebra``  its arithmetic, for ``simplify``'s sign rules (an ``Algebra``,
  ``pass_rules.py``: ``-(-x)`` is ``x``, ``a + (-b)`` is ``a - b``);
* ``print(eqn, names)``  the sub-Programs it holds, each with the names its
  read-only inputs take (``names(atoms)``: the names given so far; see
  ``printing.walk``);
* ``emit``  its Python code (``backends/pycodegen.py``): an ``EmitRule``
  (``rules.py``) whose ``statements`` (control flow, calls made at run
  time) or ``expression`` (``abs(x)``, ``a + b``, ``np.sum(x, axis=0)``;
  ``pass_rules.py`` has the common ones) the code generator asks first, with
  ``python_scalars`` for primitives that pass values through;
* ``complex_ok``  its rules were audited for complex operands and results
  (JAX's conventions: complex tangents, the linear transpose without
  conjugation); complex values on any other primitive raise
  ``UnsupportedDtypeError`` naming it. The audited rows are listed in one
  place, ``complex_parts.COMPLEX_OK``.

``bind`` hands a primitive application to the current trace of the thread
(``set_current``): the root ``EvalTrace`` runs ``impl``; a transformation
in progress handles its own tracers, takes the values of the traces it is
nested in (its ancestors) as constants (closure over an outer derivative's
variable), and hands an application with no operand of its own to its
parent.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from .. import context as _context, dims as _dims
from ..context import current as _current_context
from .symbolic_constants import constant as _constant
from ..ir import Ident, Lit, Role, aval_of, programs_in, runs_at_call
from ..atoms import HasAval, TracerBase     # (the tracers' base, part of this module's Trace API)
from ..errors import LeakedTracerError, UnsupportedDtypeError, WengertError, user_location

__all__ = ["Primitive", "PRIMITIVES", "register", "wrapper_of", "NOT_LINEAR", "BY_IMPL", "Zero",
           "Linear", "bind",
           "snapshot", "effects_made",
           "Trace", "EvalTrace", "TRACE_STATE", "TracerBase", "set_current", "rules_under",
           "tracing", "instantiate", "is_zero", "zero_if_any",
           "eval_program", "name_as", "is_float", "rule_error"]

PRIMITIVES: dict[str, "Primitive"] = {}


class _NotLinear:
    def __repr__(self):
        return "NOT_LINEAR"


NOT_LINEAR = _NotLinear()


class _ByImpl:
    def __repr__(self):
        return "BY_IMPL"


# a rule slot holding BY_IMPL: the transform differentiates the primitive by
# running its impl (written with primitives) on its own values
BY_IMPL = _ByImpl()


class Primitive:
    """One row of the primitive table."""

    __slots__ = ("name", "nargs", "impl", "abstract_eval", "jvp", "transpose",
                 "zero_rule", "batch", "multiple_results", "inline", "differentiable",
                 "linearize", "linearize_for_vjp", "jvp_for_grad", "runtime", "effect",
                 "complex_ok", "dce", "simplify", "algebra", "print", "emit", "__dict__")

    def __init__(self, name, *, nargs, impl, abstract_eval, jvp, transpose,
                 zero_rule=None, batch=None, multiple_results=False, inline=False,
                 differentiable=True, linearize=None, linearize_for_vjp=None,
                 jvp_for_grad=None, runtime=False, effect=False, complex_ok=False,
                 dce=None, simplify=None, algebra=None, print=None, emit=None):
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
        self.linearize = linearize                  # None: jvp
        self.linearize_for_vjp = linearize_for_vjp  # None: linearize
        self.jvp_for_grad = jvp_for_grad            # None: jvp
        # runtime: its value is known only when the code runs (a global's
        # array now, a random draw), so staging records it and never computes
        # it (``bind``); effect: it also acts outside (draws, prints), so it is
        # never merged, dropped or run twice (``host``)
        self.runtime = runtime or effect
        self.effect = effect
        self.complex_ok = complex_ok        # rules right for complex values (see above)
        # the passes' rules (None: the pass's default), see ``Primitive``'s docstring
        self.dce = dce
        self.simplify = simplify
        self.algebra = algebra
        self.print = print
        self.emit = emit

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
            return _constant(ctx, prim, args, params, rule_error)
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


EVAL = EvalTrace()


class _TraceState(threading.local):
    """The current trace of this thread: each thread differentiates under its
    own, so derivatives taken in several threads at once never see each
    other's tracers."""

    def __init__(self):
        self.current = EVAL     # the trace ``bind`` hands applications to
        self.active = 0         # transformations in progress (``set_current``)
        self.effects = 0        # applications of primitives with an effect so far


TRACE_STATE = _TraceState()


def tracing():
    """Whether a transformation is in progress in this thread."""
    return TRACE_STATE.active > 0


class set_current:
    """``with set_current(t):`` runs the block under ``t``, a new trace whose
    parent is the current one; afterwards ``t`` is closed (its tracers are
    leaked values) and its parent is current again."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        state = TRACE_STATE
        self.prev = state.current
        state.current = self.trace
        state.active += 1
        return self.trace

    def __exit__(self, *exc):
        state = TRACE_STATE
        state.current = self.prev
        state.active -= 1
        self.trace.close()
        return False


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


def effects_made():
    """How many primitives with an effect this thread has applied: a change
    across a piece of staging says it made (or recorded) a call with an effect."""
    return TRACE_STATE.effects


def bind(prim, *args, **params):
    """Apply ``prim``: hand the application to the current trace."""
    state = TRACE_STATE
    if prim.effect:
        state.effects += 1
    traced = has_zero = False
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
    if has_zero:
        if prim.zero_rule is not None:
            return prim.zero_rule(*args, **params)
        args = tuple(instantiate(a) for a in args)
    current = state.current
    if traced:
        return current.process(prim, args, params)
    if current is not EVAL:
        return current.process_consts(prim, args, params)
    # the root's work, as EvalTrace.process_consts does it, inline: the hot path
    ctx = _current_context()
    if ctx is not None and ctx.symbolic and not (state.active and (
            prim.runtime or any(runs_at_call(p) for p in programs_in(params)))):
        return _constant(ctx, prim, args, params, rule_error)
    if not prim.complex_ok and any(_is_complex(a) for a in args):
        raise UnsupportedDtypeError.complex_operand(prim.name)
    try:
        return prim.impl(*_dims.plain_numbers(args), **params)
    except ValueError as err:
        typed = rule_error(prim, args, params)
        if typed is None:
            raise
        raise typed from err


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
        env[v] = name_as(a, v)
    value = _VALUE
    for eqn in prog.eqns:
        ins = [x.val if isinstance(x, Lit) else env[x] for x in eqn.inputs]
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
    return [x.val if isinstance(x, Lit) else env[x] for x in prog.outputs]


_VALUE = Role.VALUE


def name_as(value, var):
    """``value``, which stands for ``var`` of a Program being evaluated: a
    traced value takes ``var``'s user name and role into the Program being
    recorded (``d_p`` stays ``d_p`` when a Program is replayed)."""
    if (var.name or var.role is not _VALUE) and isinstance(value, TracerBase):
        value.name_hint(var.name, var.role)
    return value
