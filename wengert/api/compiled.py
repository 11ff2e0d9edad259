"""One generated specialisation of a source-engine derivative: the derived
Program, its generated function (Python, or numba's: ``api.backend``), and
the result's structure.

``Compiled(prog, out_tree)`` simplifies the Program, generates its code
(unless it closes over an outer transformation's values: then it is only
ever replayed into that transformation), and calls it, handing each scalar
output out as the type its aval says. ``same_code`` says whether two
generated functions are the same code (``api.source`` trusts code for new
shapes only when staging it again elsewhere gives the same).

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.dims import sizes_of
from ..core.ir import Lit, sub_programs
from ..core.atoms import as_library
from ..core.primitive import TracerBase
from ..core.trace import eval_program
from ..core.pytree import unflatten
from ..transforms.simplify import simplify
from .backend import python_function

__all__ = ["Compiled", "compile_program", "holds_tracers", "same_code", "scalar_type"]


def compile_program(prog, target=None, like=None, lazy=False):
    """The generated function of a Program: Python, or the ``target``
    backend's (``api.backend.Target``); on another library's arrays (``like``:
    the position of such an input) Python's, which calls NumPy's functions on
    them and so theirs (numba compiles NumPy's arrays only)."""
    if like is not None:
        return python_function(prog, like=like, lazy=lazy)
    return python_function(prog) if target is None else target.compile(prog)


def holds_tracers(prog):
    for e in prog.eqns:
        if any(isinstance(x, Lit) and isinstance(x.val, TracerBase) for x in e.inputs):
            return True
        if any(holds_tracers(p) for p in sub_programs(e)):
            return True
    return any(isinstance(x, Lit) and isinstance(x.val, TracerBase) for x in prog.outputs)


class Compiled:
    """One specialisation: the derived Program, its generated function, and
    how to rebuild the result's structure."""

    def __init__(self, prog, out_tree, shapes=None, target=None, like=None, lazy=False):
        # replayed into an outer transformation: the Program simplified as a
        # Program (every equation's operands fit its rule); the code is made
        # from it simplified as code, where NumPy's broadcasting may stand in
        # for an explicit broadcast (``simplify(copies=True)``)
        self.program = simplify(prog)
        self.like = like        # the position of an input of another library (Dask, CuPy), or
                                # the place outside the function (``host.EnvRef``) of one
        self.shapes = shapes    # the input sizes it was staged at (``dims.sizes_of``), when
                                # its code holds for others too (symbolic sizes)
        self.respecialize = None    # dyn -> outputs, staged at dyn's own shapes
        # code of symbolic sizes is offered at other sizes once staged at a second
        # size the same (``source._verify``): till then not ``verified``; ``outside``,
        # the places it read outside the function (the same at both stagings)
        self.verified, self.outside = True, None
        # a Program that closes over an outer transformation's values is only
        # ever replayed into that transformation, never turned into code
        self.fn = None if holds_tracers(prog) else compile_program(simplify(prog, copies=True),
                                                                   target, like, lazy)
        self.run = None if self.fn is None else self.fn.fn      # the plain function
        # what it read from outside the function must be as it was (``source.env``)
        self.env_guards, self.env_check = [], None
        self.out_tree = out_tree
        self.single = out_tree.kind == "leaf"
        self.flat_tuple = out_tree.kind == "tuple" and all(
            c.kind == "leaf" for c in out_tree.children)
        # a scalar output is handed out as the type its aval says: a Python
        # float for a Python float's derivative, a NumPy scalar otherwise,
        # whichever path through the code's branches computed it
        self.casts = [(k, scalar_type(o.aval)) for k, o in enumerate(self.program.outputs)
                      if o.aval.shape == () and like is None]   # a 0-d Dask array stays lazy
        self.finish = self._finisher()

    def valid(self):
        """Whether the globals, closure values and outside objects the code
        was made from still pass its checks (see ``source.env``)."""
        return self.env_check is None or self.env_check()

    @property
    def source(self):
        if self.fn is None:
            raise AttributeError("this derivative closes over the variables of an outer "
                                 "transformation, so it has no code of its own")
        return self.fn.source

    def __call__(self, dyn):
        if self.fn is None or any(isinstance(x, TracerBase) for x in dyn):
            # under an outer transformation the Program is replayed into it; its
            # params hold the lengths it was staged at
            if self.shapes is not None and sizes_of(dyn) != self.shapes:
                return self.respecialize(dyn)
            outs = tuple(eval_program(self.program, dyn))
            return outs[0] if self.single else self.result(outs, cast=False)
        if type(self.like) is int:      # another library's code: its arrays out (``as_library``)
            return self.result(tuple(as_library(o, dyn[self.like]) for o in self.run(*dyn)))
        return self.result(self.run(*dyn))

    def result(self, outs, cast=True):
        """The structured result of the generated code's output tuple."""
        if cast and self.casts:
            if self.finish is not None:
                return self.finish(outs)
            outs = list(outs)
            for k, typ in self.casts:
                if type(outs[k]) is not typ:
                    outs[k] = typ(outs[k])
        if self.single:
            return outs[0]
        return tuple(outs) if self.flat_tuple else unflatten(self.out_tree, list(outs))

    def _finisher(self):
        """For a single output or a flat tuple: one function that casts and
        structures the outputs (the per-call path of the common case)."""
        if not (self.single or self.flat_tuple) or not self.casts:
            return None
        ns, typed = {}, dict(self.casts)
        parts = []
        for k in range(len(self.program.outputs)):
            if k in typed:
                ns[f"t{k}"] = typed[k]
                parts.append(f"(o[{k}] if type(o[{k}]) is t{k} else t{k}(o[{k}]))")
            else:
                parts.append(f"o[{k}]")
        body = parts[0] if self.single else "(" + ", ".join(parts) + ",)"
        return eval(f"lambda o: {body}", ns)       # the text is made here, from indices


def scalar_type(aval):
    """The Python or NumPy scalar type of a value of 0-d ``aval``."""
    if aval.weak:
        return {"f": float, "i": int, "u": int, "b": bool, "c": complex}[aval.dtype.kind]
    return aval.dtype.type


def same_code(a, b):
    """Whether two generated functions are the same code: the same text, and
    the same values bound to the names it reads."""
    if a is None or b is None or a.source != b.source or a.namespace.keys() != b.namespace.keys():
        return False
    for name, x in a.namespace.items():
        y = b.namespace[name]
        if x is y or name in ("__builtins__", a.fn.__name__):
            continue
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape
                    and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)):
                return False
            continue
        try:
            if not bool(x == y):
                return False
        except Exception:   # noqa: BLE001 -- values that do not compare are not the same
            return False
    return True
