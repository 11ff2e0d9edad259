"""Function-table cases for the shape and arrangement family
(``wengert/numpy/shapes.py`` and ``numpy.select``): running
products, repeating, tiling, rolling, flipping, padding, splitting,
sorting, gathering and selecting."""
from __future__ import annotations

import numpy as np

from cases import F64, NONDIFF, Arg, ints, real  # noqa: F401
from wengert.numpy.shapes import _CROSS_2D as CROSS_2D
from fn_cases import FnCase

ONE = (F64,)            # the extra cases of a function: float64 only (float32 is the first's)


# --- operands ----------------------------------------------------------
def with_zeros(shape, count=2):
    """Real values with ``count`` exact zeros (a running product's
    derivative must stay finite and right there)."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[rng.choice(x.size, count, replace=False)] = 0.0
        return x.astype(dt)
    return Arg(draw, f"zeros{count}{shape}")


def distinct(shape, gap=0.1):
    """Values at least ``gap`` apart, shuffled: a sort's order is the same
    under the finite-difference step."""
    def draw(rng, dt):
        n = int(np.prod(shape))
        vals = -2.0 + gap * np.arange(n) + rng.uniform(0.0, 0.3 * gap, n)
        return rng.permutation(vals).reshape(shape).astype(dt)
    return Arg(draw, f"distinct{shape}")


def pieces(shape):
    """Values in (-1.6, -0.2), (0.2, 0.8) or (1.2, 1.8): away from the
    breakpoints 0 and 1 of the piecewise cases."""
    def draw(rng, dt):
        lo = rng.choice([-1.6, -1.0, 0.2, 1.2], shape)
        return (lo + rng.uniform(0.0, 0.6, shape)).astype(dt)
    return Arg(draw, f"pieces{shape}")


def increasing(n, lo=0.2, hi=1.0):
    """Coordinates: steps in [lo, hi] from -1 (uneven spacing)."""
    def draw(rng, dt):
        return (-1.0 + np.cumsum(rng.uniform(lo, hi, n))).astype(dt)
    return Arg(draw, f"increasing({n})")


def index_array(values):
    return ints(values)


# --- cumprod -----------------------------------------------------------
def cumprod_axis1(x):
    return np.cumprod(x, axis=1)


def cumprod_flat(x):
    return np.cumprod(x)


def cumprod_neg_axis(x):
    return np.cumprod(x, axis=-3)


# --- repeat, tile, kron ------------------------------------------------
def repeat_int(x):
    return np.repeat(x, 2)


def repeat_each_axis0(x):
    return np.repeat(x, [2, 0, 1], axis=0)


def repeat_neg_axis(x):
    return np.repeat(x, 3, axis=-1)


def tile_tuple(x):
    return np.tile(x, (2, 1, 3))


def tile_int(x):
    return np.tile(x, 2)


def kron_(a, b):
    return np.kron(a, b)


# --- roll, rollaxis, flip, rot90 ---------------------------------------
def roll_flat(x):
    return np.roll(x, 5)


def roll_tuple(x):
    return np.roll(x, (1, -2, 3), axis=(0, 1, 1))


def roll_axis(x):
    return np.roll(x, -1, axis=-1)


def rollaxis_(x):
    return np.rollaxis(x, 2)


def rollaxis_start(x):
    return np.rollaxis(x, 0, 2)


def flip_all(x):
    return np.flip(x)


def flip_axes(x):
    return np.flip(x, axis=(0, -1))


def flip_one(x):
    return np.flip(x, 1)


def fliplr_(x):
    return np.fliplr(x)


def flipud_(x):
    return np.flipud(x)


def rot90_(x):
    return np.rot90(x)


def rot90_k3_axes(x):
    return np.rot90(x, 3, axes=(2, 0))


def rot90_k2(x):
    return np.rot90(x, -2)


# --- tril, triu --------------------------------------------------------
def tril_(x):
    return np.tril(x)


def tril_k(x):
    return np.tril(x, -1)


def triu_(x):
    return np.triu(x)


def triu_k(x):
    return np.triu(x, k=2)


def triu_vector(x):
    return np.triu(x, 1)


# --- diff, gradient ----------------------------------------------------
def diff_(x):
    return np.diff(x)


def diff_n2_axis0(x):
    return np.diff(x, n=2, axis=0)


def diff_pend(x, p):
    return np.diff(x, axis=1, prepend=0.5, append=p)


def gradient_all(x):
    return np.gradient(x)


def gradient_spacing_order2(x):
    return np.gradient(x, 0.5, edge_order=2)


def gradient_axis(x):
    return np.gradient(x, 2.0, axis=-1)


def gradient_two_spacings(x):
    return np.gradient(x, 0.5, 0.25, axis=(1, 0), edge_order=2)


def gradient_coords(x, c):
    return np.gradient(x, c, axis=0)


def gradient_coords_order2(x, c0, c1):
    return np.gradient(x, c0, c1, edge_order=2)


def gradient_traced_spacing(x, h):
    return np.gradient(x, h, edge_order=2, axis=0)


def gradient_fixed_coords(x):
    return np.gradient(x, np.array([0.0, 0.5, 1.5, 1.75]), 2.0, edge_order=2)


# --- cross -------------------------------------------------------------
def cross3(a, b):
    return np.cross(a, b)


def cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=1, axisc=0)


def cross_axis(a, b):
    return np.cross(a, b, axis=0)


def cross2(a, b):
    return np.cross(a, b)


def cross_2_3(a, b):
    return np.cross(a, b)


# --- split family ------------------------------------------------------
def split_int(x):
    return np.split(x, 2, axis=1)


def split_points(x):
    return np.split(x, [1, 3, 10])


def array_split_uneven(x):
    return np.array_split(x, 3, axis=-1)


def array_split_points(x):
    return np.array_split(x, [2, -1], axis=1)


def hsplit_(x):
    return np.hsplit(x, 2)


def hsplit_1d(x):
    return np.hsplit(x, [1, 4])


def vsplit_(x):
    return np.vsplit(x, [1])


def dsplit_(x):
    return np.dsplit(x, 2)


# --- atleast -----------------------------------------------------------
def atleast_1d_several(x):
    return np.atleast_1d(x[0, 0], x)


def atleast_2d_several(x):
    return np.atleast_2d(x[0, 0], x[0], x)


def atleast_3d_several(x):
    return np.atleast_3d(x[0, 0], x[0], x)


def atleast_3d_one(x):
    return np.atleast_3d(x)


# --- meshgrid ----------------------------------------------------------
def meshgrid_xy(a, b):
    return np.meshgrid(a, b)


def meshgrid_ij_sparse(a, b, c):
    return np.meshgrid(a, b, c, indexing="ij", sparse=True)


def meshgrid_three(a, b, c):
    return np.meshgrid(a, b, c)


# --- pad ---------------------------------------------------------------
def pad_constant(x):
    return np.pad(x, ((1, 2), (0, 1)), constant_values=((1.0, 2.0), (3.0, 4.0)))


def pad_int_width(x):
    return np.pad(x, 2)


def pad_traced_value(x, c):
    return np.pad(x, (1, 2), constant_values=c)


def pad_edge(x):
    return np.pad(x, (2, 1), mode="edge")


def pad_reflect(x):
    return np.pad(x, ((3, 1), (2, 2)), mode="reflect")


def pad_wrap(x):
    return np.pad(x, (1, 5), mode="wrap")


def pad_symmetric(x):
    return np.pad(x, ((0, 2), (3, 0)), "symmetric")


# --- sort, argsort, partition ------------------------------------------
def sort_(x):
    return np.sort(x)


def sort_axis0(x):
    return np.sort(x, axis=0)


def sort_flat(x):
    return np.sort(x, axis=None, kind="stable")


def argsort_(x):
    return np.argsort(x, axis=0)


def argsort_flat(x):
    return np.argsort(x, axis=None)


def sort_by_argsort(x):
    return x[np.argsort(x)] * 2.0


def partition_(x):
    return np.partition(x, 2)


def partition_several(x):
    return np.partition(x, [0, 3], axis=0)


# --- take, take_along_axis ---------------------------------------------
def take_along_(x, i):
    return np.take_along_axis(x, i, axis=1)


def take_along_sorted(x):
    return np.take_along_axis(x, np.argsort(x, axis=0), axis=0)


def take_along_flat(x, i):
    return np.take_along_axis(x, i, axis=None)


def take_flat(x, i):
    return np.take(x, i)


def take_axis(x):
    return np.take(x, [2, 0, 2], axis=-1)


def take_scalar(x):
    return np.take(x, 1, axis=0)


def take_wrap(x):
    return np.take(x, [[4, -5], [1, 7]], axis=1, mode="wrap")


def take_clip_traced(x):
    return np.take(x, np.argsort(x[0]) * 2 - 2, axis=1, mode="clip")


def take_traced_index(x):
    return np.take(x, np.argmax(x, axis=0), axis=1)


# --- select, piecewise -------------------------------------------------
def select_(x):
    return np.select([x > 1.0, x < 0.0], [x * x, np.sin(x)], 0.5)


def select_default(x, y):
    return np.select([x < 0.0], [y])


def select_masks(x, m1, m2):
    return np.select([m1, m2], [x, 2.0 * x], default=x[0])


def piecewise_(x):
    return np.piecewise(x, [x < 0.0, x > 1.0], [lambda v: v * v, 3.0, np.sin])


def piecewise_one(x):
    return np.piecewise(x, x > 0.0, [np.exp, lambda v: v ** 3])


def piecewise_masks(x, m):
    return np.piecewise(x, [m], [np.cos, lambda v: 2.0 * v])


# --- where with one argument -------------------------------------------
def where_indices(x):
    rows, cols = np.where(x > 0.0)
    return 10 * rows + cols


CASES = [
    FnCase("np.cumprod", cumprod_axis1, (real((3, 4)),)),
    FnCase("np.cumprod", cumprod_flat, (with_zeros((3, 4)),), id="zeros"),
    FnCase("np.cumprod", cumprod_neg_axis, (with_zeros((4, 2, 3), 3),), id="neg_axis",
           dtypes=ONE),
    FnCase("np.repeat", repeat_int, (real((2, 3)),)),
    FnCase("np.repeat", repeat_each_axis0, (real((3, 2)),), id="each", dtypes=ONE),
    FnCase("np.repeat", repeat_neg_axis, (real((2, 3)),), id="neg_axis", dtypes=ONE),
    FnCase("np.tile", tile_tuple, (real((2, 3)),)),
    FnCase("np.tile", tile_int, (real((3,)),), id="int", dtypes=ONE),
    FnCase("np.kron", kron_, (real((2, 3)), real((3, 2)))),
    FnCase("np.kron", kron_, (real((3,)), real((2, 2))), id="ranks", dtypes=ONE),
    FnCase("np.roll", roll_flat, (real((3, 4)),)),
    FnCase("np.roll", roll_tuple, (real((3, 4)),), id="tuple", dtypes=ONE),
    FnCase("np.roll", roll_axis, (real((2, 5)),), id="axis", dtypes=ONE),
    FnCase("np.rollaxis", rollaxis_, (real((2, 3, 4)),)),
    FnCase("np.rollaxis", rollaxis_start, (real((2, 3, 4)),), id="start", dtypes=ONE),
    FnCase("np.flip", flip_all, (real((2, 3)),)),
    FnCase("np.flip", flip_axes, (real((2, 3, 2)),), id="axes", dtypes=ONE),
    FnCase("np.flip", flip_one, (real((2, 3)),), id="one", dtypes=ONE),
    FnCase("np.fliplr", fliplr_, (real((2, 3)),)),
    FnCase("np.flipud", flipud_, (real((3, 2)),)),
    FnCase("np.rot90", rot90_, (real((2, 3)),)),
    FnCase("np.rot90", rot90_k3_axes, (real((2, 3, 4)),), id="k3_axes", dtypes=ONE),
    FnCase("np.rot90", rot90_k2, (real((2, 3)),), id="k2", dtypes=ONE),
    FnCase("np.tril", tril_, (real((3, 4)),)),
    FnCase("np.tril", tril_k, (real((2, 3, 3)),), id="k_batch", dtypes=ONE),
    FnCase("np.triu", triu_, (real((4, 3)),)),
    FnCase("np.triu", triu_k, (real((3, 4)),), id="k", dtypes=ONE),
    FnCase("np.triu", triu_vector, (real((4,)),), id="vector", dtypes=ONE),
    FnCase("np.diff", diff_, (real((5,)),)),
    FnCase("np.diff", diff_n2_axis0, (real((5, 3)),), id="n2_axis0", dtypes=ONE),
    FnCase("np.diff", diff_pend, (real((3, 4)), real((3, 2))), id="pend", dtypes=ONE),
    FnCase("np.gradient", gradient_all, (real((4, 5)),)),
    FnCase("np.gradient", gradient_spacing_order2, (real((5,)),), id="order2"),
    FnCase("np.gradient", gradient_axis, (real((3, 4)),), id="axis", dtypes=ONE),
    FnCase("np.gradient", gradient_two_spacings, (real((4, 5)),), id="spacings", dtypes=ONE),
    # uneven coordinates, differentiated too
    FnCase("np.gradient", gradient_coords, (real((4, 3)), increasing(4)), id="coords"),
    FnCase("np.gradient", gradient_coords_order2, (real((4, 3)), increasing(4),
                                                   increasing(3)), id="coords_order2",
           dtypes=ONE),
    FnCase("np.gradient", gradient_traced_spacing, (real((4, 3)), real((), 0.5, 2.0)),
           id="traced_spacing", dtypes=ONE),
    FnCase("np.gradient", gradient_fixed_coords, (real((4, 3)),), id="fixed_coords"),
    FnCase("np.cross", cross3, (real((4, 3)), real((3,)))),
    FnCase("np.cross", cross_axes, (real((3, 2)), real((2, 3))), id="axes", dtypes=ONE),
    FnCase("np.cross", cross_axis, (real((3, 2)), real((3, 2))), id="axis", dtypes=ONE),
] + ([
    # 2-vectors: deprecated in NumPy 2.0, removed in 2.5 (there test_shapes
    # checks that wengert refuses them as NumPy does)
    FnCase("np.cross", cross2, (real((4, 2)), real((4, 2))), id="2d", dtypes=ONE),
    FnCase("np.cross", cross_2_3, (real((2,)), real((4, 3))), id="2d_3d", dtypes=ONE),
] if CROSS_2D else []) + [
    FnCase("np.split", split_int, (real((2, 4)),)),
    FnCase("np.split", split_points, (real((6, 2)),), id="points", dtypes=ONE),
    FnCase("np.array_split", array_split_uneven, (real((2, 7)),)),
    FnCase("np.array_split", array_split_points, (real((2, 5)),), id="points", dtypes=ONE),
    FnCase("np.hsplit", hsplit_, (real((3, 4)),)),
    FnCase("np.hsplit", hsplit_1d, (real((6,)),), id="1d", dtypes=ONE),
    FnCase("np.vsplit", vsplit_, (real((3, 2)),)),
    FnCase("np.dsplit", dsplit_, (real((2, 1, 4)),)),
    FnCase("np.atleast_1d", atleast_1d_several, (real((2, 3)),), id="several"),
    FnCase("np.atleast_2d", atleast_2d_several, (real((2, 3)),)),
    FnCase("np.atleast_3d", atleast_3d_several, (real((2, 3)),)),
    FnCase("np.atleast_3d", atleast_3d_one, (real((2, 1, 2, 3)),), id="4d", dtypes=ONE),
    FnCase("np.meshgrid", meshgrid_xy, (real((3,)), real((2,)))),
    FnCase("np.meshgrid", meshgrid_ij_sparse, (real((3,)), real((2,)), real((2,))),
           id="ij_sparse", dtypes=ONE),
    FnCase("np.meshgrid", meshgrid_three, (real((3,)), real((2, 1)), real((2,))), id="xy3",
           dtypes=ONE),
    FnCase("np.pad", pad_constant, (real((2, 3)),)),
    FnCase("np.pad", pad_int_width, (real((2, 3)),), id="int", dtypes=ONE),
    FnCase("np.pad", pad_traced_value, (real((2, 3)), real(())), id="traced_value",
           dtypes=ONE),
    FnCase("np.pad", pad_edge, (real((3,)),), id="edge"),
    FnCase("np.pad", pad_reflect, (real((3, 4)),), id="reflect"),
    FnCase("np.pad", pad_wrap, (real((3,)),), id="wrap"),
    FnCase("np.pad", pad_symmetric, (real((2, 3)),), id="symmetric", dtypes=ONE),
    FnCase("np.sort", sort_, (distinct((3, 4)),)),
    FnCase("np.sort", sort_axis0, (distinct((3, 4)),), id="axis0", dtypes=ONE),
    FnCase("np.sort", sort_flat, (distinct((3, 4)),), id="flat", dtypes=ONE),
    # the indices carry no derivative: values only, and a zero tangent
    FnCase("np.argsort", argsort_, (distinct((3, 4)),), mode=NONDIFF),
    FnCase("np.argsort", argsort_flat, (distinct((3, 4)),), id="flat", mode=NONDIFF,
           dtypes=ONE),
    FnCase("np.argsort", sort_by_argsort, (distinct((6,)),), id="gather"),
    FnCase("np.partition", partition_, (distinct((3, 6)),)),
    FnCase("np.partition", partition_several, (distinct((5, 3)),), id="several", dtypes=ONE),
    FnCase("np.take_along_axis", take_along_, (real((3, 4)), ints([[0, 3], [1, 1], [-1, 2]]))),
    FnCase("np.take_along_axis", take_along_sorted, (distinct((3, 4)),), id="argsort",
           dtypes=ONE),
    FnCase("np.take_along_axis", take_along_flat, (real((2, 3)), ints([5, 0, 0, 2])),
           id="flat", dtypes=ONE),
    FnCase("np.take", take_flat, (real((2, 3)), ints([[5, 0], [0, 2]]))),
    FnCase("np.take", take_axis, (real((2, 3)),), id="axis", dtypes=ONE),
    FnCase("np.take", take_scalar, (real((2, 3)),), id="scalar", dtypes=ONE),
    FnCase("np.take", take_wrap, (real((2, 3)),), id="wrap", dtypes=ONE),
    FnCase("np.take", take_clip_traced, (distinct((2, 3)),), id="clip_traced", dtypes=ONE),
    FnCase("np.take", take_traced_index, (distinct((3, 4)),), id="traced", dtypes=ONE),
    FnCase("np.select", select_, (pieces((3, 4)),)),
    FnCase("np.select", select_default, (pieces((4,)), real((4,))), id="default", dtypes=ONE),
    FnCase("np.select", select_masks, (real((5,)), Arg(lambda rng, dt: rng.random(5) < 0.5,
                                                       "mask", diff=False),
                                       Arg(lambda rng, dt: rng.random(5) < 0.5, "mask",
                                           diff=False)), id="masks", dtypes=ONE),
    FnCase("np.piecewise", piecewise_, (pieces((3, 4)),)),
    FnCase("np.piecewise", piecewise_one, (pieces((5,)),), id="otherwise", dtypes=ONE),
    FnCase("np.piecewise", piecewise_masks, (real((2, 3)), Arg(
        lambda rng, dt: rng.random((2, 3)) < 0.5, "mask", diff=False)), id="masks",
        dtypes=ONE),
    # the number of indices depends on the values: known in the trace engine
    # only (the source engine refuses it, see numpy/test_shapes.py)
    FnCase("np.where", where_indices, (pieces((3, 4)),), id="indices", mode=NONDIFF,
           engines=("trace",)),
]
