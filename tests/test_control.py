"""Structured control flow (cond, for_loop, while_loop) under every transform:
the derivatives of a structured loop or branch equal those of the same
computation unrolled (where the trace engine takes the path at the values)."""
import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import Aval, verify
from wengert.control import cond, while_loop
from wengert.core.staging import stage
from wengert.testing import check_grads
from wengert.transforms.jvp import jvp_program
from wengert.transforms.vjp import vjp_program

RNG = np.random.default_rng(3)
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


def _branches():
    f0 = stage(lambda x, a: [np.sin(x) * a], [Aval((3,), np.float64)] * 2, name="small")
    f1 = stage(lambda x, a: [x * x - a], [Aval((3,), np.float64)] * 2, name="large")
    return f0, f1


@pytest.mark.parametrize("which", [0, 1], ids=["branch0", "branch1"])
def test_cond_derivatives_follow_the_taken_branch(which):
    branches = _branches()
    refs = [lambda x, a: np.sum(np.sin(x) * a * x), lambda x, a: np.sum((x * x - a) * x)]

    def f(x, a):
        out, = cond(which, branches, x, a)
        return np.sum(out * x)

    assert f(X, A) == pytest.approx(refs[which](X, A))
    for g, h in zip(wg.grad(f, (0, 1))(X, A), wg.grad(refs[which], (0, 1))(X, A)):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    check_grads(f, (X, A), order=2)
    np.testing.assert_allclose(wg.jacfwd(f)(X, A), wg.jacrev(f)(X, A), rtol=1e-12)


def test_cond_with_index_from_a_traced_comparison():
    branches = _branches()

    def f(x, a):
        out, = cond(np.sum(x) > 0.5, branches, x, a)
        return np.sum(out)

    for x in (X, -X):
        check_grads(f, (x, A), order=2)


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


def _cube_root(a):
    """Newton's iteration for a ** (1/3): y - (y*y*y - a) / (3*y*y)."""
    s = Aval((), np.float64)
    c = stage(lambda a, y: [np.abs(y * y * y - a) >= 1e-12], [s, s], name="not_converged")
    b = stage(lambda a, y: [y - (y * y * y - a) / (3 * y * y)], [s, s], name="cube_step")
    y, count = while_loop(c, b, [a], [a])
    return y


def _stored_per_iteration(prog, prim):
    """The values the forward loop of a vjp Program stores each iteration."""
    loop = next(e for e in prog.eqns if e.prim.name == prim)     # the forward one
    p = loop.params
    return len(loop.outputs) - p["num_carry"] - (prim == "while_loop")


def test_cheap_scalar_residuals_of_a_loop_are_recomputed_not_stored():
    """The reverse loop recomputes what the Newton step's derivative needs from
    y alone (the forward loop would otherwise store six values a step); the
    derivative is d a^(1/3)/da, in every mode."""
    prog = vjp_program(wg.make_program(_cube_root, 2.0))
    verify(prog)
    assert _stored_per_iteration(prog, "while_loop") == 1
    for a in (2.0, 0.3, 7.5):
        assert wg.grad(_cube_root)(a) == pytest.approx(a ** (-2 / 3) / 3, rel=1e-12)
        assert wg.jvp(_cube_root, (a,), (1.0,))[1] == pytest.approx(a ** (-2 / 3) / 3,
                                                                   rel=1e-12)
    assert wg.grad(_cube_root)(1.0) == 1.0           # no step: y = a
    check_grads(_cube_root, (2.0,), order=2, eps=1e-5, rtol=1e-6)
    # a for loop alike: s * s and s + s come from s and i from the index
    def f(x):
        return wg.fori_loop(6, lambda i, s: s - 0.1 * s * s * i + x, x)

    prog = vjp_program(wg.make_program(f, 0.5))
    assert _stored_per_iteration(prog, "for_loop") == 1
    check_grads(f, (0.5,), order=2)
    # np.sin and np.cos are no cheap operations: sin(s) and cos(s) are stored
    def g(x):
        return wg.fori_loop(6, lambda i, s: np.sin(s) * x, x)

    assert _stored_per_iteration(vjp_program(wg.make_program(g, 0.5)), "for_loop") == 2
    check_grads(g, (0.5,), order=2)


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


# --- where a loop stores its residuals --------------------------------------------
def scalar_loop(x, n):
    """Scalar carries, ``k`` a Python float: the residuals are scalars the
    reverse loop reads back one at a time (Python lists, as measured faster)."""
    a, b = x[0], x[1]
    s, k = 0.5, 1.0
    for i in range(n):
        s = s * np.sin(s + a) * k + b
        k = k * 0.9
    return s


def nested_loop(x, n):
    """A for loop in a for loop: the outer one stores the inner one's
    residuals, (n, 3, *x) rows."""
    c = x
    for i in range(n):
        for j in range(3):
            c = np.sin(c) * 0.9 + 0.01 * j
        c = c * np.cos(c)
    return np.sum(c * c)


def while_loop_f(x, n):
    """A while loop with an array carry: its residuals grow by doubling."""
    k = 0
    while k < n:
        x = np.sin(x) * 1.1 + 0.2
        k += 1
    return np.sum(x * x)


def f32_loop(x, n):
    c = x
    for i in range(n):
        c = np.tanh(c) * np.float32(1.5)
    return np.sum(c)


STORING_LOOPS = {"scalar": (scalar_loop, np.array([0.7, 0.2])), "nested": (nested_loop, X),
                 "while": (while_loop_f, X), "f32": (f32_loop, X.astype(np.float32))}


@pytest.mark.parametrize("n", [0, 1, 9, 20], ids=lambda n: f"n={n}")
@pytest.mark.parametrize("name", sorted(STORING_LOOPS))
def test_source_engine_loops_store_residuals_in_buffers(name, n):
    """The generated gradient stores each residual of a for loop in an array
    allocated once (or a list of scalars a loop reads back); a while loop
    keeps the arrays its body makes anew each step in a list as they are (no
    row copied, no buffer doubled), and nothing is stacked afterwards; it
    equals the trace engine's gradient and the finite difference."""
    fn, x = STORING_LOOPS[name]
    g = wg.grad(fn, engine="source")
    got = g(x, n)
    want = wg.grad(fn, engine="trace")(x, n)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if name == "f32" else 1e-12, atol=0)
    src = g.source
    assert "np.stack" not in src and "np.concatenate((" not in src, src
    if name == "scalar":
        assert "[None] * " in src and "np.empty(" not in src, src
    elif name == "while":
        assert ".append(" in src and "np.empty(" not in src, src
    else:
        assert "np.empty((" in src and ".append(" not in src, src
    if name != "f32":
        check_grads(lambda x: fn(x, n), (x,), order=1)


# --- loop-invariant residuals are held once ---------------------------------------
def _sin(a):
    return np.sin(a)


def _exp_of_sum(a):
    return np.exp(np.sum(a) * 0.3)


def _matvec(a):
    return np.dot(np.outer(a, a), np.cos(a))


def _inner_loop(a):
    b = a
    for j in range(3):
        b = np.sin(b) * 0.5 + a
    return b


def _same(a):
    return a


# values computed from the loop's constants alone, which the derivative reads
INVARIANTS = {"sin": _sin, "exp_of_sum": _exp_of_sum, "matvec": _matvec,
              "inner_loop": _inner_loop}


def _invariant_loop(inv, kind):
    if kind == "for":
        def f(x, a, n):
            c = x
            for i in range(n):
                c = np.tanh(c) * inv(a) + 0.1
            return np.sum(c * c)
    else:
        def f(x, a, n):
            c, k = x, 0
            while k < n:
                c = np.tanh(c) * inv(a) + 0.1
                k += 1
            return np.sum(c * c)
    return f


@pytest.mark.parametrize("kind", ["for", "while"])
@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_loop_invariant_residuals_are_held_once_not_stored_per_iteration(name, kind):
    """The reverse loop reads values computed from the constants alone
    (inv(a), and inv's own derivative residuals) from one copy the known loop
    overwrites, not from per-iteration buffers: the known loop stores as many
    values per iteration as the same loop with ``a`` in place of inv(a) does;
    the gradient equals the trace engine's and the finite difference, for a
    loop that runs no step (the held values are never read), one and several."""
    f = _invariant_loop(INVARIANTS[name], kind)
    plain = _invariant_loop(_same, kind)
    loop = f"{kind}_loop"
    n = 4
    def stored(fn):
        return _stored_per_iteration(vjp_program(wg.make_program(fn, X, A, n, engine="source")),
                                     loop)

    assert stored(f) == stored(plain)
    for n in (0, 1, 5):
        g = wg.grad(f, (0, 1), engine="source")
        got, want = g(X, A, n), wg.grad(f, (0, 1), engine="trace")(X, A, n)
        for u, v in zip(got, want):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-15)
        check_grads(lambda x, a: f(x, a, n), (X, A), order=1)
