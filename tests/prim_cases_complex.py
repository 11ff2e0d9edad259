"""Specs of the complex-number and FFT primitives (``complex_parts``,
``fft``), gathered by ``cases._family_specs``.

Operands are complex (complex128 for the F64 cases, complex64 for F32),
drawn with both parts random; the references are written independently of
the impls: an explicit DFT matrix for the transforms, the full Hermitian
spectrum for ``irfft``.
"""
from __future__ import annotations

import numpy as np

from cases import DIFF, EACH, F32, F64, Arg, PrimSpec, real, variants

COMPLEX_OF = {F64: np.dtype(np.complex128), F32: np.dtype(np.complex64)}


def cplx(shape, lo=-2.0, hi=2.0):
    """Complex operands: real and imaginary parts U(lo, hi)."""
    def draw(rng, dt):
        z = rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)
        return np.asarray(z, COMPLEX_OF[np.dtype(dt)]).reshape(shape)
    return Arg(draw, f"C({lo},{hi}){shape}")


def spread(n, complex_=False):
    """Square matrices with distinct eigenvalues, well apart: diag(1..n) plus
    a perturbation of 0.3 (complex if ``complex_``)."""
    def draw(rng, dt):
        a = np.diag(np.arange(1.0, n + 1.0)) + 0.3 * rng.uniform(-1.0, 1.0, (n, n))
        if complex_:
            return np.asarray(a + 0.3j * rng.uniform(-1.0, 1.0, (n, n)), COMPLEX_OF[np.dtype(dt)])
        return np.asarray(a, dt)
    return Arg(draw, f"diag(1..{n})+0.3U{'C' if complex_ else ''}")


def rotating(n, batch=()):
    """Real matrices with a complex pair of eigenvalues (1 +- 1.5i, from a
    rotation block) and real ones 3, 4, ...: eig's result is complex either way."""
    def draw(rng, dt):
        a = np.zeros(batch + (n, n))
        a[..., :2, :2] = [[1.0, -1.5], [1.5, 1.0]]
        for k in range(2, n):
            a[..., k, k] = k + 1.0
        return np.asarray(a + 0.2 * rng.uniform(-1.0, 1.0, batch + (n, n)), dt)
    return Arg(draw, f"rotation+diag{batch}({n})")


# --- references ----------------------------------------------------------------
_SCALE = {"backward": (1.0, "n"), "ortho": ("sqrt", "sqrt"), "forward": ("n", 1.0)}


def _scale(n, norm, inverse):
    s = _SCALE[norm][1 if inverse else 0]
    return 1.0 if s == 1.0 else 1.0 / n if s == "n" else 1.0 / np.sqrt(n)


def ref_dft(x, axis, inverse, norm):
    """The DFT as a product with its matrix exp(-+2 pi i jk / n), in complex128."""
    x = np.asarray(x)
    n = x.shape[axis]
    jk = np.outer(np.arange(n), np.arange(n))
    mat = np.exp((2j if inverse else -2j) * np.pi * jk / n) * _scale(n, norm, inverse)
    out = np.tensordot(mat, np.moveaxis(x.astype(np.complex128), axis, 0), axes=(1, 0))
    return np.moveaxis(out, 0, axis).astype(x.dtype if x.dtype.kind == "c" else np.complex128)


def ref_rfft(x, axis, norm):
    x = np.asarray(x)
    n = x.shape[axis]
    full = ref_dft(x.astype(np.complex128), axis, False, norm)
    half = np.take(full, np.arange(n // 2 + 1), axis=axis)
    return half.astype(np.complex64 if x.dtype == np.float32 else np.complex128)


def ref_irfft(x, axis, n, norm):
    """The full spectrum with X[n-k] = conj(X[k]) (and X_0, X_{n/2} real, as
    NumPy's c2r transform reads them), then the inverse DFT's real part."""
    x = np.moveaxis(np.asarray(x).astype(np.complex128), axis, -1)
    m = n // 2 + 1
    full = np.zeros(x.shape[:-1] + (n,), np.complex128)
    full[..., :m] = x
    full[..., 0] = x[..., 0].real
    if n % 2 == 0:
        full[..., n // 2] = x[..., n // 2].real
    for k in range(1, (n + 1) // 2):
        full[..., n - k] = np.conj(x[..., k])
    out = np.real(ref_dft(full, full.ndim - 1, True, norm))
    dtype = np.float32 if np.asarray(x).dtype == np.complex64 else np.float64
    return np.moveaxis(out, -1, axis).astype(dtype)


def ref_eig(a):
    """NumPy's decomposition, complex (wengert's, like JAX's, is complex
    whatever the eigenvalues); the eigenvalues from eigvals, a separate
    LAPACK driver. primitives/test_complex.py checks A V = V W and LAPACK's phase."""
    dtype = np.complex64 if np.asarray(a).dtype in (np.float32, np.complex64) else np.complex128
    return np.linalg.eigvals(a).astype(dtype), np.linalg.eig(a)[1].astype(dtype)


def ref_eigvals(a):
    return ref_eig(a)[0]


# --- public wrappers (NumPy's functions, dispatched to wengert's) --------------
def call_real(x):
    return np.real(x)


def call_imag(x):
    return np.imag(x)


def call_conj(x):
    return np.conj(x)


def call_dft(x, axis, inverse, norm):
    return (np.fft.ifft if inverse else np.fft.fft)(x, axis=axis, norm=norm)


def call_rfft(x, axis, norm):
    return np.fft.rfft(x, axis=axis, norm=norm)


def call_irfft(x, axis, n, norm):
    return np.fft.irfft(x, n=n, axis=axis, norm=norm)


def call_eig(a):
    return tuple(np.linalg.eig(a))


def call_eigvals(a):
    return np.linalg.eigvals(a)


def _parts(name):
    return (variants(f"{name}_3", [cplx((3,))]) + variants(f"{name}_s", [cplx(())])
            + variants(f"{name}_2x3", [cplx((2, 3))], dtypes=(F64,)))


SPECS = {
    "real": PrimSpec(DIFF, _parts("real"), np.real, call_real, linear_in=EACH),
    "imag": PrimSpec(DIFF, _parts("imag"), np.imag, call_imag, linear_in=EACH),
    "conj": PrimSpec(DIFF, _parts("conj"), np.conj, call_conj, linear_in=EACH),
    "dft": PrimSpec(
        DIFF,
        variants("5", [cplx((5,))], {"axis": 0, "inverse": False, "norm": "backward"})
        + variants("4_inv", [cplx((4,))], {"axis": 0, "inverse": True, "norm": "backward"})
        + variants("2x6_axis1_ortho", [cplx((2, 6))],
                   {"axis": 1, "inverse": False, "norm": "ortho"}, dtypes=(F64,))
        + variants("3x2_axis0_inv_fwd", [cplx((3, 2))],
                   {"axis": 0, "inverse": True, "norm": "forward"}, dtypes=(F64,)),
        ref_dft, call_dft, linear_in=EACH),
    "rfft": PrimSpec(
        DIFF,
        variants("6", [real((6,))], {"axis": 0, "norm": "backward"})
        + variants("5_ortho", [real((5,))], {"axis": 0, "norm": "ortho"})
        + variants("3x4_axis0_fwd", [real((3, 4))], {"axis": 0, "norm": "forward"},
                   dtypes=(F64,))
        + variants("2x7_axis1", [real((2, 7))], {"axis": 1, "norm": "backward"}, dtypes=(F64,)),
        ref_rfft, call_rfft, linear_in=EACH),
    # n even and odd: the entries that count twice differ (X_{n/2} exists for even n)
    "irfft": PrimSpec(
        DIFF,
        variants("4_n6", [cplx((4,))], {"axis": 0, "n": 6, "norm": "backward"})
        + variants("4_n7_ortho", [cplx((4,))], {"axis": 0, "n": 7, "norm": "ortho"})
        + variants("3x2_axis0_n4_fwd", [cplx((3, 2))], {"axis": 0, "n": 4, "norm": "forward"},
                   dtypes=(F64,))
        + variants("2x3_axis1_n5", [cplx((2, 3))], {"axis": 1, "n": 5, "norm": "backward"},
                   dtypes=(F64,))
        + variants("1_n1", [cplx((1,))], {"axis": 0, "n": 1, "norm": "backward"},
                   dtypes=(F64,)),
        ref_irfft, call_irfft, linear_in=EACH),
    # distinct eigenvalues (the derivative is undefined where two meet); real
    # operands with a complex pair, as NumPy's result is then complex too (of
    # a real matrix with real eigenvalues NumPy gives a real result, wengert
    # a complex one: primitives/test_complex.py)
    "eig": PrimSpec(
        DIFF,
        variants("3", [rotating(3)]) + variants("4_complex", [spread(4, True)], dtypes=(F64,))
        + variants("3_complex", [spread(3, True)], dtypes=(F32,))
        + variants("2x3_batch", [rotating(3, (2,))], dtypes=(F64,)),
        ref_eig, call_eig),
    "eigvals": PrimSpec(
        DIFF,
        variants("3", [rotating(3)]) + variants("3_complex", [spread(3, True)], dtypes=(F64,))
        + variants("4", [rotating(4)], dtypes=(F64,)),
        ref_eigvals, call_eigvals),
}
