"""Function-table cases for arrays written as Python lists and tuples of
traced values (``wengert.primitives.numpy_lists``): ``np.array([a, b, 1.0])``,
``np.sum([a, b])``, ``np.stack([[a, 1.0], [b, c]])``.

Every case runs in the source engine only: NumPy converts a list's elements
with ``__array__`` before any dispatch protocol could show wengert the call,
so the trace engine never sees it (its error is tested in
numpy/test_lists.py). Elements are 0-d values taken from the operands
(``x[0]``: a NumPy scalar in the plain call), whole operands, and Python
floats, mixed: NumPy's own promotion decides the dtype (a float32 scalar
with a Python float in a list gives float64 in NumPy 2, which the harness
checks against the plain call).
"""
from __future__ import annotations

import numpy as np

from cases import real, pos
from fn_cases import FnCase

SOURCE = ("source",)     # list arguments: the trace engine never sees the call


# --- array creation ----------------------------------------------------
def array_of_scalars(x):
    return np.array([x[0], x[1] * 2.0, 3.0])


def array_nested(x, y):
    return np.array([[x[0], 1.0, y[1]], y, [x[1], x[2], -0.5]])


def array_dtype(x):
    return np.array([x[0], x[1], 2.5], dtype=np.float32)


def array_ndmin(x):
    return np.array([x[0], x[1]], ndmin=3)


def array_copy_of_traced(x):
    return np.array(x) * 2.0


def array_tuple(x, y):
    return np.array(((x[0], y[0]), (x[1], y[1])))


def array_vectors(x, y):
    return np.array([x, y, x * y])


def asarray_list(x):
    return np.asarray([x[0], x[1], x[2]]) ** 2


def asarray_cast(x):
    return np.asarray(x, dtype=np.float32)


def asanyarray_list(x, y):
    return np.asanyarray([y, [x[0], 1.0]])


def ascontiguousarray_scalar(x):
    return np.ascontiguousarray(x[0] * x[1])


def ascontiguousarray_list(x):
    return np.ascontiguousarray([[x[0], x[1]], [x[2], 4.0]])


# --- joining -----------------------------------------------------------
def stack_nested(x, y):
    return np.stack([[x[0], 1.0], [y[0], y[1]]])


def stack_axis(x, y):
    return np.stack([[x[0], x[1]], y], axis=1)


def stack_negative_axis(x, y):
    return np.stack([[x[0], x[1]], y, [2.0, x[2]]], axis=-1)


def hstack_lists(x, y):
    return np.hstack([[x[0], 1.0], y, x[1]])


def vstack_lists(x, y):
    return np.vstack([[x[0], x[1]], y])


def column_stack_lists(x, y):
    return np.column_stack([[x[0], x[1]], y, [3.0, 4.0]])


def column_stack_2d(m, y):
    return np.column_stack([m, [y[0], y[1], 1.0]])


def dstack_lists(x, y):
    return np.dstack([[x[0], x[1]], y])


def dstack_2d(m):
    return np.dstack([m, [[m[0, 0], 1.0], [2.0, m[1, 1]], [m[2, 0], m[2, 1]]]])


def concatenate_lists(x, y):
    return np.concatenate([[x[0], 1.0], y, [x[1]]])


def concatenate_axis1(m, y):
    return np.concatenate([m, [[y[0]], [y[1]], [1.0]]], axis=1)


def concatenate_axis_none(m, x):
    return np.concatenate([m, [[x[0], x[1]]]], axis=None)


def block_scalars(x):
    return np.block([[x[0], 1.0], [x[1], x[2]]])


def block_mixed(m, x):
    return np.block([[m, np.ones((3, 1))], [x[0], x[1], 5.0]])


def block_one_level(x, y):
    return np.block([x, y[0], 2.0])


def append_flat(m, x):
    return np.append(m, [x[0], 1.0])


def append_axis(m, x):
    return np.append(m, [[x[0], x[1]]], axis=0)


# --- reductions of a list ----------------------------------------------
def sum_list(x):
    return np.sum([x[0], x[1] * x[2], 1.5])


def sum_list_axis(x, y):
    return np.sum([x, y * 2.0], axis=0)


def sum_list_keepdims(x, y):
    return np.sum([x, y], axis=-1, keepdims=True)


def prod_list(x):
    return np.prod([x[0], x[1], 2.0])


def prod_list_axis(x, y):
    return np.prod([x, y], axis=1)


def mean_list(x):
    return np.mean([x[0], x[1], x[2], 4.0])


def mean_list_axis(x, y):
    return np.mean([x, y], axis=0)


def var_list(x):
    return np.var([x[0], x[1], 0.5])


def var_list_ddof(x, y):
    return np.var([x, y], axis=1, ddof=1)


def std_list(x):
    return np.std([x[0], x[1], x[2], 1.0])


def std_list_axis(x, y):
    return np.std([x, y], axis=0, keepdims=True)


def max_list(x):
    return np.max([x[0], x[1], -5.0])


def max_list_axis(x, y):
    return np.max([x, y], axis=0)


def min_list(x):
    return np.min([x[0], x[1], 5.0])


def min_list_axis(x, y):
    return np.min([x, y], axis=1)


def norm_list(x):
    return np.linalg.norm([x[0], x[1], 2.0])


def norm_list_ord(x, y):
    return np.linalg.norm([x, y], ord="fro")


def norm_list_axis(x, y):
    return np.linalg.norm([x, y], axis=1)


def _c(name, fun, args, id, **kw):
    return FnCase(name, fun, args, id=id, engines=SOURCE, **kw)


CASES = [
    _c("np.array", array_of_scalars, (real((3,)),), "scalars"),
    _c("np.array", array_nested, (real((3,)), real((3,))), "nested"),
    # the result is float32: finite differences of it in float64 see its rounding
    _c("np.array", array_dtype, (real((2,)),), "dtype-float32", rtol=1e-4),
    _c("np.array", array_ndmin, (real((2,)),), "ndmin"),
    _c("np.array", array_copy_of_traced, (real((2, 3)),), "copy"),
    _c("np.array", array_tuple, (real((2,)), real((2,))), "tuples"),
    _c("np.array", array_vectors, (real((3,)), real((3,))), "vectors"),
    _c("np.asarray", asarray_list, (real((3,)),), "list"),
    # the result is float32: finite differences of it in float64 see its rounding
    _c("np.asarray", asarray_cast, (real((2, 2)),), "cast", rtol=1e-4),
    _c("np.asanyarray", asanyarray_list, (real((2,)), real((2,))), "list"),
    _c("np.ascontiguousarray", ascontiguousarray_scalar, (real((2,)),), "scalar"),
    _c("np.ascontiguousarray", ascontiguousarray_list, (real((3,)),), "list"),
    _c("np.stack", stack_nested, (real((2,)), real((2,))), "lists"),
    _c("np.stack", stack_axis, (real((2,)), real((2,))), "lists-axis1"),
    _c("np.stack", stack_negative_axis, (real((3,)), real((2,))), "lists-axis-1"),
    _c("np.hstack", hstack_lists, (real((2,)), real((3,))), "lists"),
    _c("np.vstack", vstack_lists, (real((2,)), real((2,))), "lists"),
    _c("np.column_stack", column_stack_lists, (real((2,)), real((2,))), "lists"),
    _c("np.column_stack", column_stack_2d, (real((3, 2)), real((2,))), "2d"),
    _c("np.dstack", dstack_lists, (real((2,)), real((2,))), "lists"),
    _c("np.dstack", dstack_2d, (real((3, 2)),), "2d"),
    _c("np.concatenate", concatenate_lists, (real((2,)), real((3,))), "lists"),
    _c("np.concatenate", concatenate_axis1, (real((3, 2)), real((2,))), "lists-axis1"),
    _c("np.concatenate", concatenate_axis_none, (real((2, 2)), real((2,))), "axis-none"),
    _c("np.block", block_scalars, (real((3,)),), "scalars"),
    _c("np.block", block_mixed, (real((3, 2)), real((2,))), "mixed"),
    _c("np.block", block_one_level, (real((3,)), real((2,))), "one-level"),
    _c("np.append", append_flat, (real((2, 2)), real((2,))), "flat"),
    _c("np.append", append_axis, (real((2, 2)), real((2,))), "axis0"),
    _c("np.sum", sum_list, (real((3,)),), "list"),
    _c("np.sum", sum_list_axis, (real((3,)), real((3,))), "list-axis0"),
    _c("np.sum", sum_list_keepdims, (real((3,)), real((3,))), "list-keepdims"),
    _c("np.prod", prod_list, (real((2,)),), "list"),
    _c("np.prod", prod_list_axis, (real((3,)), real((3,))), "list-axis1"),
    _c("np.mean", mean_list, (real((3,)),), "list"),
    _c("np.mean", mean_list_axis, (real((3,)), real((3,))), "list-axis0"),
    _c("np.var", var_list, (real((2,)),), "list"),
    _c("np.var", var_list_ddof, (real((3,)), real((3,))), "list-ddof"),
    _c("np.std", std_list, (real((3,)),), "list"),
    # std of two values is |a - b| / 2: drawn apart, away from its kink
    _c("np.std", std_list_axis, (real((3,), 1.0, 2.0), real((3,), -2.0, -1.0)), "list-axis0"),
    _c("np.max", max_list, (real((2,)),), "list"),
    _c("np.max", max_list_axis, (real((3,), 1.0, 2.0), real((3,), -2.0, -1.0)), "list-axis0"),
    _c("np.min", min_list, (real((2,)),), "list"),
    _c("np.min", min_list_axis, (real((3,)), real((3,))), "list-axis1"),
    _c("np.linalg.norm", norm_list, (pos((2,)),), "list"),
    _c("np.linalg.norm", norm_list_ord, (real((2,)), real((2,))), "list-fro"),
    _c("np.linalg.norm", norm_list_axis, (pos((3,)), pos((3,))), "list-axis1"),
]
