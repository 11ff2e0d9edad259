"""Function-table cases for ``scipy.special`` and ``scipy.stats``
(``wengert/scipy/special.py``, ``scipy.stats``).

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

from cases import Arg, away, const, ints, pos, real  # noqa: F401
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



# --- scipy.stats (CALLS: source engine only) ------------------------------------
# The distribution is a fixed operand, so one def serves every distribution
# with the same number of shape parameters; positional and keyword forms.
def method0(dist, method, x, loc, scale):
    return getattr(dist, method)(x, loc, scale)


def method0_kw(dist, method, x, loc, scale):
    return getattr(dist, method)(x, scale=scale, loc=loc)


def method1(dist, method, x, a, loc, scale):
    return getattr(dist, method)(x, a, loc, scale)


def method1_kw(dist, method, x, a, loc, scale):
    return getattr(dist, method)(x, a, loc=loc, scale=scale)


def method2(dist, method, x, a, b, loc, scale):
    return getattr(dist, method)(x, a, b, loc=loc, scale=scale)


def method_default(dist, method, x):
    return getattr(dist, method)(x)


def frozen0(dist, method, x, loc, scale):
    return getattr(dist(loc=loc, scale=scale), method)(x)


def frozen1(dist, method, x, a, loc, scale):
    return getattr(dist(a, loc, scale), method)(x)


def frozen2(dist, method, x, a, b, loc, scale):
    return getattr(dist(a, b, loc, scale), method)(x)


def fixed(value):
    """A fixed operand, given as it is (a distribution, a method name)."""
    return Arg(lambda rng, dt: value, f"fixed({getattr(value, 'name', value)!r})", diff=False)


import scipy.stats as st  # noqa: E402  (after the special cases, which need only scipy.special)

CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
# x inside the support, where every method is smooth; loc and scale drawn too
_XS = (3,)
_CONTINUOUS = {
    # name: (shape operands, x, loc, scale)
    "norm": ((), real(_XS, -2.0, 2.0), real((), -0.5, 0.5), pos((), 0.5, 2.0)),
    "t": ((pos((), 2.0, 6.0),), real(_XS, -2.0, 2.0), real((), -0.5, 0.5), pos((), 0.5, 2.0)),
    "gamma": ((pos((), 1.5, 3.0),), pos(_XS, 0.3, 3.0), real((), -0.2, 0.0), pos((), 0.5, 2.0)),
    "beta": ((pos((), 1.5, 3.0), pos((), 1.5, 3.0)), pos(_XS, 0.2, 1.6), real((), -0.1, 0.0),
             pos((), 2.0, 2.5)),
    "expon": ((), pos(_XS, 0.3, 3.0), real((), -0.2, 0.0), pos((), 0.5, 2.0)),
    "laplace": ((), away(_XS, 0.5, 2.0), real((), -0.1, 0.1), pos((), 0.5, 2.0)),
    "cauchy": ((), real(_XS, -2.0, 2.0), real((), -0.5, 0.5), pos((), 0.5, 2.0)),
    "logistic": ((), real(_XS, -2.0, 2.0), real((), -0.5, 0.5), pos((), 0.5, 2.0)),
    "lognorm": ((pos((), 0.5, 1.5),), pos(_XS, 0.3, 3.0), real((), -0.2, 0.0),
                pos((), 0.5, 2.0)),
}
# their cdf and sf need incomplete gamma/beta functions in the shape
# parameters, which wengert refuses (scipy/test_special.py): held fixed here
_SHAPE_FIXED_CDFS = {"t": (const(3.5),), "gamma": (const(2.5),), "beta": (const(2.0), const(3.0))}


def _continuous_cases():
    out = []
    for name, (shapes, x, loc, scale) in _CONTINUOUS.items():
        dist = getattr(st, name)
        fns = {0: (method0, method0_kw, frozen0), 1: (method1, method1_kw, frozen1),
               2: (method2, method2, frozen2)}[len(shapes)]
        for method in CONTINUOUS_METHODS:
            held = method in ("cdf", "logcdf", "sf", "logsf") and name in _SHAPE_FIXED_CDFS
            sh = _SHAPE_FIXED_CDFS[name] if held else shapes
            full = (fixed(dist), fixed(method), x, *sh, loc, scale)
            out.append(FnCase(f"scipy.stats.{name}.{method}", fns[0], full, engines=SOURCE))
            out.append(FnCase(f"scipy.stats.{name}.{method}", fns[1], full, id="keywords",
                              engines=SOURCE))
        if not shapes:
            out.append(FnCase(f"scipy.stats.{name}.logpdf", method_default,
                              (fixed(dist), fixed("logpdf"), x), id="defaults", engines=SOURCE))
        for method in ("logpdf", "cdf"):
            held = method == "cdf" and name in _SHAPE_FIXED_CDFS
            sh = _SHAPE_FIXED_CDFS[name] if held else shapes
            out.append(FnCase(f"scipy.stats.{name}", fns[2],
                              (fixed(dist), fixed(method), x, *sh, loc, scale), id=method,
                              engines=SOURCE))
    return out


def discrete0(dist, method, k, p):
    return getattr(dist, method)(k, p)


def discrete1(dist, method, k, n, p):
    return getattr(dist, method)(k, n, p)


def discrete_loc(dist, method, k, mu):
    return getattr(dist, method)(k, mu=mu, loc=1)


def frozen_discrete(dist, method, k, n, p):
    return getattr(dist(n, p), method)(k)


def frozen_poisson(dist, method, k, mu):
    return getattr(dist(mu), method)(k)


def _discrete_cases():
    out = []
    k = ints([0, 2, 5])
    for method in ("logpmf", "pmf"):
        out += [
            FnCase(f"scipy.stats.poisson.{method}", discrete0,
                   (fixed(st.poisson), fixed(method), k, pos((), 0.5, 4.0)), engines=SOURCE),
            FnCase(f"scipy.stats.poisson.{method}", discrete_loc,
                   (fixed(st.poisson), fixed(method), ints([1, 3, 6]), pos((), 0.5, 4.0)),
                   id="loc", engines=SOURCE),
            FnCase(f"scipy.stats.binom.{method}", discrete1,
                   (fixed(st.binom), fixed(method), ints([0, 2, 6]), const(6),
                    real((), 0.2, 0.8)), engines=SOURCE),
            FnCase(f"scipy.stats.nbinom.{method}", discrete1,
                   (fixed(st.nbinom), fixed(method), k, pos((), 1.5, 4.0), real((), 0.2, 0.8)),
                   engines=SOURCE),
        ]
    out += [
        FnCase("scipy.stats.poisson", frozen_poisson,
               (fixed(st.poisson), fixed("logpmf"), k, pos((), 0.5, 4.0)), engines=SOURCE),
        FnCase("scipy.stats.binom", frozen_discrete,
               (fixed(st.binom), fixed("pmf"), k, const(6), real((), 0.2, 0.8)), engines=SOURCE),
        FnCase("scipy.stats.nbinom", frozen_discrete,
               (fixed(st.nbinom), fixed("logpmf"), k, pos((), 1.5, 4.0), real((3,), 0.2, 0.8)),
               engines=SOURCE),
    ]
    return out


# --- multivariate_normal, dirichlet -------------------------------------------------
def spd_any(n):
    """A well-conditioned SPD matrix plus a non-symmetric perturbation of
    the upper triangle, which SciPy ignores (it reads the lower triangle)."""
    def draw(rng, dt):
        m = rng.uniform(-1.0, 1.0, (n, n))
        a = m @ m.T + n * np.eye(n)
        return (a + np.triu(rng.uniform(-0.3, 0.3, (n, n)), 1)).astype(dt)
    return Arg(draw, f"spd_any({n})")


def simplex_less_one(k, batch=()):
    """k - 1 components of points of the simplex (SciPy appends the last)."""
    def draw(rng, dt):
        w = rng.uniform(0.5, 1.5, (k,) + batch)
        return (w / w.sum(axis=0))[:-1].astype(dt)
    return Arg(draw, f"simplex-1({k}, {batch})")


def mvn_logpdf(x, mean, cov):
    return st.multivariate_normal.logpdf(x, mean, cov)


def mvn_pdf(x, mean, cov):
    return st.multivariate_normal.pdf(x, mean=mean, cov=cov)


def mvn_logpdf_diag(x, mean, var):
    return st.multivariate_normal.logpdf(x, mean, var)


def mvn_logpdf_scalar(x, var):
    return st.multivariate_normal.logpdf(x, cov=var)


def mvn_frozen(x, mean, cov):
    return st.multivariate_normal(mean, cov).logpdf(x)


def dirichlet_logpdf(x, alpha):
    return st.dirichlet.logpdf(x, alpha)


def dirichlet_pdf(x, alpha):
    return st.dirichlet.pdf(x, alpha)


def dirichlet_frozen(x, alpha):
    return st.dirichlet(alpha).logpdf(x)


MULTIVARIATE_CASES = [
    FnCase("scipy.stats.multivariate_normal.logpdf", mvn_logpdf,
           (real((4, 3)), real((3,), -0.5, 0.5), spd_any(3)), engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal.logpdf", mvn_logpdf,
           (real((3,)), real((3,), -0.5, 0.5), spd_any(3)), id="one_point", engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal.logpdf", mvn_logpdf,
           (real((2, 2, 3)), real((3,), -0.5, 0.5), spd_any(3)), id="batch", engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal.logpdf", mvn_logpdf_diag,
           (real((4, 2)), real((2,), -0.5, 0.5), pos((2,), 0.5, 2.0)), id="diagonal",
           engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal.logpdf", mvn_logpdf_scalar,
           (real((5,)), pos((), 0.5, 2.0)), id="one_dim", engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal.pdf", mvn_pdf,
           (real((4, 3)), real((3,), -0.5, 0.5), spd_any(3)), engines=SOURCE),
    FnCase("scipy.stats.multivariate_normal", mvn_frozen,
           (real((4, 3)), real((3,), -0.5, 0.5), spd_any(3)), engines=SOURCE),
    FnCase("scipy.stats.dirichlet.logpdf", dirichlet_logpdf,
           (simplex_less_one(4), pos((4,), 0.5, 3.0)), engines=SOURCE),
    FnCase("scipy.stats.dirichlet.logpdf", dirichlet_logpdf,
           (simplex_less_one(3, (5,)), pos((3,), 0.5, 3.0)), id="batch", engines=SOURCE),
    FnCase("scipy.stats.dirichlet.pdf", dirichlet_pdf,
           (simplex_less_one(4), pos((4,), 0.5, 3.0)), engines=SOURCE),
    FnCase("scipy.stats.dirichlet", dirichlet_frozen,
           (simplex_less_one(4), pos((4,), 0.5, 3.0)), engines=SOURCE),
]

CASES = SPECIAL_CASES + _continuous_cases() + _discrete_cases() + MULTIVARIATE_CASES
