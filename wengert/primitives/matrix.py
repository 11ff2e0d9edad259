"""Matrix functions: solve, inv, det, slogdet, cholesky.

Contracts:

* ``solve_p`` is ``np.linalg.solve`` with a right-hand side of ndim >= 2
  (the wrapper ``solve`` handles a vector ``b``); linear in ``b`` only, with a
  batch rule.
* ``inv_p``, ``det_p``, ``slogdet_p``, ``cholesky_p`` act on the last two
  axes and accept leading batch axes. ``det``'s derivative is the adjugate's
  (``decomp.adjugate_p``), finite and exact at singular matrices.
  ``slogdet_p`` has two results (sign, log|det|); the sign's tangent is zero.
* ``cholesky_p`` reads the lower triangle only, as NumPy does: its jvp
  makes the tangent symmetric from its lower triangle, so the derivative is
  NumPy's function's in every direction (the upper triangle has none).

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import (
    BROADCASTING, NOT_LINEAR, Linear, Primitive, Zero, instantiate, register)
from ..core.trace import bind
from ..core.shapes import result_dtype, shape_error
from ..core.pass_rules import NumpyLike
from .arith import mul, neg, sub
from .shape import reshape, sum_to_shape
from .reduce import reduce_sum
from . import linalg
from .linalg import batch_shape, float_dtype, matmul_bind, matrix_transpose, pad_batched, shape_tuple, check_square
from .adjugate import adjugate
from .decomp import sym_from_lower
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE


# --- solve -------------------------------------------------------------
def solve_aval(a, b):
    _, n = check_square("solve", a)
    if b.ndim < 2 or b.shape[-2] != n:
        raise shape_error(f"solve: right-hand side of shape {b.shape} does not fit a matrix "
                                 f"of shape {a.shape}; expected (..., {n}, k) or ({n},)")
    batch = batch_shape("solve", a, b)
    return Aval(batch + b.shape[-2:], float_dtype(result_dtype(a, b)))


def solve_jvp(primals, tangents):
    a, b = primals
    a_dot, b_dot = tangents
    x = solve_bind(a, b)
    # a x = b  =>  a dx = db - da x
    rhs = b_dot if isinstance(a_dot, Zero) else sub(b_dot, matmul_bind(a_dot, x))
    return x, solve_bind(a, rhs)


def solve_transpose(ct, a, b):
    assert not isinstance(a, Linear), "solve is linear in its right-hand side only"
    return None, sum_to_shape(solve_bind(matrix_transpose(a), ct), b.shape)


def solve_zero_rule(a, b):
    if isinstance(b, Zero):
        return Zero(solve_aval(aval_of(a), b.aval))
    return solve_bind(instantiate(a), b)    # a zero matrix is singular: NumPy says so


def solve_batch(args, batched):
    return solve_bind(*pad_batched(args, batched))


solve_p = register(Primitive("solve", nargs=2, impl=np.linalg.solve, jvp=solve_jvp,
                             transpose=solve_transpose, abstract_eval=solve_aval,
                             zero_rule=solve_zero_rule, batch=solve_batch, complex_ok=True,
                             sparsity=DENSE))


def solve_bind(a, b):
    return bind(solve_p, a, b)


def solve(a, b):
    """``np.linalg.solve``; a 1-D ``b`` is one right-hand side."""
    if len(shape_tuple(b)) == 1:
        x = solve_bind(a, reshape(b, (-1, 1)))
        return reshape(x, shape_tuple(x)[:-1])
    return solve_bind(a, b)


# --- inv ---------------------------------------------------------------
def inv_aval(a):
    check_square("inv", a)
    return Aval(a.shape, float_dtype(a.dtype))


def inv_jvp(primals, tangents):
    a_inv = inv(primals[0])
    a_dot, = tangents
    if isinstance(a_dot, Zero):
        return a_inv, Zero(aval_of(a_inv))
    return a_inv, neg(matmul_bind(matmul_bind(a_inv, a_dot), a_inv))


inv_p = register(Primitive("inv", nargs=1, impl=np.linalg.inv, jvp=inv_jvp,
                           transpose=NOT_LINEAR, abstract_eval=inv_aval, complex_ok=True,
                           sparsity=DENSE,
                           batch=BROADCASTING))


def inv(a):
    return bind(inv_p, a)


def _dlogdet(a, a_dot):
    """d log|det a| = tr(a^-1 da) = sum(a^-T * da) over the matrix axes."""
    return reduce_sum(mul(matrix_transpose(inv(a)), a_dot), axis=(-2, -1))


# --- det ---------------------------------------------------------------
def det_aval(a):
    batch, _ = check_square("det", a)
    return Aval(batch, float_dtype(a.dtype))


def det_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    out = det(a)
    if isinstance(a_dot, Zero):
        return out, Zero(aval_of(out))
    if aval_of(a).dtype.kind == "c":
        # complex: d det = det(A) tr(A^-1 dA), holomorphic (the adjugate's
        # rules are written for real matrices; a singular complex matrix
        # raises in solve rather than giving a wrong value)
        return out, mul(out, linalg.trace(solve(a, a_dot), 0, -2, -1))
    # d det = tr(adj(A) dA); the adjugate (from the SVD) is finite where A is
    # singular, unlike det(A) inv(A)
    return out, reduce_sum(mul(matrix_transpose(adjugate(a)), a_dot), axis=(-2, -1))


det_p = register(Primitive("det", nargs=1, impl=np.linalg.det, jvp=det_jvp,
                           transpose=NOT_LINEAR, abstract_eval=det_aval, complex_ok=True,
                           sparsity=DENSE,
                           batch=BROADCASTING))


def det(a):
    return bind(det_p, a)


# --- slogdet -----------------------------------------------------------
def slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def slogdet_aval(a):
    batch, _ = check_square("slogdet", a)
    dtype = float_dtype(a.dtype)
    return Aval(batch, dtype), Aval(batch, np.zeros((), dtype).real.dtype)


def slogdet_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    sign, logabsdet = slogdet(a)
    if isinstance(a_dot, Zero):
        return (sign, logabsdet), (Zero(aval_of(sign)), Zero(aval_of(logabsdet)))
    return (sign, logabsdet), (Zero(aval_of(sign)), _dlogdet(a, a_dot))


slogdet_p = register(Primitive("slogdet", nargs=1, impl=slogdet_impl, jvp=slogdet_jvp,
                               transpose=NOT_LINEAR, abstract_eval=slogdet_aval,
                               multiple_results=True, emit=NumpyLike("linalg.slogdet"),
                               sparsity=DENSE,
                               batch=BROADCASTING))


def slogdet(a):
    """``(sign, log|det a|)`` as a tuple."""
    sign, logabsdet = bind(slogdet_p, a)
    return sign, logabsdet


# --- cholesky ----------------------------------------------------------
def cholesky_aval(a):
    check_square("cholesky", a)
    return Aval(a.shape, float_dtype(a.dtype))


def cholesky_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    chol = bind(cholesky_p, a)
    if isinstance(a_dot, Zero):
        return chol, Zero(aval_of(chol))
    n = shape_tuple(a)[-1]
    # NumPy reads the lower triangle only: the tangent of the matrix it reads
    sym = sym_from_lower(a_dot)
    # S = L^-1 dA L^-T by two solves (L^-1 X^T)^T; dL = L Phi(S), where Phi
    # keeps the lower triangle and halves the diagonal
    left = solve_bind(chol, sym)
    s = matrix_transpose(solve_bind(chol, matrix_transpose(left)))
    phi = np.tril(np.ones((n, n), aval_of(chol).dtype)) - 0.5 * np.eye(n, dtype=aval_of(chol).dtype)
    return chol, matmul_bind(chol, mul(s, phi))


cholesky_p = register(Primitive("cholesky", nargs=1, impl=np.linalg.cholesky, jvp=cholesky_jvp,
                                transpose=NOT_LINEAR, abstract_eval=cholesky_aval,
                                sparsity=DENSE,
                                batch=BROADCASTING))


def cholesky(a, upper=False):
    """Lower factor ``L`` with ``a = L L^T``; ``upper=True`` gives ``L^T``."""
    chol = bind(cholesky_p, a)
    return matrix_transpose(chol) if upper else chol
