"""Loop temporaries of numba code written into buffers made once, before the loop.

    fresh_mark  : (writer, eqn) -> str           the trailing mark of a fresh array's statement
    loop_buffers : (source, fname, np_name) -> source     the marked statements rewritten

Why: a statement in a loop's body that makes a new array (``k1 = x * v1``)
allocates it at every step, and numba frees it at its last use; glibc hands
the top of its heap back to the system (its trim threshold) and faults the
pages in again at the next step. GradBench's ode gradient (100 steps on 1e5
floats, 20 such arrays a step) spent half its time in the kernel so, 1.9x
the Python backend's time. Written into a buffer allocated once before the
loop (``k1 = np.multiply(x, v1, buf_k1)``), the step allocates nothing.

Which statements: the code writer marks each statement of a row of one
result, a floating-point array of fixed shape (its shape and dtype known,
every operand of that dtype or a Python number), with the allocation it
stands for (``  #~fresh np.empty((x_shape0,), np.float64)``, ``fresh_mark``);
``t = a.copy()`` of a name whose only statement is marked takes its mark.
``loop_buffers`` strips every mark, and rewrites a marked statement ``t =
<expr>`` into the same values written into a buffer ``buf = np.empty(shape,
dtype)`` put before the outermost loop holding it, where all of these hold:

* it is a statement of a loop's body (not nested in an ``if`` of it), or of
  the function's top level (run once a call: the buffer is then the
  scratch's to keep between calls where it reaches no result, ``scratch``;
  GradBench's gmm and kmeans make arrays of 51 and 80 MB there, whose pages
  NumPy asks to be huge and numba faults in 4 kB at a time);
* its expression makes a new array by NumPy's rules, whatever the row: a
  ufunc of its operands (``a <op> b``, ``-a``, ``np.exp(a)``: ``t =
  np.multiply(a, b, buf)``), a product of matrices (``np.dot(a, b, buf)``), a
  copy (``t = np.positive(a, buf)``) or a concatenation of names (``t = buf;
  np.positive(a, t[0:a.shape[0]]); ...``); a mark on any other statement
  changes nothing;
* in a loop, every name that may be or hold its value (``escape.aliases``: views,
  renames, tuples, a ufunc written into it) appears only in that loop's body,
  and first, in each step, as the whole target of an assignment of the body
  (not in an ``if``) whose value does not read it: a value from one step is
  then dead before the statement runs again, so one buffer serves every step;
  a value carried to the next step, stored into a list, read after the loop
  or returned keeps its allocation;
* the names of the shape are the function's parameters (never assigned) or
  assigned once, at its top level, before that loop.

The shape's lengths are clamped at 0 (``max(n - 1, 0)``): a loop that runs no
step must not fail on its buffer.

Also rewritten here: an update of a slice, ``a[:-1] += v``, is ``w = a[:-1];
w += v`` (a view written in place). numba runs the first as a read, the
ufunc and a store of the slice back, whose overlap check copies it: 85 us
against 23 us on 1e5 floats. Only subscripts of slices (and integer literals
or ``range`` loop indices beside one) are rewritten, whose item is a view.

Layer: backends.
"""
from __future__ import annotations

import ast
import re

import numpy as np

from ...core.where import parse
from .escape import Unmodelled, aliases, numpy_attr

__all__ = ["fresh_mark", "loop_buffers"]

_MARK = re.compile(r"  #~fresh (.*)$")
_BINOPS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide",
           ast.Pow: "power"}
_UNARY = {ast.USub: "negative"}


def fresh_mark(code, eqn):
    """The trailing comment of the statement ``code`` writes for ``eqn``
    where it makes a new floating-point array of fixed shape with an
    elementwise ufunc (module docstring), else ""."""
    if len(eqn.outputs) != 1:
        return ""
    aval = eqn.outputs[0].aval
    if not aval.shape or any(d is None for d in aval.shape) or aval.dtype.kind not in "fc":
        return ""
    if any(x.aval.dtype != aval.dtype and not x.aval.weak for x in eqn.inputs):
        return ""
    # (a length named here first and read nowhere else: its line goes, ``loop_buffers``)
    shape = "(" + ", ".join(code.dim(d) for d in aval.shape) + ",)"
    return f"  #~fresh {code.np}.empty({shape}, {code.dtype(aval.dtype)})"


def loop_buffers(source, fname, np_name):
    """``source`` with its marks stripped and its marked loop temporaries and
    slice updates rewritten (module docstring); ``np_name``: NumPy's name in
    it (None: nothing rewritten)."""
    lines = source.splitlines()
    marks = {}
    for k, line in enumerate(lines):
        found = _MARK.search(line)
        if found:
            marks[k + 1] = found.group(1)
            lines[k] = line[:found.start()]
    if np_name is None:
        return _unread_lengths("\n".join(lines) + "\n", fname)
    try:
        return _Rewrite(lines, fname, np_name, marks).run()
    except Unmodelled:
        return _unread_lengths("\n".join(lines) + "\n", fname)


class _Rewrite:
    def __init__(self, lines, fname, np_name, marks):
        self.lines, self.np, self.marks = lines, np_name, marks
        self.text = "\n".join(lines) + "\n"
        tree = parse(self.text)
        self.fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
        self.taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}
        self.params = {a.arg for a in self.fn.args.args}
        self.stores = {}
        for n in ast.walk(self.fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.stores.setdefault(n.id, []).append(n)
        self.edits = {}             # line (1-based) -> its new lines
        self.before = {}            # top-level statement index -> lines put before it

    def run(self):
        self._copies_marked()
        sites = {}
        for top, loop, stmt in self._candidates():
            sites[stmt] = (top, loop, stmt)
        found = aliases(self.fn, {s: s for s in sites}, self.np, plain_params=True) if sites else {}
        for stmt, (top, loop, _) in sites.items():
            self._hoist(top, loop, stmt, found.get(stmt, set()))
        self._slice_updates()
        out = []
        for k, line in enumerate(self.lines, start=1):
            for top, added in self.before.items():
                if self.fn.body[top].lineno == k:
                    indent = line[:len(line) - len(line.lstrip())]
                    out += [indent + a for a in added]
            out += self.edits.get(k, [line])
        return _unread_lengths("\n".join(out) + "\n", self.fn.name)

    def _candidates(self):
        """(top-level index, loop, statement) of each marked one-line assignment
        of a loop's body."""
        def walk(stmts, top, loop):
            for k, s in enumerate(stmts):
                at = k if top is None else top
                if (loop is not None or top is None) and s.lineno in self.marks \
                        and s.lineno == s.end_lineno and isinstance(s, ast.Assign) \
                        and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                    yield at, loop, s
                if isinstance(s, (ast.For, ast.While)):
                    yield from walk(s.body, at, s)
                elif isinstance(s, ast.If):     # a loop in a branch: its own body's
                    yield from walk(s.body, at, None)
                    yield from walk(s.orelse, at, None)
        yield from walk(self.fn.body, None, None)

    def _copies_marked(self):
        """Mark ``t = a.copy()`` as ``a``'s statement is, where that is ``a``'s only one."""
        for s in ast.walk(self.fn):
            if isinstance(s, ast.Assign) and s.lineno == s.end_lineno and _copy_of(s.value):
                stored = self.stores.get(s.value.func.value.id, [])
                line = stored[0].lineno if len(stored) == 1 else None
                if line in self.marks and s.lineno not in self.marks:
                    self.marks[s.lineno] = self.marks[line]

    def _ufunc_form(self, value):
        """(ufunc name, operand nodes) of ``a op b``, ``-a``, ``np.f(a, ...)``, or None."""
        if isinstance(value, ast.BinOp) and type(value.op) in _BINOPS:
            return _BINOPS[type(value.op)], [value.left, value.right]
        if isinstance(value, ast.UnaryOp) and type(value.op) in _UNARY:
            return _UNARY[type(value.op)], [value.operand]
        if isinstance(value, ast.Call) and not value.keywords:
            attr = numpy_attr(value.func, self.np)
            fn = getattr(np, attr, None) if attr else None
            if isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin == len(value.args) and \
                    not any(isinstance(a, ast.Starred) for a in value.args):
                return attr, list(value.args)
        return None

    def _hoist(self, top, loop, stmt, names):
        target = stmt.targets[0].id
        mark = self.marks[stmt.lineno]
        alloc = parse(mark, mode="eval").body
        # a statement of the function's top level runs once a call: its buffer is the
        # scratch's to keep between calls, where it reaches no result (``scratch``)
        if (loop is not None and not self._dead_each_step(loop, names | {target})) \
                or not self._invariant(alloc, top):
            return
        buf = self._fresh(f"buf_{target}")
        written = self._written(stmt.value, target, buf, len(alloc.args[0].elts))
        if written is None:
            return
        dims = [ast.get_source_segment(mark, d) for d in alloc.args[0].elts]
        dims = [d if d.isdigit() else f"max({d}, 0)" for d in dims]
        dtype = ast.get_source_segment(mark, alloc.args[1])
        self.before.setdefault(top, []).append(
            f"{buf} = {self.np}.empty(({', '.join(dims)},), {dtype})")
        indent = self.lines[stmt.lineno - 1][:stmt.col_offset]
        self.edits[stmt.lineno] = [indent + w for w in written]

    def _written(self, value, target, buf, ndim):
        """The statements computing ``target = value`` into ``buf`` (of ``ndim``
        axes): a ufunc given it as its output, a copy or a concatenation stored
        into it; None for any other value."""
        segment = lambda node: ast.get_source_segment(self.text, node)  # noqa: E731
        form = self._ufunc_form(value)
        if form is not None:
            ufunc, operands = form
            return [f"{target} = {self.np}.{ufunc}"
                    f"({', '.join(segment(o) for o in operands)}, {buf})"]
        # a copy as np.positive (the same bits): numba compiles a store of an array
        # into a slice 5x slower, 2 s the first time in a process
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult) and ndim == 2:
            return [f"{target} = {self.np}.dot({segment(value.left)}, {segment(value.right)}, "
                    f"{buf})"]
        if _copy_of(value):
            return [f"{target} = {self.np}.positive({value.func.value.id}, {buf})"]
        if numpy_attr(getattr(value, "func", None), self.np) == "concatenate" and \
                len(value.args) == 1 and isinstance(value.args[0], ast.Tuple) and all(
                    isinstance(a, ast.Name) for a in value.args[0].elts):
            axis = {kw.arg: kw.value for kw in value.keywords}.pop("axis", ast.Constant(0))
            try:
                axis = ast.literal_eval(axis)
            except ValueError:
                return None
            if set(kw.arg for kw in value.keywords) - {"axis"} or not (
                    type(axis) is int and -ndim <= axis < ndim):
                return None
            k = axis % ndim
            lines, start = [f"{target} = {buf}"], "0"
            for a in value.args[0].elts:
                end = f"{a.id}.shape[{k}]" if start == "0" else f"{start} + {a.id}.shape[{k}]"
                lines.append(f"{self.np}.positive({a.id}, {target}[{':, ' * k}{start}:{end}])")
                start = end
            return lines
        return None

    def _dead_each_step(self, loop, names):
        inside = {n for s in loop.body for n in ast.walk(s)}     # (the nodes are alive)
        for name in names:
            if name in self.params:
                return False
            every = [n for n in ast.walk(self.fn) if isinstance(n, ast.Name) and n.id == name]
            if any(n not in inside for n in every):
                return False
            first = next((s for s in loop.body if any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(s))), None)
            if not (isinstance(first, ast.Assign) and len(first.targets) == 1
                    and isinstance(first.targets[0], ast.Name) and first.targets[0].id == name
                    and not any(isinstance(n, ast.Name) and n.id == name
                                for n in ast.walk(first.value))):
                return False
        return True

    def _invariant(self, alloc, top):
        """Whether the allocation's names are the same everywhere from before
        the top-level statement ``top`` on."""
        if not (isinstance(alloc, ast.Call) and len(alloc.args) == 2
                and isinstance(alloc.args[0], ast.Tuple)):
            return False
        for n in ast.walk(alloc):
            if not isinstance(n, ast.Name) or n.id == self.np:
                continue
            stored = self.stores.get(n.id, [])
            if n.id in self.params and not stored:
                continue
            if len(stored) != 1 or not any(
                    isinstance(s, ast.Assign) and s.targets[0] is stored[0]
                    for s in self.fn.body[:top]):
                return False
        return True

    def _fresh(self, preferred):
        name, k = preferred, 1
        while name in self.taken:
            name, k = f"{preferred}_{k}", k + 1
        self.taken.add(name)
        return name

    # a[:-1] += v  ->  w = a[:-1]; w += v
    def _slice_updates(self):
        indices = {n.target.id for n in ast.walk(self.fn) if isinstance(n, ast.For)
                   and isinstance(n.target, ast.Name) and isinstance(n.iter, ast.Call)
                   and isinstance(n.iter.func, ast.Name) and n.iter.func.id == "range"
                   and len(self.stores.get(n.target.id, ())) == 1}
        for s in ast.walk(self.fn):
            if not (isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript)
                    and isinstance(s.target.value, ast.Name) and s.lineno == s.end_lineno
                    and s.lineno not in self.edits and _view(s.target.slice, indices)):
                continue
            line = self.lines[s.lineno - 1]
            indent = line[:s.col_offset]
            view = self._fresh(f"{s.target.value.id}_view")
            op = line[s.target.end_col_offset:s.value.col_offset].strip()
            self.edits[s.lineno] = [
                f"{indent}{view} = {ast.get_source_segment(self.text, s.target)}",
                f"{indent}{view} {op} {ast.get_source_segment(self.text, s.value)}"]


def _copy_of(value):
    """Whether ``value`` is ``name.copy()``."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        value.func.attr == "copy" and isinstance(value.func.value, ast.Name) and \
        not value.args and not value.keywords


def _unread_lengths(source, fname):
    """``source`` without the lengths its function names first (``x_shape0 =
    x.shape[0]``: the leading assignments of a name to arithmetic of names,
    attributes, items and numbers) where nothing reads them (named for a
    mark whose statement kept its allocation)."""
    while True:
        tree = parse(source)
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
        read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        unread = []
        for s in fn.body:
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and all(isinstance(
                        n, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp,
                            ast.Constant, ast.Load, ast.operator, ast.unaryop))
                        for n in ast.walk(s.value))):
                break
            if s.targets[0].id not in read and s.lineno == s.end_lineno:
                unread.append(s.lineno)
        if not unread:
            return source
        lines = source.splitlines()
        source = "\n".join(line for k, line in enumerate(lines, 1) if k not in unread) + "\n"


def _view(index, ints):
    """Whether a subscript is basic slicing that leaves an array: a slice,
    or a tuple of slices and integers (literals, ``ints``) holding one."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Slice) for i in items) and all(
        isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and type(i.value) is int)
        or (isinstance(i, ast.Name) and i.id in ints) for i in items)
