"""Where an equation comes from: the line of the user's code it computes, or differentiates.

An equation (``ir.Eqn``) carries ``where``: ``(filename, lineno)`` of the user's line, or
None. The source frontend stages a function with ``locating()`` on, and every equation it
records takes the line of the innermost frame of the user's code (the converted code keeps
the file and the line numbers of the original, ``frontends/source/converted.py``). A
transform replaying a Program (``trace.eval_program``, ``transpose.backward_pass``) records
each equation's work under that equation's line (``at``): the tangent lines of ``s = s +
x[i] ** 2``, and the cotangent lines of its transpose, carry its line too. Nothing prints
it but the code writer, in comments (``heading``): ``# grad of: s = s + x[i] ** 2
(model.py:12)``; ``line_map`` reads those comments back.

Layer: core.
"""
from __future__ import annotations

import ast
import functools
import linecache
import os
import re
import sys
import threading

from .errors import PACKAGE_DIR, library_file
from .ir import programs_in

__all__ = ["locate", "statement", "heading", "line_map", "files_of", "HEADING", "AST_LOCK",
           "CONVERTED", "parse"]

# CPython 3.11-3.12 keep the depth of the AST conversions (``ast.parse``, ``compile`` of
# a tree) in state shared by all threads: two threads converting at once, the second
# run when Python code (a GC callback) lets the first pause mid-tree, raise
# "SystemError: AST constructor recursion depth mismatch". Every AST conversion of
# wengert's (the source frontend's, the code writer's) holds this lock.
AST_LOCK = threading.RLock()


def parse(text, mode="exec"):
    """``ast.parse(text, mode=mode)`` holding ``AST_LOCK``."""
    with AST_LOCK:
        return ast.parse(text, mode=mode)


# the global of converted code (``frontends/source/rewrite.py``'s ``CONVERTED``): a frame
# running the user's function as the source frontend converted it
CONVERTED = "__wg_converted__"


def locate():
    """``(filename, lineno)`` of the innermost frame of the user's code: converted code
    (the source frontend's, which keeps the file and lines of the original, even for a
    function of wengert's own demo), else a frame outside wengert, NumPy and SciPy; or
    None."""
    frame = sys._getframe(1)
    while frame is not None:
        fname = frame.f_code.co_filename
        if frame.f_globals.get(CONVERTED) or (
                not fname.startswith(PACKAGE_DIR) and not fname.startswith("<")
                and not library_file(fname)):
            return _interned(fname, frame.f_lineno)
        frame = frame.f_back
    return None


@functools.lru_cache(maxsize=4096)
def _interned(fname, line):
    return (fname, line)


@functools.lru_cache(maxsize=256)
def _statements(fname, size):
    """{line: (first line, text)} of the statements of ``fname``'s source (``size``: the
    length of its text, so an edited file is read again): each line of a simple statement
    maps to the statement, written on one line; each line of a compound statement's
    header (``if x[i] > 0:``) to the header."""
    text = "".join(linecache.getlines(fname))
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines = text.splitlines()
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef,
                                                                ast.AsyncFunctionDef,
                                                                ast.ClassDef)):
            continue
        body = getattr(node, "body", None)
        end = node.end_lineno if not body else body[0].lineno - 1
        end = max(end, node.lineno)
        first = lines[node.lineno - 1][node.col_offset:]
        if body:                # a header: ``if x > 0:`` up to its colon
            seg = " ".join(line.strip() for line in [first] + lines[node.lineno:end])
            seg = seg.split("#")[0].strip()
            if not seg.endswith(":"):
                seg = seg[:seg.rfind(":") + 1] if ":" in seg else seg
        else:
            seg = ast.get_source_segment(text, node) or first
            seg = " ".join(part.strip() for part in seg.splitlines())
        for k in range(node.lineno, end + 1):
            # the innermost statement wins: ast.walk visits outer ones first
            found[k] = (node.lineno, seg)
    return found


def statement(where):
    """``(first line, text)`` of the user's statement at ``where``, or None."""
    if where is None:
        return None
    fname, line = where
    size = sum(len(x) for x in linecache.getlines(fname))
    found = _statements(fname, size).get(line) if size else None
    if found is None:
        text = linecache.getline(fname, line).strip()
        return (line, text) if text else None
    return found


HEADING = re.compile(r"^\s*# (grad|jvp) of: (.*)   \((.+):(\d+)\)$")


def heading(where, kind):
    """The comment line heading the code of ``where`` (``kind``: "grad" in a
    reverse sweep, "jvp" in forward-mode code), or None."""
    found = statement(where)
    if found is None:
        return None
    line, text = found
    return f"# {kind} of: {text}   ({os.path.basename(where[0])}:{line})"


def line_map(source, files=()):
    """{line number of ``source`` (from 1): (file, line)}: every line of generated
    code under a heading comment (``heading``), at the heading's indentation or
    deeper, maps to the user's line the heading names; ``files``: the full paths
    the headings' base names stand for."""
    full = {os.path.basename(f): f for f in files}
    found, stack = {}, []         # (indent, (file, line))
    for k, text in enumerate(source.splitlines(), 1):
        stripped = text.lstrip()
        if not stripped:
            continue
        indent = len(text) - len(stripped)
        while stack and indent < stack[-1][0]:
            stack.pop()
        m = HEADING.match(text)
        if m:
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, (full.get(m.group(3), m.group(3)), int(m.group(4)))))
            continue
        if stripped.startswith("def "):
            stack.clear()
        elif stack and not stripped.startswith(("#", "return ")):
            found[k] = stack[-1][1]
    return found


def files_of(prog):
    """The files of the user's code the equations of ``prog`` (a Program, its
    sub-Programs included) come from: what ``line_map``'s base names stand for."""
    found = set()
    for e in prog.eqns:
        if e.where is not None:
            found.add(e.where[0])
        for sub in programs_in(e.params):
            found |= files_of(sub)
    return found
