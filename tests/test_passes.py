"""simplify, explicit_dup and batched evaluation: each keeps the values."""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.ir import Eqn, Lit, Program, Var, Aval, verify
from wengert.primitives import PRIMITIVES
from wengert.primitives.core import bind
from wengert.transforms.batching import batch_eval
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.partial_eval import linearize_flat
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

from checks import assert_close

RNG = np.random.default_rng(7)
F64 = Aval((), np.float64)


def _prims(prog):
    return [e.prim.name for e in prog.eqns]


def test_simplify_folds_zeros_ones_constants_and_dead_code():
    x, a, b, c, d, e, dead = (Var(F64) for _ in range(7))
    mul, add, sin = PRIMITIVES["mul"], PRIMITIVES["add"], PRIMITIVES["sin"]
    prog = Program([x], [
        Eqn(mul, (Lit(0.0), x), (a,), {}),          # 0 * x  -> 0
        Eqn(add, (a, x), (b,), {}),                  # 0 + x  -> x  (after folding a)
        Eqn(mul, (Lit(2.0), Lit(3.0)), (c,), {}),    # constants -> 6
        Eqn(mul, (b, c), (d,), {}),                  # x * 6
        Eqn(sin, (x,), (dead,), {}),                 # unused
        Eqn(mul, (Lit(1.0), d), (e,), {}),           # 1 * d  -> d
    ], [e])
    simple = verify(simplify(prog))
    assert _prims(simple) == ["mul"]
    assert interpret(simple, 1.5) == pytest.approx(interpret(prog, 1.5))
    assert interpret(simple, 1.5)[0] == pytest.approx(9.0)


def test_simplify_merges_common_subexpressions():
    def f(x):
        return np.sin(x) * np.sin(x) + np.exp(x) / np.exp(x)

    prog = wg.make_program(f, 0.3)
    simple = verify(simplify(prog))
    assert _prims(prog).count("sin") == 2 and _prims(simple).count("sin") == 1
    assert _prims(simple).count("exp") == 1
    assert interpret(simple, 0.3)[0] == pytest.approx(f(0.3), rel=1e-15)


def test_simplify_keeps_derivative_programs_exact():
    x = RNG.standard_normal((3,))

    def f(x):
        return np.sum(np.tanh(x) * x + np.sin(x) * np.sin(x))

    for transform in (jvp_program, vjp_program):
        prog = transform(wg.make_program(f, x))
        args = [x, RNG.standard_normal(3)] if transform is jvp_program else [x, 1.0]
        full, simple = interpret(prog, *args), interpret(verify(simplify(prog)), *args)
        for a, b in zip(full, simple):
            np.testing.assert_allclose(a, b, rtol=1e-14)
        assert len(simplify(prog).eqns) <= len(prog.eqns)


def test_simplify_copies_drops_dups_double_negations_and_first_powers():
    def f(x, y):
        return x ** 2 - (y - x * y)          # d/dx reads x ** 1; d/dy negates twice

    prog = vjp_program(explicit_dup(wg.make_program(f, 0.7, -1.3)))
    kept, copied = verify(simplify(prog)), verify(simplify(prog, copies=True))
    assert "dup" in _prims(kept) and "dup" not in _prims(copied)
    assert _prims(copied).count("neg") < _prims(kept).count("neg")
    assert _prims(copied).count("pow") == 1           # x ** 2 itself, not x ** 1
    for a, b in zip(interpret(kept, 0.7, -1.3, 1.0), interpret(copied, 0.7, -1.3, 1.0)):
        assert a == pytest.approx(b, rel=1e-15)
    assert interpret(copied, 0.7, -1.3, 1.0)[1:] == pytest.approx((2 * 0.7 + -1.3, -1 + 0.7))


def test_square_of_one_value_has_one_product_in_its_derivative():
    x = RNG.standard_normal((4,))
    fwd = jvp_program(wg.make_program(lambda x: np.sum(x * x), x))
    assert _prims(fwd).count("mul") == 2           # x * x, and x_dot * (x + x)
    v, dv = interpret(fwd, x, np.ones(4))
    assert dv == pytest.approx(np.sum(2 * x), rel=1e-14)
    assert_close(wg.grad(lambda x: np.sum(x * x))(x), 2 * x, 1e-15)


def test_explicit_dup_splits_a_variable_used_three_times():
    prog = explicit_dup(wg.make_program(lambda x: x * x + x, 2.0))
    verify(prog)
    assert _prims(prog).count("dup") == 2          # three uses need two dups
    assert interpret(prog, 2.0)[0] == 6.0
    _, gx = interpret(vjp_program(prog), 2.0, 1.0)
    assert gx == pytest.approx(5.0)


@pytest.mark.parametrize("fn", [
    lambda x: np.sin(x)[1:] * x[:-1],
    lambda x: np.cumsum(x * 2.0)[np.array([0, 2, 2])],
    lambda x: np.concatenate([x, x[::-1]]) @ np.arange(6.0),
    lambda x: np.outer(x, x).T.reshape(-1)[np.array([True, False] * 4 + [True])],
    lambda x: wg.at(np.zeros((2, 4)))[1, 1:].add(x * 3.0)[:, None, :] * x[0],
    lambda x: wg.at(np.outer(x, x))[::2, 1].set(np.sin(x[:2])) + 1.0,
    lambda x: wg.at(np.outer(x, x))[0].add(2.0 * x[0]),
], ids=["slices", "gather-duplicates", "concat-matmul", "outer-mask", "index-add-slices",
        "index-set-strided", "index-add-broadcast-v"])
def test_batched_linear_program_equals_one_tangent_at_a_time(fn):
    x = RNG.standard_normal(3)
    _, lin = linearize_flat(lambda x: [fn(x)], [x])
    basis = RNG.standard_normal((5, 3))
    batched, = batch_eval(lin, [basis], 5)
    for k in range(5):
        one, = interpret(lin, basis[k])
        assert_close(batched[k], one, rtol=1e-13, atol=1e-13)


def test_batch_rule_missing_falls_back_to_a_loop():
    # getitem with integer arrays has no batch rule (it returns NotImplemented)
    x = RNG.standard_normal(4)
    idx = np.array([3, 0, 0])
    _, lin = linearize_flat(lambda x: [x[idx] * 2.0], [x])
    assert PRIMITIVES["getitem"].batch([np.zeros((2, 4))], [True], idx=(idx,)) is NotImplemented
    batched, = batch_eval(lin, [np.eye(4)], 4)
    expected = np.zeros((4, 3))
    for j, i in enumerate(idx):
        expected[i, j] = 2.0
    np.testing.assert_array_equal(batched, expected)


def test_bind_without_tracers_is_the_numpy_implementation():
    x = RNG.standard_normal(3)
    np.testing.assert_array_equal(bind(PRIMITIVES["sin"], x), np.sin(x))
