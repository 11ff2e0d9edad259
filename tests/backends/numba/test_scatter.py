"""``np.add.at`` and ``np.errstate`` in numba's subset
(``wengert/backends/numba/scatter.py``, ``rewrite.py``).

numba has no ``ufunc.at``: a scatter-add at one 1-D index array was a loop, any
other fell back to the Python backend (GradBench's det gradient, an index array
of another shape than the rows; its gmm jacobian, a slice and a 2-D index
array). Now every index compiles: a gather's gradient at a 2-D index array, at
two index arrays, at arrays mixed with slices and ints, with repeated positions,
agrees with the Python backend on grad, jvp and vjp, with no fallback; the loop
the writer emits gives ``np.add.at``'s values for each kind of index, on a
target that is not contiguous too. ``with np.errstate(...)`` blocks (numba
refused the context manager) are their bodies, dedented.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba.rewrite import rewrite_text
from wengert.backends.numba.scatter import add_at_lines

from numba_checks import agree


pytestmark = pytest.mark.numba

IDX2 = np.array([[0, 2, 2], [3, 1, 0]])          # 2-D, repeats
ROWS = np.array([1, 1, 0])
COLS = np.array([[2], [0]])                       # broadcasts against ROWS to 2 x 3


def gather_2d_index(x):
    return np.sum(np.sin(x[IDX2]) * x[IDX2])       # x 1-D, an index of another shape


def gather_slice_and_2d_index(x):
    return np.sum(np.cos(x[:, IDX2]))               # gmm: a slice, then a 2-D array


def gather_two_arrays(x):
    return np.sum(x[ROWS, COLS] ** 2)               # two arrays broadcast together


def gather_mixed(x):
    return np.sum(np.exp(x[1:, ROWS, 0]))           # slice, array, int


_CASES = [(gather_2d_index, (5,)), (gather_slice_and_2d_index, (3, 4)),
          (gather_two_arrays, (2, 3)), (gather_mixed, (3, 2, 2))]


@pytest.mark.parametrize("fn, shape", _CASES, ids=[f.__name__ for f, _ in _CASES])
def test_gathers_at_any_index_compile_and_agree(fn, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    fell = agree(fn, (x,), 0, True, fn.__name__)
    assert not fell, [str(w.message) for w in fell]
    g = wg.grad(fn, engine="source", backend="numba", fallback=False)
    g(x)
    assert "add.at" not in g.source and "flags.c_contiguous" in g.source     # the loop


class _Code:
    """What ``add_at_lines`` reads of a writer."""
    np, INDENT = "np", "    "

    def __init__(self):
        self.n = 0

    def fresh(self, name):
        self.n += 1
        return f"{name}_{self.n}"


def _compiled_add_at(where_text, rows=None):
    import numba
    lines = add_at_lines(_Code(), "t", where_text, "v", rows)
    text = "def f(t, v, i, j):\n" + "".join(f"    {line}\n" for line in lines) + "    return t\n"
    namespace = {"np": np}
    exec(text, namespace)
    return numba.njit(namespace["f"])


_INDEXES = [("i", lambda i, j: i), ("(i, j)", lambda i, j: (i, j)),
            ("np.s_[:, i]", lambda i, j: np.s_[:, i]),
            ("np.s_[j, 1:, i]", lambda i, j: (j, slice(1, None), i))]


@pytest.mark.parametrize("text, index", _INDEXES, ids=[t for t, _ in _INDEXES])
@pytest.mark.parametrize("contiguous", [True, False], ids=["C", "transposed"])
def test_the_loop_adds_as_np_add_at(text, index, contiguous):
    rng = np.random.default_rng(0)
    i, j = np.array([[0, 2], [2, 2]]), np.array([1, 0])
    base = rng.standard_normal((3, 4, 3))
    target = (base.copy() if contiguous
              else np.ascontiguousarray(base.transpose(2, 1, 0)).transpose(2, 1, 0))
    want = base.copy()
    shape = want[index(i, j)].shape
    v = rng.standard_normal(shape)
    np.add.at(want, index(i, j), v)
    got = _compiled_add_at(text)(target, v, i, j)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(target, want, rtol=1e-15, atol=1e-15)     # in place


def test_a_scalar_update_is_broadcast():
    t = np.zeros((3, 4))
    i = np.array([[0, 1], [1, 1]])
    got = _compiled_add_at("np.s_[:, i]")(t, 2.0, i, i)
    want = np.zeros((3, 4))
    np.add.at(want, np.s_[:, i], 2.0)
    np.testing.assert_array_equal(got, want)


def test_errstate_blocks_are_their_bodies():
    text = ("def f(x):\n"
            "    a = 1\n"
            "    with np.errstate(all='ignore'):\n"
            "        try:\n"
            "            b = 2\n"
            "        except np.linalg.LinAlgError:     # singular\n"
            "            b = 3\n"
            "        with np.errstate(over='ignore'):\n"
            "            c = 4\n"
            "        d = 5\n"
            "    return a + b + c + d\n")
    want = ("def f(x):\n"
            "    a = 1\n"
            "    try:\n"
            "        b = 2\n"
            "    except Exception:     # singular\n"
            "        b = 3\n"
            "    c = 4\n"
            "    d = 5\n"
            "    return a + b + c + d\n")
    assert rewrite_text(text, "np") == want
    assert rewrite_text(want, "np") == want
