"""The array methods that answer questions about a traced array's values: ``x.any()``,
``x.all()``, ``x.nonzero()``, ``x.searchsorted(v)``, ``x.item()``; and
``x.__array_namespace__()``. ``array_methods.ArrayMethods`` (the tracers' NumPy face)
inherits them.

Their answers carry no derivative (``core.rules.constant_row``), except ``item()``, which is
the element itself as a 0-d value (a Python float cannot carry a derivative, so a traced
element stays traced: ``float(x.item())`` of a value being differentiated is refused as
``float()`` is).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from . import predicates
from .arrayargs import NO_VALUE

__all__ = ["QueryMethods"]


class QueryMethods:
    """Methods of traced arrays that read their values (``self`` is the tracer)."""

    def any(self, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return predicates.np_any(self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return predicates.np_all(self, axis, out, keepdims, where=where)

    def __array_namespace__(self, *, api_version=None):
        # NumPy's own namespace: its functions called on a tracer come back to
        # wengert's rules through __array_function__ and __array_ufunc__
        return np
