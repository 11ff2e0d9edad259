"""The outside world: values a Program reads, and calls it makes, at run time.

A derivative is generated once and called many times, so whatever may differ
between calls is computed by the generated code at each call, never while it
is generated:

    W = env_read[ref=model.W] ()              an array that a global, a closure
                                              cell, or an attribute or item of an
                                              object reached from them holds now
    eps = host_call[fn=rs.randn, args=(3,)] ()     a call outside NumPy's pure
                                              functions: a random draw, I/O
    env_write[ref=self.nfev, op=+, value=1] ()    a write the function makes
                                              outside itself (an attribute of an
                                              object, a closure variable)

All three are *runtime* ones: ``bind`` never evaluates them while a
Program is staged; it records them into the innermost trace that records
primal work (``core.bind``). Their values carry no tangent. ``host_call`` also
has an *effect*: it is never merged with an equal call, never dropped because
its result is unused, and never run twice (a checkpointed region, which
recomputes, refuses it), so one derivative call makes exactly the calls one
plain call makes, in the same order; so has ``env_write``, which writes the
value (never its derivative) where the plain function writes it.

Where a value lives is an ``EnvRef``: a root (a module's globals, a closure
cell, or a fixed object such as a generator passed as an argument) and a path
of attribute and item accesses, read again by the generated code at each call
(``items.W``, ``model.layers[0].W``).

Layer: primitives.
"""
from __future__ import annotations

import builtins
import sys
import operator

import numpy as np

from ..core.primitive import NOT_LINEAR, PER_LANE, Primitive, TracerBase, Zero, register
from ..core.trace import bind
from ..core.rules import EmitRule
from ..core.pass_rules import scipy_module
from ..core.errors import NoDerivativeRule, WengertError, no_rule_message
from ..core.ir import Aval, Ident, aval_of
from ..core.primitive import DENSE

__all__ = ["EnvRef", "env_read", "host_call", "env_write", "INPLACE", "check_value", "out_aval_of",
           "HostCallError"]


class HostCallError(WengertError, RuntimeError):
    """A call made by the generated code returned another shape or dtype than before.

    Cause: a function the code calls at each call rather than converts (a C
    method of an outside object, the body of a ``custom_vjp``) returned a value
    of another shape or dtype than when the code was generated.

    Fix: keep such a call's output shape fixed for given argument shapes, or
    make the shape depend on the arguments' shapes only.
    """


class EnvRef:
    """Where a value outside the function lives.

    ``kind`` is ``"globals"`` (``root`` a module's globals dict, ``label`` the
    module's name), ``"cell"`` (``root`` a closure cell, ``label`` the
    variable's name) or ``"object"`` (``root`` a fixed object, ``label`` a name
    to show). ``path`` is a tuple of ``("attr", name)`` and ``("item", key)``;
    a global's path starts with ``("item", name)`` in its module's dict."""

    __slots__ = ("kind", "root", "label", "path")

    def __init__(self, kind, root, label, path=()):
        self.kind, self.root, self.label, self.path = kind, root, label, path

    def attr(self, name):
        return EnvRef(self.kind, self.root, self.label, self.path + (("attr", name),))

    def item(self, key):
        return EnvRef(self.kind, self.root, self.label, self.path + (("item", key),))

    def resolve(self):
        """The value there now."""
        v = self.root.cell_contents if self.kind == "cell" else self.root
        for op, key in self.path:
            v = getattr(v, key) if op == "attr" else v[key]
        return v

    @property
    def param_key(self):
        """Equal for the same place (common subexpressions compare params by it)."""
        return ("env", Ident(self.root), self.path)

    def text(self, root_name):
        """Python text reading it, the root written as ``root_name``: a
        module's global is an attribute of the module (``items.W``)."""
        path = self.path
        if self.kind == "cell":
            out = f"{root_name}.cell_contents"
        elif self.kind == "globals" and path and path[0][0] == "item" and self.label:
            out, path = f"{root_name}.{path[0][1]}", path[1:]
        else:
            out = root_name
        for op, key in path:
            out += f".{key}" if op == "attr" else f"[{key!r}]"
        return out

    def __repr__(self):
        if self.kind == "cell":
            return self.text(self.label).replace(f"{self.label}.cell_contents", self.label, 1)
        return self.text(self.label or "globals()")


# --- env_read ----------------------------------------------------------
def env_read_impl(*, ref, aval):
    return ref.resolve()


def env_read_aval(*, ref, aval):
    return aval


def env_read_jvp(primals, tangents, *, ref, aval):
    raise AssertionError("env_read has no operands, so never a tangent")     # pragma: no cover


class EnvReadEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        return code.outside(eqn.params["ref"])      # read when the code runs


env_read_p = register(Primitive(
    "env_read", nargs=0, impl=env_read_impl, abstract_eval=env_read_aval, jvp=env_read_jvp,
    transpose=NOT_LINEAR, differentiable=False, runtime=True, emit=EnvReadEmit(),
                                batch=PER_LANE))


def env_read(ref, aval):
    """The array at ``ref``, read when the code runs."""
    return bind(env_read_p, ref=ref, aval=aval)


# --- host_call ----------------------------------------------------------
def _call_args(ops, args, kwargs):
    """The call's positional and keyword arguments: ``("op", k)`` is operand
    ``k``, ``("const", v)`` the value ``v``."""
    def value(spec):
        return ops[spec[1]] if spec[0] == "op" else spec[1]
    return [value(a) for a in args], {k: value(a) for k, a in kwargs}


def check_value(out, aval):
    """``out``, the result of a call made at run time, if it has the shape
    and dtype ``aval`` it had when the code was generated; else an error
    (the code after it assumes them)."""
    shape = np.shape(out)
    dtype = aval.dtype if isinstance(out, (float, int, bool)) else np.result_type(out)
    if tuple(shape) != tuple(int(d) for d in aval.shape) or np.dtype(dtype) != aval.dtype:
        raise HostCallError(
            f"a call made at run time returned a value of shape {tuple(shape)} and dtype "
            f"{np.dtype(dtype)}, but {aval.short()} when the derivative's code was generated; "
            "the code assumes it does not change: pass the shape explicitly, or use "
            "engine='trace'")
    return out


def host_call_impl(*ops, fn, args, kwargs, outs, checked, where=None):
    callee = fn.resolve() if isinstance(fn, EnvRef) else fn
    a, kw = _call_args(ops, args, kwargs)
    out = callee(*a, **kw)
    if not outs:
        return ()
    return (check_value(out, outs[0]) if checked else out,)


def host_call_aval(*avals, fn, args, kwargs, outs, checked, where=None):
    return tuple(outs)


def host_call_jvp(primals, tangents, fn, args, kwargs, outs, checked, where=None):
    # reached only when an operand carries a tangent. A call without float
    # results (print) needs no derivative; otherwise the call has no rule
    if not any(a.dtype.kind in "fc" for a in outs):
        out = bind(host_call_p, *primals, fn=fn, args=args, kwargs=kwargs, outs=outs,
                   checked=checked, where=where)
        return out, tuple(Zero(a) for a in outs)
    if where is not None:       # a library function without a rule, staged at the user's line
        raise NoDerivativeRule(no_rule_message(*where))
    raise NoDerivativeRule(
        f"{fn!r} is called outside NumPy (at run time) on a value that depends on a "
        "differentiated input, and has no derivative rule: compute it from values you do not "
        "differentiate, write the differentiated part with NumPy (for a random draw: "
        "mu + sigma * rng.standard_normal(shape)), or give it a rule with wg.custom_jvp")


def _special_ufunc(fn):
    """Whether ``fn`` is a ufunc of ``scipy.special`` (SciPy is imported already where
    the user's code called one)."""
    if not isinstance(fn, np.ufunc):
        return False
    special = sys.modules.get("scipy.special")
    return special is not None and getattr(special, fn.__name__, None) is fn


class HostCallEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """A call made when the code runs: 0 or 1 result."""
        text = self.call(code, eqn, ins)
        return [f"{outs[0]} = {text}"] if outs else [text]

    @staticmethod
    def call(code, eqn, ins):
        """``fn(args...)``, made when the code runs; a result whose shape and
        dtype the code assumes is checked (``checked(value, aval)``)."""
        p = eqn.params
        fn = p["fn"]
        if hasattr(fn, "resolve"):
            callee = code.outside(fn)
        elif fn is builtins.print:
            callee = "print"
        elif getattr(np.random, getattr(fn, "__name__", ""), None) is fn:
            callee = f"{code.np}.random.{fn.__name__}"
        elif _special_ufunc(fn):     # a SciPy function without a rule: spelled as the user did
            callee = f"{scipy_module(code)}.special.{fn.__name__}"
        else:
            callee = code.bind(getattr(fn, "__name__", "host_fn"), fn,
                               f"{getattr(fn, '__qualname__', repr(fn))}, called at each call")

        def arg(spec):
            return ins[spec[1]] if spec[0] == "op" else code.param(spec[1])
        args = [arg(a) for a in p["args"]] + [f"{k}={arg(a)}" for k, a in p["kwargs"]]
        text = f"{callee}({', '.join(args)})"
        if p["checked"] and p["outs"]:
            checked = code.bind("checked", check_value, "wengert.primitives.host.check_value")
            text = f"{checked}({text}, {code.const(p['outs'][0])})"
        return text


host_call_p = register(Primitive(
    "host_call", nargs=None, impl=host_call_impl, abstract_eval=host_call_aval,
    jvp=host_call_jvp, transpose=NOT_LINEAR, multiple_results=True, runtime=True,
    effect=True, emit=HostCallEmit(),
    sparsity=DENSE,
    batch=PER_LANE))


def host_call(fn, operands, args, kwargs, out_aval, checked=True, where=None):
    """Call ``fn`` (a callable, or an ``EnvRef`` to one) when the code runs,
    with ``args``/``kwargs`` specs over ``operands`` (see ``_call_args``);
    ``out_aval`` is its result's (None: it returns nothing). ``checked``: the
    result's shape and dtype are checked at run time. ``where``: for a
    library function without a derivative rule, ``(user line, its name)``,
    which the error names if a derivative through the call is asked for."""
    outs = () if out_aval is None else (out_aval,)
    res = bind(host_call_p, *operands, fn=fn, args=tuple(args), kwargs=tuple(kwargs),
               outs=outs, checked=checked, where=where)
    return res[0] if outs else None


# --- env_write ----------------------------------------------------------
# the augmented assignments an outside place may take, as Python runs them
# (``x += v`` writes into an array x, rebinds a number)
INPLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow,
           "@": operator.imatmul, "&": operator.iand, "|": operator.ior, "^": operator.ixor,
           "<<": operator.ilshift, ">>": operator.irshift}


def _parent(ref):
    """The object holding ``ref``'s place now, and the place's last step."""
    v = ref.root
    if ref.kind == "cell":
        if not ref.path:
            return v, ("cell", None)
        v = v.cell_contents
    for op, key in ref.path[:-1]:
        v = getattr(v, key) if op == "attr" else v[key]
    return v, ref.path[-1]


def env_write_impl(*ops, ref, op, value):
    holder, (kind, key) = _parent(ref)
    new = ops[0] if ops else value
    if op is not None:
        old = (holder.cell_contents if kind == "cell" else
               getattr(holder, key) if kind == "attr" else holder[key])
        new = INPLACE[op](old, new)
    if kind == "cell":
        holder.cell_contents = new
    elif kind == "attr":
        setattr(holder, key, new)
    else:
        holder[key] = new
    return ()


def env_write_aval(*avals, ref, op, value):
    return ()


def env_write_jvp(primals, tangents, ref, op, value):
    # the plain function writes the value, not its derivative
    return bind(env_write_p, *primals, ref=ref, op=op, value=value), ()


class EnvWriteEmit(EmitRule):
    def statements(self, code, eqn, ins, py, outs, subs):
        """``self.nfev += 1``, ``model.cache = x``: made when the code runs."""
        p = eqn.params
        place = code.outside(p["ref"])
        val = ins[0] if ins else code.param(p["value"])
        return [f"{place} {p['op'] or ''}= {val}"]


def env_write_batch(vals, flags, ref, op, value):
    """Under ``vmap``: one write, of the whole batch (the examples' values along
    the leading axis, as ``vmap`` returns its outputs), as the plain function
    called once on the batch makes one; the trace engine stores the same
    (``api.transformed.settle_objects``)."""
    return bind(env_write_p, *vals, ref=ref, op=op, value=value)


env_write_p = register(Primitive(
    "env_write", nargs=None, impl=env_write_impl, abstract_eval=env_write_aval,
    jvp=env_write_jvp, transpose=NOT_LINEAR, multiple_results=True, runtime=True,
    effect=True, emit=EnvWriteEmit(), sparsity=DENSE, batch=env_write_batch))


def env_write(ref, value, op=None):
    """Write ``value`` (an operand, or a Python value) at the outside place
    ``ref`` when the code runs; ``op``: an augmented assignment's operator
    (``"+"`` for ``+=``), applied to the value there then."""
    if isinstance(value, TracerBase) or isinstance(value, np.ndarray):
        bind(env_write_p, value, ref=ref, op=op, value=None)
    else:
        bind(env_write_p, ref=ref, op=op, value=value)


def out_aval_of(value):
    """The aval of a host call's result, or None for None; anything that is
    not an array or a number is an error (the code cannot hold it)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray) and value.dtype.kind not in "biufc":
        raise TypeError(f"an array of dtype {value.dtype}")
    try:
        av = aval_of(value)
    except TypeError:
        raise TypeError(f"a {type(value).__name__}") from None
    return Aval(np.shape(value), av.dtype, av.weak)
