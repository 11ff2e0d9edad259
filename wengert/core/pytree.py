"""Pytrees: tuples, lists, dicts (sorted keys), None, named tuples, ``OrderedDict`` (its
own key order) and the classes registered as nodes (``register_node``,
``register_dataclass``), nested; anything else is a leaf. ``flatten`` gives the leaves and
a tree to rebuild from.

Invariants:

* every walk over a tree is a loop with an explicit stack, never Python
  recursion, so its cost is linear in the number of nodes and its depth is
  not bounded by the interpreter's recursion limit;
* a ``Tree`` compares and hashes by its *key*: the flat preorder list of its
  nodes (kind and arity, a dict's keys, a node's class and its static data), made once, on
  first use. It is the cache key of a structure (``api.source``), so two trees are the
  same key exactly when they rebuild the same structure;
* nesting is limited: a container sits at most ``MAX_DEPTH`` levels inside
  the outermost one given to ``flatten`` (the API flattens the tuple of the
  arguments, so an argument may nest ``MAX_DEPTH`` containers deep). A deeper
  structure raises ``PytreeDepthError``:
  the rest of wengert and the user's own code walk structures recursively,
  and past a few hundred levels Python's recursion limit would fail there
  with a bare ``RecursionError``.

The registry of node classes is ``core.pytree_nodes``.

Layer: core.
"""
from __future__ import annotations

import collections

from .errors import PytreeDepthError
from .ident import Ident
from .pytree_nodes import NODES, NodeType, register_dataclass, register_node, registered

__all__ = ["flatten", "unflatten", "Tree", "MAX_DEPTH", "leaf_paths", "path_text",
           "with_constants", "register_node", "register_dataclass", "is_node", "node_children",
           "node_key", "NodeType", "registered"]

MAX_DEPTH = 256


class _Static:
    """A registered node's static data as part of a structure key: itself where it is
    hashable, else its identity (an unhashable value is then the same structure only as
    the same object)."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        try:
            hash(value)
            self._key = value
        except TypeError:
            self._key = Ident(value)

    def __eq__(self, other):
        if type(other) is not _Static:
            return False
        try:
            return bool(self._key == other._key)
        except Exception:       # noqa: BLE001 -- values that do not compare: not the same
            return False

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return repr(self.value)


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
            self._key = tuple((t.kind, _meta_key(t), len(t.children)) for t in self.nodes())
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
                opening, closing = _brackets(t)
                out.append(opening)
                stack.append(("text", closing))
                for k in reversed(range(len(t.children))):
                    stack.append(("node", t.children[k]))
                    if t.kind in ("dict", "ordereddict"):
                        stack.append(("text", f"{t.meta[k]!r}: "))
                    elif t.kind == "namedtuple":
                        stack.append(("text", f"{t.meta._fields[k]}="))
                    if k:
                        stack.append(("text", ", "))
        return "".join(out)


def _meta_key(t):
    if t.kind == "custom":
        return (t.meta[0], _Static(t.meta[1]))
    return t.meta


def _brackets(t):
    if t.kind == "namedtuple":
        return f"{t.meta.__name__}(", ")"
    if t.kind == "custom":
        return f"{t.meta[0].__name__}(", ")"
    if t.kind == "ordereddict":
        return "OrderedDict({", "})"
    return {"tuple": ("(", ")"), "list": ("[", "]"), "dict": ("{", "}")}[t.kind]


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
    t = type(x)
    if t is tuple:
        return "tuple", None, x
    if t is list:
        return "list", None, x
    if t is dict:
        keys = tuple(sorted(x))
        return "dict", keys, [x[k] for k in keys]
    node = NODES.get(t)
    if node is not None:
        children, aux = node.flatten(x)
        return "custom", (t, aux), list(children)
    if isinstance(x, tuple):
        if hasattr(x, "_fields"):
            return "namedtuple", t, x
        return "tuple", None, x
    if t is collections.OrderedDict:
        keys = tuple(x)
        return "ordereddict", keys, [x[k] for k in keys]
    if isinstance(x, list):
        return "list", None, x
    if isinstance(x, dict):
        keys = tuple(sorted(x))
        return "dict", keys, [x[k] for k in keys]
    return None


def is_node(x):
    """Whether ``x`` is a container (a tuple, list, dict, named tuple, ``OrderedDict`` or
    an instance of a registered class), not a leaf; None is neither."""
    return x is not None and _open(x) is not None


def node_key(x):
    """What tells ``x``'s own node apart (its kind, static data and number of children;
    not its children's): None for a leaf or None."""
    node = _open(x) if x is not None else None
    if node is None:
        return None
    kind, meta, items = node
    return kind, _meta_key(Tree(kind, meta, ())), len(items)


def node_children(x):
    """The children of a container ``x`` in ``flatten``'s order (``is_node``)."""
    return list(_open(x)[2])


def flatten(x, is_leaf=None):
    """(leaves, tree) of ``x``; leaves in preorder, a dict's in key order. ``is_leaf(v)``
    True makes ``v`` a leaf even where it is a container."""
    if type(x) is tuple and is_leaf is None:
        # the common case, a tuple of arguments that are leaves
        nodes = NODES
        for item in x:
            if item is None or isinstance(item, (tuple, list, dict)) or type(item) in nodes:
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
            node = None if is_leaf is not None and is_leaf(item) else _open(item)
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
    if kind in ("dict", "ordereddict"):
        return repr(meta[k])
    if kind == "namedtuple":
        return "." + meta._fields[k]
    if kind == "custom":
        node = NODES.get(meta[0])
        if node is not None and node.names is not None and k < len(node.names):
            return "." + node.names[k]
    return str(k)


def path_text(steps):
    """``[0]['a'][1].W``; a long path written with its middle left out."""
    if len(steps) > 12:
        steps = steps[:6] + [f"...{len(steps) - 12} more..."] + steps[-6:]
    return "".join(s if s[:1] == "." and s[1:2] != "." else f"[{s}]"
                   for s in steps) or "the top level"


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
    kind = tree.kind
    if kind == "tuple":
        return tuple(vals)
    if kind == "list":
        return vals
    if kind == "dict":
        return dict(zip(tree.meta, vals))
    if kind == "namedtuple":
        return tree.meta(*vals)
    if kind == "ordereddict":
        return collections.OrderedDict(zip(tree.meta, vals))
    cls, aux = tree.meta
    node = NODES.get(cls)
    if node is None:
        raise ValueError(f"{cls.__qualname__} is no longer a registered pytree node")
    return node.unflatten(aux, vals)
