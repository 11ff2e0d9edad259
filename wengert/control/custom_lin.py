"""``custom_lin``: the linear part of a ``custom_vjp`` function under
reverse mode, whose transpose is the user's ``bwd``.

``custom.py``'s ``linearize_for_vjp`` rule of ``custom_vjp_call`` runs the
user's ``fwd`` and binds ``custom_lin`` on fwd's residuals and the tangents;
transposing it calls ``bwd(res, ct)`` and checks that it returns one
cotangent per argument, each of its argument's shape (a ``ShapeMismatchError``
otherwise, never a derivative of the wrong shape). It has no impl and no jvp
of its own: forward mode differentiates the function's primal definition
instead, so reaching either raises ``NoDerivativeRule``. ``Residuals`` keeps
the structure of fwd's residuals, whose array and number leaves are the
equation's leading operands.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from ..core.primitive import Primitive, TracerBase, Zero, register
from ..core.errors import NoDerivativeRule, ShapeMismatchError
from ..core.pytree import flatten, unflatten
from ..core.primitive import DENSE

__all__ = ["custom_lin_p", "Residuals"]


def as_tuple(x):
    """A function's outputs as a tuple (one output is a tuple of one)."""
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# --- custom_lin: the linear map whose transpose is the user's bwd ------
# Operands: fwd's residuals (the arrays and numbers in them), then the
# tangents, in which it is linear. The residuals are operands, not params,
# so a staged region (a loop body) that computes them passes them on as any
# value its linear part reads, and the transpose sees them as they are there.
class Residuals:
    """The structure of fwd's residuals: a pytree whose array and number
    leaves are the equation's leading operands, the other leaves kept here."""

    __slots__ = ("tree", "static", "n_leaves")

    def __init__(self, tree, static, n_leaves):
        self.tree, self.static, self.n_leaves = tree, static, n_leaves

    @staticmethod
    def split(res):
        """(Residuals, operand leaves) of fwd's residuals ``res``."""
        leaves, tree = flatten(res)
        ops = [x for x in leaves if _is_operand(x)]
        static = tuple((k, x) for k, x in enumerate(leaves) if not _is_operand(x))
        return Residuals(tree, static, len(leaves)), ops

    def rebuild(self, ops):
        """fwd's residuals with ``ops`` as their operand leaves."""
        static, ops = dict(self.static), iter(ops)
        return unflatten(self.tree, [static[k] if k in static else next(ops)
                                     for k in range(self.n_leaves)])

    def __repr__(self):
        return f"Residuals({self.n_leaves} leaves, static={self.static!r})"


def _is_operand(x):
    return isinstance(x, (TracerBase, np.ndarray, np.generic, float, int, complex))


def _residuals(res, ops):
    """fwd's residuals from the equation's residual operands (a ``res`` that
    is not a ``Residuals``, as in a Program built by hand, is itself)."""
    return res.rebuild(ops) if isinstance(res, Residuals) else res


def custom_lin_impl(*tangents, bwd, res, out_avals, in_avals):
    raise NoDerivativeRule("a custom_vjp function's linearization can only be transposed "
                           "(reverse mode); forward mode differentiates its primal definition")


def custom_lin_aval(*avals, bwd, res, out_avals, in_avals):
    return out_avals


def custom_lin_jvp(primals, tangents, **params):
    raise NoDerivativeRule("custom_vjp: differentiate through its pullback only in reverse mode")


def custom_lin_transpose(cts, *args, bwd, res, out_avals, in_avals):
    n_res = len(args) - len(in_avals)
    res = _residuals(res, args[:n_res])
    cts = [_dims.zeros(a.shape, a.dtype) if isinstance(c, Zero) else c for c, a in zip(cts, out_avals)]
    in_cts = as_tuple(bwd(res, cts[0] if len(cts) == 1 else tuple(cts)))
    if len(in_cts) != len(in_avals):
        raise ShapeMismatchError(f"custom_vjp bwd returned {len(in_cts)} cotangents for "
                                 f"{len(in_avals)} arguments; return one per argument (a tuple)")
    for c, a in zip(in_cts, in_avals):
        if c is not None and tuple(_dims.shape(c)) != a.shape:
            raise ShapeMismatchError(f"custom_vjp bwd returned a cotangent of shape "
                                     f"{_dims.shape(c)} for an argument of shape {a.shape}")
    return (None,) * n_res + tuple(in_cts)


custom_lin_p = register(Primitive(
    "custom_lin", nargs=None, impl=custom_lin_impl, jvp=custom_lin_jvp,
    transpose=custom_lin_transpose, abstract_eval=custom_lin_aval, multiple_results=True,
    sparsity=DENSE))
