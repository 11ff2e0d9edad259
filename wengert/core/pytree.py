"""Pytrees: tuples, lists, dicts (sorted keys) and None, nested; anything
else is a leaf. ``flatten`` gives the leaves and a tree to rebuild from.

Invariants:

* every walk over a tree is a loop with an explicit stack, never Python
  recursion, so its cost is linear in the number of nodes and its depth is
  not bounded by the interpreter's recursion limit;
* a ``Tree`` compares and hashes by its *key*: the flat preorder list of its
  nodes (kind and arity, a dict's keys), made once, on first use. It is the
  cache key of a structure (``api.source``), so two trees are the same key
  exactly when they rebuild the same structure;
* nesting is limited: a container sits at most ``MAX_DEPTH`` levels inside
  the outermost one given to ``flatten`` (the API flattens the tuple of the
  arguments, so an argument may nest ``MAX_DEPTH`` containers deep). A deeper
  structure raises ``PytreeDepthError``:
  the rest of wengert and the user's own code walk structures recursively,
  and past a few hundred levels Python's recursion limit would fail there
  with a bare ``RecursionError``.

Layer: core.
"""
from __future__ import annotations

from .errors import PytreeDepthError

__all__ = ["flatten", "unflatten", "Tree", "MAX_DEPTH", "leaf_paths", "path_text",
           "with_constants"]

MAX_DEPTH = 256


class Tree:
    __slots__ = ("kind", "meta", "children", "_key")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children
        self._key = None

    def nodes(self):
        """The nodes in preorder (a dict's children in key order)."""
        stack = [self]
        while stack:
            t = stack.pop()
            yield t
            stack.extend(reversed(t.children))

    @property
    def key(self):
        """The flat encoding: one entry per node, in preorder."""
        if self._key is None:
            self._key = tuple((t.kind, t.meta if t.kind == "dict" else len(t.children))
                              for t in self.nodes())
        return self._key

    @property
    def num_leaves(self):
        return sum(t.kind == "leaf" for t in self.nodes())

    def __eq__(self, other):
        return isinstance(other, Tree) and (self is other or self.key == other.key)

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        # text made in one preorder pass: each node writes its opening, and
        # queues its closing after its children
        out, stack = [], [("node", self)]
        while stack:
            what, t = stack.pop()
            if what == "text":
                out.append(t)
                continue
            if t.kind == "leaf":
                out.append("*")
            elif t.kind == "const":
                out.append(repr(t.meta))
            elif t.kind == "none":
                out.append("None")
            else:
                opening, closing = {"tuple": "()", "list": "[]", "dict": "{}"}[t.kind]
                out.append(opening)
                stack.append(("text", closing))
                for k in reversed(range(len(t.children))):
                    stack.append(("node", t.children[k]))
                    if t.kind == "dict":
                        stack.append(("text", f"{t.meta[k]!r}: "))
                    if k:
                        stack.append(("text", ", "))
        return "".join(out)


_LEAF = Tree("leaf", None, ())
_NONE = Tree("none", None, ())


def with_constants(tree, constants):
    """``tree`` with the leaves at the positions of ``constants`` (leaf
    index -> value) made *constant* nodes: ``unflatten`` puts the value there
    and takes no leaf for it (a string among a function's results, which
    the source engine's code returns as it is)."""
    count = 0
    root = []
    # the nodes being rebuilt: (tree, its children left, new children so far)
    stack = [(None, iter((tree,)), root)]
    while stack:
        t, kids, new = stack[-1]
        for c in kids:
            if c.kind == "leaf":
                new.append(Tree("const", constants[count], ()) if count in constants else c)
                count += 1
            elif not c.children:
                new.append(c)
            else:
                stack.append((c, iter(c.children), []))
                break
        else:
            stack.pop()
            if stack:
                stack[-1][2].append(Tree(t.kind, t.meta, new))
    return root[0]


def _open(x):
    """(kind, meta, items) of a container, or None for a leaf or None."""
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return "tuple", None, x
    if isinstance(x, list):
        return "list", None, x
    if isinstance(x, dict):
        keys = tuple(sorted(x))
        return "dict", keys, [x[k] for k in keys]
    return None


def flatten(x):
    """(leaves, tree) of ``x``; leaves in preorder, a dict's in key order."""
    if type(x) is tuple:        # the common case, a tuple of arguments that are leaves
        for item in x:
            if item is None or isinstance(item, (tuple, list, dict)):
                break
        else:
            return list(x), Tree("tuple", None, [_LEAF] * len(x))
    leaves = []
    root = []
    # the open containers: (kind, meta, iterator over items, children so far)
    stack = [(None, None, iter((x,)), root)]
    while stack:
        kind, meta, items, kids = stack[-1]
        for item in items:
            if item is None:
                kids.append(_NONE)
                continue
            node = _open(item)
            if node is None:
                leaves.append(item)
                kids.append(_LEAF)
                continue
            if len(stack) > MAX_DEPTH + 1:      # the new one would sit deeper
                raise _too_deep(stack)
            stack.append((node[0], node[1], iter(node[2]), []))
            break
        else:
            stack.pop()
            if stack:
                stack[-1][3].append(Tree(kind, meta, kids))
    return leaves, root[0]


def _too_deep(stack):
    steps = [_step(kind, meta, len(kids)) for kind, meta, _, kids in stack[1:]]
    return PytreeDepthError(
        f"a structure nested deeper than {MAX_DEPTH} levels (tuples, lists and dicts inside "
        f"each other), at {path_text(steps)}: {TOO_DEEP_ADVICE}", steps)


TOO_DEEP_ADVICE = (f"wengert walks pytrees up to MAX_DEPTH = {MAX_DEPTH} levels deep. Pass a "
                   "flatter structure: a dict keyed by tuples, or the leaves stacked into an array")


def _step(kind, meta, k):
    return repr(meta[k]) if kind == "dict" else str(k)


def path_text(steps):
    """``[0]['a'][1]``; a long path written with its middle left out."""
    if len(steps) > 12:
        steps = steps[:6] + [f"...{len(steps) - 12} more..."] + steps[-6:]
    return "".join(f"[{s}]" for s in steps) or "the top level"


def leaf_paths(tree):
    """The path of each leaf, in ``flatten`` order, as text (``[0]['a']``)."""
    paths = []
    stack = [(tree, [])]
    while stack:
        t, steps = stack.pop()
        if t.kind == "leaf":
            paths.append(path_text(steps))
        for k in reversed(range(len(t.children))):
            stack.append((t.children[k], steps + [_step(t.kind, t.meta, k)]))
    return paths


def unflatten(tree, leaves):
    """The structure of ``tree`` with ``leaves`` in its leaves' places."""
    if tree.kind == "tuple" and all(c is _LEAF for c in tree.children):
        leaves = tuple(leaves)
        if len(leaves) == len(tree.children):
            return leaves
    it = iter(leaves)
    if tree.kind == "leaf":
        return next(it)
    if tree.kind == "const":
        return tree.meta
    root = []
    # the containers being filled: (tree, its children left, values so far)
    stack = [(None, iter((tree,)), root)]
    while stack:
        t, kids, vals = stack[-1]
        for c in kids:
            if c.kind == "leaf":
                vals.append(next(it))
            elif c.kind == "none":
                vals.append(None)
            elif c.kind == "const":
                vals.append(c.meta)
            else:
                stack.append((c, iter(c.children), []))
                break
        else:
            stack.pop()
            if stack:
                stack[-1][2].append(_build(t, vals))
    return root[0]


def _build(tree, vals):
    if tree.kind == "tuple":
        return tuple(vals)
    if tree.kind == "list":
        return vals
    return dict(zip(tree.meta, vals))
