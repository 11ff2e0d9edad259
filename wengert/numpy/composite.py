"""Numerically stable compositions over primitives: logsumexp, softmax,
log_softmax, norm, var, std.

These are plain functions with no rules of their own; their derivatives come
from the primitives they call. Two patterns keep them stable:

* max-shifting (logsumexp, softmax, log_softmax): the shift is an ordinary
  traced value, not a constant, but it cancels analytically, so the
  derivative is exact;
* where-guarding (norm, std): ``sqrt`` is applied to ``where(s > 0, s, 1)``
  and the result selected back, so at zero the derivative is 0 (a valid
  subgradient) instead of nan, in forward and reverse mode alike.

Real inputs only: ``norm`` and ``var`` square values, they do not conjugate.
``norm`` takes every order NumPy does: for vectors None, 2, 1, inf, -inf, 0
(a count, derivative zero) and any p, negative too; for matrices 'fro',
'nuc', 1, -1, 2, -2, inf, -inf, the spectral ones from the singular values
(``decomp.svdvals``, smooth where they are distinct and nonzero).

Layer: numpy.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dims as _dims
from ..primitives.arith import add, convert, div, mul, sub
from ..primitives.selection import where
from ..primitives.ordering import abs, greater, isfinite, maximum, not_equal
from ..primitives.transcendental import exp, log, pow, sqrt
from ..primitives.reduce import mean, reduce_max, reduce_min, reduce_sum
from ..primitives.shape import reshape, squeeze, transpose
from ..primitives.decomp import svdvals
from ..primitives.runtime_shapes import length
from ..core.errors import NoDerivativeRule
from ..core.ir import aval_of


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % nd for a in axis)) if nd else ()


def unkeep(x, axes, keepdims):
    """Drop the reduced axes of a keepdims=True result unless they are kept."""
    return x if keepdims or not axes else squeeze(x, axes)


def _safe_sqrt(s):
    pos = greater(s, 0.0)
    return where(pos, sqrt(where(pos, s, 1.0)), 0.0)


# --- logsumexp, softmax, log_softmax -----------------------------------
def logsumexp(x, axis=None, keepdims=False):
    axes = _axes(axis, np.ndim(x))
    shift = reduce_max(x, axis=axes, keepdims=True)
    # an all -inf slice keeps shift 0, so its result is -inf rather than nan
    shift = where(isfinite(shift), shift, 0.0)
    total = reduce_sum(exp(sub(x, shift)), axis=axes, keepdims=True)
    return unkeep(add(log(total), shift), axes, keepdims)


def softmax(x, axis=-1):
    e = exp(sub(x, reduce_max(x, axis=axis, keepdims=True)))
    return div(e, reduce_sum(e, axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    z = sub(x, reduce_max(x, axis=axis, keepdims=True))
    return sub(z, log(reduce_sum(exp(z), axis=axis, keepdims=True)))


# --- norm --------------------------------------------------------------
def _vector_norm(x, ord, axes, keepdims):
    """Norm over ``axes``: one axis, or all of them for the flattened 2-norm."""
    if ord is None or ord == 2:
        return _safe_sqrt(reduce_sum(mul(x, x), axis=axes, keepdims=keepdims))
    if ord == np.inf:
        return reduce_max(abs(x), axis=axes, keepdims=keepdims)
    if ord == -np.inf:
        return reduce_min(abs(x), axis=axes, keepdims=keepdims)
    if ord == 0:
        # a count: piecewise constant, so its derivative is zero
        # in x's float dtype, as NumPy counts (float64 for integers)
        dtype = aval_of(x).dtype if aval_of(x).dtype.kind == "f" else np.dtype(np.float64)
        count = convert(not_equal(x, 0), dtype=dtype)
        return reduce_sum(count, axis=axes, keepdims=keepdims)
    if ord == 1:
        return reduce_sum(abs(x), axis=axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    total = reduce_sum(pow(abs(x), p), axis=axes, keepdims=keepdims)
    pos = greater(total, 0.0)
    return where(pos, pow(where(pos, total, 1.0), 1.0 / p), 0.0)


def _matrix_norm(x, ord, row, col, keepdims):
    if ord is None or ord == "fro":
        return _safe_sqrt(reduce_sum(mul(x, x), axis=(row, col), keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        # 1: extreme column sum (sum down the rows); inf: extreme row sum
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        pick = reduce_max if ord > 0 else reduce_min
        out = pick(reduce_sum(abs(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
        return unkeep(out, tuple(sorted((row, col))), keepdims)
    if ord in (2, -2, "nuc"):
        # the matrix axes last, as svdvals takes them (its values do not
        # depend on which of the two comes first)
        perm = [i for i in range(len(_dims.shape(x))) if i not in (row, col)] + [row, col]
        s = svdvals(transpose(x, perm) if perm != sorted(perm) else x)
        out = reduce_sum(s, axis=-1) if ord == "nuc" else \
            (reduce_max if ord == 2 else reduce_min)(s, axis=-1)
        if keepdims:
            shape = list(_dims.shape(x))
            shape[row] = shape[col] = 1
            out = reshape(out, tuple(shape))
        return out
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` for real vectors and matrices (integers are
    converted to float64 first, as NumPy does)."""
    if aval_of(x).dtype.kind not in "fc":
        x = convert(x, dtype=np.float64)
    nd = np.ndim(x)
    if axis is None:
        if ord is None:           # the 2-norm of the flattened array, whatever its rank
            return _vector_norm(x, None, tuple(range(nd)), keepdims)
        if nd not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} without axis needs a 1-D or 2-D array, "
                             f"got {nd}-D; pass axis")
        axis = tuple(range(nd))
    axes = (int(axis) % nd,) if np.ndim(axis) == 0 else tuple(int(a) % nd for a in axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, *axes, keepdims)
    raise ValueError(f"norm: axis must name one or two distinct axes, got {axis!r}")


# --- var, std ----------------------------------------------------------
def var(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Mean squared deviation, divided by ``N - ddof``."""
    if out is not None:
        raise NoDerivativeRule("var: out= writes in place; use the returned value instead")
    shape = _dims.shape(x)
    axes = _axes(axis, len(shape))
    dev = sub(x, mean(x, axis=axes, keepdims=True))
    total = reduce_sum(mul(dev, dev), axis=axes, keepdims=keepdims)
    if any(shape[a] is None for a in axes):     # a count read when the code runs (x[mask])
        count = maximum(sub(length(x, axes), ddof), 0)
        res = div(total, convert(count, dtype=aval_of(total).dtype))
    else:
        count = math.prod([shape[a] for a in axes])
        res = div(total, float(max(count - ddof, 0)))
    return convert(res, dtype=np.dtype(dtype)) if dtype is not None else res


def std(x, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``sqrt(var)``, with derivative 0 (not nan) where the variance is 0."""
    res = _safe_sqrt(var(x, axis=axis, out=out, ddof=ddof, keepdims=keepdims))
    return convert(res, dtype=np.dtype(dtype)) if dtype is not None else res
