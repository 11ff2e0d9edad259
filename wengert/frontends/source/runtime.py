"""What converted code calls (as ``__wg``): this module is that namespace.
It holds the call of a function from converted code (``call``: the user's
functions are converted, NumPy's and SciPy's go to the primitive library,
``float``/``int``/``min``/``max``/``sum``/``len`` and ``math`` get array
meanings), and it names the helpers of ``source.ops`` (operators, ``if``)
and ``source.loops`` (``for``, ``while``) that the rewrite calls.

Layer: frontends.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import sys
import types

import numpy as np

from ...core import context, dims
from ...core.dims import Dim
from ...core.errors import ConcretizationError, UnsupportedSyntax, user_location
from ...core.ir import aval_of
from ...primitives import arith, casts, ordering, reduce as reduce_mod, runtime_shapes
from ...numpy import library
from ...core.inplace import array_result, scalar_result
from ...numpy.answers import array_answer, scalar_answer
from ...numpy.math_twins import find_twin
from ...core.staging import StagingTracer
from .env import (
    EnvObject, call_outside, concrete, env_cell, env_global, holds_outside_object, materialize,
    outside_method)
from .converted import convert_with, is_converted, is_wengert_code
from .kinds import is_impure
from .blocks import Undefined

from .alias_check import alias_check, check_param_writes, param_writes
from .effects import (
    aug_attr, aug_outside, check_nonlocal_call, nonlocal_def, set_attr, set_outside)
from .trying import caught, done, raising, try_start
from .loops import for_stmt, while_stmt
from .ops import (
    UNDEF, DimRange, TracedRange, TracedSequence, any_traced, is_traced, and_, augmented, getitem,
    guard_stmt, if_stmt, ifexp, is_, named, none_of, not_, or_, read, setitem)

__all__ = ["UNDEF", "read", "named", "not_", "and_", "or_", "none_of", "ifexp", "setitem",
           "getitem", "call", "if_stmt", "guard_stmt", "for_stmt", "while_stmt", "env_global",
           "env_cell", "is_", "alias_check", "param_writes", "call_unseen", "augmented",
           "set_attr", "aug_attr", "set_outside", "aug_outside", "nonlocal_def", "try_start",
           "done", "caught", "raising"]

# this module: the namespace converted code calls (``__wg``), and so the one
# the user's functions it converts at run time are given
_RUNTIME = sys.modules[__name__]


# --- calls ---------------------------------------------------------------------

def _float(x=0.0):
    if is_traced(x):
        # a Python float, weakly typed: float(s) * v32 stays float32 (NEP 50)
        if aval_of(x).shape == ():
            return casts.python_scalar(x)
        return arith.convert(x, dtype=np.dtype(np.float64))
    dims.pin(x)         # a symbolic number's value, not its expression
    return builtins.float(x)


def _int(x=0, *a):
    if type(x) is Dim:
        return x
    if is_traced(x):
        out = x if aval_of(x).dtype.kind in "iu" else arith.convert(x, dtype=np.dtype(np.int64))
        # a Python int: ``n += 1`` rebinds it (``inplace.is_scalar``)
        return out.clone(scalar=True) if type(out) is StagingTracer and not out.scalar else out
    dims.pin(x)
    return builtins.int(x, *a)


def _bool(x=False):
    if is_traced(x):
        # a truth value: a constant of the derivative, staged (the code decides it per call)
        if aval_of(x).shape not in ((), (1,)):
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        out = x if aval_of(x).dtype == np.bool_ else ordering.not_equal(x, 0)
        return casts.python_scalar(out, np.bool_) if aval_of(out).shape == () else out
    dims.pin(x)
    return builtins.bool(x)


def _extremum(builtin, pair, reduce_fn):
    def fn(*args, **kw):
        if len(args) == 1 and is_traced(args[0]):
            return reduce_fn(args[0], axis=0)
        vals = list(args[0]) if len(args) == 1 else list(args)
        if not any_traced(vals) or kw:
            return builtin(*args, **kw)
        out = vals[0]
        for v in vals[1:]:
            out = pair(out, v)
        if all(type(v) is float or aval_of(v).weak and aval_of(v).dtype.kind == "f"
               for v in vals):
            out = casts.python_scalar(out)  # max of Python floats is one of them (NEP 50)
        return out
    return fn


def _sum(iterable, start=0):
    if is_traced(iterable):
        return arith.add(reduce_mod.reduce_sum(iterable, axis=0), start)
    return builtins.sum(iterable, start)


def _isinstance(x, cls):
    x = concrete(x)             # an outside object: its type is checked at each call
    cls = tuple(concrete(c) for c in cls) if isinstance(cls, tuple) else concrete(cls)
    if is_traced(x):
        classes = cls if isinstance(cls, tuple) else (cls,)
        if any(c in (np.ndarray, np.generic, np.number, np.floating) for c in classes):
            return True
        if aval_of(x).shape == () and any(c in (float, int, complex) for c in classes):
            kind = aval_of(x).dtype.kind
            return (float in classes and kind == "f") or (int in classes and kind in "iub")
    return builtins.isinstance(x, cls)


def _len(x):
    if is_traced(x) and aval_of(x).shape:
        if aval_of(x).shape[0] is None:     # known only when the code runs (``x[mask]``)
            return runtime_shapes.length(x, (0,))
        return aval_of(x).shape[0]          # a symbolic length stays one (``dims``)
    return builtins.len(x)


_BUILTINS = {builtins.float: _float, builtins.int: _int, builtins.bool: _bool, builtins.sum: _sum,
             builtins.len: _len,
             builtins.min: _extremum(builtins.min, ordering.minimum, reduce_mod.reduce_min),
             builtins.max: _extremum(builtins.max, ordering.maximum, reduce_mod.reduce_max),
             builtins.isinstance: _isinstance}

def _math(f):
    name = f.__name__
    # a twin computes it with NumPy and returns a Python float, as math does
    np_fn = find_twin(f) or getattr(np, name, None)

    def fn(*args):
        if any_traced(args):
            if np_fn is None:
                raise UnsupportedSyntax(f"math.{name} has no NumPy counterpart for traced "
                                        "values; write it with NumPy functions")
            return np_fn(*args)
        dims.pin(args)      # computed now: at these values only
        return f(*args)
    return fn


def _is_user_function(f):
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", "") or ""
    # (array_api_compat.array_namespace(x): called, it gives a tracer's namespace, NumPy's)
    if mod.split(".")[0] in ("numpy", "wengert", "scipy", "builtins", "math", "functools",
                             "array_api_compat"):
        return False
    if getattr(f, "__wg_source__", None) is not None:
        return False
    if is_wengert_code(f) or is_converted(f):
        return False
    try:
        inspect.getsourcefile(f)
    except TypeError:
        return False
    return True


def call(f, *args, **kw):
    """``f(*args, **kw)`` from converted code, where the caller may read the
    arguments afterwards: a user's function that writes into one is refused
    (``source.alias_check``)."""
    return _call(f, args, kw, ())


def call_unseen(unseen, f, *args, **kw):
    """``call`` where nothing the caller reads afterwards shares the arguments
    at the positions and keywords ``unseen``."""
    return _call(f, args, kw, unseen)


def _call(f, args, kw, unseen):
    for a in (*args, *kw.values()):
        if isinstance(a, Undefined):
            a.fail()            # a value unknown here, given to a function: read
    if isinstance(f, EnvObject):
        method = outside_method(f)          # a Python method of an object found outside:
        if method is not None:              # converted, its self the object's place
            return _call(method[0], (method[1], *args), kw,
                         tuple(k + 1 if isinstance(k, int) else k for k in unseen))
        return f(*args, **kw)
    rule = library.call_rule(f)
    if rule is not None and any_traced([args, kw]):
        library.check_complex(f, args, kw)  # complex operands: audited wrappers only
        # np.array, scipy.stats...: the library table; a 0-d result is an
        # array (``np.array(s)`` is one) unless NumPy gives a scalar (np.sum)
        out = rule(*args, **kw)
        if scalar_answer(f, args, kw):
            return scalar_result(out)
        return array_result(out, array_answer(f, args))
    if is_impure(f):
        return call_outside(f, args, kw)    # made at every call of the generated code
    if isinstance(f, functools.partial):    # its function, with its arguments
        n = len(f.args)
        return _call(f.func, (*f.args, *args), {**f.keywords, **kw},
                     tuple(k + n if isinstance(k, int) else k for k in unseen))
    f = _with_converted_functions(f)
    if is_converted(f):
        check_param_writes(f, args, kw, unseen)         # a nested def
        check_nonlocal_call(f)
    if _is_user_function(f):
        g = convert_with(f, _RUNTIME)
        check_param_writes(g, args, kw, unseen)
        try:
            return g(*args, **kw)
        except RecursionError:
            raise UnsupportedSyntax(
                f"{f.__qualname__} recurses on a traced value: the recursion depth must follow "
                "from Python values (ints, shapes); use a loop instead") from None
    if f is builtins.type and len(args) == 1:
        return type(concrete(args[0]))      # checked at each call (source.env)
    if not _is_builtin_special(f):
        # a function that is called, not converted: lists and dicts found
        # outside become real ones; an outside object it would read inside
        # is read at each call instead, by calling it then. wengert's own
        # functions (fori_loop's schedule, a custom rule) take the object.
        # The user's functions it is given (``map(f, xs)``, a loop body) are
        # given converted, so what they read outside is read where it lives
        args, kw = materialize(list(args)), materialize(kw)
        args = [_converted_argument(a) for a in args]
        kw = {k: _converted_argument(v) for k, v in kw.items()}
        if holds_outside_object(args) or holds_outside_object(kw):
            if not _is_wengert(f):
                return call_outside(f, args, kw)
            args, kw = [concrete(a) for a in args], {k: concrete(v) for k, v in kw.items()}
    if _is_maker(f) and any_traced(list(args[:1]) + [kw.get("shape"), kw.get("N")]):
        raise ConcretizationError(
            f"{user_location()}: np.{getattr(f, '__name__', 'zeros')} with a shape that depends "
            "on a traced value: array shapes must be Python ints (or lengths of inputs); compute "
            "the shape from values you do not differentiate")
    if context.symbolic_now() is not None and _is_maker(f):
        out = f(*args, **kw)
        _MAKERS[f](out, *args, **kw)
        return out
    if isinstance(f, types.BuiltinFunctionType) or isinstance(f, type):
        special = _BUILTINS.get(f)
        if special is not None:
            return special(*args, **kw)
        if f is builtins.range and any_traced(args):
            return TracedRange(*args)
        if f is builtins.range and any(type(a) is Dim for a in args):
            return DimRange(*args)
        if (f in (builtins.enumerate, builtins.zip) and any_traced(args)
                and not any(isinstance(a, (list, tuple)) for a in args)):
            return TracedSequence(f, args, kw)       # over arrays: a structured loop
        if getattr(f, "__module__", None) == "math":
            return _math(f)(*args)
    if not _is_wengert(f):
        # called, not converted (NumPy on numbers, a C function, a class): a
        # symbolic number given to it is used by its value, so the code holds
        # at that value only (wengert's own functions keep it: ``fori_loop``)
        dims.pin(args, kw)
    return f(*args, **kw)


def _converted_argument(a):
    """A user's function as its converted version, a partial or one of
    wengert's objects holding such functions remade around them converted
    (anything else as it is)."""
    if _is_user_function(a):
        return convert_with(a, _RUNTIME)
    if isinstance(a, functools.partial) and _is_user_function(a.func):
        return functools.partial(_converted_argument(a.func), *a.args, **a.keywords)
    return _with_converted_functions(a)


def _with_converted_functions(f):
    """wengert's objects that hold the user's functions (``custom_jvp``,
    ``custom_vjp``, ``checkpoint``: their ``_wg_with_functions``), remade with
    those functions converted: run by the object, unconverted, the functions
    would read globals and draw random numbers while the code is generated,
    not at each call."""
    remake = getattr(type(f), "_wg_with_functions", None)
    return f if remake is None else remake(f, _converted_argument)


def _is_wengert(f):
    """wengert's own functions and callable objects (custom rules)."""
    return is_wengert_code(f) or type(f).__module__.split(".")[0] == "wengert"


def _is_builtin_special(f):
    """Builtins that take outside objects as they are (``len``, ``isinstance``)."""
    try:
        return f in _BUILTINS or f in _OBJECT_BUILTINS
    except TypeError:       # an unhashable callable
        return False


_OBJECT_BUILTINS = {builtins.getattr, builtins.hasattr, builtins.callable, builtins.iter,
                    builtins.enumerate, builtins.zip, builtins.list, builtins.tuple,
                    builtins.reversed, builtins.sorted}


def _made(out, shape, *a, **kw):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dims.has_dims(shape):
        context.remember(out, shape)


def _made_eye(out, n, m=None, k=0, *a, **kw):
    m = n if m is None else m
    if dims.has_dims((n, m)):
        context.remember(out, (n, m), ("eye", n, m, k))


def _is_maker(f):
    try:
        return f in _MAKERS
    except TypeError:       # an unhashable callable
        return False


# NumPy calls that make an array from a shape: of a symbolic shape, the
# generated code makes it (``np.zeros((x.shape[0],))``), see ``dims``
_MAKERS = {np.zeros: _made, np.ones: _made, np.full: _made, np.eye: _made_eye,
           np.identity: _made_eye}
