"""``engine="auto"``'s fallback from the source engine to the trace engine: which functions
the source engine reads (``has_source``), and the one warning naming the construct it could
not transform and its file:line (``warn_fallback``): one per function (its file, line and
qualified name, ``fallback_key``) and process, remembered for the last ``WARNED.size``
functions.

Layer: api.
"""
from __future__ import annotations

import collections
import functools
import re
import threading
import types
import warnings

from ..core.errors import WengertError
from ..frontends import source as source_frontend

__all__ = ["fallback_key", "warn_fallback", "has_source", "WARNED", "Seen", "both_reasons",
           "traced_after_refusal", "naming_refusal"]


class Seen:
    """A bounded set: the ``size`` keys added last (the oldest forgotten
    first). Shared by every thread: a lock keeps its steps whole."""

    def __init__(self, size):
        self.size, self._keys = size, collections.OrderedDict()
        self._lock = threading.Lock()

    def add(self, key):
        """Add ``key``; whether it was new."""
        with self._lock:
            if key in self._keys:
                self._keys.move_to_end(key)
                return False
            self._keys[key] = None
            if len(self._keys) > self.size:
                self._keys.popitem(last=False)
            return True

    def discard(self, key):
        with self._lock:
            self._keys.pop(key, None)

    def __contains__(self, key):
        return key in self._keys

    def __len__(self):
        return len(self._keys)


# the functions whose fallback to tracing was reported (``fallback_key``)
WARNED = Seen(4096)


def fallback_key(fun):
    """What a fallback warning is remembered by: the function's file, first
    line and qualified name (never ``id()``: a key that outlives the function
    must not be reused by another one). Closures of one ``def`` share it."""
    code = getattr(fun, "__code__", None)
    qualname = getattr(fun, "__qualname__", None) or repr(fun)
    if code is None:
        return (None, None, qualname)
    return (code.co_filename, code.co_firstlineno, qualname)


def warn_fallback(fun, err, target=None):
    """The one warning of ``engine="auto"`` falling back to tracing; with a
    compiling backend (``target``) it says that the code is not compiled."""
    if not WARNED.add(fallback_key(fun)):
        return
    key = getattr(fun, "__qualname__", repr(fun))
    where = (f"{err.filename}:{err.lineno}" if getattr(err, "filename", None) and
             getattr(err, "lineno", None) else "")
    construct = getattr(err, "construct", None) or type(err).__name__
    lost = "" if target is None else (f", which generates no code, so backend={target.name!r} "
                                      "compiles nothing and it runs as Python")
    warnings.warn(f"wengert: {key} uses {construct}{' at ' + where if where else ''}, which the "
                  f"source engine cannot transform; using the trace engine instead{lost} ({err})",
                  stacklevel=3)


# each engine's advice to use the other: "..., or use engine='source' (or 'auto'),
# which ...", "..., or use engine='trace' (engine='auto' does so by itself)"
_OTHER_ENGINE = re.compile(r",? or use engine='(?:source|trace)'(?: \((?:or 'auto'|engine='auto' "
                           r"does so by itself)\))?(?:, which [^.;)]*)?")


def both_reasons(trace_err, source_err):
    """The trace engine's error after ``engine="auto"`` fell back to it:
    of its type, its message followed by why the source engine refused
    first (its advice to use the source engine, which does not apply then,
    left out)."""
    if getattr(trace_err, "wg_both", False):
        return trace_err
    text = (f"{_OTHER_ENGINE.sub('', str(trace_err))}\n(engine='auto' tried the source engine "
            f"first, which refused: {_OTHER_ENGINE.sub('', str(source_err))}; so neither "
            "engine can differentiate this function as written)")
    try:
        err = type(trace_err)(text)
    except Exception:   # noqa: BLE001 -- an error type that takes other arguments: as it is
        return trace_err
    err.wg_both = True
    err.__cause__ = trace_err
    return err


def traced_after_refusal(fun, source_err):
    """``fun`` for the trace engine after the source engine refused it,
    carrying the refusal (``wg_refusal``): ``naming_refusal`` around the
    trace engine's work makes its errors name both reasons."""
    @functools.wraps(fun)
    def traced(*args, **kwargs):
        return fun(*args, **kwargs)
    traced.wg_refusal = source_err
    return traced


class naming_refusal:
    """``with naming_refusal(fun):`` a ``WengertError`` raised inside names
    the source engine's refusal of ``fun`` too, where it carries one."""

    def __init__(self, fun):
        self.refusal = getattr(fun, "wg_refusal", None)

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if self.refusal is not None and isinstance(err, WengertError):
            raise both_reasons(err, self.refusal) from None
        return False


def has_source(fun):
    """Whether ``fun`` is a Python function the source engine can read; for
    anything else (NumPy functions, builtins, callable objects) ``auto``
    traces, silently; so for wengert's own functions (a trace-engine
    derivative's wrapper): their source is wengert's, not the user's."""
    if isinstance(fun, types.MethodType):       # a bound method: its function
        fun = fun.__func__
    return isinstance(fun, types.FunctionType) and not source_frontend.is_wengert_code(fun)
