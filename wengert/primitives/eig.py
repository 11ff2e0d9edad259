"""Eigen-decomposition of general square matrices: ``np.linalg.eig`` and
``np.linalg.eigvals`` (batched over leading axes).

Results are complex (complex64 for float32/complex64 operands), whatever
the eigenvalues: JAX's convention, so the dtype is known before the values
are (NumPy's own ``eig`` of a real matrix gives a real result when every
eigenvalue happens to be real).

Derivatives hold where the eigenvalues are distinct. With ``a = V W V^-1``
and ``M = V^-1 da V``:

* ``dw = diag(M)``;
* ``dV = V (F * M)`` with ``F[i, j] = 1 / (w_j - w_i)`` off the diagonal and
  0 on it, then each column's component along itself that would change its
  norm is removed (``dv -= v Re(v^H dv)``), as NumPy returns unit columns;
* an eigenvector is defined up to a phase; LAPACK fixes it by making each
  column's component of largest modulus real, and the rule keeps that
  choice (``dv -= i theta v`` with ``theta`` the imaginary part of that
  component's tangent over its value), so the derivative is that of the
  vectors NumPy returns, and gauge-invariant functions (``|v|``, ``v v^H``)
  are right under any phase convention.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from .arith import div, mul, sub
from .selection import where
from .ordering import abs as abs_, equal
from .arith import conj, imag, real
from ..core.primitive import NOT_LINEAR, Primitive, Zero, register
from ..core.trace import bind
from .dft import complex_dtype
from .linalg import matmul_bind, diagonal
from .matrix import inv
from .reduce import reduce_max, reduce_sum
from ..core.shapes import shape_error
from .shape import reshape
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE

__all__ = ["eig", "eigvals"]


def _eig_avals(a):
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise shape_error(f"eig: needs square matrices (..., n, n), got shape {a.shape}")
    dtype = complex_dtype(a.dtype)
    return Aval(a.shape[:-1], dtype), Aval(a.shape, dtype)


def _derivative_parts(a, a_dot):
    """(w, v, M = V^-1 da V) of the rules above."""
    w, v = eig(a)
    return w, v, matmul_bind(matmul_bind(inv(v), a_dot), v)


# --- eig -----------------------------------------------------------------
def eig_impl(a):
    w, v = np.linalg.eig(a)
    dtype = complex_dtype(np.asarray(a).dtype)
    return w.astype(dtype, copy=False), v.astype(dtype, copy=False)


def eig_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    if isinstance(a_dot, Zero):
        w, v = eig(a)
        return (w, v), (Zero(aval_of(w)), Zero(aval_of(v)))
    w, v, m = _derivative_parts(a, a_dot)
    shape = aval_of(w).shape
    n = shape[-1]
    off = ~np.eye(n, dtype=bool)
    # gaps[i, j] = w_j - w_i; F is 1 / gaps off the diagonal (distinct w)
    gaps = sub(reshape(w, shape[:-1] + (1, n)), reshape(w, shape + (1,)))
    f = where(off, div(1.0, where(off, gaps, 1.0)), 0.0)
    dv = matmul_bind(v, mul(f, m))
    # keep each column of unit norm: d|v|^2 = 2 Re(v^H dv) = 0
    stretch = real(reduce_sum(mul(conj(v), dv), axis=-2, keepdims=True))
    dv = sub(dv, mul(v, stretch))
    # and LAPACK's phase: each column's component of largest modulus is real
    # (ties have measure zero); turning the column by i theta keeps its norm
    mag = abs_(v)
    top = equal(mag, reduce_max(mag, axis=-2, keepdims=True))
    v_top = real(reduce_sum(where(top, v, 0.0), axis=-2, keepdims=True))
    dv_top = imag(reduce_sum(where(top, dv, 0.0), axis=-2, keepdims=True))
    dv = sub(dv, mul(v, mul(1j, div(dv_top, v_top))))
    return (w, v), (diagonal(m, 0, -2, -1), dv)


eig_p = register(Primitive("eig", nargs=1, impl=eig_impl, jvp=eig_jvp, transpose=NOT_LINEAR,
                           abstract_eval=_eig_avals, multiple_results=True, complex_ok=True,
                           sparsity=DENSE))


def eig(a):
    """``(w, v)``: eigenvalues and unit eigenvectors (columns), complex."""
    w, v = bind(eig_p, a)
    return w, v


# --- eigvals -------------------------------------------------------------
def eigvals_impl(a):
    return np.linalg.eigvals(a).astype(complex_dtype(np.asarray(a).dtype), copy=False)


def eigvals_aval(a):
    return _eig_avals(a)[0]


def eigvals_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    w, _, m = _derivative_parts(a, a_dot)
    return w, diagonal(m, 0, -2, -1)


eigvals_p = register(Primitive("eigvals", nargs=1, impl=eigvals_impl, jvp=eigvals_jvp,
                               transpose=NOT_LINEAR, abstract_eval=eigvals_aval,
                               complex_ok=True,
                               sparsity=DENSE))


def eigvals(a):
    return bind(eigvals_p, a)
