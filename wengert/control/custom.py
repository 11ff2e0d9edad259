"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``.

A decorated function is applied through an *inline* primitive: staging and
plain evaluation run the function's body; only differentiation looks at the
rule.

* ``custom_jvp``: every jvp (forward, linearize, reverse) uses the rule, which
  must be linear in the tangents.
* ``custom_vjp``: reverse mode uses ``fwd``/``bwd`` (the row's
  ``linearize_for_vjp``: ``fwd`` now, and a ``custom_lin`` equation, in
  ``custom_lin.py``, whose transpose is ``bwd``); forward mode (``jvp``, ``jacfwd``, the outer pass
  of ``hessian``) differentiates the function's primal definition instead
  (``BY_IMPL``: the transform runs the body on its own values), so such a
  function still works in every mode (JAX refuses forward mode here).
  Second-order reverse-over-reverse differentiates ``bwd`` itself, which
  must then be written in NumPy.

The escape hatch: a body wengert cannot trace (``scipy.integrate.quad``,
``solve_ivp``, a compiled extension, ``float()`` of its input) runs on plain
NumPy values, as a ``custom_body`` equation: the user's own function (never
its source-engine conversion), called by the generated code once a call,
as a plain call makes it (never folded, never dropped; so a ``wg.checkpoint``
region, which would recompute it, refuses it); the rule gives every
derivative, and ``custom_body`` carries the rule for a Program holding it
that is differentiated again (a loop body at second order).

* Whether a body can be traced is found by staging it on the operands
  (at their values where staging knows them, else their avals), a
  recording that is thrown away (``body_info``); a body that traces is
  traced, as before.
* An opaque body's output shapes and dtypes are found by running it while
  the code is generated: on the operands' values where staging knows them
  (the trace engine), else on stand-ins (ones of the operands' shapes and
  dtypes, under ``np.errstate(all="ignore")``: the source engine stages on
  shapes only). A body with side effects therefore also runs then. Each
  later run checks that its result still has them (a ``HostCallError``
  otherwise, never a derivative of the wrong shape).
* Forward mode of a ``custom_vjp`` function with an opaque body goes
  through ``bwd``: ``J t`` row by row, ``<bwd(res, e_i), t>``, one ``bwd``
  call per output element.

Arguments are arrays or scalars (no pytrees); the output an array or a
tuple of arrays.

Layer: control.
"""
from __future__ import annotations

import functools

import numpy as np

from ..primitives import arith, index, reduce, shape
from ..core.primitive import (
    BY_IMPL, NOT_LINEAR, Primitive, TracerBase, Zero, instantiate, register)
from ..core.trace import bind
from .custom_lin import Residuals, as_tuple, custom_lin_p
from ..primitives.host import HostCallError, check_value, out_aval_of
from ..core.errors import NoDerivativeRule, ShapeMismatchError, UnsupportedSyntax, user_location
from ..core.ir import aval_of
from ..core.staging import stage
from ..core.subprograms import jvp_flat
from ..core.errors import NeedsReverse
from ..core.primitive import DENSE


# --- custom_body: a body wengert cannot trace, run on plain values ------
def custom_body_impl(*args, fun, out_avals, single, rule):
    out = fun(*args)
    outs = (out,) if single else as_tuple(out)
    try:
        if len(outs) != len(out_avals):
            raise HostCallError(f"{len(outs)} values, not {len(out_avals)}")
        return tuple(check_value(o, a) for o, a in zip(outs, out_avals))
    except HostCallError as err:
        raise HostCallError(
            f"{_name(fun)}, a function with a custom rule whose body wengert runs on plain "
            f"values, returned another shape or dtype than when the derivative's code was "
            f"generated (found by running it then): {err}. Use engine='trace' for a "
            "function whose output shape depends on its input values") from None


def custom_body_aval(*avals, fun, out_avals, single, rule):
    return tuple(out_avals)


def custom_body_jvp(primals, tangents, fun, out_avals, single, rule):
    """The custom rule's jvp (``rule``: a ``Rule``): reached where a staged
    Program holding the call (a loop body) is differentiated again, at second
    order. Forward mode of a custom_vjp function differentiates its body."""
    if rule.kind == "jvp":
        out, out_dot = custom_jvp_call_jvp(primals, tangents, fun, *rule.fns)
    else:
        out, out_dot = _custom_vjp_forward(primals, tangents, fun, *rule.fns)
    return (out, out_dot) if not single else ((out,), (out_dot,))


def custom_body_jvp_for_grad(primals, tangents, fun, out_avals, single, rule):
    """Forward mode standing in for ``grad``: a custom_vjp rule refuses it."""
    if rule.kind == "vjp":
        needs_reverse(primals, tangents, fun, *rule.fns)
    return custom_body_jvp(primals, tangents, fun, out_avals, single, rule)


def custom_body_linearize_for_vjp(primals, tangents, fun, out_avals, single, rule):
    """Linearize for reverse mode: a custom_vjp rule's fwd and bwd."""
    if rule.kind == "jvp":
        out, out_dot = custom_jvp_call_jvp(primals, tangents, fun, *rule.fns)
    else:
        out, out_dot = custom_vjp_call_linearize_for_vjp(primals, tangents, fun, *rule.fns)
    return (out, out_dot) if not single else ((out,), (out_dot,))


# runtime: the user's code runs when the generated code runs, never while
# it is generated (it may read globals, draw, or be slow); effect: it runs
# once a call, as in a plain call, even where its value is not needed (a
# gradient whose bwd ignores it), so the check of its result's shape and
# dtype, which the code after it assumes, is never skipped
custom_body_p = register(Primitive(
    "custom_body", nargs=None, impl=custom_body_impl, jvp=custom_body_jvp,
    jvp_for_grad=custom_body_jvp_for_grad, linearize_for_vjp=custom_body_linearize_for_vjp,
    transpose=NOT_LINEAR, abstract_eval=custom_body_aval, multiple_results=True,
    runtime=True, effect=True,
    sparsity=DENSE))


class Rule:
    """A custom rule, as a ``custom_body`` equation keeps it: ``kind`` is
    ``"jvp"`` (``fns``: the rule) or ``"vjp"`` (``fns``: fwd, bwd). It prints
    as the functions' names (a Program prints the same every time)."""

    __slots__ = ("kind", "fns")

    def __init__(self, kind, *fns):
        self.kind, self.fns = kind, fns

    def __repr__(self):
        return f"{self.kind}({', '.join(_name(f) for f in self.fns)})"


def _name(fun):
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", repr(fun))


def concrete_values(args):
    """The plain values of ``args`` (tracers' concrete values), or None
    where one is known by its aval only (symbolic staging)."""
    vals = [getattr(a, "concrete_value", None) if isinstance(a, TracerBase) else a
            for a in args]
    return None if any(v is None for v in vals) else vals


def body_info(fun, avals, vals=None):
    """(traceable, output avals, single output) of ``fun``'s body on
    operands of ``avals``: traceable if staging it on them succeeds (the
    recording is thrown away; at ``vals``, where known, so Python control
    flow on them is taken as the trace engine takes it); an opaque body's
    avals from running it on plain values: ``vals``, else stand-ins."""
    avals = list(avals)
    shape = {}

    def body(*xs):
        out = fun(*xs)
        shape["single"] = not isinstance(out, (tuple, list))
        return list(as_tuple(out))
    try:
        prog = stage(body, avals, name=_name(fun), concrete_vals=vals)
        return True, tuple(prog.out_avals), shape["single"]
    except Exception:       # noqa: BLE001 -- any failure to trace: run it on plain values
        pass
    if vals is None:
        vals = [np.ones(tuple(int(d) for d in a.shape), a.dtype)[()] if not a.weak
                else a.python_type(1) for a in avals]
    plain = getattr(fun, "_wg_plain", fun)
    with np.errstate(all="ignore"):
        out = plain(*vals)
    single = not isinstance(out, (tuple, list))
    try:
        out_avals = tuple(out_aval_of(o) for o in as_tuple(out))
    except TypeError as err:
        raise NoDerivativeRule(f"{user_location()}: {_name(fun)} returns {err}; a function "
                               "with a custom rule returns arrays or numbers") from None
    return False, out_avals, single


def call_body(fun, args, rule):
    """``fun(*args)``: traced where it can be, else a ``custom_body`` call
    on plain values (``rule``, the custom rule, is what differentiates it)."""
    if not any(isinstance(a, TracerBase) for a in args):
        return getattr(fun, "_wg_plain", fun)(*args)      # plain values: the user's own
    traceable, out_avals, single = body_info(fun, [aval_of(a) for a in args],
                                             concrete_values(args))
    if traceable:
        return fun(*args)
    outs = bind(custom_body_p, *args, fun=getattr(fun, "_wg_plain", fun),
                out_avals=out_avals, single=single, rule=rule)
    return outs[0] if single else tuple(outs)


def _body_aval(fun, avals):
    """The output aval of a custom function's body (one array output)."""
    try:
        prog = stage(lambda *xs: [fun(*xs)], list(avals), name=getattr(fun, "__name__", "f"))
    except Exception:       # noqa: BLE001 -- an opaque body: run it
        return body_info(fun, avals)[1][0]
    return prog.out_avals[0]


# --- custom_jvp_call ---------------------------------------------------
def custom_jvp_call_impl(*args, fun, rule):
    return call_body(fun, args, Rule("jvp", rule))


def custom_jvp_call_jvp(primals, tangents, fun, rule):
    tangents = tuple(instantiate(t) for t in tangents)
    out, out_dot = rule(tuple(primals), tangents)
    return out, out_dot


def custom_jvp_call_aval(*avals, fun, rule):
    return _body_aval(fun, avals)


custom_jvp_call_p = register(Primitive(
    "custom_jvp_call", nargs=None, impl=custom_jvp_call_impl, jvp=custom_jvp_call_jvp,
    transpose=NOT_LINEAR, abstract_eval=custom_jvp_call_aval, inline=True,
    sparsity=DENSE))


def _converted_body(fun, convert):
    """The converted body, which knows the user's own function: an opaque
    body runs that, on plain values, when the generated code runs. A body
    the source engine cannot convert (an import, a try statement) is the
    user's function itself: staged, it is traced, or else opaque."""
    try:
        converted = convert(fun)
    except UnsupportedSyntax:
        return fun
    if converted is not fun:
        converted._wg_plain = fun
    return converted


class custom_jvp:
    """A function with your own forward-mode rule; reverse mode transposes it.

    Decorate the function, then its rule with ``@f.defjvp``:
    ``rule(primals, tangents) -> (out, out_dot)``, with tuples of the arguments
    and of their tangents. The body runs on plain NumPy values.

    Args:
        fun: the function.

    Raises:
        NoDerivativeRule: the function is differentiated before ``defjvp`` gave it a rule.

    Example:
        >>> import numpy as np, wengert as wg
        >>> @wg.custom_jvp
        ... def softplus(x):
        ...     return np.logaddexp(0.0, x)
        >>> @softplus.defjvp
        ... def softplus_jvp(primals, tangents):
        ...     x, = primals
        ...     return softplus(x), tangents[0] / (1.0 + np.exp(-x))
        >>> wg.grad(softplus)(0.0)
        0.5
    """

    def __init__(self, fun):
        self.fun = fun
        self.rule = None
        functools.update_wrapper(self, fun)

    def defjvp(self, rule):
        self.rule = rule
        return rule

    def _wg_with_functions(self, convert):
        """This function and rule, each passed through ``convert`` (the
        source engine runs them converted)."""
        twin = custom_jvp(_converted_body(self.fun, convert))
        if self.rule is not None:
            twin.defjvp(convert(self.rule))
        return twin

    def __call__(self, *args):
        if self.rule is None:
            raise NoDerivativeRule(f"custom_jvp function {self.fun.__name__} has no rule; "
                                   "add one with @{0}.defjvp".format(self.fun.__name__))
        return bind(custom_jvp_call_p, *args, fun=self.fun, rule=self.rule)


# --- custom_vjp_call ---------------------------------------------------
def custom_vjp_call_impl(*args, fun, fwd, bwd):
    return call_body(fun, args, Rule("vjp", fwd, bwd))


def needs_reverse(primals, tangents, fun, fwd, bwd):
    """custom_vjp's rule where forward mode stands in for ``grad``: refused."""
    raise NeedsReverse(fun)


def _custom_vjp_forward(primals, tangents, fun, fwd, bwd):
    """Forward mode of a custom_vjp function differentiates its body (jvp of
    it), or ``J t`` from ``bwd`` where the body cannot be traced."""
    if not body_info(fun, [aval_of(p) for p in primals], concrete_values(primals))[0]:
        return _jvp_by_bwd(primals, tangents, fwd, bwd)
    shape = {}

    def body(*xs):
        outs = fun(*xs)
        shape["tuple"] = isinstance(outs, (tuple, list))
        return list(as_tuple(outs))
    p, t = jvp_flat(body, list(primals), list(tangents))
    return (tuple(p), tuple(t)) if shape["tuple"] else (p[0], t[0])


def custom_vjp_call_linearize_for_vjp(primals, tangents, fun, fwd, bwd):
    """Reverse mode: ``fwd`` now, and a ``custom_lin`` whose transpose is ``bwd``."""
    out, res = fwd(*primals)
    outs = as_tuple(out)
    res, res_ops = Residuals.split(res)
    t_outs = bind(custom_lin_p, *res_ops, *[instantiate(t) for t in tangents], bwd=bwd,
                  res=res, out_avals=tuple(aval_of(o) for o in outs),
                  in_avals=tuple(aval_of(p) for p in primals))
    return (out, tuple(t_outs)) if isinstance(out, (tuple, list)) else (out, t_outs[0])


def _jvp_by_bwd(primals, tangents, fwd, bwd):
    """Forward mode of a custom_vjp function whose body cannot be traced:
    ``J t`` from the user's ``bwd``, one row ``<bwd(res, e_i), t>`` per
    output element, written with primitives (so it differentiates again)."""
    out, res = fwd(*primals)
    outs = as_tuple(out)
    zeros = [np.zeros(tuple(int(d) for d in aval_of(o).shape), aval_of(o).dtype) for o in outs]
    out_dots = []
    for k, o in enumerate(outs):
        av = aval_of(o)
        rows = []
        for i in range(max(av.size, 1) if av.shape else 1):
            e = np.zeros(av.size, av.dtype)
            e[i] = 1
            cts = list(zeros)
            cts[k] = e.reshape(zeros[k].shape)[()]
            in_cts = as_tuple(bwd(res, cts[0] if len(outs) == 1 else tuple(cts)))
            if len(in_cts) != len(primals):
                raise ShapeMismatchError(f"custom_vjp bwd returned {len(in_cts)} cotangents for "
                                         f"{len(primals)} arguments; return one per argument")
            terms = [reduce.reduce_sum(arith.mul(c, t)) for c, t in zip(in_cts, tangents)
                     if c is not None and not isinstance(t, Zero)]
            row = terms[0] if terms else np.zeros((), av.dtype)[()]
            for term in terms[1:]:
                row = arith.add(row, term)
            rows.append(row)
        dot = rows[0] if not av.shape else shape.reshape(index.stack(rows), av.shape)
        out_dots.append(dot)
    return (out, tuple(out_dots)) if isinstance(out, (tuple, list)) else (out, out_dots[0])


def custom_vjp_call_aval(*avals, fun, fwd, bwd):
    return _body_aval(fun, avals)


custom_vjp_call_p = register(Primitive(
    "custom_vjp_call", nargs=None, impl=custom_vjp_call_impl, jvp=BY_IMPL,
    jvp_for_grad=needs_reverse, linearize_for_vjp=custom_vjp_call_linearize_for_vjp,
    transpose=NOT_LINEAR, abstract_eval=custom_vjp_call_aval, inline=True,
    sparsity=DENSE))


class custom_vjp:
    """A function with your own reverse-mode rule: the escape hatch.

    Give the rule with ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)``,
    ``bwd(residuals, ct) -> tuple``, one cotangent per argument. The body runs on
    plain NumPy values at every call, so it may be anything (an ODE solver,
    compiled code); forward mode differentiates the body where it can be traced.

    Args:
        fun: the function.

    Raises:
        NoDerivativeRule: the function is differentiated before ``defvjp``.

    Example:
        >>> import wengert as wg
        >>> @wg.custom_vjp
        ... def square(x):
        ...     return x ** 2
        >>> square.defvjp(lambda x: (x ** 2, x), lambda x, ct: (2.0 * x * ct,))
        >>> wg.grad(square)(3.0)
        6.0
    """

    def __init__(self, fun):
        self.fun = fun
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def _wg_with_functions(self, convert):
        """This function and rules, each passed through ``convert`` (the
        source engine runs them converted)."""
        twin = custom_vjp(_converted_body(self.fun, convert))
        if self.fwd is not None:
            twin.defvjp(convert(self.fwd), convert(self.bwd))
        return twin

    def __call__(self, *args):
        if self.fwd is None:
            raise NoDerivativeRule(f"custom_vjp function {self.fun.__name__} has no rule; "
                                   f"add one with {self.fun.__name__}.defvjp(fwd, bwd)")
        return bind(custom_vjp_call_p, *args, fun=self.fun, fwd=self.fwd, bwd=self.bwd)
