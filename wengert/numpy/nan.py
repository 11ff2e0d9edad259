"""NumPy's NaN-ignoring reductions on traced values (``nansum``,
``nanmean``, ``nanvar``, ``nanstd``, ``nanmax``, ``nanmin``, ``nanprod``,
``nancumsum``), part of the math family: ``numpy.elementary`` includes this
module's ``FUNCTIONS`` in its own.

Each is the plain reduction of ``where(isnan(a), fill, a)``: the NaN entries
are picked by a mask (``a != a``) that is not differentiated, so their
derivative is zero, and the fill (0 for sums, 1 for products, -inf/inf for
max/min) leaves the result as if they were not there. Counts of the other
entries (``nanmean``, ``nanvar``) are computed in ``a``'s float dtype, so
float32 stays float32. An all-NaN slice gives NaN where NumPy does.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import arith, ordering, reduce, transcendental
from ..primitives import selection
from .functions import FUNCTIONS as _NUMPY_FUNCTIONS
from .arrayargs import keepdims_flag, as_dtype, no_out, NO_VALUE, refuse
from ..core.ir import aval_of

__all__ = ["FUNCTIONS", "isnan"]


def isnan(x):
    """The NaN entries of ``x``, as a mask that is not differentiated."""
    return ordering.not_equal(x, x)


def _float_kind(x):
    return aval_of(x).dtype.kind in "fc"


def _filled(a, fill):
    """``a`` with its NaN entries replaced by ``fill`` (floats only)."""
    return selection.where(isnan(a), fill, a) if _float_kind(a) else a


def _count(a, axis, keepdims):
    """How many entries along ``axis`` are not NaN, in ``a``'s float dtype."""
    dt = aval_of(a).dtype
    ones = selection.where(isnan(a), np.asarray(0, dt), np.asarray(1, dt))
    return reduce.reduce_sum(ones, axis=axis, keepdims=keepdims)


def _nansum(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
            where=NO_VALUE):
    no_out(out, "np.nansum")
    return _NUMPY_FUNCTIONS[np.sum](_filled(a, 0.0), axis, dtype, None, keepdims, initial,
                                    where)


def _nanprod(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
             where=NO_VALUE):
    no_out(out, "np.nanprod")
    return _NUMPY_FUNCTIONS[np.prod](_filled(a, 1.0), axis, dtype, None, keepdims, initial,
                                     where)


def _nancumsum(a, axis=None, dtype=None, out=None):
    no_out(out, "np.nancumsum")
    return _NUMPY_FUNCTIONS[np.cumsum](_filled(a, 0.0), axis, dtype, None)


def _nan_args(fname, out, where, extra=()):
    no_out(out, fname)
    if where is not NO_VALUE and where is not True:
        refuse(fname, "where", "select the entries first, or set the others to NaN")
    for name, value in extra:
        if value is not NO_VALUE:
            refuse(fname, name, f"drop {name}=")


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
    _nan_args("np.nanmean", out, where)
    a = as_dtype(a, dtype)
    if not _float_kind(a):
        return _NUMPY_FUNCTIONS[np.mean](a, axis, None, None, keepdims)
    keep = keepdims_flag(keepdims)
    return arith.div(reduce.reduce_sum(_filled(a, 0.0), axis=axis, keepdims=keep),
                     _count(a, axis, keep))


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *,
            where=NO_VALUE, mean=NO_VALUE, correction=NO_VALUE):
    _nan_args("np.nanvar", out, where, (("mean", mean),))
    if correction is not NO_VALUE:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = as_dtype(a, dtype)
    if not _float_kind(a):
        a = as_dtype(a, np.float64)
    keep = keepdims_flag(keepdims)
    nan = isnan(a)
    filled = selection.where(nan, 0.0, a)
    avg = arith.div(reduce.reduce_sum(filled, axis=axis, keepdims=True), _count(a, axis, True))
    dev = selection.where(nan, 0.0, arith.sub(filled, avg))
    dof = arith.sub(_count(a, axis, keep), float(ddof))
    # no degrees of freedom left: NaN, as NumPy gives (with a warning)
    dof = selection.where(ordering.greater(dof, 0.0), dof, np.nan)
    return arith.div(reduce.reduce_sum(arith.mul(dev, dev), axis=axis, keepdims=keep), dof)


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *,
            where=NO_VALUE, mean=NO_VALUE, correction=NO_VALUE):
    var = _nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                  correction=correction)
    # derivative 0 (not inf * 0) where the variance is 0
    pos = ordering.greater(var, 0.0)
    return selection.where(pos, transcendental.sqrt(selection.where(pos, var, 1.0)), arith.mul(var, 0.0))


def _nan_extremum(fname, reducer, fill):
    def fn(a, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        _nan_args(fname, out, where, (("initial", initial),))
        if not _float_kind(a):
            return reducer(a, axis=axis, keepdims=keepdims_flag(keepdims))
        keep = keepdims_flag(keepdims)
        r = reducer(_filled(a, fill), axis=axis, keepdims=keep)
        # an all-NaN slice: NaN, as NumPy gives (with a warning)
        return selection.where(ordering.equal(_count(a, axis, keep), 0.0), np.nan, r)
    fn.__name__ = fname.replace("np.", "")
    return fn


_nanmax = _nan_extremum("np.nanmax", reduce.reduce_max, -np.inf)
_nanmin = _nan_extremum("np.nanmin", reduce.reduce_min, np.inf)


FUNCTIONS = {
    np.nansum: _nansum, np.nanprod: _nanprod, np.nancumsum: _nancumsum, np.nanmean: _nanmean,
    np.nanvar: _nanvar, np.nanstd: _nanstd, np.nanmax: _nanmax, np.nanmin: _nanmin,
}
