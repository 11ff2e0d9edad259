"""Lowering step 1 (``wengert/lower/sums.py``): sums moved into their
accumulators.

* Updates that tile an array of zeros, assembled (``assemble``, the rows'
  ``lower.region``/``lower.assemble``): ``ct = np.zeros(n); ct[0:b] += u;
  ct[b:n] += w`` -- the transpose of a concatenation or a stack -- is
  ``ct = np.concatenate((u, w))``, with no zeros and no adds. For each way of
  cutting the first axis (slices in any order, single rows, both, lengths
  symbolic or not) the lowered form holds one concatenation and no update,
  with the interpreter's values; where the blocks leave a gap, overlap, start
  on something other than zeros, count from the end, or tile a length that
  another size would not tile, the updates stay. Gradients of programs that
  concatenate and stack are checked against the trace engine and finite
  differences at several lengths.
* A scaled placement summed into an accumulator (``ScaleLower`` on the
  ``mul`` and ``div`` rows, with the placing rows' ``lower.placed``):
  ``acc + c * index_add(0, v, i)`` is lowered to ``acc[i] += c * v``, with no
  dense zeros, no dense scaling and no dense sum; the transposed slices of a
  stencil or a Runge-Kutta step (``y[:-1]`` read, its cotangent scaled by
  ``h / 2``) are this. For each operand order, row and kind of index the
  lowered form is inspected (no placement into zeros left) and its values
  compared with the interpreter's; a literal that is not finite, or a scale
  that is not a literal, stays as it was (``0 * inf`` is NaN where nothing
  was placed, which the accumulator must receive). Gradients of loops with
  shifted reads are checked against the trace engine and finite
  differences.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, sub_programs
from wengert.lower import lower
from wengert.primitives import PRIMITIVES
from wengert.primitives.index import DYN

from checks import (AD_VS_AD_RTOL_F64, PROGRAM_RTOL_F64, assert_close, check_two_argument_grad,
                    fd_jvp)


# --- updates that tile zeros, assembled -------------------------------------------
F64 = np.dtype("float64")
S = slice


def _chain(n, cuts, base="zeros"):
    """``out = index_add(...index_add(base, v0, cuts[0])..., vk, cuts[k])``
    over an ``(n, 2)`` array; one input per cut."""
    vs, eqns = [], []
    acc = Lit(np.zeros((n, 2))) if base == "zeros" else Var(Aval((n, 2), F64), "base")
    for k, cut in enumerate(cuts):
        rows = len(range(n)[cut]) if isinstance(cut, slice) else None
        v = Var(Aval((rows, 2) if rows is not None else (2,), F64), f"v{k}")
        out = Var(Aval((n, 2), F64), f"a{k}")
        eqns.append(Eqn(PRIMITIVES["index_add"], [acc, v], [out], {"idx": (cut,)}))
        vs.append(v)
        acc = out
    inputs = vs if base == "zeros" else [eqns[0].inputs[0]] + vs
    return Program(inputs, eqns, [acc], name="chain")


def _check(prog, assembled):
    low = lower(prog)
    names = [e.prim.name for e in low.program.eqns]
    if assembled:
        assert "index_add" not in names and names.count("concatenate") == 1, str(low.program)
    else:
        assert "index_add" in names and "concatenate" not in names, str(low.program)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(v.aval.shape) for v in prog.inputs]
    want = interpret(prog, *args)
    got = python_function(prog)(*args)
    np.testing.assert_array_equal(got[0], want[0])


TILED = {
    "two_slices": (5, [S(0, 2), S(2, 5)]),
    "slices_backwards": (5, [S(3, 5), S(1, 3), S(0, 1)]),
    "open_ends": (4, [S(None, 1), S(1, None)]),
    "rows": (3, [1, 0, 2]),
    "rows_and_slices": (5, [S(1, 4), 4, 0]),
}


@pytest.mark.parametrize("case", sorted(TILED))
def test_updates_that_tile_zeros_are_a_concatenation(case):
    n, cuts = TILED[case]
    _check(_chain(n, cuts), assembled=True)


NOT_TILED = {
    "gap": (5, [S(0, 2), S(3, 5)], "zeros"),
    "overlap": (5, [S(0, 3), S(2, 5)], "zeros"),
    "one_short": (5, [S(0, 2), S(2, 4)], "zeros"),
    "from_the_end": (5, [S(None, -1), S(-1, None)], "zeros"),
    "not_zeros": (4, [S(0, 2), S(2, 4)], "input"),
    "repeated_row": (2, [0, 0, 1], "zeros"),
}


@pytest.mark.parametrize("case", sorted(NOT_TILED))
def test_updates_that_do_not_tile_zeros_stay(case):
    n, cuts, base = NOT_TILED[case]
    _check(_chain(n, cuts, base), assembled=False)


# --- gradients with symbolic lengths -------------------------------------------------
def gates(x, w):
    """LSTM-like: blocks of one array, read back by slices of a length."""
    b = x.shape[0]
    g = np.concatenate([x, np.sin(x), x * x]) * 1.5
    s = np.tanh(g[0:2 * b])
    return np.sum(s[0:b] * s[b:2 * b] * g[2 * b:3 * b] * w)


def stacked(x, w):
    """Rows of a stack, and a loop carrying the stack."""
    h = np.stack([x, w])
    for _ in range(3):
        h = np.stack([np.tanh(h[1] * w), h[0] * x])
    return np.sum(h * h)


def fixed_rows(x, w):
    """Three rows of a (3, n) array: the first axis has a fixed length."""
    m = np.stack([x, w, x * w])
    return np.sum(np.sin(m[0]) * m[1] + m[2] * m[0])


@pytest.mark.parametrize("fn", [gates, stacked, fixed_rows], ids=["gates", "stacked", "fixed_rows"])
def test_gradients_through_assembled_cotangents(fn):
    g = wg.grad(fn, argnums=(0, 1), engine="source")
    check_two_argument_grad(fn, g, (3, 5), 1)
    # no array of zeros is made to be added into block by block
    made = re.findall(r"^ *(\w+) = np\.zeros\(", g.source, re.M)
    assert not [m for m in made if re.search(rf"^ *{m}\[.*\] \+= ", g.source, re.M)], g.source
    assert "np.concatenate(" in g.source.split("# reverse sweep")[1], g.source


# --- scaled placements summed into an accumulator (ScaleLower) --------------------
F64, I64 = np.dtype("float64"), np.dtype("int64")
N = 7


# (index params, v's shape, the dynamic operands' avals, their values)
INDEXES = {
    "slice": ((slice(None, -1, None),), (N - 1,), [], []),
    "step": ((slice(1, None, 2),), (3,), [], []),
    "int": ((2,), (), [], []),
    "dynamic": ((DYN,), (), [Aval((), I64)], [np.int64(4)]),
    "array": ((np.array([0, 3, 3, 6]),), (4,), [], []),
}


def _scaled(row, order, index, scale):
    """``acc + row(c, index_add(0, v, i))`` in the operand ``order``."""
    idx, vshape, dyn_avals, _ = INDEXES[index]
    acc, v = Var(Aval((N,), F64), "acc"), Var(Aval(vshape, F64), "v")
    dyn = [Var(a, f"i{k}") for k, a in enumerate(dyn_avals)]
    c = Var(Aval((), F64), "c") if scale == "var" else Lit(scale)
    placed, q, out = (Var(Aval((N,), F64), n) for n in ("placed", "q", "out"))
    ops = [placed, c] if order == "placed_first" else [c, placed]
    eqns = [Eqn(PRIMITIVES["index_add"], [Lit(np.zeros(N)), v, *dyn], [placed], {"idx": idx}),
            Eqn(PRIMITIVES[row], ops, [q], {}),
            Eqn(PRIMITIVES["add_any"], [acc, q], [out], {})]
    inputs = [acc, v, *dyn] + ([c] if scale == "var" else [])
    return Program(inputs, eqns, [out], name="scaled")


def _args(index, scale, rng):
    _, vshape, _, dyn = INDEXES[index]
    return [rng.standard_normal(N), rng.standard_normal(vshape), *dyn] + \
        ([np.float64(0.3)] if scale == "var" else [])


def _placements(prog):
    """Placements into a literal of zeros left in the lowered Program."""
    found = []
    for e in prog.eqns:
        if e.prim.name == "index_add" and isinstance(e.inputs[0], Lit):
            found.append(e)
        for sub in sub_programs(e):
            found += _placements(sub)
    return found


def _compare(prog, args):
    want = interpret(prog, *args)
    got = python_function(prog)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0.0)
        assert np.array_equal(np.isnan(g), np.isnan(w))


CASES = [(row, order) for row in ("mul", "div") for order in ("placed_first", "placed_second")
         if not (row == "div" and order == "placed_second")]


@pytest.mark.parametrize("index", sorted(INDEXES))
@pytest.mark.parametrize("row, order", CASES, ids=[f"{r}-{o}" for r, o in CASES])
def test_a_scaled_placement_goes_into_the_accumulator(row, order, index):
    prog = _scaled(row, order, index, 0.25)
    low = lower(prog)
    assert not _placements(low.program), str(low.program)
    # the accumulator is the caller's array: copied once, then added into
    assert [e.prim.name for e in low.program.eqns] == [row, "index_add"], str(low.program)
    args = _args(index, 0.25, np.random.default_rng(0))
    before = [np.array(a, copy=True) for a in args]
    _compare(prog, args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)        # the caller's arrays are untouched


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("scale", [np.inf, np.nan, "var"], ids=["inf", "nan", "variable"])
@pytest.mark.parametrize("row, order", CASES, ids=[f"{r}-{o}" for r, o in CASES])
def test_a_scale_that_may_not_be_finite_keeps_the_dense_form(row, order, scale):
    prog = _scaled(row, order, "slice", scale)
    low = lower(prog)
    assert _placements(low.program), str(low.program)
    _compare(prog, _args("slice", scale, np.random.default_rng(1)))


# --- gradients: loops that read shifted slices, scaled ------------------------------------
def rk_shift(x, s0):
    """A Runge-Kutta-like step on ``y' = x * shift(y)`` (GradBench's ode)."""
    y = s0
    for _ in range(4):
        k1 = x * np.concatenate([np.ones(1), y[:-1]])
        k2 = x * np.concatenate([np.ones(1), (y + 0.05 * k1)[:-1]])
        y = y + 0.1 / 2 * (k1 + k2)
    return np.sum(y * y)


def stencil_scaled(u, w):
    for _ in range(3):
        u = u + 0.2 * (np.concatenate([u[1:], np.zeros(1)]) - u) / 3.0 + w[1:-1].sum()
    return np.sum(np.sin(u))


def strided(x, w):
    acc = 0.0
    for k in range(3):
        acc = acc + np.sum(np.cos(x[::2] * w[k]) * 0.5) + np.sum(x[1:] / 4.0 * x[:-1])
    return acc


@pytest.mark.parametrize("fn", [rk_shift, stencil_scaled, strided],
                         ids=["rk_shift", "stencil_scaled", "strided"])
def test_gradients_of_scaled_shifts(fn):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    g = wg.grad(fn, argnums=(0, 1), engine="source")
    got = g(a, b)
    assert_close(got, wg.grad(fn, argnums=(0, 1), engine="trace")(a, b), AD_VS_AD_RTOL_F64)
    ta, tb = rng.standard_normal(6), rng.standard_normal(6)
    assert_close(float(np.sum(got[0] * ta) + np.sum(got[1] * tb)),
                 fd_jvp(fn, (a, b), (ta, tb)), PROGRAM_RTOL_F64)


def test_the_runge_kutta_sweep_makes_no_zeros():
    """The reverse sweep of ``rk_shift`` adds each transposed shift into its
    accumulator: no array of zeros is made inside the loop."""
    g = wg.grad(rk_shift, argnums=0, engine="source")
    g(np.ones(6), np.zeros(6))
    body = g.source.split("# reverse sweep")[1]
    # the loop, from its ``for`` statement (comments quote the user's code: left out)
    loop = "\n".join(line.split("#")[0] for line in body[body.index("\n    for "):].splitlines())
    assert "np.zeros(" not in loop, g.source
