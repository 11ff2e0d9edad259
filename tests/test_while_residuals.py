"""A while loop's per-iteration residuals: arrays its body makes anew each
step are kept in a list as they are (no buffer row copied, no doubling);
residuals that are a carry, a view of one or a value written in place later
must be copied (a later step would change what the list holds). Gradients
against the trace engine and finite differences, on programs where a list
holding a carry's array would be wrong."""
import numpy as np
import pytest

import wengert as wg

from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp

X = np.array([0.3, -0.2, 0.9, 1.4, 0.5])


def relax(x):
    y = x
    step = 1.0
    while step > 1e-6:
        y_next = 0.5 * (np.cos(y) + x)          # residual: sin(y), made each step
        step = np.sqrt(np.mean((y_next - y) ** 2))
        y = y_next
    return np.sum(y ** 2)


def carry_is_residual(x):
    y = x * 1.0
    k = 0
    while k < 4:
        y = y * y * 0.5 + x                     # residual: the carry y itself
        k += 1
    return np.sum(y)


def view_of_carry(x):
    y = x * 1.0
    k = 0
    while k < 3:
        head = y[1:]
        y = np.concatenate([y[:1], head * head * 0.5]) + 0.1 * x
        k += 1
    return np.sum(y)


def carry_updated_in_place(x):
    y = x * 1.0
    k = 0
    while k < 3:
        z = np.sin(y)
        y = y * z                               # residuals: z and y (a carry)
        y = y + x
        k += 1
    return np.sum(y * y)


def two_made_one_carry(x):
    y = x * 0.5
    k = 0
    while k < 3:
        a = np.exp(-y)
        b = np.tanh(y)
        y = a * b + y * 0.5
        k += 1
    return np.sum(y)


PROGRAMS = [relax, carry_is_residual, view_of_carry, carry_updated_in_place,
            two_made_one_carry]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient(fn):
    x = X.copy()
    g = wg.grad(fn, engine="source")
    got = g(x)
    assert np.array_equal(x, X)
    assert_close(got, wg.grad(fn, engine="trace")(X.copy()), PROGRAM_RTOL_F64)
    t = np.random.default_rng(5).standard_normal(X.shape)
    assert_close(np.dot(got, t), fd_jvp(fn, (X,), (t,)), 1e-6)
    assert_close(g(X.copy()), got, 0.0)       # again on new arrays: nothing kept


@pytest.mark.parametrize("fn", [relax, two_made_one_carry], ids=lambda f: f.__name__)
def test_made_each_step_kept_in_a_list(fn):
    g = wg.grad(fn, engine="source")
    g(X.copy())
    src = g.source
    assert ".append(" in src and "np.concatenate((" not in src, src
