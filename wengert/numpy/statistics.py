"""NumPy's order statistics and covariances on traced values: ``np.quantile``,
``np.percentile``, ``np.median`` and their NaN-ignoring versions, ``np.cov`` and
``np.corrcoef``.

An order statistic is the sorted values gathered at positions and interpolated: the sort is
a gather (``select``), the positions are computed from the count of values (of non-NaN ones
for the ``nan*`` versions: read when the code runs, so a slice's count may differ from call
to call) and carry no derivative, the interpolation weights carry ``q``'s. At a tie the
sorted order is the stable one, so the derivative goes to the entries the sort put there
(the function has no derivative there; this is the one-sided convention of ``np.sort``).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import user_location
from ..core.ir import aval_of
from ..core.shapes import result_dtype
from ..core.primitive import TracerBase
from ..primitives import arith, index, linalg, ordering, predicates, reduce, shape, transcendental
from ..primitives.selection import where
from .arrayargs import axes_in, ndim, no_out, refuse
from .select import along_axis, sort_along

__all__ = ["FUNCTIONS"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _last_axis(a, axis):
    """``a`` with the axes ``axis`` names moved last and merged into one; the shape of the
    other axes; the axes merged."""
    nd = ndim(a)
    axes = axes_in(axis, nd, "quantile")
    rest = [d for d in range(nd) if d not in axes]
    shp = aval_of(a).shape
    a = shape.transpose(a, tuple(rest) + axes) if rest + list(axes) != list(range(nd)) else a
    n = 1
    for d in axes:
        n = n * shp[d]
    return shape.reshape(a, tuple(shp[d] for d in rest) + (n,)), tuple(shp[d] for d in rest), axes


def _order_statistic(a, q, axis, method, keepdims, nan, fname, q_given=None):
    """``np.quantile(a, q, axis, method, keepdims)`` (NaN-ignoring where ``nan``);
    ``q_given``: ``q`` as the caller gave it (a Python number is weakly typed: the result
    keeps ``a``'s float32)."""
    if method not in _METHODS:
        refuse(fname, "method", f"use one of {', '.join(map(repr, _METHODS))}")
    a = a if isinstance(a, TracerBase) else np.asarray(a)
    if aval_of(a).dtype.kind not in "fc":
        a = arith.convert(a, dtype=np.dtype(np.float64))
    q_shape = tuple(aval_of(q).shape)
    flat_a, rest, axes = _last_axis(a, axis)
    s = sort_along(flat_a, -1)
    n = aval_of(flat_a).shape[-1]
    if nan:
        count = predicates.count_nonzero(ordering.logical_not(predicates.isnan(flat_a)),
                                         (len(rest),))
    else:
        count = n
    qs = shape.reshape(q, (-1,)) if q_shape else shape.reshape(q, (1,))
    last = arith.sub(count, 1)
    last_b = shape.expand_dims(last, -1) if nan else last
    pos = arith.mul(qs, last_b)                          # rest + (Q,)
    lo_pos = ordering.floor(pos)
    hi_pos = ordering.ceil(pos)
    top = ordering.maximum(last_b, 0)
    j_lo = arith.convert(ordering.minimum(ordering.maximum(lo_pos, 0), top), dtype=np.dtype(np.intp))
    j_hi = arith.convert(ordering.minimum(ordering.maximum(hi_pos, 0), top), dtype=np.dtype(np.intp))
    j_lo, j_hi = (shape.broadcast_to(j, tuple(rest) + (aval_of(qs).shape[0],))
                  for j in (j_lo, j_hi))
    below, above = along_axis(s, j_lo, -1), along_axis(s, j_hi, -1)
    if method == "lower":
        out = below
    elif method == "higher":
        out = above
    elif method == "midpoint":
        out = arith.mul(arith.add(below, above), 0.5)
    elif method == "nearest":
        near = arith.convert(ordering.round(pos), dtype=np.dtype(np.intp))
        out = along_axis(s, shape.broadcast_to(near, aval_of(j_lo).shape), -1)
    else:
        t = arith.sub(pos, lo_pos)
        out = _lerp(below, above, t)
    if nan:
        empty = ordering.equal(shape.expand_dims(count, -1), 0)
        out = where(empty, np.nan, out)
    else:
        # NumPy's answer for a slice holding a NaN (sorted last) is NaN
        has_nan = predicates.isnan(index.getitem(s, (Ellipsis, slice(-1, None))))
        out = where(has_nan, np.nan, out)
    out = shape.moveaxis(out, -1, 0)                    # (Q,) + rest
    out = shape.reshape(out, q_shape + tuple(rest))
    if keepdims:
        kept = [1 if d in axes else n_d for d, n_d in enumerate(aval_of(a).shape)]
        out = shape.reshape(out, q_shape + tuple(kept))
    given = q if q_given is None else q_given
    dtype = result_dtype(aval_of(a), aval_of(given if not isinstance(given, (list, tuple))
                                             else np.asarray(given)))
    return out if aval_of(out).dtype == dtype else arith.convert(out, dtype=dtype)


def _lerp(a, b, t):
    """NumPy's interpolation: from the nearer end, so the result is monotone in ``t``."""
    diff = arith.sub(b, a)
    return where(ordering.greater_equal(t, 0.5), arith.sub(b, arith.mul(diff, arith.sub(1, t))),
                 arith.add(a, arith.mul(diff, t)))


def _q_operand(q, scale, fname):
    q = q if isinstance(q, TracerBase) else np.asarray(q)
    val = getattr(q, "concrete_value", q)
    if val is not None and not isinstance(val, TracerBase):
        v = np.asarray(val)
        if v.size and (np.any(v < 0) or np.any(v > scale)):
            raise ValueError(f"{user_location()}: {fname}: q must be in the range "
                             f"[0, {scale}]")
    return q if scale == 1 else arith.div(q, 100)


def _checks(out, overwrite_input, weights, fname):
    no_out(out, fname)
    if weights is not None:
        refuse(fname, "weights", "weights= needs method='inverted_cdf'; sort and "
                                 "accumulate the weights yourself")


def _quantile_fn(fname, scale, nan):
    def fn(a, q, axis=None, out=None, overwrite_input=False, method="linear",
           keepdims=np._NoValue if nan else False, *, weights=None):
        _checks(out, overwrite_input, weights, fname)
        keep = keepdims is not np._NoValue and bool(keepdims)
        return _order_statistic(a, _q_operand(q, scale, fname), axis, method, keep, nan,
                                fname, q)
    fn.__name__ = fname[3:]
    return fn


def _median_fn(fname, nan):
    def fn(a, axis=None, out=None, overwrite_input=False,
           keepdims=np._NoValue if nan else False):
        no_out(out, fname)
        keep = keepdims is not np._NoValue and bool(keepdims)
        # the mean of the two middle values (NumPy's, not the interpolation at 0.5)
        lower = _order_statistic(a, 0.5, axis, "lower", keep, nan, fname)
        upper = _order_statistic(a, 0.5, axis, "higher", keep, nan, fname)
        return arith.div(arith.add(lower, upper), 2)
    fn.__name__ = fname[3:]
    return fn


# --- cov, corrcoef -------------------------------------------------------------------
def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
         dtype=None):
    x = _as_rows(m, rowvar)
    if y is not None:
        x = index.concatenate(x, _as_rows(y, rowvar), axis=0)
    dt = np.result_type(aval_of(x).dtype, np.float64) if dtype is None else np.dtype(dtype)
    x = arith.convert(x, dtype=dt) if aval_of(x).dtype != dt else x
    n = aval_of(x).shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for weights in (fweights, aweights):
        if weights is not None:
            weights = weights if isinstance(weights, TracerBase) else np.asarray(weights, float)
            w = weights if w is None else arith.mul(w, weights)
    if w is None:
        avg = reduce.mean(x, axis=1, keepdims=True)
        norm = max(n - ddof, 0)
    else:
        w_sum = reduce.reduce_sum(w)
        avg = arith.div(reduce.reduce_sum(arith.mul(x, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            norm = w_sum
        elif aweights is None:
            norm = arith.sub(w_sum, ddof)
        else:
            aw = aweights if isinstance(aweights, TracerBase) else np.asarray(aweights, float)
            norm = arith.sub(w_sum, arith.div(arith.mul(ddof, reduce.reduce_sum(arith.mul(w, aw))),
                                              w_sum))
    dev = arith.sub(x, avg)
    weighted = dev if w is None else arith.mul(dev, w)
    c = linalg.matmul(weighted, shape.transpose(dev))
    c = arith.div(c, norm)
    return shape.squeeze(c) if aval_of(c).shape == (1, 1) else c


def _as_rows(m, rowvar):
    m = m if isinstance(m, TracerBase) else np.asarray(m)
    if ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    m = shape.reshape(m, (1, -1)) if ndim(m) < 2 else m
    return m if rowvar or aval_of(m).shape[0] == 1 and ndim(m) == 1 else shape.transpose(m)


def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = _cov(x, y, rowvar, dtype=dtype)
    if ndim(c) == 0:
        return arith.div(c, c)
    std = transcendental.sqrt(linalg.diagonal(c))
    r = arith.div(arith.div(c, shape.expand_dims(std, 1)), shape.expand_dims(std, 0))
    # NumPy clips to [-1, 1] (rounding may leave the diagonal a hair above 1)
    return ordering.clip(r, -1.0, 1.0)


FUNCTIONS = {
    np.quantile: _quantile_fn("np.quantile", 1, False),
    np.percentile: _quantile_fn("np.percentile", 100, False),
    np.nanquantile: _quantile_fn("np.nanquantile", 1, True),
    np.nanpercentile: _quantile_fn("np.nanpercentile", 100, True),
    np.median: _median_fn("np.median", False), np.nanmedian: _median_fn("np.nanmedian", True),
    np.cov: _cov, np.corrcoef: _corrcoef,
}
