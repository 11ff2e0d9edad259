"""What the benches need to time numba, shared by scaling_bench, source_bench and the
GradBench tools: the plain function under ``numba.njit``, whether wengert takes
``backend="numba"`` yet, and which warnings said that wengert fell back to Python.

numba is optional: without it every numba cell says why ("n/a (numba not installed)").
A wengert without the numba backend rejects the ``backend`` keyword; ``backend_problem``
turns that into "no backend", so the benches print "n/a (no backend)" until it lands and
time it, unchanged, once it does.
"""
from __future__ import annotations

import re
import time
import warnings

import wengert
from wengert.core.errors import WengertError

try:
    import numba
except ImportError:        # the `numba` extra is not installed
    numba = None

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# numba's headline lines that say where compilation failed, not what failed
_NUMBA_BOILERPLATE = ("Failed in nopython mode pipeline", "Failed in object mode pipeline",
                      "During:", "File ", "<source elided>")


def numba_version():
    return None if numba is None else numba.__version__


def short_reason(exc):
    """One line for a table note: numba's first line that names the problem."""
    text = _ANSI.sub("", str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if not line.startswith(_NUMBA_BOILERPLATE):
            return f"{type(exc).__name__}: {line}"[:200]
    return type(exc).__name__


def _probe(x):
    return x * x


def backend_problem(backend="numba"):
    """None when ``wengert.grad(..., backend=backend)`` is accepted, else why not: "no
    backend" while wengert has no such keyword, or the reason wengert gives (numba not
    installed, say). Only builds a gradient; compiles nothing."""
    if backend == "python":
        return None
    try:
        wengert.grad(_probe, engine="source", backend=backend)
    except TypeError as exc:
        if "backend" in str(exc) and not isinstance(exc, WengertError):
            return "no backend"
        return short_reason(exc)
    except Exception as exc:   # wengert's typed error, e.g. numba missing
        return short_reason(exc)
    return None


def has_jit():
    """Whether wengert offers ``wengert.jit(f)`` (the primal through its numba path)."""
    return callable(getattr(wengert, "jit", None))


def njit(f):
    """``numba.njit(f)``; raises ImportError without numba. Compiles at the first call."""
    if numba is None:
        raise ImportError("numba not installed (pip install -e '.[numba]')")
    return numba.njit(f)


def wengert_warnings(caught):
    """The messages of the warnings in ``caught`` that wengert issued (a fallback to the
    Python backend names the construct and the user's line)."""
    # each once: a warning repeated by every call of a loop says nothing more
    return list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught
                              if w.category.__module__.split(".")[0] == "wengert"))


def fell_back(messages):
    """Whether one of wengert's warnings (``wengert_warnings``) says that it ran the Python
    backend instead: its class or its text names a fallback."""
    return any("fallback" in m.lower() or "falls back" in m.lower() or "fell back" in m.lower()
               or "python backend" in m.lower() for m in messages)


def first_call(fn, args):
    """Call ``fn(*args)`` once: (result, seconds, wengert's warnings during the call)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        out = fn(*args)
        seconds = time.perf_counter() - t0
    return out, seconds, wengert_warnings(caught)


def _one_more(x):
    return x + 1.0


def warm_up():
    """Load numba's compiler once, on a trivial function, so that the first compile time a
    bench reports is its program's, not numba's own start-up."""
    if numba is not None:
        numba.njit(_one_more)(1.0)
