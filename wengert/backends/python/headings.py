"""The comments of generated code that head each block with the user's line it computes
(``core.where``): which kind each of a Program's top-level equations gets, and the
headings left with nothing under them; and the user's line of each statement no heading
covers (a forward sweep, a primal), kept beside the text (``mark``, ``unmark``).

Layer: backends.
"""
from __future__ import annotations

import re

from ...core.ir import Role, sub_programs
from ...core.where import HEADING

__all__ = ["heading_kinds", "drop_empty_headings", "mark", "unmark"]

# a statement's user line while the code is written: a trailing ``#@k`` (``wheres[k]``)
_MARK = re.compile(r"  #@(\d+)$")
# lines that compute nothing (and that ``coalesce`` reads by their text): never marked
_BARE = re.compile(r"^\s*($|#|(else|elif|try|except|finally)\b)")


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


def mark(lines, where, wheres):
    """``lines`` (an equation's code, no heading over it) with each statement not marked
    yet ending in ``#@k``, ``wheres[k]`` its user line ``where``."""
    k = len(wheres)
    wheres.append(where)
    return [line if _BARE.match(line) or _MARK.search(line) else f"{line}  #@{k}"
            for line in lines]


def unmark(source, wheres):
    """(``source`` without the marks, {its line (from 1): (file, line)})."""
    lines, found = source.splitlines(), {}
    for n, line in enumerate(lines):
        m = _MARK.search(line)
        if m:
            lines[n] = line[:m.start()]
            found[n + 1] = wheres[int(m.group(1))]
    return "\n".join(lines) + "\n", found
