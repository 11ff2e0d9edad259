"""``np.linalg`` on traced values: solve, inv, det, slogdet, cholesky, norm;
the decompositions (svd, eigh, qr), what is
built on them (pinv, lstsq, cond, matrix_rank, the spectral norms), the
products (matrix_power, multi_dot) and NumPy 2's array-API functions
(matrix_transpose, vecdot, cross, tensorsolve...), composites all.

Each wrapper takes NumPy's exact signature; a parameter value wengert does
not implement raises ``NoDerivativeRule`` (``refuse``). Where NumPy returns
a named tuple (``SVDResult``, ``EighResult``, ``QRResult``) the result's
items have the same names (``res.S``), but it is a tuple without
``_fields``, which wengert's pytrees read as a plain tuple, so a function
may return it whole (``slogdet``'s too).

Layer: numpy.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..primitives import arith, decomp, index, linalg, lstsq as lstsq_mod, matrix, reduce, shape
from . import composite
from ..primitives.index import getitem
from ..primitives.linalg import matmul_bind, matrix_transpose, shape_tuple
from .arrayargs import no_out, NO_VALUE, refuse
from ..core.errors import user_location
from ..core.ir import aval_of

__all__ = ["FUNCTIONS"]


class _Named(tuple):
    """A tuple whose items are also read by name (``_names``)."""

    __slots__ = ()
    _names: tuple = ()

    def __getattr__(self, name):
        if name in self._names:
            return self[self._names.index(name)]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}; it has "
                             f"{', '.join(self._names)}")


class SVDResult(_Named):
    __slots__ = ()
    _names = ("U", "S", "Vh")


class EighResult(_Named):
    __slots__ = ()
    _names = ("eigenvalues", "eigenvectors")


class QRResult(_Named):
    __slots__ = ()
    _names = ("Q", "R")


def _scalar_param(value, fname, param):
    """A cutoff given as one number (NumPy also takes one per matrix)."""
    if value is None or np.ndim(value) == 0 and not hasattr(value, "aval"):
        return None if value is None else float(value)
    refuse(fname, param, "pass one Python number for every matrix")


# --- decompositions ------------------------------------------------------
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        refuse("np.linalg.svd", "hermitian", "pass hermitian=False (the default): the singular "
                                             "values are the same")
    if not compute_uv:
        return decomp.svdvals(a)
    return SVDResult(decomp.svd(a, full_matrices))


def _svdvals(x, /):
    return decomp.svdvals(x)


def _uplo(a, UPLO, fname):
    """The matrix whose lower triangle NumPy reads for ``UPLO``."""
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError(f"{user_location()}: {fname}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return a if UPLO in ("L", "l") else matrix_transpose(a)


def _eigh(a, UPLO="L"):
    # NumPy's own call with its UPLO, so the eigenvectors' signs are NumPy's (issue 25: the
    # upper triangle read as the transpose's lower one gave the opposite signs)
    _uplo(a, UPLO, "np.linalg.eigh")
    return EighResult(decomp.eigh(a, UPLO.upper()))


def _eigvalsh(a, UPLO="L"):
    return decomp.eigvalsh(_uplo(a, UPLO, "np.linalg.eigvalsh"))


def _qr(a, mode="reduced"):
    if mode == "raw":
        refuse("np.linalg.qr", "mode", "mode='raw' gives LAPACK's Householder reflectors; use "
                                       "mode='reduced', 'complete' or 'r'")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"{user_location()}: np.linalg.qr: unrecognized mode {mode!r}")
    q, r = lstsq_mod.qr(a, complete=mode == "complete")
    return r if mode == "r" else QRResult((q, r))


# --- pinv, lstsq, matrix_rank, cond ------------------------------------------
def _pinv(a, rcond=None, hermitian=False, *, rtol=NO_VALUE):
    rcond = _scalar_param(rcond, "np.linalg.pinv", "rcond")
    rtol = None if rtol is NO_VALUE else _scalar_param(rtol, "np.linalg.pinv", "rtol")
    if hermitian:       # NumPy then reads the lower triangle (eigh)
        a = decomp.sym_from_lower(a)
    return lstsq_mod.pinv(a, rcond=rcond, rtol=rtol)


def _lstsq(a, b, rcond=None):
    return lstsq_mod.lstsq(a, b, rcond=_scalar_param(rcond, "np.linalg.lstsq", "rcond"))


def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    return decomp.matrix_rank(A, tol=_scalar_param(tol, "np.linalg.matrix_rank", "tol"),
                              rtol=_scalar_param(rtol, "np.linalg.matrix_rank", "rtol"),
                              hermitian=hermitian)


def _cond(x, p=None):
    if p in (None, 2, -2):
        s = decomp.svdvals(x)
        first, last = getitem(s, (Ellipsis, 0)), getitem(s, (Ellipsis, -1))
        return arith.div(last, first) if p == -2 else arith.div(first, last)
    m, n = shape_tuple(x)[-2:]
    if m != n:
        raise np.linalg.LinAlgError(f"{user_location()}: np.linalg.cond with p={p!r} needs "
                                    f"square matrices, got shape {shape_tuple(x)}")
    return arith.mul(composite.norm(x, p, axis=(-2, -1)),
                     composite.norm(matrix.inv(x), p, axis=(-2, -1)))


# --- norms ---------------------------------------------------------------------
def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return composite.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    if axis is None:        # every entry, as one vector
        nd = len(shape_tuple(x))
        out = composite.norm(shape.reshape(x, (-1,)), ord=ord, axis=0)
        return shape.reshape(out, (1,) * nd) if keepdims else out
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(axes) == 1:
        return composite.norm(x, ord=ord, axis=axes[0], keepdims=keepdims)
    # several axes: moved last and flattened into one
    nd = len(shape_tuple(x))
    axes = tuple(sorted(a % nd for a in axes))
    kept = [i for i in range(nd) if i not in axes]
    xs = shape_tuple(x)
    flat = shape.reshape(shape.transpose(x, kept + list(axes)), tuple(xs[i] for i in kept) + (-1,))
    out = composite.norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = shape.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(xs)))
    return out


# --- matrix_power, multi_dot ------------------------------------------------------
def _matrix_power(a, n):
    n = operator.index(n)
    m = shape_tuple(a)
    if len(m) < 2 or m[-1] != m[-2]:
        raise np.linalg.LinAlgError(f"{user_location()}: np.linalg.matrix_power needs square "
                                    f"matrices, got shape {m}")
    if n == 0:      # the identity, a constant of a's dtype
        return np.broadcast_to(np.eye(m[-1], dtype=aval_of(a).dtype), m).copy()
    if n < 0:
        a, n = matrix.inv(a), -n
    result, power = None, a
    while True:         # binary powering: log2(n) squarings
        if n & 1:
            result = power if result is None else matmul_bind(result, power)
        n >>= 1
        if not n:
            return result
        power = matmul_bind(power, power)


def _chain_order(dims):
    """The cheapest parenthesisation of a chain of matrices with shapes
    ``dims[i] x dims[i+1]`` (the textbook dynamic programme)."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _multi_dot(arrays, *, out=None):
    no_out(out, "np.linalg.multi_dot")
    ops = list(arrays)
    if len(ops) < 2:
        raise ValueError(f"{user_location()}: np.linalg.multi_dot needs at least two arrays")
    first_vec, last_vec = len(shape_tuple(ops[0])) == 1, len(shape_tuple(ops[-1])) == 1
    if first_vec:
        ops[0] = shape.reshape(ops[0], (1, -1))
    if last_vec:
        ops[-1] = shape.reshape(ops[-1], (-1, 1))
    if any(len(shape_tuple(o)) != 2 for o in ops):
        raise ValueError(f"{user_location()}: np.linalg.multi_dot: the arrays must be 2-D "
                         "(the first and last may be 1-D)")
    split = _chain_order([shape_tuple(ops[0])[0]] + [shape_tuple(o)[1] for o in ops])

    def product(i, j):
        if i == j:
            return ops[i]
        return matmul_bind(product(i, split[i][j]), product(split[i][j] + 1, j))

    res = product(0, len(ops) - 1)
    if first_vec or last_vec:
        rs = shape_tuple(res)
        res = shape.reshape(res, tuple(d for d, drop in zip(rs, (first_vec, last_vec)) if not drop))
    return res


# --- the array-API products (NumPy 2): composites over linalg.py ---------------------
def _matrix_transpose(x, /):
    if len(shape_tuple(x)) < 2:
        raise ValueError(f"{user_location()}: np.linalg.matrix_transpose needs at least 2 "
                         f"axes, got shape {shape_tuple(x)}")
    return matrix_transpose(x)


def _la_matmul(x1, x2, /):
    return linalg.matmul(x1, x2)


def _la_outer(x1, x2, /):
    if len(shape_tuple(x1)) != 1 or len(shape_tuple(x2)) != 1:
        raise ValueError(f"{user_location()}: np.linalg.outer takes 1-D arrays, got shapes "
                         f"{shape_tuple(x1)} and {shape_tuple(x2)}")
    return linalg.outer(x1, x2)


def _vecdot(x1, x2, /, *, axis=-1):
    # real values: no conjugate
    return reduce.reduce_sum(arith.mul(x1, x2), axis=axis)


def _la_trace(x, /, *, offset=0, dtype=None):
    return linalg.trace(x, offset, -2, -1, dtype)


def _la_diagonal(x, /, *, offset=0):
    return linalg.diagonal(x, offset, -2, -1)


def _la_tensordot(x1, x2, /, *, axes=2):
    return linalg.tensordot(x1, x2, axes)


def _cross(x1, x2, /, *, axis=-1):
    """3-vectors along ``axis``, broadcast against each other."""
    a, b = shape.moveaxis(x1, axis, -1), shape.moveaxis(x2, axis, -1)
    if shape_tuple(a)[-1] != 3 or shape_tuple(b)[-1] != 3:
        raise ValueError(f"{user_location()}: np.linalg.cross takes 3-element vectors, got "
                         f"shapes {shape_tuple(x1)} and {shape_tuple(x2)} along axis {axis}")

    def c(v, i):
        return getitem(v, (Ellipsis, i))

    parts = [arith.sub(arith.mul(c(a, (i + 1) % 3), c(b, (i + 2) % 3)),
                       arith.mul(c(a, (i + 2) % 3), c(b, (i + 1) % 3))) for i in range(3)]
    return shape.moveaxis(index.stack(parts, axis=-1), -1, axis)


def _tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) = b``: one matrix solve."""
    if axes is not None:
        nd = len(shape_tuple(a))
        moved = [int(k) % nd for k in axes]
        a = shape.transpose(a, [k for k in range(nd) if k not in moved] + moved)
    sa, nb = shape_tuple(a), len(shape_tuple(b))
    x_shape = sa[nb:]
    rows = math.prod(sa[:nb])
    x = matrix.solve(shape.reshape(a, (rows, -1)), shape.reshape(b, (-1,)))
    return shape.reshape(x, x_shape)


def _tensorinv(a, ind=2):
    sa = shape_tuple(a)
    if ind <= 0:
        raise ValueError(f"{user_location()}: np.linalg.tensorinv: ind must be positive")
    out_shape = sa[ind:] + sa[:ind]
    inv = matrix.inv(shape.reshape(a, (math.prod(sa[:ind]), -1)))
    return shape.reshape(inv, out_shape)


# --- np.linalg ---------------------------------------------------------
def _solve(a, b):
    return matrix.solve(a, b)


def _inv(a):
    return matrix.inv(a)


def _det(a):
    return matrix.det(a)


class SlogdetResult(tuple):
    """``(sign, logabsdet)``, also read by name as NumPy's named tuple is
    (``np.linalg.slogdet(a).logabsdet``); a plain tuple to wengert's pytrees
    (it has no ``_fields``), so a function may return it whole."""

    __slots__ = ()
    sign = property(lambda self: self[0])
    logabsdet = property(lambda self: self[1])


def _slogdet(a):
    return SlogdetResult(matrix.slogdet(a))


def _cholesky(a, /, *, upper=False):
    # upper=True reads the upper triangle: the lower one of a's transpose
    if upper:
        return shape.swapaxes(matrix.cholesky(shape.swapaxes(a, -1, -2)), -1, -2)
    return matrix.cholesky(a)


def _norm(x, ord=None, axis=None, keepdims=False):
    return composite.norm(x, ord=ord, axis=axis, keepdims=keepdims)


FUNCTIONS = {
    np.linalg.solve: _solve, np.linalg.inv: _inv, np.linalg.det: _det,
    np.linalg.slogdet: _slogdet, np.linalg.cholesky: _cholesky, np.linalg.norm: _norm,
    np.linalg.svd: _svd, np.linalg.svdvals: _svdvals, np.linalg.eigh: _eigh,
    np.linalg.eigvalsh: _eigvalsh, np.linalg.qr: _qr, np.linalg.pinv: _pinv,
    np.linalg.lstsq: _lstsq, np.linalg.matrix_rank: _matrix_rank, np.linalg.cond: _cond,
    np.linalg.matrix_norm: _matrix_norm, np.linalg.vector_norm: _vector_norm,
    np.linalg.matrix_power: _matrix_power, np.linalg.multi_dot: _multi_dot,
    np.linalg.matrix_transpose: _matrix_transpose, np.linalg.matmul: _la_matmul,
    np.linalg.outer: _la_outer, np.linalg.vecdot: _vecdot, np.linalg.trace: _la_trace,
    np.linalg.diagonal: _la_diagonal, np.linalg.tensordot: _la_tensordot,
    np.linalg.cross: _cross, np.linalg.tensorsolve: _tensorsolve,
    np.linalg.tensorinv: _tensorinv,
    np.matrix_transpose: _matrix_transpose,     # the Array API's, in NumPy's namespace too
}
