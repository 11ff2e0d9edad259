"""NumPy's families, entered into the library table when wengert is imported.

The table (``library``) imports no family, so that the tracers' NumPy face
(``numpy_api``) can read it while a family stages user code
(``numpy_piecewise``); this module, above both, fills it.
"""
from __future__ import annotations

from . import (
    library, complex as numpy_complex, functions as numpy_functions, linalg as numpy_linalg,
    lists as numpy_lists, elementary as numpy_math, piecewise as numpy_piecewise,
    shapes as numpy_shapes, ufuncs as numpy_ufuncs)

__all__ = ["FAMILIES"]

FAMILIES = (numpy_functions, numpy_ufuncs, numpy_shapes, numpy_math, numpy_linalg,
            numpy_lists, numpy_complex, numpy_piecewise)

for _family in FAMILIES:
    library.add_family(_family)
