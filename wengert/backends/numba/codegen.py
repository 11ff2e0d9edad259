"""Program -> the Python subset numba compiles, compiled with ``numba.njit``.

    numba_codegen : Lowered -> NumbaFunction     (called like ``codegen``'s result)

The code is ``pycodegen``'s, written by a ``CodeWriter`` subclass that
spells the few things numba's subset lacks differently:

* a loop's stored per-iteration values are always typed arrays,
  ``np.empty((n, *shape), dtype)`` of the value's aval (bools as
  ``np.bool_``), never Python lists (``[None] * n`` holds objects; numba
  types a list by its items, and ``None`` has no array type); a ``while``
  loop's arrays double when full, as in the Python code;
* dtypes as NumPy attributes (``np.float32``), not ``np.dtype('float32')``;
* a reduction over every axis without ``axis`` (``np.sum(x)``), over one
  axis with an int (``np.sum(x, axis=1)``, where numba has that form);
* ``np.add.at`` at one index array as a loop; ``np.matmul`` as ``@`` on
  operands of at most 2 dimensions, else as a loop over the batch
  (``numbamatmul``);
  ``np.abs`` for Python's ``abs``; a reshape of a number as ``np.full``, of
  an array made contiguous first (numba reshapes no other).

Two kinds of values the code reads are parameters of the compiled
function, given at each call, never globals (which numba freezes into the
compiled code): a value outside the function (a closure cell, a module's
global) that is a numeric array or a number, since it may change between
calls; and a constant array of more than ``_FROZEN_SIZE`` items, since
numba's compile time grows with the constants it freezes (a jacrev seed of
(2, 2, 31843) took numba over 100 s).

What has no spelling at all is refused before numba sees it
(``NumbaUnsupported``, naming the construct): stored values whose length
varies from one iteration to the next, and names the code reads that
numba cannot type (a primitive's impl called by name, a SciPy module, the
user's objects). The rest numba's typing decides when the function is
first called; an error of it is reported the same way (``NumbaFunction``).

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

from ...core.dims import plain_numbers
from ...core.errors import BackendError, NumbaCompileError, NumbaMissingError
from ...core.ir import Ident, Lit, aval_of
from ...core.rules import result_dtype
from . import matmul as numbamatmul
from ..python.codegen import CodeWriter, generate_source
from .scratch import REUSE_HELPERS, reusable, with_scratch

__all__ = ["numba_codegen", "NumbaFunction", "NumbaUnsupported", "NumbaWriter", "load_numba",
           "cache_dir", "NUMBA_INSTALL"]

NUMBA_INSTALL = "pip install 'wengert[numba]' (or: pip install numba)"

# NumPy functions numba lacks (in full), by their NumPy name: the function
# writing numba's spelling, and the numba helper it calls (by a name it asks for)
_SPELLINGS = {"matmul": (numbamatmul.matmul_text, "batched_matmul", numbamatmul.kernel)}

# constant arrays up to this many items are frozen into the compiled code; larger ones passed
_FROZEN_SIZE = 256

# numba's compile time grows faster than the code's length (GradBench's ht
# Jacobian, 4,161 lines, compiled for over ten minutes; the longest of the
# other evals' codes, 358 lines, in under a minute): longer code falls back
MAX_LINES_ENV = "WENGERT_NUMBA_MAX_LINES"
MAX_LINES = 1000

# reductions numba implements with an int ``axis`` (the others: over every axis only)
_AXIS_INT = frozenset({"sum", "argmax", "argmin"})


def load_numba():
    """The numba module, or a ``NumbaMissingError`` saying how to install it."""
    try:
        import numba
    except ImportError as err:
        raise NumbaMissingError(f"backend='numba' needs numba, which is not installed: "
                                f"{NUMBA_INSTALL}; or use backend='python'") from err
    return numba


class NumbaUnsupported(Exception):
    """A construct of the code with no spelling in numba's subset;
    ``construct`` names it."""

    def __init__(self, construct):
        super().__init__(construct)
        self.construct = construct


class NumbaWriter(CodeWriter):
    """``pycodegen``'s writer, spelling the code in numba's subset."""

    # numba types its scalars itself: NumPy's spelling, no Python-float stand-ins
    LOWERING = {"loops": True, "floats": False}

    def __init__(self, var_names):
        super().__init__(var_names)
        self._passed_keys = {}

    def _pass(self, key, preferred, getter, note):
        """The name of an extra parameter (once per ``key``) whose value
        ``getter()`` gives at each call."""
        name = self._passed_keys.get(key)
        if name is None:
            name = self.fresh(*preferred)
            self._passed_keys[key] = name
            self.passed[name] = getter
            self.header.append(f"#   {name} = {note}, passed at each call")
        return name

    def const(self, value):
        if isinstance(value, np.ndarray) and value.size > _FROZEN_SIZE and _typable(value):
            while f"c{self._consts}" in self.taken:
                self._consts += 1
            self._consts += 1
            return self._pass(Ident(value), (f"c{self._consts - 1}",), _Fixed(value),
                              f"constant {aval_of(value).short()}")
        return super().const(value)

    def outside(self, ref):
        try:
            value = ref.resolve()
        except Exception:           # an empty cell, a missing attribute: as Python says
            value = None
        if _passable(value):
            label = str(ref.path[-1][1]) if ref.path else ref.label.split(".")[-1]
            return self._pass(ref.param_key, (label, f"cell_{label}"), ref.resolve, repr(ref))
        return super().outside(ref)

    def kept_as_list(self, aval, vid, grows=False, made=False):
        if any(d is None for d in aval.shape):
            raise NumbaUnsupported("a loop storing values whose length varies from one "
                                   "iteration to the next")
        return False                # a typed array, even for scalars read back one by one

    def dtype(self, dt):
        dt = np.dtype(dt)
        name = "bool_" if dt == np.bool_ else dt.name
        if dt.isnative and getattr(np, name, None) is dt.type:
            return f"{self.np}.{name}"
        raise NumbaUnsupported(f"the dtype {dt}")

    def add_at(self, target, where, value, rows):
        # the lengths compared as the numbers they stand for (comparing Dims
        # would add guards): equal where the Program was staged, so wherever
        # its code is reused (``api_source``: only where staging gives the same)
        if rows is None or list(plain_numbers(list(rows[0]))) != list(plain_numbers(list(rows[1]))):
            raise NumbaUnsupported(f"np.add.at({target}, {where}, ...), a scatter-add at "
                                   "positions other than one index array")
        k, idx = self.fresh("k"), self.fresh("where")
        return [f"{idx} = {where}", f"for {k} in range({idx}.shape[0]):",
                f"{self.INDENT}{target}[{idx}[{k}]] += {value}[{k}]"]

    def reshape_call(self, x, shape, scalar, py=False):
        # numba reshapes contiguous arrays only (a copy where NumPy gives a view:
        # the code never writes into a value that may share memory, ``lower``)
        if scalar:
            return f"{self.np}.full({shape}, {x})"
        return f"{self.np}.ascontiguousarray({x}).reshape({shape})"

    def abs_call(self, x):
        return f"{self.np}.abs({x})"        # numba's abs takes numbers only

    def scalar(self, x):
        if isinstance(x, np.bool_):
            return repr(bool(x))            # numba has no np.bool (NumPy 2's name)
        return super().scalar(x)

    def numpy_call(self, fn, ins, eqn=None):
        spelling = _SPELLINGS.get(fn)
        if spelling is not None and eqn is not None:
            write, name, make = spelling

            def helper():
                found = _helper(name, make)
                return self.bind(name, found, f"wengert's numba {fn} (NumPy's)")
            return write(self, ins, eqn, helper)
        return super().numpy_call(fn, ins, eqn)

    def eqn_operands(self, eqn, ins):
        # numba types a Python number strongly (0.5 as float64, 3 as int64),
        # where NumPy 2 takes it at its partner's dtype (NEP 50): float32 * 0.5
        # is float32, float32 > 0.1 compares in float32. Such an operand of
        # an operation that promotes so is spelled at NumPy's dtype
        if not getattr(eqn.prim.abstract_eval, "promotes", False):
            return ins
        avals = [x.aval for x in eqn.inputs]
        if all(a.weak for a in avals) or not any(a.weak for a in avals):
            return ins
        dt = result_dtype(*avals)
        if dt.kind not in "iufc":
            return ins
        ins = list(ins)
        for k, (x, a) in enumerate(zip(eqn.inputs, avals)):
            strong = [b.dtype for b in avals if not b.weak] + [a.dtype]
            if a.weak and a.dtype.kind != "b" and np.result_type(*strong) != dt and (
                    dt.kind in "fc" or _fits(x, dt)):
                ins[k] = f"{self.dtype(dt)}({ins[k]})"
        return ins

    def last_axes_map(self, fn, x, ndim, axes, out):
        # the axes moved last, made contiguous and one; a numba helper over
        # the rows; the result back in x's shape and axis order
        x = self.atom(x)
        reduced = sorted(a % ndim for a in axes)
        kept = [a for a in range(ndim) if a not in reduced]
        order = kept + reduced
        moved = self.fresh("moved")
        helper = self.bind(f"{fn}_last_axis", _others_helper(fn),
                           f"wengert's numba {fn} over the last axis")
        size = " * ".join(f"{x}.shape[{a}]" for a in kept) or "1"
        length = " * ".join(f"{x}.shape[{a}]" for a in reduced)
        perm = "" if order == list(range(ndim)) else f".transpose({tuple(order)})"
        back = "" if not perm else f".transpose({tuple(int(a) for a in np.argsort(order))})"
        return [f"{moved} = {self.np}.ascontiguousarray({x}{perm})",
                f"{out} = {helper}({moved}.reshape(({size}, {length}))).reshape({moved}.shape)"
                f"{back}"]

    def ufunc_into(self, fn, ins, target):
        return f"{self.np}.{fn}({', '.join(ins)}, {target})"     # numba: out by position

    def axis_call(self, fn, x, axis, ndim, py=False):
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if sorted(a % max(ndim, 1) for a in axes) == list(range(ndim)):
            return f"{self.np}.{fn}({x})"
        if len(axes) == 1 and fn in _AXIS_INT:
            return f"{self.np}.{fn}({x}, axis={int(axes[0])})"
        if fn in _LAST_AXIS and not py:
            # the reduced axes moved last and made one, then a loop over the rest
            reduced = sorted(a % ndim for a in axes)
            kept = [a for a in range(ndim) if a not in reduced]
            x = self.atom(x)
            shape = ", ".join([f"{x}.shape[{a}]" for a in kept] + ["-1"])
            moved = x if kept + reduced == list(range(ndim)) else \
                f"{x}.transpose({tuple(kept + reduced)})"
            helper = self.bind(f"{fn}_last_axis", _last_axis_helper(fn),
                               f"wengert's numba {fn} over the last axis")
            return f"{helper}({self.np}.ascontiguousarray({moved}).reshape(({shape})))"
        return f"{self.np}.{fn}({x}, axis={self.param(axis)})"


def _fits(x, dt):
    """Whether ``x`` is a literal integer that the integer dtype ``dt`` holds
    (a value known only when the code runs keeps numba's int64)."""
    return isinstance(x, Lit) and np.iinfo(dt).min <= x.val <= np.iinfo(dt).max


def _others_helper(fn):
    """A numba function: ``fn`` (``_OTHERS``) over the last axis of a
    C-contiguous 2-D array, each row apart (same shape out)."""
    return _helper(f"others {fn}", lambda: _njit_text(_OTHERS[fn], f"{fn}_last_axis"))


# functions of the entries of a row, one value per entry (the rows of a 2-D
# array), as numba text; what NumPy's statements compute, without
# ``np.errstate`` (numba neither warns nor raises on floating-point errors)
_OTHERS = {"prod_others": """
def prod_others_last_axis(x):
    # each entry's product of the others in its row: the row's product
    # divided by it where nothing in x is 0, inf or nan and no product is
    # subnormal (as ``prod_others_impl`` decides: over the whole of x), else
    # the running products from both ends multiplied (no division)
    rows, n = x.shape
    out = np.empty_like(x)
    total = np.empty(rows, x.dtype)
    tiny = np.finfo(x.dtype).tiny
    divide = True
    for i in range(rows):
        total[i] = x[i].prod()
        if not (np.all(x[i] != 0) and np.isfinite(total[i]) and np.abs(total[i]) >= tiny):
            divide = False
    for i in range(rows):
        if divide:
            for j in range(n):
                out[i, j] = total[i] / x[i, j]
        else:
            left = x.dtype.type(1)
            for j in range(n):
                out[i, j] = left
                left = left * x[i, j]
            right = x.dtype.type(1)
            for j in range(n - 1, -1, -1):
                out[i, j] = out[i, j] * right
                right = right * x[i, j]
    return out
"""}


def _typable(value):
    """Whether numba can read ``value`` as a global: NumPy, a number, a
    numeric array (frozen into the compiled code as a constant), a dtype."""
    if value is np or any(value is h for h in tuple(_HELPERS.values())):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.dtype.isnative
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return True
    return isinstance(value, type) and issubclass(value, np.generic)


# reductions numba has over every axis only, spelled over some axes by a helper
# (``_LAST_AXIS``, below: fn -> its result dtype in the helper's text)
_HELPERS = {}           # key -> a numba helper the generated code calls (``_helper``)
_HELPERS_LOCK = threading.Lock()


def _helper(key, make):
    """The numba helper ``key``, made by ``make()`` once per process (under a
    lock: a second one made by another thread would not be the one the
    first code's namespace holds)."""
    with _HELPERS_LOCK:
        found = _HELPERS.get(key)
        if found is None:
            found = _HELPERS[key] = make()
        return found


def _njit_text(text, name):
    namespace = {"np": np}
    exec(text, namespace)
    return load_numba().njit(namespace[name])


def _last_axis_helper(fn):
    """A numba function: NumPy's ``fn`` over the last axis of a C-contiguous
    array (``x.fn(axis=-1)``), a loop over the other items."""
    return _helper(f"last axis {fn}", lambda: _njit_text(
        _LAST_AXIS_TEXT.format(fn=fn, dtype=_LAST_AXIS[fn]), f"{fn}_last_axis"))


# the helpers' text, and each reduction's result dtype
_LAST_AXIS_TEXT = """
def {fn}_last_axis(x):
    rows = x.reshape((-1, x.shape[-1]))
    out = np.empty(rows.shape[0], {dtype})
    for i in range(rows.shape[0]):
        out[i] = rows[i].{fn}()
    return out.reshape(x.shape[:-1])
"""
_LAST_AXIS = {"min": "x.dtype", "max": "x.dtype", "prod": "x.dtype",
              "argmin": "np.int64", "argmax": "np.int64"}


def _passable(value):
    """Whether a value outside the function can be a parameter of the
    compiled code: a numeric array or a number."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.dtype.isnative
    return isinstance(value, (bool, int, float, complex)) or (
        isinstance(value, np.generic) and value.dtype.kind in "biufc")


class _Fixed:
    """The getter of a constant passed as a parameter: the same array each call."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __call__(self):
        return self.value


def _check_names(namespace, header):
    """Refuse names numba cannot type, naming the first (its header line)."""
    notes = dict(line.strip("# ").split(" = ", 1) for line in header if " = " in line)
    for name, value in namespace.items():
        if name == "__builtins__" or _typable(value):
            continue
        raise NumbaUnsupported(notes.get(name, f"{name} ({type(value).__name__})"))


# the text of the modules whose numba helpers generated code calls: numba's disk
# cache checks the generated file only, so a changed helper (a wengert upgrade)
# must change the generated file's name (``_digest``), or its old machine code
# would be loaded
_CODE_STAMP = hashlib.sha256(b"".join(
    open(os.path.join(os.path.dirname(__file__), f), "rb").read()
    for f in ("codegen.py", "matmul.py", "scratch.py"))).digest()


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
        elif any(value is f for f in tuple(_HELPERS.values())):
            h.update(value.py_func.__name__.encode())
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


def _module(source, namespace, fname, digest, path, numba):
    """(namespace, dispatcher) of the code: a module registered in
    ``sys.modules`` (numba finds the module of a function it loads from its
    disk cache by name), shared by every function of the same digest."""
    with _MODULES_LOCK:
        found = _MODULES.get(digest)
        if found is not None:
            return found
        module = types.ModuleType(f"wengert_numba_{digest}")
        module.__dict__.update(namespace)
        if path is not None:
            module.__file__ = path
        exec(compile(source, path or f"<wengert-numba-{digest}>", "exec"), module.__dict__)
        sys.modules[module.__name__] = module
        found = _MODULES[digest] = (module.__dict__, numba.njit(
            cache=path is not None, error_model="numpy", boundscheck=True)(module.__dict__[fname]))
        return found


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
                 "_scratch", "_pool", "__weakref__")

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
        run, checking that the results have the Program's dtypes."""
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
        except (errors.NumbaError, ValueError) as err:
            return self._refused(_first_line(err, self.source), args)
        outs = self._results(self.dispatcher(*full))
        wrong = _dtype_mismatch(outs, self.program)
        if wrong is not None:
            return self._refused(wrong, args)
        self._run = self._call
        return outs

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


def numba_codegen(low, on_error, name=None):
    """The lowered Program ``low`` (``lower(prog, **NumbaWriter.LOWERING)``) compiled by
    numba (``NumbaFunction``); a construct with no spelling raises ``NumbaUnsupported``
    here, before numba is asked."""
    prog = low.source
    source, namespace, fname, passed = generate_source(low, name, writer=NumbaWriter)
    _check_length(source)
    _check_names(namespace, source.splitlines())
    source, scratch = _reuse_scratch(source, namespace, fname)
    return NumbaFunction(source, prog, namespace, fname, on_error, passed, scratch)


def _check_length(source):
    """Refuse code longer than ``$WENGERT_NUMBA_MAX_LINES`` statement lines
    (``MAX_LINES`` by default): numba would compile it for minutes."""
    text = os.environ.get(MAX_LINES_ENV, "").strip()
    try:
        limit = int(text) if text else MAX_LINES
    except ValueError:
        limit = 0
    if limit <= 0:
        raise BackendError(f"{MAX_LINES_ENV}={text!r}: the longest generated code numba "
                           "compiles must be a positive number of lines")
    n = sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if n > limit:
        raise NumbaUnsupported(
            f"the generated code has {n} lines, more than {limit} ({MAX_LINES_ENV}): "
            "numba's compile time grows faster than the code's length, to minutes at this "
            f"size; set {MAX_LINES_ENV} higher to compile it anyway")


def _reuse_scratch(source, namespace, fname):
    """(source, scratch) of the code reusing the buffers it never returns
    (``scratch``): the text, its helpers bound in ``namespace`` and named in
    its header, and the (dtype, ndim) of each buffer."""
    np_name = next((k for k, v in namespace.items() if v is np), None)
    allocs = reusable(source, fname, np_name) if np_name else []
    if not allocs:
        return source, ()
    source, helpers, param = with_scratch(source, fname, allocs, namespace, np_name)
    notes = []
    for helper, kind in helpers.items():
        namespace[helper] = _helper(f"reuse_{kind}",
                                    lambda kind=kind: load_numba().njit(REUSE_HELPERS[kind]))
        what = "np.empty of a buffer that doubles" if kind == "rows" else f"np.{kind}"
        notes.append(f"#   {helper} = wengert's {what}, reusing a buffer of an earlier call")
    notes.append(f"#   {param} = the buffers of an earlier call, reused where their shapes "
                 "match, passed at each call")
    lines = source.splitlines()
    if not lines[0].endswith(":"):
        lines[0] += "; names bound outside it:"
    at = next(k for k, line in enumerate(lines) if line.startswith("def "))
    return "\n".join(lines[:at] + notes + lines[at:]) + "\n", \
        tuple((a.dtype, a.ndim) for a in allocs)


def refuse(construct, where):
    """The ``NumbaCompileError`` of ``fallback=False`` (``where``: the
    user's function, ``file:line``)."""
    return NumbaCompileError(
        f"{where}: numba cannot compile the derivative's code: {construct}. Use "
        "backend='numba' with fallback=True (the default) to run the Python backend there, "
        "or backend='python'", construct=construct)
