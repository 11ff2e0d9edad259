"""NumPy's polynomials and sequences on traced values: ``np.vander``, ``np.polyfit``,
``np.polyder``, ``np.polyint``, ``np.polymul``, ``np.roots``, ``np.geomspace``,
``np.logspace``, ``np.cumulative_sum``, ``np.cumulative_prod``.

Each is written as NumPy writes it, with NumPy's calls on the traced values (which come
back to wengert's rules through NumPy's protocols), so values agree with NumPy's to the
rounding and the derivatives are those of the steps: ``polyfit`` is a least-squares solve of
the scaled Vandermonde system, ``roots`` the eigenvalues of the companion matrix (simple
roots have a derivative; at a repeated root none exists and the eigenvalues' derivative is
not finite). ``roots`` strips zero leading and trailing coefficients, which depends on the
values: where code is generated for every call a traced ``p`` is refused
(``ConcretizationError``; ``engine="auto"`` falls back on the trace engine).

Layer: numpy.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core.errors import ConcretizationError, user_location
from ..core.ir import aval_of
from ..core.primitive import TracerBase
from ..primitives import arith, index, reduce, scan, scatter, shape
from .arrayargs import no_out, refuse
from .lists import as_array

__all__ = ["FUNCTIONS"]


def _array(x):
    """A traced value as it is; a list or tuple (of traced values too) as NumPy's array."""
    return x if isinstance(x, TracerBase) else as_array(x) if type(x) in (list, tuple) \
        else np.asarray(x)


def _float(x):
    x = _array(x)
    return x if aval_of(x).dtype.kind in "fc" else arith.convert(x, dtype=np.dtype(np.float64))


# --- vander -------------------------------------------------------------------------
def _vander(x, N=None, increasing=False):
    x = _array(x)
    if np.ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = aval_of(x).shape[0]
    N = n if N is None else operator.index(N)
    dt = np.promote_types(aval_of(x).dtype, np.int_)
    if N == 0:
        return np.zeros((n, 0), dt)
    x = x if aval_of(x).dtype == dt else arith.convert(x, dtype=dt)
    # x**k as NumPy makes it: a running product of x (the same roundings)
    ones = np.ones((n, 1), dt)
    if N == 1:
        return ones
    powers = scan.cumprod(shape.broadcast_to(shape.reshape(x, (n, 1)), (n, N - 1)), 1)
    out = index.concatenate(ones, powers, axis=1)
    return out if increasing else index.getitem(out, (slice(None), slice(None, None, -1)))


# --- polyfit --------------------------------------------------------------------------
def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    if cov:
        refuse("np.polyfit", "cov", "compute the covariance from the fit's residuals")
    order = operator.index(deg) + 1
    x, y = _float(x), _float(y)
    if order < 1:
        raise ValueError("expected deg >= 0")
    if np.ndim(x) != 1:
        raise TypeError("expected 1D vector for x")
    if np.ndim(y) < 1 or np.ndim(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    n = aval_of(x).shape[0]
    if rcond is None:
        rcond = n * np.finfo(aval_of(x).dtype).eps
    lhs, rhs = _vander(x, order), y
    if w is not None:
        w = _float(w)
        lhs = arith.mul(lhs, shape.reshape(w, (n, 1)))
        rhs = arith.mul(rhs, shape.reshape(w, (n, 1)) if np.ndim(y) == 2 else w)
    scale = np.sqrt(reduce.reduce_sum(arith.mul(lhs, lhs), axis=0))
    lhs = arith.div(lhs, scale)
    c, resids, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    c = arith.div(c, shape.reshape(scale, (-1, 1)) if np.ndim(c) == 2 else scale)
    return (c, resids, rank, s, rcond) if full else c


# --- polyder, polyint, polymul --------------------------------------------------------
def _polyder(p, m=1):
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = _array(p)
    for _ in range(m):
        n = aval_of(p).shape[0] - 1
        p = arith.mul(index.getitem(p, slice(None, -1)), np.arange(n, 0, -1))
    return p


def _polyint(p, m=1, k=None):
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    p = _array(p)
    if m == 0:
        return p
    k = np.zeros(m, float) if k is None else k
    k = as_array(k) if type(k) in (list, tuple) else _array(k)
    if np.ndim(k) == 0:
        k = shape.reshape(k, (1,))
    if aval_of(k).shape[0] == 1 and m > 1:
        k = shape.broadcast_to(k, (m,))
    elif aval_of(k).shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for j in range(m):
        q = arith.div(p, np.arange(aval_of(p).shape[0], 0, -1))
        p = index.concatenate(q, shape.reshape(arith.convert(index.getitem(k, j), dtype=aval_of(q).dtype)
                                               if aval_of(k).dtype != aval_of(q).dtype else
                                               index.getitem(k, j), (1,)))
    return p


def _polymul(a1, a2):
    return np.convolve(np.atleast_1d(_array(a1)), np.atleast_1d(_array(a2)))


# --- roots ------------------------------------------------------------------------------
def _roots(p):
    p = _array(p)
    if np.ndim(p) != 1:
        raise ValueError("Input must be a rank-1 array.")
    val = getattr(p, "concrete_value", p)
    if val is None:
        raise ConcretizationError(
            f"{user_location()}: np.roots drops zero leading and trailing coefficients, so the "
            "number of roots depends on the values of p, which are not known while code is "
            "generated for every call; use engine='trace' (engine='auto' does so by itself)")
    nz = np.flatnonzero(np.asarray(val))
    if len(nz) == 0:
        return np.array([])
    trailing = len(val) - int(nz[-1]) - 1
    p = index.getitem(p, slice(int(nz[0]), int(nz[-1]) + 1))
    n = aval_of(p).shape[0]
    if n > 1:
        first = arith.div(arith.neg(index.getitem(p, slice(1, None))), index.getitem(p, 0))
        below = np.eye(n - 2, n - 1, dtype=aval_of(first).dtype) if n > 2 else None
        companion = shape.reshape(first, (1, n - 1)) if below is None else \
            index.concatenate(shape.reshape(first, (1, n - 1)), below, axis=0)
        roots = np.linalg.eigvals(companion)
    else:
        roots = np.zeros(0, complex)
    if trailing:
        roots = index.concatenate(roots, np.zeros(trailing, aval_of(roots).dtype))
    return roots


# --- geomspace, logspace ----------------------------------------------------------------
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = np.linspace(_array(start), _array(stop), num=num, endpoint=endpoint, axis=axis)
    if np.ndim(base) > 0 or isinstance(base, TracerBase):
        base = np.expand_dims(_array(base), axis)
    out = np.power(base, y)
    return out if dtype is None else out.astype(dtype)


def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = _array(start), _array(stop)
    for v in (start, stop):
        c = getattr(v, "concrete_value", v)
        if c is not None and np.any(np.asarray(c) == 0):
            raise ValueError("Geometric sequence cannot include zero")
        if aval_of(v).dtype.kind == "c":
            refuse("np.geomspace", "start", "complex ends: use np.exp(np.linspace(np.log(a), "
                                            "np.log(b), num))")
    dt = np.result_type(*(aval_of(v).python_type(1) if aval_of(v).weak else aval_of(v).dtype
                          for v in (start, stop)), float(num))
    start, stop = arith.convert(start, dtype=dt), arith.convert(stop, dtype=dt)
    sign = np.sign(start)
    start, stop = arith.div(start, sign), arith.div(stop, sign)
    result = _logspace(np.log10(start), np.log10(stop), num=num, endpoint=endpoint, base=10.0,
                       dtype=dt)
    # the ends are start and stop exactly, as NumPy makes them
    rest = tuple(aval_of(result).shape[1:])
    if num > 0:
        result = scatter.index_set(result, shape.broadcast_to(start, rest), (0, Ellipsis))
    if num > 1 and endpoint:
        result = scatter.index_set(result, shape.broadcast_to(stop, rest), (-1, Ellipsis))
    result = arith.mul(result, sign)
    if axis != 0:
        result = shape.moveaxis(result, 0, operator.index(axis) % np.ndim(result))
    return result if dtype is None else arith.convert(result, dtype=np.dtype(dtype))


# --- cumulative_sum, cumulative_prod ----------------------------------------------------
def _cumulative(fname, running, identity):
    def fn(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        no_out(out, fname)
        x = _array(x)
        if axis is None:
            if np.ndim(x) > 1:
                raise ValueError("axis must be specified for multi-dimensional arrays.")
            axis = 0
        if np.ndim(x) == 0:
            x = shape.reshape(x, (1,))
        axis = operator.index(axis) % np.ndim(x)
        r = running(x, axis=axis, dtype=dtype)
        if include_initial:
            size = list(aval_of(r).shape)
            size[axis] = 1
            r = index.concatenate(np.full(size, identity, aval_of(r).dtype), r, axis=axis)
        return r
    fn.__name__ = fname[3:]
    return fn


FUNCTIONS = {
    np.vander: _vander, np.polyfit: _polyfit, np.polyder: _polyder, np.polyint: _polyint,
    np.polymul: _polymul, np.roots: _roots, np.geomspace: _geomspace, np.logspace: _logspace,
    np.cumulative_sum: _cumulative("np.cumulative_sum", np.cumsum, 0),
    np.cumulative_prod: _cumulative("np.cumulative_prod", np.cumprod, 1),
}
