"""``wg.checkpoint(fun)``: ``fun``'s internals are recomputed in the reverse
sweep instead of stored.

Called while a transformation is recording, the function is staged into a
Program (closed-over traced values become operands) and applied as one
``checkpoint`` equation (``control/checkpoint.py``): under reverse mode
its residuals are its operands, and its transpose linearizes it again. Called
on plain values it is ``fun``.

Staging runs ``fun`` on symbolic values. Python control flow on them needs
either concrete values (the trace engine has them: the recorded path is the
one taken, as on a tape) or the source engine's conversion of ``fun`` (its
``if``/``for``/``while`` become structured equations).

Layer: api.
"""
from __future__ import annotations

import functools

from ..core.errors import ConcretizationError
from ..core.ir import aval_of
from ..control.checkpoint import checkpoint_p
from ..core.primitive import TracerBase
from ..core.trace import bind, tracing
from ..core.pytree import flatten, unflatten
from ..core.staging import closure_convert, stage
from .fallback import has_source
from ..frontends.source import convert

__all__ = ["checkpoint"]


def _is_operand(x):
    try:
        aval_of(x)
        return True
    except TypeError:
        return False


class checkpoint:
    """``fun`` with the same values, whose reverse mode stores its arguments only.

    Reverse mode recomputes ``fun``'s internals during the reverse sweep instead
    of storing them: less memory for one more evaluation of ``fun``. Use it as
    ``wg.checkpoint(fun)`` or as the decorator ``@wg.checkpoint``.

    Args:
        fun: the function whose internals are recomputed.

    Raises:
        WengertError: only what ``fun`` itself raises when differentiated.

    Example:
        >>> import numpy as np, wengert as wg
        >>> block = wg.checkpoint(lambda x: np.tanh(np.tanh(x)))
        >>> wg.grad(lambda x: np.sum(block(x)))(np.array([0.5]))
        array([0.63980802])
    """

    def __init__(self, fun):
        self.fun = fun
        functools.update_wrapper(self, fun)

    def _wg_with_functions(self, convert):
        """This checkpoint of ``convert(fun)`` (the source engine runs the
        function converted)."""
        return checkpoint(convert(self.fun))

    def __call__(self, *args, **kwargs):
        if not tracing():
            return self.fun(*args, **kwargs)
        leaves, tree = flatten(args)
        is_op = [_is_operand(x) for x in leaves]
        ops = [x for x, o in zip(leaves, is_op) if o]
        out_tree = [None]

        def flat(fun):
            def run(*xs):
                it = iter(xs)
                vals = [next(it) if o else x for x, o in zip(leaves, is_op)]
                out_leaves, out_tree[0] = flatten(fun(*unflatten(tree, vals), **kwargs))
                return out_leaves
            return run

        name = getattr(self.fun, "__name__", "checkpointed")
        avals = [aval_of(x) for x in ops]
        try:
            prog = stage(flat(self.fun), avals, name=name, dynamic=True)
        except ConcretizationError as err:
            prog = self._stage_again(flat, avals, ops, name, err)
        prog, consts = closure_convert(prog)
        outs = bind(checkpoint_p, *consts, *ops, body=prog)
        return unflatten(out_tree[0], list(outs))

    def _stage_again(self, flat, avals, ops, name, err):
        """Python control flow on a traced value: take the path of the
        concrete values (trace engine), else stage the converted source."""
        vals = [x.concrete_value if isinstance(x, TracerBase) else x for x in ops]
        if all(v is not None for v in vals):
            return stage(flat(self.fun), avals, name=name, dynamic=True, concrete_vals=vals)
        if not has_source(self.fun):
            raise err
        return stage(flat(convert(self.fun)), avals, name=name, dynamic=True)
