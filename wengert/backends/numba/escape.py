"""Escape analysis of generated code: which allocations may reach the
function's results.

    escaping : (FunctionDef, sites, np_name) -> set of sites    (``scratch``'s question)
    aliases  : (FunctionDef, sites, np_name) -> {site: names}   (``hoist``'s question)

``sites`` maps the position of a top-level statement of the function (or
a statement node, at any depth) to the allocation it makes (an ``ast`` of the code ``python.codegen`` writes). The
analysis is flow insensitive (a loop's later iterations are covered) and
conservative. For
each name it keeps the allocations it may *be* (the buffer, or a view of
it) and those it may *hold* (a list or tuple containing the buffer or a
view, at any depth):

* a plain, tuple or chained assignment, a ``for`` target, a subscript,
  slice or attribute (``x[i]``, ``x[1:]``, ``x.T``), a call not known to
  make a new array (``x.reshape``, ``np.ascontiguousarray``, ``max(a, b)``)
  pass on everything their operands may be or hold; a ufunc (or ``np.dot``)
  given ``out`` by position gives what ``out`` may be or hold;
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
other than the last statement) raises ``Unmodelled``.

Layer: backends.
"""
from __future__ import annotations

import ast

import numpy as np

__all__ = ["escaping", "aliases", "Unmodelled", "numpy_attr"]

# NumPy functions whose result is a new array (or scalar) sharing no memory
# with, and holding none of, their operands, called without ``out`` (``_OUT_AT``); every
# ufunc is too, given no more operands than its inputs
_FRESH_NUMPY = frozenset({
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
    "sum", "prod", "mean", "min", "max", "amin", "amax", "argmin", "argmax", "any", "all",
    "dot", "vdot", "inner", "outer", "concatenate", "stack", "vstack", "hstack", "copy",
    "arange", "linspace", "eye", "identity", "cumsum", "cumprod", "where", "sort", "argsort",
    "searchsorted", "tile", "repeat", "diff", "trace", "kron", "cross", "nonzero", "isclose",
    "allclose", "array_equal", "count_nonzero", "shape", "ndim", "size",
})
# those of them that take ``out`` by position, after this many operands
_OUT_AT = {"dot": 2, "outer": 2}
_FRESH_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "range", "abs", "round",
                             "isinstance"})
# methods of arrays whose result is new and that store nothing in the object
_FRESH_METHODS = frozenset({"item", "sum", "prod", "mean", "min", "max", "any", "all",
                            "argmin", "argmax", "cumsum", "cumprod", "dot", "fill"})


class Unmodelled(Exception):
    """A construct the escape analysis does not model: assume everything escapes."""


def numpy_attr(node, np_name):
    """``attr`` where ``node`` is ``np_name.attr``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == np_name:
        return node.attr
    return None


def escaping(fn, sites, np_name):
    """The allocation sites (``sites``: top-level statement index -> site)
    that a returned value or a parameter of ``fn`` may be or hold."""
    return _Escapes(fn, sites, np_name).run()


def aliases(fn, sites, np_name, plain_params=False):
    """{site: the names that may be or hold it} of the allocation sites
    ``sites`` (statements of ``fn``, at any depth, or top-level positions);
    ``plain_params``: the parameters are arrays, numbers or tuples of them,
    never a list (numba's code: the inputs are flattened)."""
    found = _Escapes(fn, sites, np_name, plain_params)
    found.run()
    out = {}
    for table in (found.is_, found.holds):
        for name, reached in table.items():
            for site in reached:
                out.setdefault(site, set()).add(name)
    return out


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

    def __init__(self, fn, sites, np_name, plain_params=False):
        self.fn, self.sites, self.np = fn, sites, np_name
        self.plain_params = plain_params
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
            raise Unmodelled("a return other than the last statement")
        if any(isinstance(n, _UNMODELLED) for n in ast.walk(self.fn) if n is not self.fn) or \
                self.fn.args.vararg or self.fn.args.kwarg or self.fn.args.kwonlyargs:
            raise Unmodelled("a nested scope")
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
        self.plain = self.assigned - (set() if self.plain_params else self.params)
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
            pairs = _paired(target, value)
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
            return node.id in self.plain or node.id not in self.assigned | (
                set() if self.plain_params else self.params)
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
            if numpy_attr(func, self.np) is not None:
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
        attr = numpy_attr(func, self.np)
        if attr is not None and plain and not call.keywords:
            # written into ``out`` (a ufunc's, np.dot's, by position): the result is it
            fn = getattr(np, attr, None)
            nin = fn.nin if isinstance(fn, np.ufunc) and fn.nout == 1 else _OUT_AT.get(attr)
            if nin is not None and len(call.args) == nin + 1:
                return self._reach(call.args[-1])
        if attr is not None and plain and not any(kw.arg in ("out", "copy") for kw in call.keywords):
            fn = getattr(np, attr, None)
            if (attr in _FRESH_NUMPY and len(call.args) <= _OUT_AT.get(attr, len(call.args))) \
                    or (isinstance(fn, np.ufunc) and len(call.args) <= fn.nin):
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
            if numpy_attr(func, self.np) is not None or (
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
            pairs = _paired(target, value)
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
            raise Unmodelled(type(target).__name__)

    def _block(self, stmts, top=False):
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Assign):
                self._effects(s)
                reached = self._reach(s.value)
                site = self.sites.get(s, self.sites.get(k) if top else None)
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
                raise Unmodelled(type(s).__name__)


def _paired(target, value):
    """Whether ``a, b = x, y`` binds item by item: a tuple or list of as
    many items, none starred."""
    return isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
        target.elts) and not any(isinstance(e, ast.Starred) for e in value.elts + target.elts)
