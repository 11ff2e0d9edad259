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
import types

from ..core.primitive import TracerBase
from .fresh import fresh_tree, held_by

__all__ = ["Transformed", "TraceTransformed", "by_name", "reduce_decorated", "settle_objects"]


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
        try:
            out = self._impl(*args, **kwargs)
        finally:
            settle_objects(self._wg_recipe[1], args, kwargs)
        # no result shares the memory of an argument (``fresh``)
        return fresh_tree(out, held_by(args, kwargs))

    def __repr__(self):
        return f"<{self._wg_recipe[0]} of {getattr(self, '__qualname__', '?')}>"


def settle_objects(fun, args, kwargs):
    """The values the user's code stored in objects while it ran on traced
    values (``self.cache = x``): their plain values, as the plain function
    stores them (the source engine's code writes those, ``env_write``).
    The objects looked at: the method's object, the arguments that are
    objects, and the objects the function names from its globals and its
    closure (``model.cache = x`` of a global ``model``)."""
    seen = []
    if isinstance(fun, types.MethodType):
        seen.append(fun.__self__)
        fun = fun.__func__
    seen += list(args) + list(kwargs.values())
    # the objects the function names, and those the functions it names name
    functions, k = [fun], 0
    while k < len(functions) and k < 32:
        if isinstance(functions[k], types.MethodType):
            seen.append(functions[k].__self__)      # vmap of grad of a method: its object
        code = getattr(functions[k], "__code__", None)
        inner = getattr(functions[k], "__wrapped__", None)
        if code is None and inner is not None and all(inner is not g for g in functions):
            functions.append(inner)     # a transformed function (vmap of grad of f): f's
        if code is not None:
            glb = getattr(functions[k], "__globals__", {})
            named = [glb[n] for n in code.co_names if n in glb]
            named += [c.cell_contents for c in (getattr(functions[k], "__closure__", None) or ())
                      if _has_contents(c)]
            for v in named:
                if isinstance(v, types.FunctionType):
                    if all(v is not g for g in functions):
                        functions.append(v)
                else:
                    seen.append(v)
        k += 1
    for obj in seen:
        held = getattr(obj, "__dict__", None)
        if not isinstance(held, dict) or isinstance(obj, (type, types.ModuleType,
                                                          types.FunctionType)):
            continue
        for name, v in list(held.items()):
            if isinstance(v, TracerBase):
                held[name] = _settled(v)


def _settled(v):
    """What a tracer of a finished transform stands for outside it: a jvp's primal, a
    batch's values (one per example along the leading axis, as ``vmap`` returns them),
    down to a value that is not a tracer or whose transform is still running."""
    while isinstance(v, TracerBase) and not v._trace.live:
        inner = getattr(v, "primal", getattr(v, "val", v))
        if inner is v:
            break
        v = inner
    return v


def _has_contents(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def reduce_decorated(obj):
    """custom_jvp, custom_vjp and checkpoint objects: by name where the
    decorated function's name finds them, else their state (the functions
    they hold, each by reference)."""
    return by_name(obj) or obj.__reduce_ex__(2)
