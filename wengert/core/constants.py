"""Primitives applied to constants while symbolic lengths are staged (the
recording path of ``bind``, and ``simplify``'s folding of constants).

A constant is computed at once, at the staged lengths. What it stands for
at other lengths is kept: a number computed from symbolic numbers is a
symbolic number (``1.0 / n``, a mean's weight: ``dims.Scalar``), and an
array whose shape rule gives a symbolic shape is remembered with it by the
current staging context (``context.StagingContext.remember``), so the code
generator makes it at every shape (``np.zeros(shape)``).

Layer: core.
"""
from __future__ import annotations

import numpy as np

from .dims import Dim, Scalar, has_dims, in_params, plain_numbers, plain_params
from .ir import Aval, aval_of
from .primitive import raise_typed

__all__ = ["constant"]

_SCALAR_OPS = {"add": "+", "add_any": "+", "sub": "-", "mul": "*", "div": "/"}


def constant(ctx, prim, args, params):
    """``prim`` applied to constants while ``ctx`` stages symbolic lengths:
    computed now; a number computed from symbolic numbers is symbolic, and
    an array is remembered with the symbolic shape the shape rule gives, when
    an operand or a param has one."""
    try:
        out = prim.impl(*plain_numbers(args), **plain_params(params))
    except ValueError as err:
        raise_typed(prim, args, params, err)
    if any(isinstance(a, (Dim, Scalar)) for a in args):
        sym = _symbolic_number(prim.name, args, out)
        if sym is not None:
            return sym
    shaped = [ctx.shape_of(a) for a in args] if ctx.shaped else [None] * len(args)
    if not (any(s is not None for s in shaped) or in_params(params)):
        return out
    try:
        avals = [aval_of(a) if s is None else Aval(s, aval_of(a).dtype, aval_of(a).weak)
                 for a, s in zip(args, shaped)]
        res = prim.abstract_eval(*avals, **params)
    except Exception:   # noqa: BLE001 -- the constant keeps its concrete shape
        return out
    if prim.multiple_results:
        for o, a in zip(out, res):
            if has_dims(a.shape) and isinstance(o, np.ndarray):
                ctx.remember(o, a.shape)
    elif has_dims(res.shape) and isinstance(out, np.ndarray):
        fill = args[0] if prim.name == "broadcast_to" and isinstance(args[0], Scalar) else None
        ctx.remember(out, res.shape, None if fill is None else ("full", fill))
    return out


def _symbolic_number(name, args, out):
    """The symbolic number ``name(*args)`` gives (``out``, its value), for the
    arithmetic of numbers of float64 or int64; None for anything else."""
    args = [a.item() if isinstance(a, np.ndarray) and a.ndim == 0 else a for a in args]
    if isinstance(out, (tuple, list)) or np.ndim(out) or not all(
            isinstance(a, (int, float)) for a in args):
        return None
    aval = aval_of(out)
    if aval.dtype not in (np.float64, np.int64):
        return None
    if name == "neg":
        expr = ("-", 0, args[0])
    elif name in _SCALAR_OPS and len(args) == 2:
        expr = (_SCALAR_OPS[name], args[0], args[1])
        if name == "div" and isinstance(args[1], (Dim, Scalar)):
            args[1] != 0    # noqa: B015 -- recorded: the code divides by it (Python raises at 0)
    else:
        return None
    if aval.dtype == np.int64:
        return Dim(int(out), expr) if aval.weak else None
    return Scalar(float(out), expr, aval)
