"""The math family (``wengert/numpy/elementary.py``, ``nan.py``, over the rows
of ``primitives/elementwise.py``, ``transcendental.py``, ``ordering.py``):
edge semantics, which the function table's random operands do not reach:
removable singularities (sinc at 0), no overflow (hypot, arcsinh at 1e200),
NaN handling (fmax/fmin, the nan-reductions, nan_to_num), exact values of
log2/exp2 at powers of two, interp/einsum forms, and remainder and powers at
their edges. Each is checked in both engines against values worked out by
hand or against NumPy.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors

import trust_cases as tc
from checks import assert_close, rtol


ENGINES = ("trace", "source")


# --- sinc at 0: value 1, derivatives 0 and -pi^2/3 ---------------------------
def sinc_sum(x):
    return np.sum(np.sinc(x))


@pytest.mark.parametrize("engine", ENGINES)
def test_sinc_value_and_derivatives_at_zero(engine):
    x = np.array([0.0, 0.0])
    assert wg.value_and_grad(sinc_sum, engine=engine)(x)[0] == 2.0
    np.testing.assert_array_equal(wg.grad(sinc_sum, engine=engine)(x), [0.0, 0.0])
    hess = wg.hessian(sinc_sum, engine=engine)(x)
    np.testing.assert_allclose(hess, np.diag([-math.pi ** 2 / 3] * 2), rtol=1e-12, atol=1e-15)


# --- no overflow at large operands ---------------------------------------------
def hypot_sum(x, y):
    return np.sum(np.hypot(x, y))


@pytest.mark.parametrize("engine", ENGINES)
def test_hypot_large_operands_and_origin(engine):
    x, y = np.array([3e200, 0.0]), np.array([4e200, 0.0])
    val, (gx, gy) = wg.value_and_grad(hypot_sum, argnums=(0, 1), engine=engine)(x, y)
    assert val == hypot_sum(x, y) and np.isfinite(val)
    # at (0, 0) the value is 0 and the (sub)gradient 0, not NaN
    np.testing.assert_allclose(gx, [0.6, 0.0], rtol=1e-15)
    np.testing.assert_allclose(gy, [0.8, 0.0], rtol=1e-15)


def arcsinh_sum(x):
    return np.sum(np.arcsinh(x))


def arccosh_sum(x):
    return np.sum(np.arccosh(x))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun, x", [(arcsinh_sum, np.array([-1e200, 1e200, -1e-300])),
                                    (arccosh_sum, np.array([1e200, 1e300]))],
                         ids=["arcsinh", "arccosh"])
def test_inverse_hyperbolic_derivative_at_large_x(fun, x, engine):
    # d/dx = 1 / sqrt(x^2 +- 1) ~ 1 / |x|: finite, not 0 from an overflowed x^2
    want = 1.0 / np.sqrt(np.abs(x) - 1) / np.sqrt(np.abs(x) + 1) if fun is arccosh_sum \
        else 1.0 / np.hypot(x, 1.0)
    np.testing.assert_allclose(wg.grad(fun, engine=engine)(x), want, rtol=1e-14)


# --- exact values and negative operands --------------------------------------------
def log2_exp2(x):
    return np.log2(x), np.exp2(x), np.log10(x), np.cbrt(-x)


@pytest.mark.parametrize("engine", ENGINES)
def test_exact_values_at_powers(engine):
    x = np.array([8.0, 512.0, 1000.0])
    got, _ = wg.jvp(log2_exp2, (x,), (np.ones(3),), engine=engine)
    for g, w in zip(got, log2_exp2(x)):
        np.testing.assert_array_equal(g, w)        # NumPy's values, to the bit
    np.testing.assert_array_equal(got[0], [3.0, 9.0, np.log2(1000.0)])


def cbrt_sum(x):
    return np.sum(np.cbrt(x))


@pytest.mark.parametrize("engine", ENGINES)
def test_cbrt_negative_operands(engine):
    np.testing.assert_allclose(wg.grad(cbrt_sum, engine=engine)(np.array([-8.0, 27.0])),
                               [1.0 / 12.0, 1.0 / 27.0], rtol=1e-15)


# --- NaN semantics ---------------------------------------------------------------
def fmax_sum(x, y):
    return np.sum(np.fmax(x, y) * np.array([1.0, 2.0, 3.0]))


def fmin_sum(x, y):
    return np.sum(np.fmin(x, y) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun, ufunc", [(fmax_sum, np.fmax), (fmin_sum, np.fmin)],
                         ids=["fmax", "fmin"])
def test_fmax_fmin_the_number_wins_over_nan(fun, ufunc, engine):
    x, y = np.array([np.nan, 1.0, 5.0]), np.array([2.0, np.nan, 4.0])
    val, (gx, gy) = wg.value_and_grad(fun, argnums=(0, 1), engine=engine)(x, y)
    assert val == fun(x, y) and np.isfinite(val)
    pick_x = np.array([False, True, ufunc is np.fmax])
    np.testing.assert_array_equal(gx, np.where(pick_x, [1.0, 2.0, 3.0], 0.0))
    np.testing.assert_array_equal(gy, np.where(pick_x, 0.0, [1.0, 2.0, 3.0]))


def _nan_reductions():
    return [np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanmax, np.nanmin, np.nanprod,
            np.nancumsum]


def nan_reduce(x, fn):
    return np.sum(fn(x) * 1.5)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", _nan_reductions(), ids=lambda f: f.__name__)
def test_nan_reductions_zero_derivative_on_nan_entries(fn, engine):
    x = np.array([0.5, np.nan, -1.25, 2.0, np.nan])
    val, g = wg.value_and_grad(nan_reduce, engine=engine)(x, fn)
    assert val == pytest.approx(nan_reduce(x, fn), rel=1e-14)
    assert np.all(np.isfinite(g)) and g[1] == 0.0 and g[4] == 0.0
    if fn is np.nancumsum:       # the NaN entries keep their places in the output
        return
    # the other entries: as if the NaN entries were not there
    kept = wg.grad(nan_reduce, engine=engine)(x[[0, 2, 3]], fn)
    np.testing.assert_allclose(g[[0, 2, 3]], kept, rtol=1e-14)


def nan_to_num_sum(x):
    return np.sum(np.nan_to_num(x, posinf=7.0) * np.array([1.0, 2.0, 0.5, 4.0]))


def nan_to_num_in_place(x):
    np.nan_to_num(x, copy=False)
    return np.sum(x)


@pytest.mark.parametrize("engine", ENGINES)
def test_nan_to_num(engine):
    x = np.array([np.nan, np.inf, -np.inf, 0.5])
    val, g = wg.value_and_grad(nan_to_num_sum, engine=engine)(x)
    assert val == nan_to_num_sum(x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 4.0])
    with pytest.raises(errors.InPlaceUpdateError, match=r"test_math.py:\d+: .*copy=False"):
        wg.grad(nan_to_num_in_place, engine=engine)(np.array([1.0, np.nan]))


# --- interp: a traced period is refused; one sample point -------------------------------
def interp_traced_period(x, p):
    return np.sum(np.interp(x, [0.0, 1.0], [1.0, 2.0], period=p))


@pytest.mark.parametrize("engine", ENGINES)
def test_interp_traced_period_refused(engine):
    with pytest.raises(errors.NoDerivativeRule, match=r"test_math.py:\d+: np.interp.*period"):
        wg.grad(interp_traced_period, argnums=(0, 1), engine=engine)(np.array([0.5]), 2.0)


def interp_sum(x, fp):
    return np.sum(np.interp(x, [0.0, 1.0, 3.0], fp) * np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("engine", ENGINES)
def test_interp_derivatives_by_hand(engine):
    # x on [0, 1], on [1, 3], left of 0 and right of 3
    x, fp = np.array([0.25, 2.0, -1.0, 4.0]), np.array([1.0, 3.0, -1.0])
    gx, gfp = wg.grad(interp_sum, argnums=(0, 1), engine=engine)(x, fp)
    np.testing.assert_allclose(gx, [2.0 * 1, -2.0 * 2, 0.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(gfp, [0.75 + 3.0, 0.25 + 0.5 * 2, 0.5 * 2 + 4.0], rtol=1e-15)


# --- einsum: the sublist form is the string form ------------------------------------------
def einsum_pair(a, b):
    return (np.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum("ij,jk->ik", a, b),
            np.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]))


@pytest.mark.parametrize("engine", ENGINES)
def test_einsum_sublist_matches_string_form(engine):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    ta, tb = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out, out_dot = wg.jvp(einsum_pair, (a, b), (ta, tb), engine=engine)
    np.testing.assert_allclose(out[0], a @ b, rtol=1e-14)
    np.testing.assert_allclose(out[2], a @ b, rtol=1e-14)
    np.testing.assert_allclose(out_dot[0], out_dot[1], rtol=1e-14)
    np.testing.assert_allclose(out_dot[0], ta @ b + a @ tb, rtol=1e-13)


# --- clip: derivative 1 inside, 0 outside; the bounds take it where they bind ------------
def clip_arrays(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * np.array([1.0, 2.0, 3.0]))


def clip_lo(x, lo):
    return np.sum(np.clip(x, lo, None) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("engine", ENGINES)
def test_clip_derivatives_by_hand(engine):
    x = np.array([-2.0, 0.3, 2.0])
    lo, hi = np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.5])
    gx, glo, ghi = wg.grad(clip_arrays, argnums=(0, 1, 2), engine=engine)(x, lo, hi)
    np.testing.assert_array_equal(gx, [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(glo, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 3.0])
    gx, glo = wg.grad(clip_lo, argnums=(0, 1), engine=engine)(x, 0.5)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 3.0])
    assert glo == 3.0


# --- one source-engine derivative, every input shape -----------------------------------------
# The wrappers decide on lengths (convolve's and correlate's windows, interp's
# segments, polyval's loop over coefficients...): a source-engine derivative
# is staged once and must stay right when the lengths change.
def conv_same(a, v):
    return np.sum(np.convolve(a, v, "same") ** 2)


def conv_valid(a, v):
    return np.sum(np.convolve(a, v, mode="valid") ** 2)


def corr_same(a, v):
    return np.sum(np.correlate(a, v, "same") ** 2)


def corr_valid(a, v):
    return np.sum(np.correlate(a, v) ** 2)


def interp_fp(x, fp):
    return np.sum(np.interp(x, np.arange(fp.shape[0]) * 1.0, fp) ** 2)


def polyval_p(p, x):
    return np.sum(np.polyval(p, x) ** 2)


def trapezoid_x(y, x):
    return np.trapezoid(y ** 2, np.cumsum(x ** 2))


def average_w(a, w):
    return np.average(a ** 2, weights=w ** 2)


_PAIRS = [(5, 2), (2, 5), (4, 4), (3, 6), (7, 3)]


@pytest.mark.parametrize("fun, shapes", [
    (conv_same, _PAIRS), (conv_valid, _PAIRS), (corr_same, _PAIRS), (corr_valid, _PAIRS),
    (interp_fp, [(5, 3), (2, 1), (4, 6)]), (polyval_p, [(3, 4), (1, 2), (5, 1)]),
    (trapezoid_x, [(4, 4), (2, 2), (7, 7)]), (average_w, [(3, 3), (5, 5), (1, 1)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_source_derivative_valid_for_every_length(fun, shapes):
    g_source = wg.grad(fun, argnums=(0, 1), engine="source")
    rng = np.random.default_rng(7)
    for n, m in shapes:
        a, b = rng.uniform(0.2, 2.0, n), rng.uniform(0.2, 2.0, m)
        want = wg.grad(fun, argnums=(0, 1), engine="trace")(a, b)
        got = g_source(a, b)
        for gl, wl in zip(got, want):
            np.testing.assert_allclose(gl, wl, rtol=1e-12, err_msg=f"lengths {n}, {m}")


# --- every ufunc of the table on integer operands: NumPy's integer semantics ----------------
# Integer values are not differentiated, but the source engine stages them:
# a wrapper written as a float composite (1.0 / n for np.reciprocal, pow for
# np.float_power) would change their values there.
_N1, _N2 = np.array([1, 2, -3, 4]), np.array([3, -2, 2, 1])


def _int_ufuncs():
    from wengert.numpy import library
    out = []
    with np.errstate(all="ignore"):
        for name, u, kind in library.entries():
            if kind != "ufunc" or u.nout != 1 or u.nin not in (1, 2):
                continue
            try:
                want = u(*(_N1, _N2)[:u.nin])
            except (TypeError, ValueError):
                continue         # no integer loop: nothing to keep
            if np.asarray(want).dtype.kind in "biuf":
                out.append(pytest.param(u, id=name))
    return out


def times_unary(x, n, u):
    return np.sum(x * u(n))


def times_binary(x, n, m, u):
    return np.sum(x * u(n, m))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("u", _int_ufuncs())
def test_ufunc_on_integers_keeps_numpy_values(u, engine):
    x = np.ones(4)
    with np.errstate(all="ignore"):
        want = np.broadcast_to(np.asarray(u(*(_N1, _N2)[:u.nin]), np.float64), x.shape)
        if u.nin == 1:
            got = wg.grad(times_unary, engine=engine)(x, _N1, u)
        else:
            got = wg.grad(times_binary, engine=engine)(x, _N1, _N2, u)
    # integer semantics (reciprocal, floor division) differ by far more than
    # the last bit an implementation of erf or ndtr may round differently
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0.0)


# --- interp at repeated sample points: NumPy's values, finite derivatives ------------------------
_XP_REPEATED = np.array([0.0, 0.0, 1.0, 1.0, 2.0, 2.0])


def interp_repeated(x, fp):
    return np.interp(x, _XP_REPEATED, fp)


def interp_repeated_sum(x, fp):
    return np.sum(np.interp(x, _XP_REPEATED, fp) * np.arange(1.0, 8.0))


@pytest.mark.parametrize("engine", ENGINES)
def test_interp_repeated_sample_points(engine):
    x = np.array([-0.5, 0.0, 1.0, 2.0, 0.5, 1.5, 3.0])
    fp = np.array([-1.0, 0.0, 1.0, 5.0, 6.0, 9.0])
    out, _ = wg.jvp(interp_repeated, (x, fp), (np.ones(7), np.ones(6)), engine=engine)
    np.testing.assert_array_equal(out, np.interp(x, _XP_REPEATED, fp))
    gx, gfp = wg.grad(interp_repeated_sum, argnums=(0, 1), engine=engine)(x, fp)
    # slopes 1 on [0, 1] and [1, 2] (from the right at the points), 0 outside and at 2
    np.testing.assert_array_equal(gx, [0.0, 2.0, 3.0, 0.0, 5.0, 6.0, 0.0])
    np.testing.assert_allclose(gfp, [1.0, 2.0 + 2.5, 2.5, 3.0 + 3.0, 3.0, 4.0 + 7.0],
                               rtol=1e-15)


# --- remainder and powers at their edges ------------------------------------------
EXACT = rtol("exact", np.float64)


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_edge_values(engine):
    """Issue 10: remainder's tangent, and powers whose base or exponent is zero, at their edges."""
    x, y = np.array(5.0), np.arange(1.0, 5.0)
    out, dot = wg.jvp(tc.remainder, (x, y), (np.array(1.0), np.zeros(4)), engine=engine)
    assert_close(dot, np.ones(4), EXACT)
    out, dot = wg.jvp(tc.remainder_by_constant, (x,), (np.array(1.0),), engine=engine)
    assert_close(dot, np.ones(4), EXACT)
    assert wg.grad(tc.power_of_zero, engine=engine)(2.0) == 0.0
    assert wg.grad(tc.to_the_zero, engine=engine)(0.0) == 0.0
    assert wg.grad(tc.to_the_zero, engine=engine)(1.5) == 0.0
    assert_close(wg.grad(tc.power_of_zero, engine=engine)(0.5), 0.0, EXACT)
