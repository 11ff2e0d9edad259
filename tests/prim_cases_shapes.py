"""Primitive specs of the shape family (``wengert/primitives/scan.py``,
``gather.py``): the linear recurrence and running product, and the index
arrays computed from values (gathered by ``cases._family_specs``)."""
from __future__ import annotations

import numpy as np

from cases import DIFF, F64, NONDIFF, PrimSpec, Arg, real, variants
from wengert.primitives import gather, scan


def _with_zeros(shape):
    """Real values, two of them exactly 0."""
    def draw(rng, dt):
        x = rng.uniform(-1.5, 1.5, shape)
        x.reshape(-1)[rng.choice(x.size, 2, replace=False)] = 0.0
        return x.astype(dt)
    return Arg(draw, f"zeros{shape}")


def _distinct(shape):
    def draw(rng, dt):
        n = int(np.prod(shape))
        return rng.permutation(np.linspace(-2.0, 2.0, n)).reshape(shape).astype(dt)
    return Arg(draw, f"distinct{shape}")


# --- references: other algorithms than the impls' ------------------------
def ref_linrec(a, b, axis, reverse):
    """h[i] = sum over j <= i of b[j] * a[j+1] ... a[i]: the closed form."""
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    if reverse:
        a, b = a[..., ::-1], b[..., ::-1]
    n = a.shape[-1]
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))
    for i in range(n):
        for j in range(i + 1):
            out[..., i] += b[..., j] * np.prod(a[..., j + 1:i + 1], axis=-1)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


def ref_cumprod(x, axis):
    out = np.moveaxis(np.array(x, copy=True), axis, -1)
    for i in range(1, out.shape[-1]):
        out[..., i] = out[..., i - 1] * out[..., i]
    return np.moveaxis(out, -1, axis)


def ref_argsort(x, axis, kind):
    # ranks by counting, for distinct values: position j holds the index of
    # the entry with exactly j entries below it
    x = np.moveaxis(x, axis, -1)
    rank = (x[..., None, :] < x[..., :, None]).sum(-1)
    out = np.empty_like(rank)
    np.put_along_axis(out, rank, np.arange(x.shape[-1]) + 0 * rank, axis=-1)
    return np.moveaxis(out, -1, axis)


def ref_partition_index(x, kth, axis):
    # where each entry of np.partition's result sits in x (distinct values)
    part = np.moveaxis(np.partition(x, kth, axis=axis), axis, -1)
    xs = np.moveaxis(x, axis, -1)
    return np.moveaxis(np.argmax(part[..., :, None] == xs[..., None, :], axis=-1), -1, axis)


def ref_piece_point(x, cond):
    hits = np.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(cond)))[
        np.broadcast_to(cond, np.broadcast_shapes(np.shape(x), np.shape(cond)))]
    return hits[0] if hits.size else np.ravel(x)[0]


def _mask(shape, value=None):
    def draw(rng, dt):
        return np.full(shape, value) if value is not None else rng.random(shape) < 0.3
    return Arg(draw, f"mask{shape}", diff=False)


def call_linrec(a, b, axis, reverse):
    return scan.linrec(a, b, axis, reverse)


def call_cumprod(x, axis):
    return scan.cumprod(x, axis)


def call_argsort(x, axis, kind):
    return gather.argsort(x, axis, kind)


def call_piece_point(x, cond):
    return gather.piece_point(x, cond)


def call_partition_index(x, kth, axis):
    return gather.partition_index(x, kth, axis)


SPECS = {
    "linrec": PrimSpec(
        DIFF,
        variants("5_axis0", [real((5,), -1.5, 1.5), real((5,))], {"axis": 0, "reverse": False})
        + variants("2x4_axis1_rev", [_with_zeros((2, 4)), real((2, 4))],
                   {"axis": 1, "reverse": True})
        + variants("4x3_axis0_zeros", [_with_zeros((4, 3)), real((4, 3))],
                   {"axis": 0, "reverse": False}, dtypes=(F64,)),
        ref_linrec, call_linrec, linear_in=((1,),)),
    "cumprod": PrimSpec(
        DIFF,
        variants("5_axis0", [real((5,))], {"axis": 0})
        + variants("3x4_axis1_zeros", [_with_zeros((3, 4))], {"axis": 1})
        + variants("4x3_axis0_zeros", [_with_zeros((4, 3))], {"axis": 0}, dtypes=(F64,)),
        ref_cumprod, call_cumprod),
    "argsort": PrimSpec(
        NONDIFF,
        variants("6_axis0", [_distinct((6,))], {"axis": 0, "kind": None})
        + variants("3x4_axis1_stable", [_distinct((3, 4))], {"axis": 1, "kind": "stable"})
        + variants("3x4_axis0", [_distinct((3, 4))], {"axis": 0, "kind": None},
                   dtypes=(F64,)),
        ref_argsort, call_argsort),
    "partition_index": PrimSpec(
        NONDIFF,
        variants("7_k3", [_distinct((7,))], {"kth": 3, "axis": 0})
        + variants("3x5_k02", [_distinct((3, 5))], {"kth": (0, 2), "axis": 1})
        + variants("5x3_k4", [_distinct((5, 3))], {"kth": 4, "axis": 0}, dtypes=(F64,)),
        ref_partition_index, call_partition_index),
    "piece_point": PrimSpec(
        NONDIFF,
        variants("3x4", [real((3, 4)), _mask((3, 4))])
        + variants("4_bcast", [real((4,)), _mask((2, 4))], dtypes=(F64,))
        + variants("5_none", [real((5,)), _mask((5,), False)], dtypes=(F64,)),
        ref_piece_point, call_piece_point),
}
