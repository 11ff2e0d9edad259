"""Updates that tile an array of zeros, assembled (``lower_sums.assemble``,
the rows' ``lower.region``/``lower.assemble``): ``ct = np.zeros(n); ct[0:b]
+= u; ct[b:n] += w`` -- the transpose of a concatenation or a stack -- is
``ct = np.concatenate((u, w))``, with no zeros and no adds.

For each way of cutting the first axis (slices in any order, single rows,
both, lengths symbolic or not) the lowered form holds one concatenation and
no update, with the interpreter's values; where the blocks leave a gap,
overlap, start on something other than zeros, count from the end, or tile
a length that another size would not tile, the updates stay. Gradients of
programs that concatenate and stack are checked against the trace engine
and finite differences at several lengths.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.lower import lower
from wengert.api.backend import python_function
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, sub_programs

from wengert.primitives import PRIMITIVES

from checks import check_two_argument_grad

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
