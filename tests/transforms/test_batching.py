"""Batching (``wengert/transforms/batching.py``): a linear Program's many tangents in one
pass equal one tangent at a time; the batching trace (``wg.vmap``'s) applies each row once
to the batch (a matmul, a gather: no loop), runs a ``PER_LANE`` row as a loop over the
batch, marks which outputs are batched, nests with itself and the other transforms, and
refuses Python control flow on a batch with an error naming its trace.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.transforms.batching import batch_eval
from wengert.transforms.partial_eval import linearize_flat

from checks import assert_close


RNG = np.random.default_rng(7)


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


# --- the batching trace (wg.vmap's) ---------------------------------------------------
def _staged_batch(fn, *avals):
    """The Program of ``fn`` batched on every argument (a leading batch axis of 5)."""
    from wengert.core.ir import Aval
    from wengert.core.staging import stage
    from wengert.transforms.batching import batch_flat

    def run(*xs):
        return batch_flat(lambda *ys: [fn(*ys)], list(xs), [True] * len(xs), 5)[0]
    return stage(run, [Aval((5,) + a, np.float64) for a in avals])


def test_a_batched_matmul_is_one_matmul_and_an_index_array_one_gather():
    """No loop over the batch: a batch of vector-matrix products is one ``matmul`` of the
    batch, a gather with an index array one ``getitem`` (the batch axis indexed too)."""
    prog = _staged_batch(lambda x, w: x @ w, (3,), (3, 2))
    assert [e.prim.name for e in prog.eqns].count("matmul") == 1
    assert not any(e.prim.name == "for_loop" for e in prog.eqns)
    prog = _staged_batch(lambda x: x[np.array([2, 0, 0])] * 2.0, (3,))
    assert [e.prim.name for e in prog.eqns].count("getitem") == 1
    assert not any(e.prim.name == "for_loop" for e in prog.eqns)


def test_a_row_run_per_example_is_a_loop_over_the_batch():
    """``lstsq`` (NumPy has no batched one, ``PER_LANE``) runs once per example: a
    ``for_loop`` over the batch, equal to the loop."""
    from wengert.transforms.batching import batch_flat
    a = RNG.standard_normal((4, 5, 3))
    b = RNG.standard_normal((4, 5))
    (x,), flags = batch_flat(lambda a, b: [np.linalg.lstsq(a, b, rcond=None)[0]], [a, b],
                             [True, True], 4)
    assert flags == [True]
    want = np.stack([np.linalg.lstsq(a[k], b[k], rcond=None)[0] for k in range(4)])
    assert_close(x, want, rtol=1e-12)
    prog = _staged_batch(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (5, 3), (5,))
    assert any(e.prim.name == "for_loop" for e in prog.eqns)


def test_batch_program_marks_the_outputs_a_batched_input_reaches():
    from wengert.transforms.batching import batch_program
    prog = wg.make_program(lambda x, c: (np.sin(x) * c, np.cos(c)), np.zeros(3), np.zeros(3),
                           engine="trace")
    batched, flags = batch_program(prog, [True, False], 4)
    assert flags == [True, False]
    assert [v.aval.shape for v in batched.outputs] == [(4, 3), (3,)]
    forced, flags = batch_program(prog, [True, False], 4, force=[False, True])
    assert flags == [True, True] and forced.outputs[1].aval.shape == (4, 3)


def test_batches_nest_in_either_order_with_other_transforms():
    """``vmap(vmap)`` and ``grad(vmap)``: a batch trace over another trace's values."""
    x = RNG.standard_normal((2, 3, 4))
    got = wg.vmap(wg.vmap(lambda v: np.sum(v * v), engine="trace"), engine="trace")(x)
    assert_close(got, np.sum(x * x, axis=-1), rtol=1e-14)
    g = wg.grad(lambda v: wg.vmap(lambda r: np.sum(np.sin(r)), engine="trace")(v).sum(),
                engine="trace")(x[0])
    assert_close(g, np.cos(x[0]), rtol=1e-14)


def test_python_control_flow_on_a_batch_is_a_typed_error_of_its_trace():
    from wengert.core.errors import BatchedConditionError
    from wengert.transforms.batching import BatchTrace, batch_flat

    trace = BatchTrace(3)
    with pytest.raises(BatchedConditionError, match="batched value") as info:
        batch_flat(lambda x: [x if x > 0 else -x], [np.ones(3)], [True], 3, trace=trace)
    assert info.value.trace is trace
