"""The adjugate, ``det``'s derivative: ``adjugate_p`` and the sign it takes from the SVD
(``orientation_p``).

Contract (real matrices, on the last two axes, with leading batch axes as NumPy's):

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

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, aval_of
from ..core.pass_rules import DefinedCall
from ..core.primitive import BROADCASTING, DENSE, NOT_LINEAR, Primitive, Zero, register
from ..core.rules import EmitRule
from ..core.trace import bind
from .arith import mul, sub
from .decomp import diagonal_part, identity_like, svd
from .linalg import check_square, float_dtype, matmul_bind, matrix_transpose, shape_tuple
from .reduce import pair_products, prod_others_impl, prod_others_lines
from .shape import expand_dims, reshape

__all__ = ["adjugate"]


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
                                   emit=DefinedCall(orientation_impl, any_library=True), differentiable=False,
                                   batch=BROADCASTING))


# --- adjugate ----------------------------------------------------------------
def adjugate_impl(a):
    # computed in float64 (a float32 det(A) inv(A) would lose cond(A) * 6e-8):
    # well conditioned, det(A) inv(A), two LU factorisations; otherwise (and at
    # singular matrices, where that is 0 * inf) from the SVD
    dtype = float_dtype(a.dtype)
    # (another library's array, CuPy's, stays one: ``any_library``)
    a = a.astype(np.float64, copy=False) if hasattr(a, "astype") else np.asarray(a, np.float64)
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
    on_diag = reshape(matmul_bind(pair, expand_dims(diagonal_part(e, n), -1)), shape_tuple(s) + (1,))
    inner = sub(mul(on_diag, identity_like(n, s)), mul(pair, e))
    d_adj = matmul_bind(matrix_transpose(vh), matmul_bind(inner, matrix_transpose(u)))
    sign = expand_dims(expand_dims(bind(orientation_p, u, vh), -1), -1)
    return adj, mul(sign, d_adj)


class AdjugateEmit(EmitRule):
    """The impl's two ways, as statements: ``det(A) inv(A)`` for a
    well-conditioned matrix, else from the SVD (the product of the other
    singular values, ``prod_others``, with the orientation's sign). For numba
    (a writer of no Python floats), in its subset: matrix by matrix over the
    batch, no ``None`` for the singular case, the products a loop (``numba_lines``). The
    choice reads the values: on Dask's arrays the impl is one task of the graph
    (``own_numpy``)."""

    own_numpy = True
    any_library = True      # (``libraries.numpy_only``: CuPy's array stays one)

    def statements(self, code, eqn, ins, py, outs, subs):
        if code.lazy:
            return [f"{outs[0]} = {code.task(code.impl(eqn.prim), eqn, list(ins))}"]
        a = eqn.inputs[0]
        if eqn.params or py[0]:
            return None
        np_, out, ndim = code.np, outs[0], len(a.aval.shape)
        dtype = eqn.outputs[0].aval.dtype
        if not code.LOWERING["floats"]:
            return self.numba_lines(code, ins[0], out, dtype)
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
        to64 = (f"{ins[0]}.astype({np_}.float64, copy=False)" if code.foreign
                else f"{np_}.asarray({ins[0]}, {np_}.float64)")
        return [f"{a64} = {to64}",
                f"with {np_}.errstate(all='ignore'):",
                "    try:",
                f"        {a_inv} = {np_}.linalg.inv({a64})",
                f"    except {np_}.linalg.LinAlgError:     # exactly singular",
                f"        {a_inv} = None",
                f"    if {a_inv} is not None and {cond}:",
                f"        {out} = ({np_}.linalg.det({a64})[..., None, None] * {a_inv}){cast}",
                "    else:",
                *code.indent(svd, 2)]


    @staticmethod
    def numba_lines(code, a, out, dtype):
        """The statements in numba's subset: each matrix of the batch (of a C-contiguous
        float64 copy) as the impl's two ways, the singular case a flag."""
        np_ = code.np
        a64, adj, m, inv, ok, u, s, vh, pi, b, i = (code.fresh(n) for n in (
            "a64", "adj", "m", "a_inv", "ok", "u", "s", "vh", "pi", "b", "i"))
        cast = "" if dtype == np.float64 else f".astype({code.dtype(dtype)})"
        cond = f"{np_}.abs({m}).sum(axis=0).max() * {np_}.abs({inv}).sum(axis=0).max() < 1e4"
        return [f"{a64} = {np_}.ascontiguousarray({a}).astype({np_}.float64)",
                f"{adj} = {np_}.empty_like({a64})",
                f"for {b} in range({a64}.size // ({a64}.shape[-1] * {a64}.shape[-1])):",
                f"    {m} = {a64}.reshape((-1, {a64}.shape[-1], {a64}.shape[-1]))[{b}]",
                f"    {inv}, {ok} = {m}, True",
                "    try:",
                f"        {inv} = {np_}.linalg.inv({m})",
                f"    except {np_}.linalg.LinAlgError:     # exactly singular",
                f"        {ok} = False",
                f"    if {ok} and {cond}:",
                f"        {inv} = {np_}.linalg.det({m}) * {inv}",
                "    else:",
                f"        {u}, {s}, {vh} = {np_}.linalg.svd({m})",
                f"        {pi} = {np_}.empty_like({s})",
                f"        for {i} in range({s}.shape[0]):",
                f"            {pi}[{i}] = {np_}.prod({s}[:{i}]) * {np_}.prod({s}[{i} + 1:])",
                f"        {pi} = {pi} * ({np_}.sign({np_}.linalg.det({u})) "
                f"* {np_}.sign({np_}.linalg.det({vh})))",
                f"        {inv} = {np_}.ascontiguousarray({vh}.T) @ "
                f"({pi}.reshape((-1, 1)) * {np_}.ascontiguousarray({u}.T))",
                f"    {adj}.reshape((-1, {a64}.shape[-1], {a64}.shape[-1]))[{b}] = {inv}",
                f"{out} = {adj}{cast}"]


adjugate_p = register(Primitive("adjugate", nargs=1, impl=adjugate_impl, jvp=adjugate_jvp,
                                transpose=NOT_LINEAR, abstract_eval=adjugate_aval,
                                emit=AdjugateEmit(),
                                sparsity=DENSE,
                                batch=BROADCASTING))


def adjugate(a):
    """``adj(A)``, the transposed cofactor matrix (``det(A) inv(A)`` where
    ``A`` is invertible)."""
    return bind(adjugate_p, a)
