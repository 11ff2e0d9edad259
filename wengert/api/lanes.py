"""One example of a batch, as ``wg.vmap``'s source engine stages the function
(``SourceTransformed.lanes``): each batched argument with its batch axis dropped.

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, aval_of
from ..core.pytree import flatten, unflatten
from ..frontends.source import is_static

__all__ = ["per_example"]


def per_example(lanes, args, kwargs, avals):
    """(args, kwargs, avals) of one example of a batch (``SourceTransformed.lanes``): each
    batched leaf with its batch axis dropped (an array's stand-in, 0-d: a NumPy scalar, as
    ``x[b]`` gives), ``avals`` (one per array and float leaf; None: made from the leaves)
    likewise."""
    for example_axes in lanes:
        axes = example_axes(args, kwargs)
        leaves, tree = flatten((tuple(args), kwargs) if kwargs else tuple(args))
        it = iter(avals) if avals is not None else None
        new_leaves, new_avals = [], []
        for x, a in zip(leaves, axes):
            if is_static(x):
                new_leaves.append(x)
                continue
            av = next(it) if it is not None else aval_of(x)
            if a is not None:
                av = Aval(av.shape[:a] + av.shape[a + 1:], av.dtype)
                x = np.zeros(tuple(int(d) for d in av.shape), av.dtype)
                x = x[()] if x.ndim == 0 else x
            new_leaves.append(x)
            new_avals.append(av)
        call = unflatten(tree, new_leaves)
        args, kwargs = (call[0], call[1]) if kwargs else (call, kwargs)
        avals = new_avals if avals is not None else None
    return args, kwargs, avals
