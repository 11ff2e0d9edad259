"""Every rule on the row: the passes ask a primitive's row (``dce``,
``simplify``, ``print``, ``emit``) and name no primitive.

The pass modules' source is read with ``ast``: a pass names a primitive when
it compares a ``.name`` (or a variable holding ``eqn.prim.name``) with a
string, looks a name up in a table keyed by primitive names, reads
``PRIMITIVES[...]`` with a literal, or imports a primitive object (``*_p``).
The arithmetic rewrites of ``simplify`` and the operator table of ``pyemit``
still name the arithmetic primitives they rewrite or spell (``ARITHMETIC``);
no other primitive may be named, and every control-flow row carries the rules
the passes ask for.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

from wengert.primitives import PRIMITIVES
from wengert.primitives.rules import EmitRule

ROOT = pathlib.Path(__file__).resolve().parent.parent / "wengert"
PASSES = ("transforms/simplify.py", "printing.py", "backends/interpret.py",
          "backends/pycodegen.py", "backends/pyemit.py")

# what the passes may still name: arithmetic whose algebra (simplify) or
# Python spelling (pyemit's operators and NumPy calls) is written in the pass
ARITHMETIC = {
    "transforms/simplify.py": {"add", "add_any", "sub", "mul", "div", "neg", "pow"},
    "backends/pyemit.py": {
        "add", "add_any", "sub", "mul", "div", "neg", "less", "less_equal", "greater",
        "greater_equal", "equal", "not_equal", "pow", "remainder", "floor_divide", "env_read",
        "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin", "reshape",
        "transpose", "concatenate", "cumsum", "round", "convert", "einsum", "getitem",
        "zeros_like", "ones_like", "slogdet"},
}


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
    allowed = ARITHMETIC.get(module, set())
    assert found <= allowed, f"{module} names {sorted(found - allowed)}: ask the row instead"
    # the list stays exact: a name moved onto its row leaves it
    assert allowed <= found, f"{module} no longer names {sorted(allowed - found)}"


@pytest.mark.parametrize("name", ["cond", "for_loop", "while_loop"])
def test_control_rows_carry_the_pass_rules(name):
    prim = PRIMITIVES[name]
    assert prim.print is not None and prim.simplify is not None
    assert (prim.dce is not None) == (name != "cond")     # a cond has no parts to drop


@pytest.mark.parametrize("name", ["cond", "for_loop", "while_loop", "checkpoint",
                                  "checkpointed_loop", "loop_forward", "loop_reverse",
                                  "checkpoint_lin", "loop_lin", "host_call"])
def test_rows_the_code_generator_cannot_spell_write_their_statements(name):
    """A primitive holding sub-Programs (or a call made at run time) has an
    ``emit`` rule that writes its statements: the code generator has no
    other way to write it."""
    rule = PRIMITIVES[name].emit
    assert rule is not None and type(rule).statements is not EmitRule.statements
