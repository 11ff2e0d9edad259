"""Primitive specs of the primitives the NumPy functions of the library
table gained (``wengert.primitives.reduce.prod_others``): gathered into
``cases.SPECS``."""
from __future__ import annotations

import numpy as np

from cases import DIFF, F64, Arg, PrimSpec, real, variants
from wengert.primitives import reduce


def with_zeros(shape, at):
    """U(-2, 2) with exact zeros at the flat positions ``at``."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape)
        x.reshape(-1)[list(at)] = 0.0
        return np.asarray(x, dt)
    return Arg(draw, f"zeros at {at}{shape}")


def ref_prod_others(x, axes):
    """Each entry's others' product, by deleting the entry: one np.prod per
    entry, in float64 (independent of the primitive's division)."""
    x = np.asarray(x)
    moved = np.moveaxis(x, axes, range(len(axes)))
    lead = moved.shape[:len(axes)]
    flat = moved.reshape((-1,) + moved.shape[len(axes):]).astype(np.float64)
    out = np.empty_like(flat)
    for k in range(flat.shape[0]):
        out[k] = np.prod(np.delete(flat, k, axis=0), axis=0)
    return np.moveaxis(out.reshape(lead + moved.shape[len(axes):]), range(len(axes)),
                       axes).astype(x.dtype)


SPECS = {
    # no zeros, one zero, zeros in several slices (one, two, three in a slice)
    "prod_others": PrimSpec(
        DIFF,
        variants("4_axes0", [real((4,))], {"axes": (0,)})
        + variants("3x4_axes1", [real((3, 4))], {"axes": (1,)})
        + variants("2x3_all", [real((2, 3))], {"axes": (0, 1)}, dtypes=(F64,))
        + variants("5_one_zero", [with_zeros((5,), (2,))], {"axes": (0,)})
        + variants("4x3_zeros_axes0", [with_zeros((4, 3), (0, 3, 4, 2, 5, 8))], {"axes": (0,)},
                   dtypes=(F64,))
        + variants("2x4x2_zeros_axes02", [with_zeros((2, 4, 2), (0, 2, 9, 11))],
                   {"axes": (0, 2)}, dtypes=(F64,)),
        ref_prod_others, reduce.prod_others),
}
