"""How generated code spells a literal and a ufunc row: the decisions the lowering relies on
(which arrays the code makes, and so owns; which values may be Python scalars) and the code
writers then write by (``backends/python/emit.py``). They live here, below both, so that the
lowering imports no backend.

* ``PY_SCALARS``: the types of a literal written as a Python scalar;
* ``NUMPY_NAMES`` and ``ufunc_call``: an impl that *is* a NumPy function, and the rows written
  as a call of it (``np.sin(x)``);
* ``array_recipe`` and ``allocates``: a constant array the code makes where it runs
  (``np.zeros``, ``np.full``, ``np.eye``), rather than reading a named constant.

Layer: core.
"""
from __future__ import annotations

import numpy as np

from .context import recipe_of
from .dims import Dim, has_dims
from .ident import Ident

__all__ = ["PY_SCALARS", "NUMPY_NAMES", "ufunc_call", "array_recipe", "allocates"]


PY_SCALARS = (bool, int, float, complex, Dim)


def _numpy_names():
    """NumPy function -> its shortest public name (``np.abs``, not
    ``np.absolute``): how an impl that *is* a NumPy function is spelled."""
    found = {}
    # NumPy's own namespace, not ``dir(np)``: reading every name there would import the
    # submodules NumPy loads lazily (``np.f2py``, ``np.testing``: a third of wengert's
    # start-up)
    cands = [(n, f) for n, f in vars(np).items() if isinstance(f, np.ufunc)]
    cands += [("where", np.where)]
    cands += [(f"linalg.{n}", getattr(np.linalg, n)) for n in np.linalg.__all__
              if callable(getattr(np.linalg, n)) and not isinstance(getattr(np.linalg, n), type)]
    for name, fn in sorted(cands, key=lambda c: (len(c[0]), c[0])):
        found.setdefault(Ident(fn), name)
    return found


NUMPY_NAMES = _numpy_names()


def ufunc_call(eqn):
    """Whether ``eqn`` is written as a call of the NumPy ufunc that is its
    impl (``np.sin(x)``): a row with no ``emit`` rule and no params."""
    impl = eqn.prim.impl
    return eqn.prim.emit is None and not eqn.params and isinstance(impl, np.ufunc) \
        and Ident(impl) in NUMPY_NAMES


def array_recipe(val, symbolic):
    """How the code makes the constant array ``val`` (of kind ``biuf``) where it runs:
    ``("zeros",)``; of a symbolic shape (``dims``) also ``("full", length)`` (a number
    computed from lengths), ``("eye", rows, cols, k[, scale])``, ``("arange", n)`` (``np.arange(n)``
    reshaped: each example's position in a batch), ``("fill", value)`` (one value
    repeated) or ``("broadcast", src)`` (``np.broadcast_to`` of the constant ``src``: a
    read-only view, which the code does not own); None: it is a named constant."""
    recipe = recipe_of(val) if symbolic else None
    if recipe is not None and recipe[0] == "arange":
        return recipe
    if not val.any() and not (val.dtype.kind == "f" and np.signbit(val).any()):
        return ("zeros",)
    if not symbolic:
        return None
    if recipe is not None and recipe[0] == "full" and val.dtype == np.float64:
        return recipe
    if recipe is not None and recipe[0] == "eye":
        return recipe
    first = val.flat[0]
    if not first.dtype.isnative or first.dtype == np.longdouble or np.isnan(first) \
            or not (val == first).all():
        return recipe if recipe is not None and recipe[0] == "broadcast" else None
    return ("fill", first)


def allocates(val, aval=None):
    """Whether a literal's code makes a new array where it runs (``array_recipe``), rather
    than reading a named constant: the code owns that array (``lower``)."""
    if not isinstance(val, np.ndarray) or val.ndim == 0 or val.dtype.kind not in "biuf":
        return False
    symbolic = aval is not None and has_dims(aval.shape) and None not in aval.shape
    recipe = array_recipe(val, symbolic)
    return recipe is not None and recipe[0] != "broadcast"     # a read-only view
