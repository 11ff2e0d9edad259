"""Program -> Graphviz DOT: variables as ellipses, equations as boxes,
edges from operands to equations to results. Sub-programs of control flow
are clusters. Names are the printed program's.

Layer: backends.
"""
from __future__ import annotations

from ..core.ir import Lit, sub_programs
from ..core.printing import Namer, format_literal

__all__ = ["to_dot"]


def _quote(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(programs, title=""):
    """DOT text for one Program or a list of them (one cluster each)."""
    if not isinstance(programs, (list, tuple)):
        programs = [programs]
    lines = ["digraph wengert {", "  rankdir=TB;", '  node [fontname="monospace"];']
    if title:
        lines.append(f"  label={_quote(title)};")
    counter = [0]
    for k, prog in enumerate(programs):
        namer = Namer()
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f"    label={_quote(prog.name)};")
        _emit(prog, namer, lines, counter, f"p{k}_", "    ")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _emit(prog, namer, lines, counter, prefix, indent):
    ids = {}

    def node_of(x):
        if isinstance(x, Lit):
            counter[0] += 1
            nid = f"{prefix}lit{counter[0]}"
            lines.append(f"{indent}{nid} [label={_quote(format_literal(x.val))}, shape=plaintext];")
            return nid
        return ids[x]

    for v in prog.inputs:
        name = namer.define(v, "x")
        ids[v] = f"{prefix}{name}"
        lines.append(f"{indent}{prefix}{name} [label={_quote(name + ': ' + v.aval.short())}, "
                     "shape=ellipse, style=bold];")
    for j, eqn in enumerate(prog.eqns):
        counter[0] += 1
        eid = f"{prefix}eq{counter[0]}"
        subs = list(sub_programs(eqn))
        label = eqn.prim.name + (f" [{', '.join(p.name for p in subs)}]" if subs else "")
        lines.append(f"{indent}{eid} [label={_quote(label)}, shape=box];")
        for x in eqn.inputs:
            lines.append(f"{indent}{node_of(x)} -> {eid};")
        for v in eqn.outputs:
            name = namer.define(v, "v")
            ids[v] = f"{prefix}{name}"
            lines.append(f"{indent}{prefix}{name} [label={_quote(name)}, shape=ellipse];")
            lines.append(f"{indent}{eid} -> {prefix}{name};")
        for i, sub in enumerate(subs):
            counter[0] += 1
            lines.append(f"{indent}subgraph cluster_{prefix}{counter[0]} {{")
            lines.append(f"{indent}  label={_quote(sub.name)}; style=dashed;")
            _emit(sub, namer, lines, counter, f"{prefix}s{counter[0]}_", indent + "  ")
            lines.append(f"{indent}}}")
    counter[0] += 1
    out = f"{prefix}out{counter[0]}"
    lines.append(f"{indent}{out} [label=\"return\", shape=doublecircle];")
    for x in prog.outputs:
        lines.append(f"{indent}{node_of(x)} -> {out};")
