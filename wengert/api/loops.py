"""``fori_loop`` and ``while_loop``: loops the transforms see whole,
differentiated without unrolling (checkpointed on request).

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ConcretizationError, ShapeMismatchError
from ..core.ir import Aval, Var, aval_of
from ..core.primitive import TracerBase
from .. import control
from ..control import for_loop
from ..control.params import ForParams, WhileParams
from ..control.stage import stage_loop
from ..core.pytree import flatten, unflatten
from ..control.schedules import schedule_of
from ..control.checkpoint_loop import checkpointed_loop
from ..control.checkpoint_while import checkpointed_while, online_schedule
from ..control.common import with_inputs

__all__ = ["fori_loop", "while_loop"]


def _checked_body(body, tree, avals, what, lead=0):
    """``body`` on flat leaves (after ``lead`` leading arguments), checking
    that it keeps the carry's structure, shapes and dtypes."""
    def flat_body(*args):
        carry = unflatten(tree, args[lead:])
        out_leaves, out_tree = flatten(body(*args[:lead], carry))
        if out_tree != tree:
            raise ShapeMismatchError(f"{what}: body returned a carry of structure {out_tree}, "
                                     f"but the initial carry is {tree}; return the same structure")
        for k, (o, a) in enumerate(zip(out_leaves, avals)):
            oa = aval_of(o)
            if oa.shape != a.shape or oa.dtype != a.dtype:
                raise ShapeMismatchError(
                    f"{what}: carry leaf {k} enters the body as {a.short()} and leaves it as "
                    f"{oa.short()}; a loop carry keeps its shape and dtype")
        return out_leaves
    return flat_body


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

    flat_body = _checked_body(body, tree, avals, "fori_loop", lead=1)

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


def while_loop(cond, body, init, *, checkpoint=None):
    """``while cond(carry): carry = body(carry)``, as one structured loop.

    Differentiated without unrolling, in both engines. ``cond`` and ``body``
    run once on symbolic values to record them: their Python branches cannot
    test the carry (use ``np.where``). With ``checkpoint="ctz"`` reverse mode
    stores at most ``floor(log2 n) + 1`` states of the ``n`` steps, chosen as
    the steps come (the trip count is known only when the loop ends), and
    recomputes the others: the same gradient as storing every step.

    Args:
        cond: ``cond(carry) -> bool`` (a scalar: the loop runs while it is true).
        body: ``body(carry) -> carry``, keeping the carry's structure and shapes.
        init: the initial carry: an array, a float, or a pytree of them.
        checkpoint: ``None`` (store every step) or ``"ctz"``.

    Returns:
        The final carry.

    Raises:
        ShapeMismatchError: ``body`` changed the carry's structure, shape or dtype.
        UnsupportedSyntax: ``checkpoint="binomial"``, which needs the trip
            count before the loop runs.

    Example:
        >>> import wengert as wg
        >>> def f(x):
        ...     return wg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
        ...                          (0, 1.0), checkpoint="ctz")[1]
        >>> wg.grad(f)(2.0)
        12.0
    """
    schedule = None if checkpoint is None else online_schedule(checkpoint)
    leaves, tree = flatten(init)
    avals = [aval_of(x) for x in leaves]
    flat_body = _checked_body(body, tree, avals, "while_loop")

    def flat_cond(*carry):
        return [cond(unflatten(tree, carry))]

    def python_loop():
        carry = init
        while cond(carry):
            carry = body(carry)
        return carry

    try:
        bprog, bc = stage_loop(flat_body, WhileParams, carry=avals,
                               name=getattr(body, "__name__", "body"), closure=True)
        cprog, cc = stage_loop(flat_cond, WhileParams, carry=avals,
                               name=getattr(cond, "__name__", "cond"), closure=True)
    except ConcretizationError:
        return python_loop()    # the body or the test needs concrete values: run as Python
    if not (any(isinstance(x, TracerBase) for x in leaves) or bc or cc):
        return python_loop()    # nothing to differentiate: a Python loop is the fastest
    # both programs read (cond consts, body consts, carry)
    c_in, b_in = cprog.inputs, bprog.inputs
    cprog = with_inputs(cprog, c_in[:len(cc)] + [Var(aval_of(x)) for x in bc] + c_in[len(cc):])
    bprog = with_inputs(bprog, [Var(aval_of(x)) for x in cc] + b_in)
    if schedule is None:
        out = control.while_loop(cprog, bprog, cc + bc, leaves)[:len(leaves)]
    else:
        out = checkpointed_while(cprog, bprog, cc + bc, leaves, schedule)
    return unflatten(tree, list(out))
