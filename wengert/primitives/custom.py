"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``.

A decorated function is applied through an *inline* primitive: staging and
plain evaluation run the function's body; only differentiation looks at the
rule.

* ``custom_jvp``: every jvp (forward, linearize, reverse) uses the rule, which
  must be linear in the tangents.
* ``custom_vjp``: reverse mode uses ``fwd``/``bwd``; forward mode (``jvp``,
  ``jacfwd``, the outer pass of ``hessian``) differentiates the function's
  primal definition instead, so such a function still works in every mode
  (JAX refuses forward mode here). Second-order reverse-over-reverse
  differentiates ``bwd`` itself, which must then be written in NumPy.

Arguments are arrays or scalars (no pytrees); the output an array or a
tuple of arrays.
"""
from __future__ import annotations

import functools

from .. import dims as _dims
from .core import NOT_LINEAR, Primitive, Zero, bind, instantiate, register
from ..errors import NoDerivativeRule, ShapeMismatchError
from ..ir import aval_of


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# --- custom_jvp_call ---------------------------------------------------
def custom_jvp_call_impl(*args, fun, rule):
    return fun(*args)


def custom_jvp_call_jvp(primals, tangents, fun, rule, trace=None):
    tangents = tuple(instantiate(t) for t in tangents)
    out, out_dot = rule(tuple(primals), tangents)
    return out, out_dot


def _body_aval(fun, avals):
    """The output aval of a custom function's body (one array output)."""
    from ..staging import stage
    prog = stage(lambda *xs: [fun(*xs)], list(avals), name=getattr(fun, "__name__", "f"))
    return prog.out_avals[0]


def custom_jvp_call_aval(*avals, fun, rule):
    return _body_aval(fun, avals)


custom_jvp_call_p = register(Primitive(
    "custom_jvp_call", nargs=None, impl=custom_jvp_call_impl, jvp=custom_jvp_call_jvp,
    transpose=NOT_LINEAR, abstract_eval=custom_jvp_call_aval, inline=True))


class custom_jvp:
    """``@custom_jvp`` then ``@f.defjvp def rule(primals, tangents): return out, out_dot``."""

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
        twin = custom_jvp(convert(self.fun))
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
    return fun(*args)


def custom_vjp_call_jvp(primals, tangents, fun, fwd, bwd, trace=None):
    if trace is not None and getattr(trace, "for_grad", False):
        # grad's forward-mode shortcut would differentiate the body, not use bwd
        from ..transforms.jvp import NeedsReverse
        raise NeedsReverse(fun)
    if trace is None or not trace.reverse:
        # forward mode differentiates the primal definition
        from ..transforms.jvp import JVPTracer   # the trace type this rule runs under
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        split = [(o.primal, o.tangent) if isinstance(o, JVPTracer) and o._trace is trace
                 else (o, Zero(aval_of(o))) for o in _as_tuple(outs)]
        p, t = zip(*split)
        return (p, t) if isinstance(outs, (tuple, list)) else (p[0], t[0])
    out, res = fwd(*primals)
    outs = _as_tuple(out)
    t_outs = bind(custom_lin_p, *[instantiate(t) for t in tangents], bwd=bwd, res=res,
                  out_avals=tuple(aval_of(o) for o in outs),
                  in_avals=tuple(aval_of(p) for p in primals))
    return (out, tuple(t_outs)) if isinstance(out, (tuple, list)) else (out, t_outs[0])


def custom_vjp_call_aval(*avals, fun, fwd, bwd):
    return _body_aval(fun, avals)


custom_vjp_call_p = register(Primitive(
    "custom_vjp_call", nargs=None, impl=custom_vjp_call_impl, jvp=custom_vjp_call_jvp,
    transpose=NOT_LINEAR, abstract_eval=custom_vjp_call_aval, inline=True))


# --- custom_lin: the linear map whose transpose is the user's bwd ------
def custom_lin_impl(*tangents, bwd, res, out_avals, in_avals):
    raise NoDerivativeRule("a custom_vjp function's linearization can only be transposed "
                           "(reverse mode); forward mode differentiates its primal definition")


def custom_lin_aval(*avals, bwd, res, out_avals, in_avals):
    return out_avals


def custom_lin_jvp(primals, tangents, **params):
    raise NoDerivativeRule("custom_vjp: differentiate through its pullback only in reverse mode")


def custom_lin_transpose(cts, *args, bwd, res, out_avals, in_avals):
    cts = [_dims.zeros(a.shape, a.dtype) if isinstance(c, Zero) else c for c, a in zip(cts, out_avals)]
    in_cts = _as_tuple(bwd(res, cts[0] if len(cts) == 1 else tuple(cts)))
    if len(in_cts) != len(args):
        raise ShapeMismatchError(f"custom_vjp bwd returned {len(in_cts)} cotangents for "
                                 f"{len(args)} arguments; return one per argument (a tuple)")
    for c, a in zip(in_cts, in_avals):
        if c is not None and tuple(_dims.shape(c)) != a.shape:
            raise ShapeMismatchError(f"custom_vjp bwd returned a cotangent of shape "
                                     f"{_dims.shape(c)} for an argument of shape {a.shape}")
    return tuple(None if c is None else c for c in in_cts)


custom_lin_p = register(Primitive(
    "custom_lin", nargs=None, impl=custom_lin_impl, jvp=custom_lin_jvp,
    transpose=custom_lin_transpose, abstract_eval=custom_lin_aval, multiple_results=True))


class custom_vjp:
    """``@custom_vjp`` then ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, res)``,
    ``bwd(res, ct) -> tuple`` with one cotangent per argument."""

    def __init__(self, fun):
        self.fun = fun
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def _wg_with_functions(self, convert):
        """This function and rules, each passed through ``convert`` (the
        source engine runs them converted)."""
        twin = custom_vjp(convert(self.fun))
        if self.fwd is not None:
            twin.defvjp(convert(self.fwd), convert(self.bwd))
        return twin

    def __call__(self, *args):
        if self.fwd is None:
            raise NoDerivativeRule(f"custom_vjp function {self.fun.__name__} has no rule; "
                                   f"add one with {self.fun.__name__}.defvjp(fwd, bwd)")
        return bind(custom_vjp_call_p, *args, fun=self.fun, fwd=self.fwd, bwd=self.bwd)
