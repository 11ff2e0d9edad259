"""Function-table cases for the NumPy functions and ufuncs wengert had
before the breadth work (reductions, shapes, products, elementwise math)."""
from __future__ import annotations

import numpy as np

from cases import NONDIFF, ZERO_DERIV, away, bools, pos, real  # noqa: F401
from fn_cases import FnCase


def sum_axis(x):
    return np.sum(x, axis=1)


def mean_keep(x):
    return np.mean(x, axis=0, keepdims=True)


def sin_(x):
    return np.sin(x)


def exp_(x):
    return np.exp(x)


CASES = [
    FnCase("np.sum", sum_axis, (real((3, 4)),)),
    FnCase("np.mean", mean_keep, (real((3, 4)),)),
    FnCase("np.sin", sin_, (real((2, 3)),)),
    FnCase("np.exp", exp_, (real((2, 3)),)),
]
