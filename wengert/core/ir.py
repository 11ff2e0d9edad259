"""The Program: a Wengert list of single assignments.

Invariants (checked by :func:`verify`):

* a Program has input variables, a list of equations and outputs;
* an equation is ``outs = prim[params] (ins)``; every input is a ``Var`` defined
  earlier (a program input or an earlier equation's output) or a ``Lit``;
* every ``Var`` is defined exactly once; outputs are ``Var`` or ``Lit``;
* structured control flow is an equation whose params hold sub-Programs
  (``cond``, ``for_loop``, ``while_loop``): they are verified recursively and
  see only their own inputs (closure conversion is explicit).

This module is data only, with the two walks every pass shares: ``dce`` (dead equations
dropped, asking each row's ``dce`` rule) and the structural keys of atoms and equations
(``atom_key``, ``eqn_key``: common subexpressions).

Layer: core.
"""
from __future__ import annotations

import numpy as np

from .atoms import Aval, Lit, Role, Var, aval_of, derive, is_duck_array, label
from .ident import Ident
from .printing import format_program

__all__ = ["Aval", "Var", "Role", "label", "derive", "Lit", "Eqn", "Program", "verify", "aval_of", "is_duck_array",
           "ProgramError", "Ident",
           "sub_programs", "programs_in", "acts", "has_effect", "runs_at_call", "atom_key", "eqn_key", "dce",
           "reached_vars"]


class ProgramError(ValueError):
    """A Program is malformed (raised by :func:`verify`)."""


class Eqn:
    """``outputs = prim[params] (inputs)``. ``where``: ``(filename, lineno)`` of the
    user's line it computes or differentiates (``core.where``), or None; printed only
    in generated code's comments, and named by ``wg.debug_nans`` (``core.debug``)."""

    __slots__ = ("prim", "inputs", "outputs", "params", "where")

    def __init__(self, prim, inputs, outputs, params, where=None):
        self.prim = prim
        self.inputs = inputs if type(inputs) is tuple else tuple(inputs)
        self.outputs = outputs if type(outputs) is tuple else tuple(outputs)
        self.params = params
        self.where = where

    def replace(self, inputs=None, outputs=None, params=None):
        """This equation with other operands, results or params, from the same line."""
        return Eqn(self.prim, self.inputs if inputs is None else inputs,
                   self.outputs if outputs is None else outputs,
                   self.params if params is None else params, self.where)

    def __repr__(self):
        return f"Eqn({self.prim.name}, {len(self.inputs)} in, {len(self.outputs)} out)"


class Program:
    """Inputs, equations, outputs. ``str(prog)`` is the printed listing."""

    __slots__ = ("inputs", "eqns", "outputs", "name", "all_linear")

    def __init__(self, inputs, eqns, outputs, name="f"):
        self.inputs = list(inputs)
        self.eqns = list(eqns)
        self.outputs = list(outputs)
        self.name = name
        self.all_linear = False     # set by linearize: every equation reads a tangent

    @property
    def in_avals(self):
        return [v.aval for v in self.inputs]

    @property
    def out_avals(self):
        return [v.aval for v in self.outputs]

    def __str__(self):
        return format_program(self)

    def __repr__(self):
        return f"<Program {self.name}: {len(self.inputs)} in, {len(self.eqns)} eqns, {len(self.outputs)} out>"


def sub_programs(eqn):
    """The sub-Programs held by a structured control-flow equation."""
    return programs_in(eqn.params)


def programs_in(params):
    """The Programs among an equation's params (a body, a tuple of branches)."""
    for v in params.values():
        if isinstance(v, Program):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from (p for p in v if isinstance(p, Program))


def acts(eqn):
    """Whether ``eqn`` has an effect (a ``host_call``), itself or in a
    Program inside it: it is kept, and run once, whether or not its outputs
    are used."""
    return eqn.prim.effect or any(has_effect(p) for p in sub_programs(eqn))


def has_effect(prog):
    """Whether an equation of ``prog`` has an effect (see ``acts``)."""
    return any(acts(eqn) for eqn in prog.eqns)


def runs_at_call(prog):
    """Whether ``prog`` holds work that must be made at each call: an effect
    (a draw) or a runtime read (a global's value), itself or in a Program
    inside it; such a Program is never computed while code is generated."""
    return any(e.prim.runtime or e.prim.effect or any(runs_at_call(p) for p in sub_programs(e))
               for e in prog.eqns)


def verify(prog):
    """Raise :class:`ProgramError` unless ``prog`` is well formed; return it."""
    defined = set()

    def define(v, where):
        if not isinstance(v, Var):
            raise ProgramError(f"{where}: defines {v!r}, which is not a Var")
        if v in defined:
            raise ProgramError(f"{where}: {v!r} is defined twice")
        defined.add(v)

    def use(x, where):
        if isinstance(x, Lit):
            return
        if not isinstance(x, Var):
            raise ProgramError(f"{where}: operand {x!r} is neither Var nor Lit")
        if x not in defined:
            raise ProgramError(f"{where}: {x!r} is used before it is defined")

    for v in prog.inputs:
        define(v, f"{prog.name}: input")
    for i, eqn in enumerate(prog.eqns):
        where = f"{prog.name}: equation {i} ({eqn.prim.name})"
        nargs = eqn.prim.nargs
        if nargs is not None and len(eqn.inputs) != nargs:
            raise ProgramError(f"{where}: takes {nargs} operands, has {len(eqn.inputs)}")
        for x in eqn.inputs:
            use(x, where)
        for sub in sub_programs(eqn):
            verify(sub)
        for v in eqn.outputs:
            define(v, where)
    for x in prog.outputs:
        use(x, f"{prog.name}: output")
    return prog


# --- what passes share: structural keys and dead-code elimination -------------------
def atom_key(x):
    """A key equal for the same variable and for equal scalar literals."""
    if isinstance(x, Lit):
        if np.ndim(x.val) == 0 and not hasattr(x.val, "_trace"):
            return ("lit", repr(np.asarray(x.val).item()), np.asarray(x.val).dtype.str)
        return ("obj", Ident(x.val))
    return ("var", x)


def _param_key(params):
    try:
        # a place outside the function (host.EnvRef) compares by where it is
        items = tuple(sorted((k, getattr(v, "param_key", None) or repr(v))
                             for k, v in params.items()
                             if not isinstance(v, (np.ndarray, Program))))
        if any(isinstance(v, (np.ndarray, Program)) for v in params.values()):
            return None
        return items
    except TypeError:
        return None


def eqn_key(prim, ins, params, key=atom_key):
    """What makes two equations compute the same values (common
    subexpressions), or None (control flow, params that do not compare, and
    calls with an effect: two random draws are two draws)."""
    if prim.effect or any(has_effect(p) for p in programs_in(params)):
        return None         # a loop or branch that draws: each one draws
    pk = _param_key(params)
    return None if pk is None else (prim.name, tuple(key(x) for x in ins), pk)


def reached_vars(prog, start):
    """The Vars of ``prog`` that a data path from the Var ``start`` reaches
    (itself included; an equation holding sub-Programs counts as one)."""
    reached = {start}
    for e in prog.eqns:
        if any(isinstance(x, Var) and x in reached for x in e.inputs):
            reached.update(e.outputs)
    return reached


def dce(prog):
    """``prog`` without the equations no output needs, and without the parts
    of an equation (a loop's carries) that its row's ``dce`` rule drops."""
    live = {x for x in prog.outputs if not isinstance(x, Lit)}
    kept = []
    for eqn in reversed(prog.eqns):
        if any(v in live for v in eqn.outputs) or acts(eqn):
            if eqn.prim.dce is not None:
                where = eqn.where
                eqn = eqn.prim.dce(eqn, [v in live for v in eqn.outputs], dce)
                if eqn.where is None:
                    eqn.where = where
            kept.append(eqn)
            live.update(x for x in eqn.inputs if not isinstance(x, Lit))
    kept.reverse()
    return Program(prog.inputs, kept, prog.outputs, prog.name)
