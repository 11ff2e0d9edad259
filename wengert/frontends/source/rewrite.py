"""The converter: a function's AST rewritten so that every construct whose
meaning depends on a traced value calls the runtime (``__wg``, see
``source``). ``source.converted`` compiles the result once per code object and
makes it a function whose namespace holds the runtime it is given.

Layer: frontends.
"""
from __future__ import annotations

import ast
import itertools


from .names import DONE as _DONE, EXIT_FLAG, RET as _RET
from .alias import guard as _alias_guard, param_writes_stmt
from .check import assigned, contains, is_append


# the operator of ``y op= v``, as the error messages write it
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
            ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
            ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


# --- the rewrite ------------------------------------------------------------

RT = "__wg"
CONVERTED = "__wg_converted__"


def _name(id_, ctx=None):
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _rt(attr):
    return ast.Attribute(value=_name(RT), attr=attr, ctx=ast.Load())


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


class Converter(ast.NodeTransformer):
    def __init__(self, src):
        self.src = src
        self.counter = itertools.count()
        self._flags = _Flags()    # the early-exit flags of the loop being converted
        self._nested = False      # inside the converted function's own def

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
        has_early_return = any(contains([s], (ast.Return,)) for s in body[:-1]) or (
            body and not isinstance(body[-1], ast.Return) and contains(body, (ast.Return,)))
        outer = self._flags
        self._flags = _Flags(done=has_early_return)
        if has_early_return:
            body = ([_set(_DONE, False),
                     ast.Assign(targets=[_name(_RET, ast.Store())], value=_rt("UNDEF"))]
                    + self.block(body, self._flags) + [ast.Return(value=_name(_RET))])
        nested, self._nested = self._nested, True
        node.body = self.visit_block(body)
        self._nested = nested
        node.decorator_list = []
        self._flags = outer
        if nested and getattr(node, "wg_param_writes", None):
            # a nested def that writes into its arguments' values: checked
            # where it is called (``source.alias_check``)
            return [node, param_writes_stmt(node, RT)]
        return node

    # -- statements
    def visit_If(self, node):
        # the names are the user's, taken before nested blocks add helpers,
        # and the early-exit flags those blocks set (a return in a loop in it)
        names = assigned(node.body + node.orelse)
        node = self.generic_visit(node)
        names += [n for n in assigned(node.body + node.orelse)
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
        has_brk = contains(node.body, (ast.Break,)) or (
            outer.done and contains(node.body, (ast.Return,)))
        has_cont = contains(node.body, (ast.Continue,))
        flags = _Flags(done=outer.done, brk=self.fresh("brk") if has_brk else None,
                       cont=self.fresh("cont") if has_cont else None,
                       outer_brks=outer.loops_left_by_return if outer.done else ())
        body = self.block(node.body, flags) if flags.any() else node.body
        if has_cont:
            body = [_set(flags.cont, False)] + body
        pre = [_set(flags.brk, False)] if has_brk else []
        returns = flags.done and contains(node.body, (ast.Return,))
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
        tgt_names = assigned([ast.Assign(targets=[node.target], value=ast.Constant(0))])
        pre, body, names, brk = self._loop(
            node, [n for n in assigned(node.body) if n not in tgt_names])
        it, fname = self.fresh("item"), self.fresh("for_body")
        bind_target = ast.Assign(targets=[node.target], value=_name(it))
        fn = _fn(fname, [it] + names, [bind_target] + body, names)
        target = node.target.id if isinstance(node.target, ast.Name) else ""
        call = _call(_rt("for_stmt"), self.visit(node.iter), _name(fname), _state_values(names),
                     _constants(names), ast.Constant(brk or ""),
                     ast.Constant(self.src.where(node)), ast.Constant(target))
        stmts = pre + [fn, _assign(names, call) if names else ast.Expr(value=call)]
        return [ast.copy_location(s, node) for s in stmts]

    def visit_While(self, node):
        pre, body, names, brk = self._loop(node, assigned(node.body))
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
        if hasattr(node, "wg_alias"):     # a write another live name may see
            return [_alias_guard(node, RT)] + _as_list(self._visit_assign(node))
        return self._visit_assign(node)

    def _visit_assign(self, node):
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
        if hasattr(node, "wg_alias"):
            return [_alias_guard(node, RT)] + _as_list(self._visit_aug_assign(node))
        return self._visit_aug_assign(node)

    def _visit_aug_assign(self, node):
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
            # y op= v: a new value, of y's kind where y is a 0-d array (``augmented``)
            new = _call(_rt("augmented"), _name(t.id),
                        ast.BinOp(left=_name(t.id), op=node.op, right=node.value),
                        ast.Constant(_SYMBOLS.get(type(node.op), "op")))
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
        if is_append(node) or _is_runtime_call(node):
            return node
        # a call whose arguments nothing reads afterwards: what the callee
        # writes into them is not seen (``source.alias``)
        unseen = getattr(node, "wg_args_unseen", None)
        if unseen:
            return ast.copy_location(ast.Call(
                func=_rt("call_unseen"), args=[ast.Constant(unseen), node.func] + node.args,
                keywords=node.keywords), node)
        return ast.copy_location(ast.Call(func=_rt("call"), args=[node.func] + node.args,
                                          keywords=node.keywords), node)


def _as_list(stmt):
    return stmt if isinstance(stmt, list) else [stmt]


def _is_runtime_call(call):
    """A call of the runtime itself (``__wg.env_global(...)``), put there by an
    earlier rewrite: called as it is."""
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == RT


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
