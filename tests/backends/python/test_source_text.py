"""Generated ``.source`` (``wengert/backends/python/codegen.py``) is code a
person would write (issue 14, item 5):

* it runs with NumPy alone: every program of the corpus (``cases.CORPUS``
  through both engines, the source engine's ``source_corpus.CASES``, the
  demo's seed programs), primal, jvp and vjp, simplified or not, is compiled
  from its text and exec'd in a namespace holding only ``numpy`` (and the
  constant arrays its header lists), and gives the interpreter's values
  exactly; no header binds a primitive's impl or a wengert object;
* the rows of ``scipy.special`` functions are SciPy calls, ``scipy`` a
  module named in the header;
* loops keep the user's names: the counter ``i``, the carry ``s``, the
  cotangents ``ct_<name>``;
* a vjp's code marks its forward and reverse sweeps;
* the source engine's generated code runs on its own (copied, with the names
  its header lists), keeps the user's names, and keeps loops as loops (ten
  times the trips, the same lines).
"""
from __future__ import annotations

import ast
import importlib
import re
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert import demo
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.core.ir import Role
from wengert.core.pass_rules import ScipyCall
from wengert.core.pytree import flatten
from wengert.primitives import PRIMITIVES
from wengert.primitives.special import PolygammaEmit
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

import source_cases as C
from cases import CORPUS, SPECS
from checks import EXACT_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jacobian
from codegen_checks import one_equation, random_inputs, rng_for
from lower_cases import branchy as element_loop
from source_corpus import CASES, X3, Y3


VARIANTS = {
    "primal": lambda p: p,
    "jvp": jvp_program,
    "vjp": vjp_program,
    "jvp_simplified": lambda p: simplify(jvp_program(p)),
    "vjp_simplified": lambda p: simplify(vjp_program(p)),
    "vjp_copies": lambda p: simplify(vjp_program(p), copies=True),  # what the API generates
}


def _programs():
    """(id, function, arguments, engine) of every corpus program."""
    out = []
    for name in sorted(CORPUS):
        case = CORPUS[name]
        for engine in ("trace", "source"):
            out.append((f"corpus-{name}-{engine}", case.fn, tuple(case.args), engine))
    for case in CASES:
        static = case.args[len(case.nums):]
        fn = C.with_static(case.fn, *static) if static else case.fn
        out.append((f"source-{case.id}", fn, case.dyn(case.fresh()), "source"))
    seeds = [("seed000", demo.seed000, (2.0, 3.0)), ("seed004", demo.seed004, (0.5, 4.2)),
             ("two_outputs", demo.two_outputs, (0.5,)),
             ("trace_of_product", demo.trace_of_product,
              (np.arange(4.0).reshape(2, 2), np.eye(2) - 0.5)),
             ("damped", demo.damped, (0.7, 4))]       # n = 4 stays a Python int
    out += [(f"demo-{name}", fn, args, "source") for name, fn, args in seeds]
    return out


PROGRAMS = _programs()
IDS = [p[0] for p in PROGRAMS]


# what a header may bind: modules (NumPy, SciPy, the user's own, whose globals
# the code reads at call time) and constant arrays; never wengert's objects
_MODULE = re.compile(r"#   (\w+) = (numpy|module ((?!wengert\b)[\w.]+))$")
_CONSTANT = re.compile(r"#   (\w+) = constant ")


def header(source):
    """The header's binding lines (``#   name = what``)."""
    lines = source.splitlines()
    return [line for line in lines[1:] if line.startswith("#   ")]


def run_alone(gen, args):
    """Compile ``gen.source`` and exec it in a namespace holding only the
    modules its header names (imported here, by name) and its constants."""
    ns = {}
    for line in header(gen.source):
        module = _MODULE.match(line)
        if module:
            name = module.group(1)
            ns[name] = np if module.group(2) == "numpy" else importlib.import_module(
                module.group(3))
            continue
        const = _CONSTANT.match(line)
        assert const, f"the header binds more than modules and constants: {line}"
        ns[const.group(1)] = gen.namespace[const.group(1)]
    exec(compile(gen.source, "<copied>", "exec"), ns)
    fname, = re.findall(r"^def (\w+)\(", gen.source, re.M)
    return ns[fname](*args)


def program(fn, args, engine, variant):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # a fallback to the trace engine is fine here
        prog = VARIANTS[variant](wg.make_program(fn, *args, engine=engine))
    leaves = flatten(tuple(args))[0]
    if engine == "source":          # Python ints are static: not inputs
        leaves = [x for x in leaves if type(x) is not int]
    return prog, list(leaves) + random_inputs(prog.in_avals[len(leaves):],
                                              rng_for(fn.__name__, engine, variant))


@pytest.mark.parametrize("pid, fn, args, engine", PROGRAMS, ids=IDS)
def test_corpus_source_runs_with_numpy_alone(pid, fn, args, engine):
    for variant in VARIANTS:
        prog, inputs = program(fn, args, engine, variant)
        gen = python_function(prog)
        for line in header(gen.source):
            assert _MODULE.match(line) or _CONSTANT.match(line), f"{pid} {variant}: {line}"
        assert "PRIMITIVES[" not in gen.source and "DYN" not in gen.source, gen.source
        want = interpret(prog, *inputs)
        got = run_alone(gen, inputs)
        assert len(got) == len(want), gen.source
        for g, w in zip(got, want):
            where = f"{pid} {variant}:\n{gen.source}"
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, \
                where
            # lowering may add a loop's cotangents in another order: equal to rounding
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300, err_msg=where)


def test_an_update_with_an_index_array_accumulates_with_np_add_at():
    """``x[idx] += v`` with a repeated position: ``np.add.at`` (a subscript
    ``+=`` would count it once), in the transposed gather and the update."""
    def f(x, idx):
        return np.sum(np.sin(x[idx]))

    x, idx = np.array([0.3, -0.2, 0.9]), np.array([0, 2, 0, 0])
    gen = python_function(vjp_program(wg.make_program(f, x, idx, engine="trace")))
    assert "np.add.at(" in gen.source, gen.source
    got, = run_alone(gen, [x, idx, 1.0])[1:2]
    np.testing.assert_allclose(got, [3 * np.cos(0.3), 0.0, np.cos(0.9)], rtol=1e-15)


SCIPY_ROWS = sorted(n for n, p in PRIMITIVES.items()
                    if isinstance(p.emit, (ScipyCall, PolygammaEmit)))


@pytest.mark.parametrize("name", SCIPY_ROWS, ids=SCIPY_ROWS)
def test_scipy_rows_are_written_as_scipy_calls(name):
    """Every row spelled as a SciPy call (``scipy.special.gammaln(x)``, with
    ``scipy`` a module in the header), on the operands of its cases.py
    entries, run from its text alone, gives the interpreter's values."""
    assert len(SCIPY_ROWS) >= 20, SCIPY_ROWS
    prim, spec = PRIMITIVES[name], SPECS[name]
    assert spec.cases, name
    for case in spec.cases:
        operands = case.operands(name)
        prog = one_equation(prim, operands, case.params, as_literals=False)
        gen = python_function(prog)
        assert "#   scipy = module scipy" in header(gen.source), gen.source
        assert "scipy.special." in gen.source and "PRIMITIVES[" not in gen.source, gen.source
        got, want = run_alone(gen, operands), interpret(prog, *operands)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, \
                gen.source
            np.testing.assert_array_equal(g, w, err_msg=gen.source)


# --- names ---------------------------------------------------------------------
X4 = np.array([0.5, -0.9, 1.2, 0.3])


@pytest.mark.parametrize("fn, args, names", [
    # (the sum ``s`` is dead in ``grad``, whose code computes only the derivative; its
    # cotangent is 1 in every step, a literal: neither is named any more, issue 27)
    (element_loop, (X4,), ["for i in range", "ct_x = ", "x.item(i)",
                           "ct_x[i] = ct_x.item(i) + "]),
    (C.setitem_loop, (X4,), ["for i in range", "y = ", "ct_y = ", "ct_x = ", "[i] = "]),
    (C.loop_with_branch, (X4,), ["v = x[", "ct_v", "ct_x = "]),
    (C.for_over_array, (X4.reshape(2, 2),), ["row = x[", "ct_row = ", "ct_x = "]),
    (C.break_in_for, (X4,), ["i, s, ", "x.item(i)"]),
], ids=["element-loop", "setitem-loop", "loop-with-branch", "for-over-array", "break"])
def test_loops_keep_the_users_names(fn, args, names):
    g = wg.grad(fn, engine="source")
    got = g(*args)
    code = "\n".join(line.split("#")[0] for line in g.source.splitlines())  # (comments quote)
    for name in names:
        assert name in code, f"{name!r} not in\n{g.source}"
    # the text gives what the engine gives
    gen = g.last.fn
    out = run_alone(gen, args)
    np.testing.assert_array_equal(out[-1], got)


def test_reverse_loop_names_its_cotangent_carries():
    """The reverse loop accumulates ``ct_x`` under its name, with no copy between its
    steps or out of its branches (before: ``ct_s, ct_x = ct_s_1, ct16`` at each step)."""
    g = wg.grad(element_loop, engine="source")
    g(X4)
    assert re.search(r"^            ct_x\[i\] = ct_x.item\(i\) [+-] r\d+$", g.source, re.M), g.source
    assert not re.search(r"^\s+\w+(, \w+)* = [a-z_]\w*(, [a-z_]\w*)*$", g.source, re.M), g.source


# --- sweeps --------------------------------------------------------------------
@pytest.mark.parametrize("pid, fn, args, engine", PROGRAMS, ids=IDS)
def test_vjp_code_marks_its_sweeps(pid, fn, args, engine):
    """A vjp's code opens with ``# forward sweep`` and has ``# reverse sweep``
    right before the code of its first equation that computes a cotangent
    (none before it does); a primal or jvp program, or one with no forward
    work, has neither."""
    for variant in ("primal", "jvp", "vjp", "vjp_copies"):
        prog, _ = program(fn, args, engine, variant)
        src = python_function(prog).source
        lines = src.splitlines()
        body = lines[next(k for k, line in enumerate(lines) if line.startswith("def ")) + 1:]
        first_ct = next((k for k, e in enumerate(prog.eqns)
                         if any(v.role is Role.COTANGENT for v in e.outputs)), None)
        if not variant.startswith("vjp") or not first_ct:
            assert "sweep" not in src, src
            continue
        assert body[0] == "    # forward sweep" and body.count("    # reverse sweep") == 1, src
        k = body.index("    # reverse sweep")
        defined = [line.split(" = ")[0] for line in body[:k] if " = " in line]
        assert not any(re.search(r"\bct", d) for d in defined), src
        assert re.search(r"\bct", " ".join(body[k:])), src


# --- the source engine's generated code -------------------------------------------
def _assert_unchanged(args, case):
    """Nothing the caller holds was written (functional updates)."""
    for a, b in zip(args, case.args):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="an argument was written in place")


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
    # the loop's carry is the user's y, and its new value is assigned to it directly
    # (before: ``y_1 = 0.5 * v13`` then ``y, d_y = y_1, d_y_1``)
    assert re.search(r"^\s+y = 0\.5 \* v\d+$", g.source, re.M), g.source
    assert not re.search(r"\by_1\b", g.source), g.source


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
