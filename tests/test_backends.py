"""Backends: the NumPy interpreter and pycodegen compute exactly the same
arrays (same values, shapes and dtypes) on

* every primitive of the registry, on the operands of its cases.py entries,
  as program inputs and as literals;
* the corpus of cases.py, traced, and its jvp, vjp and simplified programs;
* structured control flow: fori_loop (n = 0 included, reverse loops from
  vjp, nested loops), cond with two and three branches, while_loop;

and the generated text is fixed: goldens for seed 000 and a small loop, the
listing's names, literals that keep their dtype, linecache for tracebacks.
"""
from __future__ import annotations

import inspect
import re
import traceback
import warnings
import zlib

import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.lower import lower
from wengert.api.backend import python_function
from wengert.backends.python.codegen import CodegenError, GeneratedFunction
from wengert.lower import share_condition_values
from wengert.demo import seed000
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, aval_of
from wengert.primitives import PRIMITIVES
from wengert.control import cond, for_loop, while_loop
from wengert.core.printing import Namer, walk
from wengert.core.pytree import flatten
from wengert.core.staging import stage
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

from cases import API, CORPUS, SPECS

F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
X = np.array([0.3, -0.2, 0.9])
A = np.array([1.1, 0.7, -0.4])


def assert_same(prog, args):
    """python_function(prog)(*args) == interpret(prog, *args), array for array."""
    want = interpret(prog, *args)
    gen = python_function(prog)
    got = gen(*args)
    assert isinstance(gen, GeneratedFunction) and gen.program is prog
    assert isinstance(got, tuple) and len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"output {k} of\n{gen.source}"
        assert np.shape(g) == np.shape(w), where
        assert np.asarray(g).dtype == np.asarray(w).dtype, where
        np.testing.assert_array_equal(g, w, err_msg=where)
    return gen, got


def random_inputs(avals, rng):
    """Inputs of these avals: Python floats for weak scalars, else arrays."""
    out = []
    for a in avals:
        if a.dtype.kind in "fc":
            x = rng.standard_normal(a.shape)
            out.append(float(x) if a.weak and a.shape == () else np.asarray(x, a.dtype))
        elif a.dtype.kind == "b":
            out.append(np.asarray(rng.random(a.shape) < 0.5))
        else:
            out.append(np.asarray(rng.integers(0, 3, a.shape), a.dtype))
    return out


def _rng(*key):
    return np.random.default_rng(zlib.crc32(":".join(map(str, key)).encode()))


# --- every primitive ----------------------------------------------------------
def one_equation(prim, operands, params, as_literals):
    """``outs = prim[params] (operands)``, the operands as inputs or literals."""
    ins = [Lit(x) if as_literals else Var(aval_of(x)) for x in operands]
    out_avals = prim.abstract_eval(*[aval_of(x) for x in operands], **params)
    outs = [Var(a) for a in (out_avals if prim.multiple_results else [out_avals])]
    inputs = [] if as_literals else ins
    return Program(inputs, [Eqn(prim, ins, outs, params)], outs, name=prim.name)


TESTED = sorted(n for n in PRIMITIVES if n in SPECS and SPECS[n].mode != API)


@pytest.mark.parametrize("name", TESTED, ids=TESTED)
def test_every_primitive_agrees_with_the_interpreter(name):
    prim, spec = PRIMITIVES[name], SPECS[name]
    assert spec.cases, f"{name}: no cases to run"
    for case in spec.cases:
        operands = case.operands(name)
        for as_literals in (False, True):
            prog = one_equation(prim, operands, case.params, as_literals)
            assert_same(prog, [] if as_literals else operands)


def test_inline_primitives_are_rejected_and_custom_lin_is_an_impl_call():
    x, v = Var(Aval((), F64)), Var(Aval((), F64))
    for name in ("custom_jvp_call", "custom_vjp_call"):
        prog = Program([x], [Eqn(PRIMITIVES[name], [x], [v], {})], [v])
        with pytest.raises(CodegenError, match="inline primitive"):
            python_function(prog)
    lin = PRIMITIVES["custom_lin"]
    params = dict(bwd=lambda *cts: cts, res=(), out_avals=(Aval((), F64),),
                  in_avals=(Aval((), F64),))
    prog = Program([x], [Eqn(lin, [x], [v], params)], [v])
    gen = python_function(prog)
    assert "(v1,) = custom_lin(x0, bwd=c0" in gen.source
    with pytest.raises(wg.NoDerivativeRule):
        interpret(prog, 1.0)
    with pytest.raises(wg.NoDerivativeRule):
        gen(1.0)


def test_dynamic_index_positions_agree():
    """A ``DYN`` position (a loop counter) is filled by an integer operand:
    ``x[:, i]`` in subscript syntax, for reads and for the updates alike."""
    from wengert.primitives.index import DYN
    x, i = Var(Aval((3, 4), F64)), Var(Aval((), I64))
    v = Var(Aval((3,), F64))
    g, a, s = Var(Aval((3,), F64)), Var(Aval((3, 4), F64)), Var(Aval((3, 4), F64))
    eqns = [Eqn(PRIMITIVES["getitem"], [x, i], [g], {"idx": (slice(None), DYN)}),
            Eqn(PRIMITIVES["index_add"], [x, v, i], [a], {"idx": (slice(None), DYN)}),
            Eqn(PRIMITIVES["index_set"], [a, g, i], [s], {"idx": (slice(None), DYN)})]
    prog = Program([x, v, i], eqns, [g, s], name="dyn")
    xv, vv = np.arange(12.0).reshape(3, 4), np.array([0.5, -1.0, 2.0])
    for k in (0, 3, np.int64(2), -1):
        gen, _ = assert_same(prog, [xv, vv, k])
    lines = gen.source.splitlines()
    assert "    v3 = x0[:, x2]" in lines and "    v4[:, x2] += x1" in lines
    # the update's target is dead afterwards: written in place (``lower``),
    # and the result keeps the target's name
    assert "    v4[:, x2] = v3" in lines and "    return (v3, v4)" in lines, gen.source
    assert "DYN" not in gen.source and "PRIMITIVES[" not in gen.source


def test_every_registered_primitive_is_covered_here():
    control = {"cond", "for_loop", "while_loop"}
    # custom_body: generated by the source engine in test_lists_and_escape.py
    custom = {"custom_jvp_call", "custom_vjp_call", "custom_lin", "custom_body"}
    # generated by the source engine in test_checkpoint.py
    checkpointing = {"checkpoint", "checkpoint_lin", "checkpointed_loop", "loop_forward",
                     "loop_lin", "loop_reverse"}
    # generated by the source engine in test_trust.py (globals, random draws)
    outside = {"env_read", "host_call"}
    untested = set(PRIMITIVES) - set(TESTED) - control - custom - checkpointing - outside
    assert not untested, f"no codegen test runs {sorted(untested)}: give them cases.py entries"


# --- the corpus and its transformed programs ------------------------------------
VARIANTS = {
    "traced": lambda p: p,
    "jvp": jvp_program,
    "vjp": vjp_program,
    "simplified": simplify,
    "jvp_simplified": lambda p: simplify(jvp_program(p)),
    "vjp_simplified": lambda p: simplify(vjp_program(p)),
}
NAMES = sorted(CORPUS)


def corpus_program(name, variant):
    """The program and inputs: the corpus arguments for the primal inputs,
    random tangents or cotangents for the rest."""
    case = CORPUS[name]
    leaves = flatten(tuple(case.args))[0]
    prog = VARIANTS[variant](wg.make_program(case.fn, *case.args, engine="trace"))
    extra = random_inputs(prog.in_avals[len(leaves):], _rng(name, variant))
    return prog, list(leaves) + extra


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_corpus_agrees_with_the_interpreter(name, variant):
    prog, args = corpus_program(name, variant)
    assert_same(prog, args)


def test_float32_programs_keep_float32():
    for variant in sorted(VARIANTS):
        prog, args = corpus_program("float32", variant)
        _, got = assert_same(prog, args)
        assert all(np.asarray(g).dtype == F32 for g in got), variant
    # np.float32(0.5) in the user's code stays a float32 literal
    assert "np.float32(0.5)" in python_function(corpus_program("float32", "traced")[0]).source


def test_generated_code_reads_like_numpy():
    src = python_function(corpus_program("indexing", "traced")[0]).source
    assert "x[1:3, ::-1]" in src and "x[np.array([0, 0, 2]), 1]" in src
    src = python_function(corpus_program("mlp_loss", "traced")[0]).source
    assert "np.tanh(" in src and "np.matmul(c0, w1)" in src
    assert "#   c0 = constant f64[5,3]" in src


# --- control flow -------------------------------------------------------------
from test_control import loop_f  # noqa: E402  (the same loop as the control-flow tests)


def loop32_f(n):
    def f(x, a):
        return np.sum(wg.fori_loop(n, lambda i, c: np.sin(c) * a + c * 0.5, x) ** 2)
    return f


def nested_f(x):
    def outer(i, c):
        return wg.fori_loop(2, lambda j, d: np.sin(d) + 0.1 * j, c) * 0.9
    return np.sum(wg.fori_loop(3, outer, x))


LOOP_VARIANTS = ("traced", "jvp", "vjp", "vjp_simplified")


@pytest.mark.parametrize("variant", LOOP_VARIANTS)
@pytest.mark.parametrize("n", [0, 1, 2, 7], ids=lambda n: f"n={n}")
def test_fori_loop_programs_agree(n, variant):
    prog = VARIANTS[variant](wg.make_program(loop_f(n), X, A, engine="trace"))
    args = [X, A] + random_inputs(prog.in_avals[2:], _rng("loop", n, variant))
    gen, _ = assert_same(prog, args)
    assert "for x" in gen.source
    if variant.startswith("vjp"):
        # the transposed loop runs backwards over the stacked residuals
        assert re.search(r"range\(-?\d+, -1, -1\)", gen.source), gen.source
        if n == 0:
            assert "np.empty((0, 3))" in gen.source


def test_nested_and_float32_loops_agree():
    x32, a32 = X.astype(np.float32), A.astype(np.float32)
    progs = [(wg.make_program(nested_f, X, engine="trace"), [X]),
             (wg.make_program(loop32_f(0), x32, a32, engine="trace"), [x32, a32]),
             (wg.make_program(loop32_f(3), x32, a32, engine="trace"), [x32, a32])]
    for prog, args in progs:
        for variant in LOOP_VARIANTS:
            p = VARIANTS[variant](prog)
            extra = random_inputs(p.in_avals[len(args):], _rng("nested", variant))
            gen, got = assert_same(p, args + extra)
            if args[0].dtype == F32:
                assert all(np.asarray(g).dtype == F32 for g in got)
    assert "np.empty((0, 3), np.dtype('float32'))" in python_function(vjp_program(progs[1][0])).source


def _branches(k):
    vec = [Aval((3,), F64)] * 2
    fns = [lambda x, a: [np.sin(x) * a], lambda x, a: [x * x - a], lambda x, a: [np.exp(-x) + a]]
    return [stage(f, vec, name=f"branch{i}") for i, f in enumerate(fns[:k])]


@pytest.mark.parametrize("k", [2, 3], ids=["two_branches", "three_branches"])
def test_cond_programs_agree_on_every_branch(k):
    branches = _branches(k)

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
            extra = random_inputs(p.in_avals[3:], _rng("cond", k, variant))
            assert_same(p, [index, X, A] + extra)


def test_cond_on_a_traced_comparison_agrees():
    branches = _branches(2)

    def f(x, a):
        out, = cond(np.sum(x) > 0.5, branches, x, a)
        return np.sum(out)

    for variant in ("traced", "jvp", "vjp"):
        prog = VARIANTS[variant](wg.make_program(f, X, A, engine="trace"))
        for x in (X, -X):
            extra = random_inputs(prog.in_avals[2:], _rng("cmp", variant))
            assert_same(prog, [x, A] + extra)


def _root(a):
    s = Aval((), F64)
    c = stage(lambda a, y: [np.abs(y * y - a) > 1e-12], [s, s], name="not_converged")
    b = stage(lambda a, y: [(y + a / y) * 0.5], [s, s], name="newton_step")
    y, count = while_loop(c, b, [a], [a])
    return y, count


def test_while_loop_programs_agree_including_zero_iterations():
    prog = wg.make_program(_root, 2.0, engine="trace")
    assert "while True:" in python_function(prog).source
    for variant in ("traced", "jvp", "vjp", "vjp_simplified"):
        p = VARIANTS[variant](prog)
        for a in (2.0, 9.0, 1.0):        # a = 1.0: converged before the first step
            extra = random_inputs(p.in_avals[1:], _rng("while", variant))
            _, got = assert_same(p, [a] + extra)
            assert np.asarray(got[1]).dtype == I64
    # the linear part of a while loop runs over its recorded count (a Var)
    src = python_function(vjp_program(prog)).source
    assert re.search(r"range\(\w+ - 1, -1, -1\)", src), src


def _cube_root(a):
    """Newton's step for a ** (1/3) repeats its condition's y*y*y - a."""
    s = Aval((), F64)
    c = stage(lambda a, y: [np.abs(y * y * y - a) >= 1e-12], [s, s], name="not_converged")
    b = stage(lambda a, y: [y - (y * y * y - a) / (3.0 * y * y)], [s, s], name="cube_step")
    y, count = while_loop(c, b, [a], [a])
    return y


def test_while_body_reads_the_values_its_condition_computed():
    """share_condition_values: the body's y*y, y*y*y and y*y*y - a are the
    condition's, computed once an iteration; the code agrees with the
    interpreter (zero iterations included), and the trip count that only the
    reverse loop reads is a Python int."""
    prog = wg.make_program(_cube_root, 2.0, engine="trace")
    body = next(e for e in prog.eqns if e.prim.name == "while_loop").params["body"]
    shared = share_condition_values(prog)
    new_body = next(e for e in shared.eqns if e.prim.name == "while_loop").params["body"]
    assert len(body.eqns) - len(new_body.eqns) == 3
    for variant in ("traced", "jvp", "vjp", "vjp_simplified"):
        p = VARIANTS[variant](prog)
        for a in (2.0, 27.0, 1.0, -0.5):
            extra = random_inputs(p.in_avals[1:], _rng("cube", variant))
            assert_same(p, [a] + extra)
    src = python_function(simplify(vjp_program(prog), copies=True)).source
    assert len(re.findall(r" - a$", src, re.M)) == 2, src      # cond, reverse-loop recompute
    assert re.search(r"^    \w+ = 0$", src, re.M) and "int64" not in src, src
    assert wg.grad(_cube_root)(2.0) == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-12)


def source_f(x, n):
    s = 0.5
    for i in range(n):
        if s > 1.0:
            s = s + np.sin(x[i])
        else:
            s = s * 2.0 + x[i]
    k = 0
    while s < 100.0:
        s = s * 3.0
        k = k + 1
    return s + k


@pytest.mark.parametrize("n", [0, 2, 4], ids=lambda n: f"n={n}")
def test_source_engine_control_flow_agrees(n):
    """Python if/for/while, kept structured by the source engine."""
    x = np.array([0.5, 1.5, -0.3, 2.0])
    prog = wg.make_program(source_f, x, n, engine="source")
    names = [e.prim.name for e in prog.eqns]
    assert "for_loop" in names and "while_loop" in names
    for variant in ("traced", "jvp", "vjp", "vjp_simplified"):
        p = VARIANTS[variant](prog)
        extra = random_inputs(p.in_avals[1:], _rng("source", n, variant))
        gen, _ = assert_same(p, [x] + extra)
    # the traced if is a Python if on its boolean test, the loops are loops
    assert "while True:" in gen.source and "for " in gen.source
    assert re.search(r"^\s+if v\w*:$", gen.source, re.M)


@pytest.mark.parametrize("variant", ["traced", "jvp", "vjp"])
@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_corpus_through_the_default_engine_agrees(name, variant):
    case = CORPUS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # a fallback to the trace engine is fine here
        prog = VARIANTS[variant](wg.make_program(case.fn, *case.args))
    leaves = flatten(tuple(case.args))[0]
    extra = random_inputs(prog.in_avals[len(leaves):], _rng(name, variant, "auto"))
    assert_same(prog, list(leaves) + extra)


# --- goldens ------------------------------------------------------------------
SEED000 = """\
# generated by wengert from program seed000
def seed000(x, y):
    v0 = 7.0 * x
    v1 = 1.0 / y
    v2 = v0 * x
    v3 = v2 * 5.0
    v4 = 2.0 * v0
    v5 = v4 * v3
    v6 = 3.0 * v1
    v7 = v5 + v6
    return (v7,)
"""

TINY_LOOP = """\
# generated by wengert from program tiny_loop; names bound outside it:
#   np = numpy
def tiny_loop(n, c, xs):
    v0 = np.float64(c)
    # program step
    x2 = v0
    v7 = np.empty((max(n, 0),))
    for x1 in range(n):
        x3 = xs[x1]
        v4 = x2 + x3
        v5 = x2 * x3
        v7[x1] = v5
        x2 = v4
    v6 = x2
    return (v6, v7)
"""


def tiny_loop(n, c, xs):
    # the step takes an np.float64 carry: the Python float 1.0 it is given is
    # converted on the way in, so the carry has one type in every step
    s = Aval((), F64)
    step = stage(lambda i, c, x: [c + x, c * x], [Aval((), I64), s, s], name="step")
    c, ys = for_loop(n, step, [], [c], [xs])
    return c, ys


def test_golden_seed000():
    prog = wg.make_program(seed000, 2.0, 3.0, engine="trace")
    gen = python_function(prog)
    assert gen.source == SEED000
    assert gen(2.0, 3.0) == (seed000(2.0, 3.0),)
    assert python_function(prog).source == gen.source       # generated twice, the same text
    named = python_function(prog, name="v7")                # a name the program uses: made unique
    assert named.fn.__name__ == "v7_" and named(2.0, 3.0) == gen(2.0, 3.0)


def test_golden_tiny_loop():
    xs = np.array([1.0, 2.0, 3.0])
    prog = wg.make_program(tiny_loop, 3, 1.0, xs, engine="trace")
    gen = python_function(prog)
    assert gen.source == TINY_LOOP
    for n in (3, 2, 0):
        _, (c, ys) = assert_same(prog, [n, 1.0, xs])
        want_c, want_ys = 1.0, []
        for x in xs[:n]:
            want_ys.append(want_c * x)
            want_c += x
        assert c == want_c and ys.shape == (n,)
        np.testing.assert_array_equal(ys, want_ys)


def test_source_uses_the_listing_names():
    prog = vjp_program(wg.make_program(nested_f, X, engine="trace"))
    # the listing the code is written from: the lowered Program (which may
    # read a value before an update that overwrites it)
    low = lower(prog)
    namer = Namer()
    for _ in walk(low.program, namer):
        pass
    src = python_function(prog).source
    # a result written into its operand, which nothing reads afterwards,
    # takes that operand's name (``x[i] += v``, ``t *= s``)
    renamed = {namer.names[e.outputs[0]] for e in low.inplace}
    for name in namer.used - renamed:
        assert re.search(rf"\b{name}\b", src), name
    for name in renamed:
        assert not re.search(rf"\b{name} = ", src), name
    assert src.count("# program ") == str(prog).count("program ") - 1


def test_degenerate_programs():
    """No equations, empty branches, an empty loop body: still valid Python."""
    x, i = Var(Aval((), F64)), Var(Aval((), I64))
    empty = Program([], [], [], name="nothing")
    assert_same(Program([x], [], [x, Lit(2.0)], name="ident"), [1.5])
    prog = Program([i], [Eqn(PRIMITIVES["cond"], [i], [], {"branches": (empty, empty)})], [])
    gen, got = assert_same(prog, [1])
    assert got == () and "        pass" in gen.source
    body = Program([Var(Aval((), I64))], [], [], name="idle")
    loop = Eqn(PRIMITIVES["for_loop"], [Lit(3)], [], dict(body=body, num_consts=0, num_carry=0,
                                                          reverse=False, length=3))
    gen, _ = assert_same(Program([], [loop], [], name="spin"), [])
    assert "for x0 in range(3):" in gen.source


# --- literals and names ---------------------------------------------------------
def test_operations_on_two_python_scalars_are_python_ones():
    """``x * 2.0`` on a Python float stays a (weakly typed) Python float, in
    the interpreter (operator impls) and the code (operators) alike, as in the
    user's own function: against float32 the result is float32."""
    w = np.ones(3, np.float32)

    def f(x, w):
        return (x * 2.0) * w + 1.0 / (x - 1.0)

    prog = wg.make_program(f, 3.0, w, engine="trace")
    gen, (out,) = assert_same(prog, [2.0, w])
    assert out.dtype == np.float32 and out.dtype == f(2.0, w).dtype
    assert "v0 = x * 2.0" in gen.source and "v1 = v0 * w" in gen.source


def test_literals_keep_their_dtype_and_large_ones_are_constants():
    x = Var(Aval((4,), F32))
    v1, v2, v3, v4 = (Var(Aval((4,), F32)) for _ in range(4))
    big = np.arange(4.0, dtype=np.float32)
    eqns = [Eqn(PRIMITIVES["mul"], [x, Lit(np.array(2.0, np.float32))], [v1], {}),
            Eqn(PRIMITIVES["add"], [v1, Lit(0.1)], [v2], {}),
            Eqn(PRIMITIVES["mul"], [v2, Lit(big)], [v3], {}),
            Eqn(PRIMITIVES["add"], [v3, Lit(np.zeros(4, np.float32))], [v4], {})]
    prog = Program([x], eqns, [v4], name="lits")
    gen, (out,) = assert_same(prog, [np.linspace(-1, 1, 4, dtype=np.float32)])
    assert out.dtype == F32
    body = gen.source.splitlines()
    # each result after the first is written into the one before, which
    # nothing reads afterwards (``ElementwiseLower``)
    assert "    v1 = x0 * np.float32(2.0)" in body and "    v1 += 0.1" in body
    assert "#   c0 = constant f32[4]" in body and "    v1 *= c0" in body
    assert "    v1 += np.zeros((4,), np.dtype('float32'))" in body
    assert gen.namespace["c0"] is big


def test_a_traced_literal_is_rejected():
    class Traced:
        _trace = None
        aval = Aval((), F64)

    x, v = Var(Aval((), F64)), Var(Aval((), F64))
    prog = Program([x], [Eqn(PRIMITIVES["mul"], [x, Lit(Traced())], [v], {})], [v])
    with pytest.raises(CodegenError, match="traced value"):
        python_function(prog)


def test_names_that_are_not_free_identifiers():
    """A variable called ``np`` or ``c0`` keeps its name (the module becomes
    ``numpy``, the constant ``c1``); keywords and the builtins the code
    calls get a trailing underscore."""
    x, v1 = Var(Aval((3,), F64), "np"), Var(Aval((3,), F64), "lambda")
    v2, v3 = Var(Aval((), I64), "range"), Var(Aval((3,), F64), "c0")
    big = np.array([1.0, 2.0, 3.0])
    eqns = [Eqn(PRIMITIVES["sin"], [x], [v1], {}),
            Eqn(PRIMITIVES["argmax"], [v1], [v2], {"axis": None}),
            Eqn(PRIMITIVES["mul"], [v1, Lit(big)], [v3], {})]
    prog = Program([x], eqns, [v1, v2, v3], name="class")
    gen, _ = assert_same(prog, [X])
    lines = gen.source.splitlines()
    assert "def class_(np):" in lines
    assert "    lambda_ = numpy.sin(np)" in lines
    assert "    range_ = lambda_.argmax(axis=None)" in lines
    assert "    c0 = lambda_ * c1" in lines and gen.namespace["c1"] is big


# --- linecache: tracebacks and inspect show the generated code ------------------
def test_tracebacks_and_inspect_show_generated_lines():
    prog = wg.make_program(lambda a: np.sum(np.linalg.cholesky(a) * 2.0), np.eye(2),
                           engine="trace")
    gen = python_function(prog)
    assert gen(np.eye(2)) == (4.0,)
    with pytest.raises(np.linalg.LinAlgError) as info:
        gen(-np.eye(2))
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == gen.filename]
    assert gen.filename.startswith("<wengert-generated-")
    assert [f.line for f in frames] == ["v0 = np.linalg.cholesky(a)"]
    assert "v0 = np.linalg.cholesky(a)" in "".join(traceback.format_exception(info.value))
    source = inspect.getsource(gen.fn)
    assert source.startswith("def _lambda_(a):") and gen.source.endswith(source)


# --- per-iteration values in buffers --------------------------------------------
# A loop's ys (its stored residuals) go to arrays allocated once: np.empty((n,
# *y)) before a for loop, row i written in step i (a reverse loop's too); a
# while loop's double when full. Each kind of value a loop stores: the body
# (i, c) -> (new carry, y) of a (3,) float64 carry, and the y it stores.
F64_3 = Aval((3,), F64)
Y_KINDS = {
    "f64_vector": (lambda i, c: c * 2.0 + i, Aval((3,), F64)),
    "f32_matrix": (lambda i, c: np.outer(c, c[:2]).astype(F32), Aval((3, 2), F32)),
    "i64_scalar": (lambda i, c: i * 3 + 1, Aval((), I64)),
    "i64_vector": (lambda i, c: np.arange(4) * i, Aval((4,), I64)),
    "bool_vector": (lambda i, c: c > 0.2, Aval((3,), np.dtype(bool))),
    "f64_scalar": (lambda i, c: np.sum(c) * 0.5, Aval((), F64)),
}


def _loop_with_ys(kind):
    """A body whose carry is c -> sin(c) + 0.1 and whose y is Y_KINDS[kind]'s."""
    y_of, _ = Y_KINDS[kind]
    return stage(lambda i, c: [np.sin(c) + 0.1, y_of(i, c)], [Aval((), I64), F64_3],
                 name=f"store_{kind}")


def _reference_ys(kind, n, reverse, x):
    """The same loop, in Python: the stacked ys, index order."""
    y_of, aval = Y_KINDS[kind]
    ys, c = {}, x
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        ys[i] = np.asarray(y_of(np.int64(i), c), aval.dtype)
        c = np.sin(c) + 0.1
    return np.stack([ys[i] for i in range(n)]) if n > 0 else np.zeros((0,) + aval.shape,
                                                                       aval.dtype)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("static", [True, False], ids=["static_n", "dynamic_n"])
@pytest.mark.parametrize("kind", sorted(Y_KINDS))
def test_for_loop_stores_its_ys_in_a_buffer_allocated_once(kind, static, reverse):
    body = _loop_with_ys(kind)
    aval = Y_KINDS[kind][1]

    def f(n, x):
        c, ys = for_loop(n, body, [], [x], [], reverse=reverse)
        return c, ys

    for n in (0, 1, 2, 9, -2):
        if static:
            prog = wg.make_program(lambda x: f(n, x), X, engine="trace")
            args = [X]
        else:
            prog = wg.make_program(f, 3, X, engine="trace")
            args = [n, X]
        gen, (_, ys) = assert_same(prog, args)
        want = _reference_ys(kind, max(n, 0), reverse, X)
        assert ys.dtype == aval.dtype and ys.shape == want.shape
        np.testing.assert_array_equal(ys, want)
        src = gen.source
        assert "np.empty((" in src and ".append(" not in src and "np.stack" not in src, src
        assert ".reverse()" not in src and "[::-1]" not in src, src
        if static and n > 0:
            assert f"np.empty(({n}," in src, src


def _while_with_ys(kind):
    """While k < m: k += 1, c = sin(c) + 0.1, storing Y_KINDS[kind]'s y."""
    y_of, _ = Y_KINDS[kind]
    av = [Aval((), I64), Aval((), I64), F64_3]
    cond_p = stage(lambda m, k, c: [k < m], av, name="below")
    body_p = stage(lambda m, k, c: [k + 1, np.sin(c) + 0.1, y_of(k, c)], av,
                   name=f"while_{kind}")
    return lambda m, x: while_loop(cond_p, body_p, [m], [np.int64(0), x])


@pytest.mark.parametrize("kind", sorted(Y_KINDS))
def test_while_loop_grows_its_buffer_by_doubling(kind):
    """0, 1 and many steps (past the first capacity, 8, and its doubling):
    the same arrays as the interpreter's and as a Python loop's."""
    prog = wg.make_program(_while_with_ys(kind), 3, X, engine="trace")
    aval = Y_KINDS[kind][1]
    for m in (0, 1, 8, 9, 20):
        gen, (k, _, count, ys) = assert_same(prog, [m, X])
        want = _reference_ys(kind, m, False, X)
        assert k == count == m and ys.dtype == aval.dtype and ys.shape == want.shape
        np.testing.assert_array_equal(ys, want)
    src = gen.source
    assert "np.empty((8," in src and "np.concatenate((" in src and ".append(" not in src, src
