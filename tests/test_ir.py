"""The Program IR: ``verify`` accepts well-formed programs and rejects
unbound, rebound and wrong-arity ones; printing is deterministic and its
exact text is fixed (goldens built from STYLE.md section 3)."""
from __future__ import annotations

import numpy as np
import pytest

import wengert
from wengert.core.ir import Aval, Eqn, Lit, Program, ProgramError, Var, verify
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


# --- verify: accepted ---------------------------------------------------------
def test_verify_accepts_and_returns_a_well_formed_program():
    prog = style_example()
    assert verify(prog) is prog


def test_verify_accepts_literals_and_literal_outputs():
    x = vec()
    y = vec()
    prog = Program([x], [Eqn(MUL, [Lit(2.0), x], [y], {})], [y, Lit(np.ones(3))])
    assert verify(prog) is prog


def test_verify_accepts_any_operand_count_for_variadic_primitives():
    assert CONCAT.nargs is None
    a, b, c = vec(2), vec(3), vec(1)
    out = vec(6)
    prog = Program([a, b, c], [Eqn(CONCAT, [a, b, c], [out], {"axis": 0})], [out])
    assert verify(prog) is prog


def test_verify_accepts_a_traced_program():
    prog = wengert.make_program(lambda x, y: x * y + np.sin(x), 0.5, np.ones(3))
    assert verify(prog) is prog
    assert [e.prim.name for e in prog.eqns] == ["mul", "sin", "add"]


# --- verify: rejected ---------------------------------------------------------
def test_verify_rejects_an_unbound_operand():
    x, ghost, y = scalar(), scalar(), scalar()
    prog = Program([x], [Eqn(MUL, [x, ghost], [y], {})], [y])
    with pytest.raises(ProgramError, match="used before it is defined"):
        verify(prog)


def test_verify_rejects_use_before_definition():
    x, a, b = scalar(), scalar(), scalar()
    prog = Program([x], [Eqn(SIN, [a], [b], {}), Eqn(NEG, [x], [a], {})], [b])
    with pytest.raises(ProgramError, match=r"equation 0 \(sin\).*used before it is defined"):
        verify(prog)


def test_verify_rejects_an_unbound_output():
    x, y, ghost = scalar(), scalar(), scalar()
    prog = Program([x], [Eqn(SIN, [x], [y], {})], [ghost])
    with pytest.raises(ProgramError, match="output.*used before it is defined"):
        verify(prog)


def test_verify_rejects_a_variable_bound_by_two_equations():
    x, y = scalar(), scalar()
    prog = Program([x], [Eqn(SIN, [x], [y], {}), Eqn(NEG, [x], [y], {})], [y])
    with pytest.raises(ProgramError, match=r"equation 1 \(neg\).*defined twice"):
        verify(prog)


def test_verify_rejects_rebinding_an_input():
    x = scalar()
    prog = Program([x], [Eqn(SIN, [x], [x], {})], [x])
    with pytest.raises(ProgramError, match="defined twice"):
        verify(prog)


def test_verify_rejects_a_repeated_input():
    x, y = scalar(), scalar()
    prog = Program([x, x], [Eqn(SIN, [x], [y], {})], [y])
    with pytest.raises(ProgramError, match="input.*defined twice"):
        verify(prog)


def test_verify_rejects_both_outputs_of_dup_being_one_variable():
    x, a = vec(), vec()
    prog = Program([x], [Eqn(DUP, [x], [a, a], {})], [a])
    with pytest.raises(ProgramError, match=r"\(dup\).*defined twice"):
        verify(prog)


@pytest.mark.parametrize("prim_name,n_in", [("sin", 2), ("mul", 1), ("mul", 3), ("neg", 0)],
                         ids=["sin_2", "mul_1", "mul_3", "neg_0"])
def test_verify_rejects_wrong_arity(prim_name, n_in):
    prim = PRIMITIVES[prim_name]
    xs = [scalar() for _ in range(n_in)]
    y = scalar()
    prog = Program(xs, [Eqn(prim, xs, [y], {})], [y])
    with pytest.raises(ProgramError, match=f"takes {prim.nargs} operands, has {n_in}"):
        verify(prog)


def test_verify_rejects_an_operand_that_is_neither_var_nor_lit():
    x, y = scalar(), scalar()
    prog = Program([x], [Eqn(MUL, [x, 2.0], [y], {})], [y])
    with pytest.raises(ProgramError, match="neither Var nor Lit"):
        verify(prog)


def test_verify_rejects_a_literal_as_a_definition():
    x = scalar()
    prog = Program([x], [Eqn(SIN, [x], [Lit(1.0)], {})], [x])
    with pytest.raises(ProgramError, match="not a Var"):
        verify(prog)


def _holder(sub):
    """An equation carrying ``sub`` in its params, as structured control flow does."""
    x, y = scalar(), scalar()
    return Program([x], [Eqn(SIN, [x], [y], {"body": sub})], [y], name="outer")


def test_verify_checks_sub_programs():
    a, ghost, b = scalar(), scalar(), scalar()
    bad = Program([a], [Eqn(MUL, [a, ghost], [b], {})], [b], name="body")
    with pytest.raises(ProgramError, match="body: equation 0"):
        verify(_holder(bad))
    a2, b2 = scalar(), scalar()
    good = Program([a2], [Eqn(SIN, [a2], [b2], {})], [b2], name="body")
    assert verify(_holder(good)) is not None


def test_sub_programs_do_not_see_the_enclosing_variables():
    x, y, a, b = scalar(), scalar(), scalar(), scalar()
    body = Program([a], [Eqn(MUL, [a, x], [b], {})], [b], name="body")   # x is outer
    prog = Program([x], [Eqn(SIN, [x], [y], {"body": body})], [y])
    with pytest.raises(ProgramError, match="body.*used before it is defined"):
        verify(prog)


def test_verify_does_not_mutate_the_program():
    prog = style_example()
    before = (list(prog.inputs), list(prog.eqns), list(prog.outputs), str(prog))
    verify(prog)
    assert (list(prog.inputs), list(prog.eqns), list(prog.outputs), str(prog)) == before


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
