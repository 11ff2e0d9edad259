"""NumPy's ``np.fft`` functions on traced values, composed of the three DFT
primitives of ``dft.py`` (``dft``, ``rfft``, ``irfft``, each along one axis
at its operand's own length).

Padding and truncation to ``n`` (``s``) are ``getitem``/``concatenate``
around the primitives, and ``fftn`` and friends are 1-d transforms along
each axis (a d-dimensional DFT is separable, and the norms multiply), so the
primitives stay at their own lengths and their transposes stay short.
``fftshift``/``ifftshift`` are rolls made of slices. The checks (axis,
``norm``, ``n``, dtype) raise NumPy's errors with the user's line; a real
input of a complex transform is converted first, as NumPy does.

Layer: numpy.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives.arith import convert
from ..primitives.arith import real_dtype
from ..primitives.dft import NORMS, irfft_along, rfft_along, with_length, complex_dtype, dft
from ..primitives.index import getitem
from .arrayargs import no_out
from ..primitives.index import concatenate
from ..core.errors import UnsupportedDtypeError, user_location
from ..core.ir import aval_of

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfftn",
           "rfft2", "irfft2", "fftshift", "ifftshift"]


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
    pad = np.zeros(with_length(shape, axis, n - have), aval_of(x).dtype)
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
    if norm not in NORMS:
        raise ValueError(f'{fname}: invalid norm value {norm!r}; should be "backward", '
                         '"ortho" or "forward"')
    return NORMS[norm]


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
    return rfft_along(a, axis, _norm(norm, fname))


def irfft(a, n=None, axis=-1, norm=None, out=None):
    fname = "np.fft.irfft"
    no_out(out, fname)
    axis = _axis(axis, len(aval_of(a).shape), fname)
    a = _as_complex(a)
    n = 2 * (aval_of(a).shape[axis] - 1) if n is None else _length(n, fname)
    if n < 1:
        raise ValueError(f"{fname}: invalid number of data points ({n}) specified")
    return irfft_along(_fit(a, n // 2 + 1, axis), axis, n, _norm(norm, fname))


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
    a = rfft_along(a, axes[-1], norm)
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
    return irfft_along(_fit(a, n // 2 + 1, axes[-1]), axes[-1], n, norm)


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
