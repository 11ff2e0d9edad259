"""Where a function's source is, as text and positions: the lines of its own
code object (``inspect`` would follow a decorator's ``__wrapped__`` to another
function), the lambda that compiled to it where a line holds several, and
positions for the converted tree (tracebacks point at the user's lines).
Errors name file:line:column (``Source.error``)."""
from __future__ import annotations

import ast
import inspect
import textwrap

from ..errors import UnsupportedSyntax
from .source_names import parameters

__all__ = ["Source", "find_lambda", "fix_locations"]


class Source:
    """Where a function's source came from (its code object ``code``, named
    ``qualname``), to report file:line:column."""

    def __init__(self, code, qualname):
        self.code, self.qualname = code, qualname
        try:
            # the code object's own lines: ``inspect`` would follow a
            # decorator's ``__wrapped__`` to another function's source
            self.filename = inspect.getsourcefile(code) or "<unknown>"
            lines, self.first = inspect.getsourcelines(code)
        except (OSError, TypeError):
            raise UnsupportedSyntax(
                f"the source of {qualname} is not available (defined interactively, or not a "
                "Python function); the source engine reads a function's source. Define it "
                "in a file, or use engine='trace'", construct="unavailable source") from None
        self.text = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip())

    def where(self, node):
        line = getattr(node, "lineno", None)
        return f"{self.filename}:{self.first + line - 1}" if line else self.filename

    def error(self, node, construct, advice):
        line = self.first + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + self.indent + 1
        return UnsupportedSyntax(
            f"{self.filename}:{line}:{col}: {construct} is not supported by the source engine "
            f"(in {self.qualname}); {advice}. Or use engine='trace'",
            filename=self.filename, lineno=line, col=col, construct=construct)


def _code_parameters(code):
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return tuple(code.co_varnames[:n])


def find_lambda(module, code, src):
    """The lambda among those in ``code``'s source lines that compiled to
    ``code``: on its first line, with its parameters, and where several
    remain, the innermost one whose body holds the code's first position.
    (The lines may be a whole ``def`` whose default argument is the lambda.)"""
    lams = [n for n in ast.walk(module) if isinstance(n, ast.Lambda)
            and n.lineno + src.first - 1 == code.co_firstlineno
            and parameters(n.args) == _code_parameters(code)]
    if len(lams) == 1:
        return lams[0]
    if not lams:
        raise src.error(module.body[0], "this kind of definition", "define the function with def")
    positions = [p for p in getattr(code, "co_positions", lambda: ())()
                 if p[0] is not None and p[2] is not None and p[3] is not None and p[3] > p[2]]
    if positions:
        line, _, col, _ = min(positions, key=lambda p: (p[0], p[2]))
        holding = []
        for lam in lams:
            b = lam.body
            start = (b.lineno + src.first - 1, b.col_offset + src.indent)
            stop = (b.end_lineno + src.first - 1, b.end_col_offset + src.indent)
            if start <= (line, col) <= stop:
                holding.append((stop[0] - start[0], stop[1] - start[1], lam))
        if holding:
            return min(holding, key=lambda h: h[:2])[2]
    raise src.error(lams[0], "several lambdas on one line",
                    "give each function its own line or a def")


def fix_locations(tree):
    """Give every node a valid position: new nodes take their parent's line,
    and no node ends before it starts (so tracebacks point at user lines)."""
    def visit(node, line, col):
        if "lineno" in node._attributes:
            if not getattr(node, "lineno", 0):
                node.lineno, node.col_offset = line, col
            if not hasattr(node, "col_offset"):
                node.col_offset = col
            end = getattr(node, "end_lineno", None) or node.lineno
            if end < node.lineno:
                end = node.lineno
            node.end_lineno = end
            if end == node.lineno and (getattr(node, "end_col_offset", None) is None
                                       or node.end_col_offset < node.col_offset):
                node.end_col_offset = node.col_offset
            line, col = node.lineno, node.col_offset
        for child in ast.iter_child_nodes(node):
            visit(child, line, col)
    visit(tree, 1, 0)
