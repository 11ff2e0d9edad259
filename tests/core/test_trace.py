"""Applying a primitive (``wengert/core/trace.py``): ``bind``, one current
trace per thread, and the analyses a replay makes.

* ``bind`` without tracers is the NumPy implementation;
* jvp of grad, grad of jvp and hessian agree with finite differences of the
  derivative one order below, on programs with a loop and a branch, in both
  engines;
* a tracer kept past its transformation raises ``LeakedTracerError`` where
  it is used, under every transform;
* an inner derivative closing over an outer one's variable sees it as a
  constant: d/dx [x * d/dy (x + y)] = 1, and the like for every pair of
  transforms;
* threads differentiating at once get each its own derivative;
* no rule reads which transform is running: no row has ``needs_trace`` and
  no rule takes ``trace``;
* forward mode over a replayed Program forms only the tangents its outputs
  need (``tangent_dead``): a tangent path that ends at a comparison, an
  integer result or a branch's predicate is never computed. For each program
  with such a path, the jvp Program staged from its source Program holds no
  equation that dead-code elimination would remove (without the analysis the
  dead tangents are staged and unused), and ``wg.jvp`` of the source engine
  agrees with the trace engine and with finite differences.
"""
from __future__ import annotations

import inspect
import sys
import threading

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import LeakedTracerError
from wengert.core.ir import dce
from wengert.core.trace import bind
from wengert.primitives import PRIMITIVES
from wengert.transforms.jvp import jvp_program

from checks import EXACT_RTOL_F64, HESSIAN_RTOL_F64, JVP2_RTOL_F64, assert_close, fd_jvp, rtol


ENGINES = ["trace", "source"]


# --- programs ------------------------------------------------------------
def smooth(x):
    return np.sum(np.sin(x) * x * x) + np.prod(np.cos(x))


def looped(x):
    y = x
    for _ in range(3):
        y = y * np.cos(y) + 0.5 * x
    return np.sum(y * y)


def branched(x):
    if np.sum(x) > 0.0:
        z = np.exp(0.3 * x) * x
    else:
        z = np.tanh(x) * x * x
    return np.sum(z) + np.sum(x[:2] * x[1:])


def while_looped(x):
    y = x
    k = 0
    while k < 3:
        y = np.sin(y) * x + y
        k = k + 1
    return np.sum(y)


PROGRAMS = [smooth, looped, branched, while_looped]
X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 0.2, -0.9])
U = np.array([-0.4, 0.8, 0.1])


def _ids(fns):
    return [f.__name__ for f in fns]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", PROGRAMS, ids=_ids(PROGRAMS))
def test_jvp_of_grad(fn, engine):
    """d/dt grad f(x + t v) = H v, against finite differences of grad f."""
    g = wg.grad(fn, engine=engine)
    _, hv = wg.jvp(g, (X,), (V,), engine=engine)
    assert_close(hv, fd_jvp(g, (X,), (V,)), HESSIAN_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", PROGRAMS, ids=_ids(PROGRAMS))
def test_grad_of_jvp(fn, engine):
    """grad_x <grad f(x), v> = H v: its product with u against finite
    differences of the jvp along u."""
    def along_v(x):
        return wg.jvp(fn, (x,), (V,), engine=engine)[1]
    hv = wg.grad(along_v, engine=engine)(X)
    assert_close(np.dot(hv, U), fd_jvp(along_v, (X,), (U,)), JVP2_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fn", PROGRAMS, ids=_ids(PROGRAMS))
def test_hessian(fn, engine):
    """hessian(f) u against finite differences of grad f along u, and
    symmetric."""
    h = wg.hessian(fn, engine=engine)(X)
    assert_close(h @ U, fd_jvp(wg.grad(fn, engine=engine), (X,), (U,)), HESSIAN_RTOL_F64)
    assert_close(h, h.T, HESSIAN_RTOL_F64)


# --- escaped tracers -----------------------------------------------------
def _grad(f, x):
    return wg.grad(f, engine="trace")(x)


def _jvp(f, x):
    return wg.jvp(f, (x,), (1.0,), engine="trace")[1]


def _jacfwd(f, x):
    return wg.jacfwd(f, engine="trace")(x)


def _linearize(f, x):
    return wg.linearize(f, x, engine="trace")[0]


def _hessian(f, x):
    return wg.hessian(f, engine="trace")(x)


def _program(f, x):
    return wg.make_program(f, x, engine="trace")


TRANSFORMS = [_grad, _jvp, _jacfwd, _linearize, _hessian]
ESCAPES = TRANSFORMS + [_program]


@pytest.mark.parametrize("later", ESCAPES + [None], ids=lambda t: getattr(t, "__name__", "plain"))
@pytest.mark.parametrize("transform", ESCAPES, ids=_ids(ESCAPES))
def test_escaped_tracer_is_refused(transform, later):
    """A traced value stored outside its transformation raises where it is
    used again: plainly, or inside another transformation."""
    kept = []

    def keeps(x):
        kept.append(x * 2.0)
        return np.sin(x) * x

    transform(keeps, 0.7)
    assert kept, "the function ran"
    with pytest.raises(LeakedTracerError):
        if later is None:
            np.cos(kept[0])
        else:
            later(lambda y: y * kept[0], 0.3)


# --- perturbation confusion --------------------------------------------
def _d_grad(f):
    return lambda x: wg.grad(f, engine="trace")(x)


def _d_jvp(f):
    return lambda x: wg.jvp(f, (x,), (1.0,), engine="trace")[1]


def _d_jacfwd(f):
    return lambda x: wg.jacfwd(f, engine="trace")(x)


def _d_jacrev(f):
    return lambda x: wg.jacrev(f, engine="trace")(x)


DERIVATIVES = [_d_grad, _d_jvp, _d_jacfwd, _d_jacrev]


@pytest.mark.parametrize("inner", DERIVATIVES, ids=_ids(DERIVATIVES))
@pytest.mark.parametrize("outer", DERIVATIVES, ids=_ids(DERIVATIVES))
@pytest.mark.parametrize("x", [0.5, 2.0])
def test_perturbation_confusion(outer, inner, x):
    """d/dx [x * d/dy (x + y)] = 1 (the inner derivative is 1: x is its
    constant), and d/dx [x * d/dy (x * y)] = 2 x."""
    def first(x):
        return x * inner(lambda y: x + y)(1.3)

    def second(x):
        return x * inner(lambda y: x * y)(1.3)
    assert_close(outer(first)(x), 1.0, EXACT_RTOL_F64)
    assert_close(outer(second)(x), 2.0 * x, EXACT_RTOL_F64)


# --- threads -------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_threads_differentiate_apart(engine):
    """Eight threads take gradients and Hessians of different programs at
    once (started together by a barrier): each gets what one thread alone
    gets."""
    jobs = [(fn, X * s) for fn in PROGRAMS for s in (1.0, -0.5)]
    alone = [(wg.grad(fn, engine=engine)(x), wg.hessian(fn, engine=engine)(x)) for fn, x in jobs]
    barrier = threading.Barrier(len(jobs))
    got, errors = [None] * len(jobs), []

    def work(k):
        fn, x = jobs[k]
        try:
            barrier.wait()
            for _ in range(3):
                got[k] = (wg.grad(fn, engine=engine)(x), wg.hessian(fn, engine=engine)(x))
        except Exception as err:   # noqa: BLE001 -- reported below
            errors.append(err)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)      # switch threads often: traces interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    for (g, h), (g1, h1) in zip(got, alone):
        assert_close(g, g1, EXACT_RTOL_F64)
        assert_close(h, h1, EXACT_RTOL_F64)


# --- the rows ------------------------------------------------------------
RULE_FIELDS = ["jvp", "linearize", "linearize_for_vjp", "jvp_for_grad", "transpose", "batch",
               "zero_rule", "abstract_eval"]


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_no_rule_reads_the_transform(name):
    """A row's rules take operands and params only: none takes ``trace``
    (each transform picks its rule), and ``needs_trace`` is no field."""
    prim = PRIMITIVES[name]
    assert not hasattr(prim, "needs_trace")
    assert "needs_trace" not in type(prim).__slots__
    for field in RULE_FIELDS:
        rule = getattr(prim, field)
        if not callable(rule):
            continue
        try:
            params = inspect.signature(rule).parameters
        except (TypeError, ValueError):     # a builtin (np.sin): no trace either
            continue
        assert "trace" not in params, f"{name}.{field} takes trace="


# --- custom rules closing over a variable being differentiated -------------
def _jvp_closing(x):
    @wg.custom_jvp
    def g(y):
        return y * x

    @g.defjvp
    def g_jvp(primals, tangents):
        (y,), (t,) = primals, tangents
        return y * x, t * x                 # x: the outer trace's value, in a rule
    return g(x + 1.0)


def _vjp_closing(x):
    @wg.custom_vjp
    def g(y):
        return np.sin(y) * x

    def fwd(y):
        return g(y), y

    def bwd(res, ct):
        return (ct * np.cos(res) * x,)      # x: read after its linearize is over
    g.defvjp(fwd, bwd)
    return g(x * 2.0)


def _program_of_grad(f, x):
    return wg.make_program(wg.grad(f, engine="trace"), x, engine="trace")


REVERSE = [_grad, _hessian, _program_of_grad]
FORWARD = [_jvp, _jacfwd]


@pytest.mark.parametrize("transform", REVERSE + FORWARD, ids=_ids(REVERSE + FORWARD))
def test_custom_jvp_rule_closing_over_a_traced_value(transform):
    """A custom_jvp rule runs under the trace's parent: a value of the
    trace it closes over is refused there, never taken as a constant."""
    with pytest.raises(LeakedTracerError, match="pass the value in as an argument"):
        transform(_jvp_closing, 0.7)


@pytest.mark.parametrize("transform", REVERSE + FORWARD, ids=_ids(REVERSE + FORWARD))
def test_custom_vjp_closing_over_a_traced_value(transform):
    """Forward mode differentiates the body, closure included (finite
    differences agree); reverse mode runs bwd after the linearize that x
    belongs to is over: refused, never a Program holding a dead tracer."""
    if transform in FORWARD:
        assert_close(transform(_vjp_closing, 0.7), fd_jvp(_vjp_closing, (0.7,), (1.0,)),
                     JVP2_RTOL_F64)
    else:
        with pytest.raises(LeakedTracerError):
            transform(_vjp_closing, 0.7)


# --- bind without tracers ---------------------------------------------------------
RNG = np.random.default_rng(7)


def test_bind_without_tracers_is_the_numpy_implementation():
    x = RNG.standard_normal(3)
    np.testing.assert_array_equal(bind(PRIMITIVES["sin"], x), np.sin(x))


# --- tangent liveness: forward mode forms only the tangents the outputs need ------
LIVENESS_RNG = np.random.default_rng(3)


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


WITH_DEAD_TANGENTS = [nearest, argmin_pick, masked, branch, max_shift]


def _args():
    points = LIVENESS_RNG.standard_normal((7, 3))
    c = LIVENESS_RNG.standard_normal((4, 3))
    return points, c


@pytest.mark.parametrize("fun", WITH_DEAD_TANGENTS, ids=lambda f: f.__name__)
def test_jvp_of_a_program_forms_no_dead_tangent(fun):
    points, c = _args()
    prog = wg.make_program(fun, points, c, engine="source")
    fwd = jvp_program(prog)
    # every equation staged is needed by an output (a value or its tangent)
    assert len(dce(fwd).eqns) == len(fwd.eqns), str(fwd)


@pytest.mark.parametrize("fun", WITH_DEAD_TANGENTS, ids=lambda f: f.__name__)
def test_jvp_values_against_trace_and_differences(fun):
    points, c = _args()
    t = LIVENESS_RNG.standard_normal(c.shape)
    out, dot = wg.jvp(lambda c: fun(points, c), (c,), (t,), engine="source")
    out_t, dot_t = wg.jvp(lambda c: fun(points, c), (c,), (t,), engine="trace")
    assert_close(out, out_t, rtol("exact", c))
    assert_close(dot, dot_t, rtol("exact", c))
    assert_close(dot, fd_jvp(lambda c: fun(points, c), (c,), (t,)), rtol("jvp", c))


@pytest.mark.parametrize("fun", WITH_DEAD_TANGENTS, ids=lambda f: f.__name__)
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
