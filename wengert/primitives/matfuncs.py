"""Matrix functions: the exponential, the principal square root, and the
Sylvester equation their derivatives lead to (``scipy.linalg``'s ``expm``,
``sqrtm``, ``solve_sylvester``).

Contracts:

* ``expm_p`` acts on the last two axes (leading batch axes allowed). Its
  tangent is ``expm_frechet_p(a, da)``, the Frechet derivative (SciPy's
  ``expm_frechet``), which is also the top right block of
  ``expm([[a, da], [0, a]])``. That primitive is linear in ``da`` (so reverse mode works: its
  transpose is ``expm_frechet(a^T, ct)``), and its own derivative in ``a`` is
  the same identity one size up, so every order follows.
* ``sqrtm_p`` is the principal square root of a real matrix whose root is
  real (no eigenvalue on the closed negative real axis). SciPy returns a
  complex root otherwise; the impl raises ``UnsupportedDtypeError`` then,
  since the result's dtype must not depend on the values. Its jvp solves the
  Sylvester equation ``X dX + dX X = dA``.
* ``sylvester_p(a, b, q)`` solves ``a x + x b = q`` (a (m, m), b (n, n),
  q (m, n), batch axes allowed). Linear in ``q``: the transpose of
  ``q -> x`` is ``ct -> sylvester(a^T, b^T, ct)`` (the operator
  ``x -> a x + x b`` has the adjoint ``y -> a^T y + y b^T``).

Real operands only (``triangular.real_only``). The impls call SciPy: these
primitives are reached from SciPy calls only.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import NOT_LINEAR, Linear, Primitive, Zero, instantiate, register
from ..core.trace import bind
from ..core.shapes import broadcast_shapes, result_dtype, shape_error
from .arith import add, sub
from .index import concatenate
from .shape import broadcast_to, sum_to_shape, zeros_like
from .index import getitem
from .linalg import float_dtype, matmul_bind, matrix_transpose, pad_batched, shape_tuple, check_square
from .triangular import real_only
from ..core.errors import UnsupportedDtypeError, user_location
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE


def _float_result(x, a):
    return np.asarray(x, float_dtype(np.asarray(a).dtype))


# --- expm --------------------------------------------------------------
def expm_impl(a):
    import scipy.linalg
    return _float_result(scipy.linalg.expm(np.asarray(a)), a)


def square_real_aval(name):
    """Shape rule of a function of one real square matrix (or a stack)."""
    def aval(a):
        check_square(name, a)
        real_only(name, a)
        return Aval(a.shape, float_dtype(a.dtype))
    aval.__name__ = f"{name}_aval"
    return aval


expm_aval = square_real_aval("expm")


def expm_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    out = expm(a)
    if isinstance(a_dot, Zero):
        return out, Zero(aval_of(out))
    return out, expm_frechet(a, a_dot)


expm_p = register(Primitive("expm", nargs=1, impl=expm_impl, jvp=expm_jvp,
                            transpose=NOT_LINEAR, abstract_eval=expm_aval,
                            sparsity=DENSE))


def expm(a):
    return bind(expm_p, a)


# --- expm_frechet --------------------------------------------------------
def _block(a, e):
    """``[[a, e], [0, a]]`` (on the last two axes)."""
    top = concatenate(a, e, axis=-1)
    return concatenate(top, concatenate(zeros_like(a), a, axis=-1), axis=-2)


def _top_right(x, n):
    return getitem(x, (Ellipsis, slice(0, n), slice(n, 2 * n)))


def expm_frechet_impl(a, e):
    import scipy.linalg
    a, e = np.asarray(a), np.asarray(e)
    dtype = float_dtype(np.result_type(a, e))
    batch = np.broadcast_shapes(a.shape[:-2], e.shape[:-2])
    a, e = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (a, e))
    out = np.empty(batch + a.shape[-2:], dtype)
    # SciPy's algorithm (Al-Mohy and Higham) costs 2-3 expm, where the block
    # matrix [[a, e], [0, a]] costs up to 8 and scales by e's norm as well
    for idx in np.ndindex(*batch):
        out[idx] = scipy.linalg.expm_frechet(a[idx], e[idx], compute_expm=False)
    return out


def expm_frechet_aval(a, e):
    _, n = check_square("expm_frechet", a)
    if e.ndim < 2 or e.shape[-2:] != (n, n):
        raise shape_error(f"expm_frechet: direction of shape {e.shape} does not fit a matrix "
                          f"of shape {a.shape}")
    real_only("expm_frechet", a, e)
    batch = broadcast_shapes(a.shape[:-2], e.shape[:-2], name="expm_frechet")
    return Aval(tuple(batch) + (n, n), float_dtype(result_dtype(a, e)))


def expm_frechet_jvp(primals, tangents):
    a, e = primals
    a_dot, e_dot = tangents
    out = expm_frechet(a, e)
    out_dot = Zero(aval_of(out)) if isinstance(e_dot, Zero) else expm_frechet(a, e_dot)
    if not isinstance(a_dot, Zero):
        # L(a, e) is the top right block of expm([[a, e], [0, a]]): its
        # derivative along da is that block of L([[a, e], [0, a]], diag(da, da))
        n = shape_tuple(a)[-1]
        # the blocks need one batch shape: the result's
        full = shape_tuple(out)
        a, e, a_dot = (broadcast_to(x, full) for x in (a, e, instantiate(a_dot)))
        zeros = zeros_like(a)       # of a primal: a constant to the linear part
        diag = concatenate(concatenate(a_dot, zeros, axis=-1),
                           concatenate(zeros, a_dot, axis=-1), axis=-2)
        out_dot = add(out_dot, _top_right(expm_frechet(_block(a, e), diag), n))
    return out, out_dot


def expm_frechet_transpose(ct, a, e):
    assert not isinstance(a, Linear), "expm_frechet is linear in its direction only"
    # L(a, .) = int_0^1 expm(s a) . expm((1 - s) a) ds has the adjoint L(a^T, .)
    return None, sum_to_shape(expm_frechet(matrix_transpose(a), instantiate(ct)), e.shape)


def expm_frechet_zero_rule(a, e):
    if isinstance(e, Zero):
        return Zero(expm_frechet_aval(aval_of(a), e.aval))
    return expm_frechet(instantiate(a), e)


def expm_frechet_batch(args, batched):
    return expm_frechet(*pad_batched(args, batched))


expm_frechet_p = register(Primitive(
    "expm_frechet", nargs=2, impl=expm_frechet_impl, jvp=expm_frechet_jvp,
    transpose=expm_frechet_transpose, abstract_eval=expm_frechet_aval,
    zero_rule=expm_frechet_zero_rule, batch=expm_frechet_batch,
    sparsity=DENSE))


def expm_frechet(a, e):
    """The Frechet derivative of ``expm`` at ``a`` along ``e``."""
    return bind(expm_frechet_p, a, e)


# --- sylvester ---------------------------------------------------------
def sylvester_impl(a, b, q):
    import scipy.linalg
    dtype = float_dtype(np.result_type(a, b, q))
    batch = np.broadcast_shapes(np.shape(a)[:-2], np.shape(b)[:-2], np.shape(q)[:-2])
    a, b, q = (np.broadcast_to(x, batch + np.shape(x)[-2:]) for x in (a, b, q))
    return np.asarray(scipy.linalg.solve_sylvester(a, b, q), dtype)


def sylvester_aval(a, b, q):
    _, m = check_square("solve_sylvester", a)
    _, n = check_square("solve_sylvester", b)
    if q.ndim < 2 or q.shape[-2:] != (m, n):
        raise shape_error(f"solve_sylvester: q of shape {q.shape} does not fit a of shape "
                          f"{a.shape} and b of shape {b.shape}; expected (..., {m}, {n})")
    real_only("solve_sylvester", a, b, q)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2], name="solve_sylvester")
    return Aval(tuple(batch) + q.shape[-2:], float_dtype(result_dtype(a, b, q)))


def sylvester_jvp(primals, tangents):
    a, b, q = primals
    a_dot, b_dot, q_dot = tangents
    x = sylvester(a, b, q)
    # a x + x b = q  =>  a dx + dx b = dq - da x - x db
    rhs = q_dot
    if not isinstance(a_dot, Zero):
        rhs = sub(rhs, matmul_bind(a_dot, x))
    if not isinstance(b_dot, Zero):
        rhs = sub(rhs, matmul_bind(x, b_dot))
    return x, sylvester(a, b, rhs)


def sylvester_transpose(ct, a, b, q):
    assert not isinstance(a, Linear) and not isinstance(b, Linear), \
        "solve_sylvester is linear in q only"
    return None, None, sum_to_shape(sylvester(matrix_transpose(a), matrix_transpose(b), instantiate(ct)), q.shape)


def sylvester_zero_rule(a, b, q):
    if isinstance(q, Zero):
        return Zero(sylvester_aval(aval_of(a), aval_of(b), q.aval))
    return sylvester(instantiate(a), instantiate(b), q)


sylvester_p = register(Primitive("sylvester", nargs=3, impl=sylvester_impl, jvp=sylvester_jvp,
                                 transpose=sylvester_transpose, abstract_eval=sylvester_aval,
                                 zero_rule=sylvester_zero_rule,
                                 sparsity=DENSE))


def sylvester(a, b, q):
    """``x`` with ``a x + x b = q``."""
    return bind(sylvester_p, a, b, q)


# --- sqrtm -------------------------------------------------------------
def sqrtm_impl(a):
    import scipy.linalg
    a = np.asarray(a)
    root = scipy.linalg.sqrtm(a)
    if np.iscomplexobj(root) and not np.iscomplexobj(a):
        raise UnsupportedDtypeError(
            f"{user_location()}: sqrtm: the principal square root of this real matrix is "
            "complex (it has an eigenvalue on the negative real axis); its dtype would depend "
            "on the values. Pass a complex matrix to SciPy without differentiating it, or "
            "shift the matrix so its eigenvalues have positive real parts")
    return _float_result(root, a)


def sqrtm_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    root = sqrtm(a)
    if isinstance(a_dot, Zero):
        return root, Zero(aval_of(root))
    # X X = A  =>  X dX + dX X = dA
    return root, sylvester(root, root, a_dot)


sqrtm_p = register(Primitive("sqrtm", nargs=1, impl=sqrtm_impl, jvp=sqrtm_jvp,
                             transpose=NOT_LINEAR, abstract_eval=square_real_aval("sqrtm"),
                             sparsity=DENSE))


def sqrtm(a):
    return bind(sqrtm_p, a)
