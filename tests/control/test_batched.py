"""Control flow on a batch (``control/cond.py``, ``while_loop.py``, ``for_loop.py``,
``batched_loops.py``, ``checkpoint*.py``, ``custom*.py``: their ``batch`` rules), in both
engines, against a loop over the batch:

* an ``if`` on a batched value selects per example: both branches run, ``np.where`` joins
  them, and a branch's derivative where another is taken never poisons the gradient
  (once, the sqrt branch's ``0 * inf`` at x = 0 and NaN at x < 0 came through ``where``);
  a branch no example takes does not run; a branch with a random draw is refused;
* a ``while`` whose test is batched runs until every example is done, a finished example
  frozen (its own count); a ``for`` with a batched trip count runs to the largest, masked;
* ``wg.checkpoint``, checkpointed ``fori_loop``s, ``custom_jvp`` and ``custom_vjp`` under
  ``vmap(grad)``, ``grad(vmap)`` and ``vmap(jvp)`` (a ``custom_vjp``'s bwd stays the
  gradient: once it was lost under ``grad(vmap)`` in the source engine).
"""
import warnings

import numpy as np
import pytest

import wengert as wg

import vmap_cases as V
from checks import BATCH_RTOL_F64, assert_close

ENGINES = ["source", "trace"]
XS = np.array([4.0, -1.0, 9.0, 0.0, -2.5])


def quiet(call):
    """``call()``, the trace engine's warning that it runs a Python ``if`` per example
    silenced (``api/test_vmap.py`` checks it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wg.core.errors.LoopedBatchWarning)
        return call()


def per_example_grad(fn, xs, *rest):
    return np.array([wg.grad(fn)(x, *[r[k] if np.ndim(r) else r for r in rest])
                     for k, x in enumerate(xs)])


# --- if ------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", [V.safe_sqrt, V.three_way], ids=["two", "three"])
def test_if_on_a_batched_value_selects_per_example(fn, engine):
    xs = np.array([4.0, -1.0, 9.0, 0.5, -2.5, 3.0])
    got = quiet(lambda: wg.vmap(fn, engine=engine)(xs))
    assert_close(got, np.array([fn(x) for x in xs]), BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
def test_gradients_through_a_batched_if_are_nan_safe(engine):
    """At x = 0 and x < 0 the sqrt branch is not taken: its derivative there (inf, NaN)
    must not reach the gradient, as in reverse mode, which runs the taken branch only."""
    want = per_example_grad(V.safe_sqrt, XS)
    assert np.all(np.isfinite(want))
    got = quiet(lambda: wg.vmap(wg.grad(V.safe_sqrt, engine=engine), engine=engine)(XS))
    assert_close(got, want, BATCH_RTOL_F64, what="vmap(grad)")
    got = quiet(lambda: wg.grad(lambda x: wg.vmap(V.safe_sqrt, engine=engine)(x).sum(),
                                engine=engine)(XS))
    assert_close(got, want, BATCH_RTOL_F64, what="grad(vmap)")


def test_a_batched_if_is_both_branches_and_a_where_in_one_code():
    batched = wg.vmap(wg.grad(V.safe_sqrt))
    batched(XS)
    src = batched.source
    assert src.count("np.where(") >= 2 and "for " not in src, src


def test_a_branch_no_example_takes_does_not_run():
    """Every example positive: the other branch is guarded by whether any example takes
    it; the result and its gradient are the taken branch's."""
    xs = np.array([1.0, 4.0])
    assert_close(wg.vmap(V.safe_sqrt)(xs), np.sqrt(xs), BATCH_RTOL_F64)
    assert_close(wg.vmap(wg.grad(V.safe_sqrt))(xs), 0.5 / np.sqrt(xs), BATCH_RTOL_F64)


def test_a_random_draw_in_a_batched_branch_is_refused():
    with pytest.raises(wg.UnsupportedSyntax, match="effect"):
        wg.vmap(V.draws_in_branch, engine="source")(XS)


# --- while, for -----------------------------------------------------------------------
A = np.array([2.0, 9.0, 0.25, 100.0, 1.0])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_batched_while_runs_until_every_example_is_done(engine):
    got = quiet(lambda: wg.vmap(V.newton_sqrt, engine=engine)(A))
    assert_close(got, np.sqrt(A), 1e-12)
    # each example's own count: 3 halvings of 9, none of 0.25, 7 of 100
    got = quiet(lambda: wg.vmap(V.halvings, engine=engine)(A))
    assert_close(got, np.array([V.halvings(a) for a in A]), BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
def test_gradients_through_a_batched_while(engine):
    want = per_example_grad(V.newton_sqrt, A)
    assert_close(want, 0.5 / np.sqrt(A), 1e-8)
    got = quiet(lambda: wg.vmap(wg.grad(V.newton_sqrt, engine=engine), engine=engine)(A))
    assert_close(got, want, 1e-10, what="vmap(grad)")
    got = quiet(lambda: wg.grad(lambda a: wg.vmap(V.newton_sqrt, engine=engine)(a).sum(),
                                engine=engine)(A))
    assert_close(got, want, 1e-10, what="grad(vmap)")
    got = quiet(lambda: wg.vmap(wg.grad(V.halvings, engine=engine), engine=engine)(A))
    assert_close(got, per_example_grad(V.halvings, A), BATCH_RTOL_F64, what="counts")


def test_a_batched_while_is_one_loop_with_frozen_examples():
    batched = wg.vmap(V.newton_sqrt)
    batched(A)
    src = batched.source
    assert src.count("while True") == 1 and "np.where(" in src, src


N = np.array([1, 4, 0, 2, 3])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_batched_trip_count_runs_to_the_largest_masked(engine):
    got = quiet(lambda: wg.vmap(V.powers, engine=engine)(A, N))
    assert_close(got, np.array([V.powers(a, int(n)) for a, n in zip(A, N)]), BATCH_RTOL_F64)
    got = quiet(lambda: wg.vmap(wg.grad(V.powers, engine=engine), engine=engine)(A, N))
    want = np.array([wg.grad(V.powers)(a, int(n)) for a, n in zip(A, N)])
    assert_close(got, want, BATCH_RTOL_F64)


M = np.random.default_rng(5).standard_normal((4, 3))


@pytest.mark.parametrize("engine", ENGINES)
def test_fori_loop_with_a_batched_trip_count(engine):
    got = quiet(lambda: wg.vmap(wg.grad(V.fori_with_count, engine=engine),
                                engine=engine)(M, N[:4]))
    want = np.stack([wg.grad(V.fori_with_count)(m, int(n)) for m, n in zip(M, N[:4])])
    assert_close(got, want, BATCH_RTOL_F64)


# --- checkpoints and custom rules -------------------------------------------------------
def _under_batch(fn, engine, how):
    if how == "vmap(grad)":
        return wg.vmap(wg.grad(fn, engine=engine), engine=engine)(M)

    def total(m):
        return wg.vmap(fn, engine=engine)(m).sum()
    return wg.grad(total, engine=engine)(M)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", [V.uses_region, V.fori_checkpointed, V.uses_custom],
                         ids=["checkpoint", "fori-ctz", "custom"])
@pytest.mark.parametrize("how", ["vmap(grad)", "grad(vmap)"])
def test_checkpoints_and_custom_rules_under_a_batch(fn, how, engine):
    want = np.stack([wg.grad(fn)(m) for m in M])
    assert_close(_under_batch(fn, engine, how), want, 1e-10)


@pytest.mark.parametrize("engine", ENGINES)
def test_custom_rules_give_the_batched_jvp(engine):
    got = wg.vmap(lambda x, t: wg.jvp(V.uses_custom, (x,), (t,), engine=engine)[1],
                  engine=engine)(M, M[::-1])
    want = np.array([wg.jvp(V.uses_custom, (m,), (t,))[1] for m, t in zip(M, M[::-1])])
    assert_close(got, want, 1e-10)


@pytest.mark.parametrize("engine", ENGINES)
def test_custom_vjp_bwd_sums_the_cotangent_of_a_shared_argument(engine):
    """``w`` is shared by the batch: its cotangent is the sum of the examples' bwd."""
    w = np.array([0.5, -1.0, 2.0])
    got = wg.grad(lambda w: wg.vmap(V.uses_scaled, in_axes=(None, 0), engine=engine)(
        w, M).sum(), engine=engine)(w)
    want = sum(wg.grad(V.uses_scaled)(w, m) for m in M)
    assert_close(got, want, 1e-10)
