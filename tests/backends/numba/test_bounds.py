"""numba checks the generated code's indices only where the Program indexes at a
position (``wengert/backends/numba/compiled.py``: ``bounds_checked``).

Every access was checked before (``boundscheck=True``), which made whole-array code
twice as slow as it need be (GradBench's ode gradient: 1.55 s under numba against
0.88 s under the Python backend; unchecked 0.63 s). The check stays wherever an index can be out
of range at a later call (an integer position, an index array, a mask, in a loop's body
too): there numba still raises ``IndexError`` as NumPy does, never reads another element.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba.compiled import bounds_checked

from checks import assert_close, rtol


pytestmark = pytest.mark.numba


def sliced(x):
    return np.sum(x[1:] * x[:-1]) + np.sum(x[::2] ** 2)


def at_three(x):
    return x[3] * 2.0 + np.sum(x[1:])


def gathered(x, idx):
    return np.sum(x[idx] ** 2)


def masked(x):
    return np.sum(x[x > 0.5])


def in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i]
    return s


def ode_like(x, s):
    y = np.zeros_like(x)
    for _ in range(s):
        y = y + 0.1 * x * np.concatenate([np.ones(1), y[:-1]])
    return y[-1]


@pytest.mark.parametrize("fn, args, checked", [
    (sliced, (np.arange(6.0),), False),
    (at_three, (np.arange(6.0),), True),
    (gathered, (np.arange(6.0), np.array([0, 3])), True),
    (masked, (np.linspace(0, 1, 6),), True),
    (in_a_loop, (np.arange(6.0), 4), True),
], ids=["slices", "an int position", "an index array", "a mask", "a loop's body"])
def test_the_check_is_kept_wherever_the_program_indexes_at_a_position(fn, args, checked):
    assert bounds_checked(wg.make_program(fn, *args, engine="source")) is checked


def test_code_that_slices_only_runs_unchecked_and_agrees():
    x = np.random.default_rng(1).random(50)
    want = wg.grad(ode_like, engine="source")(x, 7)
    got = wg.grad(ode_like, engine="source", backend="numba", fallback=False)(x, 7)
    assert_close(got, want, rtol("exact", want))


@pytest.mark.parametrize("fn, good, bad", [
    (at_three, (np.arange(5.0),), (np.arange(2.0),)),
    (in_a_loop, (np.arange(5.0), 3), (np.arange(5.0), 8)),
], ids=["an int position", "a loop's body"])
def test_an_index_out_of_range_at_a_later_call_raises(fn, good, bad):
    g = wg.grad(fn, engine="source", backend="numba", fallback=False)
    assert_close(g(*good), wg.grad(fn, engine="source")(*good), rtol("exact", good[0]))
    for backend in ("python", "numba"):
        with pytest.raises(IndexError):
            wg.grad(fn, engine="source", backend=backend)(*bad)
