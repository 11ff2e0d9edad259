"""The passes' rules of the loop rows (``wengert/control/passes.py``):
``dce`` and ``simplify`` on a loop equation.

* a loop carry that starts as a literal and that the body sets to the same
  literal at every step never changes (``same_literal``): the body reads the
  literal, and the carry goes. A reverse sweep has one for each value the
  loop body assigns and nothing reads across steps (its cotangent is zeros
  before the first step and after each one), which cost an array of zeros
  and a sum a step. The derivatives' Programs are inspected (no such carry
  is left), and the gradients checked against the trace engine and finite
  differences; hand-made loops where the literals differ (value, sign of a
  zero, shape) keep their carry and the interpreter's values;
* carries and operands nothing needs are dropped; a while loop's carry its
  condition reads is kept.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.control import for_loop, while_loop
from wengert.control.params import ForParams, WhileParams
from wengert.control.passes import same_literal
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, sub_programs, verify
from wengert.core.staging import stage
from wengert.primitives import PRIMITIVES
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

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


# --- carries and operands nothing needs -------------------------------------------
def _bits(values):
    """Values compared bit for bit (signed zeros too), with their dtypes."""
    return [(np.asarray(v).dtype, np.asarray(v).tobytes()) for v in values]


def _loop_with_idle_parts(a, xs):
    """A for loop with a carry passed through unchanged (p), a carry nothing
    reads (d), an unused const (u) and an unused xs (y); s is the result."""
    f64 = Aval((), np.float64)
    body = stage(lambda i, a, u, s, p, d, x, y: [s + a * x, p, d * 2.0],
                 [Aval((), np.int64), f64, f64, f64, f64, f64, f64, f64], name="idle_parts")
    s, p, d = for_loop(xs.shape[0], body, [a, a * 3.0], [0.0, 2.0, a], [xs, xs * 2.0])
    return s + p


def test_simplify_drops_loop_carries_and_operands_nothing_needs():
    xs = np.array([0.5, -1.0, 2.0])
    prog = wg.make_program(_loop_with_idle_parts, 1.25, xs, engine="trace")
    simple = verify(simplify(prog))
    loop, = [e for e in simple.eqns if e.prim.name == "for_loop"]
    # s alone is carried; p is its initial value 2.0; the const a and xs stay
    assert loop.params["num_carry"] == 1 and loop.params["num_consts"] == 1
    assert len(loop.inputs) == 4 and len(loop.params["body"].inputs) == 4
    for a in (1.25, -0.5):
        assert _bits(interpret(simple, a, xs)) == _bits(interpret(prog, a, xs))
    assert interpret(simple, 1.25, xs)[0] == pytest.approx(2.0 + 1.25 * np.sum(xs))


def _counted_halving(a):
    """Halve a until a counter (read by the condition only) reaches 3."""
    f64, i64 = Aval((), np.float64), Aval((), np.int64)
    cond = stage(lambda a, y, k: [k < 3], [f64, f64, i64], name="counted")
    body = stage(lambda a, y, k: [y * 0.5, k + 1], [f64, f64, i64], name="halve")
    y, k, count = while_loop(cond, body, [a], [a, 0])
    return y, k


def test_simplify_keeps_a_while_loop_carry_its_condition_reads():
    prog = vjp_program(wg.make_program(lambda a: _counted_halving(a)[0], 3.0, engine="trace"))
    simple = verify(simplify(prog, copies=True))
    loop, = [e for e in simple.eqns if e.prim.name == "while_loop"]
    assert loop.params["num_carry"] == 2
    assert _bits(interpret(simple, 3.0, 1.0)) == _bits(interpret(prog, 3.0, 1.0))
    assert interpret(simple, 3.0, 1.0) == [0.375, 0.125]
    assert wg.grad(lambda a: _counted_halving(a)[0], engine="source")(3.0) == 0.125
