"""How the functions the public API returns travel (``transformed``): each
kind is registered with ``copyreg`` here, where the public transforms are
known, so that ``transformed`` needs nothing above it.

A transformed function pickles as ``(rebuild, (name, fun, args, kwargs))``
(its recipe), unless it is reachable by its own name; a custom-rule or
checkpoint decorator object pickles by name, else as its state.

Layer: api.
"""
from __future__ import annotations

import copyreg

from . import transforms as api
from .checkpoint import checkpoint
from .source import SourceTransformed
from ..control.custom import custom_jvp, custom_vjp
from .transformed import TraceTransformed, by_name, reduce_decorated

__all__ = ["rebuild"]


def rebuild(name, fun, args, kwargs):
    """The transform ``name`` of the public API applied to ``fun`` again."""
    return getattr(api, name)(fun, *args, **kwargs)


def reduce_transformed(obj):
    return by_name(obj) or (rebuild, obj._wg_recipe)


for _cls in (TraceTransformed, SourceTransformed):
    copyreg.pickle(_cls, reduce_transformed)
for _cls in (custom_jvp, custom_vjp, checkpoint):
    copyreg.pickle(_cls, reduce_decorated)
