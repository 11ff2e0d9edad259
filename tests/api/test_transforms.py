"""The public API (``wengert/api/transforms.py``): pytrees, argnums,
has_aux, dtype keeping, Jacobians and Hessians, nesting, linearize and
linear_transpose, grad of one float (forward mode), and that nothing the
caller holds is mutated, nor read again after the call: a pullback or a
linear function keeps the values it was made at.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.testing import check_grads, fd_jvp

import source_cases as C
import trust_cases as tc
from checks import assert_close, rtol


RNG = np.random.default_rng(42)


def fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_grad_matches_finite_differences_on_arrays():
    x = RNG.standard_normal((3, 4))

    def f(x):
        return np.sum(np.tanh(x) ** 2 * np.exp(-x)) + x[1, 2] * x[0, 0]

    np.testing.assert_allclose(wg.grad(f)(x), fd_grad(f, x), rtol=1e-6, atol=1e-8)


def test_pytree_inputs_and_outputs():
    params = {"w": RNG.standard_normal((3,)), "b": [0.5, (np.float64(1.5),)]}

    def f(p, scale):
        return scale * (np.sum(p["w"] ** 2) + p["b"][0] * p["b"][1][0])

    g = wg.grad(f)(params, 2.0)
    assert set(g) == {"w", "b"} and isinstance(g["b"], list) and isinstance(g["b"][1], tuple)
    np.testing.assert_allclose(g["w"], 4.0 * params["w"])
    assert g["b"][0] == pytest.approx(2.0 * 1.5)
    assert g["b"][1][0] == pytest.approx(2.0 * 0.5)

    def g2(x):
        return {"a": x * 2.0, "b": (np.sin(x), [x ** 2])}

    out, tan = wg.jvp(g2, (1.0,), (1.0,))
    assert tan["a"] == pytest.approx(2.0)
    assert tan["b"][0] == pytest.approx(np.cos(1.0))
    assert tan["b"][1][0] == pytest.approx(2.0)


def test_argnums_int_and_tuple():
    def f(x, y, z):
        return x * y ** 2 + np.sin(z)

    assert wg.grad(f, argnums=1)(1.5, 2.0, 0.3) == pytest.approx(2 * 1.5 * 2.0)
    gx, gz = wg.grad(f, argnums=(0, 2))(1.5, 2.0, 0.3)
    assert gx == pytest.approx(4.0) and gz == pytest.approx(np.cos(0.3))
    assert wg.grad(f, argnums=-1)(1.5, 2.0, 0.3) == pytest.approx(np.cos(0.3))


def test_has_aux():
    def f(x):
        loss = np.sum(x ** 2)
        return loss, {"norm": np.sqrt(loss), "count": 3}

    x = np.array([3.0, 4.0])
    g, aux = wg.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x)
    assert aux["norm"] == pytest.approx(5.0) and aux["count"] == 3
    assert isinstance(aux["norm"], (float, np.floating, np.ndarray))
    (v, aux2), g2 = wg.value_and_grad(f, has_aux=True)(x)
    assert v == pytest.approx(25.0) and aux2["norm"] == pytest.approx(5.0)


def test_float32_is_kept():
    x = RNG.standard_normal(5).astype(np.float32)

    def f(x):
        return np.sum(np.sin(x) * 2.0 + x ** 2)

    g = wg.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * np.cos(x) + 2 * x, rtol=1e-5)
    out, t = wg.jvp(lambda x: np.exp(x) * 3.0, (x,), (np.ones_like(x),))
    assert out.dtype == np.float32 and t.dtype == np.float32
    assert wg.jacfwd(lambda x: np.sin(x))(x).dtype == np.float32


def test_caller_arrays_are_not_mutated():
    x = RNG.standard_normal((4,))
    y = RNG.standard_normal((4,))
    x0, y0 = x.copy(), y.copy()

    def f(x, y):
        z = wg.at(x)[1:3].set(y[:2] * 2.0)
        z = wg.at(z)[0].add(y[3])
        return np.sum(z ** 2 * y)

    wg.grad(f, argnums=(0, 1))(x, y)
    wg.jacfwd(f, argnums=(0, 1))(x, y)
    wg.hessian(f)(x, y)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    check_grads(f, (x, y), order=2)


def test_jacfwd_equals_jacrev_equals_fd():
    x = RNG.standard_normal((3,))
    w = RNG.standard_normal((2, 3))

    def f(x):
        return np.tanh(w @ x) * x[0]

    jf, jr = wg.jacfwd(f)(x), wg.jacrev(f)(x)
    assert jf.shape == (2, 3) and jr.shape == (2, 3)
    fd = np.stack([fd_jvp(f, (x,), (e,), 1e-6) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(jf, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jr, jf, rtol=1e-12, atol=1e-14)


def test_jacobian_shapes_follow_jax_convention():
    x = RNG.standard_normal((2, 3))

    def f(x):
        return np.sum(x, axis=0) * 2.0, x[0, 0]

    jf = wg.jacfwd(f)(x)
    jr = wg.jacrev(f)(x)
    assert jf[0].shape == (3, 2, 3) and jf[1].shape == (2, 3)
    np.testing.assert_allclose(jf[0], jr[0])
    np.testing.assert_allclose(jf[1], jr[1])
    expected = np.zeros((3, 2, 3))
    for j in range(3):
        expected[j, :, j] = 2.0
    np.testing.assert_array_equal(jf[0], expected)


def test_hessian_matches_fd_of_gradient():
    a = RNG.standard_normal((3, 3))

    def f(x):
        return np.sum(np.exp(a @ x)) + np.prod(x) + x[0] ** 3

    x = RNG.standard_normal(3) * 0.3
    h = wg.hessian(f)(x)
    g = wg.grad(f)
    fd = np.stack([fd_jvp(g, (x,), (e,), 1e-5) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-12)


def test_third_order_by_nesting():
    f = lambda x: np.sin(x) * x  # noqa: E731
    d3 = wg.grad(wg.grad(wg.grad(f)))(0.7)
    # (x sin x)''' = -3 sin x - x cos x
    assert d3 == pytest.approx(-3 * np.sin(0.7) - 0.7 * np.cos(0.7), rel=1e-12)


def test_nested_closure_over_outer_variable():
    # d/dy [ d/dx (x * y^2) ] = 2y : the inner derivative closes over y
    def outer(y):
        return wg.grad(lambda x: x * y ** 2)(3.0)

    assert wg.grad(outer)(1.5) == pytest.approx(3.0)
    assert wg.jvp(outer, (1.5,), (1.0,))[1] == pytest.approx(3.0)


def test_linearize_and_linear_transpose():
    x = RNG.standard_normal(4)

    def f(x):
        return np.cumsum(np.sin(x)) * x

    out, lin = wg.linearize(f, x)
    t = RNG.standard_normal(4)
    np.testing.assert_allclose(lin(t), wg.jvp(f, (x,), (t,))[1], rtol=1e-12)
    lin_t = wg.linear_transpose(lin, x)
    u = RNG.standard_normal(4)
    ct, = lin_t(u)
    _, pullback = wg.vjp(f, x)
    np.testing.assert_allclose(ct, pullback(u)[0], rtol=1e-12)
    assert np.dot(u, lin(t)) == pytest.approx(np.dot(ct, t), rel=1e-12)


def test_control_flow_taken_at_concrete_values():
    def f(x):
        total = 0.0
        i = 0
        while np.sum(x) < 10.0 and i < 20:
            x = x * 1.5
            i += 1
        if x[0] > 0:
            total = total + np.sum(x ** 2)
        else:
            total = total - np.sum(x)
        return total

    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(wg.grad(f)(x), fd_grad(f, x), rtol=1e-6)
    x = np.array([-1.0, 2.0])
    np.testing.assert_allclose(wg.grad(f)(x), fd_grad(f, x), rtol=1e-6)


# --- grad of one float input: forward mode -------------------------------------
def _scaled(a):
    return np.sin(a) * a, a * 2.0


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("a", [2.0, np.float64(9.0), np.array(0.25)],
                         ids=["float", "np.float64", "0-d"])
def test_grad_of_one_float_is_forward_mode_and_exact(engine, a):
    # one float in: grad takes forward mode, which stores nothing for a reverse
    # sweep; the value is the derivative all the same, in the input's dtype
    g = wg.grad(C.while_newton, engine=engine)(a)
    assert np.asarray(g).dtype == np.asarray(a).dtype
    tol = 1e-12
    np.testing.assert_allclose(g, 0.5 / np.sqrt(float(a)), rtol=tol)
    value, g2 = wg.value_and_grad(C.while_newton, engine=engine)(a)
    np.testing.assert_allclose(value, np.sqrt(float(a)), rtol=tol)
    np.testing.assert_allclose(g2, g, rtol=0)
    # and it equals the reverse mode of the same function (vjp)
    _, pullback = wg.vjp(C.while_newton, a, engine=engine)
    np.testing.assert_allclose(pullback(np.ones_like(np.asarray(value)))[0], g, rtol=tol)


def test_grad_of_one_float_stores_nothing_and_keeps_aux():
    g = wg.grad(C.while_newton, engine="source")
    g(2.0)
    assert ".append(" not in g.source and "[::-1]" not in g.source
    grad_aux = wg.grad(_scaled, has_aux=True, engine="source")
    d, aux = grad_aux(0.7)
    np.testing.assert_allclose(d, np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-14)
    np.testing.assert_allclose(aux, 1.4)
    d32 = wg.grad(lambda a: np.sin(a) * a, engine="source")(np.float32(0.7))
    assert np.asarray(d32).dtype == np.float32
    np.testing.assert_allclose(d32, np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-6)
    # second order: forward over forward
    h = wg.grad(wg.grad(lambda a: np.sin(a) * a * a))(0.3)
    np.testing.assert_allclose(h, 2 * np.sin(0.3) + 4 * 0.3 * np.cos(0.3)
                               - 0.09 * np.sin(0.3), rtol=1e-12)


# --- arrays the caller writes after the derivative kept them ----------------------
EXACT = rtol("exact", np.float64)


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_arrays_written_after_use(engine):
    """Issue 10: arrays the caller writes after the call (the output it got, the input it
    passed) change nothing a pullback or a linear function made before holds."""
    w, x = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert_close(wg.grad(tc.rescaled_after_use, argnums=1, engine=engine)(w, x), w, EXACT)
    x = np.array([0.5, 1.0])
    y, pullback = wg.vjp(tc.expm, x, engine=engine)
    y *= 0.0                              # the output the caller got
    x *= 3.0                              # the input it passed
    assert_close(pullback(np.ones(2))[0], np.exp([0.5, 1.0]), EXACT)
    x = np.array([0.5, 1.0])
    _, lin = wg.linearize(tc.expm, x, engine=engine)
    x[:] = 9.0
    assert_close(lin(np.ones(2)), np.exp([0.5, 1.0]), EXACT)
