"""``while_loop`` (``wengert/control/while_loop.py``): a loop that runs
while a condition holds, as one equation.

* Newton's iteration for sqrt(a): its derivatives converge to the
  derivative of the root, in every mode;
* its code computes the interpreter's arrays (zero iterations included),
  and grows its buffer of ys by doubling;
* its per-iteration residuals: arrays its body makes anew each step are kept
  in a list as they are (no buffer row copied, no doubling); residuals that
  are a carry, a view of one or a value written in place later must be
  copied (a later step would change what the list holds). Gradients against
  the trace engine and finite differences, on programs where a list holding
  a carry's array would be wrong.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.control import while_loop
from wengert.core.ir import Aval
from wengert.core.staging import stage
from wengert.testing import check_grads
from wengert.transforms.vjp import vjp_program

from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp
from codegen_checks import VARIANTS, assert_same, random_inputs, rng_for
from control_cases import F64_3, Y_KINDS, reference_ys


def _newton_programs():
    """Newton's iteration for sqrt(a): while |y*y - a| > tol: y = (y + a/y)/2."""
    s = Aval((), np.float64)
    cond_p = stage(lambda a, y: [np.abs(y * y - a) > 1e-12], [s, s], name="not_converged")
    body_p = stage(lambda a, y: [(y + a / y) * 0.5], [s, s], name="newton_step")
    return cond_p, body_p


def test_while_loop_newton_sqrt_derivatives():
    c, b = _newton_programs()

    def root(a):
        y, count = while_loop(c, b, [a], [a])
        return y

    a = 2.0
    assert root(a) == pytest.approx(np.sqrt(a), rel=1e-14)
    # d sqrt(a)/da = 1/(2 sqrt a): the iteration's derivative converges to it
    assert wg.grad(root)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)
    assert wg.jvp(root, (a,), (1.0,))[1] == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)
    check_grads(root, (a,), order=2, eps=1e-5, rtol=1e-6)


# --- its code: the interpreter's arrays, a buffer grown by doubling ---------------
F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
X = np.array([0.3, -0.2, 0.9])


def _root(a):
    s = Aval((), F64)
    c = stage(lambda a, y: [np.abs(y * y - a) > 1e-12], [s, s], name="not_converged")
    b = stage(lambda a, y: [(y + a / y) * 0.5], [s, s], name="newton_step")
    y, count = while_loop(c, b, [a], [a])
    return y, count


def test_while_loop_programs_agree_including_zero_iterations():
    prog = wg.make_program(_root, 2.0, engine="trace")
    assert "while True:" in python_function(prog).source
    for variant in ("traced", "jvp", "vjp", "vjp_simplified"):
        p = VARIANTS[variant](prog)
        for a in (2.0, 9.0, 1.0):        # a = 1.0: converged before the first step
            extra = random_inputs(p.in_avals[1:], rng_for("while", variant))
            _, got = assert_same(p, [a] + extra)
            assert np.asarray(got[1]).dtype == I64
    # the linear part of a while loop runs over its recorded count (a Var)
    src = python_function(vjp_program(prog)).source
    assert re.search(r"range\(\w+ - 1, -1, -1\)", src), src


def _while_with_ys(kind):
    """While k < m: k += 1, c = sin(c) + 0.1, storing Y_KINDS[kind]'s y."""
    y_of, _ = Y_KINDS[kind]
    av = [Aval((), I64), Aval((), I64), F64_3]
    cond_p = stage(lambda m, k, c: [k < m], av, name="below")
    body_p = stage(lambda m, k, c: [k + 1, np.sin(c) + 0.1, y_of(k, c)], av,
                   name=f"while_{kind}")
    return lambda m, x: while_loop(cond_p, body_p, [m], [np.int64(0), x])


@pytest.mark.parametrize("kind", sorted(Y_KINDS))
def test_while_loop_grows_its_buffer_by_doubling(kind):
    """0, 1 and many steps (past the first capacity, 8, and its doubling):
    the same arrays as the interpreter's and as a Python loop's."""
    prog = wg.make_program(_while_with_ys(kind), 3, X, engine="trace")
    aval = Y_KINDS[kind][1]
    for m in (0, 1, 8, 9, 20):
        gen, (k, _, count, ys) = assert_same(prog, [m, X])
        want = reference_ys(kind, m, False, X)
        assert k == count == m and ys.dtype == aval.dtype and ys.shape == want.shape
        np.testing.assert_array_equal(ys, want)
    src = gen.source
    assert "np.empty((8," in src and "np.concatenate((" in src and ".append(" not in src, src


# --- per-iteration residuals kept in a list ---------------------------------------
X5 = np.array([0.3, -0.2, 0.9, 1.4, 0.5])


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
    x = X5.copy()
    g = wg.grad(fn, engine="source")
    got = g(x)
    assert np.array_equal(x, X5)
    assert_close(got, wg.grad(fn, engine="trace")(X5.copy()), PROGRAM_RTOL_F64)
    t = np.random.default_rng(5).standard_normal(X5.shape)
    assert_close(np.dot(got, t), fd_jvp(fn, (X5,), (t,)), 1e-6)
    assert_close(g(X5.copy()), got, 0.0)       # again on new arrays: nothing kept


@pytest.mark.parametrize("fn", [relax, two_made_one_carry], ids=lambda f: f.__name__)
def test_made_each_step_kept_in_a_list(fn):
    g = wg.grad(fn, engine="source")
    g(X5.copy())
    src = g.source
    assert ".append(" in src and "np.concatenate((" not in src, src
