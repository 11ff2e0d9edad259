"""The adjugate (``det``'s derivative, ``wengert/primitives/adjugate.py``) compiles under
numba: its emit rule writes numba's subset there (matrix by matrix, the singular case a
flag, the products of the other singular values a loop), and the gradient of ``det``
equals the Python backend's on both of its ways (``det(A) inv(A)``, and the SVD for
singular and ill-conditioned matrices), batched and in float32.

What once came back otherwise: the Python spelling (``a_inv = None``, ``[..., None,
None]``, ``.sum(-2).max(-1)``) did not type under numba, and every ``det`` gradient
(GradBench's det evals through ``np.linalg.det``) ran the Python backend with a warning.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg

from checks import assert_close, fd_jvp
from numba_checks import fallbacks


pytestmark = pytest.mark.numba


def det_cost(a):
    return np.sum(np.linalg.det(a) * 2.0)


def _matrices():
    rng = np.random.default_rng(7)
    regular = rng.normal(size=(4, 4))
    singular = regular.copy()
    singular[2] = 0.0                          # exactly singular: inv raises, the SVD's way
    rank_one = np.outer(rng.normal(size=3), rng.normal(size=3))
    ill = np.diag([1.0, 1e-3, 1e-6]) @ np.linalg.qr(rng.normal(size=(3, 3)))[0]
    batch = np.stack([rng.normal(size=(3, 3)), rank_one, np.zeros((3, 3))])
    return {"regular": regular, "singular": singular, "rank one": rank_one,
            "ill-conditioned": ill, "batch": batch,
            "float32": regular.astype(np.float32)}


MATRICES = _matrices()


@pytest.mark.parametrize("name", list(MATRICES))
def test_det_gradient_compiles_and_equals_the_python_backend(name):
    a = MATRICES[name]
    want = wg.grad(det_cost, engine="source")(a)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = wg.grad(det_cost, engine="source", backend="numba", fallback=False)(a)
    assert not fallbacks(seen)
    assert got.dtype == want.dtype and got.shape == a.shape
    tol = 1e-4 if a.dtype == np.float32 else 1e-9
    assert_close(got, want, tol, what=name)


def test_det_gradient_under_numba_matches_finite_differences():
    a = MATRICES["regular"]
    g = wg.grad(det_cost, engine="source", backend="numba", fallback=False)(a)
    direction = np.random.default_rng(2).normal(size=a.shape)
    assert_close(np.sum(g * direction), fd_jvp(det_cost, (a,), (direction,)), 1e-6)
