"""Which names a converted function reads from outside it, and the rewrite
that makes each such read go through the runtime (``source.env``).

Python binds a name in a function if the function assigns it (or takes it
as a parameter, loops over it, defines it); any other name is read from an
enclosing function, the module's globals or the builtins when the line runs.
``_outside_names`` finds the loads of the names no scope inside the
converted function binds (comprehensions and nested ``def``/``lambda`` are
scopes of their own; a default and a comprehension's first iterable are
evaluated in the enclosing scope), and ``read_outside_at_run`` rewrites them:

    W * x          ->   __wg.env_global(__wg_G, "W") * x
    a * x          ->   __wg.env_cell(__wg_cell_a, "a") * x     (a closure variable)

``__wg_G`` is the function's own globals dict and ``__wg_cell_a`` its cell,
so the value is looked up where it lives each time the code is staged.

Layer: frontends.
"""
from __future__ import annotations

import ast
import re

__all__ = ["read_outside_at_run", "parameters", "GLOBALS", "CELL", "DONE", "RET", "EXIT_FLAG",
           "SYMBOLS"]

GLOBALS, CELL = "__wg_G", "__wg_cell_"
# an early exit: the value returned, and the flags a block sets to True once
# it has returned, broken or continued (``__wg_brk_3``: loop 3's break)
DONE, RET = "__wg_done", "__wg_ret"
EXIT_FLAG = re.compile(r"__wg_(done|brk_\d+|cont_\d+)")


def _rt_call(attr, *args):
    """``__wg.attr(*args)``."""
    func = ast.Attribute(value=ast.Name(id="__wg", ctx=ast.Load()), attr=attr, ctx=ast.Load())
    return ast.Call(func=func, args=list(args), keywords=[])


def parameters(args):
    """A function's parameter names in ``co_varnames`` order."""
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return tuple(names)


_SCOPES = (ast.FunctionDef, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp)


def _parameters_of(scope):
    if isinstance(scope, (ast.FunctionDef, ast.Lambda)):
        return set(parameters(scope.args))
    names = set()
    for gen in scope.generators:
        names |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
    return names


def _scope_parts(scope):
    """(evaluated in the scope, evaluated in the enclosing scope): a def's
    defaults and a comprehension's first iterable belong to the enclosing one."""
    if isinstance(scope, ast.FunctionDef):
        return scope.body, scope.args.defaults + [d for d in scope.args.kw_defaults if d]
    if isinstance(scope, ast.Lambda):
        return [scope.body], scope.args.defaults + [d for d in scope.args.kw_defaults if d]
    first, *rest = scope.generators
    inner = [first.target] + first.ifs + [g for g in rest]
    inner += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    return inner, [first.iter]


def _bound_in(nodes):
    """Names the nodes bind in their own scope (not in nested ones)."""
    names = set()

    def visit(node):
        if isinstance(node, _SCOPES):
            if isinstance(node, ast.FunctionDef):
                names.add(node.name)
            for part in _scope_parts(node)[1]:
                visit(part)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for n in nodes:
        visit(n)
    return names


def _outside_names(tree, declared=frozenset()):
    """The ``Name`` loads of ``tree`` (a function) that no scope inside it
    binds: reads of its closure, its module's globals or builtins, and of
    the names it declares ``nonlocal`` or ``global`` (``declared``)."""
    found = []

    def visit(node, bound):
        if isinstance(node, _SCOPES):
            inner, outer = _scope_parts(node)
            for part in outer:
                visit(part, bound)
            here = bound | _parameters_of(node) | _bound_in(inner)
            for part in inner:
                visit(part, here)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child, bound)

    body, _ = _scope_parts(tree)
    bound = (_parameters_of(tree) | _bound_in(body)) - set(declared)
    for part in body:
        visit(part, bound)
    return found


# the operator of ``y op= v``, as the code and the error messages write it
SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
           ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


def _declared(tree):
    """{name: "nonlocal" | "global"} of the function's own declarations."""
    found = {}
    stack = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Nonlocal, ast.Global)):
            for x in n.names:
                found[x] = "nonlocal" if isinstance(n, ast.Nonlocal) else "global"
        elif not isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return found


class _WritesOutside(ast.NodeTransformer):
    """``n = v`` and ``n op= v`` of a name the function declares ``nonlocal``
    or ``global``: ``__wg.set_outside(where, "n", v)`` /
    ``__wg.aug_outside(where, "n", "op", v)``, writes made by the code at
    each call (``effects``); the declarations themselves go."""

    def __init__(self, declared, src):
        self.declared, self.src = declared, src

    def _where(self, name):
        if self.declared[name] == "nonlocal":
            return ast.Name(id=CELL + name, ctx=ast.Load())
        return ast.Name(id=GLOBALS, ctx=ast.Load())

    def visit_FunctionDef(self, node):
        return node             # a nested def is a scope of its own

    def visit_Lambda(self, node):
        return node

    def visit_Nonlocal(self, node):
        return ast.copy_location(ast.Pass(), node)

    visit_Global = visit_Nonlocal

    def visit_Name(self, node):
        if node.id in self.declared and not isinstance(node.ctx, ast.Load):
            raise self.src.error(node, f"this assignment of {self.declared[node.id]} "
                                 f"{node.id!r}", f"assign it on a line of its own "
                                 f"({node.id} = ... or {node.id} += ...)")
        return node

    def visit_Assign(self, node):
        t = node.targets[0]
        if len(node.targets) == 1 and isinstance(t, ast.Name) and t.id in self.declared:
            call = _rt_call("set_outside", self._where(t.id), ast.Constant(t.id),
                            self.visit(node.value))
            return ast.copy_location(ast.Expr(value=call), node)
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        t = node.target
        if isinstance(t, ast.Name) and t.id in self.declared:
            call = _rt_call("aug_outside", self._where(t.id), ast.Constant(t.id),
                            ast.Constant(SYMBOLS.get(type(node.op), "op")),
                            self.visit(node.value))
            return ast.copy_location(ast.Expr(value=call), node)
        return self.generic_visit(node)


class _ReadsOutside(ast.NodeTransformer):
    """Each read of a name from outside the function becomes
    ``__wg.env_cell(__wg_cell_x, "x")`` (a closure variable) or
    ``__wg.env_global(__wg_G, "x")`` (a global or builtin): the value is
    looked up where it lives, each time the code is generated, and what the
    generated code needs of it is read or checked at every call
    (``source.env``)."""

    def __init__(self, names, freevars, src):
        self.names, self.freevars, self.src = set(names), set(freevars), src

    def visit_Name(self, node):
        if node not in self.names:
            return node
        if node.id in self.freevars:
            call = _rt_call("env_cell", ast.Name(id=CELL + node.id, ctx=ast.Load()),
                            ast.Constant(node.id))
        else:
            call = _rt_call("env_global", ast.Name(id=GLOBALS, ctx=ast.Load()),
                            ast.Constant(node.id))
        return ast.copy_location(call, node)

    def _store_into(self, target, node):
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name) and target in self.names:
            raise self.src.error(node, f"assignment into {target.id!r}, which the function reads "
                                 "from outside (a global or closure variable)",
                                 f"copy it first ({target.id}_copy = np.array({target.id})) "
                                 "or return the new value")

    def visit_Assign(self, node):
        for t in node.targets:
            if isinstance(t, ast.Subscript):
                self._store_into(t, node)
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Subscript):
            self._store_into(node.target, node)
        return self.generic_visit(node)


def read_outside_at_run(tree, freevars, src):
    """``tree`` with its outside reads rewritten (``_ReadsOutside``;
    ``freevars``: the function's closure variables); the defaults and
    annotations of the function itself are dropped (its defaults are set from
    the function after the converted def runs)."""
    a = tree.args
    a.defaults = [ast.Constant(None) for _ in a.defaults]
    a.kw_defaults = [None if d is None else ast.Constant(None) for d in a.kw_defaults]
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None
    tree.returns = None
    declared = _declared(tree)
    for name, kind in declared.items():
        if kind == "nonlocal" and name not in freevars:
            raise src.error(tree, f"nonlocal {name!r} of a variable the source engine does not "
                            "see", "pass the value as an argument")
    tree = _ReadsOutside(_outside_names(tree, declared), freevars, src).visit(tree)
    # (the function's own body: ``visit`` of a def stops at nested ones)
    return _WritesOutside(declared, src).generic_visit(tree) if declared else tree
