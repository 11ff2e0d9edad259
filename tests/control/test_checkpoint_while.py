"""Checkpointed ``while`` loops (``wengert/control/checkpoint_while.py``; the
source engine's ``while wg.checkpointed(test):`` in
``frontends/source/loops.py``; the public ``wg.while_loop(...,
checkpoint="ctz")`` in ``api/loops.py``). The trip count is known only when
the loop ends, so the forward sweep picks its states online (CTZ). The
derivative must equal the store-all one (relative 1e-12) in both engines,
at trip counts 0, 1, 2, powers of two and others, agree with finite
differences, and keep O(log n) states.
"""
import tracemalloc

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.control.checkpoint_while import while_forward_p
from wengert.control.schedules import CTZ
from wengert.core.errors import ConcretizationError, UnsupportedSyntax
from wengert.testing import check_grads

from checks import eqns_named, fd_jvp

RTOL = 1e-12
X = np.array([0.3, -0.6, 0.9, 0.1])
TRIPS = [0, 1, 2, 3, 4, 7, 8, 13, 16, 31, 32, 33]


def _close(got, want, rtol=RTOL):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300)


# the source engine's statement: a test on a float carry and a closed-over step
def euler_stmt(x, h, tol):
    t = 0.0
    while wg.checkpointed(t < tol):
        x = x + h * (np.sin(x) - x * x * x)
        t = t + 1.0
    return np.sum(x * x)


def euler_stmt_plain(x, h, tol):
    t = 0.0
    while t < tol:
        x = x + h * (np.sin(x) - x * x * x)
        t = t + 1.0
    return np.sum(x * x)


def euler_fn(checkpoint):
    """``wg.while_loop``: a pytree carry (a float counter, the state)."""
    def loss(x, h, tol):
        def body(c):
            t, y = c
            return t + 1.0, y + h * (np.sin(y) - y * y * y)
        return np.sum(wg.while_loop(lambda c: c[0] < tol, body, (0.0, x),
                                    checkpoint=checkpoint)[1] ** 2)
    return loss


def _tol(n):
    """A test ``t < tol`` that runs ``n`` steps (t counts 0, 1, ...)."""
    return n - 0.5


@pytest.mark.parametrize("n", TRIPS, ids=lambda n: f"n={n}")
def test_while_statement_gradient_equals_store_all(n):
    want = wg.grad(euler_stmt_plain, (0, 1), engine="source")(X, 0.1, _tol(n))
    got = wg.grad(euler_stmt, (0, 1), engine="source")(X, 0.1, _tol(n))
    _close(got, want)


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("n", TRIPS, ids=lambda n: f"n={n}")
def test_while_loop_gradient_equals_store_all(n, engine):
    want = wg.grad(euler_fn(None), (0, 1), engine=engine)(X, 0.1, _tol(n))
    got = wg.grad(euler_fn("ctz"), (0, 1), engine=engine)(X, 0.1, _tol(n))
    _close(got, want)
    # and the statement's, the same loop
    _close(got, wg.grad(euler_stmt, (0, 1), engine="source")(X, 0.1, _tol(n)))


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("n", [1, 6, 16])
def test_checkpointed_while_gradient_against_finite_differences(n, engine):
    g = wg.grad(euler_fn("ctz"), (0, 1), engine=engine)(X, 0.1, _tol(n))
    dx, dh = np.array([0.5, -1.0, 0.25, 2.0]), 0.7
    fd = fd_jvp(lambda x, h: euler_fn(None)(x, h, _tol(n)), (X, 0.1), (dx, dh))
    np.testing.assert_allclose(np.dot(g[0], dx) + g[1] * dh, fd, rtol=1e-7)


def test_a_test_on_the_state_that_the_gradient_reaches():
    """A Newton-like iteration stopping on a residual: the trip count
    depends on the differentiated input; the derivative is the one of the
    steps taken (as store-all's)."""
    def solve(a, ck):
        def body(c):
            x, _ = c
            new = 0.5 * (x + a / x)
            return new, np.abs(new - x)
        return wg.while_loop(lambda c: c[1] > 1e-12, body, (a, np.float64(1.0)),
                             checkpoint=ck)[0]
    for engine in ("trace", "source"):
        got = wg.grad(lambda a: solve(a, "ctz"), engine=engine)(2.0)
        _close(got, wg.grad(lambda a: solve(a, None), engine=engine)(2.0))
        np.testing.assert_allclose(got, 0.5 / np.sqrt(2.0), rtol=1e-9)


def test_the_online_forward_sweep_stores_ctz_states():
    """``while_forward`` run directly: the trip count, the state before the
    last step and the stored rows, which are CTZ's positions for that count
    (at most floor(log2 n) + 1) and hold the states s_k."""
    def f(x, tol):
        return wg.while_loop(lambda c: c[0] < tol, lambda c: (c[0] + 1.0, c[1] * 2.0),
                             (0.0, x), checkpoint="ctz")[1]
    x = np.array([1.0, 3.0])
    (eqn,) = eqns_named(wg.make_program(f, x, 10.5), "checkpointed_while")
    assert len(eqn.inputs) == 3             # the closed-over tol, then the carry
    for n in TRIPS:
        carry_t, carry_x, count, last_t, last_x, st_t, st_x = while_forward_p.impl(
            np.float64(n - 0.5), np.float64(0.0), x, **eqn.params)
        assert count == n and carry_t == n
        np.testing.assert_array_equal(carry_x, x * 2.0 ** n)
        positions = CTZ().stored(n)
        assert len(st_x) == len(positions) <= max(1, n).bit_length()
        for row, k in enumerate(positions):
            np.testing.assert_array_equal(st_x[row], x * 2.0 ** k)
            assert st_t[row] == k
        if n:
            np.testing.assert_array_equal(last_x, x * 2.0 ** (n - 1))


def _peak(g, *args):
    g(*args)                                # generate the code first
    tracemalloc.start()
    g(*args)
    out = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_checkpointed_while_memory_grows_like_log_n(engine):
    """Peak traced memory of one gradient call, in states of 2000 floats:
    store-all grows with n; CTZ by about two states (a stored one and its
    copy into the stacked residual) per doubling of n."""
    x0 = np.linspace(-1.0, 1.0, 2000)

    def peak(checkpoint, n):
        return _peak(wg.grad(euler_fn(checkpoint), engine=engine), x0, 1.0 / n, _tol(n)) \
            / x0.nbytes

    small, large = 64, 1024                 # log2: 6 and 10
    store_all = peak(None, large)
    assert store_all > 2 * large
    grown = peak("ctz", large)
    assert grown < 0.02 * store_all
    assert grown - peak("ctz", small) < 2 * (10 - 6) + 4


def test_while_statement_memory_is_a_few_states():
    x0 = np.linspace(-1.0, 1.0, 2000)
    n = 1024
    ckpt = _peak(wg.grad(euler_stmt, engine="source"), x0, 1.0 / n, _tol(n)) / x0.nbytes
    store = _peak(wg.grad(euler_stmt_plain, engine="source"), x0, 1.0 / n, _tol(n)) / x0.nbytes
    assert store > 2 * n and ckpt < 0.01 * store and ckpt < 3 * 11 + 6


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_forward_mode_and_second_order_through_a_checkpointed_while(engine):
    f, ref = euler_fn("ctz"), euler_fn(None)
    x = X[:3]
    for n in (0, 1, 5):
        tol = _tol(n)

        def fn(x, h):
            return f(x, h, tol)

        def ref_n(x, h):
            return ref(x, h, tol)

        _close(wg.jvp(fn, (x, 0.1), (np.ones(3), 0.5), engine=engine),
               wg.jvp(ref_n, (x, 0.1), (np.ones(3), 0.5), engine=engine))
        _close(wg.jacfwd(f, engine=engine)(x, 0.1, tol), wg.jacrev(f, engine=engine)(x, 0.1, tol),
               rtol=1e-10)
    check_grads(lambda x, h: f(x, h, _tol(5)), (x, 0.1), order=1)


def test_second_order_through_a_checkpointed_while():
    """The trace engine differentiates the sweeps by their impls on concrete
    values: the Hessian equals store-all's. The source engine's code would
    need the trip count while it is generated: a typed error, never a wrong
    value, naming the user's loop and what to do (once: the impl's ``bool()`` on
    a symbolic test, naming no loop and advising ``engine='source'``, the engine
    that failed)."""
    f, ref = euler_fn("ctz"), euler_fn(None)
    x = X[:3]
    for n in (0, 1, 5):
        _close(wg.hessian(f, engine="trace")(x, 0.1, _tol(n)),
               wg.hessian(ref, engine="trace")(x, 0.1, _tol(n)), rtol=1e-10)
    check_grads(lambda x, h: f(x, h, _tol(5)), (x, 0.1), order=2)
    with pytest.raises(ConcretizationError, match=r"test_checkpoint_while\.py:58: a second "
                       r"derivative through a checkpointed while loop.*engine='trace'"):
        wg.hessian(f, engine="source")(x, 0.1, _tol(5))
    # the statement form: the error names the ``while`` line
    line = euler_stmt.__code__.co_firstlineno + 2
    with pytest.raises(ConcretizationError, match=rf"test_checkpoint_while\.py:{line}: "):
        wg.hessian(euler_stmt, engine="source")(x, 0.1, _tol(5))
    # the trace engine's Hessian of the statement, against differences of its gradient
    hess = wg.hessian(euler_stmt, engine="trace")(x, 0.1, _tol(5))
    for k in range(3):
        e = np.eye(3)[k]
        want = fd_jvp(lambda y: wg.grad(euler_stmt, engine="trace")(y, 0.1, _tol(5)),
                      (x,), (e,))
        np.testing.assert_allclose(hess[:, k], want, rtol=1e-6, atol=1e-8)


def test_binomial_is_refused_on_a_while_loop():
    def stmt(x):
        t = 0.0
        while wg.checkpointed(t < 3, schedule="binomial"):
            x = x * 1.5
            t = t + 1.0
        return x

    with pytest.raises(UnsupportedSyntax, match="schedule='ctz'"):
        wg.grad(stmt, engine="source")(1.0)
    with pytest.raises(UnsupportedSyntax, match="schedule='ctz'"):
        wg.while_loop(lambda c: c < 3, lambda c: c + 1, 0, checkpoint="binomial")


def test_plain_python_runs_the_marker_as_its_test():
    """Run as Python (nothing traced), ``wg.checkpointed(test)`` is the test."""
    assert euler_stmt(X, 0.1, _tol(3)) == euler_stmt_plain(X, 0.1, _tol(3))
    assert wg.while_loop(lambda c: c < 5, lambda c: c + 2, 0, checkpoint="ctz") == 6


def test_generated_code_runs_the_online_sweep():
    """The source engine's code: the forward sweep takes ``ctz_online()``'s
    actions inside a ``while True`` (no trip count asked for in advance);
    the reverse sweep is ``loop_reverse``'s over the count it found (its schedule a
    function defined in the code, ``ctz_reverse``); no
    store-all ``while_loop`` is left. Both schedules are functions the code defines: run
    with NumPy alone bound, it gives the gradient (once the forward sweep read the
    ``CTZ`` object, bound in the header as ``ctz``: wengert's own)."""
    prog = wg.make_program(euler_stmt, X, 0.1, _tol(5), engine="source")
    assert "checkpointed_while[" in str(prog) and "schedule=ctz" in str(prog)
    g = wg.grad(euler_stmt, engine="source")
    g(X, 0.1, _tol(5))
    assert "ctz_online()" in g.source and "ctz_reverse(" in g.source
    header = g.source.split("\ndef ")[0].splitlines()[1:]
    assert "def ctz_online():" in g.source and header == ["#   np = numpy"], header
    assert "while True:" in g.source
    namespace = {"np": np}
    exec(g.source, namespace)
    fname = [line for line in g.source.splitlines() if line.startswith("def ")][-1]
    got = namespace[fname[4:fname.index("(")]](X, 0.1, _tol(5))
    _close(got, g(X, 0.1, _tol(5)))
    names = {e.prim.name for e in g.program.eqns}
    assert {"while_forward", "loop_reverse"} <= names and "while_loop" not in names


def _with_break(x, ck):
    t = 0.0
    while (wg.checkpointed(t < 10) if ck else t < 10):
        x = x * 0.9 + 0.01 * np.sin(x)
        t = t + 1.0
        if np.sum(x) < 0.5:
            break
    return np.sum(x)


def _compound(x, ck):
    t = 0.0
    while (wg.checkpointed(t < 10) if ck else t < 10) and np.sum(x) > 0.5:
        x = x * 0.9 + 0.01 * np.sin(x)
        t = t + 1.0
    return np.sum(x)


@pytest.mark.parametrize("fn", [_with_break, _compound], ids=["break", "and"])
def test_a_marked_test_with_break_or_and_stays_checkpointed(fn):
    """``break`` makes the test ``not brk and test``; ``wg.checkpointed(a)
    and b`` is a test too: the marker wraps the whole test (once it did not:
    a TypeError, 'not an array value: checkpointed')."""
    x = np.array([1.0, 0.8])
    prog = wg.make_program(lambda x: fn(x, True), x, engine="source")
    assert [e.prim.name for e in prog.eqns].count("checkpointed_while") == 1
    for x in (np.array([1.0, 0.8]), np.array([5.0, 5.0])):      # stops early; runs out
        _close(wg.grad(fn, engine="source")(x, True), wg.grad(fn, engine="source")(x, False))


def _inner(x, ck):
    def body(c):
        t, y = c
        return t + 1.0, y * 0.9 + 0.05 * np.sin(y)
    return wg.while_loop(lambda c: c[0] < 5.5, body, (0.0, x), checkpoint=ck)[1]


def _in_checkpointed_for(x, ck):
    return np.sum(wg.fori_loop(4, lambda i, y: _inner(y, ck) + 0.1, x, checkpoint=ck))


def _in_python_for(x, ck):
    for i in range(3):
        x = _inner(x, ck) * 1.1
    return np.sum(x)


def _in_checkpoint(x, ck):
    return np.sum(wg.checkpoint(lambda y: _inner(y, ck))(x))


def _test_reads_an_input(x, tol, ck):
    return wg.while_loop(lambda c: c[0] < tol, lambda c: (c[0] + 1.0, c[1] * x), (0.0, 1.0),
                         checkpoint=ck)[1]


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("fn", [_in_checkpointed_for, _in_python_for, _in_checkpoint])
def test_nested_checkpointed_while(fn, engine):
    """A checkpointed while inside a checkpointed for loop, a Python loop and
    a ``wg.checkpoint`` region: the store-all gradient."""
    x = np.array([0.3, 0.7])
    _close(wg.grad(fn, engine=engine)(x, "ctz"), wg.grad(fn, engine=engine)(x, None))


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_an_input_only_the_test_reads_gets_a_zero_gradient(engine):
    got = wg.grad(_test_reads_an_input, (0, 1), engine=engine)(2.0, 3.5, "ctz")
    assert got == (32.0, 0.0)


def test_the_primal_code_is_a_plain_while():
    """Where nothing is differentiated, the row's code is the ``while`` loop
    (``CheckpointedWhileEmit``), computing the loop's value."""
    prog = wg.make_program(euler_stmt, X, 0.1, _tol(7), engine="source")
    fn = python_function(prog)
    assert fn(X, 0.1, _tol(7))[0] == euler_stmt_plain(X, 0.1, _tol(7))
    assert "while True:" in fn.source and "online" not in fn.source


def _neighbours(x, ck):
    def body(c):
        t, y = c
        return t + 1.0, y + 0.1 * np.sin(np.roll(y, 1) * y)
    return wg.while_loop(lambda c: c[0] < 2.5, body, (0.0, x), checkpoint=ck)[1]


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_sparsity_is_the_plain_while_loops(engine):
    """The row's sparsity rule is ``while_loop``'s: the checkpointed loop's
    pattern is the store-all loop's (each step couples a neighbour: three
    steps reach three)."""
    x = np.linspace(0.1, 0.9, 6)
    got = wg.jacobian_sparsity(lambda x: _neighbours(x, "ctz"), x, engine=engine).toarray()
    want = wg.jacobian_sparsity(lambda x: _neighbours(x, None), x, engine=engine).toarray()
    np.testing.assert_array_equal(got, want)
    assert got.sum() == 6 * 4 and not got.all()
