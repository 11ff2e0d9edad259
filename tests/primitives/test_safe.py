"""``primitives/safe.py``: ``safe_mul`` and ``safe_div``, and the rows of the
singular functions that use them. A tangent or cotangent that is exactly zero
contributes exactly zero even where the local derivative is inf or nan, so a
masked or ``where``-selected branch gives the one-sided answer, in reverse
and forward mode, at second order, in both engines and on both backends.

Once: ``np.sum(np.tril(np.sqrt((x[:, None] - x[None, :]) ** 2), -1))`` at
``[1.5, -0.7]`` had gradient ``[nan, nan]`` (0 times the inf slope of sqrt at
the masked diagonal); ``np.where(x > 0, np.sqrt(x), 0.0)`` at 0 had nan.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.primitives.safe import has_nan, safe_div, safe_div_impl, safe_mul, safe_mul_impl
from checks import assert_close, fd_jvp

ENGINES = ("source", "trace")

pytestmark = pytest.mark.usefixtures("quiet_singular")


# --- the rows' values --------------------------------------------------------------------

@pytest.mark.parametrize("g, f, want", [
    (0.0, np.inf, 0.0), (0.0, np.nan, 0.0), (np.inf, 0.0, 0.0), (2.0, np.inf, np.inf),
    (np.nan, 2.0, np.nan), (3.0, 2.0, 6.0)], ids=["0_inf", "0_nan", "inf_0", "2_inf", "nan_2",
                                                   "3_2"])
def test_safe_mul_is_zero_where_either_factor_is(g, f, want):
    for a, b in ((g, f), (np.array([g, 1.0]), np.array([f, 1.0])), (np.float64(g), f)):
        got = safe_mul_impl(a, b)
        np.testing.assert_array_equal(np.ravel(got)[0], want)
        assert type(got) is type(a * b)


@pytest.mark.parametrize("g, f, want", [
    (0.0, 0.0, 0.0), (0.0, np.nan, 0.0), (1.0, 0.0, np.inf), (np.inf, np.inf, np.nan),
    (3.0, 2.0, 1.5)], ids=["0_0", "0_nan", "1_0", "inf_inf", "3_2"])
def test_safe_div_is_zero_where_the_numerator_is(g, f, want):
    for a, b in ((g, f), (np.array([g, 1.0]), np.array([f, 1.0]))):
        got = safe_div_impl(a, b)
        np.testing.assert_array_equal(np.ravel(got)[0], want)


def test_a_broadcast_guard_zeroes_every_element_it_covers():
    got = safe_mul_impl(np.zeros((3, 1)), np.array([[np.inf, 1.0]]))
    np.testing.assert_array_equal(got, np.zeros((3, 2)))
    assert got.dtype == np.float64


def test_float32_stays_float32():
    g = np.array([0.0, 1.0], np.float32)
    out = safe_div_impl(g, np.array([0.0, 2.0], np.float32))
    assert out.dtype == np.float32 and out[0] == 0.0


def test_a_finite_nonzero_number_gives_the_plain_row():
    prog = wg.make_program(lambda x: safe_div(x, 2.0) + safe_mul(x, 3.0) + safe_div(1.0, x),
                           np.ones(3), engine="trace")
    names = [e.prim.name for e in prog.eqns]
    assert "safe_div" not in names and "safe_mul" not in names, names


# --- gradients at the masked singular points ----------------------------------------------

def tril_sqrt(x):
    return np.sum(np.tril(np.sqrt((x[:, None] - x[None, :]) ** 2), -1))


def where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def where_pow_half(x):
    return np.sum(np.where(x > 0, x ** 0.5, 0.0))


def where_log(x):
    return np.sum(np.where(x > 0, np.log(np.abs(x)), 0.0))


def where_div(x):
    return np.sum(np.where(x != 0, 1.0 / x, 0.0))


def where_y_over_x(x):
    return np.where(x[0] != 0, x[1] / x[0], 0.0)


def where_arcsin(x):
    return np.sum(np.where(x < 1, np.arcsin(x), 0.0))


def where_arccos(x):
    return np.sum(np.where(x < 1, np.arccos(x), 0.0))


def where_arctanh(x):
    return np.sum(np.where(x < 1, np.arctanh(x), 0.0))


def where_power(x):
    return np.sum(np.where(x > 0, np.power(x, -1.0), 0.0))


def masked_norm(x):
    r2 = np.sum(x * x)
    return np.where(r2 > 0, np.sqrt(r2), 0.0)


def index_sqrt(x):
    return np.sqrt(x)[1]


# function -> (point, gradient there): the one-sided answer
SINGULAR = {
    "tril_sqrt": (tril_sqrt, [1.5, -0.7], [1.0, -1.0]),
    "where_sqrt": (where_sqrt, [0.0, 4.0], [0.0, 0.25]),
    "where_pow_half": (where_pow_half, [0.0, 4.0], [0.0, 0.25]),
    "where_log": (where_log, [0.0, 2.0], [0.0, 0.5]),
    "where_div": (where_div, [0.0, 2.0], [0.0, -0.25]),
    "where_y_over_x": (where_y_over_x, [0.0, 2.0], [0.0, 0.0]),
    "where_arcsin": (where_arcsin, [1.0, 0.0], [0.0, 1.0]),
    "where_arccos": (where_arccos, [1.0, 0.0], [0.0, -1.0]),
    "where_arctanh": (where_arctanh, [1.0, 0.0], [0.0, 1.0]),
    "where_power": (where_power, [0.0, 2.0], [0.0, -0.25]),
    "masked_norm": (masked_norm, [0.0, 0.0], [0.0, 0.0]),
    "index_sqrt": (index_sqrt, [0.0, 4.0], [0.0, 0.25]),
}


def scalar_sqrt(x):
    return np.where(x > 0, np.sqrt(x), 0.0)


def scalar_log(x):
    return np.where(x > 0, np.log(x), -1.0)


def plain_sqrt(x):
    return np.sum(np.sqrt(x))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_reverse_mode_gives_the_one_sided_gradient(name, engine):
    f, x, want = SINGULAR[name]
    x = np.array(x)
    assert_close(wg.grad(f, engine=engine)(x), np.array(want), 1e-12)
    assert_close(wg.jacrev(f, engine=engine)(x), np.array(want), 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_forward_mode_gives_it_too(name, engine):
    f, x, want = SINGULAR[name]
    x = np.array(x)
    assert_close(wg.jacfwd(f, engine=engine)(x), np.array(want), 1e-12)
    for k in range(len(x)):
        e = np.zeros(len(x))
        e[k] = 1.0
        _, t = wg.jvp(f, (x,), (e,), engine=engine)
        assert_close(t, want[k], 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["where_sqrt", "where_pow_half", "where_log", "where_div",
                                  "where_arcsin", "where_arctanh"])
def test_second_order_is_finite_and_matches_differences_away_from_the_point(name, engine):
    f, x, _ = SINGULAR[name]
    x = np.array(x)
    h = wg.hessian(f, engine=engine)(x)
    assert np.all(np.isfinite(h)), h
    assert h[0, 0] == 0.0 and h[0, 1] == 0.0 and h[1, 0] == 0.0
    # the other element: finite differences of the gradient
    g = wg.grad(f, engine=engine)
    e = np.array([0.0, 1.0])
    assert_close(h[1], fd_jvp(g, (x,), (e,)), 1e-5)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_scalar_argument_at_the_singular_point(engine):
    assert wg.grad(scalar_sqrt, engine=engine)(0.0) == 0.0
    assert wg.grad(scalar_log, engine=engine)(0.0) == 0.0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_genuinely_infinite_derivative_stays_infinite(engine):
    # the tangent is not zero there: d sqrt(x) / dx at 0 is +inf
    assert wg.grad(plain_sqrt, engine=engine)(np.array([0.0]))[0] == np.inf


@pytest.mark.parametrize("shape", [(), (2,), (1, 2), (32,), (33,), (4, 50)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_has_nan_agrees_with_numpy_small_and_large(shape, dtype):
    """The check the generated code calls: a Python sum of a small array's
    items, NumPy's sum of a larger one; nan, and inf - inf, both found."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype(dtype)
    assert not has_nan(x)
    for bad in ([np.nan], [np.inf, -np.inf])[:1 if x.size == 1 else 2]:
        y = x.copy().reshape(-1)
        y[-len(bad):] = bad
        assert has_nan(y.reshape(shape))
    assert not has_nan(np.full(shape, np.inf, dtype))


def test_generated_code_checks_the_quotient_and_runs_standalone():
    g = wg.grad(SINGULAR["where_sqrt"][0], engine="source")
    x = np.array([0.0, 4.0])
    g(x)
    src = g.source
    assert ".sum()) != " in src and "np.where(" in src, src
    namespace = {"np": np}
    exec(src, namespace)
    name = src.split("def ", 1)[1].split("(", 1)[0]
    np.testing.assert_array_equal(namespace[name](x)[0], [0.0, 0.25])


@pytest.mark.numba
@pytest.mark.parametrize("name", ["tril_sqrt", "where_sqrt", "where_pow_half", "where_div",
                                  "where_arcsin"])
def test_numba_backend_gives_the_same_gradient(name):
    f, x, want = SINGULAR[name]
    g = wg.grad(f, engine="source", backend="numba", fallback=False)
    assert_close(g(np.array(x)), np.array(want), 1e-12)
