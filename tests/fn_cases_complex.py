"""Function-table cases of the complex family (``numpy.complex``): complex
parts and the FFTs of ``np.fft``.

``complex=True`` cases run on complex operands too (complex128/complex64,
both parts random; test_functions.py checks finite differences along the
real and the imaginary directions). ``np.imag`` and ``np.angle`` of a real
operand are constant, so their cases multiply it by a complex constant
first (which also exercises the transpose of real -> complex promotion).
"""
from __future__ import annotations

import numpy as np

from cases import F64, pos, real
from fn_cases import FnCase
from prim_cases_complex import rotating, spread


# --- complex parts ----------------------------------------------------------------
def real_part(z):
    return np.real(z)


def imag_rotated(z):
    return np.imag(z * (1.0 + 2.0j))


def angle_shifted(z):
    return np.angle(z * (1.0 + 1.0j) + 0.25j)


def angle_deg(z):
    return np.angle(z * (0.5 - 1.0j) + 1.0, deg=True)


def conjugate_times(z):
    return np.conjugate(z) * z[::-1]


# --- complex-to-complex transforms ------------------------------------------------
def fft_plain(a):
    return np.fft.fft(a)


def fft_pad_ortho(a):
    return np.fft.fft(a, n=6, axis=0, norm="ortho")


def fft_trunc_forward(a):
    return np.fft.fft(a, 3, -1, "forward")


def ifft_plain(a):
    return np.fft.ifft(a)


def ifft_pad_axis0(a):
    return np.fft.ifft(a, n=5, axis=0, norm="ortho")


def fft2_plain(a):
    return np.fft.fft2(a)


def fft2_s(a):
    return np.fft.fft2(a, s=(3, 5), norm="forward")


def ifft2_axes(a):
    return np.fft.ifft2(a, axes=(0, 2))


def fftn_all(a):
    return np.fft.fftn(a)


def fftn_s_axes(a):
    return np.fft.fftn(a, s=(2, 6), axes=(-1, 0), norm="ortho")


def ifftn_s(a):
    return np.fft.ifftn(a, s=(4, 2), axes=(0, 1))


# --- real <-> half-spectrum transforms ---------------------------------------------
def rfft_plain(x):
    return np.fft.rfft(x)


def rfft_odd_ortho(x):
    return np.fft.rfft(x, n=7, norm="ortho")


def rfft_axis0_forward(x):
    return np.fft.rfft(x, n=4, axis=0, norm="forward")


def irfft_plain(a):
    return np.fft.irfft(a)


def irfft_odd(a):
    return np.fft.irfft(a, n=7, norm="ortho")


def irfft_axis0_pad(a):
    return np.fft.irfft(a, n=10, axis=0, norm="forward")


def rfft2_plain(x):
    return np.fft.rfft2(x)


def rfftn_s(x):
    return np.fft.rfftn(x, s=(3, 5), axes=(0, 2), norm="ortho")


def irfft2_plain(a):
    return np.fft.irfft2(a)


def irfftn_s(a):
    return np.fft.irfftn(a, s=(4, 5), axes=(0, 1), norm="forward")


def irfftn_roundtrip(x):
    # a spectral filter, the typical use: real in, real out
    return np.fft.irfftn(np.fft.rfftn(x) * np.exp(-np.arange(3.0)), s=x.shape, axes=(0, 1))


# --- shifts --------------------------------------------------------------------------
def fftshift_all(x):
    return np.fft.fftshift(x)


def fftshift_axis(x):
    return np.fft.fftshift(x, axes=1)


def ifftshift_all(x):
    return np.fft.ifftshift(x)


def ifftshift_axes(x):
    return np.fft.ifftshift(x, axes=(0,))


# --- eigen-decomposition (distinct eigenvalues) --------------------------------------
def eig_parts(a):
    w, v = np.linalg.eig(a)
    return np.real(w), np.imag(w), np.abs(v) ** 2


def eig_named(a):
    res = np.linalg.eig(a)
    return res.eigenvalues * 2.0, res.eigenvectors[0]


def eigvals_of(a):
    return np.linalg.eigvals(a)


def eigvals_energy(a):
    return np.sum(np.abs(np.linalg.eigvals(a @ a.T)) ** 2)


CASES = [
    FnCase("np.real", real_part, (real((2, 3)),), complex=True),
    FnCase("np.imag", imag_rotated, (real((3,)),), complex=True),
    FnCase("np.angle", angle_shifted, (pos((3,)),), complex=True),
    FnCase("np.angle", angle_deg, (pos((2, 2)),), id="deg", complex=True),
    FnCase("np.conjugate", conjugate_times, (real((4,)),), complex=True),

    FnCase("np.fft.fft", fft_plain, (real((5,)),), complex=True),
    FnCase("np.fft.fft", fft_pad_ortho, (real((4, 2)),), id="pad_ortho", complex=True),
    FnCase("np.fft.fft", fft_trunc_forward, (real((2, 5)),), id="trunc_forward", complex=True),
    FnCase("np.fft.ifft", ifft_plain, (real((4,)),), complex=True),
    FnCase("np.fft.ifft", ifft_pad_axis0, (real((3, 2)),), id="pad_axis0", complex=True),
    FnCase("np.fft.fft2", fft2_plain, (real((3, 4)),), complex=True),
    FnCase("np.fft.fft2", fft2_s, (real((2, 4, 4)),), id="s", complex=True),
    FnCase("np.fft.ifft2", ifft2_axes, (real((2, 3, 4)),), complex=True),
    FnCase("np.fft.fftn", fftn_all, (real((2, 3, 2)),), complex=True),
    FnCase("np.fft.fftn", fftn_s_axes, (real((3, 4)),), id="s_axes", complex=True),
    FnCase("np.fft.ifftn", ifftn_s, (real((3, 3)),), complex=True),

    FnCase("np.fft.rfft", rfft_plain, (real((6,)),)),
    FnCase("np.fft.rfft", rfft_odd_ortho, (real((2, 5)),), id="odd_ortho"),
    FnCase("np.fft.rfft", rfft_axis0_forward, (real((5, 2)),), id="axis0_forward"),
    FnCase("np.fft.irfft", irfft_plain, (real((4,)),), complex=True),
    FnCase("np.fft.irfft", irfft_odd, (real((2, 4)),), id="odd", complex=True),
    FnCase("np.fft.irfft", irfft_axis0_pad, (real((4, 2)),), id="axis0_pad", complex=True),
    FnCase("np.fft.rfft2", rfft2_plain, (real((3, 4)),)),
    FnCase("np.fft.rfftn", rfftn_s, (real((2, 2, 4)),)),
    FnCase("np.fft.irfft2", irfft2_plain, (real((3, 3)),), complex=True),
    FnCase("np.fft.irfftn", irfftn_s, (real((3, 2)),), complex=True),
    FnCase("np.fft.irfftn", irfftn_roundtrip, (real((4, 4)),), id="roundtrip"),

    FnCase("np.linalg.eig", eig_parts, (rotating(3),)),
    FnCase("np.linalg.eig", eig_parts, (spread(3, True),), id="complex_operand", dtypes=(F64,)),
    FnCase("np.linalg.eig", eig_named, (rotating(4),), id="named"),
    FnCase("np.linalg.eigvals", eigvals_of, (rotating(3),)),
    FnCase("np.linalg.eigvals", eigvals_of, (spread(4, True),), id="complex_operand"),
    FnCase("np.linalg.eigvals", eigvals_energy, (spread(3),), id="real_spectrum"),

    FnCase("np.fft.fftshift", fftshift_all, (real((3, 4)),), complex=True),
    FnCase("np.fft.fftshift", fftshift_axis, (real((2, 5)),), id="axis"),
    FnCase("np.fft.ifftshift", ifftshift_all, (real((5,)),), complex=True),
    FnCase("np.fft.ifftshift", ifftshift_axes, (real((3, 2)),), id="axes"),
]
