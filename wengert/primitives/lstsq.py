"""Orthogonal factorisation and least squares: qr, pinv, lstsq.

Contracts (real matrices):

* ``qr_p`` factors tall or square matrices of full column rank, reduced or
  ``complete``, with leading batch axes; the wrapper ``qr`` factors a wide
  ``[X | Y]`` as the QR of its square block ``X`` and ``R2 = Q^T Y``, which
  is what NumPy's Householder steps compute. The extra columns of a complete
  ``Q`` span a complement fixed only up to rotation; their tangent keeps
  them orthogonal to the rest without turning them among themselves.
* ``pinv_p`` is differentiated where the rank is locally constant (the
  Golub-Pereyra formula); its value is NumPy's, cutoff (``rcond``/``rtol``)
  included.
* ``lstsq_p`` gives NumPy's ``(x, residuals, rank, sv)``; ``x`` and the
  residuals are differentiated in the full-rank case, ``sv`` as singular
  values, ``rank`` is an integer. The rank-deficient tall case is refused
  (``RankDeficientError``): NumPy's residuals are then an empty array, a
  shape that depends on the values, which generated code cannot have.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.pass_rules import DefinedCall
from ..core.primitive import BROADCASTING, NOT_LINEAR, PER_LANE, Primitive, Zero, register
from ..core.trace import bind
from ..core.shapes import shape_error
from .arith import add, mul, neg, sub
from .index import concatenate
from .shape import reshape
from .reduce import reduce_sum
from .linalg import float_dtype, matmul_bind, matrix_transpose, shape_tuple
from .matrix import solve_bind
from .decomp import column_slice, matrix_aval, row_slice, svdvals_jvp
from ..core.errors import WengertError, user_location
from .gauge import gauge_check, reverse_only
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE

__all__ = ["qr", "pinv", "lstsq", "RankDeficientError"]


class RankDeficientError(WengertError, ValueError):
    """``np.linalg.lstsq`` on a tall matrix of deficient rank.

    Cause: NumPy's residuals are then an empty array, a shape that depends on
    the values, which generated code cannot have.

    Fix: use ``np.linalg.pinv(a) @ b`` for the minimum-norm solution and
    compute the residuals from it.
    """


def _dtype_of(x):
    return aval_of(x).dtype


# --- qr (tall and square) ------------------------------------------------
def qr_impl(a, complete):
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def qr_aval(a, complete):
    batch, m, n, dt = matrix_aval("qr", a)
    if m < n:
        raise shape_error(f"qr_p: factors tall or square matrices, got shape {a.shape}; "
                          "call the wrapper qr, which factors wide ones too")
    k = m if complete else n
    return Aval(batch + (m, k), dt), Aval(batch + (k, n), dt)


def qr_jvp(primals, tangents, complete):
    a, = primals
    a_dot, = tangents
    q, r = bind(qr_p, a, complete=complete)
    if isinstance(a_dot, Zero):
        return (q, r), (Zero(aval_of(q)), Zero(aval_of(r)))
    m, n = shape_tuple(a)[-2:]
    q1 = column_slice(q, 0, n) if complete and m > n else q
    r1 = row_slice(r, 0, n) if complete and m > n else r
    # dA = dQ R + Q dR; with B = dA R^-1 and X = Q^T B, Q^T dQ = Omega is
    # antisymmetric and dR R^-1 upper triangular, so Omega's strict lower
    # triangle is X's
    b = matrix_transpose(solve_bind(matrix_transpose(r1), matrix_transpose(a_dot)))
    x = matmul_bind(matrix_transpose(q1), b)
    low = mul(x, np.tril(np.ones((n, n), _dtype_of(x)), -1))
    upper_part = sub(x, sub(low, matrix_transpose(low)))                # X - Omega = dR R^-1
    dr = matmul_bind(upper_part, r1)
    dq = sub(b, matmul_bind(q1, upper_part))
    if complete and m > n:
        # the extra columns are a basis LAPACK chooses: checked in reverse (``gauge``)
        q2 = column_slice(q, n)
        dq2 = gauge_check(neg(matmul_bind(q1, matmul_bind(matrix_transpose(dq), q2))), q2,
                          what="the extra columns of np.linalg.qr(mode='complete')",
                          where=user_location())
        dq = concatenate(dq, dq2, axis=-1)
        zeros = np.zeros(shape_tuple(a)[:-2] + (m - n, n), _dtype_of(dr))
        dr = concatenate(dr, zeros, axis=-2)
    return (q, r), (dq, dr)


def _extra_columns(primals, complete):
    m, n = shape_tuple(primals[0])[-2:]
    return complete and m > n


qr_p = register(Primitive("qr", nargs=1, impl=qr_impl, jvp=qr_jvp, transpose=NOT_LINEAR,
                          abstract_eval=qr_aval, multiple_results=True,
                          batch=BROADCASTING,
                          jvp_for_grad=reverse_only(qr_jvp, _extra_columns),
                          sparsity=DENSE, emit=DefinedCall(qr_impl, any_library=True)))


def qr(a, complete=False):
    """``(Q, R)`` of ``np.linalg.qr``; a wide ``[X | Y]`` is factored as
    ``X = Q R1`` (square) and ``R = [R1 | Q^T Y]``, which is what NumPy's
    Householder steps compute."""
    m, n = shape_tuple(a)[-2:]
    if m >= n:
        q, r = bind(qr_p, a, complete=bool(complete))
        return q, r
    q, r1 = bind(qr_p, column_slice(a, 0, m), complete=False)
    return q, concatenate(r1, matmul_bind(matrix_transpose(q), column_slice(a, m)), axis=-1)


# --- pinv --------------------------------------------------------------------
def pinv_impl(a, rcond, rtol):
    if rtol is None:
        return np.linalg.pinv(a, rcond=rcond)
    return np.linalg.pinv(a, rcond=rcond, rtol=rtol)


def pinv_aval(a, rcond, rtol):
    batch, m, n, dt = matrix_aval("pinv", a)
    return Aval(batch + (n, m), dt)


def pinv_tangent(a, p, a_dot):
    """The tangent of ``P = pinv(A)`` where the rank is locally constant:
    ``-P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P``."""
    dat = matrix_transpose(a_dot)
    t1 = neg(matmul_bind(p, matmul_bind(a_dot, p)))
    t2 = matmul_bind(p, matmul_bind(matrix_transpose(p), sub(dat, matmul_bind(matmul_bind(dat, a), p))))
    t3 = matmul_bind(sub(dat, matmul_bind(p, matmul_bind(a, dat))), matmul_bind(matrix_transpose(p), p))
    return add(add(t1, t2), t3)


def pinv_jvp(primals, tangents, rcond, rtol):
    a, = primals
    a_dot, = tangents
    p = bind(pinv_p, a, rcond=rcond, rtol=rtol)
    if isinstance(a_dot, Zero):
        return p, Zero(aval_of(p))
    return p, pinv_tangent(a, p, a_dot)


def pinv_batch(args, batched, rcond, rtol):
    """A stack is inverted matrix by matrix; a cutoff given per matrix would meet the
    batch axis: once per example."""
    if np.ndim(rcond) or np.ndim(rtol):
        return NotImplemented
    return bind(pinv_p, args[0], rcond=rcond, rtol=rtol)


pinv_p = register(Primitive("pinv", nargs=1, impl=pinv_impl, jvp=pinv_jvp, transpose=NOT_LINEAR,
                            abstract_eval=pinv_aval, sparsity=DENSE,
                            emit=DefinedCall(pinv_impl, any_library=True), batch=pinv_batch))


def pinv(a, rcond=None, rtol=None):
    return bind(pinv_p, a, rcond=rcond, rtol=rtol)


# --- lstsq ---------------------------------------------------------------------
def lstsq_numpy(a, b, rcond):
    """NumPy's lstsq, refused (a ``ValueError``) where the residuals' shape would depend
    on the values: the generated code calls this (``DefinedCall``), the impl names the
    user's line."""
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=rcond)
    m, n = a.shape
    if m > n and rank < n:
        raise ValueError(
            f"lstsq on a {m}x{n} matrix of rank {rank} < {n}: NumPy's residuals are then an "
            "empty array, a shape that depends on the values, which generated code cannot "
            "have; use np.linalg.pinv(a) @ b for the minimum-norm solution and compute the "
            "residuals from it")
    return x, res, np.intc(rank), sv


def lstsq_impl(a, b, rcond):
    try:
        return lstsq_numpy(a, b, rcond)
    except ValueError as err:
        if not str(err).startswith("lstsq on a"):
            raise
        raise RankDeficientError(f"{user_location()}: {err}") from None


def lstsq_aval(a, b, rcond):
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise shape_error(f"lstsq: expected a matrix (m, n) and a right-hand side (m,) or "
                          f"(m, k), got shapes {a.shape} and {b.shape}")
    m, n = a.shape
    dt = float_dtype(np.result_type(a.dtype, b.dtype))
    nres = (1 if b.ndim == 1 else b.shape[1]) if m > n else 0
    return (Aval((n,) + b.shape[1:], dt), Aval((nres,), dt), Aval((), np.dtype(np.intc)),
            Aval((min(m, n),), dt))


def lstsq_jvp(primals, tangents, rcond):
    a, b = primals
    a_dot, b_dot = tangents
    outs = x, res, rank, sv = lstsq(a, b, rcond)
    zeros = [Zero(aval_of(o)) for o in outs]
    if isinstance(a_dot, Zero) and isinstance(b_dot, Zero):
        return outs, tuple(zeros)
    # the pseudo-inverse x = P b was computed with: singular values below
    # rcond * s_max are cut by lstsq and pinv alike (a negative rcond means
    # machine precision to lstsq, which pinv's default is)
    p = pinv(a, rcond=None if rcond is None or rcond < 0 else rcond)
    r = sub(b, matmul_bind(a, x))
    # dx = dP b + P db, with x = P b and r = (I - A P) b
    rhs = b_dot if isinstance(a_dot, Zero) else sub(b_dot, matmul_bind(a_dot, x))
    dx = matmul_bind(p, rhs)
    if not isinstance(a_dot, Zero):
        dat = matrix_transpose(a_dot)
        y = matmul_bind(dat, matmul_bind(matrix_transpose(p), x))
        dx = add(dx, add(matmul_bind(p, matmul_bind(matrix_transpose(p), matmul_bind(dat, r))),
                         sub(y, matmul_bind(p, matmul_bind(a, y)))))
    m, n = shape_tuple(a)
    dres = zeros[1]
    if m > n:
        dr = sub(rhs, matmul_bind(a, dx))
        dres = reshape(mul(2.0, reduce_sum(mul(r, dr), axis=0)), shape_tuple(res))
    dsv = zeros[3] if isinstance(a_dot, Zero) else svdvals_jvp((a,), (a_dot,))[1]
    return outs, (dx, dres, zeros[2], dsv)


lstsq_p = register(Primitive("lstsq", nargs=2, impl=lstsq_impl, jvp=lstsq_jvp,
                             transpose=NOT_LINEAR, abstract_eval=lstsq_aval,
                             multiple_results=True, sparsity=DENSE,
                             emit=DefinedCall(lstsq_numpy, any_library=True), batch=PER_LANE))


def lstsq(a, b, rcond=None):
    x, res, rank, sv = bind(lstsq_p, a, b, rcond=rcond)
    return x, res, rank, sv
