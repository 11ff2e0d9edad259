"""The source frontend's first step: which Python the converter accepts
(``check``: anything else raises ``UnsupportedSyntax`` with the construct and
what to write instead), and which names a block assigns (``assigned``: the
state a staged ``if``/``for``/``while`` carries).

Layer: frontends.
"""
from __future__ import annotations

import ast




_ALLOWED_STMTS = (ast.FunctionDef, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign,
                  ast.Expr, ast.If, ast.For, ast.While, ast.Break, ast.Continue, ast.Pass,
                  ast.Assert)
_ADVICE = {
    ast.Try: "handle errors outside the differentiated function",
    ast.With: "move the context manager outside the differentiated function",
    ast.Raise: "check inputs before calling the differentiated function",
    ast.Global: "pass the value as an argument",
    ast.Nonlocal: "return the value instead of assigning an enclosing variable",
    ast.Delete: "drop the del; unused values cost nothing",
    ast.Import: "import at module level",
    ast.ImportFrom: "import at module level",
    ast.ClassDef: "define the class at module level",
    ast.AsyncFunctionDef: "use an ordinary def",
    ast.Yield: "return a list or an array instead of yielding",
    ast.YieldFrom: "return a list or an array instead of yielding",
    ast.Await: "use ordinary calls",
    ast.NamedExpr: "assign on a line of its own",
    ast.SetComp: "use a list",
    ast.Set: "use a list or a tuple",
    ast.Match: "use if/elif",
}


def _construct_name(node):
    return {ast.NamedExpr: "assignment expression (:=)", ast.YieldFrom: "yield from",
            ast.AsyncFunctionDef: "async def", ast.ClassDef: "class definition",
            ast.ImportFrom: "import"}.get(type(node), type(node).__name__.lower())


def check(tree, src):
    """Reject constructs outside the accepted language, with their position."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, _ALLOWED_STMTS):
            raise src.error(node, _construct_name(node),
                            _ADVICE.get(type(node), "rewrite it with the accepted constructs"))
        if type(node) in _ADVICE and not isinstance(node, ast.stmt):
            raise src.error(node, _construct_name(node), _ADVICE[type(node)])
        if isinstance(node, (ast.For, ast.While)) and node.orelse:
            raise src.error(node, f"{type(node).__name__.lower()}-else",
                            "set a flag in the loop and test it after the loop")
        if isinstance(node, ast.FunctionDef) and node.decorator_list and node is not tree:
            raise src.error(node, "decorated nested function", "define it without decorators")
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            raise src.error(node, "attribute assignment",
                            "build a new value and return it instead of mutating an object")
        if isinstance(node, ast.Lambda) and node.args.defaults:
            raise src.error(node, "lambda with default arguments", "use a nested def")


# --- names a block assigns --------------------------------------------------

def assigned(stmts):
    """Names a list of statements assigns (not descending into nested defs)."""
    out = []

    def add(n):
        if n not in out:
            out.append(n)

    def target(t):
        if isinstance(t, ast.Name):
            add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                target(e)
        elif isinstance(t, ast.Starred):
            target(t.value)
        elif isinstance(t, ast.Subscript):
            target(t.value)

    def visit(node):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                target(t)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            target(node.target)
        elif isinstance(node, ast.For):
            target(node.target)
            for s in node.body:
                visit(s)
        elif isinstance(node, (ast.If, ast.While)):
            for s in node.body + node.orelse:
                visit(s)
        elif isinstance(node, ast.FunctionDef):
            add(node.name)
        if not isinstance(node, (ast.For, ast.While, ast.If, ast.FunctionDef)):
            # ``parts.append(v)``, ``d.update(...)``: the container is part of
            # the block's state, so a branch or loop on a traced value that
            # changes it in place is seen (``source.blocks.Block``)
            for sub in ast.walk(node):
                if _mutates_receiver(sub):
                    add(sub.func.value.id)

    for s in stmts:
        visit(s)
    return out


# methods that change a list, dict or set in place
_MUTATORS = frozenset(("append", "extend", "insert", "pop", "remove", "clear", "sort",
                       "reverse", "update", "setdefault", "popitem", "add", "discard"))


def _mutates_receiver(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name))


def is_append(call):
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, ast.Name))


def contains(stmts, kinds, stop=(ast.FunctionDef, ast.Lambda)):
    """Whether a block holds a node of ``kinds`` (not inside nested defs, and
    for break/continue not inside nested loops)."""
    loop_bound = any(k in (ast.Break, ast.Continue) for k in kinds)

    def visit(node):
        if isinstance(node, kinds):
            return True
        if isinstance(node, stop):
            return False
        if loop_bound and isinstance(node, (ast.For, ast.While)):
            return False
        return any(visit(c) for c in ast.iter_child_nodes(node))

    return any(visit(s) for s in stmts)
