"""The function objects that transforms return, and how they travel.

``wg.grad(f)`` (and ``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian``, of
either engine) is a ``Transformed``: callable, named like ``f``, and pickled
as its *recipe*: the public transform's name, ``f`` and the options::

    pickle.dumps(wg.grad(f, argnums=1))  ~  (rebuild, ("grad", f, (1,), {...}))

(``api.pickling`` registers these reductions: it knows the public transforms).

``f`` goes by reference, the way pickle saves any function, so the receiving
process imports it. Unpickling applies the transform again there: generated
code, caches and staged Programs never travel; the receiver makes its own. A
nested transform (``grad(grad(f))``) is a recipe holding a recipe.

A transformed function reachable under its own name (a module-level def
decorated with ``@wg.grad``, or with one of wengert's decorators
``custom_jvp``, ``custom_vjp``, ``checkpoint``) is pickled by that name
instead: its ``f`` is not reachable by name, the decorated object is.

Layer: api.
"""
from __future__ import annotations

import functools
import sys

__all__ = ["Transformed", "TraceTransformed", "by_name", "reduce_decorated"]


def by_name(obj):
    """``obj``'s qualified name when its module holds it under that name
    (pickle then saves a reference), else None."""
    qualname = getattr(obj, "__qualname__", None)
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    if not qualname or module is None or "<locals>" in qualname:
        return None
    found = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return qualname if found is obj else None


class Transformed:
    """Base of the functions transforms return. ``_wg_recipe`` is
    ``(transform name, fun, positional options, keyword options)``."""

    def _wrap(self, fun, recipe):
        # the name, docstring and __wrapped__ of fun, but not its __dict__: that
        # would bring another object's state (a custom_jvp's ``fun``, an inner
        # transform's caches) into this one
        functools.update_wrapper(self, fun, updated=())
        # a function that replays a Program may be run twice (grad's forward mode)
        self.wg_replay = getattr(fun, "wg_replay", False)
        self._wg_recipe = recipe


class TraceTransformed(Transformed):
    """A trace-engine transform of ``fun``: calls ``impl``."""

    def __init__(self, impl, fun, recipe):
        self._wrap(fun, recipe)
        self._impl = impl

    def __call__(self, *args, **kwargs):
        return self._impl(*args, **kwargs)

    def __repr__(self):
        return f"<{self._wg_recipe[0]} of {getattr(self, '__qualname__', '?')}>"


def reduce_decorated(obj):
    """custom_jvp, custom_vjp and checkpoint objects: by name where the
    decorated function's name finds them, else their state (the functions
    they hold, each by reference)."""
    return by_name(obj) or obj.__reduce_ex__(2)
