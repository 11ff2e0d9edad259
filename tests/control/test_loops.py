"""What the loop rows share (``wengert/control/loops.py``): the values a loop
stores per iteration, and the carries its transpose keeps.

* the source engine's gradient stores each residual of a for loop in an
  array allocated once (or a list of scalars a loop reads back); a while
  loop keeps the arrays its body makes anew in a list; nothing is stacked
  afterwards;
* values computed from a loop's constants alone are held once, not stored
  per iteration;
* carries whose cotangent is zero at every step of the reverse loop: a loop
  carry that nothing differentiated reads (a step size only the ``while``
  condition tests, a counter kept as a float, a running maximum used for a
  stopping rule) has a zero cotangent at every step. The transposed loop
  must neither carry it nor compute with it: as a concrete 0.0 its
  transposed body computes ``0.0 / step``, which is NaN where the step
  reaches 0 -- a silent NaN gradient where the true one is finite (the trace
  engine, whose zeros are symbolic, got it right). Checked: gradients
  against the trace engine and finite differences at points where the step
  does reach 0, and the transposed loops carry no cotangent for such
  carries.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import sub_programs
from wengert.testing import check_grads
from wengert.transforms.vjp import vjp_program

from checks import PROGRAM_RTOL_F64, assert_close, eqns_named, fd_jvp
from control_cases import STORING_LOOPS, stored_per_iteration


# --- where a loop stores its residuals --------------------------------------------
X = np.array([0.3, -0.2, 0.9])
A = np.array([1.1, 0.7, -0.4])


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
        return stored_per_iteration(vjp_program(wg.make_program(fn, X, A, n, engine="source")),
                                     loop)

    assert stored(f) == stored(plain)
    for n in (0, 1, 5):
        g = wg.grad(f, (0, 1), engine="source")
        got, want = g(X, A, n), wg.grad(f, (0, 1), engine="trace")(X, A, n)
        for u, v in zip(got, want):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-15)
        check_grads(lambda x, a: f(x, a, n), (X, A), order=1)


# --- carries whose cotangent is zero at every step --------------------------------
X_POS = np.array([0.3, 0.7, 1.1])


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
        g = wg.grad(fn, engine="source")(X_POS.copy())
    assert np.all(np.isfinite(g))
    assert_close(g, wg.grad(fn, engine="trace")(X_POS.copy()), PROGRAM_RTOL_F64)
    t = np.random.default_rng(0).standard_normal(X_POS.shape)
    assert_close(np.dot(g, t), fd_jvp(fn, (X_POS,), (t,)), 1e-5)


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
    g(X_POS.copy())
    reverse = [e for e in _loops(g.last.program) if "transpose" in e.params["body"].name]
    assert reverse, str(g.last.program)
    for e in reverse:
        assert "div" not in set(_prims(e.params["body"])), str(e.params["body"])
