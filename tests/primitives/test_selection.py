"""The forward rules of the selection-like rows (``reduce_max``/``reduce_min``
and what is built on them — ``max``, ``min``, ``nanmax``, ``ptp``,
``norm(ord=inf)`` —, ``maximum``/``minimum``/``fmax``/``fmin``, ``where``,
``select``, ``clip``, ``sort``, ``partition``, indexing, masks, ``take``,
``take_along_axis``, ``compress``, ``tril``/``triu``/``diag``, ``median``,
``percentile``, ``choose``, ``delete``, ``roll``, ``flip``, the triangle
``solve_triangular`` reads) select the tangent of the place they read: a
tangent that is inf or nan at a place the output does not read contributes
nothing, in both engines, whatever ``wg.nan_safe`` says.

Once: ``wg.jvp(lambda x: np.max(np.sqrt(x)), (np.array([0., 4.]),),
(np.ones(2),))`` gave ``(2.0, nan)``: ``reduce_max``'s rule multiplied the
tangents by a 0/1 mask of the places attaining the max (``0 * inf``).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg

try:
    import scipy.linalg as sla
except ImportError:         # scipy is optional: its case is skipped
    sla = None

ENGINES = ("source", "trace")
X = np.array([0.5, 4.0, 1.0, 2.0])


def max_(x):
    return np.max(x)


def min_(x):
    return np.min(x)


def amax_axis(x):
    return np.amax(x.reshape(2, 2), axis=1)


def nanmax(x):
    return np.nanmax(x)


def nanmin(x):
    return np.nanmin(x)


def ptp(x):
    return np.ptp(x)


def max_method(x):
    return x.max()


def maximum_reduce(x):
    return np.maximum.reduce(x)


def max_where(x):
    return np.max(x, where=x < 3, initial=0.0)


def cummax(x):
    return np.maximum.accumulate(x)[-1]


def maximum(x):
    return np.maximum(x[:2], x[2:])


def minimum(x):
    return np.minimum(x[:2], x[2:])


def fmax(x):
    return np.fmax(x[:2], x[2:])


def fmin(x):
    return np.fmin(x[:2], x[2:])


def clip(x):
    return np.clip(x, 0.8, 3.0)


def where(x):
    return np.where(x > 1.5, x, 0.0)


def select(x):
    return np.select([x > 3, x > 1.5], [x, 2 * x], 0.0)


def sort_slice(x):
    return np.sort(x)[2:]


def partition(x):
    return np.partition(x, 3)[3]


def take(x):
    return np.take(x, [1, 3])


def getitem(x):
    return x[1::2]


def mask(x):
    return x[x > 1.5]


def compress(x):
    return np.compress([False, True, False, True], x)


def extract(x):
    return np.extract(x > 1.5, x)


def take_along(x):
    return np.take_along_axis(x, np.argsort(x)[-1:], 0)


def argmax_index(x):
    return x[np.argmax(x)]


def tril(x):
    return np.tril(x.reshape(2, 2))


def triu(x):
    return np.triu(x.reshape(2, 2))


def diag(x):
    return np.diag(x.reshape(2, 2))


def trace(x):
    return np.trace(x.reshape(2, 2))


def median(x):
    return np.median(x[:3])


def percentile(x):
    return np.percentile(x, 100)


def quantile(x):
    return np.quantile(x, 0.0)


def norm_inf(x):
    return np.linalg.norm(x, np.inf)


def choose(x):
    return np.choose([0, 1], [x[:2], x[2:]])


def delete(x):
    return np.delete(x, [0, 2])


def flip_slice(x):
    return np.flip(x)[:2]


def roll_slice(x):
    return np.roll(x, 1)[:2]


def piecewise(x):
    return np.piecewise(x, [x < 1.5, x >= 1.5], [0.0, lambda v: v])


def solve_lower(x):
    return sla.solve_triangular(x.reshape(2, 2) + 2.0 * np.eye(2), np.ones(2),
                                lower=True)


# function -> the places of X its output does not read
UNREAD = {
    max_: [0, 2, 3], min_: [1, 2, 3], amax_axis: [0, 2], nanmax: [0, 2, 3],
    nanmin: [1, 2, 3], ptp: [2, 3], max_method: [0, 2, 3], maximum_reduce: [0, 2, 3],
    max_where: [1], cummax: [0, 2, 3], maximum: [0, 3], minimum: [2, 1], fmax: [0, 3],
    fmin: [2, 1], clip: [0, 1], where: [0, 2], select: [0, 2], sort_slice: [0, 2],
    partition: [0, 2, 3], take: [0, 2], getitem: [0, 2], mask: [0, 2], compress: [0, 2],
    extract: [0, 2], take_along: [0, 2, 3], argmax_index: [0, 2, 3], tril: [1], triu: [2],
    diag: [1, 2], trace: [1, 2], median: [0, 1, 3], percentile: [0, 2, 3],
    quantile: [1, 2, 3], norm_inf: [0, 2, 3], choose: [1, 2], delete: [0, 2],
    flip_slice: [0, 1], roll_slice: [1, 2], piecewise: [0, 2], solve_lower: [1],
}


# the trace engine refuses SciPy's solve_triangular (it calls np.asarray first: a
# ConcretizationError that names engine='source'), so that case runs in the source engine
CASES = [(f, engine) for f in UNREAD for engine in ENGINES
         if f is not solve_lower or (engine == "source" and sla is not None)]


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan], ids=["inf", "-inf", "nan"])
@pytest.mark.parametrize("f, engine", CASES, ids=lambda v: getattr(v, "__name__", v))
def test_an_unread_inf_or_nan_tangent_contributes_nothing(f, engine, bad):
    unread = UNREAD[f]
    t = np.ones_like(X)
    t[unread] = bad
    zero = np.ones_like(X)
    zero[unread] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = wg.jvp(f, (X,), (zero,), engine=engine)
        got = wg.jvp(f, (X,), (t,), engine=engine)
        with wg.nan_safe(False):         # selection, not a guarded product
            plain = wg.jvp(f, (X,), (t,), engine=engine)
    assert np.isfinite(want[1]).all()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(plain[1], want[1])


@pytest.mark.parametrize("engine", ENGINES)
def test_max_of_sqrt_at_zero_in_forward_mode(engine):
    """The issue's case: the tangent of sqrt at 0 is inf, at the place max does not pick."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out, t = wg.jvp(sqrt_max, (np.array([0.0, 4.0]),), (np.ones(2),), engine=engine)
    assert (out, t) == (2.0, 0.25)


def sqrt_max(x):
    return np.max(np.sqrt(x))


@pytest.mark.parametrize("engine", ENGINES)
def test_ties_still_share_the_tangent(engine):
    """max(x, x) and a max attained twice: the mean of the tied tangents."""
    x = np.array([2.0, 2.0, 1.0])
    _, t = wg.jvp(max_, (x,), (np.array([1.0, 3.0, 5.0]),), engine=engine)
    assert t == 2.0
    _, t = wg.jvp(maximum, (np.array([2.0, 1.0, 2.0, 0.0]),), (np.array([1.0, 7.0, 3.0, 9.0]),),
                  engine=engine)
    np.testing.assert_array_equal(t, [2.0, 7.0])
