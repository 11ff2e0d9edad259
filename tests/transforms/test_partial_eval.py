"""linearize = jvp + partial evaluation (``wengert/transforms/partial_eval.py``).

* ``Program.all_linear`` (set by linearize; transpose then skips sorting the
  equations) holds only where every equation reads a tangent: a Program
  flagged linear holds no primal work, at any depth. A loop body whose
  linear part recomputes cheap residuals (``recompute_residuals``) holds
  primal equations: it is not flagged, and transpose evaluates those
  forward.
* The linear Program keeps one copy of a global array a loop reads at every
  step, with the values it had.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import Lit, sub_programs
from wengert.core.trace import eval_program
from wengert.transforms.partial_eval import linearize_flat

import trust_cases as tc
from checks import assert_close, fd_jvp, rtol


def _violations(prog, path=""):
    """(program, primitive) for each equation of a flagged Program that reads no tangent."""
    found = []
    if prog.all_linear:
        linear = set(prog.inputs)
        for eqn in prog.eqns:
            if any(not isinstance(x, Lit) and x in linear for x in eqn.inputs):
                linear.update(eqn.outputs)
            else:
                found.append((path + prog.name, eqn.prim.name))
    for eqn in prog.eqns:
        for sub in sub_programs(eqn):
            found += _violations(sub, path + prog.name + "/")
    return found


def _newton(a):
    y = a
    while np.abs(y * y * y - a) >= 1e-12:
        y = y - (y * y * y - a) / (3.0 * y * y)
    return y


def _loop_branch(x, a):
    s = 0.5
    for i in range(x.shape[0]):
        if s > 1.0:
            s = s + np.sin(x[i]) * a
        else:
            s = s * 2.0 + x[i] * x[i]
    return s


def _euler(x):
    def step(i, y):
        return y + 0.01 * (np.sin(y) - y * y * y)
    return np.sum(wg.fori_loop(20, step, x, checkpoint="ctz"))


def _checkpointed(x):
    return np.sum(wg.checkpoint(lambda y: np.sin(y) * y)(x) * x)


CASES = {
    "while": (_newton, (2.0,)),
    "for_cond": (_loop_branch, (np.array([0.3, -0.7, 1.2, 0.1]), 1.5)),
    "checkpointed_loop": (_euler, (np.array([0.2, 0.5]),)),
    "checkpoint": (_checkpointed, (np.array([0.2, 0.5, -1.0]),)),
}


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_programs_flagged_linear_hold_only_linear_equations(case, engine):
    fun, args = CASES[case]
    prog = wg.make_program(fun, *args, engine=engine)
    for reverse in (True, False):
        outs, lin = linearize_flat(lambda *xs: eval_program(prog, xs), list(args),
                                   reverse=reverse)
        assert lin.all_linear
        assert _violations(lin) == []
        # and the linear Program is the derivative: against the gradient
        if reverse:
            t = [np.ones_like(np.asarray(a, float)) * 0.5 for a in args]
            lin_out = eval_program(lin, t)[0]
            grads = wg.grad(fun, argnums=tuple(range(len(args))), engine=engine)(*args)
            want = sum(np.sum(g * ti) for g, ti in zip(grads, t))
            assert np.allclose(lin_out, want, rtol=1e-10, atol=1e-12)


def test_the_check_sees_primal_work_in_a_flagged_program():
    from wengert.core.ir import Aval, Eqn, Program, Var
    from wengert.primitives import PRIMITIVES
    t, u, w = (Var(Aval((), np.float64)) for _ in range(3))
    prog = Program([t], [Eqn(PRIMITIVES["sin"], (Lit(0.3),), (u,), {}),   # primal work
                         Eqn(PRIMITIVES["mul"], (t, u), (w,), {})], [w], name="lin")
    assert _violations(prog) == []              # not flagged: anything goes
    prog.all_linear = True
    assert _violations(prog) == [("lin", "sin")]


# --- a global read at each step is kept once --------------------------------------
EXACT = rtol("exact", np.float64)


@pytest.fixture
def restore_globals():
    """Tests below change trust_cases' globals; each gets them back."""
    saved = {k: (v, v.copy() if isinstance(v, np.ndarray) else
                 list(v) if isinstance(v, list) else None)
             for k, v in vars(tc).items() if k.isupper()}
    rng_state = tc.RS.get_state()
    model = (tc.MODEL.w.copy(), [m.copy() for m in tc.MODEL.layers])
    yield
    for k, (obj, contents) in saved.items():
        setattr(tc, k, obj)                 # the same objects (a default holds one)
        if isinstance(obj, np.ndarray):
            obj[...] = contents
        elif isinstance(obj, list):
            obj[:] = contents
    tc.RS.set_state(rng_state)
    tc.MODEL.w, tc.MODEL.layers = model[0], model[1]


def _kept_arrays(prog, shape):
    """The distinct arrays of ``shape`` a Program holds as literals."""
    from wengert.core.ir import Lit, sub_programs
    found = {}

    def walk(p):
        for e in p.eqns:
            for x in e.inputs:
                if isinstance(x, Lit) and np.shape(x.val) == shape:
                    found[id(x.val)] = x.val
            for sub in sub_programs(e):
                walk(sub)
    walk(prog)
    return list(found.values())


def test_a_global_read_at_each_step_is_kept_once(restore_globals):
    """The linear Program keeps one copy of a global array a loop reads at
    every step (not one per step: memory would grow with the trip count),
    and still the values it had: writing to it afterwards changes nothing."""
    y = np.array([0.3, -0.2])
    t = np.array([1.0, 0.5])
    _, lin = wg.linearize(tc.iterated_map, y, engine="trace")
    kept = _kept_arrays(lin.program, tc.M.shape)
    assert len(kept) == 1 and kept[0] is not tc.M
    want = fd_jvp(tc.iterated_map, (y,), (t,))
    tc.M *= 0.0
    assert_close(lin(t), want, 1e-6)
    tc.M[...] = [[0.5, -0.25], [0.125, 0.75]]
    _, lin = wg.linearize(tc.row_of_global, y, engine="trace")     # keeps a view of M
    want = tc.M[0] * t
    tc.M[0] = 4.0
    assert_close(lin(t), want, EXACT)
