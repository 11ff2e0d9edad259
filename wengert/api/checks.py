"""The checks the public API makes at a transform's entry, before any of the
user's code runs, and of the function's output.

Each raises a class of ``errors`` (which also subclasses the builtin an
``except`` clause would name) with a message in three parts: where (the
user's file:line: the call for a bad argument, the function's definition for
a bad function or output), what was wrong (the argument's position, name and
pytree path), and what to pass instead.

Layer: api.
"""
from __future__ import annotations

import dataclasses
import inspect

from ..core.errors import (
    InvalidFunctionError, NonDifferentiableInputError, NonScalarOutputError, OutputStructureError,
    UnsupportedDtypeError, user_function, user_location, where_defined)
from ..core.ir import aval_of
from ..core.errors import PytreeDepthError
from ..core.pytree import MAX_DEPTH, TOO_DEEP_ADVICE, flatten, leaf_paths, path_text

__all__ = ["check_function", "check_inputs", "check_aux_pair", "check_scalar_output",
           "argnums_tuple", "register_advice"]


def _about(fun):
    """(where, name): the definition's file:line (the caller's line when no
    user's function is behind ``fun``) and the function's name."""
    user = user_function(fun) or fun
    name = getattr(user, "__qualname__", None) or getattr(user, "__name__", None) or repr(user)
    return where_defined(fun) or user_location(), name


def check_function(fun, fname):
    """``fun`` is something a transform can run as a function of arrays."""
    if not callable(fun):
        raise InvalidFunctionError(
            f"{user_location()}: {fname} takes a function, got a {type(fun).__name__}; pass "
            "the function itself (wg.grad(f), not wg.grad(f(x)))")
    for test, what, advice in (
            (inspect.isgeneratorfunction, "a generator function (it yields)",
             "return a list or an array instead of yielding"),
            (inspect.isasyncgenfunction, "an async generator function",
             "use an ordinary def that returns its values"),
            (inspect.iscoroutinefunction, "an async function",
             "use an ordinary def: wengert runs the function synchronously")):
        if test(fun):
            where, name = _about(fun)
            raise InvalidFunctionError(f"{where}: {fname}: {name} is {what}: a differentiated "
                                       f"function returns its output; {advice}")


def argnums_tuple(argnums, nargs, fname):
    """``argnums`` as a tuple of non-negative positions."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -nargs <= i < nargs:
            raise ValueError(f"{fname}: argnums {argnums!r} out of range for {nargs} positional "
                             "arguments")
    return tuple(i % nargs for i in nums)


def _param_name(fun, i):
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return params[i].name if i < len(params) else None


def _arg_label(fun, i, path):
    name = _param_name(fun, i) if fun is not None else None
    label = f"argument {i}" + (f" ({name})" if name else "")
    return label if path == "the top level" else f"{label} at {path}"


def check_inputs(fname, fun, args, nums, where_else):
    """Every leaf of the differentiated arguments ``args[i]``, ``i`` in
    ``nums``, is a float or a float array. ``where_else`` ends the advice for
    a value that should not be differentiated (``"leave it out of argnums"``)."""
    for i in nums:
        x = args[i]
        if x is None:
            raise NonDifferentiableInputError(
                f"{user_location()}: {fname}: {_arg_label(fun, i, 'the top level')} is None: "
                f"there is nothing to differentiate. Pass a float or a NumPy float array, or "
                f"{where_else}")
        try:
            leaves, tree = flatten((x,))
        except PytreeDepthError as err:
            path = path_text(err.steps[1:])
            raise PytreeDepthError(
                f"{user_location()}: {fname}: {_arg_label(fun, i, path)} is nested deeper than "
                f"{MAX_DEPTH} levels; {TOO_DEEP_ADVICE}", err.steps) from None
        for k, leaf in enumerate(leaves):
            problem = _leaf_problem(leaf)
            if problem is None:
                continue
            cls, what, advice = problem
            path = leaf_paths(tree)[k][len("[0]"):] or "the top level"
            raise cls(f"{user_location()}: {fname}: {_arg_label(fun, i, path)} is {what}; "
                      f"{advice}, or {where_else}")


def _leaf_problem(x):
    """(error class, what it is, what to pass) for a leaf that cannot be
    differentiated, or None."""
    try:
        av = aval_of(x)
    except TypeError:
        shown = repr(x)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return (NonDifferentiableInputError, f"a {type(x).__name__} ({shown}), not an array or "
                "a number", "pass floats or NumPy float arrays (or tuples, lists, dicts of "
                f"them){register_advice(type(x))}")
    if av.dtype.kind not in "fc":
        return (NonDifferentiableInputError, f"{av.short()}: integer and boolean values have no "
                "derivative", "pass it as a float (np.asarray(x, float))")
    return None


def register_advice(cls):
    """How to make the class of an object that is not an array a pytree node (``wg.tree``):
    its arrays are then leaves that transforms differentiate."""
    name = getattr(cls, "__qualname__", cls.__name__)
    if dataclasses.is_dataclass(cls):
        fields = [f.name for f in dataclasses.fields(cls)]
        how = (f"wg.tree.register_dataclass({name}, data_fields={fields!r}, meta_fields=[]) "
               "(or decorate the class with @wg.tree.register_dataclass)")
    else:
        how = (f"wg.tree.register_node({name}, flatten, unflatten), with flatten(obj) -> "
               "(children, static) and unflatten(static, children) -> obj")
    return f"; to pass a {name} whose arrays are differentiated, register it: {how}"


def check_aux_pair(out, fname, fun):
    """With ``has_aux=True`` the function returns ``(output, aux)``."""
    if isinstance(out, tuple) and len(out) == 2:
        return
    if isinstance(out, (tuple, list)):
        got = f"a {type(out).__name__} of {len(out)} values"
    else:
        try:
            got = f"one {aval_of(out).short()} value"
        except TypeError:
            got = f"a {type(out).__name__}"
    where, name = _about(fun)
    raise OutputStructureError(
        f"{where}: {fname}(has_aux=True): {name} returned {got}; with has_aux=True the "
        "function returns a pair (output, aux): return (output, aux) as a tuple, or drop "
        "has_aux=True")


def check_scalar_output(outs, fname, fun, holomorphic=False):
    """grad's function has one real scalar output (complex with ``holomorphic=True``)."""
    shapes = [aval_of(o).shape for o in outs]
    if len(outs) != 1 or shapes[0] != ():
        where, name = _about(fun)
        raise NonScalarOutputError(
            f"{where}: {fname}: {name} returns output shapes {shapes}; grad requires a "
            "function with one scalar output: use jacrev or vjp for non-scalar outputs, or "
            "reduce the output (e.g. .sum())")
    if aval_of(outs[0]).dtype.kind not in "fc":
        where, name = _about(fun)
        raise NonScalarOutputError(
            f"{where}: {fname}: {name} returns a {aval_of(outs[0]).short()} value; grad "
            "requires a float output: return a float (e.g. float(n) or x.astype(float))")
    check_jacobian_dtypes(outs, "output", fname, fun, holomorphic)


def check_holomorphic_inputs(leaves, fname, fun):
    """With ``holomorphic=True`` every differentiated input is complex."""
    check_jacobian_dtypes(leaves, "input", fname, fun, True)


def check_jacobian_dtypes(values, role, fname, fun, holomorphic):
    """JAX's rules for complex values in grad/jacfwd/jacrev: with
    ``holomorphic=True`` the inputs and outputs are complex; without it, a
    complex output (of grad, jacrev) or input (of jacfwd) is refused: one
    real derivative cannot stand for the two of a non-holomorphic map."""
    kinds = [aval_of(v).dtype.kind for v in values]
    # the error names the line that called the transform, and the function
    where, name = user_location(), _about(fun)[1]
    if holomorphic:
        bad = [aval_of(v).short() for v, k in zip(values, kinds) if k != "c"]
        if bad:
            raise UnsupportedDtypeError(
                f"{where}: {fname}(holomorphic=True): {name} has a real {role} ({bad[0]}); "
                f"a holomorphic function maps complex values to complex values: pass complex "
                f"{role}s (x.astype(complex)), or drop holomorphic=True")
        return
    if "c" in kinds:
        bad = aval_of(values[kinds.index("c")]).short()
        if role == "output":
            advice = ("for a holomorphic function pass holomorphic=True (the result is "
                      "f'(z)); otherwise differentiate a real function of it (np.real, "
                      "np.imag, np.abs), or use vjp with a complex cotangent")
        else:
            advice = ("for a holomorphic function pass holomorphic=True; otherwise use jacrev "
                      "(rows df/dx - i df/dy) or split the input into real and imaginary parts")
        raise UnsupportedDtypeError(
            f"{where}: {fname}: {name} has a complex {role} ({bad}); {fname} requires real "
            f"{role}s: {advice}")
