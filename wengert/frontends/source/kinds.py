"""What kind of thing a value found outside a converted function is: the
predicates ``source.env`` classifies by, with no state and no recording.

* plain data (``is_plain``): a number, string or None, or a tuple/list/dict
  of them, at most ``MAX_PLAIN`` elements: folded into generated code and
  compared with the value found at each call;
* the code's vocabulary (``is_vocabulary``): functions, ufuncs, and the
  modules and classes of NumPy, SciPy, the math modules and wengert
  (``LIBRARY_ROOTS``): used while the code is generated, checked by identity;
* an impure callable (``is_impure``): a random generator's method, ``print``,
  the functions of ``random``, ``time``, ``os``...: a call made at each call
  of the generated code, never while it is generated. ``is_rng`` and
  ``IO_MODULES`` name the generators (called on a copy, so no draw is
  consumed) and the modules whose calls do I/O (refused: their result's type
  cannot be found without making the call).

Layer: frontends.
"""
from __future__ import annotations

import builtins
import sys
import types

import numpy as np

__all__ = ["is_plain", "is_vocabulary", "is_impure", "is_rng", "IO_MODULES"]


# --- what a value found outside is -------------------------------------------------
PLAIN = (type(None), bool, int, float, complex, str, bytes, np.bool_, np.number, np.dtype,
          slice, type(Ellipsis))
MAX_PLAIN = 10_000       # elements of a plain container compared at each call


def is_plain(v, budget=None):
    """A number, string or None, or a tuple/list/dict of them (a list or
    dict of at most ``MAX_PLAIN`` elements in all)."""
    budget = budget if budget is not None else [MAX_PLAIN]
    if isinstance(v, PLAIN):
        return True
    if type(v) in (tuple, list):
        budget[0] -= len(v)
        return budget[0] >= 0 and all(is_plain(e, budget) for e in v)
    if type(v) is dict:
        budget[0] -= len(v)
        return budget[0] >= 0 and all(is_plain(k, budget) and is_plain(e, budget)
                                      for k, e in v.items())
    return False


LIBRARY_ROOTS = frozenset({"numpy", "scipy", "math", "cmath", "builtins", "wengert", "functools",
                            "operator", "itertools", "collections", "typing", "numbers",
                            "abc", "_abc", "enum", "types"})


def _root(name):
    return (name or "").split(".")[0]


def is_vocabulary(v):
    """What the code is made of, fixed for the life of a program and checked
    by identity: functions (the user's are converted where they are called),
    ufuncs, and the modules and classes of NumPy, SciPy, the math modules and
    wengert. A user's module or class holds data (``config.SCALE``,
    ``Model.dtype``): it is an ``EnvObject``, its attributes read where they
    live."""
    if isinstance(v, types.ModuleType):
        return _root(v.__name__) in LIBRARY_ROOTS
    if isinstance(v, type):
        return _root(v.__module__) in LIBRARY_ROOTS
    if isinstance(v, (types.FunctionType, np.ufunc)):
        return True
    if isinstance(v, types.BuiltinFunctionType):
        owner = getattr(v, "__self__", None)
        return owner is None or isinstance(owner, types.ModuleType)
    if isinstance(v, types.MethodType):
        return False
    mod = _root(getattr(type(v), "__module__", ""))
    return mod in ("wengert", "functools") or (callable(v) and mod in ("numpy", "scipy"))


# --- callables that act outside -------------------------------------------------------
def is_rng(owner):
    """Whether ``owner`` is a random generator: NumPy's (``Generator``, ``RandomState``,
    a bit generator, a ``SeedSequence``) or the ``random`` module's. Read from the modules
    already imported: a generator exists only once its module is, and importing them here
    would cost every ``import wengert`` a tenth of its time."""
    np_random = sys.modules.get("numpy.random")
    if np_random is not None and isinstance(owner, (
            np_random.RandomState, np_random.Generator, np_random.BitGenerator,
            np_random.SeedSequence)):
        return True
    stdlib = sys.modules.get("random")
    return stdlib is not None and isinstance(owner, stdlib.Random)


IMPURE_MODULES = frozenset({"random", "time", "os", "io", "sys", "datetime", "secrets", "uuid",
                             "numpy.random", "numpy.random.mtrand", "shutil", "socket",
                             # where os's and io's C functions say they live
                             "posix", "nt", "_io", "_socket", "_random"})


# modules whose functions read or write files, streams and the like
IO_MODULES = frozenset({"posix", "nt", "_io", "io", "os", "sys", "shutil", "socket", "_socket"})


def is_impure(f):
    """Whether calling ``f`` acts outside or gives a new value each time: a
    random generator's method (``np.random.*`` included), a SciPy
    distribution's ``rvs``, ``print``, and functions of ``random``, ``time``,
    ``os`` and the like."""
    if f is builtins.print or f is builtins.input or f is builtins.open:
        return True
    owner = getattr(f, "__self__", None)
    if is_rng(owner):
        return True
    if getattr(f, "__name__", None) == "rvs":
        return True
    mod = getattr(f, "__module__", None) or ""
    return isinstance(f, (types.BuiltinFunctionType, types.FunctionType)) and (
        mod in IMPURE_MODULES or mod.startswith("numpy.random"))
