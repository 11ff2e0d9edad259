"""Arrays from Python lists of traced values (``wengert/numpy/lists.py``)
beyond the function table: ``np.r_``/``np.c_``, the builtins
``sum``/``max``/``min``, the default engine taking lists where the trace
engine's error names the call, ``float()`` of a list's array, ``np.array``
of a traced array, and the list parameters wengert does not implement,
refused naming the user's line.
"""
from __future__ import annotations

import numpy as np
import pytest

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
