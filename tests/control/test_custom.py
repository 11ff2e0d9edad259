"""User-defined derivative rules (``wengert/control/custom.py``,
``custom_lin.py``): ``custom_jvp`` and ``custom_vjp``.

* a custom_jvp rule is used in both modes; a custom_vjp rule in reverse
  mode (forward mode differentiates the body), even where it disagrees with
  the body, and by grad of one float (which takes forward mode);
* the escape hatch: a custom_jvp / custom_vjp function whose body wengert
  cannot trace (SciPy's ``quad``, ``solve_ivp``, ``float()`` of its input)
  runs on plain values at each call, its rule giving every derivative; a
  body whose output changes shape is an error;
* custom_vjp functions inside loops: fwd's residuals cross the loop body.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.testing import check_grads

import checks
import trust_cases as tc


# --- custom rules ------------------------------------------------------------
@wg.custom_jvp
def safe_log1pexp(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


@safe_log1pexp.defjvp
def _safe_log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return safe_log1pexp(x), t * (1.0 / (1.0 + np.exp(-x)))


def test_custom_jvp_rule_is_used_in_both_modes():
    x = np.array([-2.0, 0.5, 3.0, 800.0])   # exp(800) would overflow in a naive rule
    g = wg.grad(lambda x: np.sum(safe_log1pexp(x)))(x)
    np.testing.assert_allclose(g, 1 / (1 + np.exp(-x)), rtol=1e-12)
    _, t = wg.jvp(safe_log1pexp, (x,), (np.ones(4),))
    np.testing.assert_allclose(t, 1 / (1 + np.exp(-x)), rtol=1e-12)
    check_grads(safe_log1pexp, (x[:3],), order=2)


@wg.custom_vjp
def clipped_square(x):
    return x ** 2


def _cs_fwd(x):
    return x ** 2, x


def _cs_bwd(x, ct):
    return (6.0 * x * ct,)         # deliberately 3x the true derivative: shows which is used


clipped_square.defvjp(_cs_fwd, _cs_bwd)


def test_custom_vjp_used_in_reverse_mode_and_works_forward():
    x = np.array([1.0, -2.0, 0.5])
    grad = wg.grad(lambda x: np.sum(np.sin(clipped_square(x))))
    np.testing.assert_allclose(grad(x), np.cos(x ** 2) * 6 * x, rtol=1e-12)
    x5 = np.linspace(-1.0, 1.5, 5)
    np.testing.assert_allclose(grad(x5), np.cos(x5 ** 2) * 6 * x5, rtol=1e-12)
    # forward mode differentiates the primal definition: fwd/bwd are not used
    _, t = wg.jvp(clipped_square, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, 2 * x)
    np.testing.assert_allclose(wg.jacfwd(clipped_square)(x), np.diag(2 * x))
    # forward over reverse: jacfwd differentiates bwd's 6 x ct with ct = x
    h = wg.hessian(lambda x: np.sum(clipped_square(x) * x))(x)
    np.testing.assert_allclose(h, np.diag(14 * x), rtol=1e-12)


def test_custom_vjp_rule_wins_over_body():
    @wg.custom_vjp
    def straight_through(x):
        return np.round(x)

    straight_through.defvjp(lambda x: (np.round(x), None), lambda res, ct: (ct,))
    g = wg.grad(lambda x: np.sum(straight_through(x) * x))(np.array([0.4, 1.6]))
    np.testing.assert_allclose(g, np.round([0.4, 1.6]) + np.array([0.4, 1.6]))


# --- grad of one float takes the user's bwd ---------------------------------------
@pytest.mark.parametrize("engine", ["source", "trace"])
def test_grad_of_one_float_uses_custom_vjp(engine):
    """grad of one float takes forward mode, which would differentiate a
    custom_vjp function's body; it takes the user's bwd instead."""
    assert wg.grad(tc.scaled_clip, engine=engine)(2.0) == 1.0
    assert wg.value_and_grad(tc.scaled_clip, engine=engine)(0.5) == (5.0, 1.0)


X = np.array([0.7, -1.3, 0.4])


def _check_first_and_second_order(fun, x, engine):
    """jvp against finite differences, the dot-product test, and the jvp of
    the jvp against finite differences of the jvp."""
    rng = np.random.default_rng(0)
    t = checks.random_like(x, rng)
    out, out_dot = wg.jvp(fun, (x,), (t,), engine=engine)
    checks.assert_close(out, fun(x), checks.rtol("ref", np.float64), what="value")
    checks.assert_close(out_dot, checks.fd_jvp(fun, (x,), (t,)), checks.rtol("jvp", np.float64),
                        what="jvp vs finite differences")
    _, pullback = wg.vjp(fun, x, engine=engine)
    ct = checks.random_like(out, rng)
    checks.dot_product_check(ct, out_dot, pullback(ct), (t,))
    t2 = checks.random_like(x, rng)

    def jvp_of(y):
        return wg.jvp(fun, (y,), (t,), engine=engine)[1]
    _, got = wg.jvp(jvp_of, (x,), (t2,), engine=engine)
    checks.assert_close(got, checks.fd_jvp(jvp_of, (x,), (t2,)),
                        checks.rtol("jvp2", np.float64), what="second order")


def _fd_grad(fun, x, eps=1e-6):
    return np.array([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


# --- the escape hatch: bodies wengert cannot trace ------------------------------
def _moment(k):
    """m_k(a) = int_0^1 t^(2k) exp(-a t^2) dt by scipy.integrate.quad, whose
    integrand calls float() on ``a``; its derivative is -m_(k+1)(a)."""
    @wg.custom_vjp
    def m(a):
        from scipy.integrate import quad
        return quad(lambda t: t ** (2 * k) * np.exp(-float(a) * t * t), 0.0, 1.0,
                    epsabs=1e-12, epsrel=1e-12)[0]

    def m_fwd(a):
        return m(a), a

    def m_bwd(a, ct):
        return (-ct * MOMENTS[k + 1](a),)
    m.defvjp(m_fwd, m_bwd)
    return m


MOMENTS = [_moment(k) for k in range(5)]


def quad_user(x):
    m0 = MOMENTS[0]
    return np.sin(m0(x[0])) * x[1] + m0(x[1] * x[2]) ** 2


def _decay_body(k):
    from scipy.integrate import solve_ivp
    sol = solve_ivp(lambda t, y: -k * y, (0.0, 1.5), np.array([1.0]), method="DOP853",
                    rtol=1e-13, atol=1e-14)
    return sol.y[0, -1]


@wg.custom_vjp
def decay(k):
    """y(1.5) of y' = -k y, y(0) = 1, by scipy.integrate.solve_ivp: exp(-1.5 k)."""
    return _decay_body(k)


def _decay_fwd(k):
    y = decay(k)
    return y, y


def _decay_bwd(y, ct):
    return (-1.5 * y * ct,)


decay.defvjp(_decay_fwd, _decay_bwd)


def ivp_user(x):
    return decay(x[0] ** 2) * x[1] + np.cos(decay(x[2]))


@wg.custom_jvp
def exp_by_float(x):
    """A body that calls float() on its input (math.exp of a Python float)."""
    import math
    return 2.0 * math.exp(float(x))


@exp_by_float.defjvp
def _exp_by_float_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = exp_by_float(x)
    return y, y * t


@wg.custom_vjp
def cube_by_float(x):
    return float(x) ** 3


cube_by_float.defvjp(lambda x: (cube_by_float(x), x), lambda x, ct: (3.0 * x * x * ct,))


def float_user(x):
    return exp_by_float(x[0] * x[1]) + cube_by_float(x[2]) * np.sin(x[0])


ESCAPES = [quad_user, ivp_user, float_user]


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun", ESCAPES, ids=lambda f: f.__name__)
def test_an_opaque_body_is_differentiated_by_its_rule(fun, engine):
    _check_first_and_second_order(fun, X, engine)
    g = wg.grad(fun, engine=engine)(X)
    checks.assert_close(g, _fd_grad(fun, X), checks.rtol("jvp", np.float64),
                        what="grad vs finite differences")
    h = wg.hessian(fun, engine=engine)(X)
    checks.assert_close(h, np.array([_fd_grad(lambda y: wg.grad(fun, engine=engine)(y)[i], X)
                                     for i in range(3)]),
                        checks.rtol("jvp2", np.float64), what="Hessian vs finite differences")


def test_decay_matches_its_closed_form():
    x = np.array([0.8, 1.7, 0.3])
    g = wg.grad(ivp_user)(x)
    want = np.array([-1.5 * 2 * x[0] * np.exp(-1.5 * x[0] ** 2) * x[1],
                     np.exp(-1.5 * x[0] ** 2),
                     np.sin(np.exp(-1.5 * x[2])) * 1.5 * np.exp(-1.5 * x[2])])
    checks.assert_close(g, want, 1e-9)


SCALE = {"value": 2.0}
BODY_CALLS = [0]        # read by the body only (the source engine guards what fwd/bwd read)


@wg.custom_vjp
def scaled_by_global(x):
    """Reads a global and counts its calls: it runs when the code runs."""
    BODY_CALLS[0] += 1
    return SCALE["value"] * float(x) ** 2


def _scaled_fwd(x):
    return scaled_by_global(x), x


def _scaled_bwd(x, ct):
    return (2.0 * SCALE["value"] * x * ct,)


scaled_by_global.defvjp(_scaled_fwd, _scaled_bwd)


def global_user(x):
    return scaled_by_global(x[0]) * x[1]


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_an_opaque_body_runs_at_each_call(engine):
    vg = wg.value_and_grad(global_user, engine=engine)
    try:
        SCALE["value"] = 2.0
        v, g = vg(X)
        checks.assert_close(v, 2.0 * X[0] ** 2 * X[1], 1e-12)
        SCALE["value"] = 3.0        # (the source engine makes its code again: a global changed)
        v, g = vg(X)
        checks.assert_close(v, 3.0 * X[0] ** 2 * X[1], 1e-12)
        checks.assert_close(g, np.array([6.0 * X[0] * X[1], 3.0 * X[0] ** 2, 0.0]), 1e-12)
        before = BODY_CALLS[0]
        vg(X + 0.5)
        assert BODY_CALLS[0] == before + 1      # once a call: never folded, never twice
    finally:
        SCALE["value"] = 2.0


def test_an_opaque_body_that_changes_its_output_shape_is_an_error():
    @wg.custom_vjp
    def ragged(x):
        return np.ones(int(float(x[0]) > 0) + 1) * float(x[1])

    ragged.defvjp(lambda x: (ragged(x), x), lambda x, ct: (np.zeros(2) + np.sum(ct),))
    g = wg.grad(lambda x: np.sum(ragged(x)), engine="source")
    g(np.array([1.0, 2.0]))
    with pytest.raises(wg.WengertError, match="shape"):
        g(np.array([-1.0, 2.0]))


# --- custom_vjp functions inside loops: fwd's residuals cross the loop body -----
@wg.custom_vjp
def sin2_traceable(x):
    return np.sin(x) * 2.0


@wg.custom_vjp
def sin2_opaque(x):
    import math
    return math.sin(float(x)) * 2.0


def _sin2_bwd(x, ct):
    return (2.0 * np.cos(x) * ct,)


sin2_traceable.defvjp(lambda x: (sin2_traceable(x), x), _sin2_bwd)
sin2_opaque.defvjp(lambda x: (sin2_opaque(x), x), _sin2_bwd)
SIN2 = {"traceable": sin2_traceable, "opaque": sin2_opaque}


def for_loop_of_custom(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + SIN2[KIND[0]](x[i]) * s + x[i]
    return s


def while_loop_of_custom(x):
    s = x[0]
    while s < 4.0:
        s = s + SIN2[KIND[0]](s * x[1]) * 0.1 + 1.0
    return s


KIND = ["traceable"]


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("kind", ["traceable", "opaque"])
@pytest.mark.parametrize("fun", [for_loop_of_custom, while_loop_of_custom],
                         ids=lambda f: f.__name__)
def test_custom_vjp_inside_loops(fun, kind, engine):
    KIND[0] = kind
    try:
        _check_first_and_second_order(fun, X, engine)
    finally:
        KIND[0] = "traceable"
