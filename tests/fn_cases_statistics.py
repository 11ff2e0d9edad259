"""Function-table cases for the order statistics, covariances and polynomials
(``wengert/numpy/statistics.py``, ``polynomials.py``): quantiles on distinct values (no tie a
finite difference crosses), the NaN-ignoring ones with NaNs among the differentiated values,
covariances of rows, Vandermonde matrices, fits, the polynomial calculus, roots (simple and
complex), the geometric and logarithmic sequences and the running sums and products."""
from __future__ import annotations

import numpy as np

from cases import F64, Arg, away, pos, real
from fn_cases import FnCase
from fn_cases_math import with_nans
from fn_cases_numpy import distinct


# --- quantiles ----------------------------------------------------------------------
def quantile_(x):
    return np.quantile(x, 0.3)


def quantile_axis(x, q):
    return np.quantile(x, q, axis=1)


def quantile_tuple(x):
    return np.quantile(x, [0.2, 0.75], axis=(0, 2), keepdims=True)


def quantile_lower(x):
    return np.quantile(x, 0.4, axis=0, method="lower")


def quantile_nearest(x):
    return np.quantile(x, 0.62, method="nearest")


def quantile_midpoint(x):
    return np.quantile(x, 0.5, axis=1, method="midpoint")


def percentile_(x):
    return np.percentile(x, [10.0, 50.0, 90.0], axis=0)


def nanquantile_(x):
    return np.nanquantile(x, 0.35, axis=1)


def nanpercentile_(x):
    return np.nanpercentile(x, 70.0, axis=0)


def median_(x):
    return np.median(x)


def median_axis(x):
    return np.median(x, axis=0, keepdims=True)


def nanmedian_(x):
    return np.nanmedian(x, axis=1)


# --- covariances ---------------------------------------------------------------------
def cov_(x):
    return np.cov(x)


def cov_pair(x, y):
    return np.cov(x, y, ddof=0)


def cov_weights(x):
    return np.cov(x, rowvar=False, fweights=[1, 2, 1, 3], aweights=[0.5, 1.0, 2.0, 1.5])


def corrcoef_(x):
    return np.corrcoef(x)


# --- polynomials -----------------------------------------------------------------------
def vander_(x):
    return np.vander(x, 4)


def vander_increasing(x):
    return np.vander(x, increasing=True)


def polyfit_(x, y):
    return np.polyfit(x, y, 2)


def polyfit_weighted(y, w):
    return np.polyfit(np.linspace(0.0, 2.0, 6), y, 1, w=w)


def polyder_(p):
    return np.polyder(p, 2)


def polyint_(p, k):
    return np.polyint(p, 2, k=[k, 1.0])


def polymul_(a, b):
    return np.polymul(a, b)


def roots_(p):
    return np.roots(p)


def geomspace_(a, b):
    return np.geomspace(a, b, 5)


def geomspace_negative(a):
    return np.geomspace(-a, -3.0 * a, 4, endpoint=False)


def logspace_(a, b):
    return np.logspace(a, b, 5, base=2.0)


def average_tuple_axis(x, w):
    # N-d weights of the axes averaged over, in the order given (once a raw TypeError)
    return np.average(x, axis=(2, 0), weights=w)


def cumulative_sum_(x):
    return np.cumulative_sum(x, axis=1, include_initial=True)


def cumulative_prod_(x):
    return np.cumulative_prod(x)


def _complex_roots_poly():
    # (z^2 + 1.3 z + 2.1) (z - 0.7) (z + 1.9): simple roots, two of them complex
    base = np.poly([0.7, -1.9]).astype(float)
    return Arg(lambda rng, dt: np.asarray(np.polymul(base, [1.0, 1.3, 2.1]) +
                                          rng.uniform(-0.02, 0.02, 5), dt), "poly(5)")


def _increasing(n):
    return Arg(lambda rng, dt: np.asarray(np.cumsum(rng.uniform(0.5, 1.5, n)), dt),
               f"increasing({n})")


CASES = [
    FnCase("np.quantile", quantile_, (distinct((7,)),)),
    FnCase("np.quantile", quantile_axis, (distinct((3, 5)), Arg(
        lambda rng, dt: np.asarray([0.15, 0.6], dt), "q")), "axis-q"),
    FnCase("np.quantile", quantile_tuple, (distinct((2, 3, 4)),), "tuple-keepdims"),
    FnCase("np.quantile", quantile_lower, (distinct((4, 3)),), "lower"),
    FnCase("np.quantile", quantile_nearest, (distinct((6,)),), "nearest"),
    FnCase("np.quantile", quantile_midpoint, (distinct((3, 4)),), "midpoint"),
    FnCase("np.percentile", percentile_, (distinct((5, 3)),)),
    FnCase("np.nanquantile", nanquantile_, (with_nans((3, 5)),)),
    FnCase("np.nanpercentile", nanpercentile_, (with_nans((5, 3)),)),
    FnCase("np.median", median_, (distinct((6,)),)),
    FnCase("np.median", median_axis, (distinct((5, 3)),), "axis"),
    FnCase("np.nanmedian", nanmedian_, (with_nans((3, 6)),)),
    FnCase("np.cov", cov_, (real((3, 5)),), dtypes=(F64,)),
    FnCase("np.cov", cov_pair, (real((5,)), real((5,))), "pair", dtypes=(F64,)),
    FnCase("np.cov", cov_weights, (real((4, 3)),), "weights", dtypes=(F64,)),
    FnCase("np.corrcoef", corrcoef_, (real((3, 6)),), dtypes=(F64,)),
    FnCase("np.vander", vander_, (real((4,)),)),
    FnCase("np.vander", vander_increasing, (real((3,)),), "increasing"),
    FnCase("np.polyfit", polyfit_, (_increasing(6), real((6,))), dtypes=(F64,)),
    FnCase("np.polyfit", polyfit_weighted, (real((6,)), pos((6,))), "weights", dtypes=(F64,)),
    FnCase("np.polyder", polyder_, (real((5,)),)),
    FnCase("np.polyint", polyint_, (real((4,)), real(())), dtypes=(F64,)),
    FnCase("np.polymul", polymul_, (real((3,)), real((4,)))),
    # np.roots drops zero coefficients, which depends on the values: the source engine
    # refuses a traced p (ConcretizationError) and engine="auto" takes the trace engine
    FnCase("np.roots", roots_, (_complex_roots_poly(),), dtypes=(F64,), engines=("trace",)),
    FnCase("np.geomspace", geomspace_, (pos(()), pos((), 3.0, 5.0)), dtypes=(F64,)),
    FnCase("np.geomspace", geomspace_negative, (pos(()),), "negative", dtypes=(F64,)),
    FnCase("np.logspace", logspace_, (real(()), real(())), dtypes=(F64,)),
    FnCase("np.average", average_tuple_axis, (real((2, 3, 4)), pos((4, 2))), "tuple-axis"),
    FnCase("np.cumulative_sum", cumulative_sum_, (real((2, 3)),)),
    FnCase("np.cumulative_prod", cumulative_prod_, (away((4,), 0.5, 1.5),)),
]

