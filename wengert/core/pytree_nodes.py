"""The registry of pytree node classes (``register_node``, ``register_dataclass``): which
classes ``core.pytree`` opens as nodes, and how (``NodeType``).

The registry is process state, so registration is explicit (nothing is registered by
being seen), idempotent (the same class with the same functions again is a no-op; other
functions are refused, since trees already made would rebuild the old way), safe across
threads (one lock around changes; a lookup is one read of ``NODES``) and keyed by the class
itself, which it holds, never by ``id()``.

Layer: core.
"""
from __future__ import annotations

import collections
import dataclasses
import threading

__all__ = ["NODES", "NodeType", "register_node", "register_dataclass", "registered"]


class NodeType:
    """How a registered class opens and rebuilds: ``flatten(x) -> (children, aux)``,
    ``unflatten(aux, children) -> x``; ``names``: its children's names where they have
    them (a dataclass's fields), for paths in messages."""

    __slots__ = ("cls", "flatten", "unflatten", "names")

    def __init__(self, cls, flatten, unflatten, names=None):
        self.cls, self.flatten, self.unflatten, self.names = cls, flatten, unflatten, names

    def same(self, other):
        return (self.cls is other.cls and self.flatten == other.flatten
                and self.unflatten == other.unflatten and self.names == other.names)


NODES: dict = {}           # class -> NodeType (read without the lock: one dict lookup)
_LOCK = threading.Lock()


def _register(node):
    with _LOCK:
        old = NODES.get(node.cls)
        if old is not None:
            if old.same(node):
                return node.cls
            raise ValueError(
                f"{node.cls.__qualname__} is already registered as a pytree node with other "
                "functions; a class is registered once (register it where it is defined)")
        if node.cls in (tuple, list, dict, type(None), collections.OrderedDict):
            raise ValueError(f"{node.cls.__name__} is a pytree node already")
        NODES[node.cls] = node
    return node.cls


def register_node(cls, flatten, unflatten):
    """Make ``cls`` a pytree node: ``flatten(x) -> (children, aux)`` gives its children
    (an iterable: each a pytree) and its static data (hashable: part of the structure, as
    a dict's keys are), ``unflatten(aux, children) -> x`` rebuilds it. Returns ``cls``."""
    if not isinstance(cls, type):
        raise TypeError(f"register_node takes a class, got {cls!r}")
    return _register(NodeType(cls, flatten, unflatten))


def register_dataclass(cls=None, data_fields=None, meta_fields=None):
    """Make the dataclass ``cls`` a pytree node: ``data_fields`` are its children (arrays,
    nested trees), ``meta_fields`` its static data (hashable: Python numbers, strings).
    Without the lists (and as a decorator, ``@register_dataclass``), a field whose metadata
    says ``static=True`` (``dataclasses.field(metadata={"static": True})``) is static and
    every other one a child. Returns ``cls``."""
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields)
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise TypeError(f"register_dataclass takes a dataclass, got {cls!r}; register another "
                        "class with register_node(cls, flatten, unflatten)")
    fields = [f for f in dataclasses.fields(cls)]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields or ()), tuple(meta_fields or ())
    init = {f.name for f in fields if f.init}
    given = set(data_fields) | set(meta_fields)
    if given != init or len(given) != len(data_fields) + len(meta_fields):
        raise ValueError(
            f"register_dataclass({cls.__qualname__}): data_fields {list(data_fields)} and "
            f"meta_fields {list(meta_fields)} must name each of its __init__ fields "
            f"{sorted(init)} once")
    return _register(NodeType(cls, _DataclassFlatten(data_fields, meta_fields),
                              _DataclassUnflatten(cls, data_fields, meta_fields),
                              names=data_fields))


class _DataclassFlatten:
    __slots__ = ("data", "meta")

    def __init__(self, data, meta):
        self.data, self.meta = data, meta

    def __call__(self, x):
        return ([getattr(x, n) for n in self.data],
                tuple(getattr(x, n) for n in self.meta))

    def __eq__(self, other):
        return type(other) is _DataclassFlatten and (self.data, self.meta) == (other.data,
                                                                                other.meta)

    __hash__ = None


class _DataclassUnflatten:
    __slots__ = ("cls", "data", "meta")

    def __init__(self, cls, data, meta):
        self.cls, self.data, self.meta = cls, data, meta

    def __call__(self, aux, children):
        kwargs = dict(zip(self.meta, aux))
        kwargs.update(zip(self.data, children))
        return self.cls(**kwargs)

    def __eq__(self, other):
        return type(other) is _DataclassUnflatten and (self.cls, self.data, self.meta) == (
            other.cls, other.data, other.meta)

    __hash__ = None


def registered(cls):
    """The ``NodeType`` of a registered class, or None."""
    return NODES.get(cls)
