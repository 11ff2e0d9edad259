"""Products: matmul; and dot, outer, inner, tensordot, diagonal, trace, diag
as functions over it and over indexing; the helpers of the matrix families
(``_mT``, ``_square``, ``_batch_shape``...). (``einsum`` lives in
``einsum.py``, matrix functions such as solve and cholesky in ``matrix.py``.)

Contracts:

* ``matmul_p`` is ``np.matmul`` (vectors included, broadcast batch dims); the
  wrapper ``matmul`` multiplies scalars with ``mul``. It is linear in each
  operand separately; its transpose reads a vector as a row or a column.
* A batch rule (for Jacobians in one pass) exists for ``matmul_p``.

Layer: primitives.
"""
from __future__ import annotations

import functools

import math

import numpy as np

from ..core import dims as _dims
from ..core.primitive import ZERO_IF_ANY, Linear, Primitive, Zero, register
from ..core.trace import bind
from ..core.shapes import broadcast_shapes, result_dtype, shape_error
from .arith import add, convert, mul
from .shape import reshape, sum_to_shape, swapaxes, transpose
from .reduce import reduce_sum
from .index import getitem
from .scatter import index_add
from ..core.errors import NoDerivativeRule, ShapeMismatchError
from ..core.ir import Aval, aval_of
from ..core.deps import UNKNOWN, Abstract, broadcast_sel, dense
from ..core.contraction import contract

def shape_tuple(x):
    return tuple(_dims.shape(x))      # Linear markers and Zeros answer np.shape too


def matrix_transpose(x):
    return swapaxes(x, -1, -2)


def float_dtype(dtype):
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def pad_batched(args, batched):
    """Batch rule helper for primitives broadcasting leading axes: give each
    batched operand the full rank so its batch axis does not line up with a
    batch axis of an unbatched operand."""
    rank = max(len(_dims.shape(a)) - b for a, b in zip(args, batched))
    out = []
    for a, b in zip(args, batched):
        shp = tuple(_dims.shape(a))
        need = rank - (len(shp) - 1)
        if b and need:
            a = reshape(a, shp[:1] + (1,) * need + shp[1:])
        out.append(a)
    return out


def refuse_out(out, name):
    if out is not None:
        raise NoDerivativeRule(f"{name}(..., out=...) writes in place; drop out= and use the "
                               "returned value")


def batch_shape(name, x, y):
    """Broadcast the leading (batch) axes of two stacks of matrices."""
    try:
        # symbolic lengths record their comparisons as guards (``dims``)
        return broadcast_shapes(x.shape[:-2], y.shape[:-2], name=name)
    except ShapeMismatchError:
        raise shape_error(f"{name}: the leading (batch) axes of shapes {x.shape} and "
                                 f"{y.shape} do not broadcast together") from None


def check_square(name, a):
    """Check ``a`` is a (batch of) square matrix; return its batch shape and n."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise shape_error(f"{name}: expected a square matrix or a stack of them "
                                 f"(shape (..., n, n)), got shape {a.shape}")
    return a.shape[:-2], a.shape[-1]


# --- matmul ------------------------------------------------------------
def matmul_aval(x, y):
    # memoised for concrete shapes: a traced function meets the same few shape
    # pairs on every call (the 1024 used last: bounded). Never for symbolic
    # lengths: computing the rule records its comparisons as the generated
    # code's guards (``dims``), which a remembered answer would skip. A shape
    # error is raised each time (errors are not remembered)
    if _dims.has_dims(x.shape) or _dims.has_dims(y.shape):
        return _matmul_aval(x, y)
    return _concrete_matmul_aval(x.shape, x.dtype, y.shape, y.dtype)


@functools.lru_cache(maxsize=1024)
def _concrete_matmul_aval(x_shape, x_dtype, y_shape, y_dtype):
    return _matmul_aval(Aval(x_shape, x_dtype), Aval(y_shape, y_dtype))


def _matmul_aval(x, y):
    if x.ndim < 1 or y.ndim < 1:
        raise shape_error(f"matmul_p: operands need ndim >= 1, got shapes {x.shape} and "
                                 f"{y.shape}; call the wrapper `matmul`, which handles scalars")
    k_y = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if x.shape[-1] != k_y:
        raise shape_error(f"matmul: shapes {x.shape} and {y.shape} do not fit: the last axis "
                                 f"of the first ({x.shape[-1]}) must equal the contracted axis "
                                 f"of the second ({k_y})")
    xm = x if x.ndim > 1 else Aval((1,) + x.shape, x.dtype)
    ym = y if y.ndim > 1 else Aval(y.shape + (1,), y.dtype)
    batch = batch_shape("matmul", xm, ym)
    tail = ((x.shape[-2],) if x.ndim > 1 else ()) + ((y.shape[-1],) if y.ndim > 1 else ())
    return Aval(batch + tail, result_dtype(x, y))


def matmul_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    if type(x_dot) is Zero:        # a constant matrix times a variable: one term
        return matmul_bind(x, y), matmul_bind(x, y_dot)
    if type(y_dot) is Zero:
        return matmul_bind(x, y), matmul_bind(x_dot, y)
    return matmul_bind(x, y), add(matmul_bind(x_dot, y), matmul_bind(x, y_dot))


def _as_matrices(ct, xs, ys):
    """The cotangent of a matmul with vector operands, as the cotangent of the
    same product with those vectors read as a row / a column."""
    cs = shape_tuple(ct)
    if len(xs) == 1:
        cs = cs[:len(cs) - (1 if len(ys) > 1 else 0)] + (1,) + cs[len(cs) - (1 if len(ys) > 1 else 0):]
    if len(ys) == 1:
        cs = cs + (1,)
    return reshape(ct, cs)


def matmul_transpose(ct, x, y):
    assert isinstance(x, Linear) != isinstance(y, Linear), "matmul is linear in one operand"
    xs, ys = shape_tuple(x), shape_tuple(y)
    if len(xs) <= 2 and len(ys) <= 2:
        return _matmul_transpose_2d(ct, x, y, xs, ys)
    ct = _as_matrices(ct, xs, ys)
    if isinstance(x, Linear):
        y2 = y if len(ys) > 1 else reshape(y, ys + (1,))
        ct_x = matmul_bind(ct, matrix_transpose(y2))
        return reshape(sum_to_shape(ct_x, (xs if len(xs) > 1 else (1,) + xs)), xs), None
    x2 = x if len(xs) > 1 else reshape(x, (1,) + xs)
    ct_y = matmul_bind(matrix_transpose(x2), ct)
    return None, reshape(sum_to_shape(ct_y, (ys if len(ys) > 1 else ys + (1,))), ys)


def _matmul_transpose_2d(ct, x, y, xs, ys):
    """Matrices and vectors without batch axes: one product per cotangent."""
    def outer2(a, b):
        return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))
    if isinstance(x, Linear):
        if len(ys) == 2:
            return matmul_bind(ct, matrix_transpose(y)) if len(xs) == 2 else matmul_bind(y, ct), None
        return (outer2(ct, y) if len(xs) == 2 else mul(ct, y)), None
    if len(xs) == 2:
        return None, matmul_bind(matrix_transpose(x), ct) if len(ys) == 2 else matmul_bind(ct, x)
    return None, (outer2(x, ct) if len(ys) == 2 else mul(x, ct))


def matmul_batch(args, batched):
    x, y = args
    bx, by = batched
    # vectors become a row / a column first, so a batch axis cannot be read
    # as a matrix axis; the result drops those unit axes again
    vec_x = np.ndim(x) - bx == 1
    vec_y = np.ndim(y) - by == 1
    if vec_x:
        xs = shape_tuple(x)
        x = reshape(x, xs[:-1] + (1,) + xs[-1:])
    if vec_y:
        y = reshape(y, shape_tuple(y) + (1,))
    out = matmul_bind(*pad_batched([x, y], batched))
    os = shape_tuple(out)
    return reshape(out, os[:-2] + (() if vec_x else os[-2:-1]) + (() if vec_y else os[-1:]))


def matmul_sparsity(an, ops, outs):
    """A contraction (``contraction.contract``): ``out[..., i, k]`` reads row ``i`` of ``a`` where
    ``b``'s column ``k`` may be nonzero, and column ``k`` of ``b`` where ``a``'s row ``i`` may
    (a constant's zeros are zeros); a 1-D operand is a row or a column, the stacks broadcast."""
    a, b = ops
    shape = outs[0].shape
    if not (a.known_shape and b.known_shape):
        return dense(shape, a.deps, b.deps)
    sa = a.shape if len(a.shape) > 1 else (1,) + a.shape
    sb = b.shape if len(b.shape) > 1 else b.shape + (1,)
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    views, sources = [], []
    for op, own in ((a, sa), (b, sb)):
        full = batch + own[-2:]
        value = np.broadcast_to(np.reshape(op.value, own), full) if op.known else UNKNOWN
        views.append(Abstract(Aval(full, op.dtype), value, op.deps))
        sources.append(broadcast_sel(own, full))
    stack = "".join(chr(ord("a") + k) for k in range(len(batch)))
    return contract(f"{stack}xy,{stack}yz->{stack}xz", views, shape, sources,
                    batch + (sa[-2], sb[-1]))


matmul_p = register(Primitive("matmul", nargs=2, impl=np.matmul, jvp=matmul_jvp,
                              transpose=matmul_transpose, abstract_eval=matmul_aval,
                              batch=matmul_batch, numpy_scalar=True, zero_rule=ZERO_IF_ANY,
                              complex_ok=True,
                              sparsity=matmul_sparsity))


def matmul_bind(x, y):
    return bind(matmul_p, x, y)


def matmul(x, y):
    """``np.matmul``; a scalar operand multiplies elementwise."""
    if not shape_tuple(x) or not shape_tuple(y):
        return mul(x, y)
    return matmul_bind(x, y)


# --- dot, tensordot, inner, outer (functions over matmul) ---------------
def _size(shape, axes):
    return math.prod([shape[i] for i in axes])


def tensordot(x, y, axes=2):
    """``np.tensordot``: move the contracted axes together, then one matmul."""
    xs, ys = shape_tuple(x), shape_tuple(y)
    if isinstance(axes, (int, np.integer)):
        ax_x, ax_y = list(range(len(xs) - int(axes), len(xs))), list(range(int(axes)))
    else:
        ax_x, ax_y = ([a] if np.ndim(a) == 0 else list(a) for a in axes)
        ax_x = [int(a) % len(xs) for a in ax_x]
        ax_y = [int(a) % len(ys) for a in ax_y]
    if len(ax_x) != len(ax_y) or any(xs[a] != ys[b] for a, b in zip(ax_x, ax_y)):
        raise shape_error(f"tensordot: axes {ax_x} of shape {xs} and {ax_y} of shape {ys} "
                                 "do not have the same lengths")
    free_x = [i for i in range(len(xs)) if i not in ax_x]
    free_y = [i for i in range(len(ys)) if i not in ax_y]
    c = _size(xs, ax_x)
    xm = reshape(transpose(x, free_x + ax_x), (_size(xs, free_x), c))
    ym = reshape(transpose(y, ax_y + free_y), (c, _size(ys, free_y)))
    return reshape(matmul_bind(xm, ym), tuple(xs[i] for i in free_x) + tuple(ys[i] for i in free_y))


def dot(x, y, out=None):
    """``np.dot``: scalars multiply; otherwise contract x's last axis with y's
    second-to-last (its only axis if y is a vector)."""
    refuse_out(out, "dot")
    xs, ys = shape_tuple(x), shape_tuple(y)
    if not xs or not ys:
        return mul(x, y)
    if len(ys) == 1 or (len(xs) <= 2 and len(ys) == 2):
        return matmul(x, y)
    return tensordot(x, y, axes=([len(xs) - 1], [len(ys) - 2]))


def inner(x, y):
    """``np.inner``: contract the last axes of both."""
    xs, ys = shape_tuple(x), shape_tuple(y)
    if not xs or not ys:
        return mul(x, y)
    return tensordot(x, y, axes=([len(xs) - 1], [len(ys) - 1]))


def outer(x, y, out=None):
    """``np.outer``: both operands are flattened first."""
    refuse_out(out, "outer")
    return mul(reshape(x, (-1, 1)), reshape(y, (1, -1)))


# --- diagonal, trace, diag (functions over getitem / index_add) --------
def _diag_index(n, m, offset):
    rows = np.arange(max(0, -offset), max(0, min(n, m - offset)))
    return rows, rows + offset


def diagonal(x, offset=0, axis1=0, axis2=1):
    """``np.diagonal``: the diagonal becomes the last axis."""
    nd = len(shape_tuple(x))
    if nd < 2:
        raise shape_error(f"diagonal: needs at least 2 axes, got shape {shape_tuple(x)}")
    a1, a2 = axis1 % nd, axis2 % nd
    xt = transpose(x, [i for i in range(nd) if i not in (a1, a2)] + [a1, a2])
    n, m = shape_tuple(xt)[-2:]
    return getitem(xt, (Ellipsis,) + _diag_index(n, m, int(offset)))


def trace(x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    refuse_out(out, "trace")
    res = reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1)
    return convert(res, dtype=np.dtype(dtype)) if dtype is not None else res


def diag(v, k=0):
    """``np.diag``: a vector's diagonal matrix, or a matrix's diagonal."""
    shp = shape_tuple(v)
    if len(shp) == 2:
        return diagonal(v, k)
    if len(shp) != 1:
        raise shape_error(f"diag: input must be 1-D or 2-D, got shape {shp}")
    n = shp[0] + abs(int(k))
    zeros = np.zeros((n, n), aval_of(v).dtype)
    return index_add(zeros, v, _diag_index(n, n, int(k)))
