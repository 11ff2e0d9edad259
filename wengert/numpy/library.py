"""The library table: every NumPy and SciPy callable wengert differentiates,
and the wrapper over primitives it becomes on traced values.

A call reaches its wrapper in one of three ways:

* ``FUNCTIONS``: NumPy functions that dispatch through ``__array_function__``
  (``np.sum(x)``, ``np.stack([a, b])``): both engines;
* ``UFUNCS``: ufuncs, NumPy's and ``scipy.special``'s, through
  ``__array_ufunc__``: both engines;
* ``CALLS``: callables that dispatch through no protocol (``np.array``,
  ``scipy.special.logsumexp``, ``scipy.stats.norm.logpdf``): the source
  engine calls the wrapper in place of the callable. The trace engine never
  sees these calls (NumPy converts the traced value with ``__array__``
  first), and its error says so.

Each family module (``numpy.functions``, ``numpy.ufuncs``, ...) defines any
of ``FUNCTIONS``, ``UFUNCS`` and ``CALLS`` as dicts from the library's
callable to the wrapper, and may define ``NAMES`` (callable -> the name a
user writes, ``"scipy.special.gammaln"``) where the callable's own
``__module__``/``__name__`` do not give it, and ``COMPLEX_OK``: the
callables whose wrappers were audited for complex operands. A wrapper
composed of primitives that each accept complex values can still be wrong
on them (``norm`` as ``sqrt(sum(x * x))`` wants ``|x|``), so a complex
operand reaches only the audited ones (``complex_ok``); any other raises
``UnsupportedDtypeError`` naming the function. The table is built once, at
import (``numpy`` enters NumPy's families: this module imports no
family, so a family may run user code through the recorder, whose tracers
look their wrappers up here); SciPy's families are imported the first time a SciPy callable is
looked up, so wengert itself needs NumPy only.

Layer: numpy.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading

import numpy as np

from ..core.primitive import is_complex
from ..core.errors import UnsupportedDtypeError

__all__ = ["FUNCTIONS", "UFUNCS", "CALLS", "function_rule", "ufunc_rule", "call_rule",
           "add_family", "display_name", "entries", "complex_ok", "check_complex", "complex_callables"]

# the families over SciPy: module names under wengert.primitives, imported
# when a SciPy callable is first looked up (and only if SciPy is installed)
_SCIPY_FAMILIES = ("linalg", "special", "stats", "multivariate")

FUNCTIONS: dict = {}
UFUNCS: dict = {}
CALLS: dict = {}
_NAMES: dict = {}
_COMPLEX_OK: set = set()
_scipy_lock = threading.Lock()
_scipy_state = {"loaded": False}


_RESOLVERS: list = []


def add_family(module):
    """Enter a family module's tables (``numpy`` does so for NumPy's
    at import; ``load_scipy`` for SciPy's when first needed)."""
    for table, attr in ((FUNCTIONS, "FUNCTIONS"), (UFUNCS, "UFUNCS"), (CALLS, "CALLS")):
        table.update(getattr(module, attr, {}))
    _NAMES.update(getattr(module, "NAMES", {}))
    # ``RESOLVE(f)``: the wrapper of a callable no key can name, made per
    # object (the methods of ``scipy.stats.norm(0, 1)``, a frozen
    # distribution), or None
    if hasattr(module, "RESOLVE"):
        _RESOLVERS.append(module.RESOLVE)
    _COMPLEX_OK.update(getattr(module, "COMPLEX_OK", ()))


def load_scipy():
    """Import SciPy's families (once); False when SciPy is not installed."""
    if _scipy_state["loaded"]:
        return True
    with _scipy_lock:
        if not _scipy_state["loaded"]:
            try:
                found = importlib.util.find_spec("scipy") is not None
            except ImportError:         # an import hook that refuses it
                found = False
            if not found:
                return False
            for name in _SCIPY_FAMILIES:
                add_family(importlib.import_module(f"..scipy.{name}", __package__))
            _scipy_state["loaded"] = True
    return True


def _from_scipy(f):
    mod = getattr(f, "__module__", None) or getattr(getattr(f, "__self__", None), "__module__",
                                                    None) or ""
    if mod.split(".")[0] == "scipy" or type(f).__module__.split(".")[0] == "scipy":
        return True
    # a ufunc names no module (scipy.special.gammaln is a numpy.ufunc): one
    # not in the table may be SciPy's once SciPy has been imported
    return isinstance(f, np.ufunc) and "scipy" in sys.modules


def _lookup(table, f):
    try:
        rule = table.get(f)
    except TypeError:           # an unhashable callable has no entry
        return None
    if rule is None and not _scipy_state["loaded"] and _from_scipy(f) and load_scipy():
        rule = table.get(f)
    return rule


def function_rule(func):
    """The wrapper of a NumPy function dispatched by ``__array_function__``, or None."""
    return _lookup(FUNCTIONS, func)


def ufunc_rule(ufunc):
    """The wrapper of a ufunc (NumPy's or SciPy's), or None."""
    return _lookup(UFUNCS, ufunc)


def call_rule(f):
    """The wrapper the source engine calls in place of ``f``, or None."""
    rule = _lookup(CALLS, f)
    if rule is None and _scipy_state["loaded"]:
        for resolve in _RESOLVERS:
            rule = resolve(f)
            if rule is not None:
                break
    return rule


def display_name(f):
    """The name a user writes for ``f``: ``np.sum``, ``np.linalg.norm``,
    ``scipy.special.gammaln``, ``scipy.stats.norm.logpdf``."""
    if f in _NAMES:
        return _NAMES[f]
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", repr(f))
    mod = getattr(f, "__module__", None)
    if mod is None or type(f).__name__ == "ufunc":
        mod = _ufunc_module(f, name)
    mod = "np" + mod[len("numpy"):] if mod.split(".")[0] == "numpy" else mod
    # NumPy's functions live in private modules (numpy._core.fromnumeric)
    mod = ".".join(p for p in mod.split(".") if not p.startswith("_"))
    return f"{mod}.{name}"


def _ufunc_module(f, name):
    """The module a ufunc is imported from: NumPy's own, or ``scipy.special``
    (whose ufuncs carry no ``__module__``) where it is SciPy's."""
    if getattr(np, name, None) is f:
        return "numpy"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is f:
        return "scipy.special"
    return "numpy"


def entries():
    """Every (display name, callable, kind) of the table, SciPy's included
    where SciPy is installed, sorted by name: what the coverage table lists."""
    load_scipy()
    rows = {}
    for kind, table in (("function", FUNCTIONS), ("ufunc", UFUNCS), ("call", CALLS)):
        for f in table:
            rows.setdefault(display_name(f), (f, kind))
    return sorted((name, f, kind) for name, (f, kind) in rows.items())


def complex_callables():
    """The callables whose wrappers were audited for complex operands."""
    return frozenset(_COMPLEX_OK)


def complex_ok(f):
    """Whether ``f``'s wrapper was audited for complex operands (``COMPLEX_OK``)."""
    try:
        return f in _COMPLEX_OK
    except TypeError:           # an unhashable callable has no entry
        return False


def check_complex(f, args, kwargs=None):
    """Raise ``UnsupportedDtypeError`` where a complex operand (an argument,
    or an entry of a list or tuple argument: ``np.stack([a, b])``) reaches
    a wrapper not audited for complex values."""
    if f in _COMPLEX_OK:
        return
    for a in (*args, *(kwargs or {}).values()):
        if is_complex(a) or (type(a) in (list, tuple) and any(map(is_complex, a))):
            raise UnsupportedDtypeError.complex_operand(display_name(f))
