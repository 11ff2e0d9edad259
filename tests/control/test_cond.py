"""``cond`` (``wengert/control/cond.py``): the branch an index picks, as one
equation. Its derivatives follow the taken branch (an index given, or from
a traced comparison), and its code (``if``/``elif``/``else`` on the index)
computes the interpreter's arrays on every branch, under jvp and vjp.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.control import cond
from wengert.control.cond import cond_p
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, sub_programs
from wengert.core.staging import stage
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program
from wengert.testing import check_grads

from codegen_checks import VARIANTS, assert_same, random_inputs, rng_for


X = np.array([0.3, -0.2, 0.9])
A = np.array([1.1, 0.7, -0.4])


def _branches():
    f0 = stage(lambda x, a: [np.sin(x) * a], [Aval((3,), np.float64)] * 2, name="small")
    f1 = stage(lambda x, a: [x * x - a], [Aval((3,), np.float64)] * 2, name="large")
    return f0, f1


@pytest.mark.parametrize("which", [0, 1], ids=["branch0", "branch1"])
def test_cond_derivatives_follow_the_taken_branch(which):
    branches = _branches()
    refs = [lambda x, a: np.sum(np.sin(x) * a * x), lambda x, a: np.sum((x * x - a) * x)]

    def f(x, a):
        out, = cond(which, branches, x, a)
        return np.sum(out * x)

    assert f(X, A) == pytest.approx(refs[which](X, A))
    for g, h in zip(wg.grad(f, (0, 1))(X, A), wg.grad(refs[which], (0, 1))(X, A)):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    check_grads(f, (X, A), order=2)
    np.testing.assert_allclose(wg.jacfwd(f)(X, A), wg.jacrev(f)(X, A), rtol=1e-12)


def test_cond_with_index_from_a_traced_comparison():
    branches = _branches()

    def f(x, a):
        out, = cond(np.sum(x) > 0.5, branches, x, a)
        return np.sum(out)

    for x in (X, -X):
        check_grads(f, (x, A), order=2)


# --- its code: the interpreter's arrays on every branch ---------------------------
F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)


def _staged_branches(k):
    vec = [Aval((3,), F64)] * 2
    fns = [lambda x, a: [np.sin(x) * a], lambda x, a: [x * x - a], lambda x, a: [np.exp(-x) + a]]
    return [stage(f, vec, name=f"branch{i}") for i, f in enumerate(fns[:k])]


@pytest.mark.parametrize("k", [2, 3], ids=["two_branches", "three_branches"])
def test_cond_programs_agree_on_every_branch(k):
    branches = _staged_branches(k)

    def f(index, x, a):
        out, = cond(index, branches, x, a)
        return np.sum(out * x)

    prog = wg.make_program(f, 0, X, A, engine="trace")
    gen = python_function(prog)
    assert "if int(index) == 0:" in gen.source and "else:" in gen.source
    assert ("elif int(index) == 1:" in gen.source) == (k == 3)
    for index in range(k):
        assert_same(prog, [index, X, A])
        for variant in ("jvp", "vjp", "vjp_simplified"):
            p = VARIANTS[variant](prog)
            extra = random_inputs(p.in_avals[3:], rng_for("cond", k, variant))
            assert_same(p, [index, X, A] + extra)


def test_cond_on_a_traced_comparison_agrees():
    branches = _staged_branches(2)

    def f(x, a):
        out, = cond(np.sum(x) > 0.5, branches, x, a)
        return np.sum(out)

    for variant in ("traced", "jvp", "vjp"):
        prog = VARIANTS[variant](wg.make_program(f, X, A, engine="trace"))
        for x in (X, -X):
            extra = random_inputs(prog.in_avals[2:], rng_for("cmp", variant))
            assert_same(prog, [x, A] + extra)


# --- dce and forwarding (issue 27) -------------------------------------------------------
def _cond_eqns(prog):
    out = []
    for e in prog.eqns:
        if e.prim.name == "cond":
            out.append(e)
        for sub in sub_programs(e):
            out += _cond_eqns(sub)
    return out


def _loop_with_branch(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s


def test_a_cond_drops_the_outputs_no_one_uses_with_their_work():
    """``grad`` of the README's loop once computed the primal sum in the forward sweep
    (``s_1 = s - np.sin(v0)`` in every step) and threw it away: the ``cond`` had no dce
    rule, so the loop kept ``s`` as a carry. Now the branches compute only the residuals
    (``2 * x[i]``, ``cos(x[i])``), and the code is the interpreter's."""
    x = np.array([0.5, -1.0, 2.0])
    g = wg.grad(_loop_with_branch)
    got = g(x, 3)
    src = g.source
    code = "\n".join(line.split("#")[0] for line in src.splitlines())   # (comments quote)
    assert "np.sin" not in code and " s = " not in code, src
    # the vjp returns ``s`` too: there the branches keep computing it
    prog = simplify(vjp_program(wg.make_program(_loop_with_branch, x, 3, engine="source")),
                    copies=True)
    assert any(q.prim.name == "sin" for e in _cond_eqns(prog) for b in e.params["branches"]
               for q in b.eqns)
    want = 2 * x * (x > 0) - np.cos(x) * (x <= 0)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert_same(prog, [x, 1.0])


def test_a_cond_forwards_an_operand_every_branch_passes_on_and_reads_a_literal_inside():
    """An output each branch gives back from one operand is that operand (the reverse
    loop's ``ct_s``, which no branch changes); a scalar literal operand (``ct_s = 1.0``
    in ``grad``) is read inside the branches, where ``ct_s * r`` is then ``r``."""
    x = np.array([0.5, -1.0, 2.0])
    g = wg.grad(_loop_with_branch)
    g(x, 3)
    assert "ct_s" not in g.source, g.source
    f = Aval((), np.float64)
    b0 = stage(lambda p, y: [p * y, y], [f, f], name="b0")
    b1 = stage(lambda p, y: [p + y, y], [f, f], name="b1")
    i, y = Var(Aval((), np.bool_)), Var(f)
    outs = [Var(f), Var(f)]
    prog = Program([i, y], [Eqn(cond_p, [i, Lit(2.0), y], outs, {"branches": (b0, b1)})],
                   outs)
    simple = simplify(prog)
    assert simple.outputs[1] is y                       # passed on: the operand itself
    e, = simple.eqns
    assert len(e.inputs) == 2 and len(e.outputs) == 1   # the literal inside, one output
    for which in (True, False):
        assert_same(simple, [np.bool_(which), 3.0])
