"""``scipy.stats`` on traced values (``wengert/scipy/stats.py``), what the
function table's harness does not check: values outside the support,
invalid parameters (nan, as SciPy gives), non-integer counts, SciPy's own
frozen distributions, derivatives in shape parameters refused, and the
trace engine's typed error (it never sees SciPy's calls).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st

import wengert as wg
from wengert.core.errors import ConcretizationError, NoDerivativeRule

import checks


_OUTSIDE = {   # name: (shape params, x with points outside and on the edge of the support)
    "gamma": ((2.5,), [-1.0, 0.0, 0.5]),
    "gamma_a1": ((1.0,), [-1.0, 0.0, 0.5]),
    "gamma_a_half": ((0.5,), [-1.0, 0.0, 0.5]),
    "chi2": ((3.0,), [-1.0, 0.0, 0.5]),
    "beta": ((2.0, 3.0), [-0.5, 0.0, 0.5, 1.0, 1.5]),
    "beta_a1_b1": ((1.0, 1.0), [-0.5, 0.0, 0.5, 1.0, 1.5]),
    "beta_a_half": ((0.5, 1.0), [-0.5, 0.0, 0.5, 1.0, 1.5]),
    "expon": ((), [-1.0, 0.0, 0.5]),
    "lognorm": ((0.7,), [-1.0, 0.0, 0.5]),
}


def stats_method(dist, method, x, shapes):
    return getattr(dist, method)(x, *shapes)


@pytest.mark.parametrize("method", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
@pytest.mark.parametrize("name", sorted(_OUTSIDE))
def test_stats_values_outside_the_support(name, method):
    """-inf / 0 / 1 outside the support, as SciPy gives, with finite
    derivatives (no nan from the branch not taken)."""
    shapes, x = _OUTSIDE[name]
    x = np.array(x)
    dist = getattr(st, name.split("_")[0])
    want = getattr(dist, method)(x, *shapes)
    got, tangent = wg.jvp(lambda x: stats_method(dist, method, x, shapes), (x,),
                          (np.ones_like(x),), engine="source")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    inside = np.isfinite(want) & (x > 0) & (x < 1.0 if name.startswith("beta") else True)
    assert not np.any(np.isnan(np.asarray(tangent)[~inside & (x != 0)])), tangent
    # reverse mode too: the zero cotangent of the branch not taken meets no inf
    grad = wg.grad(lambda x: np.sum(stats_method(dist, method, x, shapes)), engine="source")(x)
    assert not np.any(np.isnan(grad[~inside & (x != 0)])), grad


def discrete_outside(dist, method, k, n, p):
    return getattr(dist, method)(k, n, p)


@pytest.mark.parametrize("method", ["logpmf", "pmf"])
def test_binom_outside_its_support(method):
    k = np.array([-1, 0, 3, 6, 7])
    want = getattr(st.binom, method)(k, 6, 0.3)
    got = wg.jvp(lambda p: discrete_outside(st.binom, method, k, 6, p), (0.3,), (1.0,),
                 engine="source")[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def cdf_in_shape(dist, method, shape, x, other):
    return getattr(dist, method)(x, shape, *other)


@pytest.mark.parametrize("method", ["cdf", "sf", "logcdf", "logsf"])
@pytest.mark.parametrize("name, other", [("t", ()), ("gamma", ()), ("beta", (3.0,))])
def test_stats_cdf_in_a_shape_parameter_is_refused(name, other, method):
    dist = getattr(st, name)
    x = np.array([0.2, 0.6])
    with pytest.raises(NoDerivativeRule, match="not implemented"):
        wg.grad(lambda a: np.sum(cdf_in_shape(dist, method, a, x, other)),
                engine="source")(2.5)


def scipy_frozen(dist, params, method, x):
    return getattr(dist(*params), method)(x)


@pytest.mark.parametrize("dist, params, method, x", [
    (st.norm, (0.5, 2.0), "logpdf", np.array([0.1, 1.0, 2.5])),
    (st.gamma, (2.5, 0.0, 1.5), "cdf", np.array([0.5, 1.0, 2.5])),
    (st.t, (4.0,), "logsf", np.array([-1.0, 0.3])),
    (st.multivariate_normal, (np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]])),
     "logpdf", np.array([[0.3, 0.1], [-1.0, 0.5]])),
    (st.dirichlet, (np.array([2.0, 3.0, 4.0]),), "logpdf", np.array([0.2, 0.3])),
], ids=["norm", "gamma", "t", "multivariate_normal", "dirichlet"])
def test_scipy_frozen_distribution_in_x(dist, params, method, x):
    """SciPy's own frozen object (parameters not traced, made inside the
    function): its methods are differentiated in x as the unfrozen ones."""
    def f(x):
        return np.sum(scipy_frozen(dist, params, method, x))
    g = wg.grad(f, engine="source")(x)
    rng = np.random.default_rng(0)
    t = rng.normal(size=x.shape)
    h = 1e-6
    checks.assert_close(np.sum(g * t), (f(x + h * t) - f(x - h * t)) / (2 * h), 1e-6,
                        what="grad vs finite differences")


def stats_in_trace(x):
    return np.sum(st.norm.logpdf(x))


def logsumexp_in_trace(x):
    return sc.logsumexp(x)


@pytest.mark.parametrize("fn", [stats_in_trace, logsumexp_in_trace], ids=lambda f: f.__name__)
def test_scipy_calls_in_the_trace_engine_are_a_typed_error(fn):
    """The trace engine does not see scipy.stats (SciPy converts the traced
    value first): a typed error, never a value without its derivative."""
    with pytest.raises(ConcretizationError,
                       match=r"test_stats\.py:\d+: .*engine=.source."):
        wg.grad(fn, engine="trace")(np.array([0.5, 1.0]))


# --- invalid parameters give nan, as in SciPy ---------------------------------------
_INVALID = [   # (distribution, method, x or k, parameters with an invalid one)
    ("norm", "cdf", 0.3, (0.0, -1.0)),
    ("norm", "logpdf", 0.3, (0.0, 0.0)),
    ("t", "logpdf", 0.3, (-2.0,)),
    ("gamma", "logpdf", 0.3, (-1.5,)),
    ("beta", "pdf", 0.3, (2.0, -0.5)),
    ("lognorm", "cdf", 0.3, (-0.5,)),
    ("laplace", "sf", 0.3, (0.0, -2.0)),
    ("poisson", "logpmf", 2, (-1.0,)),
    ("binom", "pmf", 2, (4.5, 0.3)),
    ("binom", "logpmf", 2, (4, 1.3)),
    ("nbinom", "pmf", 2, (3.0, 0.0)),
]


def stats_call(dist, method, x, params):
    return getattr(dist, method)(x, *params)


@pytest.mark.parametrize("name, method, x, params", _INVALID,
                         ids=[f"{n}.{m}-{i}" for i, (n, m, _, _) in enumerate(_INVALID)])
def test_stats_invalid_parameters_give_nan(name, method, x, params):
    dist = getattr(st, name)
    assert np.isnan(stats_call(dist, method, x, params))
    got = wg.jvp(lambda p: stats_call(dist, method, x, (*params[:-1], p)), (params[-1],),
                 (1.0,), engine="source")[0]
    assert np.isnan(got), got


@pytest.mark.parametrize("name, params", [("poisson", (2.0,)), ("binom", (5, 0.4)),
                                          ("nbinom", (3.0, 0.4))])
def test_discrete_non_integer_k(name, params):
    """A pmf is 0 (logpmf -inf) off the integers, as SciPy gives."""
    dist = getattr(st, name)
    k = np.array([1.5, 2.0])
    got = wg.jvp(lambda p: stats_call(dist, "logpmf", k, (*params[:-1], p)), (params[-1],),
                 (1.0,), engine="source")[0]
    np.testing.assert_allclose(got, dist.logpmf(k, *params), rtol=1e-12)
