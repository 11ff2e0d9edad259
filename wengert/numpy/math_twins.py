"""The ``math`` module's functions on traced values: each builtin that has a
NumPy twin with derivative rules (``math.sin`` -> ``np.sin``) maps to a
function computing it with the twin.

A twin keeps what ``math`` returns: a Python float (weakly typed, NEP 50)
for a scalar, whatever the scalar's dtype, so ``math.sin(s) * v32`` stays
float32 as in plain Python. An array (which ``math`` refuses) gives NumPy's
array. The twins are plain Python over NumPy, so either engine runs them:
transforms given a builtin (``wg.grad(math.sin)``) use ``twin_of``, and the
source engine calls a twin where converted code calls ``math.sin`` on a
traced value.

Layer: numpy.
"""
from __future__ import annotations

import math
import types

import numpy as np

from ..primitives import casts, transcendental
from ..core.errors import UnsupportedFunctionError, user_location
from ..core.ir import aval_of

__all__ = ["TWINS", "find_twin", "twin_of", "numpy_name"]


def _math_result(y):
    """What a ``math`` function returns for ``y``: a Python float for a
    scalar (``math.sin`` of a float32 gives one too)."""
    return casts.python_scalar(y) if aval_of(y).shape == () else y


def sin(x):
    return _math_result(np.sin(x))


def cos(x):
    return _math_result(np.cos(x))


def tan(x):
    return _math_result(np.tan(x))


def asin(x):
    return _math_result(np.arcsin(x))


def acos(x):
    return _math_result(np.arccos(x))


def atan(x):
    return _math_result(np.arctan(x))


def atan2(y, x):
    return _math_result(np.arctan2(y, x))


def sinh(x):
    return _math_result(np.sinh(x))


def cosh(x):
    return _math_result(np.cosh(x))


def tanh(x):
    return _math_result(np.tanh(x))


def exp(x):
    return _math_result(np.exp(x))


def exp2(x):
    return _math_result(np.exp2(x))


def expm1(x):
    return _math_result(np.expm1(x))


def log(x, base=None):
    if base is None:
        return _math_result(np.log(x))
    return _math_result(np.log(x) / np.log(base))


def log1p(x):
    return _math_result(np.log1p(x))


def log2(x):
    return _math_result(np.log2(x))


def log10(x):
    return _math_result(np.log10(x))


def sqrt(x):
    return _math_result(np.sqrt(x))


def pow(x, y):
    return _math_result(np.power(x, y))


def fabs(x):
    return _math_result(np.fabs(x))


def hypot(*coordinates):
    total = 0.0
    for c in coordinates:
        total = total + c * c
    return _math_result(np.sqrt(total))


def erf(x):
    return _math_result(transcendental.erf(x))


def erfc(x):
    return _math_result(1.0 - transcendental.erf(x))


def degrees(x):
    return _math_result(np.degrees(x))


def radians(x):
    return _math_result(np.radians(x))


# math builtin -> (twin, the NumPy function named where the twin cannot be used)
TWINS = {getattr(math, f.__name__): (f, numpy) for f, numpy in [
    (sin, "np.sin"), (cos, "np.cos"), (tan, "np.tan"), (asin, "np.arcsin"),
    (acos, "np.arccos"), (atan, "np.arctan"), (atan2, "np.arctan2"), (sinh, "np.sinh"),
    (cosh, "np.cosh"), (tanh, "np.tanh"), (exp, "np.exp"), (expm1, "np.expm1"),
    (log, "np.log"), (log1p, "np.log1p"), (log2, "np.log2"), (log10, "np.log10"),
    (sqrt, "np.sqrt"), (pow, "np.power"), (fabs, "np.fabs"), (hypot, "np.hypot"),
    (degrees, "np.degrees"), (radians, "np.radians"),
    (erf, "wengert.primitives.transcendental.erf"), (erfc, "1 - wengert.primitives.transcendental.erf"),
] + ([(exp2, "np.exp2")] if hasattr(math, "exp2") else [])}


def find_twin(fun):
    """The twin of ``fun``, a ``math`` builtin, or None."""
    try:
        entry = TWINS.get(fun)
    except TypeError:           # an unhashable callable
        return None
    return None if entry is None else entry[0]


def twin_of(fun):
    """What a transform given ``fun`` differentiates: the twin of a ``math``
    builtin, or ``fun`` itself; a ``math`` builtin without a twin is refused
    here, naming the user's line (a transform of it could never run)."""
    twin = find_twin(fun)
    if twin is not None:
        return twin
    if isinstance(fun, types.BuiltinFunctionType) and getattr(fun, "__module__", "") == "math":
        raise UnsupportedFunctionError(
            f"{user_location()}: math.{fun.__name__} was given to a transform, but NumPy has no "
            "twin of it with a derivative rule in wengert; write it with NumPy functions or "
            "wrap it in wg.custom_jvp / wg.custom_vjp")
    return fun


def numpy_name(fun):
    """What to write instead of the ``math`` builtin ``fun`` on arrays, or
    None when NumPy has no twin with a derivative rule."""
    try:
        entry = TWINS.get(fun)
    except TypeError:
        return None
    return None if entry is None else entry[1]
