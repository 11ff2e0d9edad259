"""Program -> the Python subset numba compiles, compiled with ``numba.njit``.

    numba_codegen : Lowered -> NumbaFunction     (called like ``codegen``'s result)

The code is ``python.codegen``'s, written by a ``CodeWriter`` subclass that
spells the few things numba's subset lacks differently:

* a loop's stored per-iteration values are typed arrays,
  ``np.empty((n, *shape), dtype)`` of the value's aval (bools as
  ``np.bool_``), never Python lists of Nones (``[None] * n`` holds objects; numba
  types a list by its items, and ``None`` has no array type); a ``while``
  loop's arrays double when full, as in the Python code. Values whose length varies
  from one iteration to the next (an inner loop's, stored by an outer one) are a list
  of C-contiguous arrays, made of empty arrays of their type;
* dtypes as NumPy attributes (``np.float32``), not ``np.dtype('float32')``;
* a reduction over every axis without ``axis`` (``np.sum(x)``), over one
  axis with an int (``np.sum(x, axis=1)``, where numba has that form);
* ``np.add.at`` as a loop (``scatter``); ``np.matmul`` as ``@`` on
  operands of at most 2 dimensions, else as a loop over the batch
  (``numba.matmul``);
  ``np.abs`` for Python's ``abs``; a reshape of a number as ``np.full``, of
  an array made contiguous first (numba reshapes no other);
* a checkpointed loop's schedule as the numba twins of its sweeps
  (``control/schedules_numba.py``, compiled by ``twins``), its stored states in a
  typed dict filled and stacked by loops (no dict comprehension, no ``np.stack`` of a
  list, no ``del`` of a variable).

Two kinds of values the code reads are parameters of the compiled
function, given at each call, never globals (which numba freezes into the
compiled code): a value outside the function (a closure cell, a module's
global) that is a numeric array or a number, since it may change between
calls; and a constant array of more than ``_FROZEN_SIZE`` items, since
numba's compile time grows with the constants it freezes (a jacrev seed of
(2, 2, 31843) took numba over 100 s).

What has no spelling at all is refused before numba sees it
(``NumbaUnsupported``, naming the construct): names the code reads that
numba cannot type (a primitive's impl called by name, a SciPy module, the
user's objects). The rest numba's typing decides when the function is
first called; an error of it is reported the same way (``NumbaFunction``).

How the code is compiled, cached on disk and called (its buffers kept between calls) is
``compiled.py``'s.

Layer: backends.
"""
from __future__ import annotations

import os

import numpy as np

from ...core.errors import BackendError, NumbaCompileError
from ...core.ir import Ident, Lit, aval_of
from ...core.shapes import result_dtype
from . import matmul as numbamatmul
from .rewrite import rewritten
from .scatter import add_at_lines
from ..python.codegen import CodeWriter, generate_source
from .compiled import HELPERS, NumbaFunction, load_numba, numba_helper
from .hoist import fresh_mark
from .rowwise import LAST_AXIS, ROW_TEXTS, last_axis_helper, others_helper
from .standalone import finish
from .twins import compiled_twin
from ...control.schedules_numba import positions_nb

__all__ = ["numba_codegen", "numba_source", "NumbaUnsupported", "NumbaWriter", "refuse"]

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


class NumbaUnsupported(Exception):
    """A construct of the code with no spelling in numba's subset;
    ``construct`` names it."""

    def __init__(self, construct):
        super().__init__(construct)
        self.construct = construct


class NumbaWriter(CodeWriter):
    """``python.codegen``'s writer, spelling the code in numba's subset."""

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

    def define(self, fn, deps=(), twin=None):
        if twin is None:
            raise NumbaUnsupported(f"{fn.__name__}, wengert's NumPy code of a row (a Python "
                                   "function numba does not compile)")
        # the row's twin in numba's subset, compiled once a process (``numba_helper``)
        found = numba_helper(f"twin {twin.__module__}.{twin.__name__}",
                             lambda: compiled_twin(twin))
        return self.bind(twin.__name__, found, f"wengert's numba {fn.__name__}")

    def kept_as_list(self, aval, vid, grows=False, made=False):
        # values whose length varies: a list of arrays (one type: the aval's dtype and
        # dimensions, C-contiguous); the rest a typed array, even scalars read back one by one
        return any(d is None for d in aval.shape)

    def new_list(self, aval, count):
        """numba types a list by its items: made of empty arrays of the values' type (a
        comprehension, also where it starts empty), never of Nones."""
        empty = f"{self.np}.empty({(0,) * len(aval.shape)}, {self.dtype(aval.dtype)})"
        return f"[{empty} for _ in range({0 if count is None else count})]"

    def list_item(self, y):
        return f"{self.np}.ascontiguousarray({y})"      # (a view's layout is another type)

    def stacked_states(self, store, outs, avals):
        # numba's np.stack takes a tuple, not a list: each array made at its length,
        # its rows copied from the states in the order of their positions
        if not outs:
            return []
        keys, row = self.fresh("keys"), self.fresh("r")
        found = numba_helper("twin positions_nb", lambda: compiled_twin(positions_nb))
        lines = [f"{keys} = {self.bind('positions_nb', found, 'positions in order')}({store})"]
        for out, aval in zip(outs, avals):
            dims = [f"len({keys})"] + [self.dim(d) for d in aval.shape]
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            lines.append(f"{out} = {self.np}.empty({shape}, {self.dtype(aval.dtype)})")
        lines.append(f"for {row} in range(len({keys})):")
        return lines + self.indent([f"{out}[{row}] = {store}[{keys}[{row}]][{j}]"
                                    for j, out in enumerate(outs)])

    def release(self, names):
        return []       # numba's IR has no ``del`` of a variable (it frees at the last use)

    def unstacked_states(self, store, stacked, positions):
        # numba has no dict comprehension: a typed dict filled by a loop
        row, pos = self.fresh("j"), self.fresh("p")
        states = ", ".join(f"{s}[{row}]" for s in stacked) + ("," if len(stacked) == 1 else "")
        return [f"{store} = {{}}", f"for {row}, {pos} in enumerate({positions}):",
                self.INDENT + f"{store}[{pos}] = ({states})"]

    def dtype(self, dt):
        dt = np.dtype(dt)
        name = "bool_" if dt == np.bool_ else dt.name
        if dt.isnative and getattr(np, name, None) is dt.type:
            return f"{self.np}.{name}"
        raise NumbaUnsupported(f"the dtype {dt}")

    def add_at(self, target, where, value, rows):
        return add_at_lines(self, target, where, value, rows)      # numba has no ufunc.at

    def reshape_call(self, x, shape, scalar, py=False):
        # numba reshapes contiguous arrays only (a copy where NumPy gives a view:
        # the code never writes into a value that may share memory, ``lower``)
        if scalar:
            return f"{self.np}.full({shape}, {x})"
        return f"{self.np}.ascontiguousarray({x}).reshape({shape})"

    def abs_call(self, x):
        return f"{self.np}.abs({x})"        # numba's abs takes numbers only

    def einsum_call(self, spec, ins):
        # numba has no einsum; a product that sums over nothing (an outer product per
        # example, a batch's) is its operands reshaped to the result's axes and multiplied
        # (numba's broadcasting loop), where each operand's axes come in the result's order
        inputs, out = spec.split("->")
        subs = inputs.split(",")
        ordered = set("".join(subs)) == set(out) and len(set(out)) == len(out) and all(
            len(set(s)) == len(s) and [out.index(c) for c in s] == sorted(out.index(c) for c in s)
            for s in subs)
        if not ordered:
            raise NumbaUnsupported(f"np.einsum({spec!r}), a contraction (numba has no einsum)")
        terms = []
        for s, x in zip(subs, ins):
            x = self.atom(x)
            dims = [f"{x}.shape[{s.index(c)}]" if c in s else "1" for c in out]
            terms.append(f"{self.np}.ascontiguousarray({x}).reshape(({', '.join(dims)},))")
        return " * ".join(terms)

    def scalar(self, x):
        if isinstance(x, np.bool_):
            return repr(bool(x))            # numba has no np.bool (NumPy 2's name)
        return super().scalar(x)

    def numpy_call(self, fn, ins, eqn=None):
        spelling = _SPELLINGS.get(fn)
        if spelling is not None and eqn is not None:
            write, name, make = spelling

            def bound_helper():
                found = numba_helper(name, make)     # (made once a process)
                return self.bind(name, found, f"wengert's numba {fn} (NumPy's)")
            return write(self, ins, eqn, bound_helper)
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
        helper = self.bind(f"{fn}_last_axis", others_helper(fn),
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

    def expression(self, eqn, ins, py):
        # a new array of an elementwise row, marked for ``hoist`` (a loop's: into a buffer)
        return super().expression(eqn, ins, py) + fresh_mark(self, eqn)

    def axis_call(self, fn, x, axis, ndim, py=False):
        # axis=None (argmax of the whole array) reduces every axis
        axes = (tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int)
                else tuple(axis))
        if sorted(a % max(ndim, 1) for a in axes) == list(range(ndim)):
            return f"{self.np}.{fn}({x})"
        if len(axes) == 1 and fn in _AXIS_INT:
            return f"{self.np}.{fn}({x}, axis={int(axes[0])})"
        if fn in LAST_AXIS and not py:
            # the reduced axes moved last and made one, then a loop over the rest
            reduced = sorted(a % ndim for a in axes)
            kept = [a for a in range(ndim) if a not in reduced]
            x = self.atom(x)
            shape = ", ".join([f"{x}.shape[{a}]" for a in kept] + ["-1"])
            moved = x if kept + reduced == list(range(ndim)) else \
                f"{x}.transpose({tuple(kept + reduced)})"
            helper = self.bind(f"{fn}_last_axis", last_axis_helper(fn),
                               f"wengert's numba {fn} over the last axis")
            return f"{helper}({self.np}.ascontiguousarray({moved}).reshape(({shape})))"
        return f"{self.np}.{fn}({x}, axis={self.param(axis)})"

    def running_call(self, fn, x, axis, aval):
        if len(aval.shape) == 1:
            return f"{self.np}.{fn}({x})"       # numba's takes no axis
        if fn not in ROW_TEXTS or aval.dtype.kind not in "fc":
            return super().running_call(fn, x, axis, aval)
        # the axis moved last, the rows one by one (a helper)
        x, axis = self.atom(x), axis % len(aval.shape)
        order = [k for k in range(len(aval.shape)) if k != axis] + [axis]
        perm = "" if order == sorted(order) else f".transpose({tuple(order)})"
        back = "" if not perm else f".transpose({tuple(int(k) for k in np.argsort(order))})"
        rows = " * ".join(f"{x}.shape[{k}]" for k in order[:-1])
        helper = self.bind(f"{fn}_last_axis", others_helper(fn),
                           f"wengert's numba {fn} over the last axis")
        return (f"{helper}({self.np}.ascontiguousarray({x}{perm}).reshape(({rows}, "
                f"{x}.shape[{axis}]))).reshape({x}{perm}.shape){back}")


def _fits(x, dt):
    """Whether ``x`` is a literal integer that the integer dtype ``dt`` holds
    (a value known only when the code runs keeps numba's int64)."""
    return isinstance(x, Lit) and np.iinfo(dt).min <= x.val <= np.iinfo(dt).max




def _typable(value):
    """Whether numba can read ``value`` as a global: NumPy, a number, a
    numeric array (frozen into the compiled code as a constant), a dtype."""
    if value is np or any(value is h for h in tuple(HELPERS.values())):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.dtype.isnative
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return True
    return isinstance(value, type) and issubclass(value, np.generic)


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


def numba_source(low, name=None):
    """The text numba would compile for the lowered Program ``low`` (``wengert show
    --backend numba``); a construct with no spelling raises ``NumbaUnsupported``."""
    source, namespace, fname, _ = generate_source(low, name, writer=NumbaWriter)
    _check_names(namespace, source.splitlines())
    return finish(rewritten(source, namespace), namespace, fname)[0]


def numba_codegen(low, on_error, name=None):
    """The lowered Program ``low`` (``lower(prog, **NumbaWriter.LOWERING)``) compiled by
    numba (``NumbaFunction``); a construct with no spelling raises ``NumbaUnsupported``
    here, before numba is asked."""
    prog = low.source
    source, namespace, fname, passed = generate_source(low, name, writer=NumbaWriter)
    _check_length(source)
    _check_names(namespace, source.splitlines())
    source, scratch = finish(rewritten(source, namespace), namespace, fname)
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


def refuse(construct, where):
    """The ``NumbaCompileError`` of ``fallback=False`` (``where``: the
    user's function, ``file:line``)."""
    return NumbaCompileError(
        f"{where}: numba cannot compile the derivative's code: {construct}. Use "
        "backend='numba' with fallback=True (the default) to run the Python backend there, "
        "or backend='python'", construct=construct)
