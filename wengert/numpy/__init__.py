"""The NumPy face: what ``np.sin``, ``x + y`` and ``x.sum()`` become on traced values.

``library`` is the table from NumPy's (and SciPy's) callables to wrappers over the rows; each
family module (``functions``, ``ufuncs``, ``shapes``, ``elementary``, ``linalg``, ``lists``,
``complex``, ``piecewise``) holds its part of it and is entered here, when wengert is imported
(the table imports no family, so that a family may stage user code through tracers that read
it). ``array_methods`` gives the tracers (``core.tracer``) NumPy's array protocol: operators,
``__array_ufunc__``, ``__array_function__``, methods and attributes.

Layer: numpy.
"""
from __future__ import annotations

from . import (
    array_methods, library, complex as numpy_complex, functions as numpy_functions,
    linalg as numpy_linalg, lists as numpy_lists, elementary as numpy_math,
    editing as numpy_editing, parts as numpy_parts, piecewise as numpy_piecewise, positions as numpy_positions, predicates as numpy_predicates, shapes as numpy_shapes,
    polynomials as numpy_polynomials, statistics as numpy_statistics, writes as numpy_writes,
    ufuncs as numpy_ufuncs)

__all__ = ["FAMILIES", "array_methods"]

FAMILIES = (numpy_functions, numpy_ufuncs, numpy_shapes, numpy_math, numpy_linalg,
            numpy_lists, numpy_complex, numpy_piecewise, numpy_predicates,
            numpy_positions, numpy_statistics, numpy_parts,
            numpy_polynomials, numpy_editing, numpy_writes)

for _family in FAMILIES:
    library.add_family(_family)
