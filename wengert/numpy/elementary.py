"""NumPy's math functions on traced values (the breadth family "math"):
elementwise ufuncs with primitives of their own (``elementwise``), and
functions written as composites of primitive wrappers, so their
derivatives of every order follow: ``sinc``, ``nan_to_num``, ``fmax``,
``fmin``, ``linspace``, ``interp``, ``convolve``, ``correlate``,
``polyval``, ``trapezoid``, ``ptp``, ``average``, ``vdot``; and the
NaN-ignoring reductions of ``numpy.nan`` (``nansum``...), whose entries this
module's table includes.

Contract, as for every family of the library table: each wrapper takes the
NumPy function's exact signature; a parameter value not implemented is
refused with ``NoDerivativeRule``, never dropped. NaN entries that a
function ignores are picked with a mask (``x != x``) that is not
differentiated, so they get a zero derivative.

Layer: numpy.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import (
    arith, convolution, elementwise, index, linalg, ordering, reduce, scatter, selection, shape,
    transcendental)
from . import nan as numpy_nan
from ..core.primitive import TracerBase
from .arrayargs import keepdims_flag, as_dtype, no_out, NO_VALUE, numpy_result, refuse
from ..core.shapes import result_dtype
from ..core.errors import InPlaceUpdateError, user_location
from ..core.ir import aval_of

__all__ = ["FUNCTIONS", "UFUNCS", "convolve1d", "correlate1d"]


def _traced(x):
    return isinstance(x, TracerBase)


def _array(v):
    """A list or tuple operand as an array (stacked where it holds traced
    values), as NumPy's ``asarray`` makes it; other values unchanged."""
    if not isinstance(v, (list, tuple)):
        return v
    parts = [_array(e) for e in v]
    return index.stack(parts) if any(_traced(p) for p in parts) else np.asarray(v)


# --- elementwise: sinc, nan_to_num, fmax, fmin -------------------------
# |pi x| below this: sinc by its Taylor polynomial to degree 8, whose
# truncation error, (pi x)^10 / 11!, is below float64 rounding; above it,
# sin(pi x) / (pi x) as NumPy computes it
_SINC_TAYLOR_BELOW = 0.1


def _sinc(x):
    y = arith.mul(np.pi, x)
    small = ordering.less(ordering.abs(y), _SINC_TAYLOR_BELOW)
    # the other branch sees 1 where y is small, so neither is 0 / 0 (nor its
    # derivative): both branches' derivatives are finite everywhere
    y_safe = selection.where(small, 1.0, y)
    ratio = arith.div(transcendental.sin(y_safe), y_safe)
    y2 = arith.mul(y, y)
    # 1 - y^2/3! + y^4/5! - y^6/7! + y^8/9!, in Horner form: exact value 1
    # and derivatives 0, -pi^2/3, ... at x = 0
    poly = 1.0
    for k in (72.0, 42.0, 20.0, 6.0):
        poly = arith.sub(1.0, arith.mul(arith.div(y2, k), poly))
    return selection.where(small, poly, ratio)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not copy:
        raise InPlaceUpdateError(
            f"{user_location()}: np.nan_to_num(x, copy=False) replaces the entries of x in "
            "place, which a traced value cannot have done to it; write x = np.nan_to_num(x)")
    av = aval_of(x)
    if av.dtype.kind not in "f":
        if av.dtype.kind == "c":
            refuse("np.nan_to_num", "x", "complex values are not supported: apply it to "
                                         "x.real and x.imag")
        return x
    dt = av.dtype if not av.weak else np.dtype(np.float64)
    big = np.finfo(dt).max
    fills = [np.asarray(v, dt) for v in (nan, big if posinf is None else posinf,
                                         -big if neginf is None else neginf)]
    out = selection.where(numpy_nan.isnan(x), fills[0], x)
    out = selection.where(ordering.equal(x, np.inf), fills[1], out)
    return numpy_result(selection.where(ordering.equal(x, -np.inf), fills[2], out))


def _nan_yields(pair):
    """NumPy's fmax/fmin from maximum/minimum: where one operand is NaN the
    other wins (in ``pair``, a NaN wins), and its derivative goes to it."""
    def fn(x, y):
        isnan = numpy_nan.isnan
        return selection.where(isnan(x), y, selection.where(isnan(y), x, pair(x, y)))
    return fn


_fmax = _nan_yields(ordering.maximum)
_fmin = _nan_yields(ordering.minimum)


# --- ptp, average --------------------------------------------------------
def _ptp(a, axis=None, out=None, keepdims=NO_VALUE):
    no_out(out, "np.ptp")
    keep = keepdims_flag(keepdims)
    return arith.sub(reduce.reduce_max(a, axis=axis, keepdims=keep),
                     reduce.reduce_min(a, axis=axis, keepdims=keep))


def _average(a, axis=None, weights=None, returned=False, *, keepdims=NO_VALUE):
    keep = keepdims_flag(keepdims)
    a, weights = _array(a), _array(weights)
    av = aval_of(a)
    if weights is None:
        avg = reduce.mean(a, axis=axis, keepdims=keep)
        out_av = aval_of(avg)
        # the count each mean divided by, as a constant of the mean's dtype
        scl = out_av.dtype.type(max(int(np.prod(av.shape)), 1)
                                / max(int(np.prod(out_av.shape)), 1))
    else:
        wav = aval_of(weights)
        dt = (np.result_type(av.dtype, wav.dtype, "f8") if av.dtype.kind in "biu"
              else np.result_type(av.dtype, wav.dtype))
        w = weights
        if wav.shape != av.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            # weights of the axes averaged over (one or several, in the order given)
            axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
            axes = tuple(int(ax) % av.ndim for ax in axes)
            if wav.shape != tuple(av.shape[ax] for ax in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            order = tuple(int(i) for i in np.argsort(axes))
            if order != tuple(range(len(axes))):
                w = shape.transpose(w, order)
            w = shape.reshape(w, tuple(d if ax in axes else 1 for ax, d in enumerate(av.shape)))
        w = as_dtype(w, dt)
        scl = reduce.reduce_sum(w, axis=axis, keepdims=keep)
        avg = arith.div(reduce.reduce_sum(arith.mul(as_dtype(a, dt), w), axis=axis,
                                          keepdims=keep), scl)
    if not returned:
        return avg
    shp = aval_of(avg).shape
    if np.shape(scl) != shp:
        scl = shape.broadcast_to(scl, shp) if _traced(scl) else np.broadcast_to(scl, shp).copy()
    return avg, scl


# --- products: vdot --------------------------------------------------------
def _vdot(a, b, /):
    if aval_of(a).dtype.kind == "c":
        refuse("np.vdot", "a", "complex a is conjugated by np.vdot: write "
                               "np.sum(np.conj(a) * b) with a supported conjugate")
    return linalg.dot(shape.reshape(a, (-1,)), shape.reshape(b, (-1,)))


# --- linspace ------------------------------------------------------------
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    if device not in (None, "cpu"):
        refuse("np.linspace", "device", "drop device=")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _array(start), _array(stop)
    # NumPy's promotion of the two (a Python number weakly typed), at least float
    dt = result_dtype(aval_of(start), aval_of(stop))
    dt = dt if dt.kind in "fc" else np.dtype(np.float64)
    start, stop = as_dtype(start, dt), as_dtype(stop, dt)
    delta = arith.sub(stop, start)
    nd = aval_of(delta).ndim
    ramp = np.arange(num, dtype=dt).reshape((-1,) + (1,) * nd)
    div = num - 1 if endpoint else num
    if div > 0:
        step = arith.div(delta, float(div))
        y = arith.mul(ramp, step)
    else:
        step = arith.mul(delta, np.nan)
        y = arith.mul(ramp, delta)
    y = arith.add(y, start)
    if endpoint and num > 1:
        y = scatter.index_set(y, shape.broadcast_to(stop, aval_of(y).shape[1:]), (-1, Ellipsis))
    if axis != 0:
        y = shape.moveaxis(y, 0, operator.index(axis) % aval_of(y).ndim)
    if dtype is not None:
        if np.issubdtype(dtype, np.integer):
            y = ordering.floor(y)
        y = arith.convert(y, dtype=np.dtype(dtype))
    return (y, step) if retstep else y


# --- interp ------------------------------------------------------------
def _interp(x, xp, fp, left=None, right=None, period=None):
    # linear interpolation on the segment that holds x: differentiable in x,
    # fp, left, right, and in xp too (away from the sample points)
    x, xp, fp = _array(x), _array(xp), _array(fp)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("object too deep for desired array")
    if any(aval_of(v).dtype.kind == "c" for v in (x, fp, left, right) if v is not None):
        refuse("np.interp", "fp", "interpolate the real and imaginary parts separately")
    # NumPy interpolates in float64
    x, xp, fp = (as_dtype(v, np.float64) for v in (x, xp, fp))
    n = aval_of(xp).shape[0]
    if aval_of(fp).shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    if n == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if _traced(period):
            refuse("np.interp", "period", "pass a constant period")
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(float(period))
        left = right = None
        x = ordering.remainder(x, period)
        order = elementwise.interp_period_order(xp, period)
        # one period's points, sorted, and a copy of each end a period away
        wrap = index.concatenate(index.getitem(order, (slice(-1, None),)), order,
                                 index.getitem(order, (slice(None, 1),)))
        xp = index.getitem(ordering.remainder(xp, period), (wrap,))
        xp = arith.add(xp, np.concatenate([[-period], np.zeros(n), [period]]))
        fp = index.getitem(fp, (wrap,))
        n += 2
    if n == 1:
        inner = arith.add(index.getitem(fp, (0,)), arith.mul(x, 0.0))
    else:
        j = elementwise.interp_segment(xp, x)
        j1 = arith.add(j, 1)
        x0, f0 = index.getitem(xp, (j,)), index.getitem(fp, (j,))
        width = arith.sub(index.getitem(xp, (j1,)), x0)
        # a repeated sample point is a segment of width 0, which x reaches
        # only where another branch below takes over: slope 0 there, not
        # 0 / 0 (whose NaN a cotangent of 0 would still carry)
        flat = ordering.equal(width, 0.0)
        slope = selection.where(flat, 0.0, arith.div(arith.sub(index.getitem(fp, (j1,)), f0),
                                                 selection.where(flat, 1.0, width)))
        inner = arith.add(f0, arith.mul(slope, arith.sub(x, x0)))
        # x at the last sample point: fp[-1], as NumPy gives (the last of
        # repeated points' values)
        last = index.getitem(fp, (-1,))
        inner = selection.where(ordering.equal(x, index.getitem(xp, (-1,))), last, inner)
    lo = index.getitem(fp, (0,)) if left is None else left
    hi = index.getitem(fp, (-1,)) if right is None else right
    out = selection.where(ordering.less(x, index.getitem(xp, (0,))), lo, inner)
    out = selection.where(ordering.greater(x, index.getitem(xp, (-1,))), hi, out)
    return as_dtype(out, np.float64)


# --- convolve, correlate ---------------------------------------------------
def _as_vector(a, fname):
    a = _array(a)
    nd = aval_of(a).ndim
    if nd == 0:
        return shape.reshape(a, (1,))
    if nd != 1:
        raise ValueError(f"{fname}: object too deep for desired array")
    return a


def _windowed(a, v, mode, same_start):
    """The ``mode`` window of the convolution of ``a`` with ``v``: ``valid``
    by the primitive's own mode (the longer operand first: the convolution
    is symmetric), ``same`` as a slice of ``full``."""
    n, m = aval_of(a).shape[0], aval_of(v).shape[0]
    if mode == "valid":
        return convolution.convolve(a, v, mode="valid") if n >= m else \
            convolution.convolve(v, a, mode="valid")
    if mode not in ("full", "same"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    full = convolution.convolve(a, v)
    if mode == "full":
        return full
    return index.getitem(full, (slice(same_start, same_start + max(n, m)),))


def _vectors(a, v, fname):
    a, v = _as_vector(a, fname), _as_vector(v, fname)
    n, m = aval_of(a).shape[0], aval_of(v).shape[0]
    if not n or not m:
        raise ValueError("v cannot be empty" if not m else "a cannot be empty")
    return a, v, n, m


def convolve1d(a, v, mode="full"):
    """``np.convolve(a, v, mode)`` over the ``convolve`` primitive:
    differentiated in both operands. For other families (scipy.signal) to
    call."""
    a, v, n, m = _vectors(a, v, "convolve")
    return _windowed(a, v, mode, (min(n, m) - 1) // 2)


def correlate1d(a, v, mode="valid"):
    """``np.correlate(a, v, mode)`` for real operands: the convolution of
    ``a`` with ``v`` reversed, its ``same`` window placed as NumPy does."""
    a, v, n, m = _vectors(a, v, "correlate")
    v = index.getitem(v, (slice(None, None, -1),))
    return _windowed(a, v, mode, min(n, m) // 2 if n < m else (min(n, m) - 1) // 2)


def _no_complex(fname, *xs):
    if any(aval_of(x).dtype.kind == "c" for x in xs):
        refuse(fname, "a", "complex operands are not supported: convolve the real and "
                           "imaginary parts separately")


def _convolve(a, v, mode="full"):
    _no_complex("np.convolve", a, v)
    return convolve1d(a, v, mode)


def _correlate(a, v, mode="valid"):
    _no_complex("np.correlate", a, v)
    return correlate1d(a, v, mode)


# --- polyval, trapezoid --------------------------------------------------
def _polyval(p, x):
    if isinstance(p, np.poly1d) or isinstance(x, np.poly1d):
        refuse("np.polyval", "p", "poly1d values are not supported: pass the coefficients")
    x = _array(x)
    if aval_of(x).weak:          # NumPy's asanyarray(x): a Python number becomes float64
        x = arith.convert(x, dtype=aval_of(x).dtype)
    coeffs = list(p) if isinstance(p, (list, tuple)) else [
        index.getitem(p, (i,)) for i in range(aval_of(p).shape[0])]
    # Horner's scheme from zeros_like(x), as NumPy computes it (same dtypes)
    y = shape.zeros_like(x) if _traced(x) else np.zeros_like(x)
    for c in coeffs:
        y = arith.add(arith.mul(y, x), c)
    return numpy_result(y)


def _along(nd, axis, sl):
    return (slice(None),) * axis + (sl,) + (slice(None),) * (nd - axis - 1)


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    y, x = _array(y), _array(x)
    nd = aval_of(y).ndim
    axis = operator.index(axis) % nd
    if x is None:
        d = dx
    else:
        xnd = aval_of(x).ndim
        if xnd == 1:
            d = arith.sub(index.getitem(x, (slice(1, None),)), index.getitem(x, (slice(None, -1),)))
            shp = [1] * nd
            shp[axis] = aval_of(d).shape[0]
            d = shape.reshape(d, tuple(shp))
        else:
            d = arith.sub(index.getitem(x, _along(xnd, axis, slice(1, None))),
                          index.getitem(x, _along(xnd, axis, slice(None, -1))))
    mid = arith.add(index.getitem(y, _along(nd, axis, slice(1, None))),
                    index.getitem(y, _along(nd, axis, slice(None, -1))))
    return numpy_result(reduce.reduce_sum(arith.div(arith.mul(d, mid), 2.0), axis=axis))


FUNCTIONS = {
    np.sinc: _sinc, np.nan_to_num: _nan_to_num, np.ptp: _ptp, np.average: _average,
    np.vdot: _vdot, np.linspace: _linspace, np.interp: _interp, np.convolve: _convolve,
    np.correlate: _correlate, np.polyval: _polyval, np.trapezoid: _trapezoid,
    **numpy_nan.FUNCTIONS,
}

UFUNCS = {
    np.arcsinh: elementwise.arcsinh, np.arccosh: elementwise.arccosh,
    np.arctanh: elementwise.arctanh, np.cbrt: elementwise.cbrt,
    np.reciprocal: elementwise.reciprocal, np.log2: elementwise.log2,
    np.log10: elementwise.log10, np.exp2: elementwise.exp2,
    np.logaddexp2: elementwise.logaddexp2, np.hypot: elementwise.hypot, np.fmax: _fmax,
    np.fmin: _fmin,
}
