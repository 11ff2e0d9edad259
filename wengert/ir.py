"""The Program: a Wengert list of single assignments.

Invariants (checked by :func:`verify`):

* a Program has input variables, a list of equations and outputs;
* an equation is ``outs = prim[params] (ins)``; every input is a ``Var`` defined
  earlier (a program input or an earlier equation's output) or a ``Lit``;
* every ``Var`` is defined exactly once; outputs are ``Var`` or ``Lit``;
* structured control flow is an equation whose params hold sub-Programs
  (``cond``, ``for_loop``, ``while_loop``): they are verified recursively and
  see only their own inputs (closure conversion is explicit).

This module is data only: no NumPy evaluation, no transformation.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from .context import current as _current_context
from .ident import Ident

__all__ = ["Aval", "Var", "Role", "label", "derive", "Lit", "Eqn", "Program", "verify", "aval_of",
           "ProgramError", "Ident",
           "sub_programs", "programs_in", "acts", "has_effect", "runs_at_call"]


class ProgramError(ValueError):
    """A Program is malformed (raised by :func:`verify`)."""


class Aval:
    """Abstract value: shape and dtype. ``weak`` marks Python scalars, whose
    dtype yields to an array operand's (NumPy's NEP 50 promotion). A ``None``
    in the shape is a length known only at run time (a while loop's stack of
    per-iteration values)."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=False):
        self.shape = shape if type(shape) is tuple else tuple(
            None if d is None else int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak = weak

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __eq__(self, other):
        return (isinstance(other, Aval) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    @property
    def python_type(self):
        """``float``/``int``/``bool``/``complex`` for a Python scalar's aval
        (weak, shape ``()``), else None: a value stored per loop iteration
        in an array reads back as a NumPy scalar, which promotes differently,
        so it is read back as this type."""
        if self.weak and self.shape == ():
            return _PYTHON_TYPE[self.dtype.kind]
        return None

    def short(self):
        """``f64[3,4]`` style, as printed in Program signatures."""
        kind = {"f": "f", "i": "i", "u": "u", "b": "bool", "c": "c"}.get(self.dtype.kind, self.dtype.kind)
        name = kind if kind == "bool" else f"{kind}{self.dtype.itemsize * 8}"
        return f"{name}[{','.join('?' if d is None else str(d) for d in self.shape)}]"

    def __repr__(self):
        return f"Aval({self.short()})"


_PYTHON_TYPE = {"f": float, "i": int, "u": int, "b": bool, "c": complex}
_WEAK_FLOAT = Aval((), np.float64, weak=True)


def aval_of(x):
    """The Aval of a concrete value, a tracer, or a Python scalar."""
    t = type(x)
    if t is np.ndarray or t is np.float64:
        ctx = _current_context()
        if ctx is not None and ctx.shaped:  # a constant of symbolic shape (``context``)
            shape = ctx.shape_of(x)
            if shape is not None:
                return Aval(shape, x.dtype)
        return Aval(x.shape, x.dtype)
    if t is float:
        return _WEAK_FLOAT
    av = getattr(x, "aval", None)
    if isinstance(av, Aval):
        return av
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        return Aval((), np.bool_, weak=isinstance(x, bool))
    if isinstance(x, int):
        return Aval((), np.int64, weak=True)
    if isinstance(x, float):
        return Aval((), np.float64, weak=True)
    if isinstance(x, complex) and not isinstance(x, np.generic):
        # (np.complex128 subclasses complex but is strongly typed)
        return Aval((), np.complex128, weak=True)
    if isinstance(x, (np.ndarray, np.generic)):
        return Aval(x.shape, x.dtype)
    fail = getattr(x, "fail", None)       # an unassigned variable of converted code
    if callable(fail):                      # says which, and where
        fail()
    raise TypeError(f"not an array value: {type(x).__name__}")


class Role(enum.Enum):
    """What a variable is to differentiation. With the user's name it gives
    the printed name (``label``); whether a primal value is an input or a
    body value is where it is defined, not a role. The value is the prefix
    of a nameless variable's print-time name."""

    VALUE = ""          # a primal value
    TANGENT = "t"
    COTANGENT = "ct"
    RESIDUAL = "r"      # a primal value a linear program reads


_LABEL_PREFIX = {Role.VALUE: "", Role.TANGENT: "d_", Role.COTANGENT: "ct_", Role.RESIDUAL: ""}


def label(name, role):
    """The name a variable prints as, before it is made unique: its user
    name with its role's prefix (the tangent of ``p`` is ``d_p``, its
    cotangent ``ct_p``, its residual ``p``), or "" when it has no user name
    (it is then named by a role prefix and a counter at print time)."""
    return _LABEL_PREFIX[role] + name if name else ""


def derive(name, role, new):
    """``(name, role)`` of the ``new``-role counterpart of a variable named
    ``name`` in role ``role``: the tangent of ``p`` is ``(p, TANGENT)``; the
    tangent of tangent ``d_p`` is ``(d_p, TANGENT)`` (``d_d_p``); the
    cotangent of ``p`` or of its tangent ``d_p`` is ``(p, COTANGENT)``, as
    transposition maps ``p``'s tangent to ``p``'s cotangent."""
    if role is Role.VALUE or (role is Role.TANGENT and new is Role.COTANGENT):
        return name, new
    return label(name, role), new


class Var:
    """A variable, identified by object identity. ``name``: the user's name
    it was kept under by the source engine ("" for traced values);
    ``role``: what it is to differentiation (``Role``). Printed names are
    derived from both (``label``)."""

    __slots__ = ("aval", "name", "role")

    def __init__(self, aval, name="", role=Role.VALUE):
        self.aval = aval
        self.name = name
        self.role = role

    def __repr__(self):
        return f"Var({label(self.name, self.role) or hex(id(self))[-4:]}: {self.aval.short()})"


class Lit:
    """A literal operand: a Python scalar, an array constant, or (while a
    higher-order derivative is being traced) an outer trace's value."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval=None):
        self.val = val
        # ``aval``: a more general one than the value's own (lengths known
        # only at run time: a slot a branch leaves empty)
        self.aval = aval_of(val) if aval is None else aval

    def __repr__(self):
        return f"Lit({self.val!r})"


class Eqn:
    """``outputs = prim[params] (inputs)``."""

    __slots__ = ("prim", "inputs", "outputs", "params")

    def __init__(self, prim, inputs, outputs, params):
        self.prim = prim
        self.inputs = inputs if type(inputs) is tuple else tuple(inputs)
        self.outputs = outputs if type(outputs) is tuple else tuple(outputs)
        self.params = params

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
        from .printing import format_program   # printing depends on ir, not the reverse
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
