"""The primitives' face, tested by class (issue 11): each section takes one
kind of mistake and runs every member of its class in both engines.

* shape rules: every rule that checks its operands refuses bad shapes with
  ``ShapeMismatchError`` naming the user's line, also after a derivative of
  the same function ran at good shapes (a remembered answer, compiled code or
  a concrete NumPy evaluation must not skip the check).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import wengert as wg
from wengert import errors

from checks import assert_close, fd_jvp, rtol

ENGINES = ("trace", "source")
HERE = os.path.basename(__file__)


def _arrays(shapes, seed=0):
    """Random float64 arrays of ``shapes``; square matrices are made
    well-conditioned (solve, inv and det are among the rules)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 3.0 * np.eye(s[-1])
        out.append(a)
    return out


def check_grad_fd(f, args, engine, what=""):
    """The gradient (every argument) against central differences along a
    random direction."""
    argnums = tuple(range(len(args)))
    g = wg.grad(f, argnums=argnums, engine=engine)(*args)
    rng = np.random.default_rng(1)
    t = tuple(rng.standard_normal(np.shape(a)) for a in args)
    got = sum(float(np.sum(gi * ti)) for gi, ti in zip(g, t))
    want = fd_jvp(f, args, t)
    assert_close(got, want, rtol("jvp", *args), what=f"{what} gradient against FD")


# --- shape rules: a guard always runs ------------------------------------------------
def sg_add(a, b):
    return np.sum(a + b)


def sg_mul_2d(a, b):
    return np.sum(a * b)


def sg_where(a, b):
    return np.sum(np.where(a > 0.0, a, b))


def sg_matmul(a, b):
    return np.sum(a @ b)


def sg_dot(a, b):
    return np.sum(np.dot(a, b))


def sg_einsum(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b))


def sg_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=([1], [0])))


def sg_concatenate(a, b):
    return np.sum(np.concatenate([a, b], axis=0) ** 2)


def sg_stack(a, b):
    return np.sum(np.stack([a, b]) ** 2)


def sg_reshape(a):
    return np.sum(np.sin(a.reshape(6)))


def sg_broadcast_to(a, b):
    return np.sum(np.broadcast_to(a, (3, 4)) * b)


def sg_transpose(a, b):
    return np.sum(np.transpose(a, (1, 0)) * b)


def sg_squeeze(a):
    return np.sum(np.squeeze(a, axis=0) ** 2)


def sg_solve(a, b):
    return np.sum(np.linalg.solve(a, b))


def sg_inv(a):
    return np.sum(np.linalg.inv(a))


def sg_det(a):
    return np.linalg.det(a)


SHAPE_GUARDS = [
    ("broadcast", sg_add, [(3,), (3,)], [(3,), (4,)]),
    ("broadcast-2d", sg_mul_2d, [(2, 3), (3,)], [(2, 3), (2,)]),
    ("where", sg_where, [(3,), (3,)], [(3,), (2,)]),
    ("matmul", sg_matmul, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("matmul-vector", sg_matmul, [(3,), (3, 4)], [(2,), (3, 4)]),
    ("matmul-batch", sg_matmul, [(2, 3, 4), (2, 4, 5)], [(3, 3, 4), (2, 4, 5)]),
    ("dot", sg_dot, [(2, 3), (3,)], [(2, 3), (4,)]),
    ("einsum", sg_einsum, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("tensordot", sg_tensordot, [(2, 3), (3, 4)], [(2, 3), (2, 4)]),
    ("concatenate", sg_concatenate, [(2, 3), (1, 3)], [(2, 3), (1, 4)]),
    ("stack", sg_stack, [(3,), (3,)], [(3,), (4,)]),
    ("reshape", sg_reshape, [(2, 3)], [(2, 4)]),
    ("broadcast_to", sg_broadcast_to, [(4,), (3, 4)], [(5,), (3, 4)]),
    ("transpose", sg_transpose, [(2, 3), (3, 2)], [(2, 3, 1), (3, 2)]),
    ("squeeze", sg_squeeze, [(1, 3)], [(2, 3)]),
    ("solve", sg_solve, [(3, 3), (3,)], [(3, 3), (4,)]),
    ("solve-batch", sg_solve, [(2, 3, 3), (2, 3, 2)], [(2, 3, 3), (3, 3, 2)]),
    ("inv", sg_inv, [(3, 3)], [(3, 4)]),
    ("det", sg_det, [(3, 3)], [(3, 4)]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, good, bad", SHAPE_GUARDS, ids=[c[0] for c in SHAPE_GUARDS])
def test_shape_guard_runs_after_good_shapes(name, f, good, bad, engine):
    """Good shapes first (the gradient is right), then bad ones: through the
    same derivative (its code and remembered rules exist) and through a new
    one, each refuses with ShapeMismatchError naming this file's line."""
    args = tuple(_arrays(good))
    check_grad_fd(f, args, engine, name)
    first = wg.grad(f, argnums=tuple(range(len(args))), engine=engine)
    first(*args)
    wrong = tuple(_arrays(bad, seed=2))
    for g in (first, wg.grad(f, argnums=tuple(range(len(args))), engine=engine)):
        with pytest.raises(errors.ShapeMismatchError, match=rf"{HERE}:\d+: "):
            g(*wrong)
    # and the value alone, through a jvp (forward mode: other rules run)
    with pytest.raises(errors.ShapeMismatchError, match=rf"{HERE}:\d+: "):
        wg.jvp(f, wrong, tuple(np.ones_like(w) for w in wrong), engine=engine)
