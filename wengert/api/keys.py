"""A call's arguments as the source engine sees them: the key of the code made for them
(``signature``: avals of the arrays, values of the static leaves), their leaves
(``call_leaves``), which leaves are inputs of the generated code (``is_input``), and the
avals and int values a generation is staged at (``staged_at``: symbolic lengths).

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core import dims
from ..core.atoms import is_duck_array
from ..core.inplace import is_scalar
from ..core.ir import Ident, aval_of
from ..core.pytree import flatten

__all__ = ["signature", "call_leaves", "is_input", "staged_at"]


def signature(leaves, static, shapes=True):
    """The cache key of one call: avals of the inputs (their ranks only when
    not ``shapes``), values of the rest."""
    key = []
    for x, s in zip(leaves, static):
        if s:
            # a number or string by value; any other object by identity: the
            # code reads that object's attributes at each call, so an equal but
            # distinct object (a dataclass) must get code of its own
            plain = type(x) in (int, bool, str, bytes, type(None)) or isinstance(x, np.generic)
            if type(x) is int and not shapes:
                key.append(("int",))        # an int input: its value is a size
                continue
            key.append(("static", type(x), x if plain else Ident(x)))
        else:
            a = aval_of(x)
            # a 0-d array and a NumPy scalar get code of their own: ``x += 1``
            # writes into the one and rebinds the other (``source.make_program``)
            key.append((a.shape if shapes else a.ndim, a.dtype.str, a.weak,
                        not a.shape and not is_scalar(x))
                       + ((type(x),) if is_duck_array(x) else ()))    # Dask, CuPy: own code
    return tuple(key)


def call_leaves(args, kwargs):
    """The leaves and tree of a call's arguments: its keyword arguments are
    inputs like the positional ones (an array passed by keyword is read at
    each call, never baked into the code)."""
    return flatten((tuple(args), kwargs) if kwargs else tuple(args))


def is_input(leaf, static):
    """Whether a leaf is an input of the generated code: an array or float,
    or a Python int (a trip count or a length: staged as a ``Dim`` where the
    code allows, so a new value reuses the code)."""
    return not static or type(leaf) is int


def staged_at(avals, sizes, symbolic, ints=True):
    """(avals, int values) to stage at, one per input: symbolic lengths and
    int inputs when ``symbolic`` (the ints plain when not ``ints``), at
    ``sizes`` (``dims.sizes_of``)."""
    if symbolic:
        avals = dims.symbolic_avals(avals, sizes)
    values = [None if type(n) is not int else dims.int_input(k, n) if symbolic and ints else n
              for k, n in enumerate(sizes)]
    return avals, values
