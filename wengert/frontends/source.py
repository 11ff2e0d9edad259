"""The source frontend: a Python function's source -> a Program with
structured control flow.

    inspect.getsource + ast  ->  checked and rewritten AST  ->  staged Program

The rewrite (the *converter*) keeps the user's code and names, and only
replaces the constructs whose meaning depends on a traced value by calls to
``source_runtime`` (imported as ``__wg``):

* ``if c: ... else: ...``  -> ``__wg.if_stmt(c, true_fn, false_fn, state)``
* ``for t in it: ...``     -> ``__wg.for_stmt(it, body_fn, state)``
* ``while c: ...``         -> ``__wg.while_stmt(cond_fn, body_fn, state)``
* ``a and b``, ``a or b``, ``not a``, ``a if c else b``, chained comparisons;
* ``x[i] = v``, ``x[i] += v`` -> functional updates (the caller's arrays are
  never written);
* every call ``f(...)`` -> ``__wg.call(f, ...)``: the user's own functions are
  converted recursively (each once), ``math.*`` maps to NumPy on traced values,
  ``float``/``int``/``min``/``max``/``abs``/``sum`` are given array meanings.

``state`` is the tuple of variables the construct assigns; the helper runs
the construct as plain Python when nothing it depends on is traced (loop
counters, shapes, flags stay Python values), and as a ``cond`` / ``for_loop`` /
``while_loop`` equation otherwise. ``return`` inside a block, ``break`` and
``continue`` become flags that guard the statements after them.

The converted function is then *staged*: run once on symbolic values (their
shapes and dtypes known) to record the Program. Anything outside the
accepted language raises ``UnsupportedSyntax`` with file, line, column, the
construct and what to do instead.
"""
from __future__ import annotations

import ast
import builtins
import functools
import itertools
import os
import types

import numpy as _np

from ..errors import UnsupportedSyntax
from .source_names import (CELL as _CELL, DONE as _DONE, EXIT_FLAG, GLOBALS as _GLOBALS,
                           RET as _RET, read_outside_at_run)
from .source_text import Source, find_lambda, fix_locations
from ..primitives.core import TracerBase as _TracerBase
from . import source_runtime
from .source_env import default_value, static_object
from ..ir import aval_of
from ..pytree import flatten, unflatten
from ..staging import stage
from .tracing import input_names
from .source_runtime import Undefined

__all__ = ["convert", "make_program", "is_wengert_code", "is_converted", "UnsupportedSyntax"]

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


def _check(tree, src):
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

def _assigned(stmts):
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
            # changes it in place is seen (``source_blocks.Block``)
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


def _is_append(call):
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, ast.Name))


def _contains(stmts, kinds, stop=(ast.FunctionDef, ast.Lambda)):
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


# --- the rewrite ------------------------------------------------------------

_RT = "__wg"
_CONVERTED = "__wg_converted__"


def _name(id_, ctx=None):
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _rt(attr):
    return ast.Attribute(value=_name(_RT), attr=attr, ctx=ast.Load())


def _call(fn, *args):
    return ast.Call(func=fn, args=list(args), keywords=[])


def _tuple(names, ctx=None):
    return ast.Tuple(elts=[_name(n, ctx) for n in names], ctx=ctx or ast.Load())


def _assign(names, value):
    if len(names) == 1:
        tgt = ast.Tuple(elts=[_name(names[0], ast.Store())], ctx=ast.Store())
    else:
        tgt = _tuple(names, ast.Store())
    return ast.Assign(targets=[tgt], value=value)


def _state_values(names):
    """``(__wg.read(locals(), 'a'), ...)``: current values, UNDEF where unset."""
    loc = _call(_name("locals"))
    return ast.Tuple(elts=[_call(_rt("read"), loc, ast.Constant(n)) for n in names],
                     ctx=ast.Load())


def _fn(name, params, body, returns):
    body = list(body) + [ast.Return(value=_tuple(returns))]
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                           type_params=[])


def _set(flag, value):
    """``flag = value`` (a constant)."""
    return ast.Assign(targets=[_name(flag, ast.Store())], value=ast.Constant(value))


def _constants(names):
    """The tuple of names as string constants (for messages and state)."""
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _guard(flag, stmts):
    """``if __wg.not_(flag): stmts``: the statements after an exit, converted
    later as a guard (see ``visit_If``)."""
    node = ast.If(test=_call(_rt("not_"), _name(flag)), body=stmts, orelse=[])
    node.wg_guard = True
    return ast.copy_location(node, stmts[0]) if stmts else node


class _Converter(ast.NodeTransformer):
    def __init__(self, src):
        self.src = src
        self.counter = itertools.count()
        self._flags = _Flags()    # the early-exit flags of the loop being converted

    def fresh(self, base):
        return f"__wg_{base}_{next(self.counter)}"

    def visit_block(self, stmts):
        """Visit statements; a statement may become several."""
        out = []
        for s in stmts:
            v = self.visit(s)
            out.extend(v if isinstance(v, list) else [v])
        return out

    # -- blocks: early exits become flags that guard what follows
    def block(self, stmts, flags):
        """``stmts`` with ``return``/``break``/``continue`` turned into
        assignments of ``flags`` (a ``_Flags``) and the statements after a
        block that may set one guarded by it."""
        out = []
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Return) and flags.done:
                out += [ast.Assign(targets=[_name(_RET, ast.Store())],
                                   value=s.value or ast.Constant(None)), _set(_DONE, True)]
                # a return leaves every loop it is in
                return out + [_set(b, True) for b in flags.loops_left_by_return]
            if isinstance(s, ast.Break):
                return out + [_set(flags.brk, True)]
            if isinstance(s, ast.Continue):
                return out + [_set(flags.cont, True)]
            if isinstance(s, ast.If):
                s = ast.copy_location(ast.If(test=s.test, body=self.block(s.body, flags),
                                             orelse=self.block(s.orelse, flags)), stmts[k])
            out.append(s)
            rest = stmts[k + 1:]
            may_exit = flags.set_by(s) if rest and isinstance(
                s, (ast.If, ast.For, ast.While)) else []
            if may_exit:
                body = self.block(rest, flags)
                if len(may_exit) == 1:
                    out.append(_guard(may_exit[0], body))
                else:
                    test = _call(_rt("none_of"), *[_name(f) for f in may_exit])
                    guard = ast.If(test=test, body=body, orelse=[])
                    guard.wg_guard = True
                    out.append(ast.copy_location(guard, rest[0]))
                return out
        return out

    def visit_FunctionDef(self, node):
        body = node.body
        has_early_return = any(_contains([s], (ast.Return,)) for s in body[:-1]) or (
            body and not isinstance(body[-1], ast.Return) and _contains(body, (ast.Return,)))
        outer = self._flags
        self._flags = _Flags(done=has_early_return)
        if has_early_return:
            body = ([_set(_DONE, False),
                     ast.Assign(targets=[_name(_RET, ast.Store())], value=_rt("UNDEF"))]
                    + self.block(body, self._flags) + [ast.Return(value=_name(_RET))])
        node.body = self.visit_block(body)
        node.decorator_list = []
        self._flags = outer
        return node

    # -- statements
    def visit_If(self, node):
        # the names are the user's, taken before nested blocks add helpers,
        # and the early-exit flags those blocks set (a return in a loop in it)
        names = _assigned(node.body + node.orelse)
        node = self.generic_visit(node)
        names += [n for n in _assigned(node.body + node.orelse)
                  if (n == _RET or EXIT_FLAG.fullmatch(n)) and n not in names]
        t, f = self.fresh("if_true"), self.fresh("if_false")
        stmts = [_fn(t, names, node.body or [ast.Pass()], names),
                 _fn(f, names, node.orelse or [ast.Pass()], names)]
        # a guard of the statements after an exit (``block``): what they assign
        # is defined on the path that did not exit, and only read there
        runtime = "guard_stmt" if getattr(node, "wg_guard", False) else "if_stmt"
        call = _call(_rt(runtime), node.test, _name(t), _name(f), _state_values(names),
                     _constants(names), ast.Constant(self.src.where(node)))
        stmts.append(_assign(names, call) if names else ast.Expr(value=call))
        return [ast.copy_location(s, node) for s in stmts]

    def _loop(self, node, names):
        """What a for and a while loop share: the early-exit flags of its body
        (its own ``break`` and ``continue`` flags: an inner loop's ``break``
        must not stop an outer one), the flags' initialisation before it
        (``pre``), the converted body and the state names (the loop's own
        ``names`` and the flags it may set). Returns (pre, body, names, brk)."""
        outer = self._flags
        has_brk = _contains(node.body, (ast.Break,)) or (
            outer.done and _contains(node.body, (ast.Return,)))
        has_cont = _contains(node.body, (ast.Continue,))
        flags = _Flags(done=outer.done, brk=self.fresh("brk") if has_brk else None,
                       cont=self.fresh("cont") if has_cont else None,
                       outer_brks=outer.loops_left_by_return if outer.done else ())
        body = self.block(node.body, flags) if flags.any() else node.body
        if has_cont:
            body = [_set(flags.cont, False)] + body
        pre = [_set(flags.brk, False)] if has_brk else []
        returns = flags.done and _contains(node.body, (ast.Return,))
        added = ((flags.brk,) if has_brk else ()) + (
            flags.outer_brks + (_DONE, _RET) if returns else ())
        names = names + [n for n in added if n not in names]
        self._flags = flags
        try:
            body = self.visit_block(body)
        finally:
            self._flags = outer
        return pre, body, names, flags.brk

    def visit_For(self, node):
        tgt_names = _assigned([ast.Assign(targets=[node.target], value=ast.Constant(0))])
        pre, body, names, brk = self._loop(
            node, [n for n in _assigned(node.body) if n not in tgt_names])
        it, fname = self.fresh("item"), self.fresh("for_body")
        bind_target = ast.Assign(targets=[node.target], value=_name(it))
        fn = _fn(fname, [it] + names, [bind_target] + body, names)
        call = _call(_rt("for_stmt"), self.visit(node.iter), _name(fname), _state_values(names),
                     _constants(names), ast.Constant(brk or ""),
                     ast.Constant(self.src.where(node)))
        stmts = pre + [fn, _assign(names, call) if names else ast.Expr(value=call)]
        return [ast.copy_location(s, node) for s in stmts]

    def visit_While(self, node):
        pre, body, names, brk = self._loop(node, _assigned(node.body))
        test = self.visit(node.test)
        if brk:
            test = _call(_rt("and_"), ast.Lambda(args=_noargs(), body=_call(_rt("not_"),
                                                                             _name(brk))),
                         ast.Lambda(args=_noargs(), body=test))
        cname, bname = self.fresh("while_cond"), self.fresh("while_body")
        cond_fn = _fn(cname, names, [], [])
        cond_fn.body = [ast.Return(value=test)]
        body_fn = _fn(bname, names, body or [ast.Pass()], names)
        call = _call(_rt("while_stmt"), _name(cname), _name(bname), _state_values(names),
                     _constants(names), ast.Constant(self.src.where(node)))
        stmts = pre + [cond_fn, body_fn, _assign(names, call) if names else ast.Expr(value=call)]
        return [ast.copy_location(s, node) for s in stmts]

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and not node.targets[0].id.startswith("__wg")):
            # keep the user's name for the value, for printed and generated code
            nm = node.targets[0].id
            node.value = _call(_rt("named"), node.value, ast.Constant(nm))
            return node
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            t = node.targets[0]
            if not isinstance(t.value, ast.Name):
                raise self.src.error(node, "assignment to a nested subscript",
                                     "assign to a subscript of a plain variable")
            upd = _call(_rt("setitem"), _name(t.value.id), t.slice, node.value)
            return ast.copy_location(ast.Assign(targets=[_name(t.value.id, ast.Store())],
                                                value=upd, lineno=node.lineno), node)
        return node

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Subscript):
            if not isinstance(t.value, ast.Name):
                raise self.src.error(node, "augmented assignment to a nested subscript",
                                     "assign to a subscript of a plain variable")
            cur = _call(_rt("getitem"), _name(t.value.id), t.slice)
            new = ast.BinOp(left=cur, op=node.op, right=node.value)
            upd = _call(_rt("setitem"), _name(t.value.id), t.slice, new)
            return ast.copy_location(ast.Assign(targets=[_name(t.value.id, ast.Store())],
                                                value=upd, lineno=node.lineno), node)
        if isinstance(t, ast.Name):
            new = ast.BinOp(left=_name(t.id), op=node.op, right=node.value)
            return ast.copy_location(ast.Assign(targets=[_name(t.id, ast.Store())], value=new,
                                                lineno=node.lineno), node)
        raise self.src.error(node, "augmented assignment to an attribute",
                             "build a new value instead")

    # -- expressions
    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        fn = _rt("and_" if isinstance(node.op, ast.And) else "or_")
        return ast.copy_location(_call(fn, *[ast.Lambda(args=_noargs(), body=v)
                                            for v in node.values]), node)

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_rt("not_"), node.operand), node)
        return node

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        return ast.copy_location(_call(_rt("ifexp"), node.test,
                                       ast.Lambda(args=_noargs(), body=node.body),
                                       ast.Lambda(args=_noargs(), body=node.orelse)), node)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.Is, ast.IsNot)):
                # identity of what a value stands for (an outside object's place
                # is a proxy: ``type(x) is Config``)
                call = _call(_rt("is_"), node.left, node.comparators[0])
                if isinstance(node.ops[0], ast.IsNot):
                    call = ast.UnaryOp(op=ast.Not(), operand=call)
                return ast.copy_location(call, node)
            return node
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Lambda(args=_noargs(),
                                    body=ast.Compare(left=left, ops=[op], comparators=[right])))
            left = right
        return ast.copy_location(_call(_rt("and_"), *parts), node)

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return ast.copy_location(_call(_rt("getitem"), node.value, node.slice), node)
        return node

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if _is_append(node) or _is_runtime_call(node):
            return node
        return ast.copy_location(ast.Call(func=_rt("call"), args=[node.func] + node.args,
                                          keywords=node.keywords), node)


def _is_runtime_call(call):
    """A call of the runtime itself (``__wg.env_global(...)``), put there by an
    earlier rewrite: called as it is."""
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == _RT


def _noargs():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


class _Flags:
    """The early-exit flags in force where a block is converted: ``done``
    (the function returns early: ``__wg_done``/``__wg_ret``), the innermost
    loop's own ``brk`` and ``cont`` flag names (None where it has no
    ``break``/``continue``), and ``outer_brks``, the break flags of the loops
    around it, which a ``return`` sets too."""

    def __init__(self, done=False, brk=None, cont=None, outer_brks=()):
        self.done, self.brk, self.cont, self.outer_brks = done, brk, cont, outer_brks

    def any(self):
        return bool(self.done or self.brk or self.cont)

    @property
    def loops_left_by_return(self):
        return ((self.brk,) if self.brk else ()) + self.outer_brks

    def set_by(self, node):
        """The flags ``node`` (a converted statement) may set."""
        found = []
        for flag, stmt in ((_DONE if self.done else None, ast.Return), (self.brk, ast.Break),
                           (self.cont, ast.Continue)):
            if flag and _may_set(node, flag, stmt):
                found.append(flag)
        return found


def _may_set(node, flag, stmt):
    """Whether ``node`` assigns ``flag`` or holds a ``stmt`` (Return, Break,
    Continue) that will; an over-approximation (a nested loop's own break
    counts), which only adds a guard that is always true."""
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flag
                                             for t in n.targets):
            return True
        if isinstance(n, stmt):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _converted_code(code, filename, qualname):
    """The compiled conversion of a function's code: one per code object (the
    closures a factory makes share it; a reassigned ``__code__`` gets its own),
    for the 1024 used last (code made at run time, in a loop, stays bounded).
    ``filename`` is part of the key: code objects compare equal without it,
    and two files' equal functions each report their own lines."""
    src = Source(code, qualname)
    try:
        module = ast.parse(src.text)
    except SyntaxError:
        # inspect gives a lambda's lines from its own line, which may continue
        # an expression begun above (a lambda passed on a call's second line)
        raise src.error(ast.Pass(lineno=1, col_offset=0), "a lambda inside an expression that "
                        "spans several lines", "define the function with def") from None
    tree = module.body[0]
    if isinstance(tree, ast.Expr) and isinstance(tree.value, ast.Lambda):
        raise src.error(tree, "a lambda defined on the same line as other code",
                        "define the function with def")
    name = code.co_name                 # not __name__, which functools.wraps rewrites
    if isinstance(tree, ast.FunctionDef) and name != "<lambda>" and tree.name != name:
        raise src.error(tree, f"a function whose source is not its own def (found {tree.name!r})",
                        "define it with def")
    if not isinstance(tree, ast.FunctionDef) or name == "<lambda>":
        lam = find_lambda(module, code, src)
        tree = ast.FunctionDef(name="__wg_lambda", args=lam.args,
                               body=[ast.Return(value=lam.body)], decorator_list=[],
                               returns=None, type_params=[], lineno=lam.lineno,
                               col_offset=lam.col_offset)
    _check(tree, src)
    tree = read_outside_at_run(tree, code.co_freevars, src)
    conv = _Converter(src)
    new = conv.visit(tree)
    mod = ast.Module(body=[new], type_ignores=[])
    fix_locations(mod)
    ast.increment_lineno(mod, src.first - 1)
    return compile(mod, src.filename, "exec"), new.name, src


def convert(fn):
    """The converted version of a plain Python function (its compiled code
    cached per code object: ``_converted_code``). Its namespace holds only
    what the rewrite reads through: the runtime, ``fn``'s globals dict itself
    (read at each staging, never copied) and its closure cells."""
    if getattr(fn, "__wg_source__", None) is not None or is_converted(fn):
        return fn           # converted already (handed on by converted code)
    if not hasattr(fn, "__code__"):
        raise UnsupportedSyntax(
            f"the source of {getattr(fn, '__qualname__', repr(fn))} is not available (not a "
            "Python function); the source engine reads a function's source. Use engine='trace'",
            construct="unavailable source")
    code, name, src = _converted_code(fn.__code__, fn.__code__.co_filename, fn.__qualname__)
    glb = {_RT: source_runtime, _GLOBALS: fn.__globals__, _CONVERTED: True,
           "__builtins__": fn.__globals__.get("__builtins__", builtins)}
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        glb[_CELL + var] = cell
    ns = {}
    exec(code, glb, ns)
    out = ns[name]
    # a default is a value outside the function, kept on it: read where it
    # lives like a global (an array default changed in place is seen)
    if fn.__defaults__:
        out.__defaults__ = tuple(default_value(fn, "__defaults__", k, d)
                                 for k, d in enumerate(fn.__defaults__))
    if fn.__kwdefaults__:
        out.__kwdefaults__ = {k: default_value(fn, "__kwdefaults__", k, d)
                              for k, d in fn.__kwdefaults__.items()}
    out.__wrapped__ = fn
    out.__wg_source__ = src
    return out


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_converted(fn):
    """Whether ``fn`` is converted code already (a def nested in a converted
    function is converted with it, and reads what it closes over from there)."""
    return getattr(fn, "__globals__", {}).get(_CONVERTED, False)


def is_wengert_code(fn):
    """Whether ``fn`` is wengert's own (a trace-engine derivative's wrapper):
    judged by its code's file, since ``functools.wraps`` gives a wrapper the
    user's ``__module__`` and ``__wrapped__``. Such functions are called, not
    converted."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(_PACKAGE_DIR)


def is_static(leaf):
    """Python ints, bools, strings and other non-array values are part of the
    program (its specialisation); floats and arrays are its inputs."""
    t = type(leaf)
    if t is float or t is _np.ndarray or t is _np.float64:
        return False
    if isinstance(leaf, _TracerBase):
        return False
    if isinstance(leaf, (bool, int)):
        return True
    return not isinstance(leaf, (float, complex, _np.ndarray, _np.generic))


def make_program(fn, args, name=None, avals=None, kwargs=None):
    """Convert ``fn`` and stage it at the shapes and dtypes of ``args`` and
    ``kwargs`` (or at ``avals``, one per array and float leaf: symbolic
    lengths); the Program's inputs are the array and float leaves of ``args``,
    then of ``kwargs`` (by sorted key)."""
    leaves, in_tree = flatten((tuple(args), kwargs) if kwargs else tuple(args))
    static = [is_static(x) for x in leaves]
    if avals is None:
        avals = [aval_of(x) for x, s in zip(leaves, static) if not s]
    out_tree = [None]

    # an object argument is the same object at every call (the cache is keyed
    # by it), but what the code reads from it is read at each call
    statics = [static_object(x, f"arg{k}") if s else None
               for k, (x, s) in enumerate(zip(leaves, static))]
    # a bound method (``model.loss``): its function, converted, given the
    # object as a static argument (its attributes are read at each call)
    bound = ((static_object(fn.__self__, "self"),) if isinstance(fn, types.MethodType)
             else ())

    def flat(*xs):
        it = iter(xs)
        full = [st if s else next(it) for st, s in zip(statics, static)]
        # while staging: its defaults are read here
        converted = convert(fn.__func__ if bound else fn)
        call = unflatten(in_tree, full)
        out = (converted(*bound, *call[0], **call[1]) if kwargs
               else converted(*bound, *call))
        out_leaves, out_tree[0] = flatten(out)
        for leaf in out_leaves:
            if isinstance(leaf, Undefined):     # returned where it may be unassigned
                leaf.fail()
        return out_leaves

    names = input_names(fn, args, len(leaves))
    hints = [h for h, s in zip(names, static) if not s] if names else None
    prog = stage(flat, avals, name=name or getattr(fn, "__name__", "f"), hints=hints,
                 keep_custom=True)
    return prog, static, in_tree, out_tree[0]
