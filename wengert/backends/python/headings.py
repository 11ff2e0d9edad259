"""The comments of generated code that head each block with the user's line it computes
(``core.where``): which kind each of a Program's top-level equations gets, and the
headings left with nothing under them.

Layer: backends.
"""
from __future__ import annotations

from ...core.ir import Role, sub_programs
from ...core.where import HEADING

__all__ = ["heading_kinds", "drop_empty_headings"]


def heading_kinds(prog, start):
    """``kind(k)``: the heading comments of ``prog``'s top-level equation ``k``
    (``core.where.heading``): "grad" in a reverse sweep (from ``start``, or
    everywhere in a transposed Program), "jvp" in forward-mode code (it holds
    tangents), None in a primal Program and a forward sweep."""
    roles = set()

    def scan(p):
        for e in p.eqns:
            roles.update(v.role for v in e.outputs)
            for sub in sub_programs(e):
                scan(sub)
    scan(prog)
    roles.update(v.role for v in prog.inputs)
    if Role.COTANGENT in roles:
        first = 0 if start is None else start
        return lambda k: "grad" if k >= first else None
    if Role.TANGENT in roles:
        return lambda k: "jvp"
    return lambda k: None


def drop_empty_headings(lines):
    """Heading comments with no statement under them go (a block whose work the
    lowering moved elsewhere)."""
    keep = []
    for k, line in enumerate(lines):
        if HEADING.match(line):
            nxt = next((x for x in lines[k + 1:] if x.strip()), "")
            indent = len(line) - len(line.lstrip())
            if HEADING.match(nxt) and len(nxt) - len(nxt.lstrip()) == indent:
                continue
            if not nxt or len(nxt) - len(nxt.lstrip()) < indent:
                continue
        keep.append(line)
    lines[:] = keep
