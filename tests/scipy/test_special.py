"""``scipy.special`` on traced values (``wengert/scipy/special.py``), what
the function table's harness does not check: values and derivatives at the
edges of a domain (``xlogy`` at x = 0, ``logsumexp`` with zero weights), the
derivatives refused with a typed error (in an order or shape parameter),
and the dtypes of every ufunc (the loop SciPy picks).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

import wengert as wg
from wengert.core.errors import NoDerivativeRule

import checks


ENGINES = ("trace", "source")


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
    with pytest.raises(NoDerivativeRule, match=r"test_special\.py:\d+.*not implemented"):
        wg.grad(fn, argnums=0, engine=engine)(p, x)
    got = wg.grad(fn, argnums=1, engine=engine)(p, x)
    h = 1e-6
    checks.assert_close(got, (fn(p, x + h) - fn(p, x - h)) / (2 * h), 1e-6, what="d/dx")


def polygamma_traced_n(n, x):
    return sc.polygamma(n, x)


def test_polygamma_refuses_a_traced_order():
    with pytest.raises(NoDerivativeRule, match="fixed integer"):
        wg.grad(polygamma_traced_n, argnums=1, engine="source")(np.array([1.0, 2.0]), 0.5)


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
