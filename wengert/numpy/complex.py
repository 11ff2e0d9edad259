"""NumPy's complex-number functions on traced values (a family of the
library table, ``library``): ``np.real``, ``np.imag``, ``np.angle``,
``np.conj``/``np.conjugate``, the FFTs of ``np.fft`` (``fft.py``), and
``np.linalg.eig``/``eigvals`` (``eig.py``), whose results are complex.

Each wrapper takes NumPy's exact signature; the conventions for complex
derivatives are JAX's (see ``complex_parts``).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from .arrayargs import numpy_result
from ..primitives import arith, eig, transcendental
from . import fft
from ..primitives.arith import conj, imag, real
from ..primitives.shape import zeros_like
from ..core.ir import aval_of

__all__ = ["FUNCTIONS", "UFUNCS"]


def _is_complex(x):
    return aval_of(x).dtype.kind == "c"


def _real(val):
    # of a real value, NumPy gives the value itself
    return real(val) if _is_complex(val) else val


def _imag(val):
    # of a real value, zeros of its dtype: a constant, no derivative
    return imag(val) if _is_complex(val) else zeros_like(val)


def _conjugate(x):
    # of a real value, itself, as NumPy gives it (a NumPy scalar for a Python float)
    return conj(x) if _is_complex(x) else numpy_result(x)


def _angle(z, deg=False):
    # arg z = atan2(Im z, Re z): real functions of the parts, so the rule
    # (d arg = (x dy - y dx) / |z|^2) follows from arctan2's
    out = transcendental.arctan2(_imag(z), _real(z))
    return arith.mul(out, 180.0 / np.pi) if deg else out


def _eig(a):
    # NumPy's named pair (``.eigenvalues``, ``.eigenvectors``), complex always
    return _EigResult(*eig.eig(a))


def _eigvals(a):
    return eig.eigvals(a)


_EigResult = type(np.linalg.eig(np.eye(1)))

FUNCTIONS = {
    np.linalg.eig: _eig, np.linalg.eigvals: _eigvals,
    np.real: _real, np.imag: _imag, np.angle: _angle,
    np.fft.fft: fft.fft, np.fft.ifft: fft.ifft, np.fft.rfft: fft.rfft,
    np.fft.irfft: fft.irfft, np.fft.fft2: fft.fft2, np.fft.ifft2: fft.ifft2,
    np.fft.fftn: fft.fftn, np.fft.ifftn: fft.ifftn, np.fft.rfftn: fft.rfftn,
    np.fft.irfftn: fft.irfftn, np.fft.rfft2: fft.rfft2, np.fft.irfft2: fft.irfft2,
    np.fft.fftshift: fft.fftshift, np.fft.ifftshift: fft.ifftshift,
}

# np.conj is np.conjugate (one ufunc)
UFUNCS = {np.conjugate: _conjugate}

# The library entries whose wrappers are right for complex operands
# (``library.complex_ok``): this family's, and the NumPy entries that are
# holomorphic or linear compositions of audited primitives
# (``complex_parts.COMPLEX_OK``), with no step that assumes reals. Left out
# on purpose: orderings (max, min, argmax, clip, round, sign, maximum...);
# var, std and linalg.norm (their composites square x where NumPy takes
# |x|^2); slogdet, cholesky; fabs (NumPy refuses complex); full_like and
# astype (a complex fill or cast is not audited).
COMPLEX_OK = frozenset(FUNCTIONS) | frozenset(UFUNCS) | {
    np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive, np.power,
    np.float_power, np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.square, np.reciprocal,
    np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh, np.absolute, np.matmul, np.equal,
    np.not_equal, np.isfinite, np.log2, np.log10, np.exp2,
    np.sum, np.mean, np.prod, np.cumsum, np.dot, np.outer, np.inner, np.tensordot, np.trace,
    np.diagonal, np.diag, np.einsum, np.concatenate, np.stack, np.hstack, np.vstack,
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
    np.expand_dims, np.broadcast_to, np.atleast_1d, np.shape, np.ndim, np.size, np.copy,
    np.where, np.zeros_like, np.ones_like, np.linalg.solve, np.linalg.inv, np.linalg.det,
}
