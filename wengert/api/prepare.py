"""What every entry point of the public API does before and after its
transform: the engine's choice (``_by_source``: the source engine's version
of a transform, or None), the function of the differentiated arguments and
their check (``_prepare``), aux values, the seed and the dtypes of what is
handed back (``_cast_like``), reverse mode's linearization (``_vjp_core``).

Layer: api.
"""
from __future__ import annotations


import functools
import types

import numpy as np

from ..core.errors import NoDerivativeRule
from .checks import argnums_tuple, check_aux_pair, check_function, check_inputs
from ..frontends.trace import flat_function
from ..core.ir import Lit, aval_of, sub_programs
from ..core.atoms import as_library
from ..core.primitive import TracerBase, Zero, zeros
from ..numpy.library import call_rule
from ..numpy.math_twins import twin_of
from ..primitives.arith import convert
from ..primitives.casts import cast_exact
from ..primitives.shape import zeros_like
from ..core.pytree import flatten, unflatten
from .fresh import fresh, held_by
from ..transforms.partial_eval import linearize_flat
from .source import SourceTransformed, has_source
from .codes import recipe_key
from .backend import backend_options, check_backend, target_of


ENGINES = ("auto", "trace", "source")


def _check_engine(engine):
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")


def source_transformed(fun, engine, transform, recipe, argnums, extra=0, lanes=None):
    """The source engine's version of ``transform`` (a trace-engine transform
    of a function), or None for ``engine="trace"``. ``recipe`` is the public
    call that made it (how it pickles; its ``backend`` and ``fallback``
    options choose what compiles the code, ``api.backend``); its arguments at
    ``argnums`` are checked before any code is generated; ``extra``: trailing
    call arguments that are not ``fun``'s (``SourceTransformed``); ``lanes``: the
    batch axis of each argument leaf, where ``transform`` calls ``fun`` on one example
    (``vmap``)."""
    if engine == "trace":
        return None
    name = recipe[0]
    target = target_of(recipe[3].get("backend", "python"), recipe[3].get("fallback", True), fun)

    def check(args):
        nums = argnums_tuple(argnums, len(args), name)
        check_inputs(name, fun, args, nums, "leave it out of argnums")

    if isinstance(fun, SourceTransformed) and fun.fallback is None:
        # grad(grad(f)): one source Program of f, the transforms composed
        inner, inner_check = fun.transform, fun.check

        def both(args):
            inner_check(args)
            check(args)
        inner_key = fun.codes.key
        key = None if inner_key is None else recipe_key(recipe, inner_key)
        return SourceTransformed(fun.fun, lambda g: transform(inner(g)), engine,
                                 f"{name}_{fun.name}", recipe, both, key, target,
                                 lanes=([lanes] if lanes else []) + fun.lanes)
    if engine == "auto" and not has_source(fun):
        return None
    # objects made by the same recipe share their code (``api.codes``)
    return SourceTransformed(fun, transform, engine, name, recipe, check, recipe_key(recipe),
                             target, extra, lanes=[lanes] if lanes else [])


class _Partial:
    """``fun`` as a function of the arguments in ``argnums`` only."""

    def __init__(self, fun, args, kwargs, argnums):
        self.fun, self.args, self.kwargs, self.argnums = fun, list(args), kwargs, argnums

    def __call__(self, *dyn):
        args = list(self.args)
        for i, d in zip(self.argnums, dyn):
            args[i] = d
        return self.fun(*args, **self.kwargs)


def prepare_call(fun, args, kwargs, argnums, fname, has_aux=False,
             where_else="leave it out of argnums"):
    """(function of the differentiated arguments, those arguments, their
    positions, the box aux lands in); the arguments are checked first."""
    nums = argnums_tuple(argnums, len(args), fname)
    check_inputs(fname, fun, args, nums, where_else)
    dyn = tuple(args[i] for i in nums)
    if not getattr(fun, "wg_replay", False):
        # the user's code runs on the arguments not differentiated as given:
        # on copies of their arrays, so a write into one (``m[0, 1] = 1.0``)
        # never reaches the caller's (the differentiated ones are traced)
        args = [a if i in nums else private_arrays(a) for i, a in enumerate(args)]
        kwargs = {k: private_arrays(v) for k, v in kwargs.items()}
    part = _Partial(fun, args, kwargs, nums)
    if has_aux:
        aux_box = [None]

        def main(*xs):
            out = part(*xs)
            check_aux_pair(out, fname, fun)
            aux_box[0] = out[1]
            return out[0]
        main.wg_origin = fun
        return main, dyn, nums, aux_box
    return part, dyn, nums, None


def private_arrays(x):
    """``x`` with each NumPy array among its pytree leaves copied, in new
    lists and dicts: what the function writes into them (``cache["y"] =
    x``) stays in the call, as in the source engine's functional updates."""
    if type(x) is np.ndarray:
        return x.copy()
    if not isinstance(x, (list, dict)) and not (type(x) is tuple and x):
        return x
    leaves, tree = flatten(x)
    return unflatten(tree, [a.copy() if type(a) is np.ndarray else a for a in leaves])


def unwrap_aux(aux_box):
    """aux values leave the trace as plain values (their primal part); an
    array the function did not compute (a global, a closure's) is copied."""
    leaves, tree = flatten(aux_box[0])
    plain, outside = [], set()
    for k, x in enumerate(leaves):
        if not isinstance(x, TracerBase):
            outside.add(k)
        while hasattr(x, "primal"):
            x = x.primal
        plain.append(x)
    return unflatten(tree, fresh(plain, constant=outside))


def cast_like(ct, x):
    """A cotangent with the dtype and type of its primal (float32 stays
    float32, a Python float's is a Python float: ``cast_exact``); staged (the
    source engine), the cast is an equation of the code."""
    av = aval_of(x)
    if isinstance(ct, Zero):
        # 0.0 for a Python float; of a length known only at run time, shaped like x then
        return zeros_like(x) if None in av.shape else as_library(zeros(av), x)
    dt = getattr(ct, "dtype", None)
    if dt is not None and dt != av.dtype and dt.kind not in "fc":
        ct = convert(ct, dtype=av.dtype)
    return as_library(cast_exact(ct, av), x)     # a Dask input's is a Dask array


# the advice for a value that is not to be differentiated, where every
# argument is (jvp, vjp, linearize)
CLOSE_OVER = "pass a function of the differentiated values only (a lambda closing over the rest)"

def vjp_core(fn, dyn, fname):
    flat, leaves, in_tree, out_tree = flat_function(fn, dyn)
    outs, lin = linearize_flat(flat, leaves, reverse=True, name=getattr(fn, "__name__", "f"))
    return outs, lin, leaves, in_tree, out_tree[0]


def kept_by(lin):
    """The owners of the arrays the linear Program keeps (its residuals,
    ``fresh.held_by``): a pullback hands them out again at its next call."""
    kept = []

    def collect(prog):
        for e in prog.eqns:
            kept.extend(x.val for x in e.inputs if isinstance(x, Lit))
            for sub in sub_programs(e):
                collect(sub)
    collect(lin)
    kept.extend(x.val for x in lin.outputs if isinstance(x, Lit))
    return held_by(kept)


def unshared(outs, lin, held=frozenset()):
    """The outputs handed to the caller, copied where the linear Program
    keeps the same array (``exp``'s output is its own derivative), where an
    output is the caller's (``held``: an argument's memory), or where it is
    a constant of the function (its tangent is a literal: a global): the
    caller may write to what it is given before using the pullback."""
    constant = {k for k, x in enumerate(lin.outputs) if isinstance(x, Lit)}
    return fresh(outs, held | kept_by(lin), constant)


def unit(aval):
    """The seed 1 of a scalar: a Python 1.0 for a Python float (weakly typed, cheap)."""
    return 1.0 if aval.weak and aval.dtype == np.float64 else np.ones((), aval.dtype)


def transform_entry(fun, engine, fname, backend="python", fallback=True):
    _check_engine(engine)
    check_backend(backend, engine, fallback)
    check_function(fun, fname)
    # a math builtin: its NumPy twin (math_twins); a SciPy function given
    # directly: the function of its rule (``library_entry``); a callable
    # object: its __call__ (``callable_entry``)
    return callable_entry(library_entry(twin_of(fun)))


def callable_entry(fun):
    """An instance of a user's class that defines ``__call__`` in Python
    (an ``Objective`` counting its evaluations): its bound ``__call__``,
    whose source the source engine reads; anything else as it is."""
    if isinstance(fun, (types.FunctionType, types.MethodType, type)):
        return fun
    call = getattr(type(fun), "__call__", None)
    if isinstance(call, types.FunctionType) and not type(fun).__module__.startswith("wengert"):
        return fun.__call__
    return fun


def library_entry(fun):
    """A SciPy function given to a transform directly (``wg.grad(
    scipy.stats.norm.pdf)``): a function calling wengert's rule for it, as the
    source engine calls it inside the user's functions. SciPy's own code
    would convert a traced value to an array (the trace engine) or be
    converted itself (the source engine); anything else as it is."""
    owner = getattr(fun, "__self__", None)
    module = getattr(fun, "__module__", None) or getattr(type(owner), "__module__", "") or ""
    if not module.startswith("scipy"):
        return fun
    try:
        rule = call_rule(fun)
    except TypeError:       # an unhashable callable
        return fun
    if rule is None and hasattr(owner, "_parse_args"):
        # a method of a scipy.stats distribution wengert has no rules for: SciPy's
        # own code would convert the traced value, or be converted itself
        name = f"scipy.stats.{getattr(owner, 'name', type(owner).__name__)}.{fun.__name__}"
        raise NoDerivativeRule(
            f"{name} has no derivative rule in wengert (the distributions of scipy.stats it "
            "differentiates are listed on the Supported functions page); write its density with NumPy "
            "and scipy.special functions, or give it a rule with wg.custom_vjp")
    return fun if rule is None else _rule_function(rule, getattr(fun, "__name__", "f"))


@functools.lru_cache(maxsize=256)
def _rule_function(rule, name):
    def library_function(*args, **kwargs):
        return rule(*args, **kwargs)
    library_function.__name__ = library_function.__qualname__ = name
    return library_function


def options(holomorphic, backend, fallback):
    """The options a recipe keeps beside ``engine``, each only when given."""
    return {**_holo(holomorphic), **backend_options(backend, fallback)}


def _holo(holomorphic):
    """The ``holomorphic`` keyword as a recipe keeps it (only when given, so
    the recipes of real functions read as before)."""
    return {"holomorphic": True} if holomorphic else {}
