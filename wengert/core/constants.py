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
        if prim.name == "broadcast_to" and isinstance(args[0], Scalar):
            recipe = ("full", args[0])
        elif prim.name == "broadcast_to" and isinstance(args[0], np.ndarray) \
                and ctx.recipe_of(args[0]) is not None:
            recipe = ("broadcast", args[0])     # of a constant the code makes
        else:
            recipe = _broadcast_recipe(ctx, out, res.shape)
        ctx.remember(out, res.shape, recipe)
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


def _broadcast_recipe(ctx, out, shape):
    """``("broadcast", src)`` when the constant ``out`` (of symbolic ``shape``) is
    ``src`` repeated along its symbolic axes (a jacrev seed along a batch of
    columns: ``eye(2)[:, :, None]`` at ``(2, 2, p)``), ``src`` being ``out`` cut to
    one item along each; None when it varies along every one. Bit for bit:
    a signed zero or a NaN is not another value's repeat. A ``src`` that is a
    multiple of the identity along two symbolic axes is remembered as one
    (``_eye_recipe``)."""
    src, src_shape = out, list(shape)
    for k, d in enumerate(shape):
        if type(d) is Dim and src.shape[k] > 1:
            first = src[(slice(None),) * k + (slice(0, 1),)]
            if np.broadcast_to(first, src.shape).tobytes() == src.tobytes():
                src, src_shape[k] = first, 1
    if src is out:
        return None
    src = np.ascontiguousarray(src)
    if has_dims(src_shape):
        ctx.remember(src, tuple(src_shape), _eye_recipe(src, src_shape))
    return ("broadcast", src)


def _eye_recipe(src, shape):
    """``("eye", rows, cols, 0, scale)`` when ``src`` (of symbolic ``shape``) is
    ``scale`` times the identity along its two axes of length above 1, both
    symbolic; else None."""
    axes = [k for k, n in enumerate(src.shape) if n > 1]
    if len(axes) != 2 or src.dtype.kind != "f" or not all(type(shape[k]) is Dim for k in axes):
        return None
    m = src.reshape([src.shape[k] for k in axes])
    scale = m.flat[0]
    if not np.isfinite(scale) or scale == 0 or \
            (scale * np.eye(*m.shape, dtype=m.dtype)).tobytes() != m.tobytes():
        return None
    return ("eye", shape[axes[0]], shape[axes[1]], 0, float(scale))
