"""Forward mode over a replayed Program forms only the tangents its outputs
need (``trace.tangent_dead``): a tangent path that ends at a comparison, an
integer result or a branch's predicate is never computed.

Each program below has such a path. For each: the jvp Program staged from
its source Program holds no equation that dead-code elimination would
remove (without the analysis the dead tangents are staged and unused), and
``wg.jvp`` of the source engine agrees with the trace engine and with
finite differences.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.transforms.jvp import jvp_program
from wengert.core.ir import dce

from checks import assert_close, fd_jvp, rtol

RNG = np.random.default_rng(3)


def nearest(points, c):
    # the min over a matmul only picks the nearest centroid (kmeans' cost, as
    # its gradient: the mask's tangent is dead)
    d = np.sum(c * c, axis=1) - 2.0 * points @ c.T
    hit = d == np.min(d, axis=1)[:, None]
    return np.sum(hit * (points @ c.T)) + np.sum(c ** 3)


def argmin_pick(points, c):
    # an integer result: the index of the smallest value
    k = np.argmin(np.sin(points @ c.T), axis=1)
    return np.sum(c[k] * points[:, : c.shape[1]] ** 2)


def masked(points, c):
    # a comparison of a traced value selects, it is not differentiated
    s = np.exp(points @ c.T)
    return np.sum(np.where(s > 1.5, points @ c.T, 0.0)) * np.sum(c)


def branch(points, c):
    # a branch's predicate
    t = np.sum(np.tanh(points @ c.T))
    if t > 0.0:
        return np.sum(c * c)
    return np.sum(np.cos(c))


def max_shift(points, c):
    # the shift of a stable log-sum-exp whose value is compared again
    z = points @ c.T
    top = np.max(z, axis=1)
    arg = (z == top[:, None]).astype(np.float64)
    return np.sum(arg * np.sin(c).sum()) + np.sum(np.log(np.sum(np.exp(z), axis=1)))


PROGRAMS = [nearest, argmin_pick, masked, branch, max_shift]


def _args():
    points = RNG.standard_normal((7, 3))
    c = RNG.standard_normal((4, 3))
    return points, c


@pytest.mark.parametrize("fun", PROGRAMS, ids=lambda f: f.__name__)
def test_jvp_of_a_program_forms_no_dead_tangent(fun):
    points, c = _args()
    prog = wg.make_program(fun, points, c, engine="source")
    fwd = jvp_program(prog)
    # every equation staged is needed by an output (a value or its tangent)
    assert len(dce(fwd).eqns) == len(fwd.eqns), str(fwd)


@pytest.mark.parametrize("fun", PROGRAMS, ids=lambda f: f.__name__)
def test_jvp_values_against_trace_and_differences(fun):
    points, c = _args()
    t = RNG.standard_normal(c.shape)
    out, dot = wg.jvp(lambda c: fun(points, c), (c,), (t,), engine="source")
    out_t, dot_t = wg.jvp(lambda c: fun(points, c), (c,), (t,), engine="trace")
    assert_close(out, out_t, rtol("exact", c))
    assert_close(dot, dot_t, rtol("exact", c))
    assert_close(dot, fd_jvp(lambda c: fun(points, c), (c,), (t,)), rtol("jvp", c))


@pytest.mark.parametrize("fun", PROGRAMS, ids=lambda f: f.__name__)
def test_hessian_diagonal_of_a_gradient(fun):
    # kmeans' Newton step: jvp(grad(f)) along ones, source against trace and
    # against differences of the gradient
    points, c = _args()
    g = wg.grad(fun, argnums=1, engine="source")
    ones = np.ones_like(c)
    J, H = wg.jvp(lambda c: g(points, c), (c,), (ones,), engine="source")
    gt = wg.grad(fun, argnums=1, engine="trace")
    Jt, Ht = wg.jvp(lambda c: gt(points, c), (c,), (ones,), engine="trace")
    assert_close(J, Jt, rtol("ad", c))
    assert_close(H, Ht, rtol("ad", c))
    assert_close(H, fd_jvp(lambda c: g(points, c), (c,), (ones,)), rtol("hessian", c))
