"""Primitive specs of the rows whose outputs carry no derivative and of those that handle
lengths known only at run time (``wengert/primitives/predicates.py``, ``positions.py``,
``runtime_shapes.py``, ``index.nonzero``; gathered by ``cases._family_specs``): the
predicates, tests and counts, the positions (nonzero, unique, searchsorted, digitize,
bincount), the sum of weights per bin, and ``sum_like``/``broadcast_like``."""
from __future__ import annotations

import numpy as np

from cases import (DIFF, F64, NONDIFF, ZERO_DERIV, Arg, PrimSpec, bools, frac, grid, real,
                   variants, with_nonfinite)
from wengert.primitives import gauge, index, positions, predicates, runtime_shapes


def _small_ints(shape, hi):
    def draw(rng, dt):
        x = rng.integers(0, hi, shape)
        x.reshape(-1)[:1] = hi - 1          # the largest bin is used
        return x
    return Arg(draw, f"ints<{hi}{shape}", diff=False)


def _sorted(n):
    return Arg(lambda rng, dt: np.sort(rng.uniform(-2.0, 2.0, n)).astype(dt), f"sorted({n})",
               diff=False)


def _repeats(n):
    """Values with repeats (unique finds fewer than n)."""
    return Arg(lambda rng, dt: rng.integers(-2, 3, n).astype(dt), f"repeats({n})", diff=False)


def _signed_zeros(shape):
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape).astype(dt)
        x.reshape(-1)[:2] = [0.0, -0.0]
        return x
    return Arg(draw, f"signedzeros{shape}", diff=False)


def _near(shape):
    """Pairs some of which are within isclose's tolerance."""
    def draw(rng, dt):
        return rng.uniform(-1.0, 1.0, shape).astype(dt)
    return Arg(draw, f"near{shape}", diff=False)


def _close_to(shape):
    def draw(rng, dt):
        return (rng.uniform(-1.0, 1.0, shape) * (rng.random(shape) < 0.5) * 1e-9).astype(dt)
    return Arg(draw, f"closeto{shape}", diff=False)


# --- the public wrappers, as the cases call them ----------------------------------
def call_reduce_any(x, axes):
    return predicates.reduce_any(x, axes)


def call_reduce_all(x, axes):
    return predicates.reduce_all(x, axes)


def call_count_nonzero(x, axes):
    return predicates.count_nonzero(x, axes)


def call_isclose(a, b, rtol, atol, equal_nan):
    return predicates.isclose(a, b, rtol, atol, equal_nan)


def call_unique_positions(x, axis, equal_nan, sorted):
    return positions.unique_positions(x, axis, equal_nan, sorted)


def ref_unique_positions(x, axis, equal_nan, sorted):
    # first occurrences by a scan, not np.unique
    flat = x.reshape(-1)
    values = np.array(sorted_(set(flat.tolist())))
    first = np.array([int(np.flatnonzero(flat == v)[0]) for v in values], np.intp)
    inverse = np.array([int(np.flatnonzero(values == v)[0]) for v in flat], np.intp)
    counts = np.array([int(np.sum(flat == v)) for v in values], np.intp)
    return first, inverse, counts


sorted_ = sorted


def call_searchsorted(a, v, side):
    return positions.searchsorted(a, v, side)


def call_digitize(x, bins, right):
    return positions.digitize(x, bins, right)


def call_bincount(x, minlength, length):
    return positions.bincount(x, minlength, length)


def ref_bincount(x, minlength, length):
    n = max(int(x.max()) + 1, minlength) if length is None else length
    return np.array([np.sum(x == k) for k in range(n)], np.intp)


def call_bincount_weights(w, x, minlength, length):
    return positions.bincount_weights(w, x, minlength, length)


def ref_bincount_weights(w, x, minlength, length):
    n = max(int(x.max()) + 1, minlength) if length is None else length
    return np.array([np.sum(w[x == k]) for k in range(n)], w.dtype)


def call_length(x, axes):
    return runtime_shapes.length(x, axes)


def call_sum_like(x, like, axes, keep):
    return runtime_shapes.sum_like(x, like, axes, keep)


def ref_sum_like(x, like, axes, keep):
    out = np.sum(x, axis=axes, keepdims=True)
    return out.reshape(tuple(d for i, d in enumerate(out.shape) if i not in axes or i in keep))


def call_broadcast_like(x, like, axes):
    return runtime_shapes.broadcast_like(x, like, axes)


def ref_broadcast_like(x, like, axes):
    return np.broadcast_to(np.expand_dims(x, axes), like.shape)


def call_nonzero(x):
    return index.nonzero(x)


def _orthonormal(n):
    return Arg(lambda rng, dt: np.linalg.qr(rng.standard_normal((n, n)))[0].astype(dt),
               f"orthonormal({n})", diff=False)


def _distinct_values(n):
    return Arg(lambda rng, dt: np.arange(1.0, n + 1.0, dtype=dt), f"distinct({n})", diff=False)


def call_gauge_check(t, basis, w, check, what, where):
    return gauge.gauge_check(t, basis, w, check=check, what=what, where=where)


SPECS = {
    # forward the identity; its transpose checks the cotangent turns no pair of equal
    # eigenvalues' eigenvectors (none here: distinct values), so it is the identity too
    "gauge_check": PrimSpec(
        DIFF, variants("3x3", [real((3, 3)), _orthonormal(3), _distinct_values(3)],
                       {"check": False, "what": "v", "where": "here"}),
        lambda t, basis, w, check, what, where: t, call_gauge_check, linear_in=((0,),)),
    "isnan": PrimSpec(NONDIFF, variants("2x3", [with_nonfinite((2, 3))]), np.isnan,
                      predicates.isnan),
    "isinf": PrimSpec(NONDIFF, variants("2x3", [with_nonfinite((2, 3))]), np.isinf,
                      predicates.isinf),
    "signbit": PrimSpec(NONDIFF, variants("2x3", [_signed_zeros((2, 3))]), np.signbit,
                        predicates.signbit),
    "trunc": PrimSpec(ZERO_DERIV, variants("2x3", [frac((2, 3), 0.2, 0.8)])
                      + variants("s", [frac((), 0.2, 0.8)], dtypes=(F64,)),
                      np.trunc, predicates.trunc),
    "isclose": PrimSpec(
        NONDIFF,
        variants("2x3", [_close_to((2, 3)), _close_to((2, 3))],
                 {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False})
        + variants("3_bcast_nan", [with_nonfinite((3,)), with_nonfinite((3,))],
                   {"rtol": 1e-3, "atol": 0.0, "equal_nan": True}, dtypes=(F64,)),
        lambda a, b, rtol, atol, equal_nan: np.isclose(a, b, rtol, atol, equal_nan),
        call_isclose),
    "reduce_any": PrimSpec(
        NONDIFF, variants("2x3_axes1", [bools((2, 3))], {"axes": (1,)}, dtypes=(F64,))
        + variants("2x3_all", [bools((2, 3))], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: np.any(x, axis=axes), call_reduce_any),
    "reduce_all": PrimSpec(
        NONDIFF, variants("2x3_axes0", [bools((2, 3))], {"axes": (0,)}, dtypes=(F64,))
        + variants("2x3_all", [bools((2, 3))], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: np.all(x, axis=axes), call_reduce_all),
    "count_nonzero": PrimSpec(
        NONDIFF, variants("2x3_axes1", [grid((2, 3))], {"axes": (1,)})
        + variants("2x3_all", [grid((2, 3))], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: np.count_nonzero(x, axis=axes), call_count_nonzero),
    "nonzero": PrimSpec(
        NONDIFF, variants("5", [grid((5,))]) + variants("2x3", [grid((2, 3))], dtypes=(F64,)),
        np.nonzero, call_nonzero),
    "unique_positions": PrimSpec(
        NONDIFF, variants("7", [_repeats((7,))], {"axis": None, "equal_nan": True,
                                                  "sorted": True}),
        ref_unique_positions, call_unique_positions),
    "searchsorted": PrimSpec(
        NONDIFF, variants("6_4", [_sorted(6), real((4,))], {"side": "left"})
        + variants("6_2x2_right", [_sorted(6), real((2, 2))], {"side": "right"},
                   dtypes=(F64,)),
        lambda a, v, side: np.searchsorted(a, v, side), call_searchsorted),
    "digitize": PrimSpec(
        NONDIFF, variants("4_5", [real((4,)), _sorted(5)], {"right": False})
        + variants("2x2_5_right", [real((2, 2)), _sorted(5)], {"right": True},
                   dtypes=(F64,)),
        lambda x, bins, right: np.digitize(x, bins, right), call_digitize),
    "bincount": PrimSpec(
        NONDIFF, variants("6", [_small_ints((6,), 4)], {"minlength": 0, "length": None},
                          dtypes=(F64,))
        + variants("6_min7", [_small_ints((6,), 4)], {"minlength": 7, "length": 7},
                   dtypes=(F64,)),
        ref_bincount, call_bincount),
    # (float64 whatever the weights: NumPy's bincount sums in float64)
    "bincount_weights": PrimSpec(
        DIFF, variants("6", [real((6,)), _small_ints((6,), 4)],
                       {"minlength": 0, "length": None}, dtypes=(F64,))
        + variants("6_len7", [real((6,)), _small_ints((6,), 4)],
                   {"minlength": 7, "length": 7}, dtypes=(F64,)),
        ref_bincount_weights, call_bincount_weights, linear_in=((0,),)),
    "length": PrimSpec(
        NONDIFF, variants("2x3_axes1", [real((2, 3))], {"axes": (1,)}, dtypes=(F64,))
        + variants("2x3_all", [real((2, 3))], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: int(np.prod([x.shape[a] for a in axes])), call_length),
    "sum_like": PrimSpec(
        DIFF, variants("2x3_axes1", [real((2, 3)), Arg(lambda r, d: np.zeros((2, 3), d),
                                                       "like(2x3)", diff=False)],
                       {"axes": (1,), "keep": ()})
        + variants("2x3x4_axes02_keep2", [real((2, 3, 4)),
                                         Arg(lambda r, d: np.zeros((2, 3, 4), d),
                                             "like(2x3x4)", diff=False)],
                   {"axes": (0, 2), "keep": (2,)}, dtypes=(F64,)),
        ref_sum_like, call_sum_like, linear_in=((0,),)),
    "broadcast_like": PrimSpec(
        DIFF, variants("3_2x3", [real((3,)), Arg(lambda r, d: np.zeros((2, 3), d),
                                                 "like(2x3)", diff=False)], {"axes": (0,)})
        + variants("2x1_2x3x4_axes2", [real((2, 1)), Arg(lambda r, d: np.zeros((2, 3, 4), d),
                                                         "like(2x3x4)", diff=False)],
                   {"axes": (2,)}, dtypes=(F64,)),
        ref_broadcast_like, call_broadcast_like, linear_in=((0,),)),
}
