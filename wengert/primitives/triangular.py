"""Triangular solves and the LU factorisation: what ``scipy.linalg``'s
``solve_triangular``, ``cho_solve``, ``lu_factor`` and ``lu_solve`` are made of.

Contracts:

* ``solve_triangular_p(a, b)`` solves ``op(T) x = b`` where ``T`` is the
  triangle of ``a`` named by ``lower`` (its diagonal taken as ones when
  ``unit_diagonal``) and ``op`` is the identity (``trans=0``) or the
  transpose (``trans=1``). The entries of ``a`` outside ``T`` are never read,
  so their derivative is zero: a tangent ``da`` is masked to ``T`` first.
  ``b`` has ndim >= 2 (the wrapper reads a vector as one column); leading
  batch axes broadcast. Linear in ``b``; its transpose is the solve with
  ``trans`` flipped.
* ``lu_factor_p(a)`` is SciPy's ``lu_factor`` of a square matrix (or a stack
  of them): ``(lu, piv)``, ``lu`` holding the unit lower factor below the
  diagonal and the upper factor on and above it, ``piv`` LAPACK's 0-based
  row interchanges (integers, not differentiated). Its jvp is the LU
  formula ``dL = L tril(X, -1)``, ``dU = triu(X) U`` with
  ``X = L^-1 P dA U^-1``, written with triangular solves.
* ``lu_permutation_p(piv)`` turns the interchanges into the permutation
  matrix ``P`` with ``P a = L U`` (not differentiated), so permuting rows is a
  matmul that differentiates and batches like any other.

Real operands only: a complex operand raises ``UnsupportedDtypeError``.
The impls call SciPy (present whenever these are reached from a SciPy call);
without SciPy the triangular solve falls back to ``np.linalg.solve``.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.pass_rules import DefinedCall
from ..core.primitive import (
    BROADCASTING, NOT_LINEAR, PER_LANE, Linear, Primitive, Zero, instantiate, register)
from ..core.trace import bind
from ..core.shapes import result_dtype, shape_error
from .arith import add, mul, neg
from .shape import reshape, sum_to_shape
from .selection import where
from .linalg import batch_shape, float_dtype, matmul_bind, matrix_transpose, pad_batched, shape_tuple, check_square
from ..core.errors import UnsupportedDtypeError, user_location
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE


def _scipy_linalg():
    try:
        import scipy.linalg
    except ImportError:         # the primitives are reached from SciPy calls only
        return None
    return scipy.linalg


def real_only(name, *avals):
    """Complex operands are refused, never given a derivative we have not checked."""
    if any(a.dtype.kind == "c" for a in avals):
        raise UnsupportedDtypeError(
            f"{user_location()}: {name}: complex operands are not supported by wengert's rule; "
            "differentiate the real and imaginary parts as separate real problems")


def triangle_mask(n, dtype, lower, strict=False):
    """Ones on the triangle an operation reads, zeros elsewhere (a constant)."""
    ones = np.ones((n, n), dtype)
    k = -1 if strict else 0
    return np.tril(ones, k) if lower else np.triu(ones, -k)


# --- solve_triangular --------------------------------------------------
def solve_triangular_impl(a, b, lower, trans, unit_diagonal):
    sl = _scipy_linalg()
    a, b = np.asarray(a), np.asarray(b)
    dtype = float_dtype(np.result_type(a, b))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if sl is not None:
        return np.asarray(sl.solve_triangular(a, b, trans=trans, lower=lower,
                                              unit_diagonal=unit_diagonal), dtype)
    t = a * triangle_mask(a.shape[-1], a.dtype, lower, strict=unit_diagonal)
    if unit_diagonal:
        t = t + np.eye(a.shape[-1], dtype=a.dtype)
    return np.linalg.solve(np.swapaxes(t, -1, -2) if trans else t, b).astype(dtype)


def solve_triangular_aval(a, b, lower, trans, unit_diagonal):
    _, n = check_square("solve_triangular", a)
    if b.ndim < 2 or b.shape[-2] != n:
        raise shape_error(f"solve_triangular: right-hand side of shape {b.shape} does not fit "
                          f"a matrix of shape {a.shape}; expected (..., {n}, k) or ({n},)")
    real_only("solve_triangular", a, b)
    batch = batch_shape("solve_triangular", a, b)
    return Aval(batch + b.shape[-2:], float_dtype(result_dtype(a, b)))


def solve_triangular_jvp(primals, tangents, lower, trans, unit_diagonal):
    a, b = primals
    a_dot, b_dot = tangents
    x = _solve_tri(a, b, lower, trans, unit_diagonal)
    if isinstance(a_dot, Zero):
        return x, _solve_tri(a, b_dot, lower, trans, unit_diagonal)
    # op(T) x = b  =>  op(T) dx = db - op(dT) x, dT the read triangle of da
    n = shape_tuple(a)[-1]
    # the read triangle selected, not multiplied by a 0/1 mask: an inf or nan
    # tangent in the triangle the solve never reads stays out (0 * inf is nan)
    t_dot = where(triangle_mask(n, bool, lower, strict=unit_diagonal), a_dot,
                  np.zeros((), aval_of(a_dot).dtype))
    rhs = neg(matmul_bind(matrix_transpose(t_dot) if trans else t_dot, x))
    if not isinstance(b_dot, Zero):
        rhs = add(b_dot, rhs)
    return x, _solve_tri(a, rhs, lower, trans, unit_diagonal)


def solve_triangular_transpose(ct, a, b, lower, trans, unit_diagonal):
    assert not isinstance(a, Linear), "solve_triangular is linear in its right-hand side only"
    ct_b = _solve_tri(a, instantiate(ct), lower, 1 - trans, unit_diagonal)
    return None, sum_to_shape(ct_b, b.shape)


def solve_triangular_zero_rule(a, b, lower, trans, unit_diagonal):
    if isinstance(b, Zero):
        return Zero(solve_triangular_aval(aval_of(a), b.aval, lower, trans, unit_diagonal))
    return _solve_tri(instantiate(a), b, lower, trans, unit_diagonal)


def solve_triangular_batch(args, batched, lower, trans, unit_diagonal):
    return _solve_tri(*pad_batched(args, batched), lower, trans, unit_diagonal)


solve_triangular_p = register(Primitive(
    "solve_triangular", nargs=2, impl=solve_triangular_impl, jvp=solve_triangular_jvp,
    transpose=solve_triangular_transpose, abstract_eval=solve_triangular_aval,
    zero_rule=solve_triangular_zero_rule, batch=solve_triangular_batch,
    sparsity=DENSE,
    emit=DefinedCall(solve_triangular_impl, (_scipy_linalg, float_dtype, triangle_mask))))


def _solve_tri(a, b, lower, trans, unit_diagonal):
    return bind(solve_triangular_p, a, b, lower=bool(lower), trans=int(trans),
                unit_diagonal=bool(unit_diagonal))


def solve_triangular(a, b, lower=False, trans=0, unit_diagonal=False):
    """``op(tri(a)) x = b``; a 1-D ``b`` is one right-hand side."""
    if len(shape_tuple(b)) == 1:
        x = _solve_tri(a, reshape(b, (-1, 1)), lower, trans, unit_diagonal)
        return reshape(x, shape_tuple(x)[:-1])
    return _solve_tri(a, b, lower, trans, unit_diagonal)


# --- lu_permutation ----------------------------------------------------
def lu_permutation_impl(piv, dtype):
    piv = np.asarray(piv)
    n = piv.shape[-1]
    rows = np.broadcast_to(np.arange(n), piv.shape).reshape(-1, n).copy()
    pivots = piv.reshape(-1, n)
    stack = np.arange(rows.shape[0])
    for i in range(n):                  # LAPACK: row i was swapped with row piv[i]
        j = pivots[:, i]
        rows[stack, i], rows[stack, j] = rows[stack, j], rows[stack, i].copy()
    perm = rows.reshape(piv.shape)
    # P a = a[perm]: row i of P is the unit vector e_perm[i]
    return (perm[..., :, None] == np.arange(n)).astype(dtype)


def lu_permutation_aval(piv, dtype):
    return Aval(piv.shape + piv.shape[-1:], np.dtype(dtype))


lu_permutation_p = register(Primitive(
    "lu_permutation", nargs=1, impl=lu_permutation_impl, jvp=None, transpose=NOT_LINEAR,
    abstract_eval=lu_permutation_aval, emit=DefinedCall(lu_permutation_impl),
    differentiable=False, batch=BROADCASTING))


def lu_permutation(piv, dtype):
    """The permutation matrix ``P`` (``P a = L U``) of LAPACK's pivots."""
    return bind(lu_permutation_p, piv, dtype=np.dtype(dtype).name)


# --- lu_factor ---------------------------------------------------------
def lu_factor_impl(a):
    sl = _scipy_linalg()
    lu, piv = sl.lu_factor(np.asarray(a))
    return lu, piv.astype(np.int32)


def lu_factor_aval(a):
    check_square("lu_factor", a)
    real_only("lu_factor", a)
    return Aval(a.shape, float_dtype(a.dtype)), Aval(a.shape[:-1], np.dtype(np.int32))


def lu_factors(lu):
    """The unit lower factor L and the upper factor U packed in ``lu``."""
    n = shape_tuple(lu)[-1]
    dtype = aval_of(lu).dtype
    lower = add(mul(lu, triangle_mask(n, dtype, True, strict=True)), np.eye(n, dtype=dtype))
    return lower, mul(lu, triangle_mask(n, dtype, False))


def lu_factor_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    lu, piv = lu_factor(a)
    if isinstance(a_dot, Zero):
        return (lu, piv), (Zero(aval_of(lu)), Zero(aval_of(piv)))
    n = shape_tuple(lu)[-1]
    dtype = aval_of(lu).dtype
    lower, upper = lu_factors(lu)
    # X = L^-1 P dA U^-1, the second solve as U^T X^T = (L^-1 P dA)^T
    y = _solve_tri(lu, matmul_bind(lu_permutation(piv, dtype), a_dot), True, 0, True)
    x = matrix_transpose(_solve_tri(lu, matrix_transpose(y), False, 1, False))
    lu_dot = add(matmul_bind(lower, mul(x, triangle_mask(n, dtype, True, strict=True))),
                 matmul_bind(mul(x, triangle_mask(n, dtype, False)), upper))
    return (lu, piv), (lu_dot, Zero(aval_of(piv)))


lu_factor_p = register(Primitive(
    "lu_factor", nargs=1, impl=lu_factor_impl, jvp=lu_factor_jvp, transpose=NOT_LINEAR,
    abstract_eval=lu_factor_aval, multiple_results=True,
    sparsity=DENSE, emit=DefinedCall(lu_factor_impl, (_scipy_linalg,)), batch=PER_LANE))


def lu_factor(a):
    """``(lu, piv)`` of a square matrix (or a stack of them)."""
    lu, piv = bind(lu_factor_p, a)
    return lu, piv


def lu_solve(lu, piv, b, trans=0):
    """``a x = b`` (``trans=0``) or ``a^T x = b`` from ``a``'s LU factors:
    ``a = P^T L U``."""
    vector = len(shape_tuple(b)) == 1
    if vector:
        b = reshape(b, (-1, 1))
    perm = lu_permutation(piv, float_dtype(np.result_type(aval_of(lu).dtype,
                                                           aval_of(b).dtype)))
    if trans:
        # U^T L^T P x = b
        z = _solve_tri(lu, _solve_tri(lu, b, False, 1, False), True, 1, True)
        x = matmul_bind(matrix_transpose(perm), z)
    else:
        x = _solve_tri(lu, _solve_tri(lu, matmul_bind(perm, b), True, 0, True), False, 0, False)
    return reshape(x, shape_tuple(x)[:-1]) if vector else x
