"""Function-table cases for the math family (``wengert.primitives.numpy_math``
and the math entries of ``numpy.ufuncs``/``numpy.functions``): elementwise
math, ``linspace``, ``interp``, ``convolve``/``correlate``, ``polyval``,
``trapezoid``, ``ptp``, ``average``, the NaN-ignoring reductions and the
products (``outer``, ``inner``, ``vdot``, ``tensordot``, ``einsum``)."""
from __future__ import annotations

import numpy as np

from cases import Arg, away, const, ints, pos, real
from fn_cases import FnCase


# --- operand generators ----------------------------------------------------
def _floats(shape, dt, values):
    return np.asarray(values, dt).reshape(shape)


def with_nans(shape, count=2):
    """Differentiated values with NaN at ``count`` entries (the first slots of
    each row, so no slice along the last axis is all NaN)."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, count, replace=False)] = np.nan
        if x.ndim == 2:       # keep every row and column with a number in it
            x[np.arange(min(x.shape)), np.arange(min(x.shape))] = rng.uniform(-2, 2)
        return _floats(shape, dt, x)
    return Arg(draw, f"nans{shape}")


def nonfinite(shape):
    """Differentiated values with a NaN, an inf and a -inf entry."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
        return _floats(shape, dt, x)
    return Arg(draw, f"nonfinite{shape}")


def cells_nan(shape, offset, nan_at):
    """``2k + offset + U(0, 0.8)`` (two operands with offsets 0 and 1 never
    tie) with NaN at the flat positions ``nan_at``."""
    def draw(rng, dt):
        k = rng.integers(-2, 2, shape)
        x = 2.0 * k + offset + rng.uniform(0.0, 0.8, shape)
        x.reshape(-1)[list(nan_at)] = np.nan
        return _floats(shape, dt, x)
    return Arg(draw, f"cellsnan{offset}{shape}")


def near_zero(shape):
    """Values with exact zeros and tiny ones (sinc's removable singularity)."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[:3] = [0.0, 1e-9, -0.01]
        return _floats(shape, dt, x)
    return Arg(draw, f"nearzero{shape}")


def increasing(n, lo=0.0, diff=False):
    """Sample points in increasing order, gaps in [0.5, 1.5]."""
    return Arg(lambda rng, dt: _floats((n,), dt, lo + np.cumsum(rng.uniform(0.5, 1.5, n))),
               f"increasing({n})", diff=diff)


# --- elementwise ------------------------------------------------------------
def arcsinh_(x):
    return np.arcsinh(x)


def arccosh_(x):
    return np.arccosh(x)


def arctanh_(x):
    return np.arctanh(x)


def cbrt_(x):
    return np.cbrt(x)


def log2_(x):
    return np.log2(x)


def log10_(x):
    return np.log10(x)


def exp2_(x):
    return np.exp2(x)


def square_(x):
    return np.square(x)


def reciprocal_(x):
    return np.reciprocal(x)


def reciprocal_int(x, n):
    # NumPy's integer reciprocal: 1 / 2 is 0 (n not differentiated)
    return x * np.reciprocal(n)


def deg2rad_(x):
    return np.deg2rad(x)


def rad2deg_(x):
    return np.rad2deg(x)


def degrees_(x):
    return np.degrees(x)


def radians_(x):
    return np.radians(x)


def sinc_(x):
    return np.sinc(x)


def logaddexp2_(x, y):
    return np.logaddexp2(x, y)


def hypot_(x, y):
    return np.hypot(x, y)


def hypot_scaled(x, y):
    # no overflow of x*x: the value and its derivative at 1e200 are finite
    return np.hypot(x * 1e200, y * 1e200) * 1e-200


def float_power_(x, y):
    return np.float_power(x, y)


def float_power_int(x, n):
    # integers to negative powers: floats, as float_power computes in float64
    return x * np.float_power(n, -1)


def fmax_(x, y):
    return np.fmax(x, y)


def fmin_(x, y):
    return np.fmin(x, y)


def nan_to_num_(x):
    return np.nan_to_num(x)


def nan_to_num_fills(x):
    return np.nan_to_num(x, nan=1.5, posinf=10.0, neginf=-10.0)


def clip_(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_lo_only(x, lo):
    return np.clip(x, lo, None)


def clip_hi_only(x, hi):
    return np.clip(x, None, hi)


def clip_keywords(x, lo, hi):
    return np.clip(x, min=lo, max=hi)


_UNARY = [
    ("np.arcsinh", arcsinh_, real((2, 3), -3.0, 3.0)),
    ("np.arccosh", arccosh_, pos((2, 3), 1.2, 3.0)),
    ("np.arctanh", arctanh_, real((2, 3), -0.9, 0.9)),
    ("np.cbrt", cbrt_, away((2, 3))),
    ("np.log2", log2_, pos((2, 3), 0.3, 3.0)),
    ("np.log10", log10_, pos((2, 3), 0.3, 3.0)),
    ("np.exp2", exp2_, real((2, 3))),
    ("np.square", square_, real((2, 3))),
    ("np.reciprocal", reciprocal_, away((2, 3))),
    ("np.deg2rad", deg2rad_, real((2, 3), -180.0, 180.0)),
    ("np.rad2deg", rad2deg_, real((2, 3))),
    ("np.degrees", degrees_, real((2, 3))),
    ("np.radians", radians_, real((2, 3), -180.0, 180.0)),
    ("np.sinc", sinc_, real((2, 3))),
]

CASES = [FnCase(name, fun, (arg,)) for name, fun, arg in _UNARY] + [
    FnCase("np.arcsinh", arcsinh_, (real((), -3.0, 3.0),), id="scalar"),
    FnCase("np.sinc", sinc_, (near_zero((2, 3)),), id="at_zero"),
    FnCase("np.reciprocal", reciprocal_int, (real((4,)), ints([1, -1, 2, -3])), id="int"),
    FnCase("np.logaddexp2", logaddexp2_, (real((3, 1)), real((4,)))),
    FnCase("np.logaddexp2", logaddexp2_, (real((2, 3), 900.0, 1000.0), real(())),
           id="large", dtypes=(np.float64,)),
    FnCase("np.hypot", hypot_, (real((3, 1)), real((4,)))),
    FnCase("np.hypot", hypot_, (real((2, 3)), const(1.5)), id="pyfloat"),
    FnCase("np.hypot", hypot_scaled, (real((2, 3)), real(())), id="large",
           dtypes=(np.float64,)),
    FnCase("np.fmax", fmax_, (cells_nan((2, 3), 0, (0, 4)), cells_nan((2, 3), 1, (1, 5)))),
    FnCase("np.fmin", fmin_, (cells_nan((2, 3), 1, (0, 4)), cells_nan((2, 3), 0, (1, 5)))),
    FnCase("np.fmax", fmax_, (cells_nan((3, 1), 0, (1,)), cells_nan((4,), 1, ())),
           id="broadcast"),
    FnCase("np.fmin", fmin_, (cells_nan((3, 1), 1, ()), cells_nan((4,), 0, (2,))),
           id="broadcast"),
    FnCase("np.float_power", float_power_, (pos((3, 1)), real((4,)))),
    FnCase("np.float_power", float_power_int, (real((4,)), ints([1, -2, 4, 5])), id="int"),
    FnCase("np.nan_to_num", nan_to_num_, (nonfinite((2, 3)),)),
    FnCase("np.nan_to_num", nan_to_num_fills, (nonfinite((5,)),), id="fills"),
    FnCase("np.clip", clip_, (real((2, 3)), const(-0.5), const(0.7))),
    FnCase("np.clip", clip_, (real((2, 3)), real((3,), -1.0, -0.2), real((2, 1), 0.2, 1.0)),
           id="arrays"),
    FnCase("np.clip", clip_lo_only, (real((2, 3)), const(0.1)), id="lo_only"),
    FnCase("np.clip", clip_hi_only, (real((2, 3)), real((3,), -0.5, 0.5)), id="hi_only"),
    FnCase("np.clip", clip_keywords, (real((4,)), const(-0.5), const(0.5)), id="keywords"),
]


# --- linspace -----------------------------------------------------------------
def linspace_(a, b):
    return np.linspace(a, b, 5)


def linspace_open(a, b):
    return np.linspace(a, b, 4, endpoint=False)


def linspace_retstep(a, b):
    return np.linspace(a, b, 6, retstep=True)


def linspace_axis1(a, b):
    return np.linspace(a, b, 4, axis=1)


def linspace_axis_neg(a, b):
    return np.linspace(a, b, 3, axis=-1)


def linspace_one(a, b):
    return np.linspace(a, b, 1)


def linspace_from_pyfloat(b):
    return np.linspace(0.5, b, 5)


def linspace_dtype(a, b):
    return np.linspace(a, b, 5, dtype=np.float32)


CASES += [
    FnCase("np.linspace", linspace_, (real(()), real(()))),
    FnCase("np.linspace", linspace_open, (real(()), real(())), id="open"),
    FnCase("np.linspace", linspace_retstep, (real((2,)), real((2,))), id="retstep"),
    FnCase("np.linspace", linspace_axis1, (real((3,)), real((2, 1))), id="axis1"),
    FnCase("np.linspace", linspace_axis_neg, (real((2, 2)), real(())), id="axis-1"),
    FnCase("np.linspace", linspace_one, (real(()), real(())), id="num1"),
    FnCase("np.linspace", linspace_from_pyfloat, (real(()),), id="pyfloat_start"),
    # a float32 result from float64 operands: finite differences see float32 rounding
    FnCase("np.linspace", linspace_dtype, (real(()), real(())), id="dtype", rtol=1e-4),
]


# --- interp ---------------------------------------------------------------------
def interp_(x, fp):
    return np.interp(x, [0.0, 1.0, 1.5, 3.0], fp)


def interp_points(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_left_right(x, fp, left, right):
    return np.interp(x, [0.0, 1.0, 1.5, 3.0], fp, left=left, right=right)


def interp_period(x, fp):
    return np.interp(x, [0.3, 2.0, 1.1, 2.4], fp, period=2.5)


def interp_one(x, fp):
    return np.interp(x, [1.0], fp)


CASES += [
    # x partly outside [0, 3]: fp[0] and fp[-1] there
    FnCase("np.interp", interp_, (real((2, 3), -0.5, 3.5), real((4,)))),
    FnCase("np.interp", interp_points, (real((7,), 0.0, 6.0), increasing(5), real((5,))),
           id="drawn_points"),
    FnCase("np.interp", interp_points, (real((7,), 0.0, 6.0), increasing(5, diff=True),
                                        real((5,))), id="drawn_points_differentiated"),
    FnCase("np.interp", interp_left_right, (real((5,), -1.0, 4.0), real((4,)), real(()),
                                            const(7.0)), id="left_right"),
    FnCase("np.interp", interp_period, (real((2, 3), -4.0, 6.0), real((4,))), id="period"),
    FnCase("np.interp", interp_one, (real((3,), 0.0, 2.0), real((1,))), id="one_point"),
]


# --- convolve, correlate ------------------------------------------------------------
def convolve_(a, v):
    return np.convolve(a, v)


def convolve_same(a, v):
    return np.convolve(a, v, mode="same")


def convolve_valid(a, v):
    return np.convolve(a, v, "valid")


def correlate_(a, v):
    return np.correlate(a, v)


def correlate_same(a, v):
    return np.correlate(a, v, mode="same")


def correlate_full(a, v):
    return np.correlate(a, v, "full")


_SIZES = ((6, 3), (3, 5), (4, 4), (2, 5))
for _name, _funs in (("np.convolve", (convolve_, convolve_same, convolve_valid)),
                     ("np.correlate", (correlate_, correlate_same, correlate_full))):
    for _fun in _funs:
        for _n, _m in _SIZES:
            CASES.append(FnCase(_name, _fun, (real((_n,)), real((_m,))),
                                id=f"{_fun.__name__}_{_n}_{_m}"))
CASES.append(FnCase("np.convolve", convolve_, (real(()), real((3,))), id="scalar"))


# --- polyval, trapezoid, ptp, average ----------------------------------------------
def polyval_(p, x):
    return np.polyval(p, x)


def polyval_list(a, b, c, x):
    return np.polyval([a, b, c], x)


def polyval_fixed_x(p):
    return np.polyval(p, 0.7)


def trapezoid_(y):
    return np.trapezoid(y)


def trapezoid_x(y, x):
    return np.trapezoid(y, x)


def trapezoid_x2d(y, x):
    return np.trapezoid(y, x, axis=0)


def trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx, axis=0)


def ptp_(a):
    return np.ptp(a)


def ptp_axis(a):
    return np.ptp(a, axis=-1, keepdims=True)


def ptp_axis0(a):
    return np.ptp(a, 0)


def average_(a):
    return np.average(a)


def average_weights(a, w):
    return np.average(a, axis=1, weights=w)


def average_full_weights(a, w):
    return np.average(a, weights=w, returned=True)


def average_returned(a):
    return np.average(a, axis=0, returned=True)


def average_keepdims(a, w):
    return np.average(a, axis=-1, weights=w, keepdims=True)


CASES += [
    FnCase("np.polyval", polyval_, (real((4,)), real((2, 3)))),
    FnCase("np.polyval", polyval_list, (real(()), real(()), real(()), real((3,))), id="list"),
    FnCase("np.polyval", polyval_fixed_x, (real((3,)),), id="pyfloat_x"),
    FnCase("np.trapezoid", trapezoid_, (real((2, 5)),)),
    FnCase("np.trapezoid", trapezoid_x, (real((2, 5)), increasing(5)), id="x"),
    FnCase("np.trapezoid", trapezoid_x, (real((5,)), real((5,))), id="x_traced"),
    FnCase("np.trapezoid", trapezoid_x2d, (real((4, 3)), real((4, 3))), id="x2d_axis0"),
    FnCase("np.trapezoid", trapezoid_dx, (real((4, 3)), pos(())), id="dx"),
    FnCase("np.ptp", ptp_, (real((3, 4)),)),
    FnCase("np.ptp", ptp_axis, (real((3, 4)),), id="axis-1_keepdims"),
    FnCase("np.ptp", ptp_axis0, (real((3, 4)),), id="axis0"),
    FnCase("np.average", average_, (real((3, 4)),)),
    FnCase("np.average", average_weights, (real((3, 4)), pos((4,))), id="weights1d"),
    FnCase("np.average", average_full_weights, (real((3, 4)), pos((3, 4))),
           id="weights_returned"),
    FnCase("np.average", average_returned, (real((3, 4)),), id="returned"),
    FnCase("np.average", average_keepdims, (real((3, 4)), pos((3, 4))), id="keepdims"),
]


# --- NaN-ignoring reductions ------------------------------------------------------
def nansum_(a):
    return np.nansum(a)


def nansum_axis(a):
    return np.nansum(a, axis=0, keepdims=True)


def nanmean_(a):
    return np.nanmean(a, axis=1)


def nanmean_all(a):
    return np.nanmean(a)


def nanvar_(a):
    return np.nanvar(a, axis=0)


def nanvar_ddof(a):
    return np.nanvar(a, ddof=1)


def nanstd_(a):
    return np.nanstd(a, axis=-1, keepdims=True)


def nanstd_all(a):
    return np.nanstd(a, ddof=1)


def nanmax_(a):
    return np.nanmax(a, axis=1)


def nanmax_all(a):
    return np.nanmax(a)


def nanmin_(a):
    return np.nanmin(a, axis=0, keepdims=True)


def nanprod_(a):
    return np.nanprod(a, axis=1)


def nancumsum_(a):
    return np.nancumsum(a, axis=1)


def nancumsum_flat(a):
    return np.nancumsum(a)


CASES += [
    FnCase("np.nansum", nansum_, (with_nans((3, 4)),)),
    FnCase("np.nansum", nansum_axis, (with_nans((3, 4)),), id="axis0_keepdims"),
    FnCase("np.nanmean", nanmean_, (with_nans((3, 4)),)),
    FnCase("np.nanmean", nanmean_all, (with_nans((3, 4)),), id="all"),
    FnCase("np.nanvar", nanvar_, (with_nans((3, 4)),)),
    FnCase("np.nanvar", nanvar_ddof, (with_nans((3, 4)),), id="ddof1"),
    FnCase("np.nanstd", nanstd_, (with_nans((3, 4)),)),
    FnCase("np.nanstd", nanstd_all, (with_nans((3, 4)),), id="ddof1"),
    FnCase("np.nanmax", nanmax_, (with_nans((3, 4)),)),
    FnCase("np.nanmax", nanmax_all, (with_nans((3, 4)),), id="all"),
    FnCase("np.nanmin", nanmin_, (with_nans((3, 4)),)),
    FnCase("np.nanprod", nanprod_, (with_nans((3, 4)),)),
    FnCase("np.nancumsum", nancumsum_, (with_nans((3, 4)),)),
    FnCase("np.nancumsum", nancumsum_flat, (with_nans((3, 4)),), id="flat"),
]


# --- products -------------------------------------------------------------------
def outer_(a, b):
    return np.outer(a, b)


def inner_(a, b):
    return np.inner(a, b)


def vdot_(a, b):
    return np.vdot(a, b)


def tensordot_int(a, b):
    return np.tensordot(a, b, axes=1)


def tensordot_two(a, b):
    return np.tensordot(a, b)


def tensordot_zero(a, b):
    return np.tensordot(a, b, 0)


def tensordot_pair(a, b):
    return np.tensordot(a, b, axes=(0, 1))


def tensordot_lists(a, b):
    return np.tensordot(a, b, axes=([0, 2], [1, 0]))


def tensordot_negative(a, b):
    return np.tensordot(a, b, axes=([-1], [-2]))


def einsum_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b)


def einsum_implicit(a, b):
    return np.einsum("ij,jk", a, b)


def einsum_sublist(a, b):
    return np.einsum(a, [0, 1], b, [1, 2], [0, 2])


def einsum_sublist_implicit(a, b):
    return np.einsum(a, [0, 1], b, [1, 2])


def einsum_sublist_ellipsis(a, b):
    return np.einsum(a, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2])


def einsum_three(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c, optimize=True)


def einsum_four(a, b, c, d):
    return np.einsum("i,ij,jk,k->", a, b, c, d, optimize="greedy")


def einsum_ellipsis(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)


def einsum_diag(a):
    return np.einsum("ii->i", a)


def einsum_trace(a):
    return np.einsum("ii", a)


def einsum_repeated_mixed(a, b):
    return np.einsum("iij,j->i", a, b)


def einsum_batched_diag(t):
    return np.einsum("...ii->...i", t)


def einsum_shared_index(a, b, c):
    return np.einsum("i,i,i->", a, b, c)


def einsum_sublist_diag(t):
    return np.einsum(t, [0, 1, 1], [0])


def einsum_permute(a):
    return np.einsum("ijk->kij", a)


def einsum_sum(a):
    return np.einsum("ij->", a, optimize=False)


CASES += [
    FnCase("np.outer", outer_, (real((3,)), real((2, 2)))),
    FnCase("np.inner", inner_, (real((2, 3)), real((4, 3)))),
    FnCase("np.inner", inner_, (real((3,)), real((3,))), id="vectors"),
    FnCase("np.vdot", vdot_, (real((2, 3)), real((3, 2)))),
    FnCase("np.tensordot", tensordot_int, (real((2, 3)), real((3, 4))), id="int1"),
    FnCase("np.tensordot", tensordot_two, (real((2, 3, 4)), real((3, 4, 2))), id="default2"),
    FnCase("np.tensordot", tensordot_zero, (real((2,)), real((3,))), id="int0"),
    FnCase("np.tensordot", tensordot_pair, (real((3, 2)), real((4, 3))), id="pair"),
    FnCase("np.tensordot", tensordot_lists, (real((2, 3, 4)), real((4, 2, 5))), id="lists"),
    FnCase("np.tensordot", tensordot_negative, (real((2, 3)), real((3, 4))), id="negative"),
    FnCase("np.einsum", einsum_matmul, (real((2, 3)), real((3, 4)))),
    FnCase("np.einsum", einsum_implicit, (real((2, 3)), real((3, 4))), id="implicit"),
    FnCase("np.einsum", einsum_sublist, (real((2, 3)), real((3, 4))), id="sublist"),
    FnCase("np.einsum", einsum_sublist_implicit, (real((2, 3)), real((3, 4))),
           id="sublist_implicit"),
    FnCase("np.einsum", einsum_sublist_ellipsis, (real((5, 2, 3)), real((3, 4))),
           id="sublist_ellipsis"),
    FnCase("np.einsum", einsum_three, (real((2, 3)), real((3, 4)), real((4, 2))), id="three"),
    FnCase("np.einsum", einsum_four, (real((2,)), real((2, 3)), real((3, 4)), real((4,))),
           id="four"),
    FnCase("np.einsum", einsum_ellipsis, (real((5, 2, 3)), real((1, 3, 2))), id="ellipsis"),
    FnCase("np.einsum", einsum_diag, (real((3, 3)),), id="diagonal"),
    FnCase("np.einsum", einsum_trace, (real((3, 3)),), id="trace"),
    FnCase("np.einsum", einsum_repeated_mixed, (real((3, 3, 2)), real((2,))),
           id="repeated_mixed"),
    FnCase("np.einsum", einsum_sum, (real((2, 3)),), id="sum"),
    FnCase("np.einsum", einsum_batched_diag, (real((2, 3, 3)),), id="ellipsis_diagonal"),
    FnCase("np.einsum", einsum_shared_index, (real((3,)), real((3,)), real((3,))),
           id="three_shared"),
    FnCase("np.einsum", einsum_sublist_diag, (real((2, 3, 3)),), id="sublist_diagonal"),
    FnCase("np.einsum", einsum_permute, (real((2, 3, 4)),), id="permute"),
]
