"""The array methods that answer questions about a traced array's values: ``x.any()``,
``x.all()``, ``x.nonzero()``, ``x.searchsorted(v)``, ``x.argmax()``, ``x.argmin()``,
``x.argsort()``, ``x.item()``; and ``x.__array_namespace__()``. ``array_methods.ArrayMethods`` (the tracers' NumPy face)
inherits them.

Their answers carry no derivative (``core.rules.constant_row``), except ``item()``, which is
the element itself as a 0-d value (a Python float cannot carry a derivative, so a traced
element stays traced: ``float(x.item())`` of a value being differentiated is refused as
``float()`` is).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from . import functions, positions, predicates
from .select import DESCENDING
from ..primitives.casts import python_scalar
from ..primitives.index import getitem
from ..primitives.shape import reshape
from .arrayargs import NO_VALUE

__all__ = ["QueryMethods"]


class QueryMethods:
    """Methods of traced arrays that read their values (``self`` is the tracer)."""

    def any(self, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return predicates.np_any(self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return predicates.np_all(self, axis, out, keepdims, where=where)

    def nonzero(self):
        return positions.np_nonzero(self)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side, sorter)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return functions.np_argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return functions.np_argmin(self, axis, out, keepdims=keepdims)

    if DESCENDING:              # ndarray's parameters in NumPy >= 2.5
        def argsort(self, axis=-1, kind=None, order=None, *, stable=None, descending=None):
            return np.argsort(self, axis, kind, order, stable=stable,
                              descending=NO_VALUE if descending is None else descending)
    else:
        def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
            return np.argsort(self, axis, kind, order, stable=stable)

    def item(self, *args):
        """The element as a Python number (weakly typed, as NumPy's ``item`` gives one),
        still traced: ``x[0].item() * y`` keeps its derivative."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        size = self.aval.size if None not in self.aval.shape else None
        if not args:
            if size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            element = reshape(self, ())
        elif len(args) == 1:
            element = getitem(reshape(self, (-1,)), args[0])
        else:
            element = getitem(self, tuple(args))
        kind = self.aval.dtype.kind
        if kind == "c":
            return python_scalar(element, np.complex128)
        return python_scalar(element, np.float64 if kind == "f" else
                             np.bool_ if kind == "b" else np.int64)

    def __array_namespace__(self, *, api_version=None):
        # NumPy's own namespace: its functions called on a tracer come back to
        # wengert's rules through __array_function__ and __array_ufunc__
        return np
