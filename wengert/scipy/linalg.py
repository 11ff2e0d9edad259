"""``scipy.linalg`` and ``scipy.signal`` on traced values: the library
table's ``CALLS`` for them (the source engine calls these wrappers in place
of SciPy's functions, which dispatch through no protocol).

Each wrapper takes SciPy's exact signature. ``overwrite_*`` and
``check_finite`` are accepted and have no effect (nothing the caller holds is
ever overwritten; a value is checked when SciPy's impl runs); any other
parameter value wengert does not implement is refused (``refuse``).

Where SciPy reads one triangle of a matrix (``cholesky``, ``cho_solve``,
``solve_triangular``, ``inv(assume_a='pos')``...), the wrapper builds its
value from that triangle only, so the derivative with respect to the other
entries is zero, as it is for SciPy's function. ``cho_factor``'s ``c``
holds the factor in one triangle and, as SciPy leaves it, the input's
entries in the other; ``cho_solve`` never reads them.

``scipy.linalg.eigh`` and ``svd`` are the decomposition primitives of
``decomp.py``, as ``np.linalg.eigh``/``svd`` are.

Imported only by ``library.load_scipy`` (SciPy installed).

Layer: scipy.
"""
from __future__ import annotations

import inspect

import numpy as np
import scipy.linalg
import scipy.signal

from ..primitives import correlation, decomp, linalg, matfuncs, matrix, triangular
from ..primitives.arith import add, convert, mul
from ..primitives.transcendental import reciprocal
from ..core.primitive import TracerBase
from ..primitives.linalg import matrix_transpose, shape_tuple
from ..primitives.shape import expand_dims
from ..numpy.arrayargs import refuse
from ..core.errors import NoDerivativeRule, user_location
from ..core.ir import aval_of
from ..core.shapes import shape_error

__all__ = ["CALLS"]


def _array(x):
    return x if isinstance(x, TracerBase) else np.asarray(x)


def _dtype(x):
    return aval_of(x).dtype


def _sym_from_triangle(a, lower):
    """The symmetric matrix SciPy reads from one triangle of ``a`` (real
    only: SciPy reads a complex one as Hermitian, or symmetric, by flag)."""
    triangular.real_only("scipy.linalg (a matrix read from one triangle)", aval_of(a))
    n = shape_tuple(a)[-1]
    dtype = _dtype(a)
    tri = mul(a, triangular.triangle_mask(n, dtype, lower))
    strict = mul(a, triangular.triangle_mask(n, dtype, lower, strict=True))
    return add(tri, matrix_transpose(strict))


def _trans_code(trans, fname):
    """SciPy's ``trans`` as 0 (a x = b) or 1 (a^T x = b; 'C' is the same
    for real matrices, and complex ones are refused by the primitive)."""
    codes = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}
    try:
        return codes[trans]
    except (KeyError, TypeError):
        refuse(fname, "trans", "trans must be 0, 1, 2, 'N', 'T' or 'C'")


# --- triangular and Cholesky solves -------------------------------------
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    return triangular.solve_triangular(_array(a), _array(b), lower=bool(lower),
                                       trans=_trans_code(trans, "scipy.linalg.solve_triangular"),
                                       unit_diagonal=bool(unit_diagonal))


def _factor(a, lower):
    """The Cholesky factor of the matrix read from ``a``'s ``lower`` (or
    upper) triangle: L, or U = L^T."""
    chol = matrix.cholesky(_sym_from_triangle(a, lower))
    return chol if lower else matrix_transpose(chol)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    return _factor(_array(a), bool(lower))


# what cho_factor leaves in the triangle it does not factor: the input's
# entries (SciPy < 1.18) or zeros (1.18 on); a property of the installed
# SciPy, read once from a 2x2 example
_CHO_KEEPS_INPUT = bool(scipy.linalg.cho_factor(np.array([[4.0, 1.0], [1.0, 3.0]]))[0][1, 0])


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    a = _array(a)
    lower = bool(lower)
    n = shape_tuple(a)[-1]
    c = _factor(a, lower)
    if _CHO_KEEPS_INPUT:        # the other triangle keeps a's entries, as SciPy leaves them
        c = add(c, mul(a, triangular.triangle_mask(n, _dtype(a), not lower, strict=True)))
    return c, lower


def _concrete_flag(flag, fname):
    if isinstance(flag, TracerBase):
        raise NoDerivativeRule(f"{user_location()}: {fname}: the `lower` flag of (c, lower) is a "
                               "traced value; pass the Python bool cho_factor returned")
    return bool(flag)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    c, b = _array(c), _array(b)
    if _concrete_flag(lower, "scipy.linalg.cho_solve"):
        # L L^T x = b
        y = triangular.solve_triangular(c, b, lower=True, trans=0)
        return triangular.solve_triangular(c, y, lower=True, trans=1)
    # U^T U x = b
    y = triangular.solve_triangular(c, b, lower=False, trans=1)
    return triangular.solve_triangular(c, y, lower=False, trans=0)


# --- LU ---------------------------------------------------------------------
def lu_factor(a, overwrite_a=False, check_finite=True):
    a = _array(a)
    shp = shape_tuple(a)
    if len(shp) < 2 or shp[-1] != shp[-2]:
        raise NoDerivativeRule(f"{user_location()}: scipy.linalg.lu_factor of a non-square "
                               f"matrix (shape {shp}) has no derivative rule in wengert; "
                               "factor a square matrix, or use np.linalg.qr")
    return triangular.lu_factor(a)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    if trans not in (0, 1, 2):
        refuse("scipy.linalg.lu_solve", "trans", "trans must be 0, 1 or 2")
    return triangular.lu_solve(_array(lu), _array(piv), _array(b), trans=int(trans != 0))


# --- inverse and determinant ------------------------------------------------
def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    a = _array(a)
    n = shape_tuple(a)[-1]
    if assume_a in (None, "general", "gen"):
        return matrix.inv(a)
    if assume_a in ("sym", "her", "pos"):
        return matrix.inv(_sym_from_triangle(a, bool(lower)))
    if assume_a in ("upper triangular", "lower triangular"):
        mask = triangular.triangle_mask(n, _dtype(a), assume_a == "lower triangular")
        return matrix.inv(mul(a, mask))
    if assume_a == "diagonal":
        # SciPy inverts the diagonal and passes the other entries through
        # unread (as they are, not zeroed)
        eye = np.eye(n, dtype=_dtype(a))
        inv_diag = reciprocal(expand_dims(linalg.diagonal(a, 0, -2, -1), -1))
        return add(mul(a, 1 - eye), mul(inv_diag, eye))
    refuse("scipy.linalg.inv", "assume_a",
           "use one of None, 'general', 'sym', 'pos', 'diagonal', 'upper triangular', "
           "'lower triangular'")


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    if b is not None:
        refuse("scipy.linalg.eigh", "b", "the generalized problem has no rule: with b = L L^T "
                                         "(cholesky), solve the standard one for L^-1 a L^-T")
    for name, value in (("subset_by_index", subset_by_index),
                        ("subset_by_value", subset_by_value)):
        if value is not None:
            refuse("scipy.linalg.eigh", name, "compute all eigenpairs and slice them")
    a = _array(a)
    low = a if lower else matrix_transpose(a)            # decomp.eigh reads the lower triangle
    return decomp.eigvalsh(low) if eigvals_only else decomp.eigh(low)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"{user_location()}: scipy.linalg.svd: lapack_driver must be 'gesdd' "
                         f"or 'gesvd', got {lapack_driver!r}")
    a = _array(a)
    if not compute_uv:
        return decomp.svdvals(a)
    return tuple(decomp.svd(a, bool(full_matrices)))


def det(a, overwrite_a=False, check_finite=True):
    out = matrix.det(_array(a))
    # SciPy's det computes in double precision
    return out if _dtype(out) == np.float64 else convert(out, dtype=np.dtype(np.float64))


# --- matrix functions ---------------------------------------------------------
_SQRTM = inspect.signature(scipy.linalg.sqrtm).parameters


def expm(A):
    return matfuncs.expm(_array(A))


if "disp" in _SQRTM:            # SciPy < 1.18: deprecated disp and blocksize
    def sqrtm(A, disp=_SQRTM["disp"].default, blocksize=_SQRTM["blocksize"].default):
        if disp is not _SQRTM["disp"].default:
            refuse("scipy.linalg.sqrtm", "disp", "drop disp= (deprecated; it returns an error "
                   "estimate as well)")
        # blocksize (deprecated) chooses an algorithm only, not the value
        return matfuncs.sqrtm(_array(A))
else:                           # SciPy >= 1.18 removed them
    def sqrtm(A):
        return matfuncs.sqrtm(_array(A))


def solve_sylvester(a, b, q):
    return matfuncs.sylvester(_array(a), _array(b), _array(q))


# --- scipy.signal -------------------------------------------------------------
def _signal_operands(in1, in2, mode, method, fname):
    if mode not in ("full", "same", "valid"):
        refuse(fname, "mode", "mode must be 'full', 'same' or 'valid'")
    if method not in ("auto", "direct", "fft"):
        refuse(fname, "method", "method must be 'auto', 'direct' or 'fft' (all give the same "
               "values here)")
    in1, in2 = _array(in1), _array(in2)
    if len(shape_tuple(in1)) != len(shape_tuple(in2)):
        raise shape_error(f"{fname}: in1 and in2 should have the same dimensionality, got "
                          f"shapes {shape_tuple(in1)} and {shape_tuple(in2)}")
    return in1, in2


def correlate(in1, in2, mode="full", method="auto"):
    in1, in2 = _signal_operands(in1, in2, mode, method, "scipy.signal.correlate")
    if not shape_tuple(in1):
        return mul(in1, in2)
    return correlation.correlate_mode(in1, in2, mode)


def convolve(in1, in2, mode="full", method="auto"):
    in1, in2 = _signal_operands(in1, in2, mode, method, "scipy.signal.convolve")
    if not shape_tuple(in1):
        return mul(in1, in2)
    # a convolution is a correlation with the kernel reversed (in 'valid'
    # mode with in2 the larger, correlate_mode's swap gives conv(in2, in1))
    return correlation.correlate_mode(in1, correlation.flip(in2), mode)


CALLS = {
    scipy.linalg.solve_triangular: solve_triangular,
    scipy.linalg.cholesky: cholesky,
    scipy.linalg.cho_factor: cho_factor,
    scipy.linalg.cho_solve: cho_solve,
    scipy.linalg.lu_factor: lu_factor,
    scipy.linalg.lu_solve: lu_solve,
    scipy.linalg.inv: inv,
    scipy.linalg.det: det,
    scipy.linalg.eigh: eigh,
    scipy.linalg.svd: svd,
    scipy.linalg.expm: expm,
    scipy.linalg.sqrtm: sqrtm,
    scipy.linalg.solve_sylvester: solve_sylvester,
    scipy.signal.convolve: convolve,
    scipy.signal.correlate: correlate,
}
