"""Program -> text, in the seeds' style: ``v = prim[params] (args)``.

Names are given at print time, in order of appearance, from a variable's
user name and role (``ir.label``: ``p``, ``d_p`` for its tangent, ``ct_p``
for its cotangent), made unique with ``_1``...; a variable with no user name
gets a role prefix and a counter: ``t`` tangents, ``ct`` cotangents, ``r``
residuals, else ``x`` for inputs and ``v`` for the body. Printing twice
gives the same text; nothing depends on ``id()`` or set order.

``walk`` assigns the names (one ``Namer`` for a whole nested program, so a
sub-program's names never clash with its host's) and yields the listing's
events; ``format_program`` and ``backends.pycodegen`` both consume it, so the
generated Python has the listing's names.

Layer: core.
"""
from __future__ import annotations

import numpy as np

from .atoms import Lit, Role, TracerBase, aval_of, label

__all__ = ["format_program", "format_literal", "Namer", "walk", "reverse_sweep_start"]


def format_literal(val):
    if isinstance(val, TracerBase):
        return f"<traced {val.aval.short()}>"
    if isinstance(val, (bool, np.bool_)):
        return repr(bool(val))
    if isinstance(val, (int, np.integer)):
        return repr(int(val))
    if isinstance(val, (float, np.floating)):
        return repr(float(val))
    if isinstance(val, np.ndarray):
        if val.ndim == 0:
            return format_literal(val[()])
        if val.size <= 4:
            return np.array2string(val, separator=", ").replace("\n", "")
        return f"<const {aval_of(val).short()}>"
    return repr(val)


def _format_index_part(p):
    if isinstance(p, slice):
        parts = ["" if p.start is None else str(p.start), "" if p.stop is None else str(p.stop)]
        if p.step is not None:
            parts.append(str(p.step))
        return ":".join(parts)
    if p is None:
        return "None"
    if p is Ellipsis:
        return "..."
    if isinstance(p, np.ndarray):
        return format_literal(p) if p.size <= 4 else f"<index i64[{','.join(map(str, p.shape))}]>"
    return repr(p)


def _programs_in(params, program_type):
    """The sub-programs among an equation's params (a body, a tuple of
    branches): the values of the listing's own Program type. (Printing sits
    below ``ir``, whose ``Program.__str__`` calls it, so it knows the type
    from the program it prints, not by importing it.)"""
    for v in params.values():
        if type(v) is program_type:
            yield v
        elif isinstance(v, (tuple, list)):
            yield from (p for p in v if type(p) is program_type)


def _format_param(k, v, program_type):
    if k == "idx" and isinstance(v, tuple):
        return f"{k}=[{', '.join(_format_index_part(p) for p in v)}]"
    if type(v) is program_type:
        return f"{k}={v.name}"
    if isinstance(v, tuple) and v and all(type(p) is program_type for p in v):
        return f"{k}=({', '.join(p.name for p in v)})"
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return f"{k}={np.dtype(v).name}"
    if callable(v):
        return f"{k}={getattr(v, '__name__', type(v).__name__)}"
    if isinstance(v, (np.ndarray, float, np.generic)):
        return f"{k}={format_literal(v)}"
    if isinstance(v, (tuple, list)) and any(isinstance(e, (np.ndarray, np.generic)) for e in v):
        return f"{k}=(" + ", ".join(format_literal(e) for e in v) + ")"
    return f"{k}={v!r}"


class Namer:
    """Print-time names: a variable's label (its user name with its role's
    prefix, ``ir.label``), made unique with ``_1``..., or, for a variable
    with no user name, its role's prefix (``t``, ``ct``, ``r``; else ``x``
    for an input, ``v`` for a body value) and a counter shared by the whole
    listing. One Namer names a whole nested program (``walk``), so a
    sub-program's names never clash with the enclosing program's;
    ``python.codegen`` uses the same names."""

    def __init__(self):
        self.names = {}
        self.used = set()
        self.counter = 0

    def define(self, v, prefix):
        """Name ``v``, defined as an input (``prefix`` "x") or in a body ("v")."""
        stem = label(v.name, v.role)
        if stem:
            name, k = stem, 0
            while name in self.used:
                k += 1
                name = f"{stem}_{k}"
        else:
            prefix = v.role.value or prefix
            name = f"{prefix}{self.counter}"
            self.counter += 1
            while name in self.used:
                name = f"{prefix}{self.counter}"
                self.counter += 1
        self.used.add(name)
        self.names[v] = name
        return name

    def uses(self, atoms):
        """The names of operands (``None`` for a literal)."""
        return [None if isinstance(x, Lit) else self.names.get(x, "?undefined")
                for x in atoms]


def _sub_aliases(eqn, namer, program_type):
    """(sub-program, {input position: name}) for each sub-program of ``eqn``:
    read-only inputs bound to a variable operand share its name, as the
    row's ``print`` rule says (a branch's operands, a loop's constants)."""
    if eqn.prim.print is not None:
        return eqn.prim.print(eqn, namer.uses)
    return ((sub, {}) for sub in _programs_in(eqn.params, program_type))


def walk(prog, namer, aliases=None):
    """Name ``prog``'s variables in listing order, yielding the listing's
    events ``(kind, item, uses, defs)`` as it goes (``uses``: operand names,
    ``None`` for a literal; ``defs``: the names just defined):

    * ``("program", prog, [], in_names)`` where a (sub-)program starts;
    * ``("eqn", eqn, in_names, out_names)`` for each equation, after the
      sub-programs its params hold (in ``sub_programs`` order);
    * ``("return", prog, out_names, [])`` where a (sub-)program ends.

    A sub-program held twice is walked, and named, afresh each time. Inputs
    of a sub-program that only reads them (a branch's operands, a loop's
    constants) take the names of the variables passed in (``aliases``)."""
    aliases = aliases or {}
    yield "program", prog, [], [aliases[k] if k in aliases else namer.define(v, "x")
                                for k, v in enumerate(prog.inputs)]
    for k, v in enumerate(prog.inputs):
        if k in aliases:
            namer.names[v] = aliases[k]
    for eqn in prog.eqns:
        for sub, sub_aliases in _sub_aliases(eqn, namer, type(prog)):
            yield from walk(sub, namer, sub_aliases)
        uses = namer.uses(eqn.inputs)
        yield "eqn", eqn, uses, [namer.define(v, "v") for v in eqn.outputs]
    yield "return", prog, namer.uses(prog.outputs), []


def reverse_sweep_start(prog):
    """Where a vjp's reverse sweep starts in ``prog``: the index of the first
    top-level equation that defines a cotangent (``vjp_program`` stages the
    forward sweep first, then the transposed one, whose values are
    cotangents); None when there is no forward sweep before it (a
    transposed linear Program) or no cotangent at all (a primal or a jvp)."""
    for k, eqn in enumerate(prog.eqns):
        if any(v.role is Role.COTANGENT for v in eqn.outputs):
            return k or None
    return None


def _atoms(atoms, names):
    return ", ".join(format_literal(x.val) if n is None else n for x, n in zip(atoms, names))


def format_program(prog, indent=""):
    lines, pads = [], []
    for kind, item, uses, defs in walk(prog, Namer()):
        if kind == "program":
            pads.append(indent + "  " * len(pads))
            args = ", ".join(f"{n}: {v.aval.short()}" for n, v in zip(defs, item.inputs))
            lines.append(f"{pads[-1]}program {item.name}({args}):")
        elif kind == "eqn":
            lhs = defs[0] if len(defs) == 1 else "(" + ", ".join(defs) + ")"
            params = ", ".join(_format_param(k, item.params[k], type(prog))
                               for k in sorted(item.params))
            params = f"[{params}]" if params else ""
            ins = _atoms(item.inputs, uses)
            lines.append(f"{pads[-1]}  {lhs} = {item.prim.name}{params} ({ins})")
        else:
            lines.append(f"{pads.pop()}  return ({_atoms(item.outputs, uses)})")
    return "\n".join(lines)
