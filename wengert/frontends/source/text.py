"""Where a function's source is, as text and positions: the lines of its own
code object (``inspect`` would follow a decorator's ``__wrapped__`` to another
function; for a lambda inside a statement of several lines, the whole file's),
the lambda that compiled to it where a line holds several, and
positions for the converted tree (tracebacks point at the user's lines).
Errors name file:line:column (``Source.error``).

Layer: frontends.
"""
from __future__ import annotations

import ast
import dis
import inspect
import linecache
import textwrap
import types

from ...core.where import parse
from ...core.errors import UnsupportedSyntax
from .names import parameters

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
            lines, self.first = _code_lines(code, self.filename)
        except (OSError, TypeError):
            raise UnsupportedSyntax(
                f"the source of {qualname} is not available (defined interactively, or not a "
                "Python function); the source engine reads a function's source. Define it "
                "in a file, or use engine='trace'", construct="unavailable source") from None
        self.text = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip())

    def whole_file(self):
        """The whole file's module, for a lambda whose own lines do not parse
        alone (they continue a statement begun above, or leave one open:
        ``try: print(wg.grad(lambda x: ...)(x))``, a lambda on a call's second
        line); positions are then the file's own. None where the file does
        not parse either."""
        try:
            module = parse("".join(linecache.getlines(self.filename)))
        except (SyntaxError, ValueError):
            return None
        self.text, self.first, self.indent = None, 1, 0
        return module

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


def _code_lines(code, filename):
    """``inspect.getsourcelines(code)`` read from the file's lines directly: ``inspect``
    first looks for the module that holds the code, through every module imported (a
    tenth of a second on the first derivative of a program that has imported SciPy); the
    lines are the same. A file the line cache cannot read (a module loaded from an archive)
    takes ``inspect``'s way."""
    lines = linecache.getlines(filename)
    first = code.co_firstlineno
    if not lines or first > len(lines):
        return inspect.getsourcelines(code)
    return _def_block(lines[first - 1:], code.co_name) or inspect.getblock(lines[first - 1:]), first


def _def_block(lines, name):
    """The lines of the ``def`` (after its decorators) that ``lines`` begin
    with, found by indentation: ``inspect.getblock`` tokenizes, and the
    tokenizer's first use in a process compiles its patterns (a fifth of a
    first derivative's time). None where that is not sure, and ``inspect``
    decides: a block cut at a line of the margin inside a string, a bracket or
    a backslash continuation does not parse, so the block is taken only where
    it parses alone as one definition of ``name``; tabs, lambdas and classes
    are left to ``inspect``."""
    margin = len(lines[0]) - len(lines[0].lstrip())
    head = 0
    while head < len(lines) and lines[head].lstrip().startswith("@"):
        head += 1
    if head == len(lines) or not lines[head].lstrip().startswith(("def ", "async def ")):
        return None
    end = len(lines)
    for i in range(head + 1, len(lines)):
        text = lines[i].lstrip()
        if "\t" in lines[i][:len(lines[i]) - len(text)]:
            return None
        if text and not text.startswith("#") and len(lines[i]) - len(text) <= margin:
            end = i
            break
    while end > head + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip()[:1] == "#"
                              and len(lines[end - 1]) - len(lines[end - 1].lstrip()) <= margin):
        end -= 1
    block = lines[:end]
    try:
        module = parse(textwrap.dedent("".join(block)))
    except (SyntaxError, ValueError):
        return None
    ok = (len(module.body) == 1 and isinstance(module.body[0], (ast.FunctionDef, ast.AsyncFunctionDef))
          and module.body[0].name == name)
    return block if ok else None


def _code_parameters(code):
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return tuple(code.co_varnames[:n])


def find_lambda(module, code, src):
    """The lambda among those in ``code``'s source lines that compiled to
    ``code``: on its first line, with its parameters, and where several
    remain, the innermost one whose body holds the code's first position
    (Python 3.11+), else the one that compiles to the same code (where
    several do, they are the same text, so any one is right).
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
    # no column positions (Python 3.10): compile each candidate as it was
    same = [lam for lam in lams if _same_code(_compile_lambda(lam, code), code)]
    if same and len({ast.dump(lam) for lam in same}) == 1:
        return same[0]
    raise src.error(lams[0], "several lambdas on one line",
                    "give each function its own line or a def")


def _compile_lambda(lam, code):
    """The code object of ``lam`` compiled alone, inside a function that
    makes ``code``'s free variables closure cells, as they were where it was
    written (other names stay globals): its bytecode is then the original's."""
    cells = "".join(f"    {name} = None\n" for name in code.co_freevars)
    text = f"def {_ENCLOSING.split('.')[0]}():\n{cells}    return ({ast.unparse(lam)})\n"
    try:
        enclosing = compile(text, "<lambda>", "exec").co_consts
    except SyntaxError:
        return None
    outer = next(c for c in enclosing if isinstance(c, types.CodeType))
    return next((c for c in outer.co_consts if isinstance(c, types.CodeType)), None)


def _same_code(a, b):
    """The same instructions on the same names and constants (nested code
    compared alike; constants by type and repr, so 0.0 and -0.0 differ):
    the same computation, whatever the lines it came from. Python 3.11+
    compiles ``np.sin(x)`` as a plain attribute load where ``np`` was
    imported in the module, and a method load elsewhere: the two count as one."""
    if a is None or (a.co_varnames, a.co_freevars, a.co_cellvars) != \
            (b.co_varnames, b.co_freevars, b.co_cellvars):
        return False
    ops_a, ops_b = _instructions(a), _instructions(b)
    if len(ops_a) != len(ops_b):
        return False
    for (op_a, x), (op_b, y) in zip(ops_a, ops_b):
        if op_a != op_b:
            return False
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType)
                    and _same_code(x, y)):
                return False
        elif isinstance(x, str) and x.startswith(_ENCLOSING):
            # a nested function's qualified name (Python 3.10 loads it as a constant)
            if not (isinstance(y, str) and y.endswith("." + x[len(_ENCLOSING):])):
                return False
        elif (type(x), repr(x)) != (type(y), repr(y)):
            return False
    return True


_ENCLOSING = "_enclosing.<locals>."
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _instructions(code):
    """(operation, argument) of each instruction: jumps by the index of
    their target, method loads as attribute loads, and no ``PUSH_NULL``
    (which is the other half of an attribute load followed by a call)."""
    ins = [i for i in dis.get_instructions(code) if i.opname != "PUSH_NULL"]
    index = {i.offset: n for n, i in enumerate(ins)}
    return [("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname,
             index.get(i.argval) if i.opcode in _JUMPS else i.argval) for i in ins]


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
