"""What the statements of generated code read and write: the names each one assigns and
reads (a comprehension's own names excluded), which statements are copies, and the
names live after each statement (``Liveness``: ``if``, ``for``, ``while``, ``break``,
``continue`` as Python runs them). Read by ``coalesce``, which merges the names a copy
passes a value between.

Layer: backends.
"""
from __future__ import annotations

import ast

__all__ = ["stores", "loads", "target_loads", "defs_uses", "copies", "Liveness", "simple",
           "suites", "names_in", "COMPREHENSIONS"]


def stores(target):
    """The names a target (``a``, ``a, b``, ``a[i]``...) binds."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*[stores(e) for e in target.elts]) if target.elts else set()
    if isinstance(target, ast.Starred):
        return stores(target.value)
    return set()


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def loads(node, bound=frozenset()):
    """The function's names ``node`` reads (a comprehension's own names excluded)."""
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) and node.id not in bound else set()
    if isinstance(node, COMPREHENSIONS):
        out, inner = set(), set(bound)
        for gen in node.generators:
            out |= loads(gen.iter, inner)
            inner |= stores(gen.target)
            for cond in gen.ifs:
                out |= loads(cond, inner)
        for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
            out |= loads(part, inner)
        return out
    if isinstance(node, ast.Lambda):
        inner = set(bound) | {a.arg for a in node.args.args}
        return loads(node.body, inner)
    out = set()
    for child in ast.iter_child_nodes(node):
        out |= loads(child, bound)
    return out


def target_loads(target):
    """What assigning to ``target`` reads (``x[i] = v`` reads ``x`` and ``i``)."""
    if isinstance(target, ast.Name):
        return set()
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*[target_loads(e) for e in target.elts]) if target.elts else set()
    if isinstance(target, ast.Starred):
        return target_loads(target.value)
    return loads(target)


def defs_uses(s):
    """(names assigned, names read) of a simple statement."""
    if isinstance(s, ast.Assign):
        defs = set().union(*[stores(t) for t in s.targets])
        uses = loads(s.value).union(*[target_loads(t) for t in s.targets])
        return defs, uses
    if isinstance(s, ast.AugAssign):
        if isinstance(s.target, ast.Name):
            return {s.target.id}, {s.target.id} | loads(s.value)
        return set(), loads(s.target) | loads(s.value)
    if isinstance(s, ast.AnnAssign):
        return stores(s.target), loads(s.value) if s.value is not None else set()
    if isinstance(s, ast.Delete):
        defs = set().union(*[stores(t) for t in s.targets])
        return defs, set().union(*[target_loads(t) for t in s.targets])
    return set(), loads(s)


def copies(s):
    """The (target, source) name pairs of a copy statement (``a = b``, ``a, b = c, d``)."""
    if not isinstance(s, ast.Assign) or len(s.targets) != 1:
        return []
    t, v = s.targets[0], s.value
    if isinstance(t, ast.Name) and isinstance(v, ast.Name):
        return [(t.id, v.id)]
    if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts) \
            and all(isinstance(e, ast.Name) for e in t.elts + v.elts):
        return [(a.id, b.id) for a, b in zip(t.elts, v.elts)]
    return []


# --- liveness ----------------------------------------------------------------------------
class Liveness:
    """``after[s]``: the names live after each simple statement ``s`` (and, for a
    ``for``, after its target is assigned, at the top of its body)."""

    def __init__(self):
        self.after = {}

    def block(self, stmts, live, loop):
        for s in reversed(stmts):
            live = self.stmt(s, live, loop)
        return live

    def stmt(self, s, live, loop):
        if isinstance(s, ast.If):
            return (self.block(s.body, live, loop) | self.block(s.orelse, live, loop)
                    | loads(s.test))
        if isinstance(s, ast.For):
            tdefs, tuses = stores(s.target), target_loads(s.target)
            head = set(live) | self.block(s.orelse, live, loop)
            while True:
                body = self.block(s.body, head, (head, live))
                self.after[s] = body
                new = head | (body - tdefs) | tuses
                if new == head:
                    break
                head = new
            return head | loads(s.iter)
        if isinstance(s, ast.While):
            head = set(live) | loads(s.test) | self.block(s.orelse, live, loop)
            while True:
                body = self.block(s.body, head, (head, live))
                new = head | body
                if new == head:
                    break
                head = new
            return head
        if isinstance(s, ast.Break):
            return set(loop[1])
        if isinstance(s, ast.Continue):
            return set(loop[0])
        if isinstance(s, ast.Return):
            return loads(s.value) if s.value is not None else set()
        self.after[s] = frozenset(live)
        defs, uses = defs_uses(s)
        return (live - defs) | uses


def simple(stmts):
    """Every statement of ``stmts``, nested ones included, in order."""
    for s in stmts:
        yield s
        for part in ("body", "orelse"):
            yield from simple(getattr(s, part, None) or [])


def suites(body):
    yield body
    for s in body:
        for part in ("body", "orelse"):
            inner = getattr(s, part, None)
            if inner:
                yield from suites(inner)


def names_in(body):
    """Every ``ast.Name`` of the statements, with the names its comprehension binds."""
    out = []

    def visit(node, bound):
        if isinstance(node, ast.Name):
            out.append((node, bound))
            return
        if isinstance(node, COMPREHENSIONS):
            inner = set(bound)
            for gen in node.generators:
                visit(gen.iter, frozenset(inner))
                inner |= stores(gen.target)
                visit(gen.target, frozenset(inner))
                for cond in gen.ifs:
                    visit(cond, frozenset(inner))
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp)
                         else [node.elt]):
                visit(part, frozenset(inner))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, bound)
    for s in body:
        visit(s, frozenset())
    return out
