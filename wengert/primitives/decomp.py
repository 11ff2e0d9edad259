"""Decompositions by orthogonal matrices: svd, svdvals, eigh, eigvalsh;
the adjugate (``det``'s derivative) and matrix_rank, which use the SVD.
(qr, pinv and lstsq live in ``lstsq.py``.)

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
* ``adjugate_p`` is ``det(A) inv(A)`` for well-conditioned matrices (two LU
  factorisations), and ``adj(A) = det(U V^T) V adj(S) U^T`` from the SVD
  ``A = U S V^T`` otherwise, finite at singular matrices. Its jvp
  is exact there too: ``A + dA = U (S + E) V^T`` with ``E = U^T dA V`` and
  ``U``, ``V`` held fixed, so ``d adj(A) = det(U V^T) V d adj(S)[E] U^T``,
  where ``d adj(S)[E]`` is ``sum_(k != i) P_ik E_kk`` on the diagonal and
  ``-P_ij E_ij`` off it, ``P_ik`` the product of the singular values other
  than ``s_i`` and ``s_k``. No difference of singular values is divided by.
  (A third derivative of ``det`` differentiates ``U`` and ``V`` themselves,
  so it needs distinct singular values.)
* ``matrix_rank_p`` is an integer computed when the code runs; it has no
  derivative.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.pass_rules import DefinedCall, NumpyCall
from ..core.primitive import BROADCASTING, NOT_LINEAR, Primitive, Zero, register
from ..core.trace import bind
from ..core.rules import EmitRule
from ..core.shapes import shape_error
from .arith import add, div, mul, neg, sub
from .selection import where
from .index import concatenate
from .shape import expand_dims, reshape
from .reduce import pair_products, prod_others_impl, prod_others_lines, reduce_sum
from .index import getitem
from .linalg import float_dtype, matmul_bind, matrix_transpose, shape_tuple, check_square
from ..core.ir import Aval, aval_of
from ..core.primitive import DENSE
from ..core.errors import user_location
from .gauge import gauge_check, reverse_only, untied_gap_inverse

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "adjugate", "matrix_rank", "sym_from_lower"]


def _dtype_of(x):
    return aval_of(x).dtype


def _eye(k, x):
    return np.eye(k, dtype=float_dtype(_dtype_of(x)))


def _diag_part(m, k):
    """The diagonal of a (batch of) k x k matrix, as the last axis."""
    return reduce_sum(mul(m, _eye(k, m)), axis=-1)


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
    eye = _eye(k, w)
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
    eye = _eye(k, s)
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
    ds = _diag_part(dp, k)
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
    dv = gauge_check(matmul_bind(v, mul(untied_gap_inverse(w, _eye(n, w)), vdv)), v, w,
                     what="eigenvectors of a repeated eigenvalue (np.linalg.eigh)",
                     where=user_location())
    return (w, v), (_diag_part(vdv, n), dv)


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


# --- adjugate ----------------------------------------------------------------
def adjugate_impl(a):
    # computed in float64 (a float32 det(A) inv(A) would lose cond(A) * 6e-8):
    # well conditioned, det(A) inv(A), two LU factorisations; otherwise (and at
    # singular matrices, where that is 0 * inf) from the SVD
    dtype = float_dtype(a.dtype)
    a = np.asarray(a, np.float64)
    with np.errstate(all="ignore"):
        try:
            a_inv = np.linalg.inv(a)
        except np.linalg.LinAlgError:       # exactly singular (LAPACK saw a zero pivot)
            a_inv = None
        if a_inv is not None:
            cond_1 = np.abs(a).sum(-2).max(-1) * np.abs(a_inv).sum(-2).max(-1)
            if np.all(cond_1 < 1e4):
                return (np.linalg.det(a)[..., None, None] * a_inv).astype(dtype, copy=False)
    u, s, vh = np.linalg.svd(a)
    pi = prod_others_impl(s, (s.ndim - 1,)) * orientation_impl(u, vh)[..., None]
    adj = np.swapaxes(vh, -1, -2) @ (pi[..., :, None] * np.swapaxes(u, -1, -2))
    return adj.astype(dtype, copy=False)


def adjugate_aval(a):
    check_square("adjugate", a)
    return Aval(a.shape, float_dtype(a.dtype))


def adjugate_jvp(primals, tangents):
    a, = primals
    a_dot, = tangents
    adj = adjugate(a)
    if isinstance(a_dot, Zero):
        return adj, Zero(aval_of(adj))
    n = shape_tuple(a)[-1]
    u, s, vh = svd(a, False)
    e = matmul_bind(matrix_transpose(u), matmul_bind(a_dot, matrix_transpose(vh)))
    pair = pair_products(s)
    # d adj(S)[E]: sum_(k != i) P_ik E_kk on the diagonal, -P_ij E_ij off it
    on_diag = reshape(matmul_bind(pair, expand_dims(_diag_part(e, n), -1)), shape_tuple(s) + (1,))
    inner = sub(mul(on_diag, _eye(n, s)), mul(pair, e))
    d_adj = matmul_bind(matrix_transpose(vh), matmul_bind(inner, matrix_transpose(u)))
    sign = expand_dims(expand_dims(bind(orientation_p, u, vh), -1), -1)
    return adj, mul(sign, d_adj)


class AdjugateEmit(EmitRule):
    """The impl's two ways, as statements: ``det(A) inv(A)`` for a
    well-conditioned matrix, else from the SVD (the product of the other
    singular values, ``prod_others``, with the orientation's sign). The choice reads the
    values: on Dask's arrays the impl is one task of the graph (``own_numpy``)."""

    own_numpy = True

    def statements(self, code, eqn, ins, py, outs, subs):
        if code.lazy:
            return [f"{outs[0]} = {code.task(code.impl(eqn.prim), eqn, list(ins))}"]
        a = eqn.inputs[0]
        if eqn.params or py[0]:
            return None
        np_, out, ndim = code.np, outs[0], len(a.aval.shape)
        dtype = eqn.outputs[0].aval.dtype
        a64, a_inv, u, s, vh, pi = (code.fresh(n) for n in ("a64", "a_inv", "u", "s", "vh",
                                                             "pi"))
        cast = "" if dtype == np.float64 else f".astype({code.dtype(dtype)}, copy=False)"
        svd = [f"{u}, {s}, {vh} = {np_}.linalg.svd({a64})",
               *prod_others_lines(code, s, ndim - 1, (ndim - 2,), pi),
               f"{pi} = {pi} * ({np_}.sign({np_}.linalg.det({u})) "
               f"* {np_}.sign({np_}.linalg.det({vh})))[..., None]",
               f"{out} = ({np_}.swapaxes({vh}, -1, -2) @ ({pi}[..., :, None] "
               f"* {np_}.swapaxes({u}, -1, -2))){cast}"]
        cond = (f"{np_}.all({np_}.abs({a64}).sum(-2).max(-1) "
                f"* {np_}.abs({a_inv}).sum(-2).max(-1) < 1e4)")
        return [f"{a64} = {np_}.asarray({ins[0]}, {np_}.float64)",
                f"with {np_}.errstate(all='ignore'):",
                "    try:",
                f"        {a_inv} = {np_}.linalg.inv({a64})",
                f"    except {np_}.linalg.LinAlgError:     # exactly singular",
                f"        {a_inv} = None",
                f"    if {a_inv} is not None and {cond}:",
                f"        {out} = ({np_}.linalg.det({a64})[..., None, None] * {a_inv}){cast}",
                "    else:",
                *code.indent(svd, 2)]


adjugate_p = register(Primitive("adjugate", nargs=1, impl=adjugate_impl, jvp=adjugate_jvp,
                                transpose=NOT_LINEAR, abstract_eval=adjugate_aval,
                                emit=AdjugateEmit(),
                                sparsity=DENSE,
                                batch=BROADCASTING))


def adjugate(a):
    """``adj(A)``, the transposed cofactor matrix (``det(A) inv(A)`` where
    ``A`` is invertible)."""
    return bind(adjugate_p, a)


# --- orientation (a sign, no derivative) -----------------------------------------
def orientation_impl(u, vh):
    """det(U V^T) = +-1 for orthogonal U, V: the sign a product of singular
    values lacks. It changes only where a singular value crosses zero, so it
    carries no derivative."""
    return np.sign(np.linalg.det(u)) * np.sign(np.linalg.det(vh))


def orientation_aval(u, vh):
    return Aval(u.shape[:-2], float_dtype(u.dtype))


orientation_p = register(Primitive("orientation", nargs=2, impl=orientation_impl, jvp=None,
                                   transpose=NOT_LINEAR, abstract_eval=orientation_aval,
                                   emit=DefinedCall(orientation_impl), differentiable=False,
                                   batch=BROADCASTING))


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

