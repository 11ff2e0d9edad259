"""Every rule on the row (``wengert/core/pass_rules.py``, ``core/rules.py``):
the passes ask a primitive's row (``dce``, ``simplify``, ``print``,
``emit``) and name no primitive.

The pass modules' source is read with ``ast``: a pass names a primitive when
it compares a ``.name`` (or a variable holding ``eqn.prim.name``) with a
string, looks a name up in a table keyed by primitive names, reads
``PRIMITIVES[...]`` with a literal, or imports a primitive object (``*_p``).
No pass module may name one: the arithmetic's algebra (``simplify``) and
Python spelling (``backends/python/emit.py``) are on the rows too, and every
control-flow row carries the rules the passes ask for.
"""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

from wengert.backends.interpret import interpret
from wengert.api.backend import python_function
from wengert.core.ir import Aval, Eqn, Lit, Program, Var, verify
from wengert.primitives import PRIMITIVES
from wengert.core.pass_rules import BinaryOperator, UnaryMinus
from wengert.core.rules import EmitRule
from wengert.core.shapes import python_operator
from wengert.transforms.simplify import simplify

ROOT = pathlib.Path(__file__).resolve().parents[2] / "wengert"
# the passes: simplify, printing and every backend module (the code generator
# and whatever it is split into)
PASSES = ("transforms/simplify.py", "core/printing.py",
          *sorted(str(p.relative_to(ROOT)) for d in ("backends", "lower")
                  for p in (ROOT / d).rglob("*.py")))



def _strings(node, tables):
    """The string constants ``node`` stands for: a literal, a tuple/set/list
    of them, or a module-level table (set or dict keys) of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return set().union(*[_strings(e, tables) for e in node.elts])
    if isinstance(node, ast.Name) and node.id in tables:
        return tables[node.id]
    return set()


def _module_tables(tree):
    """Module-level names bound to a set/frozenset/dict of strings."""
    tables = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") in ("frozenset", "set") \
                and value.args:
            value = value.args[0]
        if isinstance(value, ast.Dict):
            keys = {k.value for k in value.keys if isinstance(k, ast.Constant)
                    and isinstance(k.value, str)}
        else:
            keys = _strings(value, {})
        if keys:
            tables[stmt.targets[0].id] = keys
    return tables


def _is_prim_name(node, name_vars):
    return (isinstance(node, ast.Attribute) and node.attr == "name") or (
        isinstance(node, ast.Name) and node.id in name_vars)


def named_primitives(source):
    """The primitive names a module's source names (see the module docstring)."""
    tree = ast.parse(source)
    tables = _module_tables(tree)
    # variables bound to ``<...>.prim.name`` (``name = eqn.prim.name``), and
    # parameters called ``name`` of functions that are passed one
    name_vars = {"name"}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_prim_name(s, name_vars) for s in sides):
                for s in sides:
                    found |= _strings(s, tables)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in tables and node.args \
                and _is_prim_name(node.args[0], name_vars):
            found |= tables[node.func.value.id]
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id == "PRIMITIVES":
                found |= _strings(node.slice, tables)
            elif node.value.id in tables and _is_prim_name(node.slice, name_vars):
                found |= tables[node.value.id]
        elif isinstance(node, ast.ImportFrom):
            found |= {a.name[:-2] for a in node.names if a.name.endswith("_p")}
    return found & set(PRIMITIVES)


def test_the_detector_sees_each_way_of_naming_a_primitive():
    source = '''
from wengert.primitives.control import for_loop_p
TABLE = {"mul": 1}
SIGNS = frozenset({"add"})
def f(eqn, name):
    if eqn.prim.name == "cond" or name in ("while_loop", "neg") or name in SIGNS:
        return TABLE.get(eqn.prim.name), PRIMITIVES["sub"]
'''
    assert named_primitives(source) == {"for_loop", "cond", "while_loop", "neg", "add",
                                        "mul", "sub"}


@pytest.mark.parametrize("module", PASSES)
def test_a_pass_names_no_primitive(module):
    found = named_primitives((ROOT / module).read_text())
    assert not found, f"{module} names {sorted(found)}: ask the row instead"


@pytest.mark.parametrize("name", ["cond", "for_loop", "while_loop"])
def test_control_rows_carry_the_pass_rules(name):
    prim = PRIMITIVES[name]
    assert prim.print is not None and prim.simplify is not None and prim.dce is not None


# rows the table of cases cannot apply to one equation at a time, and that hold no
# sub-Program: their outputs die with them (env_write, an effect, is never dropped), dce
# needs nothing of its own
_HOLD_NO_PROGRAM = {"env_read", "host_call", "env_write"}


def _rows_holding_programs():
    """The rows with no table cases (``cases.SPECS``): control flow, checkpoints and
    custom rules, whose params hold Programs, save ``_HOLD_NO_PROGRAM``. A row main
    adds without cases lands here, and must bring a dce rule."""
    from cases import SPECS
    return sorted(n for n in PRIMITIVES
                  if not (n in SPECS and SPECS[n].cases) and n not in _HOLD_NO_PROGRAM)


def test_the_rows_holding_programs_are_the_control_rows():
    assert {"cond", "for_loop", "while_loop", "checkpoint", "checkpoint_lin",
            "checkpointed_loop", "loop_forward", "loop_lin", "loop_reverse", "custom_body",
            "custom_lin", "custom_jvp_call", "custom_vjp_call"} <= set(_rows_holding_programs())


@pytest.mark.parametrize("name", _rows_holding_programs())
def test_every_control_row_has_a_dce_rule(name):
    """Issue 27: a row holding sub-Programs prunes them (a ``cond`` once kept the primal
    value ``grad`` throws away, with an ``np.sin`` per element, in every branch)."""
    assert PRIMITIVES[name].dce is not None


@pytest.mark.parametrize("name", ["cond", "for_loop", "while_loop", "checkpoint",
                                  "checkpointed_loop", "loop_forward", "loop_reverse",
                                  "checkpoint_lin", "loop_lin", "host_call",
                                  "checkpointed_while", "while_forward"])
def test_rows_the_code_generator_cannot_spell_write_their_statements(name):
    """A primitive holding sub-Programs (or a call made at run time) has an
    ``emit`` rule that writes its statements: the code generator has no
    other way to write it."""
    rule = PRIMITIVES[name].emit
    assert rule is not None and type(rule).statements is not EmitRule.statements


# --- the arithmetic's rules on its rows -------------------------------------------
SIGNED = [name for name, prim in sorted(PRIMITIVES.items())
          if prim.algebra is not None and prim.algebra.move_sign is not None]
IDENTITY = [name for name, prim in sorted(PRIMITIVES.items())
            if prim.algebra is not None and prim.simplify is not None]
# values where a sign rule could go wrong: signed zeros, infinities, NaN
EDGES = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3e-310])


def _same_bits(got, want):
    """Equal bit for bit, signed zeros included; NaN where the other is NaN
    (IEEE leaves a NaN's sign to the operation)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    nan = np.isnan(want)
    return got.shape == want.shape and np.array_equal(np.isnan(got), nan) \
        and got[~nan].tobytes() == want[~nan].tobytes()


def test_the_rows_carry_the_arithmetic():
    """The rows the old name tables listed: found by their rules now."""
    assert {"add", "add_any", "sub", "mul", "div"} <= set(SIGNED)
    assert {"add", "add_any", "sub", "mul"} <= set(IDENTITY)
    assert PRIMITIVES["neg"].algebra.negation and PRIMITIVES["pow"].simplify is not None


@pytest.mark.parametrize("name", SIGNED)
@pytest.mark.parametrize("negated", [(True, False), (False, True), (True, True)])
def test_a_moved_sign_keeps_every_bit(name, negated):
    """``move_sign`` (simplify with ``copies``) keeps every value bit for bit,
    signed zeros and NaNs included, in the interpreter and generated code;
    a negated second operand is always absorbed or moved."""
    prim, neg = PRIMITIVES[name], PRIMITIVES["neg"]
    aval = Aval(EDGES.shape, np.float64)
    a, b = Var(aval), Var(aval)
    eqns, ins = [], []
    for x, n in zip((a, b), negated):
        if n:
            w = Var(aval)
            eqns.append(Eqn(neg, (x,), (w,), {}))
            x = w
        ins.append(x)
    out = Var(aval)
    prog = Program([a, b], eqns + [Eqn(prim, ins, (out,), {})], [out])
    simple = verify(simplify(prog, copies=True))
    if negated[1]:
        assert str(simple) != str(simplify(prog)), f"{name}: the sign was not moved"
    generated = python_function(simple)
    xs, ys = np.meshgrid(EDGES, EDGES)
    with np.errstate(all="ignore"):
        for x, y in zip(xs, ys):
            want = interpret(prog, x, y)[0]
            assert _same_bits(interpret(simple, x, y)[0], want), (name, x, y)
            assert _same_bits(generated(x, y)[0], want), (name, x, y)


@pytest.mark.parametrize("name", IDENTITY + ["pow"])
@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_an_identity_dropped_keeps_the_values(name, side, value):
    """A row's ``simplify`` rule drops an identity element (``x + 0``,
    ``x * 1``, ``x ** 1``) or absorbs a zero, keeping the value (``==``) and
    the result's shape and dtype."""
    prim = PRIMITIVES[name]
    for aval in (Aval((), np.float64), Aval((3,), np.float32)):
        x, out = Var(aval), Var(aval)
        ins = [x, Lit(value)] if side else [Lit(value), x]
        if name == "add_any":       # its shape rule takes equal shapes and dtypes
            if aval.shape:
                continue
        prog = Program([x], [Eqn(prim, ins, (out,), {})], [out])
        simple = verify(simplify(prog))
        arg = np.asarray([2.5, -1.0, 4.0], np.float32) if aval.shape else 2.5
        want = interpret(prog, arg)[0]
        got = interpret(simple, arg)[0]
        assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
        assert np.array_equal(got, want), (name, side, value)


def test_negation_of_a_negation_is_the_value_in_generated_code():
    neg = PRIMITIVES["neg"]
    x, w, v = Var(Aval((), np.float64)), Var(Aval((), np.float64)), Var(Aval((), np.float64))
    prog = Program([x], [Eqn(neg, (x,), (w,), {}), Eqn(neg, (w,), (v,), {})], [v])
    assert not simplify(prog, copies=True).eqns
    assert len(simplify(prog).eqns) == 2        # printed programs keep the equations


OPERATOR_ROWS = [name for name, prim in sorted(PRIMITIVES.items())
                 if isinstance(prim.emit, (BinaryOperator, UnaryMinus))]


def test_the_operators_are_on_their_rows():
    assert {"add", "add_any", "sub", "mul", "div", "neg", "less", "less_equal", "greater",
            "greater_equal", "equal", "not_equal"} <= set(OPERATOR_ROWS)


@pytest.mark.parametrize("name", OPERATOR_ROWS)
def test_a_row_spelled_as_an_operator_is_that_operator(name):
    """Python's operator is the impl only where the impl *is* Python's
    operator (``python_operator``): on two Python numbers as on arrays, the
    value and its type are the impl's."""
    prim = PRIMITIVES[name]
    assert python_operator(prim.impl), f"{name}: its impl is not Python's operator"
    text = (f"a {prim.emit.op} b" if isinstance(prim.emit, BinaryOperator) else "-a")
    # greater, equal and less pairs in each case (a comparison differs on one)
    cases = [(2.5, -4.0), (2.0, 2.0), (-1.0, 3.0), (3, 2.0),
             (np.array([1.5, -2.0, 0.5]), 0.5),
             (np.float32(1.5), np.array([1.0, 1.5, 3.0], np.float32))]
    for a, b in cases:
        args = (a, b) if prim.nargs == 2 else (a,)
        want = prim.impl(*args)
        got = eval(text, {"a": a, "b": b})      # noqa: S307  (the spelling under test)
        assert type(got) is type(want) and np.array_equal(got, want), (name, a, b)
