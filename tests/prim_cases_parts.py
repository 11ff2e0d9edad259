"""Primitive specs of a number's parts (``wengert/primitives/parts.py``, gathered by
``cases._family_specs``): ``fmod`` away from the jumps of ``x / y``, ``modf`` away from the
integers, ``frexp`` away from the powers of two, ``ldexp`` (linear in ``x``)."""
from __future__ import annotations

import numpy as np

from cases import DIFF, F64, Arg, PrimSpec, frac, pos, real, variants
from wengert.primitives import parts


def _exponents(values):
    arr = np.asarray(values, np.int64)
    return Arg(lambda rng, dt: arr.copy(), f"exp{arr.shape}", diff=False)


def _scaled(shape):
    def draw(rng, dt):
        return np.asarray(rng.uniform(1.1, 1.9, shape) * 2.0 ** rng.integers(-2, 3, shape)
                          * rng.choice([-1.0, 1.0], shape), dt)
    return Arg(draw, f"scaled{shape}")


def call_fmod(x, y):
    return parts.fmod(x, y)


def call_modf(x):
    return parts.modf(x)


def call_frexp(x):
    return parts.frexp(x)


def call_ldexp(x, i):
    return parts.ldexp(x, i)


SPECS = {
    "fmod": PrimSpec(DIFF, variants("3_3", [real((3,), -0.9, 0.9), pos((3,), 1.1, 2.0)])
                     + variants("2x3_s", [frac((2, 3), 0.2, 0.8, unit=1.5), pos((), 1.5, 1.5)],
                                dtypes=(F64,)),
                     np.fmod, call_fmod),
    "modf": PrimSpec(DIFF, variants("2x3", [frac((2, 3), 0.2, 0.8)]), np.modf, call_modf),
    "frexp": PrimSpec(DIFF, variants("4", [_scaled((4,))]), np.frexp, call_frexp),
    "ldexp": PrimSpec(DIFF, variants("3", [real((3,)), _exponents([1, -2, 3])])
                      + variants("2x3_s", [real((2, 3)), _exponents(2)], dtypes=(F64,)),
                      np.ldexp, call_ldexp, linear_in=((0,),)),
}
