"""The Program (``wengert/core/ir.py``): ``verify`` accepts well-formed
programs and rejects unbound, rebound and wrong-arity ones, sub-programs
included, and never mutates what it checks.
"""
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
