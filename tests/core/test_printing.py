"""Printing a Program (``wengert/core/printing.py``): the text is
deterministic and exactly fixed (goldens built from STYLE.md section 3):
names in order of appearance, sorted params, literals, hints made unique.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.core.ir import Aval, Eqn, Lit, Program, Var
from wengert.primitives import PRIMITIVES


F64 = np.float64
SIN, MUL, NEG, DUP = (PRIMITIVES[n] for n in ("sin", "mul", "neg", "dup"))
REDUCE_SUM, CUMSUM, CONCAT = (PRIMITIVES[n] for n in ("reduce_sum", "cumsum", "concatenate"))


def scalar(hint=""):
    return Var(Aval((), F64), hint)


def vec(n=3, hint=""):
    return Var(Aval((n,), F64), hint)


def style_example():
    """STYLE.md section 3's program, built by hand with fresh variables."""
    x0, x1 = scalar(), vec()
    v2, v3, v4 = scalar(), vec(), scalar()
    return Program([x0, x1], [Eqn(SIN, [x0], [v2], {}),
                              Eqn(MUL, [v2, x1], [v3], {}),
                              Eqn(REDUCE_SUM, [v3], [v4], {"axes": (0,)})], [v4], name="f")


# --- printing goldens ---------------------------------------------------------
STYLE_GOLDEN = """\
program f(x0: f64[], x1: f64[3]):
  v2 = sin (x0)
  v3 = mul (v2, x1)
  v4 = reduce_sum[axes=(0,)] (v3)
  return (v4)"""


def test_style_example_prints_exactly():
    assert str(style_example()) == STYLE_GOLDEN


def test_names_follow_order_of_appearance_not_construction():
    # the same program with its Vars created in reverse order prints the same
    v4, v3, v2 = scalar(), vec(), scalar()
    x1, x0 = vec(), scalar()
    prog = Program([x0, x1], [Eqn(SIN, [x0], [v2], {}), Eqn(MUL, [v2, x1], [v3], {}),
                              Eqn(REDUCE_SUM, [v3], [v4], {"axes": (0,)})], [v4], name="f")
    assert str(prog) == STYLE_GOLDEN


def test_golden_changes_when_the_order_changes():
    x0, x1 = scalar(), vec()
    v2, v3, v4 = scalar(), vec(), scalar()
    # swap the input order: the names follow the positions, so the text differs
    prog = Program([x1, x0], [Eqn(SIN, [x0], [v2], {}), Eqn(MUL, [v2, x1], [v3], {}),
                              Eqn(REDUCE_SUM, [v3], [v4], {"axes": (0,)})], [v4], name="f")
    assert str(prog) == """\
program f(x0: f64[3], x1: f64[]):
  v2 = sin (x1)
  v3 = mul (v2, x0)
  v4 = reduce_sum[axes=(0,)] (v3)
  return (v4)"""
    assert str(prog) != STYLE_GOLDEN


def test_multiple_outputs_sorted_params_and_literals():
    x = vec()
    a, b, c, d = vec(), vec(), vec(), vec()
    prog = Program([x], [Eqn(DUP, [x], [a, b], {}),
                         Eqn(CUMSUM, [a], [c], {"reverse": True, "axis": 0}),
                         Eqn(MUL, [Lit(2.0), c], [d], {})],
                   [b, d, Lit(1.5)], name="g")
    assert str(prog) == """\
program g(x0: f64[3]):
  (v1, v2) = dup (x0)
  v3 = cumsum[axis=0, reverse=True] (v1)
  v4 = mul (2.0, v3)
  return (v2, v4, 1.5)"""


def test_array_literals_and_index_params():
    x = Var(Aval((4, 3), F64))
    a, b, c = Var(Aval((2, 3), F64)), Var(Aval((2, 3), F64)), Var(Aval((5,), F64))
    small = np.array([1.0, 2.0, 3.0])
    prog = Program([x], [
        Eqn(PRIMITIVES["getitem"], [x], [a], {"idx": (slice(1, 3), slice(None, None, -1))}),
        Eqn(MUL, [a, Lit(small)], [b], {}),
        Eqn(CONCAT, [Lit(np.zeros(2)), Lit(np.ones(3))], [c], {"axis": 0}),
    ], [b, c], name="lits")
    assert str(prog) == """\
program lits(x0: f64[4,3]):
  v1 = getitem[idx=[1:3, ::-1]] (x0)
  v2 = mul (v1, [1., 2., 3.])
  v3 = concatenate[axis=0] ([0., 0.], [1., 1., 1.])
  return (v2, v3)"""
    big = Program([x], [Eqn(MUL, [x, Lit(np.ones((4, 3)))], [Var(Aval((4, 3), F64))], {})],
                  [x], name="big")
    assert "mul (x0, <const f64[4,3]>)" in str(big)


def test_hints_are_kept_and_made_unique():
    p, p2, q = scalar("p"), scalar("p"), scalar()
    prog = Program([p], [Eqn(NEG, [p], [p2], {}), Eqn(SIN, [p2], [q], {})], [q], name="h")
    assert str(prog) == """\
program h(p: f64[]):
  p_1 = neg (p)
  v0 = sin (p_1)
  return (v0)"""


@pytest.mark.parametrize("aval,text", [
    (Aval((), np.float64), "f64[]"),
    (Aval((2, 3), np.float32), "f32[2,3]"),
    (Aval((4,), np.int64), "i64[4]"),
    (Aval((1,), np.int32), "i32[1]"),
    (Aval((2, 2), np.bool_), "bool[2,2]"),
], ids=["f64_scalar", "f32_matrix", "i64_vector", "i32_vector", "bool_matrix"])
def test_aval_short_form(aval, text):
    assert aval.short() == text


def seed004(x, y):
    return x * y + np.sin(x)


SEED004_GOLDEN = """\
program seed004(x: f64[], y: f64[3]):
  v0 = mul (x, y)
  v1 = sin (x)
  v2 = add (v0, v1)
  return (v2)"""


def test_traced_program_prints_with_parameter_names():
    assert str(wengert.make_program(seed004, 0.5, np.ones(3))) == SEED004_GOLDEN


def test_printing_twice_and_tracing_twice_give_identical_text():
    prog = wengert.make_program(seed004, 0.5, np.ones(3))
    first, second = str(prog), str(prog)
    assert first == second
    again = wengert.make_program(seed004, 0.5, np.ones(3))
    assert again is not prog and str(again) == first
    # the values differ, the program does not
    assert str(wengert.make_program(seed004, -2.0, np.arange(3.0))) == first


def test_pytree_inputs_get_print_time_names():
    def f(p):
        return p["a"] * p["b"]
    prog = wengert.make_program(f, {"a": 1.0, "b": np.ones(2)})
    assert str(prog) == """\
program f(x0: f64[], x1: f64[2]):
  v2 = mul (x0, x1)
  return (v2)"""
