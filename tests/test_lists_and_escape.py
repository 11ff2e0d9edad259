"""Arrays from Python lists of traced values beyond the function table
(``np.r_``/``np.c_``, the builtins ``sum``/``max``/``min``, the trace
engine's error naming the call), and the escape hatch: a ``custom_jvp`` /
``custom_vjp`` function whose body wengert cannot trace (SciPy's ``quad``,
``solve_ivp``, ``float()`` of its input) runs on plain values, its rule
giving every derivative."""
from __future__ import annotations


import numpy as np
import pytest
import scipy.integrate
from scipy import integrate

import wengert as wg
from wengert.core import errors

import checks

X = np.array([0.7, -1.3, 0.4])
T = np.array([0.3, 0.5, -0.8])


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


# --- np.r_ and np.c_: subscripts of NumPy objects --------------------------
def r_scalars(x):
    return np.r_[x[0], 1.5, x[1] * x[2]]


def r_arrays(x):
    return np.r_[x, [x[0], 2.0], 0.5, x ** 2]


def r_with_range(x):
    return np.r_[x, 0:3] * np.r_[x[0], x[1], x[2], 1.0, 1.0, 1.0]


def r_directive(x):
    return np.r_["0,2", x, x * x]


def r_directive_trans(x):
    return np.r_["1,2,0", x, np.sin(x)]


def c_arrays(x):
    return np.c_[x, np.cos(x), [1.0, 2.0, 3.0]]


def c_scalars(x):
    return np.c_[x[0], x[1], 2.0]


CONCATENATIONS = [r_scalars, r_arrays, r_with_range, r_directive, r_directive_trans,
                  c_arrays, c_scalars]


@pytest.mark.parametrize("fun", CONCATENATIONS, ids=lambda f: f.__name__)
def test_r_and_c_of_traced_values(fun):
    out = wg.jvp(fun, (X,), (T,), engine="source")[0]
    want = fun(X)
    assert out.shape == want.shape and out.dtype == want.dtype
    _check_first_and_second_order(fun, X, "source")


@pytest.mark.parametrize("fun", CONCATENATIONS, ids=lambda f: f.__name__)
def test_r_and_c_keep_float32(fun):
    x32 = X.astype(np.float32)
    out, _ = wg.jvp(fun, (x32,), (T.astype(np.float32),), engine="source")
    assert np.asarray(out).dtype == np.asarray(fun(x32)).dtype
    checks.assert_close(out, fun(x32), checks.rtol("ref", np.float32))


# --- builtins over lists ---------------------------------------------------
def builtin_sum(x):
    return sum([x[0], x[1] * x[2], 2.0]) * sum([x[0] ** 2, x[2]], 1.0)


def builtin_max(x):
    return max([x[0], x[1], 0.1]) * max(x[2], -3.0)


def builtin_min(x):
    return min([x[0], x[1], 5.0]) + min(x[2] * x[0], x[1])


def builtin_sum_comprehension(x):
    return sum([x[i] * (i + 1.0) for i in range(3)]) ** 2


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun", [builtin_sum, builtin_max, builtin_min, builtin_sum_comprehension],
                         ids=lambda f: f.__name__)
def test_builtins_over_lists_of_traced_values(fun, engine):
    _check_first_and_second_order(fun, X, engine)


# --- the default engine takes lists; the trace engine names the call ----------
def list_array(x):
    return np.sum(np.array([x[0], x[1] * 2.0, 3.0]) ** 2)


def list_sum(x):
    return np.sum([x[0], x[1]]) * 2.0


def list_stack(x):
    return np.sum(np.stack([[x[0], 1.0], [x[1], x[2]]]) ** 2)


def list_norm(x):
    return np.linalg.norm([x[0], x[2], 1.0])


def list_r(x):
    return np.sum(np.r_[x[0], x[1], 1.0] ** 2)


def list_mean(x):
    return np.mean([x[0], x[1], x[2], 2.0]) ** 2


LIST_CALLS = [(list_array, "np.array(...)"), (list_sum, "np.sum(...)"),
              (list_stack, "np.stack(...)"), (list_norm, "np.linalg.norm(...)"),
              (list_r, "np.r_[...]"), (list_mean, "np.mean(...)")]


@pytest.mark.parametrize("fun, call", LIST_CALLS, ids=[c for _, c in LIST_CALLS])
def test_auto_engine_differentiates_lists(fun, call):
    g = wg.grad(fun)(X)         # engine="auto": the source engine
    checks.assert_close(g, _fd_grad(fun, X), checks.rtol("jvp", np.float64),
                        what="grad vs finite differences")


def _fd_grad(fun, x, eps=1e-6):
    return np.array([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("fun, call", LIST_CALLS, ids=[c for _, c in LIST_CALLS])
def test_trace_engine_names_the_list_call(fun, call):
    with pytest.raises(errors.ConcretizationError) as err:
        wg.grad(fun, engine="trace")(X)
    msg = str(err.value)
    assert msg.startswith(f"{__file__}:{fun.__code__.co_firstlineno + 1}: ")
    assert call in msg and "engine='auto'" in msg and "np.stack([...])" in msg


def float_of_array(x):
    return float(np.array([x[0], x[1]])[0]) * x[2]


def float_of_sum(x):
    return float(np.sum([x[0], 1.0])) * x[1]


@pytest.mark.parametrize("fun", [float_of_array, float_of_sum], ids=lambda f: f.__name__)
def test_float_of_a_list_array_raises_or_keeps_the_derivative(fun):
    """The trace engine refuses ``float()`` of a traced value (it would drop
    the derivative); the source engine's ``float`` is a conversion that keeps
    it (a weakly typed Python number), never a silent zero."""
    with pytest.raises(errors.ConcretizationError):
        wg.grad(fun, engine="trace")(X)
    checks.assert_close(wg.grad(fun, engine="source")(X), _fd_grad(fun, X),
                        checks.rtol("jvp", np.float64), what="grad vs finite differences")


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


# --- what the error of a call without a rule says -------------------------------
def _no_rule_quad(x):
    return integrate.quad(lambda t: t * x[0], 0.0, 1.0)[0]


def _no_rule_ivp(x):
    return scipy.integrate.solve_ivp(lambda t, y: -y, (0.0, 1.0), x).y[0, -1]


NO_RULE = [(_no_rule_quad, "scipy.integrate.quad"), (_no_rule_ivp, "scipy.integrate.solve_ivp")]


def _check_no_rule_message(msg, where, name):
    assert msg.startswith(f"{where}: {name} has no derivative rule in wengert"), msg
    example = msg.split("\n")[1:]
    assert len(example) == 3 and example[0].strip() == "@wg.custom_vjp", msg
    assert f"return {name}(x)" in example[1] and ".defvjp(" in example[2], msg


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun, name", NO_RULE, ids=[n for _, n in NO_RULE])
def test_a_library_function_without_a_rule_is_named_as_written(fun, name, engine):
    with pytest.raises(errors.NoDerivativeRule) as err:
        wg.grad(fun, engine=engine)(np.array([0.5, 1.0]))
    _check_no_rule_message(str(err.value), f"{__file__}:{fun.__code__.co_firstlineno + 1}",
                           name)


def _without_rule(candidates):
    from wengert.numpy import library
    found = [f for f in candidates if library.function_rule(f) is None
             and library.ufunc_rule(f) is None]
    assert found, f"every candidate has a rule now: add one without: {candidates}"
    return found[0]


def _scipy_special_candidates():
    import scipy.special as sp
    return [sp.dawsn, sp.spence, sp.kolmogorov, sp.ndtri_exp, sp.ellipe, sp.erfcx]


UNRULED = {"numpy function": _without_rule([np.unwrap, np.sinc, np.i0, np.median, np.nanmean]),
           "numpy ufunc": _without_rule([np.spacing, np.cbrt, np.nextafter, np.ldexp]),
           "scipy.special ufunc": _without_rule(_scipy_special_candidates())}


def call_unruled_numpy_function(x):
    return UNRULED["numpy function"](x) * 2.0


def call_unruled_numpy_ufunc(x):
    return UNRULED["numpy ufunc"](x) * 2.0


def call_unruled_scipy_ufunc(x):
    return UNRULED["scipy.special ufunc"](x) * 2.0


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("fun, kind", [(call_unruled_numpy_function, "numpy function"),
                                       (call_unruled_numpy_ufunc, "numpy ufunc"),
                                       (call_unruled_scipy_ufunc, "scipy.special ufunc")],
                         ids=["numpy-function", "numpy-ufunc", "scipy-ufunc"])
def test_a_function_without_a_rule_is_named_with_an_example(fun, kind, engine):
    from wengert.numpy import library
    f = UNRULED[kind]
    name = library.display_name(f)
    assert name.startswith("scipy.special." if kind.startswith("scipy") else "np.")
    with pytest.raises(errors.NoDerivativeRule) as err:
        wg.grad(lambda x: np.sum(fun(x)), engine=engine)(np.array([0.3, 0.6]))
    _check_no_rule_message(str(err.value), f"{__file__}:{fun.__code__.co_firstlineno + 1}", name)


def copy_of_traced(x):
    return np.sum(np.array(x) * np.asarray(x, dtype=np.float32))


def test_np_array_of_a_traced_array_is_a_copy_or_named():
    """``np.array(x)`` of a traced array: the same value in the source engine
    (its cast to float32 too), the call named in the trace engine's error."""
    x32 = X.astype(np.float32).astype(np.float64)
    # the cotangent reaching x through the cast is rounded to float32 too
    checks.assert_close(wg.grad(copy_of_traced, engine="source")(X), 2.0 * x32, 1e-7)
    with pytest.raises(errors.ConcretizationError, match=r"np\.array\(\.\.\.\) of traced"):
        wg.grad(copy_of_traced, engine="trace")(X)


def array_like(x):
    return np.array([x[0], x[1]], like=np.ones(2))


def array_ndmax(x):
    return np.array([x[0], x[1]], ndmax=1)


def asarray_device(x):
    return np.asarray([x[0], x[1]], device="gpu")


def array_no_copy(x):
    return np.array([x[0], x[1]], copy=False)


def asarray_no_copy_cast(x):
    return np.asarray(x, dtype=np.float32, copy=False)


def array_of_strings(x):
    return np.array([x[0], "a"])


@pytest.mark.parametrize("fun, error", [
    (array_like, errors.NoDerivativeRule), (array_ndmax, errors.NoDerivativeRule),
    (asarray_device, errors.NoDerivativeRule), (array_no_copy, ValueError),
    (asarray_no_copy_cast, ValueError), (array_of_strings, errors.NoDerivativeRule)],
    ids=lambda v: getattr(v, "__name__", ""))
def test_list_parameters_not_implemented_are_refused(fun, error):
    """A parameter value wengert does not implement is refused, naming the
    user's line; ``copy=False`` where a copy is needed is NumPy's ValueError."""
    with pytest.raises(error) as err:
        wg.grad(lambda x: np.sum(fun(x)), engine="source")(X)
    assert f"{__file__}:{fun.__code__.co_firstlineno + 1}" in str(err.value)


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
