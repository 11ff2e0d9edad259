"""Discrete Fourier transforms: three linear primitives along one axis, and
NumPy's ``np.fft`` functions composed of them.

* ``dft[axis, inverse, norm]``: complex -> complex, NumPy's ``fft`` /
  ``ifft`` along ``axis`` at the operand's own length;
* ``rfft[axis, norm]``: real length n -> complex length n//2 + 1;
* ``irfft[axis, n, norm]``: complex length n//2 + 1 -> real length n.

Padding and truncation to ``n`` (``s``) are ``getitem``/``concatenate``
around them, and ``fftn`` and friends are 1-d transforms along each axis
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
"""
from __future__ import annotations

import operator

import numpy as np

from .arith import convert, mul
from .arith import conj, real_dtype
from .core import Primitive, register, zero_if_any
from .trace import wrapper_of
from .index import getitem
from .arrayargs import no_out
from .rules import shape_error
from .index import concatenate
from ..errors import UnsupportedDtypeError, user_location
from ..ir import Aval, aval_of

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfftn",
           "rfft2", "irfft2", "fftshift", "ifftshift"]

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def complex_dtype(dtype):
    """complex64 for float32 and complex64, complex128 otherwise (NumPy's
    pocketfft keeps single precision)."""
    return np.dtype(np.complex64) if np.dtype(dtype) in (np.float32, np.complex64) \
        else np.dtype(np.complex128)


def _with_length(shape, axis, n):
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


dft_p = register(Primitive("dft", nargs=1, impl=dft_impl, jvp=dft_jvp, transpose=dft_transpose,
                           abstract_eval=dft_aval, batch=dft_batch, complex_ok=True))
dft_p.zero_rule = zero_if_any(dft_p)


_dft = wrapper_of(dft_p)


def dft(x, axis, inverse, norm):
    return _dft(x, axis=axis, inverse=inverse, norm=norm)


# --- rfft --------------------------------------------------------------
def rfft_impl(x, axis, norm):
    return np.fft.rfft(x, axis=axis, norm=norm)


def rfft_aval(x, axis, norm):
    return Aval(_with_length(x.shape, axis, x.shape[axis] // 2 + 1), complex_dtype(x.dtype))


def rfft_jvp(primals, tangents, axis, norm):
    return _rfft(primals[0], axis, norm), _rfft(tangents[0], axis, norm)


def rfft_transpose(ct, x, axis, norm):
    # Re sum(c * S F x) = sum(real(F S^T c) * x) for real x, and
    # real(F S^T c)_j = Re(sum_k conj(c_k) exp(2 pi i jk / n)) is irfft of
    # conj(c) / w (w as in irfft's transpose; the imaginary parts irfft drops
    # add nothing to that real part): a half-length c2r transform instead of
    # a full complex one
    n = x.shape[axis]
    m = aval_of(ct).shape[axis]
    inv_w = 1.0 / _twice(n, m, len(x.shape), axis, x.aval.dtype)
    return (_irfft(mul(conj(ct), inv_w), axis, n, _SWAPPED[norm]),)


def rfft_batch(args, batched, axis, norm):
    return _rfft(args[0], axis + 1, norm)


rfft_p = register(Primitive("rfft", nargs=1, impl=rfft_impl, jvp=rfft_jvp,
                            transpose=rfft_transpose, abstract_eval=rfft_aval, batch=rfft_batch,
                            complex_ok=True))
rfft_p.zero_rule = zero_if_any(rfft_p)


_rfft_bind = wrapper_of(rfft_p)


def _rfft(x, axis, norm):
    return _rfft_bind(x, axis=axis, norm=norm)


# --- irfft -------------------------------------------------------------
def irfft_impl(x, axis, n, norm):
    return np.fft.irfft(x, n=n, axis=axis, norm=norm)


def irfft_aval(x, axis, n, norm):
    if x.shape[axis] != n // 2 + 1:
        raise shape_error(f"irfft: a half spectrum of length {x.shape[axis]} for n={n}; "
                          f"pad or truncate it to {n // 2 + 1}")
    return Aval(_with_length(x.shape, axis, n), real_dtype(complex_dtype(x.dtype)))


def irfft_jvp(primals, tangents, axis, n, norm):
    return _irfft(primals[0], axis, n, norm), _irfft(tangents[0], axis, n, norm)


def _twice(n, m, ndim, axis, dtype):
    """w: 1 for X_0 and (n even) X_{n/2}, 2 for the entries with a mirror
    image in the full spectrum; shaped to broadcast along ``axis``."""
    w = np.full(m, 2.0, dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w.reshape(_with_length((1,) * ndim, axis, m))


def irfft_transpose(ct, x, axis, n, norm):
    m = x.shape[axis]
    w = _twice(n, m, len(x.shape), axis, real_dtype(x.aval.dtype))
    return (mul(conj(_rfft(ct, axis, _SWAPPED[norm])), w),)


def irfft_batch(args, batched, axis, n, norm):
    return _irfft(args[0], axis + 1, n, norm)


irfft_p = register(Primitive("irfft", nargs=1, impl=irfft_impl, jvp=irfft_jvp,
                             transpose=irfft_transpose, abstract_eval=irfft_aval,
                             batch=irfft_batch, complex_ok=True))
irfft_p.zero_rule = zero_if_any(irfft_p)


_irfft_bind = wrapper_of(irfft_p)


def _irfft(x, axis, n, norm):
    return _irfft_bind(x, axis=axis, n=n, norm=norm)


# --- padding, truncation, checks ------------------------------------------
def _fit(x, n, axis):
    """``x`` truncated or padded with zeros to length ``n`` along ``axis``
    (NumPy's ``n=`` / ``s=``): linear, with the rules of getitem/concatenate."""
    shape = aval_of(x).shape
    have = shape[axis]
    if n == have:
        return x
    if n < have:
        return getitem(x, (slice(None),) * axis + (slice(0, n),))
    pad = np.zeros(_with_length(shape, axis, n - have), aval_of(x).dtype)
    return concatenate(x, pad, axis=axis)


def _axis(axis, ndim, fname):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _norm(norm, fname):
    if norm not in _NORMS:
        raise ValueError(f'{fname}: invalid norm value {norm!r}; should be "backward", '
                         '"ortho" or "forward"')
    return _NORMS[norm]


def _length(n, fname):
    if n is not None and (operator.index(n) < 1):
        raise ValueError(f"{fname}: invalid number of data points ({n}) specified")
    return n


def _as_complex(a):
    dt = aval_of(a).dtype
    want = complex_dtype(dt)
    return a if dt == want else convert(a, dtype=want)


def _as_real(a, fname):
    dt = aval_of(a).dtype
    if dt.kind == "c":      # NumPy refuses it too (a TypeError)
        raise UnsupportedDtypeError(f"{user_location()}: {fname} of a complex value: it "
                                    "transforms real input; use np.fft.fft/fftn, or take "
                                    "np.real(a) first")
    want = real_dtype(complex_dtype(dt))
    return a if dt == want else convert(a, dtype=want)


# --- np.fft: the 1-d transforms -----------------------------------------
def _c2c(a, n, axis, norm, out, inverse, fname):
    no_out(out, fname)
    axis = _axis(axis, len(aval_of(a).shape), fname)
    a = _as_complex(a)
    if n is not None:
        a = _fit(a, _length(n, fname), axis)
    return dft(a, axis, inverse, _norm(norm, fname))


def fft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c(a, n, axis, norm, out, False, "np.fft.fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c(a, n, axis, norm, out, True, "np.fft.ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    fname = "np.fft.rfft"
    no_out(out, fname)
    axis = _axis(axis, len(aval_of(a).shape), fname)
    a = _as_real(a, fname)
    if n is not None:
        a = _fit(a, _length(n, fname), axis)
    return _rfft(a, axis, _norm(norm, fname))


def irfft(a, n=None, axis=-1, norm=None, out=None):
    fname = "np.fft.irfft"
    no_out(out, fname)
    axis = _axis(axis, len(aval_of(a).shape), fname)
    a = _as_complex(a)
    n = 2 * (aval_of(a).shape[axis] - 1) if n is None else _length(n, fname)
    if n < 1:
        raise ValueError(f"{fname}: invalid number of data points ({n}) specified")
    return _irfft(_fit(a, n // 2 + 1, axis), axis, n, _norm(norm, fname))


# --- np.fft: the n-d transforms, one axis at a time -----------------------
def _shape_axes(a, s, axes, fname):
    """NumPy's ``s``/``axes`` rules: the axes (non-negative) and their lengths."""
    shape = aval_of(a).shape
    ndim = len(shape)
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    axes = [_axis(ax, ndim, fname) for ax in axes]
    if s is None:
        s = [shape[ax] for ax in axes]
    elif len(s) != len(axes):
        raise ValueError(f"{fname}: shape and axes have different lengths")
    return [None if k == -1 else _length(k, fname) for k in s], axes


def _c2c_n(a, s, axes, norm, out, inverse, fname):
    no_out(out, fname)
    s, axes = _shape_axes(a, s, axes, fname)
    norm = _norm(norm, fname)
    a = _as_complex(a)
    # NumPy transforms the last axis first; the DFTs commute, the order only
    # fixes how the program reads
    for n, ax in reversed(list(zip(s, axes))):
        if n is not None:
            a = _fit(a, n, ax)
        a = dft(a, ax, inverse, norm)
    return a


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _c2c_n(a, s, axes, norm, out, False, "np.fft.fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _c2c_n(a, s, axes, norm, out, True, "np.fft.ifft2")


def fftn(a, s=None, axes=None, norm=None, out=None):
    return _c2c_n(a, s, axes, norm, out, False, "np.fft.fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    return _c2c_n(a, s, axes, norm, out, True, "np.fft.ifftn")


def _rfftn(a, s, axes, norm, out, fname):
    no_out(out, fname)
    s, axes = _shape_axes(a, s, axes, fname)
    norm = _norm(norm, fname)
    a = _as_real(a, fname)
    if s[-1] is not None:
        a = _fit(a, s[-1], axes[-1])
    a = _rfft(a, axes[-1], norm)
    for n, ax in zip(s[:-1], axes[:-1]):
        if n is not None:
            a = _fit(a, n, ax)
        a = dft(a, ax, False, norm)
    return a


def rfftn(a, s=None, axes=None, norm=None, out=None):
    return _rfftn(a, s, axes, norm, out, "np.fft.rfftn")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _rfftn(a, s, axes, norm, out, "np.fft.rfft2")


def _irfftn(a, s, axes, norm, out, fname):
    no_out(out, fname)
    given = s is not None
    s, axes = _shape_axes(a, s, axes, fname)
    norm = _norm(norm, fname)
    a = _as_complex(a)
    if not given:
        s[-1] = 2 * (aval_of(a).shape[axes[-1]] - 1)
    for n, ax in zip(s[:-1], axes[:-1]):
        if n is not None:
            a = _fit(a, n, ax)
        a = dft(a, ax, True, norm)
    n = s[-1]
    if n is None or n < 1:
        raise ValueError(f"{fname}: invalid number of data points ({n}) specified")
    return _irfft(_fit(a, n // 2 + 1, axes[-1]), axes[-1], n, norm)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    return _irfftn(a, s, axes, norm, out, "np.fft.irfftn")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _irfftn(a, s, axes, norm, out, "np.fft.irfft2")


# --- fftshift, ifftshift: rolls, composed of slices ----------------------
def _roll(x, shift, axis):
    n = aval_of(x).shape[axis]
    k = shift % n if n else 0
    if k == 0:
        return x
    head = (slice(None),) * axis
    return concatenate(getitem(x, head + (slice(n - k, None),)),
                       getitem(x, head + (slice(0, n - k),)), axis=axis)


def _shift(x, axes, sign):
    ndim = len(aval_of(x).shape)
    axes = range(ndim) if axes is None else [axes] if np.ndim(axes) == 0 else axes
    for ax in axes:
        ax = _axis(ax, ndim, "np.fft.fftshift")
        n = aval_of(x).shape[ax]
        x = _roll(x, sign * (n // 2), ax)
    return x


def fftshift(x, axes=None):
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    return _shift(x, axes, -1)
