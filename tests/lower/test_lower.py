"""Lowering (``wengert/lower/__init__.py``: ``lower``, ``check``): loops over
array elements written in place, and never where it would be wrong.

* the derivative of each loop of ``lower_cases.LINEAR`` writes every update
  inside its loops in place and builds no array of the loop's length there
  (the lowered form is inspected, not timed);
* values: the generated code against the interpreter, and the source
  engine's gradients against the trace engine's and finite differences,
  at several lengths, for those loops and for the programs where an
  in-place write would be wrong (a view or old value read afterwards, a
  stored residual, carries that swap, the caller's array);
* the caller's arrays are never written;
* ``check`` rejects decisions that break the rules (planted).
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.backends.interpret import interpret
from wengert.lower import LoweringError, check, lower
from wengert.api.backend import python_function
from wengert.core.ir import Eqn, Lit, Program, Var, sub_programs
from wengert.core.atoms import Aval
from wengert.primitives import PRIMITIVES
from wengert.primitives.index import DYN
from wengert.transforms.simplify import simplify

import lower_cases as C
from checks import assert_close, fd_jvp

LOOPS = ("for_loop", "while_loop")


def _grad(name, n, seed=0):
    args, argnums = C.ARGS(n, np.random.default_rng(seed))[name]
    return args, argnums, wg.grad(getattr(C, name), argnums=argnums)


def _program(name, n):
    """The gradient's Program staged at length ``n`` (not one another test
    staged at another length, shared through the code table)."""
    api_codes.clear()
    args, argnums, g = _grad(name, n)
    g(*args)
    return simplify(g.last.program, copies=True), args


def _in_loops(prog, depth=0):
    """(eqn, loop depth) of every equation."""
    for e in prog.eqns:
        yield e, depth
        inner = depth + (e.prim.name in LOOPS)
        for sub in sub_programs(e):
            yield from _in_loops(sub, inner)


@pytest.mark.parametrize("name", C.LINEAR)
def test_loop_derivatives_write_in_place(name):
    n = 40
    prog, _ = _program(name, n)
    low = lower(prog)
    updates, dense = [], []
    for e, depth in _in_loops(low.program):
        if depth == 0:
            continue
        if e.prim.name in ("index_add", "index_set") and e.outputs[0].aval.shape:
            updates.append((e.prim.name, e in low.inplace))
        dense += [e.prim.name for x in e.inputs
                  if isinstance(x, Lit) and np.ndim(x.val) >= 1 and np.size(x.val) >= n]
    assert all(ok for _, ok in updates), (updates, str(low.program))
    assert updates or name == "damped", str(low.program)
    assert not dense, (dense, str(low.program))


def _values(name, n, seed):
    args, argnums, g = _grad(name, n, seed)
    before = [np.array(a, copy=True) for a in args]
    got = g(*args)
    for a, b in zip(args, before):             # the caller's arrays are never written
        np.testing.assert_array_equal(a, b)
    if name in C.TRACEABLE:
        want = wg.grad(getattr(C, name), argnums=argnums, engine="trace")(*args)
        assert_close(got, want, rtol=1e-10)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    rng = np.random.default_rng(seed + 1)

    def at(k, v):
        fresh = [np.array(a, copy=True) if np.ndim(a) else a for a in args]
        fresh[k] = np.array(v, copy=True) if np.ndim(v) else v
        return getattr(C, name)(*fresh)

    for k in nums:
        t = rng.standard_normal(np.shape(args[k]))
        d = fd_jvp(lambda v, k=k: at(k, v), (args[k],), (t,))
        g_k = got if isinstance(argnums, int) else got[nums.index(k)]
        assert np.isclose(np.sum(np.asarray(g_k) * t), d, rtol=1e-6, atol=1e-8), (name, k)


@pytest.mark.parametrize("n", [3, 9, 33])
@pytest.mark.parametrize("name", sorted(C.ARGS(4, np.random.default_rng(0))))
def test_gradients_agree(name, n):
    _values(name, n, seed=n)


@pytest.mark.parametrize("name", sorted(C.ARGS(4, np.random.default_rng(0))))
def test_lowered_code_equals_the_interpreter(name):
    prog, args = _program(name, 11)
    flat = [a for a in args]
    gen = python_function(prog)
    copies = [np.array(a, copy=True) for a in flat]
    got = gen(*flat)
    for a, b in zip(flat, copies):
        np.testing.assert_array_equal(a, b)
    want = interpret(prog, *flat)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    # called again, on the same arrays: nothing stale from the first call
    for g, w in zip(gen(*flat), want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_sums_move_into_branches():
    """The branchy loop's reverse sweep: one ``index_add`` per branch on the
    carried cotangent itself, no dense zeros, no dense sum."""
    prog, _ = _program("branchy", 8)
    low = lower(prog)
    names = [(e.prim.name, d) for e, d in _in_loops(low.program) if d]
    assert ("add_any", 1) not in names
    assert sum(1 for nm, d in names if nm == "index_add") == 2
    src = python_function(prog).source
    assert ("+= " in src or "] = ct_x.item(" in src) and "np.zeros" not in src.split("for ")[-1]


# --- check: planted decisions ------------------------------------------------
def _update_program(read_after):
    f64 = Aval((4,), np.float64)
    x, v, i = Var(f64, "x"), Var(Aval((), np.float64), "v"), Var(Aval((), np.int64), "i")
    y = Var(f64, "y")
    e = Eqn(PRIMITIVES["index_add"], [x, v, i], [y], {"idx": (DYN,)})
    eqns, outs = [e], [y]
    if read_after:
        z = Var(f64, "z")
        eqns.append(Eqn(PRIMITIVES["add_any"], [x, y], [z], {}))
        outs = [z]
    return Program([x, v, i], eqns, outs, "planted"), e


@pytest.mark.parametrize("read_after", [False, True])
def test_check_rejects_writes_that_are_not_safe(read_after):
    prog, e = _update_program(read_after)
    low = lower(prog)
    assert e not in low.inplace           # the analysis never writes an input
    low.inplace[e] = 0                    # planted
    with pytest.raises(LoweringError):
        check(low)


def test_updates_of_an_input_are_copies():
    prog, _ = _update_program(False)
    x = np.arange(4.0)
    out = python_function(prog)(x, 2.0, 1)[0]
    np.testing.assert_array_equal(x, np.arange(4.0))
    np.testing.assert_array_equal(out, [0.0, 3.0, 2.0, 3.0])


@pytest.mark.parametrize("name", ["branchy", "one_sided", "horner", "prefix", "euler"])
def test_new_arrays_are_not_copied(name):
    """An accumulator made where the code runs (``np.zeros``, ``np.full``) is
    the code's own: handed to the loop, never copied; only arrays the code
    does not own (the caller's, constants) are copied before a loop writes
    them in place."""
    prog, _ = _program(name, 9)
    src = python_function(prog).source
    assert ".copy()" not in src, src


def test_branches_read_the_values_computed_before_them():
    """``v = x[i]; if v > 0: s += x[i] ** 2``: the branch reads ``v``, it
    does not index again; the square of a float is a product."""
    prog, _ = _program("branchy", 9)
    low = lower(prog)
    fwd = next(e for e in low.program.eqns if e.prim.name == "for_loop")
    body = fwd.params["body"]
    cond = next(e for e in body.eqns if e.prim.name == "cond")
    for branch in cond.params["branches"]:
        assert not any(e.prim.name == "getitem" for e in branch.eqns), str(branch)
    src = python_function(prog).source
    assert "np.power" not in src and " * " in src, src


@pytest.mark.parametrize("flag", [False, True])
def test_a_literal_accumulator_moves_into_branches(flag):
    """``c + cond(...)`` with ``c`` a constant array (a literal): the sum
    moves into the branches with the literal as an operand (fuzzer seed 55
    crashed here), and the values are the interpreter's."""
    f64 = Aval((3,), np.float64)
    xb, yb, x0, p = Var(f64, "x"), Var(f64, "y"), Var(f64, "x"), Var(Aval((), np.bool_), "p")
    x, y, z = Var(f64, "x"), Var(f64, "y"), Var(f64, "z")
    two = Eqn(PRIMITIVES["mul"], [xb, Lit(2.0)], [yb], {})
    branches = (Program([x0], [], [Lit(np.zeros(3))], "zero"),
                Program([xb], [two], [yb], "double"))
    eqns = [Eqn(PRIMITIVES["cond"], [p, x], [y], {"branches": branches}),
            Eqn(PRIMITIVES["add_any"], [Lit(np.array([1.0, 2.0, 3.0])), y], [z], {})]
    prog = Program([x, p], eqns, [z], "literal_acc")
    low = lower(prog)
    assert not any(e.prim.name == "add_any" for e in low.program.eqns), str(low.program)
    args = [np.array([0.5, -1.0, 2.0]), np.bool_(flag)]
    np.testing.assert_array_equal(python_function(prog)(*args)[0], interpret(prog, *args)[0])


def _last_then_rest(w):
    """``np.linspace``'s shape: a 0-d read ``y[-1, ...]`` of an array the reverse sweep
    then writes at the same place."""
    return np.sum(np.linspace(w[1], w[2], 4) ** 2)


def test_a_0d_read_with_an_ellipsis_is_a_view():
    """``y[-1, ...]`` is a 0-d *view* of y in NumPy (``y[-1]`` would be a scalar): the
    lowering once took it for a new value, the reverse sweep wrote ``y[-1, ...] = 0`` into
    y, and the value read before became 0 (np.linspace's gradient in stop was wrong in the
    source engine, issue 25)."""
    w = np.array([0.7, -1.3, 0.45, 1.6])
    for engine in ("source", "trace"):
        g = wg.grad(_last_then_rest, engine=engine)(w)
        t = np.random.default_rng(0).standard_normal(4)
        assert_close(np.dot(g, t), fd_jvp(_last_then_rest, (w,), (t,)), 1e-6,
                     what=f"{engine}: linspace's gradient against FD")
