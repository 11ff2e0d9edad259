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

from ..core import pytree as _pytree
from ..core.pytree import Tree, flatten as _flatten, unflatten as _unflatten  # noqa: F401

__all__ = ["map", "leaves", "flatten", "unflatten", "structure", "reduce", "all",
           "register_node", "register_dataclass"]

_NOTHING = object()


def flatten(tree, is_leaf=None):
    """The leaves of a pytree and its structure.

    Args:
        tree: a pytree (tuples, lists, dicts, named tuples, ``OrderedDict``, None and
            registered classes, nested) or a leaf.
        is_leaf: a predicate; where it is true of a value, that value is a leaf even
            if it is a container.

    Returns:
        ``(leaves, treedef)``: the leaves in order (a dict's by sorted key), and the
        structure (a ``Tree``) that ``unflatten`` rebuilds from.

    Raises:
        PytreeDepthError: containers nested deeper than ``MAX_DEPTH`` (256) levels.

    Example:
        >>> import wengert as wg
        >>> wg.tree.flatten({"b": 2.0, "a": (1.0, None)})
        ([1.0, 2.0], {'a': (*, None), 'b': *})
    """
    return _flatten(tree, is_leaf)


def unflatten(treedef, leaves):
    """A pytree rebuilt from a structure and its leaves.

    Args:
        treedef: a structure, from ``flatten`` or ``structure``.
        leaves: an iterable of as many values as the structure has leaves, in
            ``flatten``'s order.

    Returns:
        The structure ``treedef`` with ``leaves`` in its leaves' places.

    Raises:
        ValueError: the number of leaves is not the structure's.

    Example:
        >>> import wengert as wg
        >>> wg.tree.unflatten(wg.tree.structure({"b": 0.0, "a": (0.0, None)}), [3.0, 4.0])
        {'a': (3.0, None), 'b': 4.0}
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"unflatten: the structure {treedef} has {treedef.num_leaves} "
                         f"leaves, got {len(leaves)}")
    return _unflatten(treedef, leaves)


def leaves(tree, is_leaf=None):
    """The leaves of a pytree.

    Args:
        tree: a pytree or a leaf.
        is_leaf: a predicate making the values it is true of leaves.

    Returns:
        A list of the leaves, in ``flatten``'s order (a dict's by sorted key).

    Raises:
        PytreeDepthError: containers nested deeper than ``MAX_DEPTH`` levels.

    Example:
        >>> import wengert as wg
        >>> wg.tree.leaves([1.0, (2.0, None), {"z": 3.0, "a": 4.0}])
        [1.0, 2.0, 4.0, 3.0]
    """
    return _flatten(tree, is_leaf)[0]


def structure(tree, is_leaf=None):
    """The structure of a pytree, without its leaves.

    Args:
        tree: a pytree or a leaf.
        is_leaf: a predicate making the values it is true of leaves.

    Returns:
        A ``Tree``: equal to another exactly when the two rebuild the same containers
        (hashable; ``*`` marks a leaf when printed).

    Raises:
        PytreeDepthError: containers nested deeper than ``MAX_DEPTH`` levels.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.tree.structure({"b": 2.0, "a": (np.ones(2), None)})
        {'a': (*, None), 'b': *}
    """
    return _flatten(tree, is_leaf)[1]


def map(f, tree, *rest, is_leaf=None):  # noqa: A001  (JAX's name)
    """A function applied leaf by leaf to one or several pytrees of one structure.

    Args:
        f: a function of ``1 + len(rest)`` leaves.
        tree: a pytree.
        *rest: pytrees of ``tree``'s structure.
        is_leaf: a predicate making the values it is true of leaves.

    Returns:
        A pytree of ``tree``'s structure whose leaves are ``f(x, *ys)``, ``ys`` the leaves
        at the same place in each of ``rest``.

    Raises:
        ValueError: a tree of ``rest`` has another structure.

    Example:
        >>> import wengert as wg
        >>> wg.tree.map(lambda p, g: p - 0.5 * g, {"w": 1.0, "b": [2.0]},
        ...             {"w": 2.0, "b": [4.0]})
        {'b': [0.0], 'w': 0.0}
    """
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
    """The leaves of a pytree combined two by two, left to right.

    Args:
        f: a function of two values.
        tree: a pytree.
        initializer: the value to start from (the first leaf when not given).
        is_leaf: a predicate making the values it is true of leaves.

    Returns:
        ``functools.reduce(f, leaves(tree))``, or with ``initializer`` first.

    Raises:
        TypeError: the tree has no leaf and no ``initializer`` is given.

    Example:
        >>> import operator, wengert as wg
        >>> wg.tree.reduce(operator.add, [1.0, (2.0, 3.0)])
        6.0
    """
    xs = _flatten(tree, is_leaf)[0]
    if initializer is _NOTHING:
        return functools.reduce(f, xs)
    return functools.reduce(f, xs, initializer)


def all(tree, is_leaf=None):  # noqa: A001  (JAX's name)
    """Whether every leaf of a pytree is true.

    Args:
        tree: a pytree.
        is_leaf: a predicate making the values it is true of leaves.

    Returns:
        Python's ``all`` of the leaves (True for a tree without leaves).

    Raises:
        ValueError: a leaf is an array of several elements (its truth is ambiguous).

    Example:
        >>> import wengert as wg
        >>> wg.tree.all([True, {"a": 1}]), wg.tree.all([True, (0,)])
        (True, False)
    """
    return builtins.all(_flatten(tree, is_leaf)[0])


def register_node(cls, flatten, unflatten):
    """Make a class of your own a pytree node, for every transform and ``wg.tree``.

    Registration is process-wide and idempotent (the same functions again are fine);
    register a class once, where it is defined.

    Args:
        cls: the class.
        flatten: ``flatten(x) -> (children, aux)``: ``x``'s children (an iterable, each
            a pytree) and its static data (hashable: part of the structure, as a dict's
            keys are; not differentiated).
        unflatten: ``unflatten(aux, children) -> x``, the instance rebuilt.

    Returns:
        ``cls``.

    Raises:
        TypeError: ``cls`` is not a class.
        ValueError: ``cls`` is registered already with other functions, or is a built-in
            node (tuple, list, dict, None, ``OrderedDict``).

    Example:
        >>> import numpy as np, wengert as wg
        >>> class Interval:
        ...     def __init__(self, lo, hi):
        ...         self.lo, self.hi = lo, hi
        >>> _ = wg.tree.register_node(Interval, lambda i: ((i.lo, i.hi), None),
        ...                           lambda aux, children: Interval(*children))
        >>> wg.tree.leaves(Interval(0.0, np.ones(2)))
        [0.0, array([1., 1.])]
    """
    return _pytree.register_node(cls, flatten, unflatten)


def register_dataclass(cls=None, data_fields=None, meta_fields=None):
    """Make a dataclass a pytree node; also a decorator, ``@wg.tree.register_dataclass``.

    Args:
        cls: the dataclass (left out when used as ``@register_dataclass(...)``).
        data_fields: the names of its children (arrays, nested pytrees).
        meta_fields: the names of its static data (hashable: numbers, strings; part of
            the structure, not differentiated). Without both lists, a field marked
            ``dataclasses.field(metadata={"static": True})`` is static and every other
            one a child.

    Returns:
        ``cls`` (or, without ``cls``, a decorator registering the class it is given).

    Raises:
        TypeError: ``cls`` is not a dataclass (register another class with
            ``register_node``).
        ValueError: the two lists do not name each ``__init__`` field once, or ``cls``
            is registered already with other fields.

    Example:
        >>> import dataclasses, numpy as np, wengert as wg
        >>> @wg.tree.register_dataclass
        ... @dataclasses.dataclass
        ... class Affine:
        ...     W: np.ndarray
        ...     b: np.ndarray
        >>> g = wg.grad(lambda p: np.sum(p.W) + 2.0 * np.sum(p.b))(
        ...     Affine(np.ones(2), np.ones(1)))
        >>> g.W, g.b
        (array([1., 1.]), array([2.]))
    """
    return _pytree.register_dataclass(cls, data_fields, meta_fields)
