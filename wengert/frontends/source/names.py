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

__all__ = ["read_outside_at_run", "parameters", "GLOBALS", "CELL", "DONE", "RET", "EXIT_FLAG"]

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


def _outside_names(tree):
    """The ``Name`` loads of ``tree`` (a function) that no scope inside it
    binds: reads of its closure, its module's globals or builtins."""
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
    bound = _parameters_of(tree) | _bound_in(body)
    for part in body:
        visit(part, bound)
    return found


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
    return _ReadsOutside(_outside_names(tree), freevars, src).visit(tree)
