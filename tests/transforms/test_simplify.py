"""simplify (``wengert/transforms/simplify.py``): identities, constant
folding, common subexpressions, dead code, and (``copies=True``, for
generated code) copies, dups, double negations and first powers; each keeps
the values, bit for bit where the pass says so.

* a product by zero of the user's keeps IEEE's value (nan at inf, -0.0);
* sign rules make and drop temporary variables: keyed by ``id()``, a new
  variable once read a dead one's substitution (a wrong Hessian);
* two literals of one repeated value keep their shapes (both once became
  scalars, and a (4,) cotangent's sum came out a scalar);
* two equal branches that draw are not merged (one draw stood for two);
* a folded Python scalar stays one (the derivative of a Python float through an ``if``
  came out a NumPy float64 from the source engine, a float from the trace engine: fuzz
  seed 2648).
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import Aval, Eqn, Lit, Program, Role, Var, verify
from wengert.primitives import PRIMITIVES
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

import robust_source_cases as rc
import trust_cases as tc
from checks import assert_close, rtol


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


# --- sign rewrites and uniform literals -------------------------------------------
def _fd(f, x, eps=1e-5):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_hessian_through_sign_rewrites(engine):
    """simplify's sign rules make and drop temporary Vars; keyed by id(),
    a new Var read a dead one's substitution (1.1734724 for 1.1732937)."""
    s = -0.0992277
    h = wg.hessian(tc.abs_tanh, engine=engine)(s)
    g = wg.grad(tc.abs_tanh, engine="trace")
    assert_close(h, _fd(g, s), rtol("hessian", np.float64))


EXACT = rtol("exact", np.float64)


@pytest.mark.parametrize("prim", ["add_any", "add", "mul", "sub"])
def test_simplify_keeps_shapes_of_uniform_literals(prim):
    """Two literals of one repeated value: only one may become a scalar (both
    did, and the sum of a (4,) cotangent came out a scalar); constant folding
    gives a value of the result's shape or none."""
    from wengert.backends.interpret import interpret
    from wengert.core.ir import Aval, Eqn, Lit, Program, Var
    from wengert.primitives import PRIMITIVES
    from wengert.transforms.simplify import simplify
    out = Var(Aval((4,), np.float64))
    prog = Program([], [Eqn(PRIMITIVES[prim], (Lit(np.full(4, 2.0)), Lit(np.full(4, 3.0))),
                            (out,), {})], [out])
    want = interpret(prog)
    for copies in (False, True):
        got = interpret(simplify(prog, copies=copies))
        assert got[0].shape == (4,)
        assert_close(got, want, EXACT)


# --- effects are never merged -----------------------------------------------------
@pytest.mark.parametrize("x0", [0.1, 2.0])
def test_two_equal_branches_that_draw_are_not_merged(x0):
    """Common-subexpression elimination once merged two equal branches that
    draw, so one draw stood for two (a silent wrong value and stream)."""
    f = rc.the_same_drawing_branch_twice
    x = np.array([x0, 0.3])
    for engine in ("source", "trace"):
        rc.DRAWS.seed(7)
        want, after = f(x), rc.DRAWS.rand()
        rc.DRAWS.seed(7)
        value, g = wg.value_and_grad(f, engine=engine)(x)
        assert value == want and rc.DRAWS.rand() == after, engine


_G = np.array([0.3, 0.7])


def _through_if(x, v):
    s = x * 0.5
    if x > 0:
        s = s + 1.0
    return s + np.sum(_G) + v[0]


def _through_while(x, v):
    s = x * 0.25
    k = 0
    while x < 2.0 and k < 2:
        k = k + 1
        s = s * 1.0
    return s + np.sum(v) * np.float64(2.0)


@pytest.mark.parametrize("fun", [_through_if, _through_while], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0.3, -0.3])
def test_a_folded_python_scalar_stays_one(fun, x):
    v = np.array([0.5, -1.0])
    got = {e: wg.value_and_grad(fun, argnums=(0, 1), engine=e)(x, v) for e in ("source", "trace")}
    for e, (value, (dx, dv)) in got.items():
        assert type(dx) is float, (e, type(dx))      # x is a Python float: its derivative is one
        assert type(value) is type(got["trace"][0])
        assert dx == got["trace"][1][0]
        np.testing.assert_array_equal(dv, got["trace"][1][1])
