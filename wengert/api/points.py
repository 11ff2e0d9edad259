"""``jvp`` and ``vjp`` with a compiling backend (``backend="numba"``).

The transforms at a point (``jvp(f, primals, tangents)``, ``vjp(f,
*primals)``) run the trace engine's rules on the source Program and make no
code of their own. With a compiling backend they are made functions with
code, generated and shared like ``grad``'s (``api.codes``: by function,
number of primals and options):

    jvp:  (*primals, *tangents) -> (out, tangent_out)      one compiled call
    vjp:  out by ``jit(f)``; pullback(ct): (*primals, ct) -> cts, compiled

A pullback's code runs the forward sweep again at each call (it holds no
residuals of the first): one primal evaluation more than the Python
backend's pullback, in exchange for compiled loops.

Layer: api.
"""
from __future__ import annotations

import numpy as np

from .jit import jit
from .prepare import source_transformed
from ..core.errors import ShapeMismatchError
from ..core.pytree import flatten, unflatten

__all__ = ["compiled_jvp", "compiled_vjp"]


def _jvp_transform(k, jvp):
    def transform(g):
        def jvp_of(*a):
            return jvp(g, tuple(a[:k]), tuple(a[k:]), engine="trace")
        return jvp_of
    return transform


def compiled_jvp(fun, primals, tangents, engine, opts, jvp):
    """(out, tangent_out) by compiled code, or None where ``engine="auto"``
    has no source to read (then the caller traces); ``jvp``: the public
    ``jvp``, whose trace engine the code is staged with."""
    k = len(primals)
    recipe = ("jvp", fun, (k,), {"engine": engine, **opts})
    st = source_transformed(fun, engine, _jvp_transform(k, jvp), recipe, (), extra=k)
    if st is None:
        return None
    return st(*primals, *tangents)


def _vjp_transform(k, has_aux, vjp):
    def transform(g):
        def pullback_of(*a):
            return vjp(g, *a[:k], has_aux=has_aux, engine="trace")[1](a[k])
        return pullback_of
    return transform


class CompiledPullback:
    """A pullback whose code is compiled: ``pullback(ct)`` -> one cotangent
    per primal; ``.source`` the code of its latest call."""

    def __init__(self, compiled, primals, out_tree):
        self._compiled, self._primals, self._out_tree = compiled, primals, out_tree

    def __call__(self, ct):
        if flatten(ct)[1] != self._out_tree:
            raise ShapeMismatchError(f"vjp pullback: cotangent structure {flatten(ct)[1]} does "
                                     f"not match the output's {self._out_tree}")
        return tuple(self._compiled(*self._primals, ct))

    @property
    def source(self):
        return self._compiled.source


def compiled_vjp(fun, primals, engine, opts, has_aux, vjp):
    """(out, pullback[, aux]) by compiled code, or None where
    ``engine="auto"`` has no source to read; ``vjp``: the public ``vjp``."""
    k = len(primals)
    recipe = ("vjp", fun, (k, has_aux), {"engine": engine, **opts})
    st = source_transformed(fun, engine, _vjp_transform(k, has_aux, vjp), recipe, (), extra=1)
    if st is None:
        return None
    out = jit(fun, engine=engine, **opts)(*primals)
    value = out[0] if has_aux else out
    # the pullback runs the forward sweep again at each call: at the primals
    # as they were now, as the Python backend's pullback holds them, not as
    # the caller may have written its arrays since
    leaves, tree = flatten(tuple(primals))
    kept = unflatten(tree, [np.array(x) if isinstance(x, np.ndarray) else x for x in leaves])
    pullback = CompiledPullback(st, kept, flatten(value)[1])
    return (value, pullback, out[1]) if has_aux else (value, pullback)
