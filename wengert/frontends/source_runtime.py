"""What converted code calls (as ``__wg``): the control-flow constructs and
operators whose meaning depends on whether a value is traced.

Each helper runs plain Python when its deciding value is a Python value
(loop counters, shapes, flags), and records a structured equation when it is
traced. Structured constructs are staged from the user's blocks, which the
converter turned into functions of the variables they assign (``state``).
"""
from __future__ import annotations

import builtins
import functools
import inspect
import threading
import types

import numpy as np

from .. import context, dims
from ..dims import Dim
from ..errors import ConcretizationError, NonDifferentiableInputError, UnsupportedSyntax
from ..ir import Program, Var, aval_of
from ..primitives import (arith, control, index as index_mod, library, numpy_lists,
                          reduce as reduce_mod)
from ..primitives.core import TracerBase, effects_made
from ..primitives.math_twins import find_twin
from ..pytree import flatten
from .source_env import (EnvObject, call_outside, concrete, env_cell, env_global,
                         holds_outside_object, is_impure, materialize)
from .source_blocks import (Block, Undefined, assemble, join_spec, merge_pyvalues,
                            same_spec)

# what a block raises when it needs a Python value where it got a traced one
_NEEDS_CONCRETE = (ConcretizationError, NonDifferentiableInputError, IndexError, TypeError)

__all__ = ["UNDEF", "read", "not_", "and_", "or_", "none_of", "ifexp", "setitem", "getitem",
           "call", "if_stmt", "guard_stmt", "for_stmt", "while_stmt", "env_global", "env_cell",
           "is_"]


UNDEF = Undefined()


def read(locs, name):
    return locs.get(name, Undefined(name))


def named(value, name):
    """Give a recorded value the user's variable name (for printed code)."""
    from ..staging import name_value
    return name_value(value, name)


def _traced(x):
    return isinstance(x, TracerBase)


def _any_traced(xs):
    return any(isinstance(x, TracerBase) for x in flatten(list(xs))[0])


# --- boolean operators and conditional expressions ---------------------------

def is_(a, b):
    """``a is b`` of the values themselves (an outside object's proxy is not
    the object); of a value unknown here (``Undefined``), the error."""
    for x in (a, b):
        if isinstance(x, Undefined):
            x.fail()
    return concrete(a) is concrete(b)


def not_(x):
    return arith.logical_not(x) if _traced(x) else not x


def _all_evaluated(thunks, what):
    """The values of ``thunks``, each evaluated: what ``and``, ``or`` and ``x if
    c else y`` do when the deciding value is traced (they become selects).
    A call with an effect among them (a random draw) would then be made on
    every path, so it is refused."""
    before = effects_made()
    vals = [t() for t in thunks]
    if effects_made() != before and not _LOOK.depth:
        raise UnsupportedSyntax(
            f"a call with an effect (a random draw, I/O) inside {what} whose condition depends "
            "on a traced value: both sides are computed, so it would be made on every path; "
            "make the call before, or use an if statement", construct=f"effect inside {what}")
    return vals


class _Look(threading.local):
    depth = 0       # > 0 while _with_effects looks at thunks (this thread)


_LOOK = _Look()


def _with_effects(thunks):
    """Whether evaluating ``thunks`` makes a call with an effect (a random
    draw), found on a first look whose recording is thrown away. Within a
    look, a nested ``and``/``or``/``x if c else y`` evaluates all its parts
    at once (their draws are counted all the same): looking again at each
    level would cost twice per level of nesting."""
    if _LOOK.depth:
        return False
    from .source_loops import _probe
    before = effects_made()
    _LOOK.depth += 1
    try:
        _probe(lambda: [t() for t in thunks])
    finally:
        _LOOK.depth -= 1
    return effects_made() != before


def _branch(test, if_true, if_false, what):
    """``if_true() if test else if_false()`` on a traced test, as a branch:
    only the path taken is computed at run time (so its draws only)."""
    out, = if_stmt(test, lambda: (if_true(),), lambda: (if_false(),), (), ("__wg_value",),
                   what)
    return out


def and_(*thunks):
    val = True
    for k, th in enumerate(thunks):
        v = th()
        if _traced(v):
            if k + 1 < len(thunks) and _with_effects(thunks[k + 1:]):
                # ``a and b``: b (and its draws) only where a holds
                return _branch(v, lambda: and_(*thunks[k + 1:]), lambda: v, "'and'")
            rest = _all_evaluated(thunks[k + 1:], "'and'")
            out = v
            for r in rest:
                out = arith.logical_and(out, r)
            return out if val is True else arith.logical_and(val, out)
        if not v:
            return v
        val = v
    return val


def or_(*thunks):
    val = False
    for k, th in enumerate(thunks):
        v = th()
        if _traced(v):
            if k + 1 < len(thunks) and _with_effects(thunks[k + 1:]):
                return _branch(v, lambda: v, lambda: or_(*thunks[k + 1:]), "'or'")
            out = v
            for r in _all_evaluated(thunks[k + 1:], "'or'"):
                out = arith.logical_or(out, r)
            return out
        if v:
            return v
        val = v
    return val


def none_of(*flags):
    return not_(or_(*[(lambda f=f: f) for f in flags]))


def ifexp(c, a, b):
    if _traced(c) and _with_effects((a, b)):
        return _branch(c, a, b, "'x if c else y'")
    if _traced(c):
        # both sides are computed; the select keeps the derivative of the taken one
        return arith.where(c, *_all_evaluated((a, b), "'x if c else y'"))
    return a() if c else b()


# --- subscripts ------------------------------------------------------------------

def getitem(x, idx):
    if isinstance(x, numpy_lists.CONCATENATORS) and _any_traced(
            idx if isinstance(idx, tuple) else (idx,)):
        return numpy_lists.concatenator_getitem(x, idx)     # np.r_[a, b], np.c_[a, b]
    if not _traced(x) and isinstance(x, np.ndarray) and _any_traced(
            idx if isinstance(idx, tuple) else (idx,)):
        return index_mod.getitem(x, idx)       # a constant array read at a traced position
    return x[idx]


def setitem(x, idx, v):
    """``x[idx] = v`` as a new value: nothing the caller holds is written."""
    if isinstance(x, list):
        out = list(x)
        out[idx] = v
        return out
    if _traced(x) or _traced(v) or _any_traced(idx if isinstance(idx, tuple) else (idx,)):
        return index_mod.index_set(x, v, idx)
    out = np.array(x, copy=True)
    out[idx] = v
    return out


# --- calls ---------------------------------------------------------------------

def _float(x=0.0):
    if _traced(x):
        # a Python float, weakly typed: float(s) * v32 stays float32 (NEP 50)
        if aval_of(x).shape == ():
            return arith.python_scalar(x)
        return arith.convert(x, dtype=np.dtype(np.float64))
    return builtins.float(x)


def _int(x=0, *a):
    if type(x) is Dim:
        return x
    if _traced(x):
        return x if aval_of(x).dtype.kind in "iu" else arith.convert(x, dtype=np.dtype(np.int64))
    return builtins.int(x, *a)


def _extremum(builtin, pair, reduce_fn):
    def fn(*args, **kw):
        if len(args) == 1 and _traced(args[0]):
            return reduce_fn(args[0], axis=0)
        vals = list(args[0]) if len(args) == 1 else list(args)
        if not _any_traced(vals) or kw:
            return builtin(*args, **kw)
        out = vals[0]
        for v in vals[1:]:
            out = pair(out, v)
        if all(type(v) is float or aval_of(v).weak and aval_of(v).dtype.kind == "f"
               for v in vals):
            out = arith.python_scalar(out)  # max of Python floats is one of them (NEP 50)
        return out
    return fn


def _sum(iterable, start=0):
    if _traced(iterable):
        return arith.add(reduce_mod.reduce_sum(iterable, axis=0), start)
    return builtins.sum(iterable, start)


def _isinstance(x, cls):
    x = concrete(x)             # an outside object: its type is checked at each call
    cls = tuple(concrete(c) for c in cls) if isinstance(cls, tuple) else concrete(cls)
    if _traced(x):
        classes = cls if isinstance(cls, tuple) else (cls,)
        if any(c in (np.ndarray, np.generic, np.number, np.floating) for c in classes):
            return True
        if aval_of(x).shape == () and any(c in (float, int, complex) for c in classes):
            kind = aval_of(x).dtype.kind
            return (float in classes and kind == "f") or (int in classes and kind in "iub")
    return builtins.isinstance(x, cls)


def _len(x):
    if _traced(x) and aval_of(x).shape:
        return aval_of(x).shape[0]          # a symbolic length stays one (``dims``)
    return builtins.len(x)


_BUILTINS = {builtins.float: _float, builtins.int: _int, builtins.sum: _sum, builtins.len: _len,
             builtins.min: _extremum(builtins.min, arith.minimum, reduce_mod.reduce_min),
             builtins.max: _extremum(builtins.max, arith.maximum, reduce_mod.reduce_max),
             builtins.isinstance: _isinstance}

def _math(f):
    name = f.__name__
    # a twin computes it with NumPy and returns a Python float, as math does
    np_fn = find_twin(f) or getattr(np, name, None)

    def fn(*args):
        if _any_traced(args):
            if np_fn is None:
                raise UnsupportedSyntax(f"math.{name} has no NumPy counterpart for traced "
                                        "values; write it with NumPy functions")
            return np_fn(*args)
        return f(*args)
    return fn


def _is_user_function(f):
    if not isinstance(f, types.FunctionType):
        return False
    mod = getattr(f, "__module__", "") or ""
    if mod.split(".")[0] in ("numpy", "wengert", "scipy", "builtins", "math", "functools"):
        return False
    if getattr(f, "__wg_source__", None) is not None:
        return False
    from .source import is_converted, is_wengert_code
    if is_wengert_code(f) or is_converted(f):
        return False
    try:
        inspect.getsourcefile(f)
    except TypeError:
        return False
    return True


def call(f, *args, **kw):
    for a in (*args, *kw.values()):
        if isinstance(a, Undefined):
            a.fail()            # a value unknown here, given to a function: read
    if isinstance(f, EnvObject):
        return f(*args, **kw)               # a method of an object found outside
    rule = library.call_rule(f)
    if rule is not None and _any_traced([args, kw]):
        library.check_complex(f, args, kw)  # complex operands: audited wrappers only
        return rule(*args, **kw)            # np.array, scipy.stats...: the library table
    if is_impure(f):
        return call_outside(f, args, kw)    # made at every call of the generated code
    if isinstance(f, functools.partial):    # its function, with its arguments
        return call(f.func, *f.args, *args, **{**f.keywords, **kw})
    f = _with_converted_functions(f)
    if _is_user_function(f):
        from .source import convert
        try:
            return convert(f)(*args, **kw)
        except RecursionError:
            raise UnsupportedSyntax(
                f"{f.__qualname__} recurses on a traced value: the recursion depth must follow "
                "from Python values (ints, shapes); use a loop instead") from None
    if f is builtins.type and len(args) == 1:
        return type(concrete(args[0]))      # checked at each call (source_env)
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
    if _is_maker(f) and _any_traced(list(args[:1]) + [kw.get("shape"), kw.get("N")]):
        from ..errors import user_location
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
        if f is builtins.range and _any_traced(args):
            return TracedRange(*args)
        if f is builtins.range and any(type(a) is Dim for a in args):
            return DimRange(*args)
        if (f in (builtins.enumerate, builtins.zip) and _any_traced(args)
                and not any(isinstance(a, (list, tuple)) for a in args)):
            return _Sequence(f, args, kw)       # over arrays: a structured loop
        if getattr(f, "__module__", None) == "math":
            return _math(f)(*args)
        return f(*args, **kw)
    return f(*args, **kw)


def _converted_argument(a):
    """A user's function as its converted version, a partial or one of
    wengert's objects holding such functions remade around them converted
    (anything else as it is)."""
    if _is_user_function(a):
        from .source import convert
        return convert(a)
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
    from .source import is_wengert_code
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


class TracedRange:
    """``range`` with a traced bound: only iterable by a structured loop."""

    def __init__(self, *args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            (args[0], args[1], 1) if len(args) == 2 else args)
        if _traced(step):
            raise UnsupportedSyntax("range with a traced step is not supported; use a step "
                                    "that does not depend on differentiated values")
        self.start, self.stop, self.step = start, stop, step


class DimRange:
    """``range`` over a symbolic length (``range(x.shape[0])``): a structured
    loop's trip count stays that length; iterated directly, a Python range."""

    def __init__(self, *args):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (
            (args[0], args[1], 1) if len(args) == 2 else args)
        self.start, self.stop, self.step = start, stop, step
        self.range = builtins.range(int(start), int(stop), int(step))

    def __len__(self):
        return len(self.range)

    def __iter__(self):
        return iter(self.range)

    def length(self):
        """The trip count, symbolic where the range is from 0 or by 1."""
        start, stop, step = self.start, self.stop, self.step
        if step == 1:
            return stop - start if stop >= start else 0
        return len(self.range)


class _Sequence:
    """``enumerate(x)`` / ``zip(a, b)`` over traced arrays, for ``for_stmt``
    (structured), or iterated directly (a comprehension: element by element)."""

    def __init__(self, kind, args, kw):
        self.kind, self.kw = kind, kw
        if kind is builtins.enumerate:
            # enumerate(x, start): the count starts at a Python int
            self.args = args[:1]
            self.start = args[1] if len(args) > 1 else kw.get("start", 0)
            if _traced(self.start):
                raise UnsupportedSyntax("enumerate with a start that depends on differentiated "
                                        "values is not supported; add the offset in the body")
        else:
            self.args, self.start = args, 0

    def __iter__(self):
        return iter(_python_iterable(self))


# --- staging a block as a Program ---------------------------------------------------

def guard_stmt(test, true_fn, false_fn, state, names, lineno):
    """``if not exited: ...``, the statements after a ``return``, ``break`` or
    ``continue`` (the converter's guard): a variable they assign is defined on
    the path that did not exit, and read on that path only."""
    return if_stmt(test, true_fn, false_fn, state, names, lineno, guard=True)


def if_stmt(test, true_fn, false_fn, state, names, lineno, guard=False):
    if not _traced(test):
        return true_fn(*state) if test else false_fn(*state)
    where = lineno
    fns = ((false_fn, "false"), (true_fn, "true"))
    blocks = [Block(fn, [], state, names, f"if_{tag}", where=where)
              for fn, tag in fns]
    merged = merge_pyvalues(names, [b.out_info for b in blocks], where)
    # outputs: a name that is an operand in both branches; specs joined. A
    # variable still unassigned on the other path is an operand too, filled
    # with zeros there, where it is the return value (set on the paths that
    # return) or assigned by a guard: those paths never read it
    exited = [b.exits for b in blocks]
    for k, nm in enumerate(names):
        infos = [b.out_info[k] for b in blocks]
        if merged[k][0] == "undef" and any(kd == "op" for kd, _ in infos) and all(
                isinstance(v, Undefined) and v.name in (nm, "") and (
                    nm == "__wg_ret" or guard or gone)
                for (kd, v), gone in zip(infos, exited) if kd == "py"):
            merged[k] = ("op", None)
    op_names = [k for k, (kd, _) in enumerate(merged) if kd == "op"]
    specs = {}
    for k in op_names:
        s0, s1 = (b.out_info[k][1] if b.out_info[k][0] == "op" else None for b in blocks)
        s0, s1 = (s1, s1) if s0 is None else ((s0, s0) if s1 is None else (s0, s1))
        specs[k] = join_spec(s0, s1, f"{where}: {names[k]!r}")
    coerce = [specs.get(k) for k in range(len(names))]

    def settled(b):
        """The branch already gives every output as the joined spec."""
        return all(b.out_info[k][0] == "op" and same_spec(b.out_info[k][1], specs[k])
                   for k in op_names)

    # a branch is staged again only if its outputs must be cast or filled
    blocks = [b if settled(b) else Block(fn, [], state, names, f"if_{tag}", coerce, where)
              for b, (fn, tag) in zip(blocks, fns)]
    # each branch keeps only the outputs both produce as operands, and both
    # take every branch's closed-over values
    progs = []
    all_consts = blocks[0].consts + blocks[1].consts
    for k, b in enumerate(blocks):
        where_out = b.output_slices()
        outs = [o for j in op_names for o in b.prog.outputs[where_out[j]]]
        nc = len(b.consts)
        before = [Var(aval_of(c)) for c in blocks[0].consts] if k == 1 else []
        after = [Var(aval_of(c)) for c in blocks[1].consts] if k == 0 else []
        ins = before + b.prog.inputs[:nc] + after + b.prog.inputs[nc:]
        progs.append(Program(ins, b.prog.eqns, outs, b.prog.name))
    # a boolean test selects branch 0 (false) or 1 (true) directly
    res = control.cond(test, progs, *all_consts, *blocks[0].operands)
    return assemble(names, merged, specs, res)


def _python_iterable(it):
    if isinstance(it, _Sequence):
        return it.kind(*[list(a) if _traced(a) else a for a in it.args], **it.kw)
    return it


# the loops live in source_loops.py; converted code finds them here, as __wg.*
from .source_loops import for_stmt, while_stmt  # noqa: E402
