"""The names of generated code: identifiers for the listing's names, and
the namespace the code runs in (helpers of ``python.emit``/``python.codegen``).

A ``Namespace`` binds ``np``, the impls of primitives called by name, named
constants and the outside objects the code reads; every name it binds is
listed in the generated file's header, so a reader knows where each comes
from. Helper names yield to variable names (a variable called ``np`` makes
the module ``numpy``), never the reverse, so the code keeps the listing's
names.

Layer: backends.
"""
from __future__ import annotations

import builtins
import importlib
import inspect
import keyword
import re
import sys
import textwrap

import numpy as np

from ...core.errors import WengertError
from ...core.ir import Ident, Role, aval_of, label

__all__ = ["CodegenError", "Namespace", "named_write", "role_side", "names_of"]


class CodegenError(WengertError, ValueError):
    """A Program that cannot be turned into Python source.

    Cause: an internal limit of the code generator (a primitive with no way to
    be written); it should not reach users.

    Fix: report it with the function that raised it; meanwhile
    ``engine="trace"`` needs no generated code.
    """


# names the generated code reads from builtins: a variable may not shadow them
_BUILTINS_USED = {"range", "int", "slice", "abs", "float", "bool", "complex", "max"}


def _sanitize(name):
    ident = re.sub(r"\W", "_", name) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident) or ident in _BUILTINS_USED:
        ident += "_"
    return ident


class Namespace:
    """Identifiers of the listing's names, and the values the code reads
    (with the header comment saying where each comes from)."""

    def __init__(self, var_names):
        self.idents = {}                       # listing name -> identifier
        self.taken = set(var_names) | _BUILTINS_USED
        self.namespace = {}                    # holds every bound value, so ids stay valid
        self.header = []
        self._bound = {}                       # Ident(value) -> name, for reuse
        self._consts = 0
        self.defined = {}                      # name -> the text of a function defined above

    @property
    def np(self):
        """The name of the numpy module, bound when first used."""
        return self.bind(("np", "numpy", "np_"), np, "numpy")

    # --- names ---------------------------------------------------------------
    def ident(self, name):
        """The identifier of a listing name: the name itself when it is a
        valid one (almost always), else a sanitized, still unique form."""
        ident = self.idents.get(name)
        if ident is None:
            ident = _sanitize(name)
            if ident != name:
                base, k = ident, 0
                while ident in self.taken:
                    k += 1
                    ident = f"{base}_{k}"
            self.taken.add(ident)
            self.idents[name] = ident
        return ident

    def fresh(self, *preferred):
        """The first of ``preferred`` (then ``preferred[0]_1``...) that no
        variable, earlier binding, keyword or builtin uses."""
        cands = [_sanitize(p) for p in preferred]
        k = 0
        while True:
            for name in cands:
                if not (name in self.taken or keyword.iskeyword(name) or hasattr(builtins, name)):
                    self.taken.add(name)
                    return name
            k += 1
            cands = [f"{_sanitize(preferred[0])}_{k}"]

    def bind(self, preferred, value, note):
        """Bind ``value`` in the namespace (once) and return its name; the
        name is the first free one of ``preferred`` (a tuple, or one name)."""
        name = self._bound.get(Ident(value))
        if name is None:
            name = self.fresh(*((preferred,) if isinstance(preferred, str) else preferred))
            self.namespace[name] = value
            self._bound[Ident(value)] = name
            self.header.append(f"#   {name} = {note}")
        return name

    # --- the outside world (primitives/host.py) ----------------------------------
    def outside(self, ref):
        """The text reading ``ref`` (a ``host.EnvRef``) when the code runs:
        ``items.W`` for a global of module ``items``, ``cell_W.cell_contents``
        for a closure variable, ``rng.normal`` for an argument's method."""
        if ref.kind == "globals" and ref.label:
            module = sys.modules[ref.label]
            root = self.bind((ref.label.split(".")[-1], f"module_{ref.label.split('.')[-1]}"),
                             module, f"module {ref.label}")
        elif ref.kind == "globals":
            root = self.bind("globals_", ref.root, "the function's globals")
            return ref.text(root)
        elif ref.kind == "cell":
            root = self.bind(f"cell_{ref.label}", ref.root, f"closure cell of {ref.label}")
        else:
            root = self.bind(ref.label, ref.root, f"argument {ref.label} "
                             f"({type(ref.root).__name__}, the same object at every call)")
        return ref.text(root)

    def define(self, fn, deps=(), twin=None):
        """The name of ``fn``, a function of wengert's written with NumPy alone (it reads
        ``np``, ``math``, ``scipy`` and the functions and constants ``deps``: a constant is
        a pair ``(name, value)``), defined in the generated file above the code, its text
        taken from wengert's source (``DefinedCall``); ``twin``, its spelling for numba
        (which a writer for numba calls instead)."""
        for f in tuple(deps) + (fn,):
            name = f[0] if isinstance(f, tuple) else f.__name__
            if name in self.defined:
                continue
            if name in self.taken:
                raise CodegenError(f"a variable of the program is named {name!r}, the "
                                   "name of a function the generated code defines")
            # a constant the functions read: (name, value)
            text = (f"{name} = {f[1]!r}\n" if isinstance(f, tuple)
                    else textwrap.dedent(inspect.getsource(f)))
            for module in ("math", "scipy", "sys"):
                if re.search(rf"\b{module}\.", text) and module not in self.namespace:
                    self.namespace[module] = importlib.import_module(module)
                    self.header.append(f"#   {module} = module {module}")
            np_name = self.np
            if np_name != "np":
                text = re.sub(r"\bnp\.", f"{np_name}.", text)
            self.defined[name] = text
        return fn.__name__

    def impl(self, prim):
        return self.bind((prim.name, f"{prim.name}_impl"), prim.impl,
                         f"PRIMITIVES[{prim.name!r}].impl")

    def const(self, value):
        name = self._bound.get(Ident(value))
        if name is not None:
            return name
        while f"c{self._consts}" in self.taken:
            self._consts += 1
        note = (f"constant {aval_of(value).short()}" if isinstance(value, np.ndarray)
                else f"constant {getattr(value, '__qualname__', type(value).__name__)}")
        name = self.bind(f"c{self._consts}", value, note)
        self._consts += 1
        return name


def named_write(em, eqn, p, ins, lines, defs, target):
    """The statements of ``eqn`` written in place into its operand ``p``
    (``lines``: the row's, ending ``result = target``), naming the value they
    make (STYLE.md: a variable holds one value in one role). The result takes
    the target's name where both are nameless temporaries or versions of one
    variable (``v0 += b1``; ``ct_x[i] += v``, no ``ct_x_1 = ct_x`` and back in
    each step of a loop); an elementwise write into a value of another name is
    one statement naming its result, ``h = np.tanh(v0, out=v0)``; any other
    keeps ``result = target``, which ``coalesce`` merges."""
    out, tv = eqn.outputs[0], eqn.inputs[p]
    same = (not out.name and not tv.name and role_side(out) is role_side(tv)) or (
        out.name and label(out.name, out.role) == label(tv.name, tv.role))
    if same:
        em.idents[defs[0]] = target
        return lines[:-1]
    ufunc = getattr(eqn.prim.lower, "ufunc", None)
    if ufunc is not None and len(lines) == 2:
        return [f"{lines[-1].split(' = ')[0]} = {em.ufunc_into(ufunc.__name__, ins, target)}"]
    return lines


def role_side(v):
    """Which side of a reverse sweep a variable is on: a cotangent, or anything else (a
    nameless tangent is recorded as a value; a residual is the value it is)."""
    return Role.COTANGENT if v.role is Role.COTANGENT else Role.VALUE


def names_of(var_of):
    """What ``coalesce`` needs of each identifier: its ``Var``'s user name with
    its role's prefix (``label``: "" for a nameless temporary), its aval and its
    role (``_role``)."""
    return {ident: (label(v.name, v.role), v.aval, role_side(v)) for ident, v in var_of.items()}
