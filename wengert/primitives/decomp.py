"""Decompositions by orthogonal matrices: svd, svdvals, eigh, eigvalsh;
matrix_rank, which uses the SVD. (qr, pinv and lstsq live in ``lstsq.py``; the
adjugate, ``det``'s derivative from the SVD, in ``adjugate.py``.)

Contracts (real matrices; every primitive acts on the last two axes and
accepts leading batch axes, as NumPy does):

* ``svd_p`` gives ``(U, S, Vh)``, thin or full (``full_matrices``). Its
  derivative needs distinct singular values, and nonzero ones for a
  non-square matrix. The extra columns of a full ``U`` (rows of ``Vh``) are
  a basis of a complement that NumPy fixes only up to rotation; their
  tangent keeps them orthogonal to the rest without turning them among
  themselves. Only gauge-invariant functions of ``U`` and ``Vh`` (``U
  diag(S) Vh``, projectors ``U U^T``) are well defined; tests use those.
* ``svdvals_p`` (S alone) is smooth wherever the singular values are
  distinct and nonzero; its first derivative ``diag(U^T dA V)`` is finite
  even where they repeat.
* ``eigh_p`` and ``eigvalsh_p`` read the lower triangle only, as NumPy's
  ``UPLO='L'``: their jvp makes the tangent symmetric *from its lower
  triangle*, so the derivative is that of NumPy's function in every
  direction, not only the symmetric ones (``UPLO='U'`` is the wrapper's
  transpose). Eigenvectors need distinct eigenvalues.
* ``matrix_rank_p`` is an integer computed when the code runs; it has no
  derivative.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.pass_rules import DefinedCall, NumpyCall
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import bind
from ..core.shapes import shape_error
from .arith import add, div, mul, neg, sub
from .selection import where
from .index import concatenate
from .shape import expand_dims
from .reduce import reduce_sum
from .index import getitem
from .linalg import float_dtype, matmul_bind, matrix_transpose, shape_tuple, check_square
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE
from ..core.errors import user_location
from .gauge import gauge_check, reverse_only, untied_gap_inverse

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "matrix_rank", "sym_from_lower", "identity_like",
           "diagonal_part"]


def _dtype_of(x):
    return aval_of(x).dtype


def identity_like(k, x):
    """The k x k identity in the float dtype of ``x``."""
    return np.eye(k, dtype=float_dtype(_dtype_of(x)))


def diagonal_part(m, k):
    """The diagonal of a (batch of) k x k matrix, as the last axis."""
    return reduce_sum(mul(m, identity_like(k, m)), axis=-1)


def column_slice(x, start, stop=None):
    return getitem(x, (Ellipsis, slice(None), slice(start, stop)))


def row_slice(x, start, stop=None):
    return getitem(x, (Ellipsis, slice(start, stop), slice(None)))


def matrix_aval(name, a):
    if a.ndim < 2:
        raise shape_error(f"{name}: expected a matrix or a stack of them (shape (..., m, n)), "
                          f"got shape {a.shape}")
    return a.shape[:-2], a.shape[-2], a.shape[-1], float_dtype(a.dtype)


def sym_from_lower(a):
    """The symmetric matrix NumPy reads from ``a``'s lower triangle (eigh,
    cholesky with ``UPLO='L'``): its derivative in every direction is that
    of a function that ignores the strict upper triangle."""
    n = shape_tuple(a)[-1]
    lower = np.tril(np.ones((n, n), bool))
    return where(lower, a, matrix_transpose(a))


def _gap_inverse(w, k):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    eye = identity_like(k, w)
    gap = sub(expand_dims(w, -2), expand_dims(w, -1))
    return div(1.0 - eye, add(gap, eye))


# --- svd ---------------------------------------------------------------
def svd_impl(a, full_matrices):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def svd_aval(a, full_matrices):
    batch, m, n, dt = matrix_aval("svd", a)
    k = min(m, n)
    mu, nv = (m, n) if full_matrices else (k, k)
    return Aval(batch + (m, mu), dt), Aval(batch + (k,), dt), Aval(batch + (nv, n), dt)


def svd_jvp(primals, tangents, full_matrices):
    a, = primals
    a_dot, = tangents
    u, s, vh = svd(a, full_matrices)
    if isinstance(a_dot, Zero):
        return (u, s, vh), tuple(Zero(aval_of(o)) for o in (u, s, vh))
    m, n = shape_tuple(a)[-2:]
    k = min(m, n)
    u1 = column_slice(u, 0, k) if full_matrices and m > k else u
    v1 = matrix_transpose(row_slice(vh, 0, k) if full_matrices and n > k else vh)
    dp = matmul_bind(matrix_transpose(u1), matmul_bind(a_dot, v1))           # U^T dA V, k x k
    s_j, s_i = expand_dims(s, -2), expand_dims(s, -1)
    eye = identity_like(k, s)
    # F_ij = 1 / (s_j^2 - s_i^2) off the diagonal
    f = div(1.0 - eye, add(mul(sub(s_j, s_i), add(s_j, s_i)), eye))
    dps = mul(dp, s_j)                                     # dP S
    sdp = mul(s_i, dp)                                     # S dP
    du = matmul_bind(u1, mul(f, add(dps, matrix_transpose(dps))))
    dv = matmul_bind(v1, mul(f, add(sdp, matrix_transpose(sdp))))
    if m > k:      # U's columns leave the range of V's image: (I - U U^T) dA V S^-1
        du = add(du, div(sub(matmul_bind(a_dot, v1), matmul_bind(u1, dp)), s_j))
    if n > k:
        dv = add(dv, div(sub(matmul_bind(matrix_transpose(a_dot), u1), matmul_bind(v1, matrix_transpose(dp))), s_j))
    ds = diagonal_part(dp, k)
    # the complement follows U (V), without turning in itself; any turn is as good, so its
    # use is checked in reverse mode (``gauge``)
    if full_matrices and m > k:
        u2 = column_slice(u, k)
        du2 = gauge_check(neg(matmul_bind(u1, matmul_bind(matrix_transpose(du), u2))), u2,
                          what="the extra columns of U of np.linalg.svd(full_matrices=True)",
                          where=user_location())
        du = concatenate(du, du2, axis=-1)
    if full_matrices and n > k:
        v2 = matrix_transpose(row_slice(vh, k))
        dv2 = gauge_check(neg(matmul_bind(v1, matmul_bind(matrix_transpose(dv), v2))), v2,
                          what="the extra rows of Vh of np.linalg.svd(full_matrices=True)",
                          where=user_location())
        dv = concatenate(dv, dv2, axis=-1)
    return (u, s, vh), (du, ds, matrix_transpose(dv))


def _complement(primals, full_matrices):
    m, n = shape_tuple(primals[0])[-2:]
    return full_matrices and m != n


svd_p = register(Primitive("svd", nargs=1, impl=svd_impl, jvp=svd_jvp, transpose=NOT_LINEAR,
                           abstract_eval=svd_aval, multiple_results=True,
                           batch=BROADCASTING,
                           jvp_for_grad=reverse_only(svd_jvp, _complement),
                           sparsity=DENSE, emit=NumpyCall("linalg.svd")))


def svd(a, full_matrices=False):
    u, s, vh = bind(svd_p, a, full_matrices=bool(full_matrices))
    return u, s, vh


# --- svdvals -------------------------------------------------------------
def svdvals_impl(a):
    return np.linalg.svd(a, compute_uv=False)


def svdvals_aval(a):
    batch, m, n, dt = matrix_aval("svdvals", a)
    return Aval(batch + (min(m, n),), dt)


def svdvals_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    s = svdvals(a)
    if isinstance(a_dot, Zero):
        return s, Zero(aval_of(s))
    u, _, vh = svd(a, False)
    # ds_i = u_i^T dA v_i
    return s, reduce_sum(mul(u, matmul_bind(a_dot, matrix_transpose(vh))), axis=-2)


svdvals_p = register(Primitive("svdvals", nargs=1, impl=svdvals_impl, jvp=svdvals_jvp,
                               transpose=NOT_LINEAR, abstract_eval=svdvals_aval,
                               sparsity=DENSE,
                               emit=NumpyCall("linalg.svd", fixed={"compute_uv": False}),
                               batch=BROADCASTING))


def svdvals(a):
    return bind(svdvals_p, a)


# --- eigh ----------------------------------------------------------------
def eigh_impl(a, uplo="L"):
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, v


def eigh_aval(a, uplo="L"):
    batch, n = check_square("eigh", a)
    dt = float_dtype(a.dtype)
    return Aval(batch + (n,), dt), Aval(a.shape, dt)


def sym_from(a, uplo):
    """The symmetric matrix NumPy reads from ``a``'s ``uplo`` triangle."""
    return sym_from_lower(a) if uplo == "L" else matrix_transpose(
        sym_from_lower(matrix_transpose(a)))


def eigh_jvp(primals, tangents, uplo="L"):
    a, = primals
    a_dot, = tangents
    w, v = eigh(a, uplo)
    if isinstance(a_dot, Zero):
        return (w, v), (Zero(aval_of(w)), Zero(aval_of(v)))
    n = shape_tuple(a)[-1]
    vdv = matmul_bind(matrix_transpose(v), matmul_bind(sym_from(a_dot, uplo), v))
    # eigenvectors of a repeated eigenvalue are any basis of its eigenspace: they do not
    # turn into each other (F = 0 there), and their use is checked in reverse (``gauge``)
    dv = gauge_check(matmul_bind(v, mul(untied_gap_inverse(w, identity_like(n, w)), vdv)), v, w,
                     what="eigenvectors of a repeated eigenvalue (np.linalg.eigh)",
                     where=user_location())
    return (w, v), (diagonal_part(vdv, n), dv)


def _always(primals, **params):
    return True         # a repeated eigenvalue is found only when the code runs


class EighEmit(NumpyCall):
    """``np.linalg.eigh(a)``; ``UPLO='U'`` where the row reads the upper triangle (its
    param, bound only then, is NumPy's keyword by another name)."""

    def expression(self, code, eqn, ins, py):
        uplo = eqn.params.get("uplo", "L")
        extra = "" if uplo == "L" else f", UPLO={code.param(uplo)}"
        return f"{code.np}.linalg.eigh({ins[0]}{extra})"


eigh_p = register(Primitive("eigh", nargs=1, impl=eigh_impl, jvp=eigh_jvp, transpose=NOT_LINEAR,
                            abstract_eval=eigh_aval, multiple_results=True,
                            batch=BROADCASTING,
                            jvp_for_grad=reverse_only(eigh_jvp, _always),
                            sparsity=DENSE, emit=EighEmit("linalg.eigh")))


def eigh(a, uplo="L"):
    """``np.linalg.eigh(a, UPLO=uplo)``: ``(w, V)`` of the matrix its ``uplo`` triangle
    holds (NumPy's own call, so the eigenvectors' signs are NumPy's)."""
    w, v = bind(eigh_p, a, uplo=uplo) if uplo != "L" else bind(eigh_p, a)
    return w, v


def eigvalsh_aval(a):
    batch, n = check_square("eigvalsh", a)
    return Aval(batch + (n,), float_dtype(a.dtype))


def eigvalsh_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    w = eigvalsh(a)
    if isinstance(a_dot, Zero):
        return w, Zero(aval_of(w))
    _, v = eigh(a)
    return w, reduce_sum(mul(v, matmul_bind(sym_from_lower(a_dot), v)), axis=-2)


eigvalsh_p = register(Primitive("eigvalsh", nargs=1, impl=np.linalg.eigvalsh, jvp=eigvalsh_jvp,
                                transpose=NOT_LINEAR, abstract_eval=eigvalsh_aval,
                                sparsity=DENSE,
                                batch=BROADCASTING))


def eigvalsh(a):
    return bind(eigvalsh_p, a)


# --- matrix_rank (an integer, no derivative) -----------------------------------
def matrix_rank_impl(a, tol, rtol, hermitian):
    return np.asarray(np.linalg.matrix_rank(a, tol=tol, hermitian=hermitian, rtol=rtol),
                      np.int64)


def matrix_rank_aval(a, tol, rtol, hermitian):
    return Aval(a.shape[:-2] if a.ndim >= 2 else (), np.dtype(np.int64))


def matrix_rank_batch(args, batched, tol, rtol, hermitian):
    """A stack of matrices is ranked matrix by matrix; a vector (rank 0 or 1) would be read
    as a matrix once batched, and a ``tol`` per matrix would meet the batch axis: once per
    example."""
    a, = args
    if np.ndim(a) < 3 or np.ndim(tol) or np.ndim(rtol):
        return NotImplemented
    return bind(matrix_rank_p, a, tol=tol, rtol=rtol, hermitian=hermitian)


matrix_rank_p = register(Primitive("matrix_rank", nargs=1, impl=matrix_rank_impl, jvp=None,
                                   transpose=NOT_LINEAR, abstract_eval=matrix_rank_aval,
                                   emit=DefinedCall(matrix_rank_impl), differentiable=False,
                                   batch=matrix_rank_batch))


def matrix_rank(a, tol=None, rtol=None, hermitian=False):
    return bind(matrix_rank_p, a, tol=tol, rtol=rtol, hermitian=bool(hermitian))

