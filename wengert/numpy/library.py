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
look their wrappers up here).

SciPy's families load lazily, each when a callable of *its* SciPy module is first looked up
(``load_scipy_for``: the one place wengert imports them, by name, with
``importlib.import_module``): a ``scipy.special`` function loads the ``scipy.special``
family, which imports ``scipy.special`` only (the caller has imported it already), never
``scipy.stats`` or ``scipy.linalg``. A callable that belongs to no SciPy module (a NumPy
ufunc without a rule, ``np.exp`` looked up among the source engine's calls) loads nothing.
So wengert itself needs NumPy only, and a program using one SciPy function pays for one
family.

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
           "add_family", "load_scipy", "load_scipy_for", "scipy_module", "display_name", "entries", "complex_ok", "check_complex", "complex_callables"]

# the families over SciPy, by the SciPy module whose callables they hold: module names
# under wengert.scipy, imported when a callable of that module is first looked up
_SCIPY_FAMILIES = {"scipy.special": ("special",), "scipy.stats": ("stats", "multivariate"),
                   "scipy.linalg": ("linalg",), "scipy.signal": ("linalg",),
                   "scipy.optimize": ("optimize",)}

FUNCTIONS: dict = {}
UFUNCS: dict = {}
CALLS: dict = {}
_NAMES: dict = {}
_COMPLEX_OK: set = set()
_scipy_lock = threading.Lock()
_scipy_loaded: set = set()          # the SciPy modules whose families are entered


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
    """Import every SciPy family (the coverage table lists them all); False when SciPy is
    not installed."""
    try:
        found = importlib.util.find_spec("scipy") is not None
    except ImportError:         # an import hook that refuses it
        found = False
    if not found:
        return False
    for module in _SCIPY_FAMILIES:
        load_scipy_for(module)
    return True


def load_scipy_for(module):
    """Enter the families of the SciPy module ``module`` (``"scipy.stats"``) in the table,
    once: the one place wengert imports a SciPy family."""
    if module in _scipy_loaded:
        return
    with _scipy_lock:
        if module not in _scipy_loaded:
            for name in _SCIPY_FAMILIES[module]:
                family = importlib.import_module(f"..scipy.{name}", __package__)
                if family not in _families:
                    _families.add(family)
                    add_family(family)
            _scipy_loaded.add(module)


_families: set = set()


def scipy_module(f):
    """The SciPy module (a key of ``_SCIPY_FAMILIES``) whose callable ``f`` is, or None:
    from its ``__module__`` (a bound method's object's), or, for a ufunc (which names no
    module), whether ``scipy.special`` holds it, if the caller has imported it."""
    mod = getattr(f, "__module__", None) or getattr(getattr(f, "__self__", None), "__module__",
                                                    None) or type(f).__module__ or ""
    if mod.startswith("scipy."):
        top = ".".join(mod.split(".")[:2])
        return top if top in _SCIPY_FAMILIES else None
    if isinstance(f, np.ufunc):
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, f.__name__, None) is f:
            return "scipy.special"
    return None


def _lookup(table, f):
    try:
        rule = table.get(f)
    except TypeError:           # an unhashable callable has no entry
        return None
    if rule is None:
        module = scipy_module(f)
        if module is not None and module not in _scipy_loaded:
            load_scipy_for(module)
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
    if rule is None and _RESOLVERS:
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
