"""The source engine's side of the public API.

    Python function --source frontend--> Program --transform, staged--> Program
                    --simplify--> --python.codegen--> Python function (``.source``)

A derivative is generated once per function, transform, argnums and *kind* of arguments (the
ranks and dtypes of the array arguments, the values of the static ones: bools, strings,
objects by identity), and shared by every derivative object made the same way (``api.codes``):
valid for every path through the control flow, which stays structured in the generated code,
and for every input shape and Python int. The lengths of the inputs are staged as symbolic
``Dim``s, so the code reads ``x.shape[0]`` where a length is needed; so are the Python int
arguments (a trip count, a length), which the code takes as parameters and reads by name
(``range(n)``). The comparisons made while staging (``x.shape[0] == 1`` when broadcasting, ``k
< n``) are the code's guards, checked at a call with new sizes; a symbolic number used by its
value (an item of a list, a function that is called, not converted) is pinned by a guard to
that value (``dims.pin``). The code is trusted for new sizes only once staging it at a
second set of sizes its guards accept (the first call there) gave the same text and read the
same places outside the function: a size that lost its expression somewhere would show there
as a changed number, and such code is used at the sizes it was made for only. The transform
itself is the trace engine's, applied to the source Program and staged: so every API function
has one implementation of its mathematics.

``engine="auto"`` tries this and falls back to the trace engine, with one warning naming the
construct and its file:line, when the source cannot be transformed (``fallback``). Pickled,
a ``SourceTransformed`` is its recipe (``transformed``): the receiving process generates its
own code.

Layer: api.
"""
from __future__ import annotations

import functools

import numpy as np

from ..core import dims
from ..core.lengths import guard_function
from ..core.context import StagingContext, current as current_context
from ..core.debug import NANS
from ..core.errors import ConcretizationError, PytreeDepthError, UnsupportedSyntax, WengertError
from ..frontends import source as source_frontend
from ..frontends.source import guards as source_guards
from ..frontends.trace import input_names
from ..core.ir import aval_of
from ..core.atoms import is_duck_array
from ..core.primitive import TracerBase
from ..core.trace import eval_program, tracing
from ..core.pytree import flatten, unflatten
from ..core.staging import stage
from .transformed import Transformed
from .lanes import per_example
from .compiled import Compiled, compile_program, same_code
from .codes import codes_for, fast_key, unsafe_codes
from .keys import call_leaves, is_input, signature, staged_at
from .fallback import both_reasons, has_source, traced_after_refusal, warn_fallback
from ..transforms.simplify import simplify

__all__ = ["SourceTransformed", "source_program", "source_inner", "generated"]




_is_static = source_frontend.is_static


def source_program(fun, args, kwargs=None, avals=None):
    """(Program, static mask, input tree, output tree) of ``fun`` at ``args``
    and ``kwargs`` (at ``avals`` for the array and float leaves, when given)."""
    return source_frontend.make_program(fun, args, avals=avals, kwargs=kwargs)


def _program_function(prog, static, leaves, in_tree, out_tree, fun):
    """``prog`` as a Python function of the original arguments (traced values
    in, traced values out), for the trace engine's transforms to act on;
    errors about it name ``fun``, the user's function it was made from."""
    def inner(*args, **kwargs):
        arg_leaves, _ = call_leaves(args, kwargs)
        dyn = [x for x, s in zip(arg_leaves, static) if not s]
        return unflatten(out_tree, eval_program(prog, dyn))
    # running it twice has no effect outside it (it replays a Program), so a
    # transform may try one way and redo it another (``grad``'s forward mode);
    # the transforms' wrappers keep the mark (functools.wraps copies it)
    inner.wg_replay = True
    inner.wg_origin = fun
    return inner


class SourceTransformed(Transformed):
    """``transform(fun)`` by the source engine: callable like the trace
    engine's result, generated once per kind of arguments (and again only
    for shapes where the code's guards fail); ``.source`` is the generated
    code of the latest call. ``check(args)`` checks the arguments of a call
    before code is generated for them; ``recipe`` is how it pickles."""

    def __init__(self, fun, transform, engine, name, recipe, check, key=None, target=None,
                 extra=0, lanes=()):
        self._wrap(fun, recipe)
        # vmap: ``lanes[j](args, kwargs)``, the batch axis of each argument leaf of the
        # j-th vmap from the outside in; ``fun`` is staged on one example of them
        self.lanes = list(lanes)
        self.target = target                # the backend (``api.backend``); None: Python
        # the last ``extra`` positional arguments of a call are not ``fun``'s: the
        # transformed function takes them after fun's (jvp's tangents, a pullback's
        # cotangent: ``api.points``)
        self.extra = extra
        self.check = check
        self.fun = fun
        self.transform = transform          # inner function -> transformed function (trace)
        self.engine = engine
        self.name = name
        # the generated code, shared with every object made by the same recipe
        # (``key``: see ``api.codes``); every entry is used only while its
        # checks of what it read from outside the function pass
        # (``Compiled.valid``); else it is made again
        self.codes = codes_for(key)
        self._last = None
        self.fallback = None
        self.refusal = None             # why the source engine refused (``_fall_back``)

    # the tables of ``api.codes.Codes``, by their old names
    cache = property(lambda self: self.codes.cache)
    fast = property(lambda self: self.codes.fast)
    generic = property(lambda self: self.codes.generic)

    @property
    def generations(self):
        """How many times code was generated for this object's recipe (by
        any object sharing it)."""
        return self.codes.generations

    @property
    def last(self):
        """The code of this object's latest call; the all-float path does not
        record it (it is the one code of all-float calls, perhaps made by
        another object sharing this one's code)."""
        if self._last is None and self.codes.floats is not None:
            return self.codes.floats[1]
        return self._last

    @property
    def source(self):
        last = self.last
        if last is None:
            raise AttributeError("no code generated yet: call the function once; the source "
                                 "engine generates code for the shapes it is called with")
        return last.source

    @property
    def program(self):
        last = self.last
        return None if last is None else last.program

    def __call__(self, *args, **kwargs):
        if NANS.on and self.fallback is None:
            return self._interpreted(args, kwargs)
        codes = self.codes if NANS.safe else unsafe_codes(self)
        floats = codes.floats
        if floats is not None and not kwargs and len(args) == floats[0]:
            for a in args:
                if type(a) is not float:
                    break
            else:
                compiled = floats[1]
                if compiled.env_check is None or compiled.env_check():
                    if current_context() is not None:
                        source_guards.note(compiled.env_guards)
                    outs = compiled.run(*args)
                    finish = compiled.finish
                    return finish(outs) if finish is not None else compiled.result(outs)
        if self.fallback is not None:
            return self._fall_back(args, kwargs)
        fast = None if kwargs else fast_key(args)
        if fast is not None:
            fast, fast_leaves = fast
            compiled = codes.fast.get(fast)
            if compiled is not None and compiled.valid():
                if current_context() is not None:
                    source_guards.note(compiled.env_guards)
                self._last = compiled
                return compiled(fast_leaves)
        try:
            leaves, in_tree = call_leaves(args, kwargs)
        except PytreeDepthError:
            self.check(args)        # the error that names the argument, if it is one
            raise
        static = [_is_static(x) for x in leaves]
        if self.lanes and tracing() and any(isinstance(x, TracerBase) for x in leaves):
            return self._on_tracers(args, kwargs, leaves, static, in_tree)
        key = (in_tree, signature(leaves, static))
        compiled = codes.cache.get(key)
        if compiled is not None and not compiled.valid():
            compiled = None
        dyn = [x for x, s in zip(leaves, static) if is_input(x, s)]
        pending = None
        if compiled is None:
            kind = (key[0], signature(leaves, static, shapes=False)) + key[2:]
            # code made at other sizes, whose guards hold at these: used once code
            # staged at a second size came out the same (``_build``)
            sizes = dims.sizes_of(dyn)
            for check, generic in codes.generic.get(kind, ()):
                if check(*sizes) and generic.valid():
                    if generic.verified:
                        compiled = codes.cache[key] = generic     # and the fast table below
                        break
                    pending = pending or generic
        if compiled is None:
            self.check(args)        # before any of the user's code runs
            try:
                compiled, check = self._build(args, kwargs, leaves, static, in_tree,
                                              generic=not tracing())
            except (UnsupportedSyntax, ConcretizationError) as err:
                # a choice on a Dask value: tracing cannot make it lazily either (the
                # function keeps its source code for NumPy's arrays)
                if self.engine != "auto" or (isinstance(err, ConcretizationError) and any(
                        hasattr(x, "__dask_graph__") for x in leaves)):
                    raise
                warn_fallback(self.fun, err, self.target)
                self.fallback = self.transform(self.fun)
                self.refusal = err
                return self._fall_back(args, kwargs)
            if pending is not None and check is not None:
                # (code staged at fixed sizes, for an outer transformation's
                # values, says nothing of the pending code: it is not compared)
                compiled = self._verify(codes, kind, pending, compiled)
            if compiled is pending:         # the same code: nothing new was made
                codes.cache[key] = compiled
                if fast is not None:
                    codes.fast[fast] = compiled
            else:
                codes.generations += 1
            if compiled is not pending and compiled.fn is not None:
                # a Program closing over an outer transformation's values has no
                # code and is built for this call only; code made from outside
                # values that changed is replaced
                if check is not None:
                    codes.generic[kind] = [(c, g) for c, g in codes.generic.get(kind, ())
                                           if g.valid()] + [(check, compiled)]
                codes.cache[key] = compiled
                if fast is not None:
                    codes.fast[fast] = compiled
                    if all(t is float for t in fast):
                        codes.floats = (len(args), compiled)
        elif fast is not None and key in codes.cache:
            codes.fast[fast] = compiled
        # code generated inside another one's generation (a derivative called
        # in a converted function): what it depends on, the outer one does too
        source_guards.note(compiled.env_guards)
        self._last = compiled
        return compiled(dyn)

    def _fall_back(self, args, kwargs):
        """The trace engine's call, after the source engine refused: an
        error names both reasons (``fallback.both_reasons``)."""
        try:
            return self.fallback(*args, **kwargs)
        except WengertError as err:
            raise both_reasons(err, self.refusal) from None

    def _interpreted(self, args, kwargs):
        """A call while ``wg.debug_nans`` is on: the source Program, staged
        now (each equation keeping its user line), transformed and run by the
        interpreter, whose every value is checked (``core.debug``)."""
        self.check(args)
        own = tuple(args)[:len(args) - self.extra] if self.extra else tuple(args)
        leaves, in_tree = call_leaves(own, kwargs)
        static = [_is_static(x) for x in leaves]
        prog, _, _, out_tree = source_program(self.fun, own, kwargs)
        inner = _program_function(prog, static, leaves, in_tree, out_tree, self.fun)
        return self.transform(inner)(*args, **kwargs)

    def _on_tracers(self, args, kwargs, leaves, static, in_tree):
        """``vmap`` called on another transformation's values: the transform of the source
        Program, whose custom-rule calls the outer one differentiates by their rules."""
        avals = [aval_of(x) for x, s in zip(leaves, static) if not s]
        a, kw, avals = per_example(self.lanes, args, kwargs or None, avals)
        try:
            prog, _, _, out_tree = source_program(self.fun, a, kw, avals)
        except (UnsupportedSyntax, ConcretizationError) as err:
            if self.engine != "auto":
                raise
            warn_fallback(self.fun, err, self.target)
            return self.transform(self.fun)(*args, **kwargs)
        inner = _program_function(prog, static, leaves, in_tree, out_tree, self.fun)
        return self.transform(inner)(*args, **kwargs)

    def _build(self, args, kwargs, leaves, static, in_tree, generic=True):
        """(compiled, guard check): the code of one call's arguments; the
        check is None when the code holds at these shapes only. Staged in a
        context of its own (``context.StagingContext``), which collects the
        guards, the constants of symbolic shape and the checks of what the
        code read from outside the function."""
        dyn = [x for x, s in zip(leaves, static) if is_input(x, s)]
        avals, sizes = [aval_of(x) for x in dyn], dims.sizes_of(dyn)
        # staged from avals: the arrays themselves are left out of what the code
        # keeps (it lives in the shared table, after this call's arrays are gone)
        shell = [np.empty((0,) * x.ndim, x.dtype) if type(x) is np.ndarray or is_duck_array(x)
                 else x for x in leaves]
        # on another library's arrays (Dask, CuPy): code that makes its arrays like the first
        like = next((k for k, x in enumerate(dyn) if is_duck_array(x)), None)
        lazy = like is not None and hasattr(dyn[like], "__dask_graph__")
        build = functools.partial(self._stage, bool(kwargs), shell, static, in_tree, like=like,
                                  lazy=lazy)
        ints = any(type(n) is int for n in sizes)
        symbolic = generic and (ints or any(a.shape for a in avals))
        try:
            with StagingContext(symbolic) as ctx:
                compiled = build(*staged_at(avals, sizes, symbolic))
        except Exception:       # noqa: BLE001 -- an int used where a Dim is not accepted
            if not (symbolic and ints):
                raise
            # staged at the ints' values, each pinned there by a guard
            # (lengths stay symbolic); an error now is the function's own
            with StagingContext(symbolic) as ctx:
                dims.pin(*[dims.int_input(k, n) for k, n in enumerate(sizes)
                           if type(n) is int])
                compiled = build(*staged_at(avals, sizes, symbolic, ints=False))
        check = None
        if symbolic and compiled.fn is not None:
            # trusted at other sizes once staged there the same (``_verify``)
            check = guard_function(ctx.guards, len(avals))
            compiled.verified = False
            compiled.outside = frozenset(ctx.outside.keys())
            compiled.shapes = sizes
            compiled.respecialize = lambda dyn: build(*staged_at(
                [aval_of(x) for x in dyn], dims.sizes_of(dyn), False))(dyn)
        compiled.env_guards = list(ctx.outside.values())
        compiled.env_check = source_guards.guard_function(compiled.env_guards)
        return compiled, check

    @staticmethod
    def _verify(codes, kind, pending, compiled):
        """``pending`` (code staged with symbolic sizes, whose guards hold at
        this call's sizes, not yet used at any but its own) if ``compiled``,
        staged now at these sizes, came out the same: the same text and the
        same places read outside the function. A size that lost its
        expression somewhere shows there as a changed number (an outside list
        indexed by an int input reads another item); such code holds at the
        sizes it was made for only, and is no longer offered at others. Done
        at the first call at other sizes rather than at the first call (by a
        second staging), which the first call's start-up then does not pay."""
        if (compiled.outside == pending.outside
                and same_code(pending.fn, compiled.fn)):
            pending.verified = True
            return pending
        codes.generic[kind] = [(c, g) for c, g in codes.generic.get(kind, ()) if g is not pending]
        return compiled

    def _stage(self, kwargs, leaves, static, in_tree, avals, ints, like=None, lazy=False):
        """The compiled code of a call of ``leaves`` (its arrays may be empty
        stand-ins: only their kind is read; ``kwargs``: whether the last leaf
        group is keyword arguments), staged at
        ``avals`` (one per input) with its int inputs at ``ints`` (one per
        input: a Dim, an int, or None for an array or float input). The
        source Program takes the int inputs as Python values; the derived
        Program takes them as inputs, and its code reads them by name. ``like``: the
        position of an input of another array library, ``lazy`` if it is Dask's
        (``Compiled``)."""
        inputs = [is_input(x, s) for x, s in zip(leaves, static)]
        values = iter(ints)
        staged = [(next(values) if i else None) for i in inputs]
        leaves = [x if v is None else v for x, v in zip(leaves, staged)]
        call = unflatten(in_tree, leaves)
        args, kwargs = (call[0], call[1]) if kwargs else (call, None)
        own = len(leaves)           # fun's own leaves come first (``extra``)
        if self.extra:
            args = tuple(args)[:len(args) - self.extra]
            own_leaves, own_tree = call_leaves(args, kwargs)
            own = len(own_leaves)
        n_own = sum(inputs[:own])
        src_avals = [a for a, n in zip(avals[:n_own], ints[:n_own]) if n is None]
        if self.lanes:
            args, kwargs, src_avals = per_example(self.lanes, args, kwargs, src_avals)
        prog, _, _, out_tree = source_program(self.fun, args, kwargs, src_avals)
        inner = _program_function(prog, static[:own], leaves[:own],
                                  own_tree if self.extra else in_tree, out_tree, self.fun)
        transformed = self.transform(inner)
        result_tree = [None]

        def derived(*dyn):
            it = iter(dyn)
            full = [(next(it) if v is None else (next(it), v)[1]) if i else x
                    for x, i, v in zip(leaves, inputs, staged)]
            call = unflatten(in_tree, full)
            out = transformed(*call[0], **call[1]) if kwargs else transformed(*call)
            out_leaves, result_tree[0] = source_frontend.result_leaves(out)
            return out_leaves

        names = iter(v.name for v in prog.inputs)
        given = (input_names(self.fun, args, own) or [""] * own) + [""] * (len(leaves) - own)
        in_names = [next(names, "") if v is None else given[k]
                    for k, (i, v) in enumerate(zip(inputs, staged)) if i]
        der = stage(derived, avals, name=f"{prog.name}_{self.name}", in_names=in_names)
        if like is None:
            like, lazy = outside_library()
        return Compiled(der, result_tree[0], target=self.target, like=like, lazy=lazy)


def outside_library():
    """(place, lazy) of an array of another library (Dask, CuPy) the code in generation reads
    from outside the function (a global, a closure cell: ``source.env``'s guard of its type),
    else (None, False): its code is that library's too (a NumPy array ``np.add.at`` adds into,
    an ``out=`` of NumPy's, would compute a Dask array, and CuPy's refuses them), read there
    at each call, never folded in as a constant (its type is a guard of the code)."""
    ctx = current_context()
    for ref, kind, expected in (() if ctx is None else ctx.outside.values()):
        if kind == "array" and not issubclass(expected[2], np.ndarray):
            return ref, hasattr(expected[2], "__dask_graph__")
    return None, False


def source_inner(fun, args, engine, what):
    """``fun`` as its source Program, callable on the original arguments, for
    the transforms that run at a point (jvp, vjp, linearize); ``None`` when
    ``engine="auto"`` falls back to tracing."""
    if isinstance(fun, SourceTransformed) and fun.fallback is None:
        # jvp(grad(f)): f's source Program, the transforms composed
        if fun.lanes:
            args = per_example(fun.lanes, args, None, None)[0]
        inner = source_inner(fun.fun, args, engine, what)
        return None if inner is None else fun.transform(inner)
    if engine == "auto" and not has_source(fun):
        return None
    leaves, in_tree = flatten(tuple(args))
    static = [_is_static(x) for x in leaves]
    try:
        prog, _, _, out_tree = source_program(fun, args)
    except (UnsupportedSyntax, ConcretizationError) as err:
        if engine != "auto":
            raise
        warn_fallback(fun, err)
        return traced_after_refusal(fun, err)
    return _program_function(prog, static, leaves, in_tree, out_tree, fun)


def generated(prog):
    """The generated function of a Program (for ``.source`` of pullbacks and
    linear functions)."""
    return compile_program(simplify(prog, copies=True))
