"""A generated code compiled by numba, cached, and called: ``NumbaFunction``.

numba caches compiled code on disk only for a function defined in a file:
the text is written to ``cache_dir()`` (``$WENGERT_CACHE_DIR``, else
``$XDG_CACHE_HOME/wengert/numba``, else ``~/.cache/wengert/numba``) as
``wg_<hash>.py``, the hash taken over the text and the values of the names
it reads (two programs of the same text but other constants never share a
file), and numba keeps its compiled code beside it (``__pycache__``). Where
that directory cannot be written, the function is compiled without a disk
cache (``NumbaFunction.cached`` is False).

The buffers the code allocates at its top level and never returns are
kept from one call to the next (``scratch``: which, and how): the compiled
function takes a tuple of them and returns it beside its results, and
``NumbaFunction`` keeps a pool of such tuples (one taken per call, so
concurrent calls never share one), so a call allocates only what it
returns.

Layer: backends.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import time
import types
import warnings

import numpy as np

from ...core.errors import NumbaMissingError

__all__ = ["NumbaFunction", "load_numba", "cache_dir", "numba_helper", "HELPERS", "NUMBA_INSTALL"]

NUMBA_INSTALL = "pip install 'wengert[numba]' (or: pip install numba)"


def load_numba():
    """The numba module, or a ``NumbaMissingError`` saying how to install it."""
    try:
        import numba
    except ImportError as err:
        raise NumbaMissingError(f"backend='numba' needs numba, which is not installed: "
                                f"{NUMBA_INSTALL}; or use backend='python'") from err
    return numba


HELPERS = {}           # key -> a numba helper the generated code calls (``numba_helper``)
HELPERS_LOCK = threading.Lock()


def numba_helper(key, make):
    """The numba helper ``key``, made by ``make()`` once per process (under a
    lock: a second one made by another thread would not be the one the
    first code's namespace holds)."""
    with HELPERS_LOCK:
        found = HELPERS.get(key)
        if found is None:
            found = HELPERS[key] = make()
        return found


# the text of the modules whose numba helpers generated code calls: numba's disk
# cache checks the generated file only, so a changed helper (a wengert upgrade)
# must change the generated file's name (``_digest``), or its old machine code
# would be loaded
def _code_stamp():
    h = hashlib.sha256()
    for name in ("codegen.py", "compiled.py", "matmul.py", "scratch.py", "simd.py"):
        with open(os.path.join(os.path.dirname(__file__), name), "rb") as fh:
            h.update(fh.read())
    return h.digest()


_CODE_STAMP = _code_stamp()


def _digest(source, namespace):
    """A hash of the text, the values of the names it reads, and wengert's
    helpers' code (``_CODE_STAMP``)."""
    h = hashlib.sha256(source.encode())
    for name in sorted(namespace):
        value = namespace[name]
        h.update(name.encode())
        if isinstance(value, np.ndarray):
            h.update(f"{value.dtype.str}{value.shape}".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, types.ModuleType):
            h.update(value.__name__.encode())
        elif any(value is f for f in tuple(HELPERS.values())):
            h.update(getattr(value, "py_func", value).__name__.encode())
        else:
            h.update(repr((type(value).__name__, value)).encode())
    h.update(_CODE_STAMP)
    return h.hexdigest()[:24]


def cache_dir():
    """Where generated files for numba live (module docstring)."""
    given = os.environ.get("WENGERT_CACHE_DIR")
    if given:
        return os.path.join(given, "numba")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wengert", "numba")


def _source_file(source, digest):
    """The path of ``source`` written in the cache directory, or None when
    it cannot be written there."""
    folder = cache_dir()
    path = os.path.join(folder, f"wg_{digest}.py")
    try:
        if not os.path.exists(path):
            os.makedirs(folder, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                fh.write(source)
            os.replace(tmp, path)       # whole or absent, for a concurrent reader
        with open(path) as fh:
            if fh.read() == source:
                return path
    except OSError:
        pass
    return None


_MODULES = {}           # digest -> (namespace, dispatcher): one compilation per process
_MODULES_LOCK = threading.Lock()


def _module(source, namespace, fname, digest, path, numba, fresh=False):
    """(namespace, dispatcher) of the code: a module registered in
    ``sys.modules`` (numba finds the module of a function it loads from its
    disk cache by name), shared by every function of the same digest
    (``fresh``: a new one, replacing the one shared)."""
    with _MODULES_LOCK:
        found = None if fresh else _MODULES.get(digest)
        if found is not None:
            return found
        module = types.ModuleType(f"wengert_numba_{digest}")
        module.__dict__.update(namespace)
        if path is not None:
            module.__file__ = path
        exec(compile(source, path or f"<wengert-numba-{digest}>", "exec"), module.__dict__)
        # the helpers the text defines (``standalone``) are the ones compiled once a process
        module.__dict__.update((k, v) for k, v in namespace.items() if _is_helper(v))
        sys.modules[module.__name__] = module
        found = _MODULES[digest] = (module.__dict__, numba.njit(
            cache=path is not None, error_model="numpy", boundscheck=True)(module.__dict__[fname]))
        return found


def _is_helper(value):
    return any(value is h for h in tuple(HELPERS.values()))


class NumbaFunction:
    """A Program compiled by numba, called like ``codegen``'s result. ``fn``
    calls it; ``source``, ``program``, ``namespace`` as in
    ``GeneratedFunction``; ``dispatcher`` the ``numba.njit`` object;
    ``compile_seconds`` the time numba spent compiling it (at its first call
    and at each call with new argument types); ``cached`` whether numba keeps
    the compiled code on disk; ``filename`` the file of its text.

    ``on_error(construct)``: called once when numba refuses the code at a
    call (its typing fails, or its results differ in dtype from the
    Program's); it returns the function to run instead (the Python backend's),
    or raises. ``passed``: the code's extra parameters (``NumbaWriter._pass``),
    name -> the function giving the value at each call, after the caller's
    arguments. ``scratch``: the (dtype, ndim) of each buffer the code takes
    back from an earlier call (``scratch.with_scratch``: its last parameter,
    and its second result), a tuple of them kept in a pool between calls."""

    __slots__ = ("fn", "source", "program", "namespace", "filename", "dispatcher",
                 "compile_seconds", "cached", "on_error", "_run", "_numba", "_passed",
                 "_scratch", "_pool", "_rebuild", "__weakref__")

    def __init__(self, source, program, namespace, fname, on_error, passed=None, scratch=()):
        numba = load_numba()
        self._numba = numba
        self._passed = tuple((passed or {}).values())
        self._scratch, self._pool = tuple(scratch), []
        self.source, self.program, self.on_error = source, program, on_error
        digest = _digest(source, namespace)
        path = _source_file(source, digest)
        self.cached = path is not None
        self.filename = path or f"<wengert-numba-{digest}>"
        self.namespace, self.dispatcher = _module(source, namespace, fname, digest, path, numba)
        self._rebuild = lambda: _module(source, namespace, fname, digest, path, numba,
                                        fresh=True)
        self.compile_seconds = 0.0
        self._run = self._first
        run = self

        def fn(*args):
            return run._run(*args)
        fn.__name__ = fname
        self.fn = fn

    def __call__(self, *args):
        return self._run(*args)

    def _with_passed(self, args):
        """The compiled function's arguments: the caller's, then the values
        passed at each call (``NumbaWriter._pass``), each 0-d array as its
        scalar at every call (numba types a 0-d array apart from a number,
        and the code mixes them), then the scratch tuple."""
        full = self._as_scalars(args + tuple(get() for get in self._passed))
        return full + (self._take(),) if self._scratch else full

    def _take(self):
        """A scratch tuple from the pool (popped: no other call holds it),
        or one of empty arrays, which the code replaces."""
        try:
            return self._pool.pop()
        except IndexError:
            return tuple(np.empty((0,) * ndim, dt) for dt, ndim in self._scratch)

    def _results(self, returned):
        """The results of a call; its scratch tuple back into the pool."""
        if not self._scratch:
            return returned
        outs, kept = returned
        self._pool.append(kept)
        return outs

    @staticmethod
    def _as_scalars(full):
        return tuple(a[()] if type(a) is np.ndarray and a.ndim == 0 else a for a in full)

    def _first(self, *args):
        """The first call: compile for these argument types (timed), then
        run, checking that the results have the Program's dtypes. A compile
        that something interrupts (a signal's exception, a timeout raised by
        a handler) leaves the next call to compile again, with a new
        dispatcher (``_again``)."""
        errors = self._numba.core.errors
        full = self._with_passed(args)
        try:
            sig = tuple(self._numba.typeof(a) for a in full)
            start = time.perf_counter()
            with warnings.catch_warnings():
                # a function reading large constant arrays is not cached on disk
                warnings.filterwarnings("ignore", message="Cannot cache compiled function",
                                        category=errors.NumbaWarning)
                self.dispatcher.compile(sig)
            self.compile_seconds += time.perf_counter() - start
        except (errors.NumbaError, ValueError, RuntimeError) as err:
            # RuntimeError: numba's state broken by an earlier interrupted compile (an
            # interrupt llvmlite swallowed leaves "no compiled object yet")
            return self._refused(_first_line(err, self.source), args)
        except BaseException:
            self._run = self._again
            raise
        outs = self._results(self.dispatcher(*full))
        wrong = _dtype_mismatch(outs, self.program)
        if wrong is not None:
            return self._refused(wrong, args)
        self._run = self._call
        return outs

    def _again(self, *args):
        """The call after an interrupted compile: a new dispatcher (the
        interrupted one may hold half-made state), compiled again."""
        self.namespace, self.dispatcher = self._rebuild()
        self._run = self._first
        return self._first(*args)

    def _call(self, *args):
        try:
            return self._results(self.dispatcher(*self._with_passed(args)))
        except self._numba.core.errors.NumbaError as err:    # new argument types it cannot type
            return self._refused(_first_line(err, self.source), args)

    def _refused(self, construct, args):
        self._run = self.on_error(construct)
        return self._run(*args)


def _first_line(err, source):
    """The gist of a numba error: its first line that says something, and
    the line of the generated code it names."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(err))
    gist = next((line.strip() for line in text.splitlines() if line.strip() and not
                 line.strip().startswith(("-", "During:", "File ", "Failed in"))),
                type(err).__name__)
    where = re.search(r'File "[^"]*", line (\d+)', text)
    lines = source.splitlines()
    if where and 0 < int(where.group(1)) <= len(lines):
        gist += f" (in the generated line `{lines[int(where.group(1)) - 1].strip()}`)"
    return f"numba: {gist}"


def _dtype_mismatch(outs, program):
    """What differs between the compiled code's results and the Program's
    output avals (numba promotes some mixed operations other than NumPy 2
    does), or None."""
    for k, (o, v) in enumerate(zip(outs, program.outputs)):
        dt = getattr(o, "dtype", None)
        if isinstance(o, np.ndarray) and (dt != v.aval.dtype or o.ndim != len(v.aval.shape)):
            return (f"result {k} is {dt}[{o.ndim}-d] under numba, but "
                    f"{v.aval.dtype}[{len(v.aval.shape)}-d] under NumPy")
    return None
