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
whose buffer provably never reaches a returned value (``escape.py``: an
escape analysis over the statements; code it does not model reuses
nothing).

``with_scratch`` rewrites the code: the function takes one more parameter,
``scratch``, a tuple of arrays (one per reused allocation, of its dtype and
number of axes), and returns its results and the tuple it used; each
reused allocation reads ``v = scratch_k = reuse_empty(scratch[k], shape,
dtype)``: the passed array where its shape is the one asked, else a new
one, ``np.zeros``/``np.full`` refilled (``REUSE_HELPERS``). A while loop's
buffer, which doubles when full, keeps its largest size instead, and
takes a passed array of at least the rows asked (``_doubled``). The caller
keeps the tuples (``numba.codegen.NumbaFunction``). Nothing a call reads from a
reused buffer was not written by that call: the code reads none of an
``np.empty``'s items before writing them, and zeros and fills are written
again.

Layer: backends.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import numpy as np

from ...core.where import parse
from .escape import Unmodelled, escaping, numpy_attr

__all__ = ["Alloc", "reusable", "with_scratch", "REUSE_HELPERS", "reuse_empty", "reuse_zeros",
           "reuse_full", "reuse_rows"]

_ALLOCATORS = ("empty", "zeros", "full")


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


# --- finding the allocations ------------------------------------------------------------
def _dtype_named(node, np_name):
    """The dtype a node spells (``np.float32``), or None."""
    attr = numpy_attr(node, np_name)
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
    kind = numpy_attr(call.func, np_name)
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


def reusable(source, fname, np_name="np"):
    """The allocations of function ``fname`` in ``source`` whose buffers
    never reach its results (module docstring), in order; ``np_name``: the
    name the code gives NumPy."""
    tree = parse(source)
    fn = _function(tree, fname)
    allocs = {}
    for k, stmt in enumerate(fn.body):
        found = _allocation(stmt, k, np_name, source)
        if found is not None:
            allocs[k] = found
    if not allocs:
        return []
    try:
        escaped = escaping(fn, {k: k for k in allocs}, np_name)
    except Unmodelled:
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
    if not (isinstance(call, ast.Call) and numpy_attr(call.func, np_name) == "concatenate"
            and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Tuple)
            and len(call.args[0].elts) == 2):
        return False
    old, new = call.args[0].elts
    return isinstance(old, ast.Name) and old.id == name and isinstance(new, ast.Call) and \
        numpy_attr(new.func, np_name) == "empty_like" and len(new.args) == 1 and \
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
    taken = set(taken) | {n.id for n in ast.walk(parse(source)) if isinstance(n, ast.Name)}
    param = _fresh("scratch", taken)
    helpers = {}
    lines = source.splitlines()
    fn = _function(parse(source), fname)
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
