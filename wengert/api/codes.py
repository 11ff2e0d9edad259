"""Where the source engine keeps the code it generated: one ``Codes`` per
(function, transform and its options), shared by every derivative object
made the same way, in a process-wide table of the ``SIZE`` used last.

    wg.grad(f)(x); wg.grad(f)(x)      # the second object reuses the first's code

The key is what the generated code is a function of, besides the call's
arguments (which key the entries inside a ``Codes``, see ``api.source``):

* the public transform's recipe (``transformed``): its name, ``argnums`` and
  options, and for a transform of a transform the inner one's key;
* the function itself, held by ``Ident`` (never ``id()``: a freed function's
  id may be given to a new one), or for a bound method its function and its
  object. A function redefined by a new ``def`` is a new object: a miss.

What the function reads when it runs (its globals, closure cells, default
values, its ``__code__``, the helpers it calls) is not in the key: every
entry is used only while the checks recorded when its code was generated
pass (``Compiled.valid``), so a rebound global or a reassigned ``__code__``
makes the code be generated again, whichever object calls it.

While ``wg.nan_safe`` is off, a transform uses a second ``Codes``
(``unsafe_codes``), under its key with ``"nan_safe off"`` in front: the
generated code differs (plain products) and neither setting's code is
ever run under the other.

A recipe whose options cannot be a key (an unhashable value) gets a
``Codes`` of its own. Holding the function keeps it (and what it closes
over) alive while its entry is among the last ``SIZE`` used.

Layer: api.
"""
from __future__ import annotations

import collections
import threading
import types

import numpy as np

from ..core.ident import Ident

__all__ = ["Codes", "codes_for", "SIZE", "clear", "fast_key", "unsafe_codes"]

SIZE = 256


class Codes:
    """The code generated for one function and transform: ``cache`` (the
    exact kind and shapes of a call's arguments -> compiled), ``fast`` (the
    same for flat float/array/int calls: a cheaper key), ``generic`` (kind of
    arguments -> [(guard check, compiled)]: code that holds wherever its
    guards do), ``floats`` ((number of args, compiled) for all-float calls),
    ``plans`` (a sparse derivative's patterns and colorings by kind of
    arguments: ``api.sparse``), and ``generations``: how many times code was
    generated for it. Shared by
    threads: a lookup and an insertion are single dict operations, and two
    threads that miss at once each generate the same code."""

    __slots__ = ("key", "cache", "fast", "generic", "floats", "plans", "generations",
                 "__weakref__")

    def __init__(self, key):
        self.key = key
        self.cache, self.fast, self.generic, self.plans = {}, {}, {}, {}
        self.floats = None
        self.generations = 0


_TABLE = collections.OrderedDict()
_LOCK = threading.Lock()


def function_key(fun):
    """``fun`` as part of a key: by identity; a bound method (a new object
    at each attribute read) by its function and its object."""
    if isinstance(fun, types.MethodType):
        return ("method", Ident(fun.__func__), Ident(fun.__self__))
    return Ident(fun)


def recipe_key(recipe, inner_key=None):
    """The key of a transform's ``recipe`` (name, fun, positional options,
    keyword options), or None when an option cannot be a key; ``inner_key``
    stands for ``fun`` when it is itself a transform (``grad(grad(f))``)."""
    name, fun, pos, kw = recipe
    key = (name, function_key(fun) if inner_key is None else inner_key,
           _plain(pos), tuple(sorted((k, _plain(v)) for k, v in kw.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _plain(v):
    """Lists (``argnums=[0, 1]``) as tuples, tagged so they never equal one."""
    if isinstance(v, list):
        return ("list",) + tuple(_plain(e) for e in v)
    if isinstance(v, tuple):
        return tuple(_plain(e) for e in v)
    return v


def codes_for(key):
    """The shared ``Codes`` of ``key`` (made now if new), or a ``Codes`` of
    its own for a None key."""
    if key is None:
        return Codes(None)
    with _LOCK:
        codes = _TABLE.get(key)
        if codes is None:
            codes = _TABLE[key] = Codes(key)
            if len(_TABLE) > SIZE:
                _TABLE.popitem(last=False)
        else:
            _TABLE.move_to_end(key)
        return codes


def unsafe_codes(transformed):
    """The ``Codes`` a source-engine transform (``transformed.codes``: its
    code while ``wg.nan_safe`` is on, the default) uses while it is off:
    code of its own, generated with the plain products, shared like the
    other by the objects of the same recipe."""
    codes = transformed.__dict__.get("nan_unsafe_codes")
    if codes is None:
        key = transformed.codes.key
        codes = codes_for(None if key is None else ("nan_safe off", key))
        transformed.nan_unsafe_codes = codes
    return codes


def clear():
    """Forget every shared entry (objects made before keep theirs)."""
    with _LOCK:
        _TABLE.clear()


def fast_key(args):
    """(key, leaves) of a call whose arguments are floats, arrays and ints, or tuples
    and lists of them (the common cases), or None; cheaper than flattening and
    ``_signature``."""
    sig, leaves, stack = [], [], [iter(args)]
    while stack:
        for a in stack[-1]:
            t = type(a)
            if t is np.ndarray:
                sig.append((a.shape, a.dtype))
            elif t is float or t is np.float64:
                sig.append(t)
            elif t is int:
                sig.append(("int", a))
            elif (t is tuple or t is list) and len(stack) < 8:
                sig.append((t, len(a)))
                stack.append(iter(a))
                break
            else:
                return None
            leaves.append(a)
        else:
            stack.pop()
    return tuple(sig), leaves
