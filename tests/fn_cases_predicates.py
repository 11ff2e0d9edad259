"""Function-table cases for the values that carry no derivative and the positions and bins
(``wengert/numpy/predicates.py``, ``positions.py``): predicates and tests (NONDIFF: the
values, and a zero tangent), ``np.trunc``/``np.fix`` (ZERO_DERIV, away from the jumps), the
positions (NONDIFF), and the values picked at positions: ``np.unique``'s values, the
histogram's edges and weighted counts, ``np.bincount``'s weighted counts (DIFF)."""
from __future__ import annotations

import numpy as np

from cases import NONDIFF, ZERO_DERIV, Arg, frac, real
from fn_cases import FnCase
from fn_cases_numpy import distinct


def with_nonfinite(shape):
    """Differentiated values with a NaN, an inf and a -inf."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
        return np.asarray(x, dt)
    return Arg(draw, f"nonfinite{shape}")


def grid_values(shape):
    """Differentiated values in {-1, 0, 1} (ties, zeros): counts and tests see both
    answers; nothing differentiable depends on them."""
    return Arg(lambda rng, dt: np.asarray(rng.integers(-1, 2, shape), dt), f"grid{shape}")


def spaced(n, lo=-2.0, hi=2.0):
    """Distinct values away from 0 and from the bins of the cases below (multiples of 0.5
    plus 0.1 to 0.4): no finite difference crosses a bin edge."""
    def draw(rng, dt):
        k = rng.permutation(np.arange(n)) - n // 2
        return np.asarray(0.5 * k + rng.uniform(0.1, 0.4, n), dt)
    return Arg(draw, f"spaced({n})")


def counts(shape, hi):
    def draw(rng, dt):
        x = rng.integers(0, hi, shape)
        x.reshape(-1)[0] = hi - 1
        return x
    return Arg(draw, f"counts<{hi}{shape}", diff=False)


# --- predicates and tests ------------------------------------------------------------
def isnan_(x):
    return np.isnan(x)


def isinf_(x):
    return np.isinf(x)


def signbit_(x):
    return np.signbit(x)


def trunc_(x):
    return np.trunc(x)


def fix_(x):
    return np.fix(x)


def any_(x):
    return np.any(x, axis=1)


def any_method(x):
    return (x > 1.5).any()


def all_(x):
    return np.all(x, axis=0, keepdims=True)


def all_method(x):
    return (x > -2.5).all()


def isclose_(x, y):
    return np.isclose(x, y, atol=0.5)


def allclose_(x, y):
    return np.allclose(x, y + 1e-12)


def array_equal_(x):
    return np.array_equal(x, np.copy(x), equal_nan=True)


def count_nonzero_(x):
    return np.count_nonzero(x)


def count_nonzero_axis(x):
    return np.count_nonzero(x > 0, axis=0)


# --- positions --------------------------------------------------------------------
def nonzero_(x):
    return np.nonzero(x)


def flatnonzero_(x):
    return np.flatnonzero(x)


def argwhere_(x):
    return np.argwhere(x)


def searchsorted_(a, v):
    return np.searchsorted(np.sort(a), v)


def searchsorted_right(a, v):
    return np.searchsorted(a, v, side="right", sorter=np.argsort(a))


def digitize_(x):
    return np.digitize(x, [-1.0, 0.0, 1.0])


def bincount_(x):
    return np.bincount(x, minlength=6)


# --- values picked at positions ---------------------------------------------------
def unique_(x):
    return np.unique(x)


def unique_forms(x):
    return np.unique(x, return_index=True, return_inverse=True, return_counts=True)


def unique_picked(x):
    values, first = np.unique(x, return_index=True)
    return values * x[first]


def unique_values_(x):
    return np.unique_values(x)


# (NumPy's named tuples are leaves of wengert's pytrees: the cases return their items)
def unique_counts_(x):
    res = np.unique_counts(x)
    return res.values, res.counts


def unique_inverse_(x):
    values, inverse = np.unique_inverse(x)
    return values, inverse


def unique_all_(x):
    res = np.unique_all(x)
    return res.values, res.indices, res.inverse_indices, res.counts


def histogram_(x):
    return np.histogram(x, bins=4)


def histogram_range(x, w):
    return np.histogram(x, bins=3, range=(-2.0, 2.0), weights=w)


def histogram_density(x):
    return np.histogram(x, bins=5, density=True)


def histogram_edges(x, e):
    return np.histogram(x, bins=e)


def bincount_weights(w, k):
    return np.bincount(k, weights=w)


X6 = spaced(6)

CASES = [
    FnCase("np.isnan", isnan_, (with_nonfinite((2, 3)),), mode=NONDIFF),
    FnCase("np.isinf", isinf_, (with_nonfinite((2, 3)),), mode=NONDIFF),
    FnCase("np.signbit", signbit_, (real((2, 3)),), mode=NONDIFF),
    FnCase("np.trunc", trunc_, (frac((2, 3), 0.2, 0.8),), mode=ZERO_DERIV),
    FnCase("np.fix", fix_, (frac((4,), 0.2, 0.8),), mode=ZERO_DERIV),
    FnCase("np.any", any_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.any", any_method, (distinct((3, 4)),), "method", mode=NONDIFF),
    FnCase("np.all", all_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.all", all_method, (distinct((3, 4)),), "method", mode=NONDIFF),
    FnCase("np.isclose", isclose_, (real((3,)), real((2, 3))), mode=NONDIFF),
    FnCase("np.allclose", allclose_, (real((2, 3)), real((2, 3))), mode=NONDIFF),
    FnCase("np.array_equal", array_equal_, (with_nonfinite((2, 3)),), mode=NONDIFF),
    FnCase("np.count_nonzero", count_nonzero_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.count_nonzero", count_nonzero_axis, (grid_values((3, 4)),), "axis",
           mode=NONDIFF),
    FnCase("np.nonzero", nonzero_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.flatnonzero", flatnonzero_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.argwhere", argwhere_, (grid_values((3, 4)),), mode=NONDIFF),
    FnCase("np.searchsorted", searchsorted_, (distinct((6,)), real((2, 2))), mode=NONDIFF),
    FnCase("np.searchsorted", searchsorted_right, (distinct((6,)), real((3,))), "sorter",
           mode=NONDIFF),
    FnCase("np.digitize", digitize_, (spaced(6),), mode=NONDIFF),
    FnCase("np.bincount", bincount_, (counts((7,), 4),), mode=NONDIFF),
    FnCase("np.bincount", bincount_weights, (real((7,)), counts((7,), 4)), "weights"),
    FnCase("np.unique", unique_, (X6,)),
    FnCase("np.unique", unique_forms, (X6,), "forms"),
    FnCase("np.unique", unique_picked, (X6,), "picked"),
    FnCase("np.unique_values", unique_values_, (X6,)),
    FnCase("np.unique_counts", unique_counts_, (X6,)),
    FnCase("np.unique_inverse", unique_inverse_, (X6,)),
    FnCase("np.unique_all", unique_all_, (X6,)),
    FnCase("np.histogram", histogram_, (X6,)),
    FnCase("np.histogram", histogram_range, (X6, real((6,))), "weights"),
    FnCase("np.histogram", histogram_density, (X6,), "density"),
    FnCase("np.histogram", histogram_edges, (X6, Arg(lambda r, dt: np.asarray(
        [-2.05, -0.55, 0.95, 2.45], dt), "edges")), "edges"),
]

