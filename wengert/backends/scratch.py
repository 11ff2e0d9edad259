"""Scratch buffers: the arrays generated code allocates and never returns,
handed back to it at the next call instead of allocated again.

    reusable     : (source, fname, np_name) -> [Alloc]   what may be reused
    with_scratch : (source, fname, allocs, taken) -> (source, names)

Why: a call of a compiled gradient allocates its residual and cotangent
buffers (``np.empty``, ``np.zeros``, ``np.full``) and frees them when it
returns; glibc gives the top of its heap back to the system (its trim
threshold) and the next call faults every page in again: 3 arrays of 1e5
floats cost 853 us a call under numba, 19 us with the memory kept.

What is reused: a statement ``name = np.empty|zeros|full(shape, ...)`` of
the function's top level (run once per call: not in a loop or a branch),
its shape a tuple of at least one item, its dtype known from the text,
whose buffer provably never reaches a returned value. ``reusable`` decides
that by an escape analysis over the statements (Python ``ast``), flow
insensitive (a loop's later iterations are covered) and conservative. For
each name it keeps the allocations it may *be* (the buffer, or a view of
it) and those it may *hold* (a list or tuple containing the buffer or a
view, at any depth):

* a plain, tuple or chained assignment, a ``for`` target, a subscript,
  slice or attribute (``x[i]``, ``x[1:]``, ``x.T``), a call not known to
  make a new array (``x.reshape``, ``np.ascontiguousarray``, a ufunc given
  ``out``, ``max(a, b)``) pass on everything their operands may be or hold;
* a tuple or list display holds its items; arithmetic (``a * b``) makes a
  new array, or joins containers (``l + [b]``): it holds what they hold;
* a value stored *into* a subscript or attribute (``out[i] = v``,
  ``out[i] += v``) is held by the outer name: as an element of an array it
  is copied, but the name may be a list, and a list keeps the object;
* a method call other than a few known ones (``l.append(v)``) makes the
  object hold its arguments;
* only NumPy functions known to return new arrays (``np.sin``, a ufunc
  without ``out``, ``np.sum``, ``np.concatenate``...), comparisons and the
  builtins ``int``/``float``/``len``/``range``... give values that are none
  of their operands.

An allocation escapes when a returned expression, or a parameter of the
function, may be or hold it. Code with a construct the analysis does not
model (``global``, a nested ``def``, ``with``, ``try``, a ``return``
other than the last statement) reuses nothing.

``with_scratch`` rewrites the code: the function takes one more parameter,
``scratch``, a tuple of arrays (one per reused allocation, of its dtype and
number of axes), and returns its results and the tuple it used; each
reused allocation reads ``v = scratch_k = reuse_empty(scratch[k], shape,
dtype)``: the passed array where its shape is the one asked, else a new
one, ``np.zeros``/``np.full`` refilled (``REUSE_HELPERS``). A while loop's
buffer, which doubles when full, keeps its largest size instead, and
takes a passed array of at least the rows asked (``_doubled``). The caller
keeps the tuples (``numbagen.NumbaFunction``). Nothing a call reads from a
reused buffer was not written by that call: the code reads none of an
``np.empty``'s items before writing them, and zeros and fills are written
again.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Alloc", "reusable", "with_scratch", "REUSE_HELPERS", "reuse_empty", "reuse_zeros",
           "reuse_full", "reuse_rows"]

_ALLOCATORS = ("empty", "zeros", "full")

# NumPy functions whose result is a new array (or scalar) sharing no memory
# with, and holding none of, their operands, called without ``out``; every
# ufunc is too, given no more operands than its inputs
_FRESH_NUMPY = frozenset({
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
    "sum", "prod", "mean", "min", "max", "amin", "amax", "argmin", "argmax", "any", "all",
    "dot", "vdot", "inner", "outer", "concatenate", "stack", "vstack", "hstack", "copy",
    "arange", "linspace", "eye", "identity", "cumsum", "cumprod", "where", "sort", "argsort",
    "searchsorted", "tile", "repeat", "diff", "trace", "kron", "cross", "nonzero", "isclose",
    "allclose", "array_equal", "count_nonzero", "shape", "ndim", "size",
})
_FRESH_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "range", "abs", "round",
                             "isinstance"})
# methods of arrays whose result is new and that store nothing in the object
_FRESH_METHODS = frozenset({"item", "sum", "prod", "mean", "min", "max", "any", "all",
                            "argmin", "argmax", "cumsum", "cumprod", "dot", "fill"})


@dataclass(frozen=True)
class Alloc:
    """A top-level allocation statement of the code: its target ``name``,
    NumPy function ``kind`` (empty, zeros, full), the text of its ``shape``
    and of its ``fill`` (full's value; None otherwise), its ``dtype`` and
    ``ndim``, its ``line`` (1-based, in the source) and its position among
    the statements of the function's body (``index``); ``grows``: the lines
    where a while loop's buffer doubles (``_doubled``), empty for others."""

    name: str
    kind: str
    shape: str
    fill: str | None
    dtype: np.dtype
    ndim: int
    line: int
    index: int
    grows: tuple = ()


class _Unmodelled(Exception):
    """A construct the escape analysis does not model: reuse nothing."""


# --- finding the allocations ------------------------------------------------------------
def _numpy_attr(node, np_name):
    """``attr`` where ``node`` is ``np_name.attr``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == np_name:
        return node.attr
    return None


def _dtype_named(node, np_name):
    """The dtype a node spells (``np.float32``), or None."""
    attr = _numpy_attr(node, np_name)
    kind = getattr(np, attr, None) if attr else None
    if isinstance(kind, type) and issubclass(kind, np.generic):
        return np.dtype(kind)
    return None


def _literal_dtype(node, np_name):
    """The dtype ``np.full`` gives a fill value spelled as a literal number
    (``1.0``, ``-2``, ``True``, ``np.float32(0.5)``), or None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        dt = _dtype_named(node.func, np_name)
        return dt if dt is not None and _literal_dtype(node.args[0], np_name) is not None else None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    if isinstance(value, (bool, int, float, complex)):
        dt = np.asarray(value).dtype
        return dt if dt.kind in "biufc" else None
    return None


def _allocation(stmt, index, np_name, source):
    """The ``Alloc`` of a top-level statement, or None when it is no
    allocation this module reuses."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    kind = _numpy_attr(call.func, np_name)
    if kind not in _ALLOCATORS or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    args = list(call.args)
    named = {kw.arg: kw.value for kw in call.keywords}
    if None in named or set(named) - {"dtype", "fill_value"}:
        return None                     # ``order=``, ``like=``: not a C array of ours
    shape = args.pop(0) if args else None
    if not isinstance(shape, ast.Tuple) or not shape.elts or \
            any(isinstance(e, ast.Starred) for e in shape.elts):
        return None
    fill = None
    if kind == "full":
        fill = args.pop(0) if args else named.pop("fill_value", None)
        if fill is None:
            return None
    if len(args) > 1 or (args and "dtype" in named):
        return None
    dtype_node = args[0] if args else named.get("dtype")
    if dtype_node is not None:
        dtype = _dtype_named(dtype_node, np_name)
    elif kind == "full":
        dtype = _literal_dtype(fill, np_name)
    else:
        dtype = np.dtype(np.float64)
    if dtype is None:
        return None
    return Alloc(stmt.targets[0].id, kind, ast.get_source_segment(source, shape),
                 None if fill is None else ast.get_source_segment(source, fill), dtype,
                 len(shape.elts), stmt.lineno, index)


def _function(tree, fname):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == fname:
            return node
    raise ValueError(f"no function {fname} in the generated code")


# --- the escape analysis ----------------------------------------------------------------
# methods whose result is an array, a number or a tuple of them, given an
# array or a number (``tolist`` makes a list: not here)
_PLAIN_METHODS = _FRESH_METHODS | frozenset({
    "copy", "reshape", "transpose", "ravel", "flatten", "squeeze", "astype", "swapaxes",
    "conj", "conjugate", "view", "round", "clip"})
# expressions that may hold a variable's value anywhere: not modelled
_UNMODELLED = (ast.NamedExpr, ast.Lambda, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom,
               ast.Await, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Escapes:
    """Which allocations each name may be (``is_``) or hold (``holds``),
    the flow-insensitive fixed point over the function's statements.

    ``plain``: the names that are never a mutable container (every value
    bound to them is an array, a number or a tuple of them: NumPy's results,
    arithmetic, their items); storing into an item of one copies the value
    (``out[i] = v`` into an array), so it holds nothing new by that, and
    arithmetic on them makes new arrays or numbers that hold nothing."""

    def __init__(self, fn, sites, np_name):
        self.fn, self.sites, self.np = fn, sites, np_name
        self.is_, self.holds = {}, {}
        self.params = {a.arg for a in fn.args.args}
        self.assigned = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}
        self.plain = set()
        self.returns = []

    def run(self):
        body = self.fn.body
        if not body or not isinstance(body[-1], ast.Return) or sum(
                isinstance(n, ast.Return) for n in ast.walk(self.fn)) != 1:
            raise _Unmodelled("a return other than the last statement")
        if any(isinstance(n, _UNMODELLED) for n in ast.walk(self.fn) if n is not self.fn) or \
                self.fn.args.vararg or self.fn.args.kwarg or self.fn.args.kwonlyargs:
            raise _Unmodelled("a nested scope")
        self._find_plain()
        changed = True
        while changed:
            before = self._size()
            self.returns = []
            self._block(body, top=True)
            changed = self._size() != before
        escaped = set()
        for value in self.returns:
            escaped |= self._all(value)
        for name in self.params:
            escaped |= self.is_.get(name, set()) | self.holds.get(name, set())
        return escaped

    def _size(self):
        return sum(map(len, self.is_.values())) + sum(map(len, self.holds.values()))

    # which names are plain: the greatest fixed point (parameters are not)
    def _find_plain(self):
        self.plain = self.assigned - self.params
        changed = True
        while changed:
            before = len(self.plain)
            for node in ast.walk(self.fn):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        self._plain_bind(t, node.value, self._is_plain(node.value))
                elif isinstance(node, ast.For):
                    self._plain_bind(node.target, None, self._is_plain(node.iter))
                elif isinstance(node, ast.comprehension):
                    self._plain_bind(node.target, None, False)
            changed = len(self.plain) != before

    def _plain_bind(self, target, value, plain):
        if isinstance(target, ast.Name):
            if not plain:
                self.plain.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts) and not any(isinstance(e, ast.Starred)
                                         for e in value.elts + target.elts)
            for k, t in enumerate(target.elts):
                if pairs:
                    self._plain_bind(t, value.elts[k], self._is_plain(value.elts[k]))
                elif isinstance(t, ast.Starred):
                    self._plain_bind(t.value, None, False)        # a list
                else:
                    self._plain_bind(t, None, plain)

    def _is_plain(self, node):
        """Whether an expression's value is surely no mutable container."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            # a name bound outside the code: NumPy, a helper, a constant array
            return node.id in self.plain or node.id not in self.assigned | self.params
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return self._is_plain(node.value)
        if isinstance(node, (ast.UnaryOp, ast.Compare)):
            return True
        if isinstance(node, ast.BinOp):
            return self._is_plain(node.left) and self._is_plain(node.right)
        if isinstance(node, (ast.Tuple, ast.BoolOp)):
            return all(self._is_plain(e) for e in getattr(node, "elts", None) or node.values)
        if isinstance(node, ast.IfExp):
            return self._is_plain(node.body) and self._is_plain(node.orelse)
        if isinstance(node, ast.Call):
            func = node.func
            if _numpy_attr(func, self.np) is not None:
                return True         # NumPy returns arrays, numbers, tuples of arrays
            if isinstance(func, ast.Name) and func.id in _FRESH_BUILTINS:
                return func.id not in self.assigned
            if isinstance(func, ast.Attribute) and func.attr in _PLAIN_METHODS:
                return self._is_plain(func.value)
        return False

    # values
    def _reach(self, node):
        """(is, holds) of an expression's value."""
        if isinstance(node, ast.Name):
            return set(self.is_.get(node.id, ())), set(self.holds.get(node.id, ()))
        if isinstance(node, ast.Constant):
            return set(), set()
        if isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
            # an element of a container may be what it holds; a view, the array
            is_, holds = self._reach(node.value)
            return is_ | holds, holds
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return set(), set().union(*[self._all(e) for e in node.elts])
        if isinstance(node, ast.BinOp):
            # new arrays or numbers; joined containers hold what each held
            if self._is_plain(node.left) and self._is_plain(node.right):
                return set(), set()
            return set(), self._reach(node.left)[1] | self._reach(node.right)[1]
        if isinstance(node, (ast.UnaryOp, ast.Compare)):
            return set(), set()
        if isinstance(node, (ast.BoolOp, ast.IfExp)):
            parts = node.values if isinstance(node, ast.BoolOp) else [node.body, node.orelse]
            reached = [self._reach(p) for p in parts]
            return set().union(*[r[0] for r in reached]), set().union(*[r[1] for r in reached])
        if isinstance(node, ast.Call):
            return self._call(node)
        everything = self._names(node)
        return everything, set(everything)

    def _all(self, node):
        is_, holds = self._reach(node)
        return is_ | holds

    def _names(self, node):
        """Everything any name read in ``node`` may be or hold."""
        found = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                found |= self.is_.get(n.id, set()) | self.holds.get(n.id, set())
        return found

    def _call(self, call):
        func = call.func
        plain = not any(isinstance(a, ast.Starred) for a in call.args)
        attr = _numpy_attr(func, self.np)
        if attr is not None and plain and not any(kw.arg in ("out", "copy") for kw in call.keywords):
            fn = getattr(np, attr, None)
            if attr in _FRESH_NUMPY or (isinstance(fn, np.ufunc) and len(call.args) <= fn.nin):
                return set(), set()
        if isinstance(func, ast.Name) and func.id in _FRESH_BUILTINS \
                and func.id not in self.assigned:
            return set(), set()
        if isinstance(func, ast.Attribute) and attr is None:
            if func.attr in _FRESH_METHODS:
                return set(), set()
            if func.attr == "copy" and not call.args:
                return set(), self._reach(func.value)[1]      # a list's copy holds its items
        everything = self._names(call)
        return everything, set(everything)

    # statements
    def _effects(self, node):
        """What the calls in an expression store: a method call other than a
        known one, into its object (unless plain); a call of something other
        than NumPy, into each operand."""
        for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
            func = call.func
            if _numpy_attr(func, self.np) is not None or (
                    isinstance(func, ast.Name) and func.id in _FRESH_BUILTINS):
                continue
            stored = set().union(*[self._names(a) for a in call.args],
                                 *[self._names(kw.value) for kw in call.keywords])
            if isinstance(func, ast.Attribute):
                if not (func.attr in _PLAIN_METHODS and self._is_plain(func.value)):
                    self._hold(func.value, stored)
            else:
                for a in list(call.args) + [kw.value for kw in call.keywords]:
                    self._hold(a, stored)

    def _hold(self, target, reached):
        """The outermost name of ``target`` (``l`` of ``l[0].x``) holds
        ``reached``, unless it is plain (an item of an array is a copy)."""
        while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
            target = target.value
        if isinstance(target, ast.Name) and reached and target.id not in self.plain:
            self.holds.setdefault(target.id, set()).update(reached)

    def _bind(self, target, reached, value=None):
        is_, holds = reached
        if isinstance(target, ast.Name):
            self.is_.setdefault(target.id, set()).update(is_)
            self.holds.setdefault(target.id, set()).update(holds)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts) and not any(isinstance(e, ast.Starred)
                                         for e in value.elts + target.elts)
            for k, t in enumerate(target.elts):
                if pairs:
                    self._bind(t, self._reach(value.elts[k]), value.elts[k])
                elif isinstance(t, ast.Starred):
                    self._bind(t.value, (is_ | holds, is_ | holds))
                else:       # an item of the value: a row (a view) or an element
                    self._bind(t, (is_ | holds, holds))
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self._hold(target, is_ | holds)       # stored into: see the module docstring
        else:
            raise _Unmodelled(type(target).__name__)

    def _block(self, stmts, top=False):
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Assign):
                self._effects(s)
                reached = self._reach(s.value)
                site = self.sites.get(k) if top else None
                for t in s.targets:
                    self._bind(t, reached, s.value)
                    if site is not None:
                        self._bind(t, ({site}, set()))
            elif isinstance(s, ast.AugAssign):
                self._effects(s)
                # ``l += [v]`` extends a list in place: the name holds v
                self._hold(s.target, self._all(s.value))
            elif isinstance(s, ast.Expr):
                self._effects(s)
            elif isinstance(s, (ast.If, ast.While)):
                self._effects(s.test)
                self._block(s.body)
                self._block(s.orelse)
            elif isinstance(s, ast.For):
                self._effects(s.iter)
                is_, holds = self._reach(s.iter)
                self._bind(s.target, (is_ | holds, holds))
                self._block(s.body)
                self._block(s.orelse)
            elif isinstance(s, ast.Return):
                self._effects(s)
                if s.value is not None:
                    self.returns.append(s.value)
            elif not isinstance(s, (ast.Pass, ast.Break, ast.Continue)):
                raise _Unmodelled(type(s).__name__)


def reusable(source, fname, np_name="np"):
    """The allocations of function ``fname`` in ``source`` whose buffers
    never reach its results (module docstring), in order; ``np_name``: the
    name the code gives NumPy."""
    tree = ast.parse(source)
    fn = _function(tree, fname)
    allocs = {}
    for k, stmt in enumerate(fn.body):
        found = _allocation(stmt, k, np_name, source)
        if found is not None:
            allocs[k] = found
    if not allocs:
        return []
    try:
        escaped = _Escapes(fn, {k: k for k in allocs}, np_name).run()
    except _Unmodelled:
        return []
    kept = [a for k, a in sorted(allocs.items()) if k not in escaped]
    return [_doubled(fn, a, np_name) for a in kept]


def _doubled(fn, alloc, np_name):
    """``alloc`` with ``grows`` set where it is a while loop's buffer
    (``CodeWriter.buffers``), written as::

        acc = np.empty((8, ...))            # the allocation, top level
        ...
            if k == acc.shape[0]:           # its own rows tested, nothing else grown
                acc = np.concatenate((acc, np.empty_like(acc)))
            ... acc[k] = y ... acc[j] ...   # rows written and read, one at a time
        acc = acc[:k]                       # top level: the rows written

    and nothing else reads ``acc`` between the allocation and the cut: then
    the code gives the same results from a buffer of more rows (it doubles
    later, and the cut keeps the rows written), so the largest buffer of a
    call can be the next call's (no doubling, no copies, no fresh pages)."""
    name = alloc.name
    cut = next((k for k, s in enumerate(fn.body) if k > alloc.index and _is_cut(s, name)), None)
    if alloc.kind != "empty" or cut is None:
        return alloc
    window = fn.body[alloc.index + 1:cut]
    parents = {child: node for stmt in window for node in ast.walk(stmt)
               for child in ast.iter_child_nodes(node)}
    doubled = []
    for stmt in window:
        for node in ast.walk(stmt):
            if isinstance(node, ast.If) and len(node.body) == 1 and \
                    _is_doubling(node.body[0], name, np_name):
                if not _tests_rows(node.test, name):
                    return alloc
                doubled.append(node.body[0])
    if not doubled:
        return alloc
    inside = {n for d in doubled for n in ast.walk(d)}         # nodes: by identity
    tests = {n for d in doubled for n in ast.walk(parents[d].test)}
    for stmt in window:
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Name) and node.id == name) or node in inside:
                continue
            up = parents.get(node)
            row = isinstance(up, ast.Subscript) and up.value is node and not any(
                isinstance(n, ast.Slice) for n in ast.walk(up.slice))
            if not (row or node in tests):
                return alloc        # the whole buffer read (or rebound): its rows matter
    return replace(alloc, grows=tuple(d.lineno for d in doubled))


def _is_cut(stmt, name):
    """``name = name[:k]``"""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name and \
        isinstance(stmt.value, ast.Subscript) and isinstance(stmt.value.value, ast.Name) and \
        stmt.value.value.id == name and isinstance(stmt.value.slice, ast.Slice) and \
        stmt.value.slice.lower is None and stmt.value.slice.step is None and \
        stmt.value.slice.upper is not None


def _is_doubling(stmt, name, np_name):
    """``name = np.concatenate((name, np.empty_like(name)))``"""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name):
        return False
    call = stmt.value
    if not (isinstance(call, ast.Call) and _numpy_attr(call.func, np_name) == "concatenate"
            and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Tuple)
            and len(call.args[0].elts) == 2):
        return False
    old, new = call.args[0].elts
    return isinstance(old, ast.Name) and old.id == name and isinstance(new, ast.Call) and \
        _numpy_attr(new.func, np_name) == "empty_like" and len(new.args) == 1 and \
        not new.keywords and isinstance(new.args[0], ast.Name) and new.args[0].id == name


def _tests_rows(test, name):
    """``k == name.shape[0]``, ``k`` a plain name"""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
            isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Name)):
        return False
    rows = test.comparators[0]
    return isinstance(rows, ast.Subscript) and isinstance(rows.slice, ast.Constant) and \
        rows.slice.value == 0 and isinstance(rows.value, ast.Attribute) and \
        rows.value.attr == "shape" and isinstance(rows.value.value, ast.Name) and \
        rows.value.value.id == name


# --- the rewrite --------------------------------------------------------------------------
def reuse_empty(buf, shape, dtype):
    """``np.empty(shape, dtype)``: ``buf`` where it has that shape."""
    if buf.shape == shape:
        return buf
    return np.empty(shape, dtype)


def reuse_zeros(buf, shape, dtype):
    """``np.zeros(shape, dtype)``: ``buf`` zeroed where it has that shape."""
    if buf.shape == shape:
        buf[...] = 0
        return buf
    return np.zeros(shape, dtype)


def reuse_full(buf, shape, value):
    """``np.full(shape, value)``: ``buf`` filled where it has that shape."""
    if buf.shape == shape:
        buf[...] = value
        return buf
    return np.full(shape, value)


def reuse_rows(buf, shape, dtype):
    """``np.empty(shape, dtype)`` for a buffer that doubles when full
    (``_doubled``): ``buf`` where it has that shape or more rows."""
    if buf.shape[1:] == shape[1:] and buf.shape[0] >= shape[0]:
        return buf
    return np.empty(shape, dtype)


# the helpers by the allocation they stand for (a doubling one: "rows")
REUSE_HELPERS = {"empty": reuse_empty, "zeros": reuse_zeros, "full": reuse_full,
                 "rows": reuse_rows}


def _fresh(preferred, taken):
    name, k = preferred, 1
    while name in taken:
        name, k = f"{preferred}_{k}", k + 1
    taken.add(name)
    return name


def with_scratch(source, fname, allocs, taken, np_name="np", dtype_text=None):
    """``source`` with function ``fname`` reusing ``allocs`` (``reusable``'s):
    (the new source, {helper's name in the code: its kind}, the scratch
    parameter's name). ``taken``: names the code may not use (every
    identifier it reads); ``dtype_text``: dtype -> its spelling (default
    ``np.<name>``)."""
    taken = set(taken) | {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    param = _fresh("scratch", taken)
    helpers = {}
    lines = source.splitlines()
    fn = _function(ast.parse(source), fname)
    slots = []
    for k, a in enumerate(allocs):
        kind = "rows" if a.grows else a.kind
        helper = next((h for h, used in helpers.items() if used == kind), None) or \
            _fresh(f"reuse_{kind}", taken)
        helpers[helper] = kind
        slot = _fresh(f"{param}_{k}", taken)
        for line in a.grows:        # the largest buffer is kept: ``slot`` too
            text = lines[line - 1]
            lead = text[:len(text) - len(text.lstrip())]
            assert text.startswith(f"{lead}{a.name} = ")
            lines[line - 1] = f"{lead}{a.name} = {slot} = {text[len(lead) + len(a.name) + 3:]}"
        slots.append(slot)
        last = a.fill if a.kind == "full" else (dtype_text or _dtype_text)(a.dtype, np_name)
        line = lines[a.line - 1]
        indent = line[:len(line) - len(line.lstrip())]
        lines[a.line - 1] = (f"{indent}{a.name} = {slot} = "
                             f"{helper}({param}[{k}], {a.shape}, {last})")
    ret = fn.body[-1]
    value = ast.get_source_segment(source, ret.value) if ret.value is not None else "None"
    indent = lines[ret.lineno - 1][:ret.col_offset]
    lines[ret.lineno - 1:ret.end_lineno] = [f"{indent}return {value}, ({', '.join(slots)},)"]
    head = lines[fn.lineno - 1]
    close = head.rindex(")")
    sep = ", " if fn.args.args else ""
    lines[fn.lineno - 1] = f"{head[:close]}{sep}{param}{head[close:]}"
    return "\n".join(lines) + "\n", helpers, param


def _dtype_text(dtype, np_name):
    name = "bool_" if dtype == np.bool_ else dtype.name
    return f"{np_name}.{name}"
