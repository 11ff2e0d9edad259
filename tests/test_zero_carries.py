"""Carries whose cotangent is zero at every step of the reverse loop.

A loop carry that nothing differentiated reads (a step size only the
``while`` condition tests, a counter kept as a float, a running maximum used
for a stopping rule) has a zero cotangent at every step. The transposed loop
must neither carry it nor compute with it: as a concrete 0.0 its transposed
body computes ``0.0 / step``, which is NaN where the step reaches 0 -- a
silent NaN gradient where the true one is finite (the trace engine, whose
zeros are symbolic, got it right). Checked: gradients against the trace
engine and finite differences at points where the step does reach 0, and the
transposed loops carry no cotangent for such carries.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import sub_programs

from checks import PROGRAM_RTOL_F64, assert_close, eqns_named, fd_jvp

X = np.array([0.3, 0.7, 1.1])


def while_rms_step(x):
    y = x * 0.5
    step = 1.0
    while step > 1e-6:
        y_next = 0.5 * y + 0.5 * x
        y_next = np.where(np.abs(y_next - x) < 1e-3, x, y_next)   # reaches x exactly
        step = np.sqrt(np.mean((y_next - y) ** 2))               # 0 at the last step
        y = y_next
    return np.sum(y ** 2)


def while_relative_change(x):
    y = x * 0.25
    change = 1.0
    while change > 1e-9:
        y_next = np.where(np.abs(y - x) < 1e-2, x, 0.5 * (y + x))
        change = np.max(np.abs(y_next - y)) / np.max(np.abs(y_next))
        y = y_next
    return np.sum(y * x)


def for_with_tracked_norm(x):
    y = x
    norm = 1.0
    for k in range(4):
        y = np.where(k >= 2, y, y * 0.5 + 0.5)
        norm = np.sqrt(np.sum((y - y) ** 2))    # 0.0 every step; read by nothing
    return np.sum(y ** 2)


def for_two_dead_carries(x):
    s = 0.0
    best = 0.0
    ratio = 1.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2
        best = np.maximum(best, x[i] - x[i])    # 0.0: its derivative would divide by it
        ratio = best / np.sqrt(best + 1.0)
    return s


def nested_dead_carry(x):
    total = 0.0
    for i in range(2):
        y = x * (i + 1.0)
        step = 1.0
        while step > 1e-6:
            y_next = np.where(np.abs(0.5 * (y + x) - x) < 1e-3, x, 0.5 * (y + x))
            step = np.sqrt(np.mean((y_next - y) ** 2))
            y = y_next
        total = total + np.sum(y * y)
    return total


PROGRAMS = [while_rms_step, while_relative_change, for_with_tracked_norm,
            for_two_dead_carries, nested_dead_carry]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_is_finite_and_right(fn):
    with np.errstate(all="raise"):          # no 0/0 anywhere in the derivative
        g = wg.grad(fn, engine="source")(X.copy())
    assert np.all(np.isfinite(g))
    assert_close(g, wg.grad(fn, engine="trace")(X.copy()), PROGRAM_RTOL_F64)
    t = np.random.default_rng(0).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(fn, (X,), (t,)), 1e-5)


def _loops(prog):
    return eqns_named(prog, "for_loop")


def _prims(prog):
    for e in prog.eqns:
        yield e.prim.name
        for sub in sub_programs(e):
            yield from _prims(sub)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_reverse_loop_computes_nothing_for_a_dead_carry(fn):
    # the only divisions are in the dead carries' derivatives (sqrt's, a
    # quotient's): the reverse loops must hold none of them
    g = wg.grad(fn, engine="source")
    g(X.copy())
    reverse = [e for e in _loops(g.last.program) if "transpose" in e.params["body"].name]
    assert reverse, str(g.last.program)
    for e in reverse:
        assert "div" not in set(_prims(e.params["body"])), str(e.params["body"])
