"""The source frontend: a Python function's source -> a Program with
structured control flow.

    inspect.getsource + ast  ->  checked and rewritten AST  ->  staged Program

The rewrite (the *converter*) keeps the user's code and names, and only
replaces the constructs whose meaning depends on a traced value by calls to
``source.runtime`` (imported as ``__wg``):

* ``if c: ... else: ...``  -> ``__wg.if_stmt(c, true_fn, false_fn, state)``
* ``for t in it: ...``     -> ``__wg.for_stmt(it, body_fn, state)``
* ``while c: ...``         -> ``__wg.while_stmt(cond_fn, body_fn, state)``
* ``a and b``, ``a or b``, ``not a``, ``a if c else b``, chained comparisons;
* ``x[i] = v``, ``x[i] += v`` -> functional updates (the caller's arrays are
  never written);
* every call ``f(...)`` -> ``__wg.call(f, ...)``: the user's own functions are
  converted recursively (each once), ``math.*`` maps to NumPy on traced values,
  ``float``/``int``/``min``/``max``/``abs``/``sum`` are given array meanings.

``state`` is the tuple of variables the construct assigns; the helper runs
the construct as plain Python when nothing it depends on is traced (loop
counters, shapes, flags stay Python values), and as a ``cond`` / ``for_loop`` /
``while_loop`` equation otherwise. ``return`` inside a block, ``break`` and
``continue`` become flags that guard the statements after them.

The converted function is then *staged*: run once on symbolic values (their
shapes and dtypes known) to record the Program. Anything outside the
accepted language raises ``UnsupportedSyntax`` with file, line, column, the
construct and what to do instead.

Layer: frontends.
"""
from __future__ import annotations

import types

import numpy as _np

from ...core.errors import UnsupportedSyntax
from ...core.primitive import TracerBase as _TracerBase
from . import runtime as source_runtime
from .env import materialize, outside_value, static_object
from ...core.ir import aval_of
from ...core.atoms import is_duck_array
from ...core.pytree import flatten, unflatten, with_constants
from ...core.inplace import is_scalar
from ...core.staging import locating, stage
from ..trace import input_names
from .converted import convert_with, is_converted, is_wengert_code
from .blocks import Undefined
from .written import enter as enter_body, writes

__all__ = ["convert", "make_program", "is_wengert_code", "is_converted", "UnsupportedSyntax",
           "result_leaves"]


def convert(fn):
    """The converted version of a plain Python function, calling
    ``source.runtime`` (``source.converted.convert_with``)."""
    return convert_with(fn, source_runtime)


def is_static(leaf):
    """Python ints, bools, strings and other non-array values are part of the
    program (its specialisation); floats and arrays are its inputs."""
    t = type(leaf)
    if t is float or t is _np.ndarray or t is _np.float64:
        return False
    if isinstance(leaf, _TracerBase):
        return False
    if isinstance(leaf, (bool, int)):
        return True
    return not (isinstance(leaf, (float, complex, _np.ndarray, _np.generic))
                or is_duck_array(leaf))


def _is_value(leaf):
    """A leaf the code computes: an array, a number, a traced value."""
    return (isinstance(leaf, (_TracerBase, _np.ndarray, _np.generic, bool, int, float, complex))
            or is_duck_array(leaf))


def result_leaves(out):
    """(the leaves the code computes, the tree of ``out``) of a function's
    result: lists and dicts found outside are read as their items (an array
    at each call); a string, a function or another Python object among them
    is part of the code, returned as it is (a constant of the tree,
    ``pytree.with_constants``); an object found outside is checked at each
    call to be the same one."""
    leaves, tree = flatten(materialize(out))
    constants = {}
    for k, leaf in enumerate(leaves):
        if isinstance(leaf, Undefined):         # returned where it may be unassigned
            leaf.fail()
        if not _is_value(leaf):
            constants[k] = outside_value(leaf)
    if not constants:
        return leaves, tree
    return ([x for k, x in enumerate(leaves) if k not in constants],
            with_constants(tree, constants))


def make_program(fn, args, name=None, avals=None, kwargs=None):
    """Convert ``fn`` and stage it at the shapes and dtypes of ``args`` and
    ``kwargs`` (or at ``avals``, one per array and float leaf: symbolic
    lengths); the Program's inputs are the array and float leaves of ``args``,
    then of ``kwargs`` (by sorted key)."""
    leaves, in_tree = flatten((tuple(args), kwargs) if kwargs else tuple(args))
    static = [is_static(x) for x in leaves]
    if avals is None:
        avals = [aval_of(x) for x, s in zip(leaves, static) if not s]
    out_tree = [None]
    dynamic = [x for x, s in zip(leaves, static) if not s]

    # an object argument is the same object at every call (the cache is keyed
    # by it), but what the code reads from it is read at each call
    statics = [static_object(x, f"arg{k}") if s else None
               for k, (x, s) in enumerate(zip(leaves, static))]
    # a bound method (``model.loss``): its function, converted, given the
    # object as a static argument (its attributes are read at each call)
    bound = ((static_object(fn.__self__, "self"),) if isinstance(fn, types.MethodType)
             else ())

    def flat(*xs):
        enter_body()
        # an input is a scalar where the caller passed a number (a Python float,
        # an np.float64), a 0-d array where it passed one: ``y = x; x += 1``
        # writes into the caller's 0-d array, which y sees (the code is reused
        # only for arguments of the same kind: ``api.source._signature``)
        for x, leaf in zip(xs, dynamic):
            x.scalar = is_scalar(leaf)
        it = iter(xs)
        full = [st if s else next(it) for st, s in zip(statics, static)]
        # while staging: its defaults are read here
        converted = convert(fn.__func__ if bound else fn)
        call = unflatten(in_tree, full)
        out = (converted(*bound, *call[0], **call[1]) if kwargs
               else converted(*bound, *call))
        out_leaves, out_tree[0] = result_leaves(out)
        return out_leaves

    names = input_names(fn, args, len(leaves))
    names = [h for h, s in zip(names, static) if not s] if names else None
    # each equation keeps the user's line that made it; what the function writes
    # outside, as its later reads see it
    with locating(), writes():
        prog = stage(flat, avals, name=name or getattr(fn, "__name__", "f"), in_names=names,
                     keep_custom=True)
    return prog, static, in_tree, out_tree[0]
