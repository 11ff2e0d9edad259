"""``wg.tree``: functions over pytrees, the nested containers of arrays every transform takes
and returns (JAX's ``jax.tree``).

A pytree is a tuple, list, dict (its keys sorted), named tuple, ``OrderedDict`` (its own key
order), None (an empty node) or an instance of a class registered as a node, nested; every
other value is a leaf::

    wg.tree.leaves({"b": 2.0, "a": (x, None)})     # [x, 2.0]
    wg.tree.map(lambda p, g: p - 0.1 * g, params, grads)

A class becomes a node by ``register_node(cls, flatten, unflatten)`` or, for a dataclass,
``register_dataclass(cls, data_fields, meta_fields)`` (or ``@register_dataclass``: fields
with ``metadata={"static": True}`` are static). Registration is process-wide, explicit and
idempotent (``core.pytree``).

Layer: api.
"""
from __future__ import annotations

import builtins
import functools

from ..core.pytree import (  # noqa: F401  (public: wg.tree.register_node, ...)
    Tree, flatten as _flatten, register_dataclass, register_node, unflatten as _unflatten)

__all__ = ["map", "leaves", "flatten", "unflatten", "structure", "reduce", "all",
           "register_node", "register_dataclass", "Tree"]

_NOTHING = object()


def flatten(tree, is_leaf=None):
    """``(leaves, treedef)``: the leaves in order (a dict's by sorted key) and the structure
    to rebuild from (``unflatten``). ``is_leaf(x)`` True stops at ``x``."""
    return _flatten(tree, is_leaf)


def unflatten(treedef, leaves):
    """The structure ``treedef`` (from ``flatten`` or ``structure``) with ``leaves`` in its
    leaves' places."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten: the structure {treedef} has {treedef.num_leaves} "
                         f"leaves, got {len(leaves)}")
    return _unflatten(treedef, leaves)


def leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in ``flatten``'s order."""
    return _flatten(tree, is_leaf)[0]


def structure(tree, is_leaf=None):
    """The structure of ``tree`` (a ``Tree``: compares equal for the same structure)."""
    return _flatten(tree, is_leaf)[1]


def map(f, tree, *rest, is_leaf=None):  # noqa: A001  (JAX's name)
    """``f`` applied leaf by leaf: a tree of ``tree``'s structure whose leaves are
    ``f(x, *ys)``, ``ys`` the leaves at the same place in each of ``rest`` (trees of the
    same structure)."""
    xs, treedef = _flatten(tree, is_leaf)
    others = []
    for k, r in enumerate(rest):
        ys, rdef = _flatten(r, is_leaf)
        if rdef != treedef:
            raise ValueError(f"tree.map: argument {k + 2} has the structure {rdef}, the first "
                             f"one {treedef}; pass trees of the same structure")
        others.append(ys)
    return _unflatten(treedef, [f(*args) for args in zip(xs, *others)])


def reduce(f, tree, initializer=_NOTHING, is_leaf=None):
    """``functools.reduce(f, leaves(tree)[, initializer])``."""
    xs = _flatten(tree, is_leaf)[0]
    if initializer is _NOTHING:
        return functools.reduce(f, xs)
    return functools.reduce(f, xs, initializer)


def all(tree, is_leaf=None):  # noqa: A001  (JAX's name)
    """Whether every leaf is true (Python's ``all`` of the leaves)."""
    return builtins.all(_flatten(tree, is_leaf)[0])
