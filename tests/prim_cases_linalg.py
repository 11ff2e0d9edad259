"""Primitive specs for the decompositions (``decomp.py``, ``lstsq.py``).

The rule tests compare a primitive's raw outputs with finite differences.
Singular vectors and eigenvectors are unique up to sign only, and LAPACK's
choice of sign is locally constant, so finite differences of the thin
factors are well defined at generic operands; the extra columns of a full
``U`` or a complete ``Q`` are not (they may turn within their span), so
those are checked only through projectors, in fn_cases_linalg.py. A
complete QR is specced on a square matrix, where it has no extra columns.

The operand generators (well separated singular values and eigenvalues,
junk in the triangle NumPy does not read, low rank) serve
fn_cases_linalg.py too.
"""
from __future__ import annotations

import numpy as np

from cases import DIFF, F64, NONDIFF, Arg, PrimSpec, real, variants
from wengert.primitives import adjugate, decomp, lstsq, reduce
from wengert.core.trace import bind


# --- operands --------------------------------------------------------------------
def _orthogonal(rng, n, batch):
    q, r = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def spread(m, n, batch=(), lo=0.8):
    """Singular values lo + 0.7 k (+ jitter): distinct, away from zero."""
    def draw(rng, dt):
        k = min(m, n)
        s = lo + 0.7 * np.arange(k)[::-1] + rng.uniform(0.0, 0.2, batch + (k,))
        u = _orthogonal(rng, m, batch)[..., :k]
        v = _orthogonal(rng, n, batch)[..., :k]
        return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dt)
    return Arg(draw, f"spread{batch + (m, n)}")


def sym_junk(n, batch=(), read="lower"):
    """Symmetric with eigenvalues 0.9 k - 1.3 (+ jitter) in the triangle
    NumPy reads (``read``); random junk in the other one, which it must
    ignore, and so must the derivative."""
    def draw(rng, dt):
        w = 0.9 * np.arange(n) - 1.3 + rng.uniform(0.0, 0.2, batch + (n,))
        q = _orthogonal(rng, n, batch)
        a = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
        junk = rng.uniform(-3.0, 3.0, a.shape)
        mask = np.triu(np.ones((n, n), bool), 1) if read == "lower" else \
            np.tril(np.ones((n, n), bool), -1)
        return np.where(mask, junk, a).astype(dt)
    return Arg(draw, f"symjunk_{read}{batch + (n, n)}")


def spd_junk(n, read="lower"):
    """Positive definite in the triangle NumPy reads, junk in the other."""
    def draw(rng, dt):
        m = rng.uniform(-1.0, 1.0, (n, n))
        a = m @ m.T + n * np.eye(n)
        mask = np.triu(np.ones((n, n), bool), 1) if read == "lower" else \
            np.tril(np.ones((n, n), bool), -1)
        return np.where(mask, rng.uniform(-5.0, 5.0, (n, n)), a).astype(dt)
    return Arg(draw, f"spdjunk_{read}({n},{n})")


def low_rank(n, rank, batch=()):
    """An n x n matrix of the given rank (exactly singular when rank < n)."""
    def draw(rng, dt):
        left = rng.uniform(-1.0, 1.0, batch + (n, rank))
        right = rng.uniform(-1.0, 1.0, batch + (rank, n))
        return (left @ right).astype(dt)
    return Arg(draw, f"rank{rank}{batch + (n, n)}")


def with_zeros(shape, where):
    """Values away from 0, with exact zeros at the flat positions ``where``."""
    def draw(rng, dt):
        x = rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)
        x.reshape(-1)[list(where)] = 0.0
        return x.astype(dt)
    return Arg(draw, f"zeros{list(where)}{shape}")


def ref_svd(a, full_matrices):
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


def call_svd(a, full_matrices):
    return decomp.svd(a, full_matrices)


def ref_svdvals(a):
    """Square roots of the eigenvalues of A^T A (or A A^T), largest first:
    another algorithm than the SVD."""
    a = np.asarray(a, np.float64)
    at = np.swapaxes(a, -1, -2)
    gram = at @ a if a.shape[-2] >= a.shape[-1] else a @ at
    return np.sqrt(np.linalg.eigvalsh(gram))[..., ::-1]


def ref_eigh(a):
    return tuple(np.linalg.eigh(a))


def ref_eigvalsh(a):
    """Eigenvalues of the matrix read from the lower triangle, by the
    general (nonsymmetric) eigenvalue routine, sorted."""
    a = np.asarray(a, np.float64)
    low = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    return np.sort(np.linalg.eigvals(low).real, axis=-1)


def ref_qr(a, complete):
    return tuple(np.linalg.qr(a, mode="complete" if complete else "reduced"))


def call_qr(a, complete):
    return lstsq.qr(a, complete)


def ref_pinv(a, rcond, rtol):
    """Full rank: the normal equations, another algorithm than the SVD."""
    a = np.asarray(a, np.float64)
    at = np.swapaxes(a, -1, -2)
    if a.shape[-2] >= a.shape[-1]:
        return np.linalg.solve(at @ a, at)
    return at @ np.linalg.inv(a @ at)


def call_pinv(a, rcond, rtol):
    return lstsq.pinv(a, rcond=rcond, rtol=rtol)


def ref_lstsq(a, b, rcond):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=rcond)
    return x, res, np.asarray(rank), sv


def call_lstsq(a, b, rcond):
    return lstsq.lstsq(a, b, rcond)


def ref_adjugate(a):
    """Cofactors: adj(A)_ji = (-1)^(i+j) det(A without row i and column j)."""
    a = np.asarray(a, np.float64)
    n = a.shape[-1]
    adj = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            adj[..., j, i] = (-1) ** (i + j) * np.linalg.det(minor)
    return adj


def ref_orientation(u, vh):
    """det(U V^T) by one determinant of the product."""
    return np.sign(np.linalg.det(np.asarray(u, np.float64) @ np.asarray(vh, np.float64)))


def call_orientation(u, vh):
    return bind(adjugate.orientation_p, u, vh)


def orthogonal_pair(n, batch=()):
    """(U, Vh): orthogonal matrices of either orientation."""
    def draw(rng, dt):
        q = _orthogonal(rng, n, batch)
        flip = rng.choice([-1.0, 1.0], batch + (1, n))
        return (q * flip).astype(dt)
    return Arg(draw, f"orthogonal{batch + (n, n)}")


def ref_prod_others(x):
    """Each product taken directly, the entry itself left out."""
    x = np.asarray(x, np.float64)
    n = x.shape[-1]
    return np.stack([np.prod(np.delete(x, i, axis=-1), axis=-1) for i in range(n)], axis=-1)


def ref_matrix_rank(a, tol, rtol, hermitian):
    return np.asarray(np.linalg.matrix_rank(a, tol=tol, rtol=rtol, hermitian=hermitian))


def call_matrix_rank(a, tol, rtol, hermitian):
    return decomp.matrix_rank(a, tol=tol, rtol=rtol, hermitian=hermitian)


_FULL = {"full_matrices": True}
_THIN = {"full_matrices": False}

SPECS = {
    "svd": PrimSpec(
        DIFF,
        variants("thin_4x3", [spread(4, 3)], _THIN)
        + variants("thin_2x4", [spread(2, 4)], _THIN, dtypes=(F64,))
        + variants("full_3x3", [spread(3, 3)], _FULL, dtypes=(F64,))
        + variants("thin_batch_2x3x2", [spread(3, 2, (2,))], _THIN, dtypes=(F64,)),
        ref_svd, call_svd),
    "svdvals": PrimSpec(
        DIFF,
        variants("4x3", [spread(4, 3)])
        + variants("batch_2x2x3", [spread(2, 3, (2,))], dtypes=(F64,)),
        ref_svdvals, decomp.svdvals),
    "eigh": PrimSpec(
        DIFF,
        variants("3x3", [sym_junk(3)])
        + variants("batch_2x3x3", [sym_junk(3, (2,))], dtypes=(F64,)),
        ref_eigh, decomp.eigh),
    "eigvalsh": PrimSpec(
        DIFF,
        variants("4x4", [sym_junk(4)])
        + variants("batch_2x3x3", [sym_junk(3, (2,))], dtypes=(F64,)),
        ref_eigvalsh, decomp.eigvalsh),
    "qr": PrimSpec(
        DIFF,
        variants("reduced_4x3", [spread(4, 3)], {"complete": False})
        + variants("complete_3x3", [spread(3, 3)], {"complete": True}, dtypes=(F64,))
        + variants("batch_2x3x2", [spread(3, 2, (2,))], {"complete": False}, dtypes=(F64,)),
        ref_qr, call_qr),
    "pinv": PrimSpec(
        DIFF,
        variants("4x3", [spread(4, 3)], {"rcond": None, "rtol": None})
        + variants("2x3_rcond", [spread(2, 3)], {"rcond": 1e-10, "rtol": None}, dtypes=(F64,))
        + variants("batch_2x3x3", [spread(3, 3, (2,))], {"rcond": None, "rtol": 1e-8},
                   dtypes=(F64,)),
        ref_pinv, call_pinv),
    "lstsq": PrimSpec(
        DIFF,
        variants("4x2_4x3", [spread(4, 2), real((4, 3))], {"rcond": None})
        + variants("3x3_3", [spread(3, 3), real((3,))], {"rcond": None}, dtypes=(F64,))
        + variants("2x3_2", [spread(2, 3), real((2,))], {"rcond": 1e-12}, dtypes=(F64,)),
        ref_lstsq, call_lstsq),
    "adjugate": PrimSpec(
        DIFF,
        variants("3x3", [spread(3, 3)])
        + variants("rank2_3x3", [low_rank(3, 2)], dtypes=(F64,))
        # condition ~1e5: the SVD path of the impl on an invertible matrix
        + variants("illcond_3x3", [spread(3, 3, lo=1e-4)], dtypes=(F64,))
        + variants("batch_2x4x4", [spread(4, 4, (2,))], dtypes=(F64,)),
        ref_adjugate, adjugate.adjugate),
    "orientation": PrimSpec(
        NONDIFF,
        variants("3x3", [orthogonal_pair(3), orthogonal_pair(3)])
        + variants("batch_4x2x2", [orthogonal_pair(2, (4,)), orthogonal_pair(2, (4,))],
                   dtypes=(F64,)),
        ref_orientation, call_orientation),
    # exact zeros, one and two in a row: the derivatives there are products
    # of the other entries, which no formula dividing by x gives
    "matrix_rank": PrimSpec(
        NONDIFF,
        variants("full_3x4", [spread(3, 4)],
                 {"tol": None, "rtol": None, "hermitian": False})
        + variants("deficient_2x4x4", [low_rank(4, 2, (2,))],
                   {"tol": None, "rtol": None, "hermitian": False}, dtypes=(F64,))
        + variants("tol", [spread(3, 3, lo=0.1)], {"tol": 0.5, "rtol": None, "hermitian": False},
                   dtypes=(F64,))
        + variants("hermitian", [sym_junk(3)], {"tol": None, "rtol": None, "hermitian": True},
                   dtypes=(F64,)),
        ref_matrix_rank, call_matrix_rank),
}
