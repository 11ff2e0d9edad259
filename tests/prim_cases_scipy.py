"""Primitive specs for ``wengert/primitives/special.py`` and ``primitives.bessel`` (the
special functions behind ``scipy.special`` and ``scipy.stats``), gathered by
``cases._family_specs``.

References are independent of the SciPy call an impl makes where the
standard library has the function (``math.lgamma``, ``math.gamma``,
``math.erfc``) or a closed form exists (``expit``, the Bessel functions of
half-integer order, ``gammainc`` of integer ``a``, ``betainc`` of integer
``a``, ``b``, Student's t cdf with 1 degree of freedom); the rest are checked
against SciPy, and their rules, the point of these specs, against finite
differences.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from cases import DIFF, Arg, PrimSpec, const, pos, real, unary_cases, variants
from wengert.primitives import bessel, special as sp


def special_row(fn):
    """``fn`` of Python floats, applied elementwise, in float64, then cast
    to the operand's float dtype (as SciPy's loops keep it)."""
    vec = np.frompyfunc(fn, 1, 1)

    def ref(x):
        a = np.asarray(x)
        return np.asarray(vec(a.astype(np.float64)), dtype=a.dtype)[()]
    return ref


def _f(x, like):
    return np.asarray(x, np.asarray(like).dtype)[()]


def ref_expit(x):
    return _f(1.0 / (1.0 + np.exp(-np.asarray(x, np.float64))), x)


def ref_log_ndtr(x):
    return _f(np.log(np.asarray(special_row(math.erfc)(-np.asarray(x, np.float64)
                                                           / math.sqrt(2.0)), np.float64) / 2.0), x)


def ref_iv(v, x):
    """I_v for v = 1/2, 3/2 in closed form (sinh, cosh), SciPy otherwise."""
    x64 = np.asarray(x, np.float64)
    if v == 0.5:
        return _f(np.sqrt(2.0 / (np.pi * x64)) * np.sinh(x64), x)
    if v == 1.5:
        return _f(np.sqrt(2.0 / (np.pi * x64)) * (np.cosh(x64) - np.sinh(x64) / x64), x)
    return sc.iv(v, x)


def ref_jv(v, x):
    x64 = np.asarray(x, np.float64)
    if v == 0.5:
        return _f(np.sqrt(2.0 / (np.pi * x64)) * np.sin(x64), x)
    return sc.jv(v, x)


def ref_yv(v, x):
    x64 = np.asarray(x, np.float64)
    if v == 0.5:
        return _f(-np.sqrt(2.0 / (np.pi * x64)) * np.cos(x64), x)
    return sc.yv(v, x)


def ref_kv(v, x):
    x64 = np.asarray(x, np.float64)
    if v == 0.5:
        return _f(np.sqrt(np.pi / (2.0 * x64)) * np.exp(-x64), x)
    return sc.kv(v, x)


def ref_ive(v, x):
    return _f(np.asarray(ref_iv(v, x), np.float64) * np.exp(-np.abs(np.asarray(x, np.float64))),
              x)


def ref_gammainc(a, x):
    """P(2, x) = 1 - e^-x (1 + x)."""
    assert a == 2.0
    x64 = np.asarray(x, np.float64)
    return _f(1.0 - np.exp(-x64) * (1.0 + x64), x)


def ref_gammaincc(a, x):
    assert a == 2.0
    x64 = np.asarray(x, np.float64)
    return _f(np.exp(-x64) * (1.0 + x64), x)


def ref_betainc(a, b, x):
    """I_x(2, 2) = 3x^2 - 2x^3."""
    assert a == 2.0 and b == 2.0
    x64 = np.asarray(x, np.float64)
    return _f(3.0 * x64 ** 2 - 2.0 * x64 ** 3, x)


def ref_betaincc(a, b, x):
    return _f(1.0 - np.asarray(ref_betainc(a, b, x), np.float64), x)


def ref_stdtr(df, t):
    """The Cauchy cdf: Student's t with 1 degree of freedom."""
    assert df == 1.0
    return _f(0.5 + np.arctan(np.asarray(t, np.float64)) / np.pi, t)


def ref_polygamma(x, n):
    return _f(sc.polygamma(n, x), x)


def _binary(v, gen, shapes=((3,), (2, 3)), fixed=const):
    return sum((variants(f"v{v}_{'x'.join(map(str, s))}", [fixed(v), gen(s)]) for s in shapes), ())


def fixed_array(value):
    """A 0-d array of the case's dtype, not differentiated: SciPy's
    ``gammainc`` computes ``(2.0, x32)`` in float64 (its first loop), but
    ``(float32, x32)`` in float32."""
    return Arg(lambda rng, dt: np.asarray(value, dt), f"fixed({value})", diff=False)


SPECS = {
    "gammaln": PrimSpec(DIFF, unary_cases(lambda s: pos(s, 0.3, 4.0)),
                        special_row(math.lgamma), sp.gammaln),
    "gamma": PrimSpec(DIFF, unary_cases(lambda s: pos(s, 0.3, 3.0))
                      + variants("negative", [real((3,), -0.8, -0.2)]),
                      special_row(math.gamma), sp.gamma),
    "polygamma": PrimSpec(DIFF, sum((variants(f"n{n}", [pos((2, 3), 0.5, 3.0)], {"n": n})
                                     for n in (0, 1, 2)), ()),
                          ref_polygamma, sp.polygamma),
    "beta": PrimSpec(DIFF, variants("3x1_4", [pos((3, 1), 0.5, 3.0), pos((4,), 0.5, 3.0)]),
                     sc.beta, sp.beta),
    "betaln": PrimSpec(DIFF, variants("2x3_s", [pos((2, 3), 0.5, 3.0), pos((), 0.5, 3.0)]),
                       sc.betaln, sp.betaln),
    "erfc": PrimSpec(DIFF, unary_cases(real), special_row(math.erfc), sp.erfc),
    "erfinv": PrimSpec(DIFF, unary_cases(lambda s: real(s, -0.9, 0.9)), sc.erfinv, sp.erfinv),
    "erfcinv": PrimSpec(DIFF, unary_cases(lambda s: real(s, 0.1, 1.9)), sc.erfcinv, sp.erfcinv),
    "log_ndtr": PrimSpec(DIFF, unary_cases(lambda s: real(s, -3.0, 3.0)), ref_log_ndtr,
                         sp.log_ndtr),
    "expit": PrimSpec(DIFF, unary_cases(lambda s: real(s, -5.0, 5.0)), ref_expit, sp.expit),
    "i0": PrimSpec(DIFF, unary_cases(lambda s: real(s, -3.0, 3.0)), sc.i0, bessel.i0),
    "i1": PrimSpec(DIFF, unary_cases(lambda s: real(s, -3.0, 3.0)), sc.i1, bessel.i1),
    "i0e": PrimSpec(DIFF, unary_cases(lambda s: real(s, 0.2, 3.0))
                    + variants("negative", [real((3,), -3.0, -0.2)]), sc.i0e, bessel.i0e),
    "i1e": PrimSpec(DIFF, unary_cases(lambda s: real(s, 0.2, 3.0))
                    + variants("negative", [real((3,), -3.0, -0.2)]), sc.i1e, bessel.i1e),
    "jv": PrimSpec(DIFF, _binary(0.5, lambda s: pos(s, 0.5, 5.0))
                   + _binary(2.0, lambda s: real(s, -4.0, 4.0), ((3,),)), ref_jv, bessel.jv),
    "yv": PrimSpec(DIFF, _binary(0.5, lambda s: pos(s, 0.5, 5.0))
                   + _binary(1.0, lambda s: pos(s, 0.5, 5.0), ((3,),)), ref_yv, bessel.yv),
    "iv": PrimSpec(DIFF, _binary(0.5, lambda s: pos(s, 0.5, 3.0))
                   + _binary(1.5, lambda s: pos(s, 0.5, 3.0), ((3,),)), ref_iv, bessel.iv),
    "ive": PrimSpec(DIFF, _binary(1.5, lambda s: pos(s, 0.5, 3.0))
                    + _binary(2.0, lambda s: real(s, -3.0, -0.3), ((3,),)), ref_ive, bessel.ive),
    "kv": PrimSpec(DIFF, _binary(0.5, lambda s: pos(s, 0.5, 3.0))
                   + _binary(2.0, lambda s: pos(s, 0.5, 3.0), ((3,),)), ref_kv, bessel.kv),
    "gammainc": PrimSpec(DIFF, _binary(2.0, lambda s: pos(s, 0.2, 4.0), fixed=fixed_array),
                         ref_gammainc,
                         sp.gammainc),
    "gammaincc": PrimSpec(DIFF, _binary(2.0, lambda s: pos(s, 0.2, 4.0), fixed=fixed_array),
                          ref_gammaincc,
                          sp.gammaincc),
    "betainc": PrimSpec(DIFF, variants("2_2", [const(2.0), const(2.0), real((2, 3), 0.1, 0.9)]),
                        ref_betainc, sp.betainc),
    "betaincc": PrimSpec(DIFF, variants("2_2", [const(2.0), const(2.0), real((2, 3), 0.1, 0.9)]),
                         ref_betaincc, sp.betaincc),
    "stdtr": PrimSpec(DIFF, _binary(1.0, lambda s: real(s, -3.0, 3.0)), ref_stdtr, sp.stdtr),
}
