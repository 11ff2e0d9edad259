"""The programs of ``bench.vmap_bench`` stay right: at a small batch, wengert's
``vmap(grad)`` equals the Python loop of ``grad`` and the hand-vectorised NumPy gradient,
and (numba) its compiled twin. Its verdicts are computed from made-up times. Nothing here
is timed."""
import numpy as np
import pytest

import wengert as wg
from bench import vmap_bench as B

from checks import assert_close


@pytest.mark.parametrize("index", range(4), ids=["mlp", "mlp-8", "logreg", "newton"])
def test_batched_gradient_equals_the_loop_and_numpy_by_hand(index):
    name, fn, by_hand, args, in_axes = B.problems(6, np.random.default_rng(index))[index]
    got = wg.vmap(wg.grad(fn), in_axes=in_axes)(*args)
    assert_close(got, B.python_loop(wg.grad(fn), args, in_axes)(*args), 1e-12, what=name)
    assert_close(got, by_hand(*args), 1e-9, what=f"{name} by hand")


@pytest.mark.numba
@pytest.mark.parametrize("index", range(4), ids=["mlp", "mlp-8", "logreg", "newton"])
def test_numba_compiles_the_batched_gradients(index):
    name, fn, _, args, in_axes = B.problems(6, np.random.default_rng(index))[index]
    numba = wg.vmap(wg.grad(fn, backend="numba", fallback=False), in_axes=in_axes,
                    backend="numba", fallback=False)
    assert_close(numba(*args), wg.vmap(wg.grad(fn), in_axes=in_axes)(*args), 1e-12, what=name)


def test_verdicts_follow_the_targets(capsys):
    row = {"problem": "p", "size": 4096, "python": 1.0, "numba": 0.5, "loop": 60.0,
           "numpy": 0.6, "jax": 0.6, "torch": "not installed"}
    B.verdicts([row])
    out = capsys.readouterr().out
    assert "met     python backend within 2x" in out
    assert "met     numba at or below JAX" in out and "met     numba at or below PyTorch" in out
    B.verdicts([dict(row, python=2.0, loop=90.0)])
    out = capsys.readouterr().out
    assert "MISSED  python backend within 2x of NumPy by hand, every size (not at: p@4096)" in out
    assert "MISSED  at least 50x faster" in out
