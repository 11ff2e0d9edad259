"""Batched evaluation of a linear Program (``wengert/transforms/batching.py``):
many tangents in one pass equal one tangent at a time, and a row without a
batch rule falls back to a loop.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.primitives import PRIMITIVES
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
