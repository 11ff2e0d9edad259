"""A loop carry that starts as a literal and that the body sets to the same
literal at every step never changes (``simplify``; the loop rows' rule in
``primitives/control/passes.py``): the body reads the literal, and the carry
goes. A reverse sweep has one for each value the loop body assigns and
nothing reads across steps (its cotangent is zeros before the first step
and after each one), which cost an array of zeros and a sum a step.

The derivatives' Programs are inspected (no such carry is left), and the
gradients checked against the trace engine and finite differences; hand-made
loops where the literals differ (value, sign of a zero, shape) keep their
carry and the interpreter's values.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.backends.interpret import interpret
from wengert.api.backend import python_function
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, sub_programs
from wengert.primitives import PRIMITIVES
from wengert.control.params import ForParams, WhileParams
from wengert.control.passes import same_literal
from wengert.transforms.simplify import simplify

from checks import AD_VS_AD_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jvp

F64 = np.dtype("float64")
PARAMS = {"for_loop": ForParams, "while_loop": WhileParams}


# --- programs whose derivative loops hold such carries -------------------------------
def scored_steps(x, w):
    """A value assigned in the loop (``y``, ``z``) and read only in that step."""
    h = x
    total = 0.0
    for t in range(w.shape[0]):
        y = h * w[t]
        z = y - np.log(np.sum(np.exp(y)))
        total = total + np.sum(z * z)
        h = np.tanh(y)
    return total


def while_steps(x, w):
    h = x
    total = 0.0
    t = 0
    while t < w.shape[0]:
        y = h * w[t]
        total = total + np.sum(np.sin(y))
        h = 0.5 * y
        t = t + 1
    return total


def nested_steps(x, w):
    total = 0.0
    for k in range(2):
        h = x * (k + 1.0)
        for t in range(w.shape[0]):
            y = h * w[t]
            total = total + np.sum(y * y)
            h = np.cos(y)
    return total


PROGRAMS = [scored_steps, while_steps, nested_steps]


def _constant_carries(prog):
    """(loop, carry) of each carry whose initial and new value are one literal."""
    found = []
    for e in prog.eqns:
        if e.prim.name in PARAMS:
            p = PARAMS[e.prim.name].of(e.params)
            init = p.operand_groups(e.inputs)[2]
            new = p.body_output_groups(p.body.outputs)[0]
            found += [(e.prim.name, k) for k, (a, b) in enumerate(zip(init, new))
                      if same_literal(a, b)]
        for sub in sub_programs(e):
            found += _constant_carries(sub)
    return found


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_derivative_loops_hold_no_constant_carry(fn):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(4), rng.standard_normal((5, 4))
    api_codes.clear()
    g = wg.grad(fn, argnums=(0, 1), engine="source")
    got = g(x, w)
    prog = simplify(g.last.program, copies=True)
    assert not _constant_carries(prog), str(prog)
    # values: the trace engine, and finite differences along random directions
    assert_close(got, wg.grad(fn, argnums=(0, 1), engine="trace")(x, w), AD_VS_AD_RTOL_F64)
    tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    assert_close(float(np.sum(got[0] * tx) + np.sum(got[1] * tw)),
                 fd_jvp(fn, (x, w), (tx, tw)), PROGRAM_RTOL_F64)


# --- hand-made loops: the literals equal, or not quite ---------------------------------
def _loop(init, reset):
    """``for i in range(n): s = c + s; c = reset`` from ``c = init``: the
    carry ``c`` is constant only where ``reset`` is ``init``."""
    n = Var(Aval((), np.dtype("int64")), "n")
    s0 = Var(Aval((3,), F64), "s0")
    i, s, c = Var(Aval((), np.dtype("int64")), "i"), Var(Aval((3,), F64), "s"), \
        Var(init.aval, "c")
    s1 = Var(Aval((3,), F64), "s1")
    body = Program([i, s, c], [Eqn(PRIMITIVES["add"], [c, s], [s1], {})], [s1, reset],
                   name="body")
    outs = [Var(Aval((3,), F64), "sn"), Var(init.aval, "cn")]
    params = ForParams(body, 0, 2, reverse=False, length=None).as_params()
    prog = Program([n, s0], [Eqn(PRIMITIVES["for_loop"], [n, s0, init], outs, params)],
                   outs, name="loop")
    return prog


Z = np.zeros(3)
CASES = {
    "equal_zeros": (Lit(Z), Lit(np.zeros(3)), True),
    "same_object": (Lit(Z), Lit(Z), True),
    "equal_ones": (Lit(np.ones(3)), Lit(np.ones(3)), True),
    "other_value": (Lit(np.zeros(3)), Lit(np.ones(3)), False),
    "negative_zero": (Lit(np.zeros(3)), Lit(-np.zeros(3)), False),
    "other_shape": (Lit(np.zeros(3)), Lit(np.zeros((1, 3))), False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_carry_is_constant_only_for_the_same_literal(case):
    init, reset, constant = CASES[case]
    prog = _loop(init, reset)
    simple = simplify(prog, copies=True)
    assert not _constant_carries(simple), str(simple)
    loop = [e for e in simple.eqns if e.prim.name == "for_loop"]
    # the sum's carry stays; the constant one goes
    assert ForParams.of(loop[0].params).num_carry == (1 if constant else 2), str(simple)
    for n in (0, 1, 4):
        s0 = np.arange(3.0)
        want = interpret(prog, n, s0)
        got = python_function(simple)(n, s0)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
