"""Identity as a dictionary key (``wengert/core/ident.py``): no table of the
package is keyed by ``id()``, whose value is reused once its object dies (a
later object then read the dead one's entry: Hessians came out wrong this
way).
"""
from __future__ import annotations

import ast
import pathlib

import wengert as wg


PACKAGE = pathlib.Path(wg.__file__).parent


# --- state that outlived the object it was keyed by ------------------------------
def test_no_dictionary_keyed_by_id():
    """``id(obj)`` as a key is reused once ``obj`` dies: a later object then
    reads the dead one's entry (Hessians came out wrong this way). Keys are
    the objects themselves (``Var``, ``Lit``) or ``Ident``, which holds
    its object."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "id"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    # Ident.__hash__ and Var.__repr__
    allowed = {"core/ident.py", "core/atoms.py"}
    assert [o for o in offenders if o.split(":")[0] not in allowed] == []
