"""simplify, explicit_dup and batched evaluation: each keeps the values."""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import Eqn, Lit, Program, Role, Var, Aval, verify
from wengert.primitives import PRIMITIVES
from wengert.control import for_loop, while_loop
from wengert.core.trace import bind
from wengert.core.staging import stage
from wengert.transforms.batching import batch_eval
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.partial_eval import linearize_flat, linearize_program
from wengert.control.residuals import recompute_residuals
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

from checks import assert_close

RNG = np.random.default_rng(7)
F64 = Aval((), np.float64)


def _prims(prog):
    return [e.prim.name for e in prog.eqns]


def test_simplify_folds_zeros_ones_constants_and_dead_code():
    # a tangent's program: its zeros are differentiation's (no contribution)
    x, a, b, c, d, e, dead = (Var(F64, "", Role.TANGENT) for _ in range(7))
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


@pytest.mark.parametrize("x, want", [(np.inf, np.nan), (-np.inf, np.nan), (np.nan, np.nan),
                                     (-2.0, -0.0), (3.0, 0.0)])
def test_simplify_keeps_a_primal_product_by_zero(x, want):
    # the user's ``x * 0.0``: IEEE's value (nan at inf, -0.0 at a negative x)
    xv, a, b = Var(F64), Var(F64), Var(F64)
    prog = Program([xv], [Eqn(PRIMITIVES["mul"], (xv, Lit(0.0)), (a,), {}),
                          Eqn(PRIMITIVES["add"], (a, Lit(1.0)), (b,), {})], [a, b])
    got = interpret(verify(simplify(prog)), np.float64(x))
    np.testing.assert_array_equal(got[0], np.float64(want))
    assert np.signbit(got[0]) == np.signbit(np.float64(x) * 0.0)
    np.testing.assert_array_equal(got[1], np.float64(x) * 0.0 + 1.0)


def test_simplify_writes_a_repeated_constant_as_its_value_and_keeps_dtypes():
    x = Var(Aval((4,), np.float64))
    x32 = Var(Aval((4,), np.float32))
    a, b, c = Var(Aval((4,), np.float64)), Var(Aval((4,), np.float64)), Var(Aval((4,), np.float64))
    mul = PRIMITIVES["mul"]
    twos, ones = np.full(4, 2.0), np.ones(4)
    prog = Program([x, x32], [
        Eqn(mul, (Lit(twos), x), (a,), {}),          # [2,2,2,2] * x -> 2.0 * x
        Eqn(mul, (Lit(ones), a), (b,), {}),          # [1,1,1,1] * a -> a
        Eqn(mul, (Lit(np.float64(1.0)), x32), (c,), {}),   # float64 result: kept
    ], [b, c])
    simple = verify(simplify(prog))
    assert _prims(simple) == ["mul", "mul"]
    assert all(np.ndim(v.val) == 0 for e in simple.eqns for v in e.inputs if isinstance(v, Lit))
    args = (np.arange(4.0), np.arange(4.0, dtype=np.float32))
    for got, want in zip(interpret(simple, *args), interpret(prog, *args)):
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(got, want)
    # the seed of a sum's gradient is such a constant: the code multiplies by nothing
    g = wg.grad(lambda x, y: np.sum(np.sin(x) * y), engine="trace")
    prog = wg.make_program(g, np.ones(3), np.ones(3))
    assert not any(isinstance(v, Lit) and np.ndim(v.val) for e in simplify(prog).eqns
                   for v in e.inputs)


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


def _bits(values):
    """Values compared bit for bit (signed zeros too), with their dtypes."""
    return [(np.asarray(v).dtype, np.asarray(v).tobytes()) for v in values]


def test_simplify_copies_moves_negations_until_something_absorbs_them():
    def f(x, y):
        n = -x
        u = n / y                  # -(x / y)
        w = y * u                  # -(y * (x / y))
        return x + w, -u, u * n, y - u

    prog = wg.make_program(f, 0.7, -1.3, engine="trace")
    moved = verify(simplify(prog, copies=True))
    # u * n is (x / y) * x; the others are sub/add of the unnegated values
    assert _prims(prog).count("neg") == 2 and "neg" not in _prims(moved)
    for x, y in [(0.7, -1.3), (0.0, -2.0), (-0.0, 2.0), (0.0, np.inf), (3.5, -np.inf)]:
        assert _bits(interpret(moved, x, y)) == _bits(interpret(prog, x, y)), (x, y)
    # -x - y keeps its negation: -(x + y) is -0.0 where it is 0.0 (x = 0.0, y = -0.0)
    prog = wg.make_program(lambda x, y: (-x) - y, 0.0, -0.0, engine="trace")
    kept = verify(simplify(prog, copies=True))
    assert _prims(kept) == ["neg", "sub"]
    assert _bits(interpret(kept, 0.0, -0.0)) == _bits(interpret(prog, 0.0, -0.0))
    # a sign never moves onto a broadcast (larger) result
    xs = np.array([0.5, -2.0, 0.0])
    prog = wg.make_program(lambda a, v: (-a) * v + v, 1.5, xs, engine="trace")
    kept = verify(simplify(prog, copies=True))
    assert kept.eqns[0].prim.name == "neg" and kept.eqns[0].outputs[0].aval.shape == ()
    assert _bits(interpret(kept, 1.5, xs)) == _bits(interpret(prog, 1.5, xs))


def test_simplify_copies_writes_int_literals_against_floats_as_floats():
    w = np.linspace(-1.0, 1.0, 3, dtype=np.float32)

    def f(x, w, k):
        return 3 * x + 7 / x, (2 * w) * 5, 3 * k      # k: an int array keeps its int 3

    k = np.arange(3)
    prog = wg.make_program(f, 1.5, w, k, engine="trace")
    simple = verify(simplify(prog, copies=True))
    lits = {e.prim.name + ":" + type(x.val).__name__ for e in simple.eqns for x in e.inputs
            if isinstance(x, Lit)}
    assert lits == {"mul:float", "div:float", "mul:int"}, lits
    for x in (1.5, -2.5, 1e300):
        got, want = interpret(simple, x, w, k), interpret(prog, x, w, k)
        assert _bits(got) == _bits(want)
    assert np.asarray(got[1]).dtype == np.float32 and np.asarray(got[2]).dtype == k.dtype


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


def test_recomputed_residuals_give_the_stored_ones_values():
    """recompute_residuals on a Newton step (cube root): one stored value in
    place of six, and the linear body computes what it did from them."""
    f64 = Aval((), np.float64)
    body = stage(lambda a, y: [y - (y * y * y - a) / (3 * y * y)], [f64, f64], name="step")
    known, lin, nres = linearize_program(body, [True, True])
    known2, lin2, nres2 = recompute_residuals(known, lin, nres, 1, free=known.inputs[:1])
    assert nres == 6 and nres2 == 2              # the carry y, and a (a free const)
    assert {id(v) for v in known2.outputs[1:]} == {id(v) for v in known.inputs}
    verify(known2)
    verify(lin2)
    for a, y, ta, ty in [(2.0, 1.3, 1.0, 0.0), (2.0, 1.3, 0.0, 1.0), (-5.0, 0.4, 0.3, -2.0)]:
        outs = interpret(known, a, y)
        outs2 = interpret(known2, a, y)
        assert _bits(outs[:1]) == _bits(outs2[:1])
        want = interpret(lin, *outs[1:], ta, ty)
        assert _bits(interpret(lin2, *outs2[1:], ta, ty)) == _bits(want)
    # np.sin is not cheap: its cosine stays a stored residual
    body = stage(lambda a, y: [y - np.sin(y) * a], [f64, f64], name="sin_step")
    known, lin, nres = linearize_program(body, [True, True])
    assert recompute_residuals(known, lin, nres, 1, free=known.inputs[:1])[2] == nres


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


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_users_product_by_zero_keeps_ieee_value(engine):
    def f(x):
        return np.sum(x) - x[0] * 0.0
    x = np.array([np.inf, 1.0])
    with np.errstate(invalid="ignore"):
        want = f(x)
        val, g = wg.value_and_grad(f, engine=engine)(x)
    np.testing.assert_array_equal(val, want)        # nan, as NumPy gives
    np.testing.assert_array_equal(g, [1.0, 1.0])
