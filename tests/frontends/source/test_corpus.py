"""The source frontend (``wengert/frontends/source/``, DESIGN.md, "What the
source engine accepts") on its corpus.

Every accepted construct, alone and combined (``source_corpus.CASES``, the
user functions in ``source_cases.py``), is differentiated by
``engine="source"`` in both modes and compared with central finite
differences and with the trace engine at the same points (on a ``*_ref``
twin where the trace engine cannot run the same text). Then: custom rules
are used, one generated derivative serves every path, seed 000's programs
read one line per line, subscripted assignments leave the caller's arrays
alone, and an index array argument is a run-time index.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import aval_of, verify
from wengert.core.pytree import flatten
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify

import source_cases as C
from checks import (AD_VS_AD_RTOL_F64, EXACT_RTOL_F64, HESSIAN_RTOL_F64, PROGRAM_RTOL_F64,
                    assert_close, fd_jacobian, fd_jvp, jacobian_matrix, random_like)
from source_corpus import A23, CASES, CASE_IDS, SCALAR_CASES, SCALAR_IDS, X3, X4, X4_SMALL


def _flat(tree):
    leaves, _ = flatten(tree)
    return np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in leaves])


def _fd_jacobian(case):
    """Central differences of the plain Python function: (out size) x (in size)."""
    return fd_jacobian(case.plain(), case.dyn(case.fresh()))


def _out_avals(case):
    return [aval_of(o) for o in flatten(case.fn(*case.fresh()))[0]]


def _in_avals(case):
    return [aval_of(x) for x in case.dyn(case.args)]


def _assert_unchanged(args, case):
    """Nothing the caller holds was written (functional updates)."""
    for a, b in zip(args, case.args):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="an argument was written in place")


# --- every construct: values, both modes, against FD and the trace engine -------------
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_program_value_equals_python(case):
    want = case.fn(*case.fresh())
    args = case.fresh()
    prog = verify(wg.make_program(case.fn, *args, engine="source"))
    got = interpret(prog, *case.dyn(args))
    assert_close(got, flatten(want)[0], EXACT_RTOL_F64, what=f"{case.id} value")
    _assert_unchanged(args, case)


@pytest.mark.parametrize("case", SCALAR_CASES, ids=SCALAR_IDS)
def test_grad(case):
    args = case.fresh()
    g = wg.grad(case.fn, case.argnums, engine="source")(*args)
    _assert_unchanged(args, case)
    assert_close(_flat(g), _fd_jacobian(case)[0], PROGRAM_RTOL_F64, what=f"{case.id} grad vs FD")
    want = wg.grad(case.traced, case.argnums, engine="trace")(*case.fresh())
    assert_close(g, want, AD_VS_AD_RTOL_F64, what=f"{case.id} grad vs trace engine")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_vjp(case):
    args = case.fresh()
    out, pullback = wg.vjp(case.bound(case.fn), *case.dyn(args), engine="source")
    assert_close(out, case.fn(*case.fresh()), EXACT_RTOL_F64, what=f"{case.id} value")
    ct = random_like(out, np.random.default_rng(7))
    got = pullback(ct)
    _assert_unchanged(args, case)
    assert_close(_flat(got), _flat(ct) @ _fd_jacobian(case), PROGRAM_RTOL_F64,
                 what=f"{case.id} vjp vs FD")
    _, pullback_t = wg.vjp(case.bound(case.traced), *case.dyn(case.fresh()), engine="trace")
    assert_close(got, pullback_t(ct), AD_VS_AD_RTOL_F64, what=f"{case.id} vjp vs trace engine")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_jvp(case):
    args = case.fresh()
    dyn = case.dyn(args)
    tangents = random_like(dyn, np.random.default_rng(11))
    out, t_out = wg.jvp(case.bound(case.fn), dyn, tangents, engine="source")
    _assert_unchanged(args, case)
    assert_close(out, case.fn(*case.fresh()), EXACT_RTOL_F64, what=f"{case.id} value")
    want = fd_jvp(case.plain(), case.dyn(case.fresh()), tangents)
    assert_close(t_out, want, PROGRAM_RTOL_F64, what=f"{case.id} jvp vs FD")
    _, t_trace = wg.jvp(case.bound(case.traced), case.dyn(case.fresh()), tangents,
                        engine="trace")
    assert_close(t_out, t_trace, AD_VS_AD_RTOL_F64, what=f"{case.id} jvp vs trace engine")


@pytest.mark.parametrize("how", ["jacfwd", "jacrev"], ids=["jacfwd", "jacrev"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_jacobian(case, how):
    jac = getattr(wg, how)
    args = case.fresh()
    got = jac(case.fn, case.argnums, engine="source")(*args)
    _assert_unchanged(args, case)
    dense = jacobian_matrix(got, _out_avals(case), _in_avals(case))
    assert_close(dense, _fd_jacobian(case), PROGRAM_RTOL_F64, what=f"{case.id} {how} vs FD")
    want = jac(case.traced, case.argnums, engine="trace")(*case.fresh())
    assert_close(got, want, AD_VS_AD_RTOL_F64, what=f"{case.id} {how} vs trace engine")


# loops whose stored values vary in length between iterations (a while loop,
# break or return inside another loop) cannot take a batch axis: their
# Hessian is one evaluation per basis vector instead of one batched pass
@pytest.mark.parametrize("case", SCALAR_CASES, ids=SCALAR_IDS)
def test_hessian(case):
    args = case.fresh()
    h = wg.hessian(case.fn, case.argnums, engine="source")
    got = h(*args)
    assert isinstance(h.source, str)        # generated code, not a fallback to tracing
    _assert_unchanged(args, case)
    dense = jacobian_matrix(got, _in_avals(case), _in_avals(case))
    grad_t = wg.grad(case.bound(case.traced), tuple(range(len(case.nums))), engine="trace")
    want = fd_jacobian(grad_t, case.dyn(case.fresh()))
    assert_close(dense, want, HESSIAN_RTOL_F64, what=f"{case.id} hessian vs FD of the gradient")
    want = wg.hessian(case.traced, case.argnums, engine="trace")(*case.fresh())
    assert_close(got, want, AD_VS_AD_RTOL_F64, what=f"{case.id} hessian vs trace engine")


# --- custom rules: the source engine uses them ---------------------------------------
def test_custom_jvp_rule_is_used_in_both_modes():
    x = X3
    rule = 2.0 * np.cos(x) * x + np.sin(x)       # the rule's derivative, twice the true one
    true = np.cos(x) * x + np.sin(x)
    g = wg.grad(C.custom_jvp_user, engine="source")(x)
    assert_close(g, rule, EXACT_RTOL_F64, what="grad follows the rule")
    assert not np.allclose(g, true)
    t = np.array([0.5, -1.0, 2.0])
    out, t_out = wg.jvp(C.custom_jvp_user, (x,), (t,), engine="source")
    assert_close(out, np.sum(np.sin(x) * x), EXACT_RTOL_F64)
    assert_close(t_out, rule @ t, EXACT_RTOL_F64, what="jvp follows the rule")
    assert_close(wg.jacfwd(C.custom_jvp_user, engine="source")(x), rule, EXACT_RTOL_F64)
    assert_close(wg.jacrev(C.custom_jvp_user, engine="source")(x), rule, EXACT_RTOL_F64)
    assert_close(g, wg.grad(C.custom_jvp_user, engine="trace")(x), AD_VS_AD_RTOL_F64)
    assert_close(t_out, wg.jvp(C.custom_jvp_user, (x,), (t,), engine="trace")[1],
                 AD_VS_AD_RTOL_F64)


def test_custom_vjp_rule_is_used_in_reverse_mode():
    x = X3
    rule = 30.0 * x * x + 1.0                    # bwd: ten times the true derivative
    true = 3.0 * x * x + 1.0                     # forward mode differentiates the body
    g = wg.grad(C.custom_vjp_user, engine="source")(x)
    assert_close(g, rule, EXACT_RTOL_F64, what="grad follows bwd")
    assert_close(wg.jacrev(C.custom_vjp_user, engine="source")(x), rule, EXACT_RTOL_F64)
    _, pullback = wg.vjp(C.custom_vjp_user, x, engine="source")
    assert_close(pullback(2.0)[0], 2.0 * rule, EXACT_RTOL_F64)
    t = np.array([0.5, -1.0, 2.0])
    _, t_out = wg.jvp(C.custom_vjp_user, (x,), (t,), engine="source")
    assert_close(t_out, true @ t, EXACT_RTOL_F64, what="jvp differentiates the body")
    assert_close(wg.jacfwd(C.custom_vjp_user, engine="source")(x), true, EXACT_RTOL_F64)
    assert_close(g, wg.grad(C.custom_vjp_user, engine="trace")(x), AD_VS_AD_RTOL_F64)


# --- one derivative, every path -------------------------------------------------------
@pytest.mark.parametrize("fn, points", [
    (C.if_traced, [3.0 * X3 + 1.0, X3, -3.0 * X3 - 1.0]),
    (C.while_newton, [2.0, 50.0, 0.3]),
    (C.break_in_for, [X4, X4_SMALL]),
], ids=["if-elif-else", "while-trip-counts", "break-or-not"])
def test_one_generated_derivative_serves_every_path(fn, points):
    g = wg.grad(fn, engine="source")
    sources = []
    for x in points:
        got = g(x)
        sources.append(g.source)
        assert_close(got, fd_jacobian(fn, (x,))[0].reshape(np.shape(x)), PROGRAM_RTOL_F64)
    assert all(s == sources[0] for s in sources)


# --- seed 000: one line per line -------------------------------------------------------
def test_seed000_program_is_one_equation_per_line():
    prog = verify(wg.make_program(C.seed000, 2.0, 3.0, engine="source"))
    # p = 7*x; r = 1/y; q = (p*x)*5; v = ((2*p)*q) + (3*r)
    assert [e.prim.name for e in prog.eqns] == ["mul", "div", "mul", "mul", "mul", "mul",
                                                "mul", "add"]
    lines = str(prog).splitlines()
    assert lines[0] == "program seed000(x: f64[], y: f64[]):"
    assert len(lines) == 1 + 8 + 1 and lines[-1].strip() == "return (v)"
    assert lines[1].strip() == "p = mul (7.0, x)"
    assert re.fullmatch(r"q = mul \(\w+, 5\.0\)", lines[4].strip())
    assert re.fullmatch(r"v = add \(\w+, \w+\)", lines[8].strip())
    assert interpret(prog, 2.0, 3.0)[0] == C.seed000(2.0, 3.0)


def test_seed000_jvp_program_interleaves_tangent_lines():
    prog = wg.make_program(C.seed000, 2.0, 3.0, engine="source")
    fwd = verify(simplify(jvp_program(prog)))
    # which equations depend on the tangent inputs
    tangent = {id(v) for v in fwd.inputs[2:]}
    is_tangent = []
    for e in fwd.eqns:
        dep = any(id(x) in tangent for x in e.inputs)
        if dep:
            tangent.update(id(v) for v in e.outputs)
        is_tangent.append(dep)
    first = is_tangent.index(True)
    assert first == 1                                # d_p right after p
    assert is_tangent[first:].count(False) >= 7      # primal lines keep coming after it
    defs = [line.strip().split(" = ")[0] for line in str(fwd).splitlines()[1:-1]]
    for name in ("p", "q", "v"):
        assert defs.index("d_" + name) == defs.index(name) + 1, defs
    assert defs[-2:] == ["v", "d_v"]
    v, dv = interpret(fwd, 2.0, 3.0, 1.0, 0.0)
    assert v == C.seed000(2.0, 3.0)
    assert dv == pytest.approx(1470 * 4.0, rel=1e-14)           # d/dx 490 x^3 + 3/y
    assert interpret(fwd, 2.0, 3.0, 0.0, 1.0)[1] == pytest.approx(-3 / 9.0, rel=1e-14)


# --- functional updates ------------------------------------------------------------
@pytest.mark.parametrize("fn, ref, x", [
    (C.setitem_loop, C.setitem_loop_ref, X3),
    (C.aug_setitem_2d, C.aug_setitem_2d_ref, A23),
    (C.slice_setitem, C.slice_setitem_ref, X4),
], ids=["x[i]=v", "x[i,j]+=v", "x[a:b]=v"])
def test_subscripted_assignment_leaves_callers_arrays_alone(fn, ref, x):
    held = np.array(x, copy=True)
    want_value = fn(np.array(x, copy=True))        # plain Python writes its argument...
    prog = wg.make_program(fn, held, engine="source")
    assert interpret(prog, held)[0] == pytest.approx(want_value, rel=1e-14)
    g = wg.grad(fn, engine="source")(held)
    out, t = wg.jvp(fn, (held,), (np.ones_like(held),), engine="source")
    _, pullback = wg.vjp(fn, held, engine="source")
    h = wg.hessian(fn, engine="source")(held)
    np.testing.assert_array_equal(held, x)          # ...the source engine never does
    assert out == pytest.approx(want_value, rel=1e-14)
    assert_close(g, wg.grad(ref, engine="trace")(x), AD_VS_AD_RTOL_F64)
    assert_close(pullback(1.0)[0], g, EXACT_RTOL_F64)
    assert_close(t, np.sum(g), EXACT_RTOL_F64)
    assert_close(h, wg.hessian(ref, engine="trace")(x), AD_VS_AD_RTOL_F64)


@pytest.mark.parametrize("idx", [np.array([0, 2, 2]), np.array([1]), np.array([], dtype=np.int64)],
                         ids=["repeated", "one", "empty"])
def test_index_array_argument_is_a_runtime_index(idx):
    # the index array is an argument, not a constant: each call's own values are used
    x = np.array([0.3, -0.7, 1.1])
    g = wg.grad(C.gather_by_index_array, engine="source")
    want = fd_jacobian(lambda x: C.gather_by_index_array(x.copy(), idx), (x,))[0]
    assert_close(g(x, idx), want, PROGRAM_RTOL_F64, what="source grad vs FD")
    assert_close(g(x, idx), wg.grad(C.gather_by_index_array_traced, engine="trace")(x, idx),
                 AD_VS_AD_RTOL_F64, what="source vs trace")
    h = wg.hessian(C.gather_by_index_array, engine="source")(x, idx)
    assert_close(h, wg.hessian(C.gather_by_index_array_traced, engine="trace")(x, idx),
                 AD_VS_AD_RTOL_F64, what="hessian, source vs trace")
