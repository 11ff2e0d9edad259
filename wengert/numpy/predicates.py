"""NumPy's predicates and tests on traced values: ``np.isnan``, ``np.isinf``,
``np.signbit``, ``np.trunc``, ``np.any``, ``np.all``, ``np.isclose``, ``np.allclose``,
``np.array_equal``, ``np.count_nonzero``.

Their results carry no derivative (``core.rules.constant_row``): code that inspects the
values it differentiates (``if np.any(np.isnan(w)): ...``, ``(w > 0).all()``) runs unchanged
in both engines, and the derivative treats the answers as constants, which is exact.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import aval_of
from ..primitives import ordering, predicates
from ..primitives.shape import reshape
from .arrayargs import NO_VALUE, axes_in, keepdims_flag, ndim, no_out

__all__ = ["FUNCTIONS", "UFUNCS", "COMPLEX_OK", "np_any", "np_all"]


def _test(fname, reducer):
    """``np.any`` / ``np.all`` (and the methods): over ``axis``, ``keepdims``,
    ``where=`` (the masked entries count as NumPy's identity of the test)."""
    identity = fname == "np.all"

    def fn(a, axis=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        no_out(out, fname)
        nd = ndim(a)
        axes = axes_in(axis, nd, fname)
        if aval_of(a).dtype != np.bool_:
            a = ordering.not_equal(a, 0)
        if where is not NO_VALUE and where is not True:
            a = (ordering.logical_or if identity else ordering.logical_and)(
                a, ordering.logical_not(where) if identity else where)
        r = reducer(a, axes)
        if keepdims_flag(keepdims):
            r = reshape(r, tuple(1 if i in axes else d for i, d in enumerate(aval_of(a).shape)))
        return r
    fn.__name__ = fname[3:]
    return fn


np_any = _test("np.any", predicates.reduce_any)
np_all = _test("np.all", predicates.reduce_all)


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return predicates.isclose(a, b, rtol, atol, equal_nan)


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = predicates.isclose(a, b, rtol, atol, equal_nan)
    return predicates.reduce_all(close, tuple(range(ndim(close))))


def _array_equal(a1, a2, equal_nan=False):
    if tuple(np.shape(a1)) != tuple(np.shape(a2)):
        return False            # NumPy's answer too: shapes are known when staging
    same = ordering.equal(a1, a2)
    if equal_nan:
        same = ordering.logical_or(same, ordering.logical_and(
            predicates.isnan(a1), predicates.isnan(a2)))
    return predicates.reduce_all(same, tuple(range(ndim(same))))


def _count_nonzero(a, axis=None, *, keepdims=False):
    nd = ndim(a)
    axes = axes_in(axis, nd, "np.count_nonzero")
    r = predicates.count_nonzero(a, axes)
    if keepdims:
        r = reshape(r, tuple(1 if i in axes else d for i, d in enumerate(aval_of(a).shape)))
    return r


def _fix(x, out=None):
    no_out(out, "np.fix")
    return predicates.trunc(x)


UFUNCS = {np.isnan: predicates.isnan, np.isinf: predicates.isinf,
          np.signbit: predicates.signbit, np.trunc: predicates.trunc}

FUNCTIONS = {
    np.any: np_any, np.all: np_all, np.isclose: _isclose, np.allclose: _allclose,
    np.array_equal: _array_equal, np.count_nonzero: _count_nonzero, np.fix: _fix,
}

# defined on complex values (NaN and infinity in either part; closeness by modulus)
COMPLEX_OK = {np.isnan, np.isinf, np.any, np.all, np.isclose, np.allclose, np.array_equal,
              np.count_nonzero}
