"""Function-table cases for the NumPy functions and ufuncs wengert had
before the breadth work: reductions, products, joining and shaping,
selection, np.linalg, and the elementwise ufuncs.

Each function is called over its parameters (axis None, an int, a negative
int, a tuple; keepdims; dtype=; ddof; initial and where for reductions;
broadcasting shapes for binary ufuncs; several index and shape forms), on
operands drawn where it is smooth. Comparisons, logical ufuncs, argmax and
the shape queries are NONDIFF; floor, ceil, sign, rint, round and the
constant-valued ``*_like`` functions are ZERO_DERIV, drawn away from their
jumps.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from cases import (NONDIFF, ZERO_DERIV, Arg, away, bools, cells, const, diagdom, frac, grid,
                   ints, pos, real, spd, with_nonfinite)
from fn_cases import FnCase


# --- operands ----------------------------------------------------------------
def distinct(shape, lo=-2.0, hi=2.0):
    """Values at least ``(hi - lo) / (2 n)`` apart (n entries), in a random
    order: max, min and argmax have no ties, and finite differences do not
    cross one."""
    n = int(np.prod(shape, dtype=np.int64))

    def draw(rng, dt):
        steps = np.linspace(lo, hi, 2 * n)[::2] + rng.uniform(0.0, (hi - lo) / (4 * n), n)
        return np.asarray(rng.permutation(steps), dt).reshape(shape)
    return Arg(draw, f"distinct{shape}")


def avoiding(shape, points, gap=0.2, lo=-2.0, hi=2.0):
    """U(lo, hi) at least ``gap`` away from each of ``points`` (the bounds
    of clip)."""
    def draw(rng, dt):
        x = rng.uniform(lo, hi, shape)
        for p in points:
            near = np.abs(x - p) < gap
            x = np.where(near, p + np.where(x >= p, gap, -gap) * 1.5, x)
        return np.asarray(x, dt).reshape(shape)
    return Arg(draw, f"U({lo},{hi}) off {points}{shape}")


def with_nan(shape, at):
    """U(-2, 2) with NaN at the flat positions ``at`` (fmax and fmin give the
    other operand there)."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[list(at)] = np.nan
        return np.asarray(x, dt)
    return Arg(draw, f"nan at {at}{shape}")


def with_zeros(shape, at):
    """U(-2, 2) with exact zeros at the flat positions ``at`` (np.prod is a
    polynomial: smooth there, where ``prod / x`` is not)."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[list(at)] = 0.0
        return np.asarray(x, dt)
    return Arg(draw, f"zeros at {at}{shape}")


def traced(arg):
    """The same operand, differentiated (a comparison of traced values
    carries a zero tangent, which the harness checks)."""
    return dataclasses.replace(arg, diff=True)


def square(n, batch=()):
    return diagdom(n, batch)


# --- reductions ----------------------------------------------------------------
def sum_all(x):
    return np.sum(x)


def sum_axis(x):
    return np.sum(x, axis=1)


def sum_neg_keep(x):
    return np.sum(x, axis=-1, keepdims=True)


def sum_tuple(x):
    return np.sum(x, axis=(0, 2))


def sum_dtype(x):
    return np.sum(x, axis=0, dtype=np.float64)


def sum_initial(x):
    return np.sum(x, axis=0, initial=1.5)


def sum_where(x, m):
    return np.sum(x, axis=1, where=m)


def prod_all(x):
    return np.prod(x)


def prod_axis_keep(x):
    return np.prod(x, axis=-2, keepdims=True)


def prod_initial_where(x, m):
    return np.prod(x, axis=0, initial=2.0, where=m)


def prod_dtype(x):
    return np.prod(x, axis=(0, 1), dtype=np.float64)


def mean_all(x):
    return np.mean(x)


def mean_keep(x):
    return np.mean(x, axis=0, keepdims=True)


def mean_tuple_neg(x):
    return np.mean(x, axis=(-1, 0))


def mean_dtype(x):
    return np.mean(x, axis=1, dtype=np.float64)


def max_all(x):
    return np.max(x)


def max_axis(x):
    return np.max(x, axis=1)


def max_keep_neg(x):
    return np.max(x, axis=-1, keepdims=True)


def max_tuple(x):
    return np.max(x, axis=(0, 2))


def max_initial(x):
    return np.max(x, axis=0, initial=-0.1)


def max_where(x, m):
    return np.max(x, axis=1, where=m, initial=-5.0)


def amax_axis(x):
    return np.amax(x, axis=0)


def amax_keep(x):
    return np.amax(x, axis=(0, 1), keepdims=True)


def min_all(x):
    return np.min(x)


def min_axis_keep(x):
    return np.min(x, axis=0, keepdims=True)


def min_initial(x):
    return np.min(x, axis=-1, initial=0.1)


def min_where(x, m):
    return np.min(x, axis=0, where=m, initial=5.0)


def amin_axis(x):
    return np.amin(x, axis=-1)


def amin_all(x):
    return np.amin(x)


def var_all(x):
    return np.var(x)


def var_axis_ddof(x):
    return np.var(x, axis=1, ddof=1)


def var_keep_tuple(x):
    return np.var(x, axis=(0, -1), keepdims=True)


def var_dtype(x):
    return np.var(x, axis=0, dtype=np.float64)


def var_correction(x):
    return np.var(x, axis=0, correction=1)


def std_all(x):
    return np.std(x)


def std_axis_ddof(x):
    return np.std(x, axis=-1, ddof=1)


def std_keep(x):
    return np.std(x, axis=0, keepdims=True)


def std_dtype(x):
    return np.std(x, axis=(0, 1), dtype=np.float64)


def cumsum_flat(x):
    return np.cumsum(x)


def cumsum_axis(x):
    return np.cumsum(x, axis=0)


def cumsum_neg(x):
    return np.cumsum(x, axis=-1)


def cumsum_dtype(x):
    return np.cumsum(x, axis=1, dtype=np.float64)


def argmax_flat(x):
    return np.argmax(x)


def argmax_axis(x):
    return np.argmax(x, axis=1)


def argmax_keep(x):
    return np.argmax(x, axis=-1, keepdims=True)


def argmin_flat(x):
    return np.argmin(x)


def argmin_axis(x):
    return np.argmin(x, axis=0)


def argmin_keep(x):
    return np.argmin(x, axis=None, keepdims=True)


# --- products ----------------------------------------------------------------------
def dot_(a, b):
    return np.dot(a, b)


def outer_(a, b):
    return np.outer(a, b)


def inner_(a, b):
    return np.inner(a, b)


def tensordot_2(a, b):
    return np.tensordot(a, b)


def tensordot_1(a, b):
    return np.tensordot(a, b, axes=1)


def tensordot_lists(a, b):
    return np.tensordot(a, b, axes=([0, 2], [1, 0]))


def tensordot_0(a, b):
    return np.tensordot(a, b, axes=0)


def trace_(a):
    return np.trace(a)


def trace_offset(a):
    return np.trace(a, offset=1)


def trace_axes(a):
    return np.trace(a, offset=-1, axis1=1, axis2=2)


def trace_dtype(a):
    return np.trace(a, dtype=np.float64)


def diagonal_(a):
    return np.diagonal(a)


def diagonal_offset(a):
    return np.diagonal(a, offset=1)


def diagonal_axes(a):
    return np.diagonal(a, offset=-1, axis1=2, axis2=0)


def diag_vec(v):
    return np.diag(v)


def diag_vec_k(v):
    return np.diag(v, k=-2)


def diag_mat(a):
    return np.diag(a)


def diag_mat_k(a):
    return np.diag(a, 1)


def einsum_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b)


def einsum_trace(a):
    return np.einsum("ii", a)


def einsum_colsum(a):
    return np.einsum("ij->j", a)


def einsum_three(a, b, c):
    return np.einsum("i,ij,j->", a, b, c)


def einsum_batch_opt(a, b):
    return np.einsum("bij,bjk->bik", a, b, optimize=True)


def einsum_ellipsis(a, b):
    return np.einsum("...i,...i->...", a, b)


def einsum_sublists(a, b):
    return np.einsum(a, [0, 1], b, [1, 2], [0, 2])


def einsum_sublists_implicit(a, b):
    return np.einsum(a, [Ellipsis, 3], b, [3])


def einsum_dtype(a, b):
    return np.einsum("ij,ij->i", a, b, dtype=np.float64)


# --- joining and shaping --------------------------------------------------------
def concatenate_0(a, b):
    return np.concatenate([a, b])


def concatenate_neg(a, b):
    return np.concatenate((a, b), axis=-1)


def concatenate_none(a, b):
    return np.concatenate([a, b], axis=None)


def concatenate_dtype(a, b):
    return np.concatenate([a, b], axis=1, dtype=np.float64)


def stack_0(a, b):
    return np.stack([a, b])


def stack_neg(a, b, c):
    return np.stack((a, b, c), axis=-1)


def stack_dtype(a, b):
    return np.stack([a, b], axis=1, dtype=np.float64)


def hstack_(a, b):
    return np.hstack([a, b])


def hstack_mixed(a, s, b):
    return np.hstack((a, s, b))


def vstack_(a, b):
    return np.vstack([a, b])


def vstack_1d(a, b):
    return np.vstack((a, b))


def reshape_tuple(x):
    return np.reshape(x, (3, 4))


def reshape_minus(x):
    return np.reshape(x, (2, -1))


def reshape_int(x):
    return np.reshape(x, -1)


def reshape_fortran(x):
    return np.reshape(x, (4, 3), order="F")


def reshape_keyword(x):
    return np.reshape(x, shape=(6, 2))


def ravel_(x):
    return np.ravel(x)


def ravel_fortran(x):
    return np.ravel(x, order="F")


def transpose_(x):
    return np.transpose(x)


def transpose_axes(x):
    return np.transpose(x, (1, 2, 0))


def transpose_neg(x):
    return np.transpose(x, axes=(-1, 0, 1))


def swapaxes_(x):
    return np.swapaxes(x, 0, 2)


def swapaxes_neg(x):
    return np.swapaxes(x, -1, 1)


def moveaxis_(x):
    return np.moveaxis(x, 0, -1)


def moveaxis_lists(x):
    return np.moveaxis(x, [0, 1], [2, 0])


def squeeze_(x):
    return np.squeeze(x)


def squeeze_axis(x):
    return np.squeeze(x, axis=-1)


def squeeze_tuple(x):
    return np.squeeze(x, axis=(0, 2))


def expand_dims_(x):
    return np.expand_dims(x, 0)


def expand_dims_neg(x):
    return np.expand_dims(x, axis=-1)


def expand_dims_tuple(x):
    return np.expand_dims(x, (0, 2))


def broadcast_to_(x):
    return np.broadcast_to(x, (2, 3, 4))


def broadcast_to_int(x):
    return np.broadcast_to(x, 5)


def atleast_1d_scalar(x):
    return np.atleast_1d(x)


def atleast_1d_array(x):
    return np.atleast_1d(x)


def atleast_1d_many(x, y):
    return np.atleast_1d(x, y)


def shape_(x):
    return np.shape(x)


def ndim_(x):
    return np.ndim(x)


def size_(x):
    return np.size(x)


def size_axis(x):
    return np.size(x, -1)


def copy_(x):
    return np.copy(x)


def astype_64(x):
    return np.astype(x, np.float64)


def astype_32(x):
    return np.astype(x, np.float32)


# --- selection and elementwise helpers ------------------------------------------
def where_mask(m, x, y):
    return np.where(m, x, y)


def where_self(x):
    return np.where(x > 0.0, x, 0.5 * x)


def where_scalar(m, x):
    return np.where(m, x, 2.0)


def clip_both(x):
    return np.clip(x, -1.0, 1.0)


def clip_lower(x):
    return np.clip(x, 0.0, None)


def clip_keywords(x):
    return np.clip(x, min=-0.5, max=1.0)


def clip_arrays(x, lo, hi):
    return np.clip(x, lo, hi)


def round_(x):
    return np.round(x)


def round_decimals(x):
    return np.round(x, decimals=1)


def around_(x):
    return np.around(x, 2)


def zeros_like_(x):
    return np.zeros_like(x)


def zeros_like_dtype(x):
    return np.zeros_like(x, dtype=np.float64)


def ones_like_(x):
    return np.ones_like(x)


def ones_like_shape(x):
    return np.ones_like(x, shape=(2, 2))


def full_like_(x):
    return np.full_like(x, 3.5)


def full_like_dtype(x):
    return np.full_like(x, 2, dtype=np.float64)


def full_like_shape(x):
    return np.full_like(x, -1.0, shape=(4,))


# --- np.linalg -----------------------------------------------------------------
def solve_(a, b):
    return np.linalg.solve(a, b)


def inv_(a):
    return np.linalg.inv(a)


def det_(a):
    return np.linalg.det(a)


def slogdet_(a):
    # unpacked: NumPy's SlogdetResult is a namedtuple, wengert's result a tuple
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


# np.linalg.cholesky reads only the lower triangle; wengert's derivative
# treats its operand as symmetric (matrix.py), so the cases differentiate it
# along symmetric directions, as the primitive's own spec does
def slogdet_logabsdet(a):
    return np.linalg.slogdet(a).logabsdet


def slogdet_sign(a):
    return np.linalg.slogdet(a).sign[:, None, None] * a


def cholesky_(a):
    return np.linalg.cholesky(0.5 * (a + np.swapaxes(a, -1, -2)))


def cholesky_upper(a):
    return np.linalg.cholesky(0.5 * (a + a.T), upper=True)


def norm_default(x):
    return np.linalg.norm(x)


def norm_vec_ord(x, p):
    return np.linalg.norm(x, p)


def norm_vec_axis(x, p):
    return np.linalg.norm(x, ord=p, axis=-1)


def norm_vec_keep(x):
    return np.linalg.norm(x, axis=0, keepdims=True)


def norm_mat_ord(x, p):
    return np.linalg.norm(x, ord=p)


def norm_mat_axes(x, p):
    return np.linalg.norm(x, p, axis=(2, 0))


def norm_mat_keep(x):
    return np.linalg.norm(x, "fro", (0, 1), True)


def norm_nd(x):
    return np.linalg.norm(x, axis=None)


def norm_keep_all(x):
    return np.linalg.norm(x, keepdims=True)


# --- ufuncs ----------------------------------------------------------------------
# one module-level def per ufunc: the source engine reads the call's source
def absolute_(x):
    return np.absolute(x)


def fabs_(x):
    return np.fabs(x)


def negative_(x):
    return np.negative(x)


def positive_(x):
    return np.positive(x)


def exp_(x):
    return np.exp(x)


def exp2_(x):
    return np.exp2(x)


def expm1_(x):
    return np.expm1(x)


def log_(x):
    return np.log(x)


def log2_(x):
    return np.log2(x)


def log10_(x):
    return np.log10(x)


def log1p_(x):
    return np.log1p(x)


def sqrt_(x):
    return np.sqrt(x)


def square_(x):
    return np.square(x)


def reciprocal_(x):
    return np.reciprocal(x)


def sin_(x):
    return np.sin(x)


def cos_(x):
    return np.cos(x)


def tan_(x):
    return np.tan(x)


def arcsin_(x):
    return np.arcsin(x)


def arccos_(x):
    return np.arccos(x)


def arctan_(x):
    return np.arctan(x)


def sinh_(x):
    return np.sinh(x)


def cosh_(x):
    return np.cosh(x)


def tanh_(x):
    return np.tanh(x)


def degrees_(x):
    return np.degrees(x)


def rad2deg_(x):
    return np.rad2deg(x)


def radians_(x):
    return np.radians(x)


def deg2rad_(x):
    return np.deg2rad(x)


def sign_(x):
    return np.sign(x)


def floor_(x):
    return np.floor(x)


def ceil_(x):
    return np.ceil(x)


def rint_(x):
    return np.rint(x)


def isfinite_(x):
    return np.isfinite(x)


def logical_not_(x):
    return np.logical_not(x)


def add_(x, y):
    return np.add(x, y)


def subtract_(x, y):
    return np.subtract(x, y)


def multiply_(x, y):
    return np.multiply(x, y)


def divide_(x, y):
    return np.divide(x, y)


def power_(x, y):
    return np.power(x, y)


def float_power_(x, y):
    return np.float_power(x, y)


def arctan2_(y, x):
    return np.arctan2(y, x)


def hypot_(x, y):
    return np.hypot(x, y)


def logaddexp_(x, y):
    return np.logaddexp(x, y)


def maximum_(x, y):
    return np.maximum(x, y)


def minimum_(x, y):
    return np.minimum(x, y)


def fmax_(x, y):
    return np.fmax(x, y)


def fmin_(x, y):
    return np.fmin(x, y)


def remainder_(x, y):
    return np.remainder(x, y)


def floor_divide_(x, y):
    return np.floor_divide(x, y)


def matmul_(a, b):
    return np.matmul(a, b)


def less_(x, y):
    return np.less(x, y)


def less_equal_(x, y):
    return np.less_equal(x, y)


def greater_(x, y):
    return np.greater(x, y)


def greater_equal_(x, y):
    return np.greater_equal(x, y)


def equal_(x, y):
    return np.equal(x, y)


def not_equal_(x, y):
    return np.not_equal(x, y)


def logical_and_(x, y):
    return np.logical_and(x, y)


def logical_or_(x, y):
    return np.logical_or(x, y)


def logical_xor_(x, y):
    return np.logical_xor(x, y)


# --- the cases ------------------------------------------------------------------
R34, R234 = real((3, 4)), real((2, 3, 4))
D34, D234 = distinct((3, 4)), distinct((2, 3, 4))

CASES = [
    # reductions
    FnCase("np.sum", sum_all, (R34,), "all"),
    FnCase("np.sum", sum_axis, (R34,), "axis"),
    FnCase("np.sum", sum_neg_keep, (R234,), "neg-keepdims"),
    FnCase("np.sum", sum_tuple, (R234,), "tuple"),
    FnCase("np.sum", sum_dtype, (R34,), "dtype"),
    FnCase("np.sum", sum_initial, (R34,), "initial"),
    FnCase("np.sum", sum_where, (R34, bools((3, 4))), "where"),
    FnCase("np.prod", prod_all, (away((2, 3), 0.7, 1.3),), "all"),
    FnCase("np.prod", prod_axis_keep, (real((2, 3, 2)),), "neg-keepdims"),
    FnCase("np.prod", prod_initial_where, (real((3, 4)), bools((3, 4))), "initial-where"),
    FnCase("np.prod", prod_dtype, (real((2, 3, 2)),), "dtype-tuple"),
    # exact zeros: one in the product; two, one and three in the columns
    FnCase("np.prod", prod_all, (with_zeros((2, 3), (4,)),), "one-zero"),
    FnCase("np.prod", prod_axis_keep, (with_zeros((4, 3), (0, 3, 4, 2, 5, 8)),), "zeros"),
    FnCase("np.prod", prod_axis_keep, (with_zeros((2, 4, 2), (0, 2, 4, 9, 11)),),
           "zeros-3d"),
    FnCase("np.mean", mean_all, (R34,), "all"),
    FnCase("np.mean", mean_keep, (R34,), "keepdims"),
    FnCase("np.mean", mean_tuple_neg, (R234,), "tuple-neg"),
    FnCase("np.mean", mean_dtype, (R34,), "dtype"),
    FnCase("np.max", max_all, (D34,), "all"),
    FnCase("np.max", max_axis, (D34,), "axis"),
    FnCase("np.max", max_keep_neg, (D234,), "neg-keepdims"),
    FnCase("np.max", max_tuple, (D234,), "tuple"),
    FnCase("np.max", max_initial, (D34,), "initial"),
    FnCase("np.max", max_where, (D34, bools((3, 4))), "where"),
    FnCase("np.amax", amax_axis, (D34,), "axis"),
    FnCase("np.amax", amax_keep, (D234,), "tuple-keepdims"),
    FnCase("np.min", min_all, (D34,), "all"),
    FnCase("np.min", min_axis_keep, (D34,), "keepdims"),
    FnCase("np.min", min_initial, (D34,), "initial"),
    FnCase("np.min", min_where, (D34, bools((3, 4))), "where"),
    FnCase("np.amin", amin_axis, (D34,), "axis"),
    FnCase("np.amin", amin_all, (D234,), "all"),
    FnCase("np.var", var_all, (R34,), "all"),
    FnCase("np.var", var_axis_ddof, (R34,), "axis-ddof"),
    FnCase("np.var", var_keep_tuple, (R234,), "tuple-keepdims"),
    FnCase("np.var", var_dtype, (R34,), "dtype"),
    FnCase("np.var", var_correction, (R34,), "correction"),
    FnCase("np.std", std_all, (R34,), "all"),
    FnCase("np.std", std_axis_ddof, (R34,), "axis-ddof"),
    FnCase("np.std", std_keep, (R234,), "keepdims"),
    FnCase("np.std", std_dtype, (R234,), "dtype-tuple"),
    FnCase("np.cumsum", cumsum_flat, (R34,), "flat"),
    FnCase("np.cumsum", cumsum_axis, (R34,), "axis"),
    FnCase("np.cumsum", cumsum_neg, (R234,), "neg"),
    FnCase("np.cumsum", cumsum_dtype, (R34,), "dtype"),
    FnCase("np.argmax", argmax_flat, (D34,), "flat", mode=NONDIFF),
    FnCase("np.argmax", argmax_axis, (D34,), "axis", mode=NONDIFF),
    FnCase("np.argmax", argmax_keep, (D234,), "keepdims", mode=NONDIFF),
    FnCase("np.argmin", argmin_flat, (D34,), "flat", mode=NONDIFF),
    FnCase("np.argmin", argmin_axis, (D34,), "axis", mode=NONDIFF),
    FnCase("np.argmin", argmin_keep, (D234,), "keepdims", mode=NONDIFF),
    # products
    FnCase("np.dot", dot_, (real((3,)), real((3,))), "vec-vec"),
    FnCase("np.dot", dot_, (real((2, 3)), real((3, 4))), "mat-mat"),
    FnCase("np.dot", dot_, (real((2, 3)), real((3,))), "mat-vec"),
    FnCase("np.dot", dot_, (real(()), real((2, 3))), "scalar"),
    FnCase("np.dot", dot_, (real((2, 2, 3)), real((4, 3, 2))), "nd"),
    FnCase("np.outer", outer_, (real((3,)), real((4,))), "vec"),
    FnCase("np.outer", outer_, (real((2, 2)), real((3,))), "flattens"),
    FnCase("np.inner", inner_, (real((3,)), real((3,))), "vec"),
    FnCase("np.inner", inner_, (real((2, 3)), real((4, 3))), "mat"),
    FnCase("np.tensordot", tensordot_2, (R234, real((3, 4, 2))), "axes2"),
    FnCase("np.tensordot", tensordot_1, (R34, real((4, 2))), "axes1"),
    FnCase("np.tensordot", tensordot_lists, (R234, real((4, 2, 3))), "axis-lists"),
    FnCase("np.tensordot", tensordot_0, (real((2,)), real((3,))), "axes0"),
    FnCase("np.trace", trace_, (R34,), "plain"),
    FnCase("np.trace", trace_offset, (R34,), "offset"),
    FnCase("np.trace", trace_axes, (real((2, 3, 3)),), "axes"),
    FnCase("np.trace", trace_dtype, (real((3, 3)),), "dtype"),
    FnCase("np.diagonal", diagonal_, (R34,), "plain"),
    FnCase("np.diagonal", diagonal_offset, (R34,), "offset"),
    FnCase("np.diagonal", diagonal_axes, (real((3, 2, 4)),), "axes"),
    FnCase("np.diag", diag_vec, (real((3,)),), "vec"),
    FnCase("np.diag", diag_vec_k, (real((3,)),), "vec-k"),
    FnCase("np.diag", diag_mat, (R34,), "mat"),
    FnCase("np.diag", diag_mat_k, (R34,), "mat-k"),
    FnCase("np.einsum", einsum_matmul, (real((2, 3)), R34), "matmul"),
    FnCase("np.einsum", einsum_trace, (real((3, 3)),), "ii"),
    FnCase("np.einsum", einsum_colsum, (R34,), "colsum"),
    FnCase("np.einsum", einsum_three, (real((3,)), R34, real((4,))), "bilinear"),
    FnCase("np.einsum", einsum_batch_opt, (real((2, 2, 3)), real((2, 3, 2))), "optimize"),
    FnCase("np.einsum", einsum_ellipsis, (R234, real((4,))), "ellipsis-dot"),
    FnCase("np.einsum", einsum_dtype, (R34, R34), "dtype"),
    FnCase("np.einsum", einsum_sublists, (real((2, 3)), R34), "sublists"),
    FnCase("np.einsum", einsum_sublists_implicit, (R234, real((4,))), "sublists-ellipsis"),
    # joining and shaping
    FnCase("np.concatenate", concatenate_0, (R34, real((2, 4))), "axis0"),
    FnCase("np.concatenate", concatenate_neg, (R34, real((3, 2))), "neg"),
    FnCase("np.concatenate", concatenate_none, (R34, real((5,))), "none"),
    FnCase("np.concatenate", concatenate_dtype, (R34, real((3, 1))), "dtype"),
    FnCase("np.stack", stack_0, (R34, R34), "axis0"),
    FnCase("np.stack", stack_neg, (real((3,)), real((3,)), real((3,))), "neg"),
    FnCase("np.stack", stack_dtype, (real((2,)), real((2,))), "dtype"),
    FnCase("np.hstack", hstack_, (R34, real((3, 2))), "mat"),
    FnCase("np.hstack", hstack_mixed, (real((2,)), real(()), real((3,))), "vec-scalar"),
    FnCase("np.vstack", vstack_, (R34, real((2, 4))), "mat"),
    FnCase("np.vstack", vstack_1d, (real((3,)), real((3,))), "vec"),
    FnCase("np.reshape", reshape_tuple, (real((2, 6)),), "tuple"),
    FnCase("np.reshape", reshape_minus, (R234,), "minus1"),
    FnCase("np.reshape", reshape_int, (R34,), "int"),
    FnCase("np.reshape", reshape_fortran, (R34,), "fortran"),
    FnCase("np.reshape", reshape_keyword, (R34,), "keyword"),
    FnCase("np.ravel", ravel_, (R234,), "C"),
    FnCase("np.ravel", ravel_fortran, (R34,), "F"),
    FnCase("np.transpose", transpose_, (R234,), "reverse"),
    FnCase("np.transpose", transpose_axes, (R234,), "axes"),
    FnCase("np.transpose", transpose_neg, (R234,), "neg"),
    FnCase("np.swapaxes", swapaxes_, (R234,), "plain"),
    FnCase("np.swapaxes", swapaxes_neg, (R234,), "neg"),
    FnCase("np.moveaxis", moveaxis_, (R234,), "int"),
    FnCase("np.moveaxis", moveaxis_lists, (R234,), "lists"),
    FnCase("np.squeeze", squeeze_, (real((1, 3, 1)),), "all"),
    FnCase("np.squeeze", squeeze_axis, (real((1, 3, 1)),), "neg"),
    FnCase("np.squeeze", squeeze_tuple, (real((1, 3, 1, 2)),), "tuple"),
    FnCase("np.expand_dims", expand_dims_, (R34,), "int"),
    FnCase("np.expand_dims", expand_dims_neg, (real((3,)),), "neg"),
    FnCase("np.expand_dims", expand_dims_tuple, (R34,), "tuple"),
    FnCase("np.broadcast_to", broadcast_to_, (real((3, 1)),), "tuple"),
    FnCase("np.broadcast_to", broadcast_to_int, (real(()),), "int"),
    FnCase("np.atleast_1d", atleast_1d_scalar, (real(()),), "scalar"),
    FnCase("np.atleast_1d", atleast_1d_array, (R34,), "array"),
    FnCase("np.atleast_1d", atleast_1d_many, (real(()), real((2,))), "many"),
    FnCase("np.shape", shape_, (R234,), mode=NONDIFF),
    FnCase("np.ndim", ndim_, (R234,), mode=NONDIFF),
    FnCase("np.size", size_, (R234,), mode=NONDIFF),
    FnCase("np.size", size_axis, (R234,), "axis", mode=NONDIFF),
    FnCase("np.copy", copy_, (R34,)),
    FnCase("np.astype", astype_64, (R34,), "float64"),
    # float64 operands rounded to float32: the jvp is float32-accurate
    FnCase("np.astype", astype_32, (R34,), "float32", rtol=1e-4),
    # selection and elementwise helpers
    FnCase("np.where", where_mask, (bools((3, 4)), R34, real((4,))), "broadcast"),
    FnCase("np.where", where_self, (away((3, 4)),), "condition-of-x"),
    FnCase("np.where", where_scalar, (bools((2, 3)), real((2, 3))), "scalar"),
    FnCase("np.clip", clip_both, (avoiding((3, 4), (-1.0, 1.0)),), "both"),
    FnCase("np.clip", clip_lower, (avoiding((3, 4), (0.0,)),), "lower"),
    FnCase("np.clip", clip_keywords, (avoiding((3, 4), (-0.5, 1.0)),), "min-max"),
    FnCase("np.clip", clip_arrays, (cells((3, 4), 1), cells((4,), 0), cells((3, 1), 2)),
           "array-bounds"),
    FnCase("np.round", round_, (frac((3, 4), -0.3, 0.3),), "plain", mode=ZERO_DERIV),
    FnCase("np.round", round_decimals, (frac((3, 4), -0.3, 0.3, 0.1),), "decimals",
           mode=ZERO_DERIV),
    FnCase("np.around", around_, (frac((3, 4), -0.3, 0.3, 0.01),), mode=ZERO_DERIV),
    FnCase("np.zeros_like", zeros_like_, (R34,), "plain", mode=ZERO_DERIV),
    FnCase("np.zeros_like", zeros_like_dtype, (R34,), "dtype", mode=ZERO_DERIV),
    FnCase("np.ones_like", ones_like_, (R34,), "plain", mode=ZERO_DERIV),
    FnCase("np.ones_like", ones_like_shape, (R34,), "shape", mode=ZERO_DERIV),
    FnCase("np.full_like", full_like_, (R34,), "plain", mode=ZERO_DERIV),
    FnCase("np.full_like", full_like_dtype, (R34,), "dtype", mode=ZERO_DERIV),
    FnCase("np.full_like", full_like_shape, (R34,), "shape", mode=ZERO_DERIV),
    # np.linalg
    FnCase("np.linalg.solve", solve_, (square(3), real((3,))), "vec"),
    FnCase("np.linalg.solve", solve_, (square(3), real((3, 2))), "mat"),
    FnCase("np.linalg.solve", solve_, (square(3, (2,)), real((2, 3, 2))), "batch"),
    FnCase("np.linalg.inv", inv_, (square(3),), "mat"),
    FnCase("np.linalg.inv", inv_, (square(2, (3,)),), "batch"),
    FnCase("np.linalg.det", det_, (square(3),), "mat"),
    FnCase("np.linalg.det", det_, (diagdom(3, (2,), negative=True),), "batch-negative"),
    FnCase("np.linalg.slogdet", slogdet_, (square(3),), "mat"),
    FnCase("np.linalg.slogdet", slogdet_, (diagdom(2, (3,), negative=True),), "batch-negative"),
    FnCase("np.linalg.slogdet", slogdet_logabsdet, (square(3),), "by-name"),
    FnCase("np.linalg.slogdet", slogdet_sign, (diagdom(2, (3,), negative=True),), "sign-by-name"),
    FnCase("np.linalg.cholesky", cholesky_, (spd(3),), "lower"),
    FnCase("np.linalg.cholesky", cholesky_, (spd(2, (2,)),), "batch"),
    FnCase("np.linalg.cholesky", cholesky_upper, (spd(3),), "upper"),
    FnCase("np.linalg.norm", norm_default, (R34,), "default"),
    FnCase("np.linalg.norm", norm_nd, (R234,), "nd"),
    FnCase("np.linalg.norm", norm_vec_keep, (R34,), "axis-keepdims"),
    FnCase("np.linalg.norm", norm_keep_all, (R34,), "keepdims"),
    *[FnCase("np.linalg.norm", norm_vec_ord, (away((5,)), const(p)), f"vec-{p}")
      for p in (2, 1, 3, 0.5, -1)],
    *[FnCase("np.linalg.norm", norm_vec_ord, (distinct((5,)), const(p)), f"vec-{p}")
      for p in (np.inf, -np.inf)],
    FnCase("np.linalg.norm", norm_vec_ord, (away((5,)), const(0)), "vec-0", mode=ZERO_DERIV),
    *[FnCase("np.linalg.norm", norm_vec_axis, (distinct((3, 4)), const(p)), f"axis-{p}")
      for p in (None, 1, np.inf, 2.5)],
    *[FnCase("np.linalg.norm", norm_mat_ord, (away((3, 4)), const(p)), f"mat-{p}")
      for p in (None, "fro", 1, -1, np.inf, -np.inf)],
    *[FnCase("np.linalg.norm", norm_mat_axes, (away((3, 2, 4)), const(p)), f"mat-axes-{p}")
      for p in ("fro", 1, -np.inf)],
    FnCase("np.linalg.norm", norm_mat_keep, (R234,), "mat-keepdims"),
    # unary ufuncs, on a scalar, a vector and a matrix
    *[FnCase(name, fun, (gen(s),), f"{len(s)}d") for name, fun, gen in (
        ("np.absolute", absolute_, away), ("np.fabs", fabs_, away),
        ("np.negative", negative_, real), ("np.positive", positive_, real),
        ("np.exp", exp_, real), ("np.exp2", exp2_, real), ("np.expm1", expm1_, real),
        ("np.log", log_, pos), ("np.log2", log2_, pos), ("np.log10", log10_, pos),
        ("np.log1p", log1p_, pos), ("np.sqrt", sqrt_, pos), ("np.square", square_, real),
        ("np.reciprocal", reciprocal_, away), ("np.sin", sin_, real), ("np.cos", cos_, real),
        ("np.arctan", arctan_, real), ("np.sinh", sinh_, real),
        ("np.cosh", cosh_, real), ("np.tanh", tanh_, real), ("np.degrees", degrees_, real),
        ("np.rad2deg", rad2deg_, real), ("np.radians", radians_, real),
        ("np.deg2rad", deg2rad_, real))
      for s in ((), (3,), (2, 3))],
    *[FnCase(name, fun, (real(s, -0.8, 0.8),), f"{len(s)}d") for name, fun in (
        ("np.arcsin", arcsin_), ("np.arccos", arccos_)) for s in ((), (2, 3))],
    *[FnCase("np.tan", tan_, (real(s, -1.2, 1.2),), f"{len(s)}d") for s in ((), (2, 3))],
    *[FnCase(name, fun, (gen,), mode=ZERO_DERIV) for name, fun, gen in (
        ("np.sign", sign_, away((2, 3))), ("np.floor", floor_, frac((2, 3), 0.2, 0.8)),
        ("np.ceil", ceil_, frac((2, 3), 0.2, 0.8)), ("np.rint", rint_, frac((2, 3), -0.3, 0.3)))],
    FnCase("np.isfinite", isfinite_, (traced(with_nonfinite((2, 3))),), mode=NONDIFF),
    FnCase("np.logical_not", logical_not_, (traced(grid((2, 3))),), mode=NONDIFF),
]

# binary ufuncs, over broadcasting shapes: equal, (3, 1) with (4,), an array
# with a scalar, a scalar with an array
BROADCAST = (((2, 3), (2, 3)), ((3, 1), (4,)), ((2, 3), ()), ((), (3,)))


def _binary_cases(name, fun, gen_x, gen_y, mode="diff", shapes=BROADCAST):
    return [FnCase(name, fun, (gen_x(sx), gen_y(sy)),
                   f"{'x'.join(map(str, sx)) or 's'}_{'x'.join(map(str, sy)) or 's'}", mode=mode)
            for sx, sy in shapes]


def _near_one(shape):
    return pos(shape, 0.97, 1.03)


def _off_integers(shape):
    return frac(shape, 0.3, 0.7)


def _cells0(shape):
    return cells(shape, 0)


def _cells1(shape):
    return cells(shape, 1)


def _grid_traced(shape):
    return traced(grid(shape))


for _name, _fun, _gx, _gy, _mode in (
        ("np.add", add_, real, real, "diff"),
        ("np.subtract", subtract_, real, real, "diff"),
        ("np.multiply", multiply_, real, real, "diff"),
        ("np.divide", divide_, real, away, "diff"),
        ("np.power", power_, pos, real, "diff"),
        ("np.float_power", float_power_, pos, real, "diff"),
        ("np.arctan2", arctan2_, away, away, "diff"),
        ("np.hypot", hypot_, away, away, "diff"),
        ("np.logaddexp", logaddexp_, real, real, "diff"),
        ("np.maximum", maximum_, _cells0, _cells1, "diff"),
        ("np.minimum", minimum_, _cells1, _cells0, "diff"),
        ("np.fmax", fmax_, _cells0, _cells1, "diff"),
        ("np.fmin", fmin_, _cells1, _cells0, "diff"),
        ("np.remainder", remainder_, _off_integers, _near_one, "diff"),
        ("np.floor_divide", floor_divide_, _off_integers, _near_one, ZERO_DERIV),
        ("np.less", less_, _grid_traced, _grid_traced, NONDIFF),
        ("np.less_equal", less_equal_, _grid_traced, _grid_traced, NONDIFF),
        ("np.greater", greater_, _grid_traced, _grid_traced, NONDIFF),
        ("np.greater_equal", greater_equal_, _grid_traced, _grid_traced, NONDIFF),
        ("np.equal", equal_, _grid_traced, _grid_traced, NONDIFF),
        ("np.not_equal", not_equal_, _grid_traced, _grid_traced, NONDIFF),
        ("np.logical_and", logical_and_, _grid_traced, _grid_traced, NONDIFF),
        ("np.logical_or", logical_or_, _grid_traced, _grid_traced, NONDIFF),
        ("np.logical_xor", logical_xor_, _grid_traced, _grid_traced, NONDIFF)):
    CASES += _binary_cases(_name, _fun, _gx, _gy, _mode)

CASES += [
    # a Python number operand keeps its weak type: float32 stays float32
    FnCase("np.power", power_, (real((2, 3)), const(3)), "int-exponent"),
    FnCase("np.power", power_, (pos((2, 3)), const(0.5)), "float-exponent"),
    FnCase("np.multiply", multiply_, (const(2.5), real((2, 3))), "python-float"),
    # a NumPy float64 scalar and an integer array are strong: float32 operands give float64
    FnCase("np.multiply", multiply_, (real((2, 3)), const(np.float64(2.5))), "numpy-scalar"),
    FnCase("np.add", add_, (real((2, 3)), ints([1, -2, 3])), "int-array"),
    FnCase("np.power", power_, (real((2, 3)), ints([2, 3, 1])), "int-array-exponent"),
    FnCase("np.float_power", float_power_, (real((2, 3)), const(2)), "int-exponent"),
    FnCase("np.remainder", remainder_, (_off_integers((2, 3)), traced(const(-1.5))),
           "negative-divisor"),
    # NaN operands: fmax and fmin give the other operand (and its derivative)
    FnCase("np.fmax", fmax_, (with_nan((2, 3), (0, 4)), with_nan((2, 3), (1,))), "nan"),
    FnCase("np.fmin", fmin_, (with_nan((3,), (2,)), with_nan((2, 3), (0, 3))), "nan"),
    FnCase("np.logical_and", logical_and_, (bools((2, 3)), traced(grid((2, 3)))), "mask",
           mode=NONDIFF),
    FnCase("np.matmul", matmul_, (real((2, 3)), R34), "mat"),
    FnCase("np.matmul", matmul_, (real((3,)), R34), "vec-mat"),
    FnCase("np.matmul", matmul_, (R34, real((4,))), "mat-vec"),
    FnCase("np.matmul", matmul_, (real((4,)), real((4,))), "vec-vec"),
    FnCase("np.matmul", matmul_, (real((2, 1, 2, 3)), real((3, 3, 2))), "broadcast-batch"),
]
