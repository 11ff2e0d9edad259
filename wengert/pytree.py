"""Pytrees: tuples, lists, dicts (sorted keys) and None, nested; anything
else is a leaf. ``flatten`` gives the leaves and a tree to rebuild from."""
from __future__ import annotations

__all__ = ["flatten", "unflatten", "Tree"]


class Tree:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children

    @property
    def num_leaves(self):
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, Tree) and self.kind == other.kind and self.meta == other.meta
                and self.children == other.children)

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        return ("(" + inner + ")") if self.kind == "tuple" else ("[" + inner + "]")


_LEAF = Tree("leaf", None, ())


def flatten(x):
    leaves = []
    tree = _flatten(x, leaves)
    return leaves, tree


def _flatten(x, leaves):
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return Tree("tuple", None, [_flatten(c, leaves) for c in x])
    if isinstance(x, list):
        return Tree("list", None, [_flatten(c, leaves) for c in x])
    if isinstance(x, dict):
        keys = sorted(x)
        return Tree("dict", tuple(keys), [_flatten(x[k], leaves) for k in keys])
    if x is None:
        return Tree("none", None, ())
    leaves.append(x)
    return _LEAF


def unflatten(tree, leaves):
    it = iter(leaves)
    out = _unflatten(tree, it)
    return out


def _unflatten(tree, it):
    if tree.kind == "leaf":
        return next(it)
    if tree.kind == "none":
        return None
    kids = [_unflatten(c, it) for c in tree.children]
    if tree.kind == "tuple":
        return tuple(kids)
    if tree.kind == "list":
        return kids
    return dict(zip(tree.meta, kids))
