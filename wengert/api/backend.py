"""The ``backend`` option: what turns a source-engine derivative's Program
into a function.

    backend="python"   python.codegen: readable Python and NumPy, exec'd (default)
    backend="numba"    numba.codegen: the same code in numba's subset, numba.njit

The stages meet here: a Program is lowered (``lower``) with the options of the backend's
code writer, and the backend writes the lowered Program (``python_function``). Both load
when the first code is written, not when wengert is imported (``stage``: the one place the
api imports them, by name), so a program that never generates code never loads them.

``Target`` carries the choice from the public API to ``api.compiled``:
``Target.compile(prog)`` gives the generated function. With numba, a
construct numba cannot compile (refused up front by ``numba.codegen``, or by
numba's typing at the first call) makes that function the Python
backend's, with one ``NumbaFallbackWarning`` per user function naming the
construct and the function's file:line; ``fallback=False`` raises
``NumbaCompileError`` instead.

Layer: api.
"""
from __future__ import annotations

import importlib
import warnings

from ..core.errors import BackendError, NumbaFallbackWarning, user_function, where_defined
from .fallback import Seen

__all__ = ["BACKENDS", "Target", "target_of", "check_backend", "python_function", "stage"]

BACKENDS = ("python", "numba")

# the user functions whose fallback to Python was reported, the latest ones
_WARNED = Seen(4096)


_STAGES = {}


def stage(name):
    """The module ``wengert.<name>`` of a stage after the transforms (``"lower"``,
    ``"backends.python.codegen"``, ``"backends.numba.codegen"``,
    ``"backends.numba.compiled"``), imported the first time code is written."""
    module = _STAGES.get(name)
    if module is None:
        module = _STAGES[name] = importlib.import_module(f"..{name}", __package__)
    return module


def python_function(prog, name=None, like=None, lazy=False):
    """The Python backend's function of ``prog``: lowered for its writer, then written;
    ``like``: the position of an input of another array library (Dask, CuPy), whose
    code holds no Python floats standing in for its 0-d arrays (``x.item()`` reads a
    value) and makes its arrays like that input (``lazy``: a library that computes
    only when asked, Dask: no branch on a value)."""
    writer = stage("backends.python.codegen")
    options = dict(writer.CodeWriter.LOWERING, **({} if like is None else {"floats": False}))
    return writer.codegen(stage("lower").lower(prog, **options), name, like=like, lazy=lazy)


def check_backend(backend, engine, fallback=True):
    """Refuse an unknown backend, and numba where no code is generated."""
    if backend not in BACKENDS:
        raise BackendError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if not isinstance(fallback, bool):
        raise BackendError(f"fallback must be True or False, got {fallback!r}")
    if backend == "numba":
        if engine == "trace":
            raise BackendError(
                "backend='numba' compiles the code the source engine generates, and the trace "
                "engine generates none; use engine='source' (or 'auto') with it, or leave "
                "backend='python'")
        stage("backends.numba.compiled").load_numba()     # a missing numba is said now


def backend_options(backend, fallback):
    """The keyword options a recipe keeps (only when not the defaults, so
    the recipes of Python-backend transforms read as before)."""
    opts = {}
    if backend != "python":
        opts["backend"] = backend
    if not fallback:
        opts["fallback"] = False
    return opts


class Target:
    """A backend that is not the default: its ``name``, whether it falls
    back (``fallback``) and the user's function (``fun``, for messages)."""

    __slots__ = ("name", "fallback", "fun")

    def __init__(self, name, fallback, fun):
        self.name, self.fallback, self.fun = name, fallback, fun

    def compile(self, prog):
        """The generated function of ``prog`` (already simplified)."""
        numba = stage("backends.numba.codegen")
        try:
            return numba.numba_codegen(stage("lower").lower(prog, **numba.NumbaWriter.LOWERING),
                                       lambda construct: self.fall_back(construct, prog).fn)
        except numba.NumbaUnsupported as err:
            return self.fall_back(err.construct, prog)

    def fall_back(self, construct, prog):
        """The Python backend's function of ``prog``, after one warning; or
        the error of ``fallback=False``."""
        where = where_defined(self.fun) or "<unknown>"
        if not self.fallback:
            raise stage("backends.numba.codegen").refuse(construct, where)
        user = user_function(self.fun)
        key = (where, getattr(user, "__qualname__", None))
        if _WARNED.add(key):
            name = getattr(user, "__qualname__", None) or getattr(self.fun, "__name__", "?")
            file, _, line = where.rpartition(":")
            warnings.warn_explicit(
                f"wengert: numba cannot compile the code of {name} ({where}): {construct}; "
                "running the Python backend for it instead (backend='numba', fallback=False "
                "raises here)", NumbaFallbackWarning, file or where,
                int(line) if line.isdigit() else 0)
        return python_function(prog)


def target_of(backend, fallback, fun):
    """The ``Target`` of a transform's options, or None for Python."""
    return None if backend == "python" else Target(backend, fallback, fun)
