"""Primitive specs for the scipy.linalg / scipy.signal family
(``wengert/primitives/triangular.py``, ``matfuncs.py``, ``correlation.py``);
gathered into ``cases.SPECS`` by ``cases._family_specs``.

References are computed another way than the impls: triangular solves by
``np.linalg.solve`` on the masked triangle, permutations by swapping rows of
an identity, the Frechet derivative by ``expm`` of a block matrix,
correlations by ``scipy.signal.correlate`` of an explicitly padded operand.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.signal

from cases import (DIFF, EACH, F32, F64, NONDIFF, Arg, PrimSpec, diagdom, ints, real, spd,
                   variants)
from wengert.primitives import correlation, matfuncs, triangular


# --- operands ------------------------------------------------------------------
def pivoting(n, batch=()):
    """A well-conditioned matrix whose partial pivoting swaps rows: a
    diagonally dominant matrix with its rows permuted (the pivots are then
    clear winners, so finite differences do not change them)."""
    def draw(rng, dt):
        a = rng.uniform(-1.0, 1.0, batch + (n, n)) + np.diag(np.full(n, n + 1.0))
        return a[..., rng.permutation(n), :].astype(dt)
    return Arg(draw, f"pivoting{batch + (n, n)}")


def stable(n, batch=()):
    """Eigenvalues with real parts near -1 and 1 (so a (n, n) pair gives a
    well-posed Sylvester equation with spectra apart), moderate norm."""
    def draw(rng, dt):
        return (0.3 * rng.uniform(-1.0, 1.0, batch + (n, n)) + np.eye(n)).astype(dt)
    return Arg(draw, f"stable{batch + (n, n)}")


# --- references ------------------------------------------------------------------
def ref_solve_triangular(a, b, lower, trans, unit_diagonal):
    dtype = np.result_type(np.asarray(a).dtype, np.asarray(b).dtype)
    a = np.asarray(a, np.float64)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t - t * np.eye(n) + np.eye(n)
    x = np.linalg.solve(np.swapaxes(t, -1, -2) if trans else t, np.asarray(b, np.float64))
    return x.astype(dtype)


def ref_lu_permutation(piv, dtype):
    piv = np.asarray(piv)
    out = np.empty(piv.shape + piv.shape[-1:], dtype)
    for idx in np.ndindex(piv.shape[:-1]):
        p = np.eye(piv.shape[-1], dtype=dtype)
        for i, j in enumerate(piv[idx]):
            p[[i, j]] = p[[j, i]]
        out[idx] = p
    return out


def ref_lu_factor(a):
    lu, piv = scipy.linalg.lu_factor(a)
    return lu, piv


def ref_expm_frechet(a, e):
    # the top right block of expm([[a, e], [0, a]]) (the impl calls SciPy's
    # expm_frechet, another algorithm)
    a, e = np.asarray(a), np.asarray(e)
    shape = np.broadcast_shapes(a.shape, e.shape)
    a, e = np.broadcast_to(a, shape), np.broadcast_to(e, shape)
    n = shape[-1]
    block = np.zeros(shape[:-2] + (2 * n, 2 * n), np.result_type(a, e))
    block[..., :n, :n] = block[..., n:, n:] = a
    block[..., :n, n:] = e
    return scipy.linalg.expm(block)[..., :n, n:]


def ref_sylvester(a, b, q):
    # the Kronecker form: (I (x) a + b^T (x) I) vec(x) = vec(q), column-major vec
    m, n = q.shape[-2:]
    op = np.kron(np.eye(n), a) + np.kron(b.T, np.eye(m))
    return np.linalg.solve(op, q.reshape(-1, order="F")).reshape((m, n), order="F")


def ref_correlate(x, k, pad):
    x = np.asarray(x)
    crop = tuple(slice(max(0, -lo), n - max(0, -hi)) for n, (lo, hi) in zip(x.shape, pad))
    xp = np.pad(x[crop], [(max(0, lo), max(0, hi)) for lo, hi in pad])
    return scipy.signal.correlate(xp, k, mode="valid", method="direct")


def _tri_cases():
    out = ()
    for lower in (True, False):
        for trans in (0, 1):
            for unit in (False, True):
                tag = f"{'L' if lower else 'U'}{trans}{'u' if unit else ''}"
                params = {"lower": lower, "trans": trans, "unit_diagonal": unit}
                dts = (F64, F32) if tag == "L0" else (F64,)
                out += variants(tag, [diagdom(3), real((3, 2))], params, dtypes=dts)
    both = {"lower": True, "trans": 1, "unit_diagonal": False}
    return (out + variants("batch_2x3x3_2x3x2", [diagdom(3, (2,)), real((2, 3, 2))], both,
                           dtypes=(F64,))
            + variants("bcast_3x3_2x3x1", [diagdom(3), real((2, 3, 1))], both, dtypes=(F64,))
            + variants("bcast_2x3x3_3x2", [diagdom(3, (2,)), real((3, 2))], both,
                       dtypes=(F64,)))


def _corr_cases():
    def c(tag, xs, ks, pad, dtypes=(F64,)):
        return variants(tag, [real(xs), real(ks)], {"pad": pad}, dtypes=dtypes)
    return (c("valid_7_3", (7,), (3,), ((0, 0),), dtypes=(F64, F32))
            + c("full_5_3", (5,), (3,), ((2, 2),))
            + c("same_6_4", (6,), (4,), ((2, 1),))
            + c("crop_7_2", (7,), (2,), ((-1, -2),))
            + c("kernel_larger_than_output_4_4", (4,), (4,), ((1, 0),))
            + c("2d_4x5_2x3", (4, 5), (2, 3), ((1, 1), (2, 0)), dtypes=(F64, F32))
            + c("3d_3x3x4_2x1x2", (3, 3, 4), (2, 1, 2), ((0, 1), (0, 0), (1, 1))))


SPECS = {
    "solve_triangular": PrimSpec(DIFF, _tri_cases(), ref_solve_triangular,
                                 triangular.solve_triangular, linear_in=((1,),)),
    "lu_permutation": PrimSpec(
        NONDIFF,
        variants("3", [ints([2, 2, 2])], {"dtype": "float64"}, dtypes=(F64,))
        + variants("batch_2x4", [ints([[1, 3, 2, 3], [0, 1, 2, 3]])], {"dtype": "float32"},
                   dtypes=(F64,)),
        ref_lu_permutation, triangular.lu_permutation),
    "lu_factor": PrimSpec(DIFF, variants("4x4", [pivoting(4)])
                          + variants("batch_2x3x3", [pivoting(3, (2,))], dtypes=(F64,)),
                          ref_lu_factor, triangular.lu_factor),
    "expm": PrimSpec(DIFF, variants("3x3", [real((3, 3), -1.0, 1.0)])
                     + variants("batch_2x2x2", [real((2, 2, 2), -1.0, 1.0)], dtypes=(F64,)),
                     lambda a: scipy.linalg.expm(a), matfuncs.expm),
    "expm_frechet": PrimSpec(
        DIFF,
        variants("3x3", [real((3, 3), -1.0, 1.0), real((3, 3))])
        + variants("bcast_3x3_2x3x3", [real((3, 3), -1.0, 1.0), real((2, 3, 3))], dtypes=(F64,)),
        ref_expm_frechet, matfuncs.expm_frechet, linear_in=((1,),)),
    "sylvester": PrimSpec(
        DIFF,
        variants("3x3_2x2_3x2", [stable(3), stable(2), real((3, 2))]),
        ref_sylvester, matfuncs.sylvester, linear_in=((2,),)),
    "sqrtm": PrimSpec(DIFF, variants("3x3", [spd(3)]),
                      lambda a: scipy.linalg.sqrtm(a), matfuncs.sqrtm),
    "correlate": PrimSpec(DIFF, _corr_cases(), ref_correlate, correlation.correlate,
                          linear_in=EACH),
}
