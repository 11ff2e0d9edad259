"""The source engine (DESIGN.md, "What the source engine accepts").

Every accepted construct, alone and combined (the user functions are in
``source_cases.py``), is differentiated by ``engine="source"`` in both modes
and compared with central finite differences and with the trace engine at
the same points (on a ``*_ref`` twin where the trace engine cannot run the
same text). Then: integers and shapes stay Python values, the generated code
runs on its own and keeps the user's loops and names, seed 000's programs read
one line per line, and everything outside the language raises
``UnsupportedSyntax`` where it is (and falls back under ``engine="auto"``).
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import aval_of, sub_programs, verify
from wengert.core.pytree import flatten
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify

import source_cases as C
from checks import (AD_VS_AD_RTOL_F64, EXACT_RTOL_F64, HESSIAN_RTOL_F64, PROGRAM_RTOL_F64,
                    assert_close, fd_jacobian, fd_jvp, jacobian_matrix, random_like)

X3 = np.array([0.3, -0.8, 0.6])
Y3 = np.array([0.7, 0.4, -0.9])
A23 = np.array([[0.3, -0.5, 0.7], [0.2, 0.9, -0.4]])
B23 = A23 * 0.5 + 0.1
X4 = np.array([0.5, 0.9, 1.2, 0.3])         # the running sum of squares passes 1 at i = 2
X4_SMALL = np.array([0.1, 0.2, 0.3, 0.25])  # ... and never does


@dataclass(frozen=True)
class Case:
    """``fn(*args)``, differentiated in ``argnums`` (leading positions); the
    trailing arguments are Python values (ints, strings) that stay fixed.
    ``ref`` is what the trace engine runs (default ``fn``)."""
    id: str
    fn: Callable
    args: tuple
    argnums: Any = 0
    ref: Callable | None = None

    @property
    def nums(self):
        return (self.argnums,) if isinstance(self.argnums, int) else tuple(self.argnums)

    @property
    def traced(self):
        return self.ref or self.fn

    def fresh(self):
        """The arguments, arrays copied (a plain call of ``x[i] = v`` code writes them)."""
        return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a
                     for a in self.args)

    def dyn(self, args):
        return tuple(args[i] for i in self.nums)

    def bound(self, fn):
        """``fn`` of the differentiated arguments only (a user's closure, in
        source_cases, so the source engine can read it)."""
        static = self.args[len(self.nums):]
        return C.with_static(fn, *static) if static else fn

    def plain(self):
        """The plain Python function of the differentiated arguments, called
        on copies: ``x[i] = v`` code writes its arguments, and finite
        differences reuse theirs."""
        fn = self.bound(self.fn)
        return lambda *xs: fn(*[np.array(x, copy=True) for x in xs])


CASES = [
    # arguments, assignment, arithmetic
    Case("seed000", C.seed000, (2.0, 3.0), (0, 1)),
    Case("default-args", C.default_args, (X3,)),
    Case("default-args-given", C.default_args, (X3, 0.5, 2), (0, 1)),
    Case("tuple-unpack", C.tuple_unpack, (X3, Y3), (0, 1)),
    Case("aug-assign", C.aug_assign, (X3,)),
    Case("arithmetic", C.arithmetic, (np.abs(X3) + 0.5, X3), (0, 1)),
    Case("comparisons", C.comparisons, (X3,)),
    Case("bool-ops-true", C.bool_ops, (X3,)),
    Case("bool-ops-not-big", C.bool_ops, (-X3,)),
    Case("bool-ops-false", C.bool_ops, (np.array([6.0, -0.5, 0.2]),)),
    Case("ifexp-pos", C.conditional_expr, (X3,)),
    Case("ifexp-neg", C.conditional_expr, (-X3,)),
    Case("chained-compare-in", C.chained_compare, (X3,)),
    Case("chained-compare-out", C.chained_compare, (2.0 * X3 + 1.0,)),
    # calls
    Case("numpy-calls", C.numpy_calls, (X3,)),
    Case("math-calls", C.math_calls, (0.4,), ref=C.math_calls_ref),
    Case("helper-calls", C.helper_calls, (X3,)),
    Case("recursion-n3", C.recursion, (X3, 3)),
    Case("recursion-n0", C.recursion, (X3, 0)),
    # if / elif / else
    Case("if-traced-first", C.if_traced, (3.0 * X3 + 1.0,)),
    Case("if-traced-elif", C.if_traced, (X3,)),
    Case("if-traced-else", C.if_traced, (-3.0 * X3 - 1.0,)),
    Case("if-python-sin", C.if_python, (X3, "sin")),
    Case("if-python-cube", C.if_python, (X3, "cube")),
    Case("if-python-else", C.if_python, (X3, "id")),
    Case("if-nested-outer", C.if_nested, (-X3,)),
    Case("if-nested-inner-true", C.if_nested, (3.0 * X3,)),
    Case("if-nested-inner-false", C.if_nested, (X3,)),
    Case("if-assigns-outer-value", C.if_assigns_outer_value, (X3,)),
    Case("if-no-else-skip", C.if_no_else, (X3,)),
    Case("if-no-else-take", C.if_no_else, (-X3,)),
    # loops
    Case("for-range-n", C.for_range_n, (X3, 4)),
    Case("for-range-0", C.for_range_n, (X3, 0)),
    Case("for-range-len", C.for_range_len, (X3,)),
    Case("for-array", C.for_over_array, (A23,)),
    Case("for-list", C.for_over_list, (X3,)),
    Case("for-enumerate", C.for_enumerate, (X3,)),
    Case("for-enumerate-start", C.for_enumerate_start, (X3,)),
    Case("for-enumerate-list", C.for_enumerate_list, (X3,)),
    Case("for-zip", C.for_zip, (X3, Y3), (0, 1)),
    Case("while-newton", C.while_newton, (2.0,)),
    Case("while-newton-long", C.while_newton, (50.0,)),
    Case("while-traced-trip", C.traced_trip, (1.3,)),
    Case("while-break-late", C.while_with_break, (0.3,)),
    Case("while-break-early", C.while_with_break, (1.1,)),
    Case("break-taken", C.break_in_for, (X4,)),
    Case("break-not-taken", C.break_in_for, (X4_SMALL,)),
    Case("continue", C.continue_in_for, (X3,)),
    Case("return-in-if-early", C.early_return_if, (3.0 * X3,)),
    Case("return-in-if-late", C.early_return_if, (X3,)),
    Case("return-in-loop-early", C.early_return_loop, (X4,)),
    Case("return-in-loop-late", C.early_return_loop, (X4_SMALL,)),
    Case("break-inner-same-trips", C.break_inner,
         (np.array([[0.3, 0.5, -0.7], [0.6, 0.9, -0.4]]),)),
    Case("break-inner-ragged", C.break_inner, (A23,)),
    Case("return-in-nested-first-row", C.return_in_nested_loops, (np.abs(A23) + 0.2,)),
    Case("return-in-nested-second-row", C.return_in_nested_loops,
         (np.array([[0.3, 0.5, 0.4], [0.6, 0.9, 0.4]]),)),
    Case("return-in-nested-late", C.return_in_nested_loops, (A23 * 0.3,)),
    Case("while-in-for-same-trips", C.sqrt_each, (np.array([2.0, 2.1, 1.9]),)),
    Case("while-in-for-ragged", C.sqrt_each, (np.array([2.0, 50.0, 0.3]),)),
    Case("nested-loops", C.nested_loops, (A23,)),
    Case("loop-with-branch", C.loop_with_branch, (X3,)),
    Case("combined-python", C.combined, (X3, 3)),
    Case("combined-structured", C.combined_structured,
         (np.array([0.9, 0.1, -0.8, 0.7]), np.array([1.5, 0.4, -0.9, -2.5])), (0, 1)),
    # subscripts, updates, lists
    Case("read-subscripts", C.read_subscripts, (A23,)),
    Case("setitem-loop", C.setitem_loop, (X3,), ref=C.setitem_loop_ref),
    Case("aug-setitem-2d", C.aug_setitem_2d, (A23,), ref=C.aug_setitem_2d_ref),
    Case("slice-setitem", C.slice_setitem, (X4,), ref=C.slice_setitem_ref),
    Case("append-stack", C.append_stack, (X3,)),
    Case("append-sum", C.append_sum, (X3,)),
    # attributes, closures, comprehensions, builtins
    Case("attrs-methods", C.attrs_methods, (A23, B23), (0, 1)),
    Case("nested-def", C.nested_def, (X3,)),
    Case("lambda-direct", C.lambda_direct, (X3,)),
    Case("nested-def-fori", C.nested_fori, (X3,)),
    Case("lambda-fori", C.lambda_fori, (X3,)),
    Case("comprehensions", C.comprehensions, (X3,)),
    Case("comprehensions-zip-enumerate", C.comprehensions_zip_enumerate, (X3, Y3), (0, 1)),
    Case("builtins", C.builtins_mix, (X3,), ref=C.builtins_mix_ref),
    Case("float-of-traced", C.float_of_traced, (0.4,), ref=C.float_of_traced_ref),
    # integers stay Python
    Case("python-counter", C.python_counter, (X3,)),
    Case("shapes-python", C.shapes_stay_python, (X3,)),
    Case("loop-trip", C.loop_trip, (X3, 5)),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def _is_scalar(case):
    out = case.fn(*case.fresh())
    return not isinstance(out, (tuple, list, dict)) and np.ndim(out) == 0


SCALAR_CASES = [c for c in CASES if _is_scalar(c)]
SCALAR_IDS = [c.id for c in SCALAR_CASES]


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


# --- structure: control flow stays structured, integers stay Python --------------------
def _structure(prog):
    """Structured equations, nested: ``for_loop{cond{...}}``."""
    out = []
    for e in prog.eqns:
        subs = list(sub_programs(e))
        if subs:
            inner = [s for sub in subs for s in _structure(sub)]
            out.append(e.prim.name + ("{" + ",".join(inner) + "}" if inner else ""))
    return out


@pytest.mark.parametrize("fn, args, want", [
    (C.if_traced, (X3,), ["cond{cond}"]),
    (C.for_range_n, (X3, 4), ["for_loop"]),
    (C.for_range_len, (X3,), ["for_loop"]),
    (C.for_over_array, (A23,), ["for_loop"]),
    (C.for_enumerate, (X3,), ["for_loop"]),
    (C.for_zip, (X3, Y3), ["for_loop"]),
    (C.while_newton, (2.0,), ["while_loop"]),
    (C.break_in_for, (X4,), ["while_loop"]),
    (C.nested_loops, (A23,), ["for_loop{for_loop}"]),
    (C.loop_with_branch, (X3,), ["for_loop{cond}"]),
    (C.for_over_list, (X3,), []),
], ids=["if-elif", "range-n", "range-len", "array", "enumerate", "zip", "while", "break",
        "nested", "loop-with-branch", "python-list"])
def test_control_flow_stays_structured(fn, args, want):
    # an entry without braces names the structured equation only, not its insides
    got = _structure(verify(wg.make_program(fn, *args, engine="source")))
    assert [g if "{" in w else g.split("{")[0] for g, w in zip(got, want)] == want, got
    assert len(got) == len(want), got


def test_python_loop_counter_is_not_recorded():
    # for c in [0.5, 1.0, 1.5]: k = k + 2 -- the loop runs as Python, k stays an int
    prog = verify(wg.make_program(C.python_counter, X3, engine="source"))
    assert _structure(prog) == []
    for e in prog.eqns:
        for v in e.outputs:
            assert v.aval.dtype == np.float64, f"an integer was recorded: {e}"
    adds = [e for e in prog.eqns if e.prim.name == "add"]
    assert [e.inputs[1].val for e in adds] == [2, 4, 6]
    assert all(type(e.inputs[1].val) is int for e in adds)
    assert prog.eqns[-1].prim.name == "mul" and prog.eqns[-1].inputs[1].val == 6
    assert interpret(prog, X3)[0] == pytest.approx(C.python_counter(X3), rel=1e-14)


def test_shapes_and_lengths_are_python_values():
    # n = x.shape[0]; m = n * 2 + len(x) - x.ndim: no equation, m is the literal 8
    prog = verify(wg.make_program(C.shapes_stay_python, X3, engine="source"))
    assert [e.prim.name for e in prog.eqns] == ["reduce_sum", "mul"]
    assert prog.eqns[1].inputs[1].val == 8 and type(prog.eqns[1].inputs[1].val) is int


@pytest.mark.parametrize("fn, args", [(C.loop_trip, (X3, 5)), (C.for_range_len, (X3,))],
                         ids=["range-n", "range-len"])
def test_structured_loop_counter_is_an_integer_input(fn, args):
    prog = verify(wg.make_program(fn, *args, engine="source"))
    loops = [e for e in prog.eqns if e.prim.name == "for_loop"]
    assert len(loops) == 1
    body = loops[0].params["body"]
    assert body.inputs[0].aval.shape == () and body.inputs[0].aval.dtype == np.int64
    assert all(v.aval.dtype == np.float64 for v in body.inputs[1:])
    assert loops[0].inputs[0].val == (len(X3) if fn is C.for_range_len else 5)


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


# --- the generated code ---------------------------------------------------------------
def _header_names(source):
    head = source.split("\ndef ", 1)[0]
    return dict(re.findall(r"^#   (\w+) = (.*)$", head, re.M))


def _run_copied_source(source, bound, args):
    """exec the text with numpy and the names its header lists, nothing else."""
    names = _header_names(source)
    ns = {}
    for name, what in names.items():
        ns[name] = np if what == "numpy" else bound[name]
    exec(compile(source, "<copied>", "exec"), ns)
    fname, = re.findall(r"^def (\w+)\(", source, re.M)
    return ns[fname](*args)


GENERATED_IDS = ["seed000", "loop-trip", "while-newton", "if-no-else-take", "setitem-loop",
                 "read-subscripts", "nested-def-fori", "for-zip", "break-taken", "math-calls"]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in GENERATED_IDS],
                         ids=[c.id for c in CASES if c.id in GENERATED_IDS])
def test_generated_source_runs_on_its_own(case):
    g = wg.grad(case.fn, case.argnums, engine="source")
    want = g(*case.fresh())
    source = g.source
    assert isinstance(source, str)
    tree = ast.parse(source)
    assert [type(s) for s in tree.body] == [ast.FunctionDef]
    generated = g.last.fn.fn            # the exec'd function: its globals are the bound names
    bound = generated.__globals__
    names = _header_names(source)
    assert set(bound) - {"__builtins__", generated.__name__} == set(names)
    assert all(what != "numpy" or bound[n] is np for n, what in names.items())
    args = case.fresh()
    # the code's parameters: the arrays and floats, then the Python ints (trip
    # counts, lengths), which it reads by name
    ints = tuple(a for a in args[len(case.nums):] if type(a) is int)
    got = _run_copied_source(source, bound, case.dyn(args) + ints)
    _assert_unchanged(args, case)
    assert_close(list(got), flatten(want)[0], EXACT_RTOL_F64, what=f"{case.id} copied code")


def test_generated_source_keeps_the_users_names():
    g = wg.grad(C.seed000, (0, 1), engine="source")
    g(2.0, 3.0)
    for name in ("p", "q"):
        assert re.search(rf"^    {name} = ", g.source, re.M), g.source
    g = wg.grad(C.while_newton, engine="source")
    g(2.0)
    # the loop's carry is the user's y, and its new value is assigned to it
    assert re.search(r"^\s+y(, \w+)* = y_1\b", g.source, re.M), g.source
    assert re.search(r"^\s+y_1 = ", g.source, re.M), g.source


@pytest.mark.parametrize("fn, small, large, loop", [
    (C.loop_trip, (X3, 3), (X3, 40), "for"),
    (C.for_range_len, (X3,), (np.linspace(-1.0, 1.0, 30),), "for"),
    (C.for_zip, (X3, Y3), (np.linspace(-1.0, 1.0, 30), np.linspace(2.0, 0.0, 30)), "for"),
    (C.while_newton, (2.0,), (50.0,), "while"),
], ids=["range-n", "range-len", "zip", "while"])
def test_generated_loops_are_loops_not_unrolled(fn, small, large, loop):
    texts = []
    for args in (small, large):
        g = wg.grad(fn, engine="source")
        got = g(*args)
        fd = fd_jacobian(lambda x: fn(x, *args[1:]), args[:1])
        assert_close(got, fd[0].reshape(np.shape(args[0])), PROGRAM_RTOL_F64)
        texts.append(g.source)
    # ten times the trips, the same lines: only written counts and shapes differ
    assert len(texts[0].splitlines()) == len(texts[1].splitlines())
    assert len(texts[1]) < 1.1 * len(texts[0])
    assert re.search(rf"^\s+{loop} ", texts[1], re.M), texts[1]


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


# --- outside the language ---------------------------------------------------------------
UNSUPPORTED = [
    (C.uses_try, "try", "try:"),
    (C.uses_with, "with", "with "),
    (C.uses_raise, "raise", "raise "),
    (C.uses_global, "global", "global "),
    (C.uses_nonlocal, "nonlocal", "nonlocal "),
    (C.uses_del, "delete", "del "),
    (C.uses_import, "import", "import "),
    (C.uses_class, "class definition", "class "),
    (C.uses_yield, "yield", "yield "),
    (C.uses_async, "async def", "async def "),
    (C.uses_walrus, "assignment expression (:=)", "y := "),
    (C.uses_set, "set", "{1, 2, 2}"),
    (C.uses_attribute_store, "attribute assignment", "box.v = "),
    (C.uses_for_else, "for-else", "for "),
    (C.uses_while_else, "while-else", "while "),
    (C.uses_decorated_def, "decorated nested function", "def inner"),
    (C.uses_lambda_continued, "a lambda inside an expression that spans several lines", "lambda"),
]
UNSUPPORTED_IDS = [fn.__name__.removeprefix("uses_").replace("<lambda>", "lambda_continued")
                   for fn, _, _ in UNSUPPORTED]


def _marked_line(fn):
    """The file line of ``fn`` marked ``# unsupported``."""
    lines, first = inspect.getsourcelines(fn)
    k, = [k for k, line in enumerate(lines) if "# unsupported" in line]
    return first + k


@pytest.mark.parametrize("fn, construct, token", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_unsupported_construct_is_located(fn, construct, token):
    line = _marked_line(fn)
    for run in (lambda: wg.grad(fn, engine="source")(0.4),
                lambda: wg.jvp(fn, (0.4,), (1.0,), engine="source"),
                lambda: wg.make_program(fn, 0.4, engine="source")):
        with pytest.raises(wg.UnsupportedSyntax) as info:
            run()
        err = info.value
        assert err.construct == construct
        assert os.path.samefile(err.filename, C.__file__)
        assert err.lineno == line
        text = open(C.__file__).read().splitlines()[line - 1]
        assert text[err.col - 1:].startswith(token), (text, err.col)
        assert f"source_cases.py:{line}:{err.col}: {construct} is not supported" in str(err)
        assert "engine='trace'" in str(err)


@pytest.mark.parametrize("fn, construct, token", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_auto_engine_falls_back_with_one_warning(fn, construct, token):
    x = 0.4
    want = fd_jvp(fn, (x,), (1.0,))
    import wengert.api.fallback as api_fallback
    api_fallback.WARNED.discard(api_fallback.fallback_key(fn))    # one warning per function and process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g1 = wg.grad(fn)(x)
        g2 = wg.grad(fn)(x)
        _, t = wg.jvp(fn, (x,), (1.0,))
        _, pullback = wg.vjp(fn, x)
        ct = pullback(1.0)[0]
    user = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(user) == 1, [str(w.message) for w in user]
    message = str(user[0].message)
    assert f"uses {construct} at " in message and f"source_cases.py:{_marked_line(fn)}" in message
    assert "trace engine" in message
    for got in (g1, g2, t, ct):
        assert_close(got, want, PROGRAM_RTOL_F64, what=f"{fn.__name__} after fallback")
    assert_close(g1, wg.grad(fn, engine="trace")(x), EXACT_RTOL_F64)


@pytest.mark.parametrize("x", [X3, -X3], ids=["branch-taken", "branch-skipped"])
def test_variable_assigned_in_one_traced_branch_only(x):
    for run in (lambda: wg.grad(C.one_branch_only, engine="source")(x),
                lambda: wg.jvp(C.one_branch_only, (x,), (x,), engine="source")):
        with pytest.raises(wg.UnsupportedSyntax,
                           match=r"variable 'y' is used where it may be unassigned.*"
                                 r"assign it before the branch"):
            run()


@pytest.mark.parametrize("engine", ["source", "auto"])
def test_jvp_and_vjp_of_a_source_gradient_compose_the_transforms(engine):
    # jvp(grad(f)) and vjp(grad(f)) are Hessian-vector products: against the trace engine's
    x = np.array([0.3, -0.5, 0.9])
    v = np.array([1.0, 0.5, -2.0])
    g = wg.grad(C.for_enumerate, engine=engine)
    hv = wg.hessian(C.for_enumerate, engine="trace")(x) @ v
    _, t = wg.jvp(g, (x,), (v,), engine=engine)
    _, pullback = wg.vjp(g, x, engine=engine)
    assert_close(t, hv, AD_VS_AD_RTOL_F64, what="jvp of grad")
    assert_close(pullback(v)[0], hv, AD_VS_AD_RTOL_F64, what="vjp of grad (symmetric Hessian)")


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
