"""``fori_loop``: a loop the transforms see whole, differentiated without unrolling.

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConcretizationError, ShapeMismatchError
from ..core.ir import Aval, aval_of
from ..core.primitive import TracerBase
from ..control import for_loop
from ..control.params import ForParams
from ..control.stage import stage_loop
from ..core.pytree import flatten, unflatten
from ..control.schedules import schedule_of
from ..control.checkpoint_loop import checkpointed_loop

__all__ = ["fori_loop"]


def fori_loop(n, body, init, *, checkpoint=None, snapshots=None):
    """``carry = body(i, carry)`` for ``i in range(n)``, as one structured loop.

    Differentiated without unrolling. ``body`` runs once on symbolic values to
    record it: its Python branches cannot test the carry (use ``np.where``).

    Args:
        n: the number of steps (an int, or a traced integer).
        body: ``body(i, carry) -> carry``, keeping the carry's structure and shapes.
        init: the initial carry: an array, a float, or a pytree of them.
        checkpoint: ``None`` (store every step), ``"ctz"`` or ``"binomial"``.
        snapshots: the states ``"binomial"`` stores (default ``floor(log2 n) + 1``).

    Returns:
        The final carry.

    Raises:
        ShapeMismatchError: ``body`` changed the carry's structure, shape or dtype.

    Example:
        >>> import wengert as wg
        >>> wg.grad(lambda x: wg.fori_loop(3, lambda i, c: c * x, 1.0))(2.0)
        12.0
    """
    schedule = schedule_of(checkpoint, snapshots)
    leaves, tree = flatten(init)
    avals = [aval_of(x) for x in leaves]

    def flat_body(i, *carry):
        out = body(i, unflatten(tree, carry))
        out_leaves, out_tree = flatten(out)
        if out_tree != tree:
            raise ShapeMismatchError(f"fori_loop: body returned a carry of structure {out_tree}, "
                                     f"but the initial carry is {tree}; return the same structure")
        for k, (o, a) in enumerate(zip(out_leaves, avals)):
            oa = aval_of(o)
            if oa.shape != a.shape or oa.dtype != a.dtype:
                raise ShapeMismatchError(
                    f"fori_loop: carry leaf {k} enters the body as {a.short()} and leaves it as "
                    f"{oa.short()}; a loop carry keeps its shape and dtype")
        return out_leaves

    def python_loop():
        carry = init
        for i in range(int(n)):
            carry = body(i, carry)
        return carry

    try:
        prog, consts = stage_loop(flat_body, ForParams, lead=[Aval((), np.int64)], carry=avals,
                                  name=getattr(body, "__name__", "body"), closure=True)
    except ConcretizationError:
        if isinstance(n, TracerBase):
            raise
        # the body needs a concrete counter (it indexes a NumPy array with it,
        # or branches on it): run it as a Python loop, traced step by step
        return python_loop()
    traced = any(isinstance(x, TracerBase) for x in leaves) or consts or isinstance(n, TracerBase)
    if not traced:
        return python_loop()    # nothing to differentiate: a Python loop is the fastest
    if schedule is None:
        out = for_loop(n, prog, consts, leaves)
    else:
        out = checkpointed_loop(n, prog, consts, leaves, schedule)
    return unflatten(tree, list(out))
