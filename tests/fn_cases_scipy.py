"""Function-table cases for ``scipy.special`` and ``scipy.stats``
(``wengert/primitives/scipy_special.py``, ``scipy_stats.py``).

The ``scipy.special`` ufuncs run in both engines (they dispatch through
``__array_ufunc__``). Its Python functions (``logsumexp``, ``softmax``,
``polygamma``...) and every ``scipy.stats`` method are ``CALLS`` entries,
which only the source engine sees (the trace engine meets them after SciPy
has converted the traced value with ``np.asarray``): those cases run with
``engines=SOURCE``.
"""
from __future__ import annotations

import numpy as np
import scipy.special as sc

from cases import Arg, const, ints, pos, real  # noqa: F401
from fn_cases import FnCase

SOURCE = ("source",)      # CALLS entries: the source engine only (see above)


def with_neginf(shape):
    """Values in (-2, 2) with -inf in the first entry of each row."""
    def draw(rng, dt):
        x = rng.uniform(-2.0, 2.0, shape).astype(dt)
        x[..., 0] = -np.inf
        return x
    return Arg(draw, f"neginf{shape}")


def signed_weights(shape):
    """Weights of either sign, the first positive and large: sums stay positive."""
    def draw(rng, dt):
        w = rng.uniform(-0.5, 0.5, shape)
        w[..., 0] = 3.0
        return w.astype(dt)
    return Arg(draw, f"signed{shape}")


# --- scipy.special ufuncs ---------------------------------------------------
def gammaln_(x):
    return sc.gammaln(x)


def gamma_(x):
    return sc.gamma(x)


def psi_(x):
    return sc.psi(x)


def beta_(a, b):
    return sc.beta(a, b)


def betaln_(a, b):
    return sc.betaln(a, b)


def erf_(x):
    return sc.erf(x)


def erfc_(x):
    return sc.erfc(x)


def erfinv_(x):
    return sc.erfinv(x)


def erfcinv_(x):
    return sc.erfcinv(x)


def ndtr_(x):
    return sc.ndtr(x)


def ndtri_(p):
    return sc.ndtri(p)


def log_ndtr_(x):
    return sc.log_ndtr(x)


def expit_(x):
    return sc.expit(x)


def logit_(p):
    return sc.logit(p)


def log_expit_(x):
    return sc.log_expit(x)


def xlogy_(x, y):
    return sc.xlogy(x, y)


def xlog1py_(x, y):
    return sc.xlog1py(x, y)


def entr_(x):
    return sc.entr(x)


def rel_entr_(x, y):
    return sc.rel_entr(x, y)


def i0_(x):
    return sc.i0(x)


def i0e_(x):
    return sc.i0e(x)


def i1_(x):
    return sc.i1(x)


def i1e_(x):
    return sc.i1e(x)


def jv_(v, x):
    return sc.jv(v, x)


def yv_(v, x):
    return sc.yv(v, x)


def iv_(v, x):
    return sc.iv(v, x)


def ive_(v, x):
    return sc.ive(v, x)


def kv_(v, x):
    return sc.kv(v, x)


def gammainc_(a, x):
    return sc.gammainc(a, x)


def gammaincc_(a, x):
    return sc.gammaincc(a, x)


def betainc_(a, b, x):
    return sc.betainc(a, b, x)


def betaincc_(a, b, x):
    return sc.betaincc(a, b, x)


def stdtr_(df, t):
    return sc.stdtr(df, t)


# --- scipy.special Python functions (CALLS) -----------------------------------
def polygamma_(n, x):
    return sc.polygamma(n, x)


def multigammaln_(a, d):
    return sc.multigammaln(a, d)


def lse_all(a):
    return sc.logsumexp(a)


def lse_axis1(a):
    return sc.logsumexp(a, axis=1)


def lse_neg_keep(a):
    return sc.logsumexp(a, axis=-1, keepdims=True)


def lse_axes(a):
    return sc.logsumexp(a, axis=(0, 2))


def lse_b(a, b):
    return sc.logsumexp(a, axis=0, b=b)


def lse_sign(a, b):
    return sc.logsumexp(a, axis=1, b=b, return_sign=True)


def lse_sign_only(a):
    return sc.logsumexp(a, return_sign=True)


def softmax_all(x):
    return sc.softmax(x)


def softmax_axis(x, axis):
    return sc.softmax(x, axis=axis)


def log_softmax_all(x):
    return sc.log_softmax(x)


def log_softmax_axis(x, axis):
    return sc.log_softmax(x, axis=axis)


S = (2, 3)
SPECIAL_CASES = [
    FnCase("scipy.special.gammaln", gammaln_, (pos(S, 0.3, 4.0),)),
    FnCase("scipy.special.gammaln", gammaln_, (real((3,), -1.8, -1.2),), id="negative"),
    FnCase("scipy.special.gamma", gamma_, (pos(S, 0.3, 3.0),)),
    FnCase("scipy.special.gamma", gamma_, (real((3,), -0.8, -0.2),), id="negative"),
    FnCase("scipy.special.psi", psi_, (pos(S, 0.3, 4.0),)),
    FnCase("scipy.special.beta", beta_, (pos((3, 1), 0.5, 3.0), pos((4,), 0.5, 3.0))),
    FnCase("scipy.special.betaln", betaln_, (pos(S, 0.5, 3.0), pos((), 0.5, 3.0))),
    FnCase("scipy.special.betaln", betaln_, (pos((3,), 0.5, 3.0), const(2.5)), id="b_fixed"),
    FnCase("scipy.special.erf", erf_, (real(S),)),
    FnCase("scipy.special.erfc", erfc_, (real(S),)),
    FnCase("scipy.special.erfc", erfc_, (real((3,), 3.0, 6.0),), id="tail"),
    FnCase("scipy.special.erfinv", erfinv_, (real(S, -0.9, 0.9),)),
    FnCase("scipy.special.erfcinv", erfcinv_, (real(S, 0.1, 1.9),)),
    FnCase("scipy.special.ndtr", ndtr_, (real(S, -3.0, 3.0),)),
    FnCase("scipy.special.ndtr", ndtr_, (real((3,), -9.0, -6.0),), id="lower_tail"),
    FnCase("scipy.special.ndtri", ndtri_, (real(S, 0.05, 0.95),)),
    FnCase("scipy.special.log_ndtr", log_ndtr_, (real(S, -3.0, 3.0),)),
    # far in the lower tail, where ndtr underflows: the derivative tends to -x
    FnCase("scipy.special.log_ndtr", log_ndtr_, (real((3,), -60.0, -30.0),), id="tail",
           dtypes=(np.float64,)),
    FnCase("scipy.special.expit", expit_, (real(S, -5.0, 5.0),)),
    FnCase("scipy.special.expit", expit_, (real((3,), -40.0, -30.0),), id="tail",
           dtypes=(np.float64,)),
    FnCase("scipy.special.logit", logit_, (real(S, 0.05, 0.95),)),
    FnCase("scipy.special.log_expit", log_expit_, (real(S, -5.0, 5.0),)),
    FnCase("scipy.special.xlogy", xlogy_, (real(S), pos((3,), 0.3, 3.0))),
    FnCase("scipy.special.xlog1py", xlog1py_, (real(S), real((3,), -0.7, 2.0))),
    FnCase("scipy.special.entr", entr_, (pos(S, 0.1, 3.0),)),
    FnCase("scipy.special.rel_entr", rel_entr_, (pos(S, 0.1, 3.0), pos((3,), 0.1, 3.0))),
    FnCase("scipy.special.i0", i0_, (real(S, -3.0, 3.0),)),
    FnCase("scipy.special.i0e", i0e_, (real(S, 0.2, 3.0),)),
    FnCase("scipy.special.i0e", i0e_, (real((3,), -3.0, -0.2),), id="negative"),
    FnCase("scipy.special.i1", i1_, (real(S, -3.0, 3.0),)),
    FnCase("scipy.special.i1e", i1e_, (real(S, 0.2, 3.0),)),
    FnCase("scipy.special.i1e", i1e_, (real((3,), -3.0, -0.2),), id="negative"),
    FnCase("scipy.special.jv", jv_, (const(1.5), pos(S, 0.5, 5.0))),
    FnCase("scipy.special.jv", jv_, (ints([0, 1, 2]), real((2, 3), -4.0, 4.0)), id="int_orders"),
    FnCase("scipy.special.yv", yv_, (const(0.5), pos(S, 0.5, 5.0))),
    FnCase("scipy.special.iv", iv_, (const(2.5), pos(S, 0.5, 3.0))),
    FnCase("scipy.special.ive", ive_, (const(1.0), real(S, 0.3, 3.0))),
    FnCase("scipy.special.ive", ive_, (ints([0, 1, 3]), real((3,), -3.0, -0.3)), id="negative"),
    FnCase("scipy.special.kv", kv_, (const(1.5), pos(S, 0.5, 3.0))),
    FnCase("scipy.special.kv", kv_, (ints([0, 1, 2]), pos((3,), 0.5, 3.0)), id="int_orders"),
    FnCase("scipy.special.gammainc", gammainc_, (const(2.5), pos(S, 0.2, 4.0))),
    FnCase("scipy.special.gammaincc", gammaincc_, (const(1.5), pos(S, 0.2, 4.0))),
    FnCase("scipy.special.betainc", betainc_, (const(2.0), const(3.5), real(S, 0.1, 0.9))),
    FnCase("scipy.special.betaincc", betaincc_, (const(0.7), const(1.5), real(S, 0.1, 0.9))),
    FnCase("scipy.special.stdtr", stdtr_, (const(3.5), real(S, -3.0, 3.0))),
    # the Python functions: source engine only (CALLS)
    FnCase("scipy.special.polygamma", polygamma_, (const(1), pos(S, 0.3, 4.0)), engines=SOURCE),
    FnCase("scipy.special.polygamma", polygamma_, (const(3), pos((3,), 0.3, 4.0)), id="n3",
           engines=SOURCE),
    FnCase("scipy.special.polygamma", polygamma_, (const(0), pos((3,), 0.3, 4.0)), id="n0",
           engines=SOURCE),
    FnCase("scipy.special.multigammaln", multigammaln_, (pos(S, 2.0, 4.0), const(3)),
           engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_all, (real((3, 4)),), engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_axis1, (real((3, 4)),), id="axis1", engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_neg_keep, (real((3, 4)),), id="keepdims",
           engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_axes, (real((2, 3, 2)),), id="axes", engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_axis1, (with_neginf((3, 4)),), id="neginf",
           engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_b, (real((3, 4)), pos((3, 1), 0.5, 2.0)), id="b",
           engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_sign, (real((2, 3)), signed_weights((2, 3))),
           id="return_sign", engines=SOURCE),
    FnCase("scipy.special.logsumexp", lse_sign_only, (real((4,)),), id="sign_only",
           engines=SOURCE),
    FnCase("scipy.special.softmax", softmax_all, (real((2, 3)),), engines=SOURCE),
    FnCase("scipy.special.softmax", softmax_axis, (real((2, 3)), const(-1)), id="axis",
           engines=SOURCE),
    FnCase("scipy.special.softmax", softmax_axis, (real((2, 3, 2)), const((0, 2))), id="axes",
           engines=SOURCE),
    FnCase("scipy.special.log_softmax", log_softmax_all, (real((2, 3)),), engines=SOURCE),
    FnCase("scipy.special.log_softmax", log_softmax_axis, (real((2, 3)), const(0)), id="axis",
           engines=SOURCE),
]

CASES = SPECIAL_CASES
