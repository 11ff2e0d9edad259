"""Discrete Fourier transforms: three linear primitives along one axis (NumPy's
``np.fft`` functions are composed of them in ``fft.py``).

* ``dft[axis, inverse, norm]``: complex -> complex, NumPy's ``fft`` /
  ``ifft`` along ``axis`` at the operand's own length;
* ``rfft[axis, norm]``: real length n -> complex length n//2 + 1;
* ``irfft[axis, n, norm]``: complex length n//2 + 1 -> real length n.

Padding and truncation to ``n`` (``s``) are ``getitem``/``concatenate``
around them (``fft.py``), and ``fftn`` and friends are 1-d transforms along each axis
(a d-dimensional DFT is separable, and the norms multiply), so the
primitives stay at their own lengths and their transposes stay short.

Transposes are linear, without conjugation (``complex_parts``), and every
one is checked by the dot-product test ``Re sum(ct * L t) = Re sum(L^T ct * t)``:

* the DFT matrix ``F[j, k] = exp(-+2 pi i jk / n)`` is symmetric, so the
  transpose of ``dft`` is ``dft`` with the same parameters;
* ``rfft`` is ``x -> S F x`` for real x, S keeping the first m = n//2 + 1
  entries: its transpose is ``real(F S^T ct)``, the forward DFT of the
  cotangent padded with zeros to n (the real part: x is real), computed as
  ``irfft(conj(ct) / w)`` with the normalisation swapped (w below);
* ``irfft`` reads a half spectrum X as ``y = scale Re(sum_k w_k X_k
  exp(2 pi i jk / n))`` with ``w_0 = 1``, ``w_{n/2} = 1`` (n even) and
  ``w_k = 2`` else: the entries with a mirror image count twice, and the
  imaginary parts of X_0 and X_{n/2} are dropped (NumPy's c2r transform).
  Its transpose is ``w * conj(rfft(ct))`` with the normalisation swapped
  (``backward`` <-> ``forward``: irfft's 1/n is rfft's ``forward`` scale).

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from .arith import mul
from .arith import conj, real_dtype
from ..core.primitive import ZERO_IF_ANY, Primitive, register
from ..core.trace import wrapper_of
from ..core.shapes import shape_error
from ..core.ir import Aval, aval_of
from ..core.deps import across

__all__ = ["dft_p", "rfft_p", "irfft_p", "dft", "complex_dtype"]

NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def complex_dtype(dtype):
    """complex64 for float32 and complex64, complex128 otherwise (NumPy's
    pocketfft keeps single precision)."""
    return np.dtype(np.complex64) if np.dtype(dtype) in (np.float32, np.complex64) \
        else np.dtype(np.complex128)


def with_length(shape, axis, n):
    return tuple(shape[:axis]) + (n,) + tuple(shape[axis + 1:])


# --- dft ---------------------------------------------------------------
def dft_impl(x, axis, inverse, norm):
    return (np.fft.ifft if inverse else np.fft.fft)(x, axis=axis, norm=norm)


def dft_aval(x, axis, inverse, norm):
    return Aval(x.shape, complex_dtype(x.dtype))


def dft_jvp(primals, tangents, axis, inverse, norm):
    return dft(primals[0], axis, inverse, norm), dft(tangents[0], axis, inverse, norm)


def dft_transpose(ct, x, axis, inverse, norm):
    # F is symmetric (F[j, k] depends on j * k): F^T = F, scale included
    return (dft(ct, axis, inverse, norm),)


def dft_batch(args, batched, axis, inverse, norm):
    return dft(args[0], axis + 1, inverse, norm)


def dft_sparsity(an, ops, outs, axis, **params):
    """Each output depends on the whole line of the input along ``axis`` (the transforms
    of ``rfft`` and ``irfft`` too, whose lines change length)."""
    x = ops[0]
    return across(x.deps, x.shape, outs[0].shape, (axis,))


dft_p = register(Primitive("dft", nargs=1, impl=dft_impl, jvp=dft_jvp, transpose=dft_transpose,
                           abstract_eval=dft_aval, batch=dft_batch, complex_ok=True,
                           zero_rule=ZERO_IF_ANY,
                           sparsity=dft_sparsity))


_dft = wrapper_of(dft_p)


def dft(x, axis, inverse, norm):
    return _dft(x, axis=axis, inverse=inverse, norm=norm)


# --- rfft --------------------------------------------------------------
def rfft_impl(x, axis, norm):
    return np.fft.rfft(x, axis=axis, norm=norm)


def rfft_aval(x, axis, norm):
    return Aval(with_length(x.shape, axis, x.shape[axis] // 2 + 1), complex_dtype(x.dtype))


def rfft_jvp(primals, tangents, axis, norm):
    return rfft_along(primals[0], axis, norm), rfft_along(tangents[0], axis, norm)


def rfft_transpose(ct, x, axis, norm):
    # Re sum(c * S F x) = sum(real(F S^T c) * x) for real x, and
    # real(F S^T c)_j = Re(sum_k conj(c_k) exp(2 pi i jk / n)) is irfft of
    # conj(c) / w (w as in irfft's transpose; the imaginary parts irfft drops
    # add nothing to that real part): a half-length c2r transform instead of
    # a full complex one
    n = x.shape[axis]
    m = aval_of(ct).shape[axis]
    inv_w = 1.0 / _twice(n, m, len(x.shape), axis, x.aval.dtype)
    return (irfft_along(mul(conj(ct), inv_w), axis, n, _SWAPPED[norm]),)


def rfft_batch(args, batched, axis, norm):
    return rfft_along(args[0], axis + 1, norm)


rfft_p = register(Primitive("rfft", nargs=1, impl=rfft_impl, jvp=rfft_jvp,
                            transpose=rfft_transpose, abstract_eval=rfft_aval, batch=rfft_batch,
                            complex_ok=True, zero_rule=ZERO_IF_ANY,
                            sparsity=dft_sparsity))


_rfft_bind = wrapper_of(rfft_p)


def rfft_along(x, axis, norm):
    return _rfft_bind(x, axis=axis, norm=norm)


# --- irfft -------------------------------------------------------------
def irfft_impl(x, axis, n, norm):
    return np.fft.irfft(x, n=n, axis=axis, norm=norm)


def irfft_aval(x, axis, n, norm):
    if x.shape[axis] != n // 2 + 1:
        raise shape_error(f"irfft: a half spectrum of length {x.shape[axis]} for n={n}; "
                          f"pad or truncate it to {n // 2 + 1}")
    return Aval(with_length(x.shape, axis, n), real_dtype(complex_dtype(x.dtype)))


def irfft_jvp(primals, tangents, axis, n, norm):
    return irfft_along(primals[0], axis, n, norm), irfft_along(tangents[0], axis, n, norm)


def _twice(n, m, ndim, axis, dtype):
    """w: 1 for X_0 and (n even) X_{n/2}, 2 for the entries with a mirror
    image in the full spectrum; shaped to broadcast along ``axis``."""
    w = np.full(m, 2.0, dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w.reshape(with_length((1,) * ndim, axis, m))


def irfft_transpose(ct, x, axis, n, norm):
    m = x.shape[axis]
    w = _twice(n, m, len(x.shape), axis, real_dtype(x.aval.dtype))
    return (mul(conj(rfft_along(ct, axis, _SWAPPED[norm])), w),)


def irfft_batch(args, batched, axis, n, norm):
    return irfft_along(args[0], axis + 1, n, norm)


irfft_p = register(Primitive("irfft", nargs=1, impl=irfft_impl, jvp=irfft_jvp,
                             transpose=irfft_transpose, abstract_eval=irfft_aval,
                             batch=irfft_batch, complex_ok=True, zero_rule=ZERO_IF_ANY,
                             sparsity=dft_sparsity))


_irfft_bind = wrapper_of(irfft_p)


def irfft_along(x, axis, n, norm):
    return _irfft_bind(x, axis=axis, n=n, norm=norm)
