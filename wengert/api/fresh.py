"""Outputs that are new arrays: what a transform hands back never shares
memory with what the caller can reach otherwise.

The caller may write into a gradient it was given (``g -= y``, an optimizer
updating in place), so no output may be an argument, a view of one, a
tangent or cotangent it passed in, a global or constant of its function, an
array a pullback keeps for its next call (a residual), or another output.
The generated code of the source engine copies such outputs as it returns
them (``lower.fresh_outputs``, decided from the Program); the trace
engine's results, computed by NumPy as the user's code ran, are checked here
at each call: an array whose memory (its base, followed to the array that
owns it) is one of those is copied. Every other output was made by the
call: handed over as it is, at no cost.

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.ident import Ident
from ..core.pytree import flatten, unflatten

__all__ = ["owner", "held_by", "fresh", "fresh_tree"]


def owner(a):
    """The array that owns ``a``'s memory (``a`` itself, or the base its
    views were taken of)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def held_by(*trees):
    """The owners of the arrays among the leaves of ``trees`` (a set of
    ``Ident``)."""
    found = set()
    for tree in trees:
        try:
            leaves = flatten(tree)[0]
        except Exception:   # noqa: BLE001 -- a structure too deep or odd to walk: none
            continue
        found.update(Ident(owner(x)) for x in leaves if isinstance(x, np.ndarray))
    return found


def fresh(leaves, held=frozenset(), constant=()):
    """``leaves`` with a copy of each array whose memory is in ``held``, is
    an earlier leaf's, or whose position is in ``constant`` (a value the
    function took from outside rather than computed: a global)."""
    out, seen = [], set()
    for k, x in enumerate(leaves):
        if isinstance(x, np.ndarray):
            key = Ident(owner(x))
            if key in held or key in seen or k in constant:
                x = x.copy()
            else:
                seen.add(key)
        out.append(x)
    return out


def fresh_tree(tree, held):
    """``fresh`` of a pytree's leaves, the tree rebuilt (as it is where no
    leaf is copied)."""
    leaves, structure = flatten(tree)
    new = fresh(leaves, held)
    if all(a is b for a, b in zip(leaves, new)):
        return tree
    return unflatten(structure, new)
