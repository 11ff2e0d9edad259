"""Checkpointing (``wengert/control/checkpoint.py``, ``checkpoint_loop.py``,
``checkpoint_emit.py``; the public ``wengert/api/checkpoint.py``):
``wg.checkpoint(fun)``, ``fori_loop(..., checkpoint=)`` and the source
engine's ``for i in wg.checkpointed(range(n))``. A checkpointed derivative is
the same computation in another order: it must equal the store-all
derivative (relative 1e-12), in both engines, in every mode and to second
order, while storing only what the schedule says.
"""
import tracemalloc

import numpy as np
import pytest

import wengert as wg
from wengert.control.schedules import CTZ, count
from wengert.transforms.vjp import vjp_program
from wengert.testing import check_grads

RTOL = 1e-12
ENGINES = ["trace", "source"]
X = np.array([0.3, -0.6, 0.9, 0.1])
H = 0.2
SCHEDULES = [("ctz", None), ("binomial", 1), ("binomial", 2), ("binomial", None)]


def _close(got, want, rtol=RTOL):
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300)


def euler(checkpoint, snapshots=None):
    """A loop with a differentiated constant (h) and an integer carry."""
    def loss(x0, h, n):
        def step(i, c):
            x, k = c
            return x + h * (np.sin(x) - x * x * x) + 0.01 * i, k + 1
        x, k = wg.fori_loop(n, step, (x0, 0), checkpoint=checkpoint, snapshots=snapshots)
        return np.sum(x * x) * k
    return loss


# --- fori_loop(checkpoint=) ------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, 8, 16, 17], ids=lambda n: f"n={n}")
def test_checkpointed_gradients_equal_store_all(n, engine):
    want = wg.grad(euler(None), (0, 1), engine=engine)(X, H, n)
    for checkpoint, snapshots in SCHEDULES:
        got = wg.grad(euler(checkpoint, snapshots), (0, 1), engine=engine)(X, H, n)
        _close(got, want)


class _Recording(CTZ):
    """CTZ, remembering the actions it gave the runners."""
    actions = []

    def forward(self, n):
        for a in super().forward(n):
            self.actions.append(("forward",) + a)
            yield a

    def reverse(self, n):
        for a in super().reverse(n):
            self.actions.append(("reverse",) + a)
            yield a


@pytest.mark.parametrize("engine", ENGINES)
def test_the_sweeps_run_the_schedule(engine):
    sched = _Recording()
    n = 13

    def loss(x0, h):
        return np.sum(wg.fori_loop(n, lambda i, x: x + h * np.sin(x), x0, checkpoint=sched))

    _Recording.actions = []
    wg.grad(loss, engine=engine)(X, H)
    acts = _Recording.actions
    c = count(CTZ(), n)
    assert sum(1 for s, kind, _ in acts if s == "reverse" and kind == 0) == c.recomputed
    assert sum(1 for s, kind, _ in acts if s == "forward" and kind == 0) == n
    assert [k for s, kind, k in acts if kind == 4] == list(range(n - 1, -1, -1))


def test_checkpointed_loop_memory_grows_like_log_n():
    """Peak traced memory of one gradient call, in states: store-all grows
    with n; CTZ and binomial (same budget) by about two states (a stored one
    and its copy into the stacked residual) per doubling of n."""
    x0 = np.linspace(-1.0, 1.0, 2000)

    def peak(checkpoint, n):
        g = wg.grad(euler(checkpoint), engine="source")
        g(x0, 1.0 / n, n)                   # generate the code first
        tracemalloc.start()
        g(x0, 1.0 / n, n)
        out = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out / x0.nbytes

    small, large = 64, 2048                 # log2: 6 and 11
    store_all = peak(None, large)
    assert store_all > 2 * large                     # residuals of every step
    for checkpoint in ("ctz", "binomial"):
        grown = peak(checkpoint, large)
        assert grown < 0.02 * store_all
        assert grown - peak(checkpoint, small) < 2 * (11 - 6) + 4


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("checkpoint,snapshots", [("ctz", None), ("binomial", 2)],
                         ids=["ctz", "binomial2"])
def test_higher_order_through_a_checkpointed_loop(engine, checkpoint, snapshots):
    f, ref = euler(checkpoint, snapshots), euler(None)
    x = X[:3]
    for n in (0, 1, 5):
        _close(wg.hessian(f, engine=engine)(x, H, n), wg.hessian(ref, engine=engine)(x, H, n),
               rtol=1e-10)
        def fn(x, h):
            return f(x, h, n)

        def ref_n(x, h):
            return ref(x, h, n)

        _close(wg.jvp(fn, (x, H), (np.ones(3), 0.5), engine=engine),
               wg.jvp(ref_n, (x, H), (np.ones(3), 0.5), engine=engine))
        _close(wg.jacfwd(f, engine=engine)(x, H, n), wg.jacrev(f, engine=engine)(x, H, n),
               rtol=1e-10)
    check_grads(lambda x, h: f(x, h, 5), (x, H), order=2)


def test_nested_checkpointed_loops():
    def f(x, checkpoint):
        def outer(i, c):
            return wg.fori_loop(3, lambda j, d: np.sin(d) * 0.9 + d * 0.2, c,
                                checkpoint=checkpoint) + 0.1
        return np.sum(wg.fori_loop(5, outer, x, checkpoint=checkpoint) ** 2)

    for engine in ENGINES:
        want = wg.grad(f, engine=engine)(X, None)
        _close(wg.grad(f, engine=engine)(X, "ctz"), want)
        _close(wg.grad(f, engine=engine)(X, "binomial"), want)


def test_fori_loop_checkpoint_arguments_are_checked():
    f = euler("ctz", 3)
    with pytest.raises(ValueError, match="chooses its own"):
        wg.grad(f, engine="trace")(X, H, 3)
    with pytest.raises(ValueError, match="'ctz' or 'binomial'"):
        wg.grad(euler("all"), engine="trace")(X, H, 3)


# --- wg.checkpoint ------------------------------------------------------------
def block(x, a):
    y = np.sin(x) * a
    return np.tanh(y) + x * x


cblock = wg.checkpoint(block)


def straight(x, a):
    z = cblock(x, a)
    return np.sum(cblock(z, a) ** 2)


def straight_ref(x, a):
    z = block(x, a)
    return np.sum(block(z, a) ** 2)


def in_loop(x, a):
    s = x
    for i in range(4):
        s = cblock(s, a) * 0.5
    return np.sum(s)


def in_fori(x, a):
    return np.sum(wg.fori_loop(4, lambda i, s: cblock(s, a) * 0.5, x, checkpoint="ctz"))


def in_loop_ref(x, a):
    s = x
    for i in range(4):
        s = block(s, a) * 0.5
    return np.sum(s)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f,ref", [(straight, straight_ref), (in_loop, in_loop_ref),
                                   (in_fori, in_loop_ref)], ids=["straight", "loop", "fori"])
def test_checkpoint_derivatives_equal_the_plain_function(f, ref, engine):
    a = 1.3
    assert f(X, a) == pytest.approx(ref(X, a), rel=1e-14)
    _close(wg.grad(f, (0, 1), engine=engine)(X, a), wg.grad(ref, (0, 1), engine="trace")(X, a))
    _close(wg.jvp(f, (X, a), (np.ones(4), 0.5), engine=engine),
           wg.jvp(ref, (X, a), (np.ones(4), 0.5), engine="trace"))
    _close(wg.hessian(f, engine=engine)(X, a), wg.hessian(ref, engine="trace")(X, a),
           rtol=1e-10)
    _close(wg.jacfwd(f, engine=engine)(X, a), wg.jacrev(f, engine=engine)(X, a), rtol=1e-10)


def test_linear_programs_evaluate_forward_in_both_backends():
    """The linear parts (``checkpoint_lin``, ``loop_lin``), evaluated rather
    than transposed, are the jvp; generated code calls their impls."""
    from wengert.api.backend import python_function
    from wengert.core.trace import eval_program
    from wengert.transforms.partial_eval import linearize_flat

    def f(x, a):
        return [in_fori(x, a) + straight(x, a)]

    t = (np.linspace(0.5, -0.5, 4), 0.3)
    want = wg.jvp(lambda x, a: f(x, a)[0], (X, 1.3), t, engine="trace")[1]
    _, lin = linearize_flat(f, [X, 1.3], reverse=True)
    names = {e.prim.name for e in lin.eqns}
    assert {"checkpoint_lin", "loop_lin"} <= names
    _close(eval_program(lin, list(t))[0], want)
    _close(python_function(lin)(*t)[0], want)


def test_checkpoint_residuals_are_its_inputs():
    """Reverse mode through a loop stores, per step, what the linear loop
    reads: with the body checkpointed, only the checkpoint's input."""
    def f(x, a, fun):
        return np.sum(wg.fori_loop(6, lambda i, s: fun(s, a), x))

    def stacked(fun):
        prog = vjp_program(wg.make_program(lambda x, a: f(x, a, fun), X, 1.3, engine="trace"))
        known = next(e for e in prog.eqns if e.prim.name == "for_loop")
        return len(known.outputs) - 1                  # one carry, the rest stacked

    assert stacked(cblock) == 1
    assert stacked(block) >= 3


def test_checkpoint_with_pytrees_closures_and_control_flow():
    @wg.checkpoint
    def branchy(p, scale):
        if np.sum(p["u"]) > 0:                          # a branch on a traced value
            out = np.sin(p["u"]) * scale
        else:
            out = np.cos(p["u"]) * scale
        return {"out": out, "w": p["w"] * scale}

    def f(x, scale):
        r = branchy({"u": x, "w": x[::-1]}, scale)
        return np.sum(r["out"] * r["w"])

    def ref(x, scale):
        u, w = x, x[::-1]
        out = (np.sin(u) if np.sum(u) > 0 else np.cos(u)) * scale
        return np.sum(out * w * scale)

    for x in (X, -X):
        for engine in ENGINES:
            assert f(x, 0.7) == pytest.approx(ref(x, 0.7), rel=1e-14)
            _close(wg.grad(f, (0, 1), engine=engine)(x, 0.7), wg.grad(ref, (0, 1))(x, 0.7))


# --- the source engine's wg.checkpointed ------------------------------------------
def marked(x0, h, n):
    x = x0
    for i in wg.checkpointed(range(n), schedule="binomial", snapshots=2):
        if np.sum(x) > 0:
            x = x + h * (np.sin(x) - x * x * x)
        else:
            x = x - h * np.cos(x) * i
    return np.sum(x * x)


def unmarked(x0, h, n):
    x = x0
    for i in range(n):
        if np.sum(x) > 0:
            x = x + h * (np.sin(x) - x * x * x)
        else:
            x = x - h * np.cos(x) * i
    return np.sum(x * x)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8], ids=lambda n: f"n={n}")
def test_checkpointed_for_loop_equals_the_plain_loop(n):
    for x in (X, -X):
        want = wg.grad(unmarked, (0, 1), engine="source")(x, H, n)
        _close(wg.grad(marked, (0, 1), engine="source")(x, H, n), want)
        _close(wg.grad(marked, (0, 1), engine="trace")(x, H, n), want)   # a plain range there


def test_checkpointed_for_loop_program_and_code():
    prog = wg.make_program(marked, X, H, 6, engine="source")
    loop = next(e for e in prog.eqns if e.prim.name == "checkpointed_loop")
    assert repr(loop.params["schedule"]) == "binomial(2)"
    assert "checkpointed_loop[" in str(prog) and "schedule=binomial(2)" in str(prog)
    g = wg.grad(marked, engine="source")
    g(X, H, 6)
    # the trip count is the int argument, read by name (``n``)
    assert "binomial_forward(n, 2)" in g.source and "binomial_reverse(n, 2)" in g.source
    assert "for_loop" not in str(g.program)        # nothing stored per step


def _non_range(x):
    for v in wg.checkpointed(x):
        x = x * v
    return np.sum(x)


def _with_break(x, n):
    for i in wg.checkpointed(range(n)):
        x = x * 0.5
        if np.sum(x) < 0.1:
            break
    return np.sum(x)


def test_checkpointed_for_loop_errors():
    with pytest.raises(wg.UnsupportedSyntax, match="wg.checkpointed takes a range"):
        wg.grad(_non_range, engine="source")(X)
    with pytest.raises(wg.UnsupportedSyntax, match="break or return inside a checkpointed"):
        wg.grad(_with_break, engine="source")(X, 4)
    with pytest.raises(ValueError, match="needs a schedule"):
        wg.checkpointed(range(3), schedule=None)
    assert list(wg.checkpointed(range(3))) == [0, 1, 2]


def ck_over_length(z, c):
    w = z
    for i in wg.checkpointed(range(c.shape[0]), schedule="binomial", snapshots=2):
        w = np.sin(w) * c[i]
    return w


def plain_over_length(z, c):
    w = z
    for i in range(c.shape[0]):
        w = np.sin(w) * c[i]
    return w


def test_checkpointed_over_an_arguments_length():
    """wg.checkpointed(range(c.shape[0])): a range over a symbolic length
    (it raised UnsupportedSyntax, 'takes a range, got DimRange'); one
    generated derivative is right at several lengths, equal to the
    store-all one."""
    g = wg.grad(ck_over_length, argnums=(0, 1), engine="source")
    want = wg.grad(plain_over_length, argnums=(0, 1), engine="source")
    for n in (2, 5, 9):
        c = np.linspace(0.5, 1.5, n)
        got, ref = g(0.3, c), want(0.3, c)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-12, atol=1e-15)


def _residual_bytes_per_step(n, x0):
    """The bytes the forward loop of the source engine's store-all gradient
    stores per iteration (its ys: one row each)."""
    g = wg.grad(euler(None), engine="source")
    g(x0, 1.0 / n, n)
    loop = next(e for e in g.program.eqns if e.prim.name == "for_loop")
    rows = [v.aval for v in loop.outputs[loop.params["num_carry"]:]]
    return sum(int(np.prod(a.shape[1:])) * a.dtype.itemsize for a in rows)


@pytest.mark.parametrize("engine", ENGINES)
def test_store_all_memory_is_the_residuals_plus_a_few_states(engine):
    """Peak traced memory of a store-all gradient call is the residuals the
    forward loop stores (each once, in a buffer allocated before the loop:
    no list of them and a stacked copy besides) plus O(state), at every n,
    so it grows linearly in n: four states a step here, and about 20 besides."""
    x0 = np.linspace(-1.0, 1.0, 2000)
    excess = {}
    for n in (128, 512, 2048):
        g = wg.grad(euler(None), engine=engine)
        g(x0, 1.0 / n, n)                   # generate the code first
        tracemalloc.start()
        g(x0, 1.0 / n, n)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        residuals = n * _residual_bytes_per_step(n, x0)
        assert residuals >= 4 * n * x0.nbytes and peak >= residuals
        excess[n] = (peak - residuals) / x0.nbytes
    assert max(excess.values()) < 32, excess       # states, whatever n
