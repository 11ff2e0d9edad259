"""Lowering step 3 (``wengert/lower/facts.py``): the facts about a Program
the code generator asks.

* Float64 scalars held as Python floats (``python_floats``). The generated
  code holds a float64 scalar as a Python float where every reader gives the
  interpreter's values with one (``+ - *``, comparisons, ``abs``, stores into
  float64 arrays, a ufunc call), reads array elements as ``x.item(i)`` and
  writes float64 literals as Python floats; elsewhere it keeps (or converts
  to) NumPy scalars: ``/`` by a value that may be 0.0 (Python raises
  ZeroDivisionError, NumPy gives inf with a RuntimeWarning), ``**``, ``%``,
  ``//`` (NumPy calls), and the function's results. Checked here:

  * the loop programs of ``lower_cases``, ``bench.scaling_programs`` and
    ``range_cases``: every float64 element read inside a loop is a Python
    float (``.item``), and no NumPy scalar literal is left in a loop;
  * programs built on the edges (``/`` by zero, ``**`` of a negative base,
    overflow and underflow in ``*``, comparisons with nan and -0.0, float32
    beside float64) on inputs holding subnormals, inf, nan and -0.0: the code
    gives the interpreter's values bit for bit, with its types;
  * their gradients against finite differences and the trace engine.

* A while loop's body reads the values its condition computed
  (``share_condition_values``), computed once an iteration.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import wengert as wg
from bench.scaling_programs import PROGRAMS
from wengert.api import codes as api_codes
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.backends.python.codegen import codegen
from wengert.control import while_loop
from wengert.core.ir import Aval, sub_programs
from wengert.core.staging import stage
from wengert.lower import lower, python_floats, share_condition_values
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

import lower_cases as C
from checks import assert_close, fd_jvp
from codegen_checks import VARIANTS, assert_same, random_inputs, rng_for
from range_cases import MAKERS, RANGES


LOOPS = ("for_loop", "while_loop")


# --- the loop programs: the Python-float spelling ------------------------------
def _loop_cases():
    cases = {}
    rng = np.random.default_rng(0)
    for name in C.LINEAR:
        args, argnums = C.ARGS(9, rng)[name]
        cases[f"lower-{name}"] = (getattr(C, name), args, argnums)
    for p in PROGRAMS:
        cases[f"bench-{p.name}"] = (p.make(np), p.inputs(9, rng), p.argnums)
    for kind, make in MAKERS.items():
        for spec in ("from_1", "backwards", "negative_start_odd_step"):
            cases[f"range-{kind}-{spec}"] = (make(RANGES[spec]), (rng.uniform(0.5, 1.0, 11 * (
                11 if kind == "nested" else 1)),), 0)
    return cases


LOOP_CASES = _loop_cases()


def _in_loops(prog, depth=0):
    for e in prog.eqns:
        yield e, depth
        for sub in sub_programs(e):
            yield from _in_loops(sub, depth + (e.prim.name in LOOPS))


def _loop_bodies(source):
    """The lines of ``source`` inside a ``for``/``while`` statement."""
    inside, depth = [], None
    for line in source.splitlines():
        indent = len(line) - len(line.lstrip())
        if depth is not None and indent <= depth and line.strip():
            depth = None
        if depth is not None:
            inside.append(line.strip())
        elif line.lstrip().startswith(("for ", "while ")):
            depth = indent
    return inside


@pytest.mark.parametrize("name", sorted(LOOP_CASES))
def test_loops_hold_python_floats(name):
    fn, args, argnums = LOOP_CASES[name]
    api_codes.clear()
    g = wg.grad(fn, argnums=argnums, engine="source")
    g(*args)
    low = lower(simplify(g.last.program, copies=True))
    floats = python_floats(low.program, low.python_scalars, low.loop_only)
    reads = [e for e, depth in _in_loops(low.program) if depth and e.prim.name == "getitem"
             and e.outputs[0].aval.shape == () and e.inputs[0].aval.dtype == np.float64]
    assert all(e.outputs[0] in floats.held for e in reads), \
        [str(e) for e in reads if e.outputs[0] not in floats.held]
    body = _loop_bodies(g.source)
    assert not reads or any(".item(" in line for line in body), g.source
    # a NumPy scalar literal in a loop is left only where a loop resets a
    # carry to it (the cotangent of a while loop's flag), never read by Python maths
    assert all("np.float64(" not in line or line.startswith("ct_") and "np.zeros" in line
               for line in body), g.source
    # the values: the engine's gradient against the code's text, exec'd
    assert_close(g.last.fn(*args)[-1] if not isinstance(argnums, tuple) else g.last.fn(*args),
                 interpret(g.last.program, *args)[-1] if not isinstance(argnums, tuple)
                 else interpret(g.last.program, *args), rtol=1e-12, atol=1e-14)


def test_the_switch_turns_the_spelling_off():
    """``floats=False`` in the lowering (as a writer for numba asks): the code
    of before, NumPy scalars throughout, the same values."""
    fn, args, argnums = LOOP_CASES["lower-horner"]
    api_codes.clear()
    g = wg.grad(fn, argnums=argnums, engine="source")
    g(*args)
    prog = g.last.program
    on = python_function(simplify(prog, copies=True))
    off = codegen(lower(simplify(prog, copies=True), floats=False))
    assert ".item(" in on.source and ".item(" not in off.source
    assert "np.float64(1.0)" in off.source and "np.float64(1.0)" not in on.source
    for a, b in zip(on(*args), off(*args)):
        assert_close(a, b, rtol=1e-14)


# --- on the edges: the interpreter's values, bit for bit -----------------------
def prod_all(x):
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
    return p


def div_carry(x):
    s = 1.0
    for i in range(x.shape[0]):
        s = s / x[i] + x[i]
    return s


def div_element(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + 1.0 / x[i] - x[i] / 2.0
    return s


def pow_negative_base(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] - 0.5) ** 1.5 + x[i] ** 2
    return s


def remainders(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] % 0.7 - x[i] // 0.3 + x[i] % s
    return s


def branches(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] >= 0.0:
            s = s - x[i] * 0.0
        elif x[i] == x[i]:
            s = abs(s) + -x[i]
        else:
            s = s * 2.0
    return s


def ufuncs(x):
    s = 0.5
    for i in range(x.shape[0]):
        s = s + np.sin(x[i] * s) * np.maximum(s, x[i])
    return s


def stores(x, t):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * t - out[i - 1]
        out[i - 1] += x[i] * 0.5
    return np.sum(out) + out[0]


def horner(c, t):
    p = 0.0
    for i in range(c.shape[0]):
        p = p * t + c[i]
    return p


def float32_beside(x32, x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x32[i] * x[i] + x32[i]
    return s


def ratio_of_sums(x):
    # t / (t * 2.0): two Python floats of the code's own arithmetic, so the
    # division converts one (t = 0.0 gives NumPy's nan, not ZeroDivisionError)
    s, t = 1.0, 0.0
    for i in range(x.shape[0]):
        t = t + x[i]
        s = s * 0.5 + t / (t * 2.0)
    return s


def restarts(x, a):
    # the carry starts as the argument a (a Python float if the caller passes
    # one, as in the interpreter) and meets the code's own Python floats
    s = a
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s = s * x[i]
        else:
            s = a
    return s / x[0]


def over_argument(x, a):
    # a * 2.0 is a Python float when the caller passes one (as in the
    # interpreter); an element over it is NumPy's division (a = 0.0: inf)
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] / (a * 2.0)
    return s


def flags_as_numbers(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] > 0.0) * x[i] - (x[i] < s) + i * x[i]
    return s


EDGES = {"prod_all": prod_all, "ratio_of_sums": ratio_of_sums, "restarts": restarts,
         "flags_as_numbers": flags_as_numbers, "over_argument": over_argument, "div_carry": div_carry, "div_element": div_element,
         "pow_negative_base": pow_negative_base, "remainders": remainders,
         "branches": branches, "ufuncs": ufuncs, "stores": stores, "horner": horner,
         "float32_beside": float32_beside}
SPECIALS = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2e-308, np.inf, -np.inf, np.nan, 1e308,
            -1e308, 1e200, 1e-200, 1.0, -1.0, 0.5]


def _edge_args(name, rng, n=12):
    x = rng.choice(np.concatenate([SPECIALS, rng.standard_normal(8)]), n)
    if name in ("stores", "horner", "restarts", "over_argument"):
        return (x, np.float64(rng.choice(SPECIALS + [0.9, -1e-160, 1e-160])))
    if name == "float32_beside":
        with np.errstate(over="ignore"):        # 1e200 is inf in float32
            return (x.astype(np.float32), x)
    return (x,)


def _same(got, want):
    """The same type and dtype, and the same bits (nan as nan, -0.0 apart from 0.0)."""
    assert type(got) is type(want), (type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert np.array_equal(g, w, equal_nan=True), (g, w)
    assert np.array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)])), (g, w)


def _run(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_values_equal_the_interpreter(name):
    rng = np.random.default_rng(1)
    # the interpreter runs the Program the code is made from (``simplify``
    # rewrites ``x * 0.0`` as 0.0, which differs at inf and nan: not this test's)
    prog = simplify(wg.make_program(EDGES[name], *_edge_args(name, rng), engine="source"),
                    copies=True)
    gen = python_function(prog)
    for _ in range(40):
        args = _edge_args(name, rng)
        want = _run(interpret, prog, *args)
        got = _run(gen, *args)
        for g, w in zip(got, want):
            _same(g, w)


@pytest.mark.parametrize("name", ["restarts", "horner", "over_argument"])
def test_python_float_arguments(name):
    """A Python float argument: staged weak (``horner``'s ``t``), or passed
    where an ``np.float64`` was staged (the interpreter then computes with
    Python floats too, and so does the code)."""
    rng = np.random.default_rng(4)
    x, t = _edge_args(name, rng)
    for staged in (float(t), t):
        prog = simplify(wg.make_program(EDGES[name], x, staged, engine="source"), copies=True)
        gen = python_function(prog)
        for _ in range(20):
            x, t = _edge_args(name, rng)
            for a in (float(t), t):
                for g, w in zip(_run(gen, x, a), _run(interpret, prog, x, a)):
                    _same(g, w)


@pytest.mark.parametrize("name", ["div_carry", "div_element", "ratio_of_sums"])
def test_division_by_zero_is_numpys(name):
    """``/`` by a value that is 0.0 (an element, or a sum that cancels): inf
    or nan and NumPy's RuntimeWarning, not Python's ZeroDivisionError."""
    x = np.array([2.0, -2.0, 3.0] if name == "ratio_of_sums" else [2.0, 0.0, 3.0])
    prog = wg.make_program(EDGES[name], x, engine="source")
    gen = python_function(simplify(prog, copies=True))
    with pytest.warns(RuntimeWarning, match="divide by zero|invalid value"):
        got = gen(x)
    _same(got[0], _run(interpret, prog, x)[0])
    assert np.isinf(got[0]) or np.isnan(got[0])


def test_negative_base_power_is_numpys():
    """``**`` of a negative base: nan and NumPy's warning, not a complex number."""
    x = np.array([0.25, 2.0])
    prog = wg.make_program(pow_negative_base, x, engine="source")
    gen = python_function(simplify(prog, copies=True))
    with pytest.warns(RuntimeWarning, match="invalid value"):
        got = gen(x)
    assert type(got[0]) is np.float64 and np.isnan(got[0])


def test_overflow_and_underflow_in_products():
    """``*`` past the largest float is inf, below the smallest subnormal 0.0, as
    NumPy's; the result is an ``np.float64`` as the interpreter's."""
    for x, want in ((np.array([1e200, 1e200, -1.0]), -np.inf),
                    (np.array([1e-200, 1e-200, -1.0]), -0.0)):
        prog = wg.make_program(prod_all, x, engine="source")
        gen = python_function(simplify(prog, copies=True))
        assert ".item(" in gen.source
        got = _run(gen, x)[0]
        _same(got, np.float64(want))


# --- gradients ------------------------------------------------------------------
SMOOTH = {"prod_all": (lambda rng: (rng.uniform(0.5, 1.5, 7),), 0),
          "div_carry": (lambda rng: (rng.uniform(0.5, 1.5, 7),), 0),
          "div_element": (lambda rng: (rng.uniform(0.5, 1.5, 7),), 0),
          "pow_negative_base": (lambda rng: (rng.uniform(0.6, 1.5, 7),), 0),
          "branches": (lambda rng: (rng.uniform(-1.0, 1.0, 7),), 0),
          "ufuncs": (lambda rng: (rng.uniform(-1.0, 1.0, 7),), 0),
          "horner": (lambda rng: (rng.standard_normal(7), np.float64(0.9)), (0, 1))}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_gradients_against_differences_and_the_trace_engine(name):
    rng = np.random.default_rng(2)
    make, argnums = SMOOTH[name]
    args = make(rng)
    f = EDGES[name]
    got = wg.grad(f, argnums=argnums, engine="source")(*args)
    assert_close(got, wg.grad(f, argnums=argnums, engine="trace")(*args), rtol=1e-12)
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    tangents = [rng.standard_normal(np.shape(args[k])) for k in nums]
    full = [np.zeros(np.shape(a)) for a in args]
    for k, t in zip(nums, tangents):
        full[k] = t
    grads = got if isinstance(argnums, tuple) else (got,)
    directional = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, tangents))
    want = fd_jvp(f, args, tuple(full))
    assert np.isclose(directional, want, rtol=1e-6, atol=1e-9), (directional, want)


# --- share_condition_values: a while body reads what its condition computed -------
F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)


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
            extra = random_inputs(p.in_avals[1:], rng_for("cube", variant))
            assert_same(p, [a] + extra)
    src = python_function(simplify(vjp_program(prog), copies=True)).source
    assert len(re.findall(r" - a$", src, re.M)) == 2, src      # cond, reverse-loop recompute
    assert re.search(r"^    \w+ = 0$", src, re.M) and "int64" not in src, src
    assert wg.grad(_cube_root)(2.0) == pytest.approx(2.0 ** (-2 / 3) / 3, rel=1e-12)
