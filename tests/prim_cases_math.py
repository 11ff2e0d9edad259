"""Primitive specs of the math family (``wengert.primitives.elementwise``,
``wengert.primitives.convolution``): gathered into ``cases.SPECS``."""
from __future__ import annotations

import numpy as np

from cases import (DIFF, EACH, F64, NONDIFF, Arg, PrimSpec, away, binary_cases, const, ints,
                   pos, real, unary_cases, variants)
from wengert.primitives import convolution, elementwise


def _unary(reference, wrapper, gen):
    return PrimSpec(DIFF, unary_cases(gen), reference, wrapper)


def sorted_points(n):
    """Distinct increasing sample points, not differentiated."""
    return Arg(lambda rng, dt: np.cumsum(rng.uniform(0.5, 1.5, n)).astype(dt),
               f"sorted({n})", diff=False)


def ref_interp_segment(xp, x):
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)


def ref_interp_period_order(xp, period):
    return np.argsort(np.mod(xp, period), kind="stable")


SPECS = {
    "arcsinh": _unary(np.arcsinh, elementwise.arcsinh, lambda s: real(s, -3.0, 3.0)),
    "arccosh": _unary(np.arccosh, elementwise.arccosh, lambda s: pos(s, 1.2, 3.0)),
    "arctanh": _unary(np.arctanh, elementwise.arctanh, lambda s: real(s, -0.9, 0.9)),
    "cbrt": _unary(np.cbrt, elementwise.cbrt, away),
    "reciprocal": PrimSpec(DIFF, unary_cases(away)
                           + variants("int", [ints([1, -1, 2, -3])], mode=NONDIFF),
                           np.reciprocal, elementwise.reciprocal),
    "log2": _unary(np.log2, elementwise.log2, lambda s: pos(s, 0.3, 3.0)),
    "log10": _unary(np.log10, elementwise.log10, lambda s: pos(s, 0.3, 3.0)),
    "exp2": _unary(np.exp2, elementwise.exp2, real),
    "logaddexp2": PrimSpec(DIFF, binary_cases(real, real)
                           + variants("large_2x3_s", [real((2, 3), 900.0, 1000.0),
                                                      real((), -5.0, 5.0)], dtypes=(F64,)),
                           np.logaddexp2, elementwise.logaddexp2),
    "hypot": PrimSpec(DIFF, binary_cases(real, away)
                      + variants("x_pyfloat", [real((3,)), const(1.5)]),
                      np.hypot, elementwise.hypot),
    "interp_segment": PrimSpec(
        NONDIFF,
        variants("5_2x3", [sorted_points(5), real((2, 3), -1.0, 8.0)])
        + variants("2_4", [sorted_points(2), real((4,), -1.0, 4.0)], dtypes=(F64,)),
        ref_interp_segment, elementwise.interp_segment),
    "interp_period_order": PrimSpec(
        NONDIFF, variants("6", [real((6,), -3.0, 9.0), const(2.5)]),
        ref_interp_period_order, elementwise.interp_period_order),
    "convolve": PrimSpec(
        DIFF,
        variants("5_3", [real((5,)), real((3,))])
        + variants("2_4", [real((2,)), real((4,))])
        + variants("1_1", [real((1,)), real((1,))], dtypes=(F64,)),
        np.convolve, convolution.convolve, linear_in=EACH),
}
