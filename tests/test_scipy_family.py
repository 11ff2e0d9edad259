"""SciPy families (``scipy_special``, ``scipy_stats``): what the function
table's harness does not check: wengert without SciPy, values and
derivatives at the edges of a domain, and the derivatives refused with a
typed error."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special as sc

import wengert as wg
from wengert.core.errors import NoDerivativeRule

import checks

ENGINES = ("trace", "source")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_wengert_imports_and_differentiates_without_scipy(tmp_path):
    """A meta-path finder that refuses ``scipy``: wengert imports, a NumPy
    gradient works in both engines, and ``load_scipy`` says SciPy is absent."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys

        class NoScipy:
            def find_spec(self, name, path=None, target=None):
                if name == "scipy" or name.startswith("scipy."):
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
                return None

        sys.meta_path.insert(0, NoScipy())
    """))
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import wengert as wg
        from wengert.numpy import library

        def f(x):
            return np.sum(np.sin(x) * x)

        x = np.array([0.5, 1.0, 2.0])
        want = np.sin(x) + x * np.cos(x)
        for engine in ("trace", "source"):
            g = wg.grad(f, engine=engine)(x)
            assert np.allclose(g, want, rtol=1e-12), (engine, g)
        try:
            import scipy
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker did not block scipy")
        assert "scipy" not in sys.modules
        assert library.load_scipy() is False
        print("ok")
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    out = subprocess.run([sys.executable, str(tmp_path / "prog.py")], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --- xlogy and xlog1py at x = 0 ----------------------------------------------
def xlogy_at(x, y):
    return sc.xlogy(x, y)


def xlog1py_at(x, y):
    return sc.xlog1py(x, y)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn, zero_y", [(xlogy_at, 0.0), (xlog1py_at, -1.0)],
                         ids=["xlogy", "xlog1py"])
def test_x_times_log_is_zero_at_x_zero(fn, zero_y, engine):
    """x = 0 gives 0 even where the log is -inf, and the derivative in y at
    x = 0 is x / y = 0 (finite), in x it is the log (finite for y > 0)."""
    x = np.array([0.0, 0.0, 1.5])
    y = np.array([zero_y, 0.7, 0.7])
    np.testing.assert_array_equal(wg.jvp(lambda x: fn(x, y), (x,), (np.ones(3),),
                                         engine=engine)[0], fn(x, y))
    gx, gy = wg.grad(lambda x, y: np.sum(fn(x, y)), argnums=(0, 1), engine=engine)(x, y)
    log = np.log if fn is xlogy_at else np.log1p
    assert np.all(np.isfinite(gy)) and gy[0] == 0.0 and gy[1] == 0.0
    checks.assert_close(gy[2], 1.5 / (0.7 if fn is xlogy_at else 1.7), 1e-12, what="d/dy")
    checks.assert_close(gx[1:], log(y[1:]), 1e-12, what="d/dx = log")


# --- derivatives refused --------------------------------------------------------
def bessel_in_order(v, x):
    return sc.jv(v, x)


def gammainc_in_a(a, x):
    return sc.gammainc(a, x)


def betainc_in_b(b, x):
    return sc.betainc(2.0, b, x)


def stdtr_in_df(df, x):
    return sc.stdtr(df, x)


def kv_in_order(v, x):
    return sc.kv(v, x)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", [bessel_in_order, kv_in_order, gammainc_in_a, betainc_in_b,
                                stdtr_in_df], ids=lambda f: f.__name__)
def test_parameter_derivatives_not_implemented_raise(fn, engine):
    """A tangent in an order or a shape parameter is refused, naming the
    user's line; the derivative in x (that parameter held) still works."""
    p, x = 1.5, 0.6
    with pytest.raises(NoDerivativeRule, match=r"test_scipy_family\.py:\d+.*not implemented"):
        wg.grad(fn, argnums=0, engine=engine)(p, x)
    got = wg.grad(fn, argnums=1, engine=engine)(p, x)
    h = 1e-6
    checks.assert_close(got, (fn(p, x + h) - fn(p, x - h)) / (2 * h), 1e-6, what="d/dx")


def polygamma_traced_n(n, x):
    return sc.polygamma(n, x)


def test_polygamma_refuses_a_traced_order():
    with pytest.raises(NoDerivativeRule, match="fixed integer"):
        wg.grad(polygamma_traced_n, argnums=1, engine="source")(np.array([1.0, 2.0]), 0.5)


# --- scipy.stats: values outside the support, refused shape derivatives ----------
import scipy.stats as st  # noqa: E402

from wengert.core.errors import ConcretizationError  # noqa: E402

_OUTSIDE = {   # name: (shape params, x with points outside and on the edge of the support)
    "gamma": ((2.5,), [-1.0, 0.0, 0.5]),
    "gamma_a1": ((1.0,), [-1.0, 0.0, 0.5]),
    "gamma_a_half": ((0.5,), [-1.0, 0.0, 0.5]),
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
                       match=r"test_scipy_family\.py:\d+: .*engine=.source."):
        wg.grad(fn, engine="trace")(np.array([0.5, 1.0]))


# --- logsumexp with zero weights ---------------------------------------------------
def lse_weighted(a, b):
    return sc.logsumexp(a, b=b)


@pytest.mark.parametrize("a, b", [
    ([1000.0, 1.0, 2.0], [0.0, 1.0, 2.0]),       # an excluded entry far above the others
    ([np.inf, 1.0, 2.0], [0.0, 1.0, 2.0]),       # an excluded inf
    ([3.0, 1.0, 2.0], [0.0, 1.0, 2.0]),          # an excluded entry above them
    ([0.5, 1.0, 2.0], [0.0, 1.0, 2.0]),
], ids=["far", "inf", "above", "below"])
def test_logsumexp_zero_weights(a, b):
    """b = 0 leaves the entry out of the value (SciPy's), its derivative in
    b is still exp(a - out) where that is finite, and 0 in a."""
    a, b = np.array(a), np.array(b)
    want = sc.logsumexp(a, b=b)
    ga, gb = wg.grad(lse_weighted, argnums=(0, 1), engine="source")(a, b)
    out = wg.jvp(lambda a: lse_weighted(a, b), (a,), (np.zeros(3),), engine="source")[0]
    checks.assert_close(out, want, 1e-12, what="value")
    checks.assert_close(ga, b * np.exp(np.where(b == 0, 0.0, a) - want), 1e-12, what="d/da")
    with np.errstate(over="ignore"):
        exact_b = np.exp(a - want)
    if np.all(np.isfinite(exact_b)):
        checks.assert_close(gb, exact_b, 1e-12, what="d/db")
    else:
        checks.assert_close(gb[1:], exact_b[1:], 1e-12, what="d/db")
        assert gb[0] > 1e250, gb          # clipped 700 above the shift: as good as inf


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


# --- dtypes: every scipy.special ufunc computes in the loop SciPy picks ---------------
def _scipy_ufuncs():
    from wengert.numpy import library
    library.load_scipy()
    return sorted((uf for uf in library.UFUNCS if getattr(sc, uf.__name__, None) is uf),
                  key=lambda uf: uf.__name__)


_F32 = np.float32([0.3, 0.6])
_FIXED = {"f32": np.float32([0.4, 0.7]), "f64": np.array([0.4, 0.7]), "py": 0.5}


def last_operand(uf, fixed, x):
    return uf(*fixed, x)


def _ufunc_dtype_params():
    """Each ufunc with each kind of other operand (none for a unary one)."""
    return [pytest.param(uf, fixed, id=f"{uf.__name__}-{fixed}") for uf in _scipy_ufuncs()
            for fixed in (("f32", "f64", "py") if uf.nin > 1 else ("f32",))]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("uf, fixed", _ufunc_dtype_params())
def test_special_ufunc_dtypes_follow_scipys_loop(uf, fixed, engine):
    """float32 x with the other operands float32, float64 or a Python float:
    the value and its tangent have the plain call's dtype (SciPy's first
    loop the operands cast to: xlogy(0.5, x32) is float64, rel_entr(x32,
    0.5)... float32)."""
    others = (_FIXED[fixed],) * (uf.nin - 1)
    with np.errstate(all="ignore"):
        want = uf(*others, _F32)
        out, tangent = wg.jvp(lambda x: last_operand(uf, others, x), (_F32,),
                              (np.ones_like(_F32),), engine=engine)
    assert np.asarray(out).dtype == want.dtype
    assert np.asarray(tangent).dtype == want.dtype
    np.testing.assert_allclose(out, want, rtol=1e-6, equal_nan=True)
