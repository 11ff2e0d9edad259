"""``for_loop`` (``wengert/control/for_loop.py``): a loop over ``range(n)``
as one equation, under every transform, and the code it writes.

* the derivatives of a ``fori_loop`` equal those of the same computation
  unrolled, in every mode (n = 0 included), with pytree carries and an
  integer counter; body errors are typed; the vjp Program keeps one forward
  and one reverse loop; the counter indexes arrays dynamically;
* its code computes the interpreter's arrays (reverse loops from vjp,
  nested and float32 loops included), and stores its ys in a buffer
  allocated once (forward and reverse, trip counts known or not).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.control import for_loop
from wengert.core.ir import Aval, verify
from wengert.core.staging import stage
from wengert.testing import check_grads
from wengert.transforms.jvp import jvp_program
from wengert.transforms.vjp import vjp_program

from codegen_checks import VARIANTS, assert_same, random_inputs, rng_for
from control_cases import F64_3, Y_KINDS, reference_ys


X = np.array([0.3, -0.2, 0.9])
A = np.array([1.1, 0.7, -0.4])


def loop_f(n):
    def f(x, a):
        def body(i, c):
            return np.sin(c) * a + c * 0.5 + i * 0.01
        return np.sum(wg.fori_loop(n, body, x) ** 2)
    return f


def unrolled_f(n):
    def f(x, a):
        c = x
        for i in range(n):
            c = np.sin(c) * a + c * 0.5 + i * 0.01
        return np.sum(c ** 2)
    return f


@pytest.mark.parametrize("n", [0, 1, 2, 7], ids=lambda n: f"n={n}")
def test_fori_loop_matches_unrolled_in_every_mode(n):
    f, ref = loop_f(n), unrolled_f(n)
    assert f(X, A) == pytest.approx(ref(X, A), rel=1e-14)
    for g, h in zip(wg.grad(f, (0, 1))(X, A), wg.grad(ref, (0, 1))(X, A)):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(wg.jacfwd(f)(X, A), wg.jacrev(f)(X, A), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(wg.hessian(f)(X, A), wg.hessian(ref)(X, A), rtol=1e-10,
                               atol=1e-12)
    check_grads(f, (X, A), order=2)


def test_fori_loop_with_pytree_carry_and_integer_counter():
    def f(x):
        def body(i, c):
            s, k, v = c["s"], c["k"], c["v"]
            return {"s": s + np.sum(v * v) * i, "k": k + 1, "v": np.tanh(v)}
        out = wg.fori_loop(4, body, {"s": 0.0, "k": 0, "v": x})
        return out["s"] + out["k"] * 1.0

    def ref(x):
        s, k, v = 0.0, 0, x
        for i in range(4):
            s, k, v = s + np.sum(v * v) * i, k + 1, np.tanh(v)
        return s + k * 1.0

    assert f(X) == pytest.approx(ref(X))
    np.testing.assert_allclose(wg.grad(f)(X), wg.grad(ref)(X), rtol=1e-12)
    check_grads(f, (X,), order=2)


def test_fori_loop_body_errors_are_typed():
    with pytest.raises(wg.ShapeMismatchError, match="carry leaf 0 enters the body as f64\\[3\\]"):
        wg.grad(lambda x: np.sum(wg.fori_loop(2, lambda i, c: c[:2], x)))(X)


def test_vjp_program_of_a_loop_keeps_it_structured():
    prog = vjp_program(wg.make_program(loop_f(50), X, A))
    verify(prog)
    names = [e.prim.name for e in prog.eqns]
    # one forward loop, one reverse loop: 50 iterations are not unrolled
    assert names.count("for_loop") == 2 and len(names) < 20
    reverse = [e for e in prog.eqns if e.prim.name == "for_loop"][1]
    assert reverse.params["reverse"] is True


def test_programs_of_control_flow_transform_and_verify():
    prog = wg.make_program(loop_f(3), X, A)
    for t in (jvp_program, vjp_program):
        verify(t(prog))
        verify(t(t(prog)) if t is jvp_program else t(prog))


def test_loop_counter_indexes_arrays_dynamically():
    # x[i] and the functional update z[i] = ... with i the structured loop's counter
    def f(x):
        def body(i, c):
            s, z = c
            return s + x[i] * x[i], wg.at(z)[i].set(np.sin(x[i]) * s)
        s, z = wg.fori_loop(x.shape[0], body, (0.0, np.zeros_like(x)))
        return s + np.sum(z * x)

    def ref(x):
        s, z = 0.0, np.zeros_like(x)
        for i in range(x.shape[0]):
            s, z = s + x[i] * x[i], wg.at(z)[i].set(np.sin(x[i]) * s)
        return s + np.sum(z * x)

    prog = wg.make_program(f, X)
    loop = next(e for e in prog.eqns if e.prim.name == "for_loop")
    assert "DYN" in str(loop.params["body"].eqns) or any(
        e.prim.name == "getitem" and len(e.inputs) == 2 for e in loop.params["body"].eqns)
    assert f(X) == pytest.approx(ref(X))
    np.testing.assert_allclose(wg.grad(f)(X), wg.grad(ref)(X), rtol=1e-12)
    check_grads(f, (X,), order=2)


# --- its code: the interpreter's arrays, ys in a buffer allocated once ------------
F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)


def loop32_f(n):
    def f(x, a):
        return np.sum(wg.fori_loop(n, lambda i, c: np.sin(c) * a + c * 0.5, x) ** 2)
    return f


def nested_f(x):
    def outer(i, c):
        return wg.fori_loop(2, lambda j, d: np.sin(d) + 0.1 * j, c) * 0.9
    return np.sum(wg.fori_loop(3, outer, x))


LOOP_VARIANTS = ("traced", "jvp", "vjp", "vjp_simplified")


@pytest.mark.parametrize("variant", LOOP_VARIANTS)
@pytest.mark.parametrize("n", [0, 1, 2, 7], ids=lambda n: f"n={n}")
def test_fori_loop_programs_agree(n, variant):
    prog = VARIANTS[variant](wg.make_program(loop_f(n), X, A, engine="trace"))
    args = [X, A] + random_inputs(prog.in_avals[2:], rng_for("loop", n, variant))
    gen, _ = assert_same(prog, args)
    assert "for x" in gen.source
    if variant.startswith("vjp"):
        # the transposed loop runs backwards over the stacked residuals
        assert re.search(r"range\(-?\d+, -1, -1\)", gen.source), gen.source
        if n == 0:
            assert "np.empty((0, 3))" in gen.source


def test_nested_and_float32_loops_agree():
    x32, a32 = X.astype(np.float32), A.astype(np.float32)
    progs = [(wg.make_program(nested_f, X, engine="trace"), [X]),
             (wg.make_program(loop32_f(0), x32, a32, engine="trace"), [x32, a32]),
             (wg.make_program(loop32_f(3), x32, a32, engine="trace"), [x32, a32])]
    for prog, args in progs:
        for variant in LOOP_VARIANTS:
            p = VARIANTS[variant](prog)
            extra = random_inputs(p.in_avals[len(args):], rng_for("nested", variant))
            gen, got = assert_same(p, args + extra)
            if args[0].dtype == F32:
                assert all(np.asarray(g).dtype == F32 for g in got)
    assert "np.empty((0, 3), np.dtype('float32'))" in python_function(vjp_program(progs[1][0])).source


def _loop_with_ys(kind):
    """A body whose carry is c -> sin(c) + 0.1 and whose y is Y_KINDS[kind]'s."""
    y_of, _ = Y_KINDS[kind]
    return stage(lambda i, c: [np.sin(c) + 0.1, y_of(i, c)], [Aval((), I64), F64_3],
                 name=f"store_{kind}")


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("static", [True, False], ids=["static_n", "dynamic_n"])
@pytest.mark.parametrize("kind", sorted(Y_KINDS))
def test_for_loop_stores_its_ys_in_a_buffer_allocated_once(kind, static, reverse):
    body = _loop_with_ys(kind)
    aval = Y_KINDS[kind][1]

    def f(n, x):
        c, ys = for_loop(n, body, [], [x], [], reverse=reverse)
        return c, ys

    for n in (0, 1, 2, 9, -2):
        if static:
            prog = wg.make_program(lambda x: f(n, x), X, engine="trace")
            args = [X]
        else:
            prog = wg.make_program(f, 3, X, engine="trace")
            args = [n, X]
        gen, (_, ys) = assert_same(prog, args)
        want = reference_ys(kind, max(n, 0), reverse, X)
        assert ys.dtype == aval.dtype and ys.shape == want.shape
        np.testing.assert_array_equal(ys, want)
        src = gen.source
        assert "np.empty((" in src and ".append(" not in src and "np.stack" not in src, src
        assert ".reverse()" not in src and "[::-1]" not in src, src
        if static and n > 0:
            assert f"np.empty(({n}," in src, src
