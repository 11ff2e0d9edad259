"""How the functions the public API returns travel (``transformed``): each
kind is registered with ``copyreg`` here, where the public transforms are
known, so that ``transformed`` needs nothing above it.

A transformed function pickles as ``(rebuild, (name, fun, args, kwargs))``
(its recipe), unless it is reachable by its own name; a custom-rule or
checkpoint decorator object pickles by name, else as its state.

A pickle names the module of what rebuilds it. Pickles made before wengert's modules moved
into their layers' folders (0.1.0 before issue 24) name ``wengert.api_pickle`` (``rebuild``),
``wengert.primitives.custom`` (``custom_jvp``, ``custom_vjp``) and ``wengert.api_checkpoint``
(``checkpoint``): ``MOVED`` maps each to the module that holds those names now, and those
three names alone are entered in ``sys.modules``, so such a pickle still loads (its functions
by reference, as always). Nothing else of the old layout is importable.

Layer: api.
"""
from __future__ import annotations

import copyreg
import sys

from . import checkpoint as checkpoint_module
from .jacobians import hessian, jacfwd, jacrev
from .sparse import SparseDerivative, sparse_hessian, sparse_jacfwd, sparse_jacrev
from .jit import jit
from .transforms import grad, jvp, value_and_grad, vjp
from .checkpoint import checkpoint
from .source import SourceTransformed
from ..control import custom as custom_module
from ..control.custom import custom_jvp, custom_vjp
from .transformed import TraceTransformed, by_name, reduce_decorated

__all__ = ["rebuild", "MOVED", "TRANSFORMS"]


# the public transforms a recipe names
TRANSFORMS = {f.__name__: f for f in (grad, value_and_grad, jacfwd, jacrev, hessian, jit, jvp,
                                      vjp, sparse_jacfwd, sparse_jacrev, sparse_hessian)}


def rebuild(name, fun, args, kwargs):
    """The transform ``name`` of the public API applied to ``fun`` again."""
    return TRANSFORMS[name](fun, *args, **kwargs)


def reduce_transformed(obj):
    return by_name(obj) or (rebuild, obj._wg_recipe)


for _cls in (TraceTransformed, SourceTransformed, SparseDerivative):
    copyreg.pickle(_cls, reduce_transformed)
for _cls in (custom_jvp, custom_vjp, checkpoint):
    copyreg.pickle(_cls, reduce_decorated)


# the modules pickles made before the move name -> where their names are now
MOVED = {"wengert.api_pickle": sys.modules[__name__],
         "wengert.primitives.custom": custom_module,
         "wengert.api_checkpoint": checkpoint_module}
for _old, _module in MOVED.items():
    sys.modules.setdefault(_old, _module)
