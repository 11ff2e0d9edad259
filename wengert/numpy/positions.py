"""NumPy's positions, counts and bins on traced values: ``np.nonzero``, ``np.flatnonzero``,
``np.argwhere``, ``np.where(cond)``, ``np.unique`` (its ``return_*`` forms and
``np.unique_values``/``_counts``/``_inverse``/``_all``), ``np.searchsorted``,
``np.digitize``, ``np.bincount`` and ``np.histogram``.

Positions and counts carry no derivative (``core.rules.constant_row``); the values picked
at them do: ``np.unique(x)`` is ``x`` gathered at each distinct value's first occurrence, a
bin's weight the sum of its weights, a histogram's edges the line from ``min(a)`` to
``max(a)`` when no range is given. Where a result's length depends on the values
(``np.nonzero``, ``np.unique``, ``np.bincount``) the source engine's code reads it when it
runs (a ``None`` length, ``primitives.runtime_shapes``).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import user_location
from ..core.ir import aval_of
from ..core.primitive import TracerBase
from ..primitives import arith, index, ordering, positions, reduce, shape
from ..primitives.selection import where
from .arrayargs import flat, named_result, ndim, refuse, static
from .lists import as_array

__all__ = ["FUNCTIONS", "COMPLEX_OK", "np_nonzero"]


def np_nonzero(a):
    if ndim(a) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    return index.nonzero(a)


def _flatnonzero(a):
    return index.nonzero(flat(a))[0]


def _argwhere(a):
    if ndim(a) == 0:            # NumPy's (k, 0) of a 0-d array: as of its one-entry version
        a = shape.reshape(a, (1,))
        return index.getitem(_argwhere(a), (slice(None), slice(0, 0)))
    return shape.transpose(index.stack(list(index.nonzero(a)), axis=0))


# --- unique ----------------------------------------------------------------------
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    ar = as_array(ar) if type(ar) in (list, tuple) else ar
    nd = ndim(ar)
    if axis is not None:
        axis = int(axis) % max(nd, 1)
    first, inverse, counts = positions.unique_positions(ar, axis, equal_nan, sorted)
    if axis is None:
        values = index.getitem(flat(ar), first)
        if nd:
            inverse = shape.reshape(inverse, tuple(aval_of(ar).shape))
    else:
        values = index.getitem(ar, (slice(None),) * axis + (first,))
    extra = [r for r, want in ((first, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (values, *extra) if extra else values


def _unique_values(x):
    return _unique(x)


UniqueCountsResult = named_result("UniqueCountsResult", ("values", "counts"))
UniqueInverseResult = named_result("UniqueInverseResult", ("values", "inverse_indices"))
UniqueAllResult = named_result("UniqueAllResult",
                               ("values", "indices", "inverse_indices", "counts"))


def _unique_counts(x):
    return UniqueCountsResult(_unique(x, return_counts=True))


def _unique_inverse(x):
    return UniqueInverseResult(_unique(x, return_inverse=True))


def _unique_all(x):
    return UniqueAllResult(_unique(x, True, True, True))


# --- searchsorted, digitize ------------------------------------------------------
def _searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        a = index.getitem(a, sorter)
    return positions.searchsorted(a, v, side)


def _digitize(x, bins, right=False):
    return positions.digitize(x, bins, right)


# --- bincount ----------------------------------------------------------------------
def _bincount(x, /, weights=None, minlength=0):
    if aval_of(x).dtype.kind not in "iub":
        raise TypeError(f"{user_location()}: np.bincount: x must hold non-negative "
                        f"integers, got {aval_of(x).dtype}")
    minlength = static(minlength, "minlength", "np.bincount")
    if weights is None:
        return positions.bincount(x, minlength)
    if aval_of(weights).dtype.kind == "c":
        raise TypeError("Cannot cast array data from dtype('complex128') to dtype('float64')")
    return positions.bincount_weights(as_array(weights) if type(weights) in (list, tuple)
                                      else weights, x, minlength)


# --- histogram ---------------------------------------------------------------------
def _histogram(a, bins=10, range=None, density=None, weights=None):
    a = flat(a)
    edges = _edges(a, bins, range)
    n = int(aval_of(edges).shape[0]) - 1
    which = _bin_of(a, edges, n)
    if weights is None:
        hist = positions.bincount(which, n + 1, length=n + 1)
    else:
        w = flat(as_array(weights) if type(weights) in (list, tuple) else weights)
        w_dtype = aval_of(w).dtype
        if w_dtype.kind == "c":
            refuse("np.histogram", "weights", "histogram the real and imaginary parts apart")
        hist = positions.bincount_weights(w if w_dtype.kind == "f" else
                                          arith.convert(w, dtype=np.dtype(np.float64)),
                                          which, n + 1, length=n + 1)
        if w_dtype != np.float64:
            hist = arith.convert(hist, dtype=w_dtype)       # NumPy sums in the weights' dtype
    hist = index.getitem(hist, slice(0, n))                 # bin n: the samples outside
    if density:
        widths = arith.sub(index.getitem(edges, slice(1, None)),
                           index.getitem(edges, slice(None, -1)))
        f64 = np.dtype(np.float64)
        hist = arith.div(arith.div(hist, arith.convert(widths, dtype=f64)),
                         reduce.reduce_sum(hist))
        hist = hist if aval_of(hist).dtype == f64 else arith.convert(hist, dtype=f64)
    return hist, edges


def _edges(a, bins, range):
    """NumPy's bin edges: given (an array: differentiable where traced), or ``bins``
    equal bins over ``range`` (by default from ``min(a)`` to ``max(a)``, which the edges
    then follow), widened by 0.5 each way where the range is one point; computed as
    ``np.linspace`` computes them (the last edge is the range's end exactly)."""
    if isinstance(bins, str):
        refuse("np.histogram", "bins", "give the number of bins or the edges (a bin-width "
                                      "rule is computed from the values)")
    if np.ndim(bins) == 1:
        return bins if isinstance(bins, TracerBase) else np.asarray(bins)
    count = int(static(bins, "bins", "np.histogram"))
    dtype = aval_of(a).dtype if aval_of(a).dtype.kind == "f" else np.dtype(np.float64)
    if range is not None and not any(isinstance(r, TracerBase) for r in range):
        return np.histogram_bin_edges(np.zeros(0, dtype), count, range)
    lo, hi = range if range is not None else (reduce.reduce_min(a), reduce.reduce_max(a))
    same = ordering.equal(lo, hi)
    lo = where(same, arith.sub(lo, 0.5), lo)
    hi = where(same, arith.add(hi, 0.5), hi)
    step = arith.div(arith.sub(hi, lo), count)
    inner = arith.add(arith.mul(np.arange(count, dtype=dtype), step), lo)
    return index.concatenate(inner, shape.reshape(arith.convert(hi, dtype=dtype), (1,)))


def _bin_of(a, edges, n):
    """Each sample's bin (0 to n - 1; n for a sample outside the edges): NumPy's bins are
    half open, the last one closed."""
    which = arith.sub(positions.searchsorted(edges, a, "right"), 1)
    last = ordering.equal(a, index.getitem(edges, -1))
    which = where(last, n - 1, which)
    outside = ordering.logical_or(ordering.less(which, 0), ordering.greater(which, n - 1))
    return where(outside, n, which)


FUNCTIONS = {
    np.nonzero: np_nonzero, np.flatnonzero: _flatnonzero, np.argwhere: _argwhere,
    np.unique: _unique, np.unique_values: _unique_values, np.unique_counts: _unique_counts,
    np.unique_inverse: _unique_inverse, np.unique_all: _unique_all,
    np.searchsorted: _searchsorted, np.digitize: _digitize, np.bincount: _bincount,
    np.histogram: _histogram,
}

COMPLEX_OK = {np.nonzero, np.flatnonzero, np.argwhere}
