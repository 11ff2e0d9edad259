"""The staging context: what one generation of code collects, owned by it.

The source engine generates a derivative's code once per kind of arguments
(``api.source``); while it stages, three things are collected, and they
belong to that one generation (never to a module, a thread or the process,
so two generations at once, in two threads, never see each other's, and
one generation never depends on what ran before it):

* ``guards``: the comparisons of symbolic lengths (``dims.Dim``) made while
  staging (``n == 1`` when broadcasting), a set of
  ``(expr, op, expr_or_number, result)``; the code holds where every guard
  gives its recorded answer. None when the lengths are not symbolic;
* ``shaped``: the constants of symbolic shape. Staging computes a constant
  (zeros of a cotangent, the ones a sum's transpose broadcasts) as a NumPy
  array at the staged lengths; it is remembered here with the symbolic shape
  it stands for (and, for one that is not one value repeated, how to make it:
  its *recipe*), so a ``Lit`` of it takes that shape and the code generator
  writes ``np.zeros(shape)``. Keyed by the array itself (``Ident``, which
  holds it: a key is never a later object's);
* ``outside``: the checks of what the code read from outside the function
  (``frontends/source_env``), ``{key: guard}``.

``with StagingContext(symbolic) as ctx:`` makes ``ctx`` the current context
(a ``contextvars.ContextVar``: each thread starts with none). A generation
started inside another (a derivative called in a function being converted)
shares the outer one's guards and constants (its Program is replayed into
the outer one's) and passes its outside checks on to it when it ends.
Outside every generation nothing is recorded and an array has its own shape.

What code generation shares between generations, and why it may: tables
built at import (the registry, NumPy's vocabulary); caches whose entries hold
forever, keyed by what determines them (a function's converted code, by its
code object; a shape rule's answer, by plain shapes and dtypes: never while
symbolic lengths are staged, whose comparisons are guards each time); each
recipe's code (``api.codes``: shared by the derivative objects made the same
way and by the threads that call them; each entry checked at each call); the
names of generated files (a counter) and ``linecache``. The traces in progress are per thread (``primitives.core``).

Layer: core.
"""
from __future__ import annotations

import contextvars

import numpy as np

from .ident import Ident

__all__ = ["StagingContext", "current", "symbolic_now", "remember", "shape_of", "recipe_of"]

# the current generation's context (None outside every generation)
_CURRENT = contextvars.ContextVar("wengert_staging_context", default=None)


class StagingContext:
    """The state of one generation of code (see the module docstring).
    ``symbolic``: lengths are staged as ``Dim``s, so comparisons are guards
    and constants of symbolic shape are remembered."""

    __slots__ = ("symbolic", "guards", "shaped", "outside", "parent", "_token")

    def __init__(self, symbolic=False):
        self.symbolic = symbolic
        self.guards = set() if symbolic else None
        self.shaped = {}
        self.outside = {}
        self.parent = self._token = None

    def __enter__(self):
        parent = self.parent = _CURRENT.get()
        if parent is not None and parent.symbolic:
            # staged inside a generation of symbolic lengths: its Dims are
            # those lengths, its comparisons guards of the outer code
            self.symbolic, self.guards, self.shaped = True, parent.guards, parent.shaped
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc):
        _CURRENT.reset(self._token)
        if self.parent is not None:
            self.parent.outside.update(self.outside)
        return False

    # --- constants of symbolic shape ---
    def remember(self, value, shape, recipe=None):
        """Remember ``value``'s symbolic ``shape``; ``recipe`` says how the
        code makes a constant that is not one value repeated:
        ``("eye", rows, cols, k[, scale])`` is ``np.eye(rows, cols, k)`` reshaped to
        ``shape``, ``("full", fill)`` is ``np.full(shape, fill)``. The same
        array remembered again at the same shape with no recipe (a row that
        hands its operand back: ``dup``) keeps the recipe it had."""
        key = Ident(value)
        if recipe is None:
            known = self.shaped.get(key)
            if known is not None and known[0] == shape:
                return
        self.shaped[key] = (shape, recipe)

    def shape_of(self, value):
        entry = self.shaped.get(Ident(value))
        return None if entry is None else entry[0]

    def recipe_of(self, value):
        entry = self.shaped.get(Ident(value))
        return None if entry is None else entry[1]


# ``current()``: the current generation's context, or None (the variable's
# own method: asked at every call of generated code, so no Python frame)
current = _CURRENT.get


def symbolic_now():
    """The current context when it stages symbolic lengths, else None."""
    ctx = _CURRENT.get()
    return ctx if ctx is not None and ctx.symbolic else None


def remember(value, shape, recipe=None):
    """Remember an array's symbolic shape in the current context (when it
    stages symbolic lengths; anything else is left alone)."""
    ctx = _CURRENT.get()
    if ctx is not None and ctx.symbolic and isinstance(value, np.ndarray):
        ctx.remember(value, shape, recipe)


def shape_of(value):
    """The symbolic shape the current context remembers for ``value``, or None."""
    ctx = _CURRENT.get()
    return None if ctx is None or not ctx.shaped else ctx.shape_of(value)


def recipe_of(value):
    """How the code makes ``value``, a constant of symbolic shape, or None."""
    ctx = _CURRENT.get()
    return None if ctx is None or not ctx.shaped else ctx.recipe_of(value)
