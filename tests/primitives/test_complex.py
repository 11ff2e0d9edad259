"""Complex values and JAX's conventions for them, in both engines: the rows'
complex rules (``wengert/primitives/arith.py`` states the conventions; each
audited row sets ``complex_ok``) and NumPy's complex functions
(``wengert/numpy/complex.py``, ``fft.py``).

* ``grad`` of a real function of ``z = x + iy`` is ``df/dx - i df/dy``
  (``grad(|z|^2)(3+4j) == 6-8j``), checked against finite differences along
  the real and the imaginary direction apart;
* ``holomorphic=True``: ``grad`` is ``f'(z)``, ``jacfwd == jacrev``;
  without it a complex output (grad, jacrev) or input (jacfwd, hessian) is
  a typed error, and ``holomorphic=True`` on a real input too;
* a complex intermediate in a real function: the cotangent of a real value
  is real (and float32 stays float32);
* the transpose is linear, without conjugation: ``vjp`` of a complex output
  against ``jvp`` by ``Re sum(ct * J t) == Re sum(J^T ct * t)``;
* functions and primitives whose rules were not audited for complex values
  refuse them with the typed error naming them (a composite such as
  ``np.linalg.norm``, which squares where NumPy takes ``|x|^2``, would be
  silently wrong).
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors
from wengert.core.errors import UnsupportedDtypeError

import trust_cases as tc
from checks import assert_close, dot_product_check, random_like, rtol


ENGINES = ("trace", "source")
C128, C64 = np.dtype(np.complex128), np.dtype(np.complex64)
EPS = 1e-6


def fd_grad(f, z):
    """df/dx - i df/dy of a real function at complex array ``z`` (complex128),
    one central difference per real coordinate."""
    z = np.asarray(z, C128)
    g = np.zeros(z.shape, C128)
    for k in np.ndindex(*z.shape):
        e = np.zeros(z.shape, C128)
        e[k] = 1.0
        dx = (f(z + EPS * e) - f(z - EPS * e)) / (2 * EPS)
        dy = (f(z + 1j * EPS * e) - f(z - 1j * EPS * e)) / (2 * EPS)
        g[k] = dx - 1j * dy
    return g


def fd_holomorphic(f, z):
    """f'(z), elementwise, by a central difference along the real axis."""
    z = np.asarray(z, C128)
    return (f(z + EPS) - f(z - EPS)) / (2 * EPS)


# --- real functions of complex inputs ----------------------------------------------
def abs_squared(z):
    return np.sum(np.abs(z) ** 2)


def parts_product(z):
    return np.sum(np.real(z) * np.imag(z))


def attribute_parts(z):
    return np.sum(z.real ** 2 - 3.0 * z.imag + z.conj().imag * z.conjugate().real)


def modulus(z):
    return np.sum(np.abs(z))


def conj_product(z):
    return np.real(np.sum(z * np.conj(z) * (1.0 - 0.5j)))


def angle_weighted(z):
    return np.sum(np.angle(z) * np.arange(1.0, z.shape[0] + 1.0))


def real_of_holomorphic(z):
    return np.sum(np.real(np.exp(z) * np.sin(z) + z ** 3 / (1.0 + z * z)))


def imag_of_log(z):
    return np.sum(np.imag(np.log(z) * np.sqrt(z)))


def spectrum_energy(z):
    return np.sum(np.abs(np.fft.fft(z) * np.array([1.0, 0.5, 2.0])) ** 2)


def matrix_form(z):
    a = np.array([[2.0, 1.0 + 1j, 0.0], [0.5j, 1.0, -1.0], [0.3, 0.0, 1.0 - 2j]])
    w = a @ z
    return np.real(np.dot(np.conj(w), w))


def loop_and_branch(z):
    w = z
    for k in range(3):
        if np.real(w[0]) > 0:
            w = w * z + 0.5j
        else:
            w = w * 0.5
    return np.sum(np.real(w) * np.imag(w))


REAL_OF_COMPLEX = [abs_squared, parts_product, attribute_parts, modulus, conj_product,
                   angle_weighted, real_of_holomorphic, imag_of_log, spectrum_energy,
                   matrix_form, loop_and_branch]
Z3 = np.array([0.3 + 0.4j, -0.7 + 0.2j, 0.5 - 0.9j])


@pytest.mark.parametrize("engine", ENGINES)
def test_grad_of_abs_squared_is_jax_convention(engine):
    """JAX's example: grad(|z|^2)(3+4j) = 6-8j = df/dx - i df/dy."""
    def f(z):
        return np.abs(z) ** 2
    g = wg.grad(f, engine=engine)(3.0 + 4.0j)
    assert g == 6.0 - 8.0j
    assert np.asarray(g).dtype == C128
    _, g2 = wg.value_and_grad(f, engine=engine)(3.0 + 4.0j)
    assert g2 == 6.0 - 8.0j


@pytest.mark.parametrize("dtype", [C128, C64], ids=["c128", "c64"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", REAL_OF_COMPLEX, ids=[f.__name__ for f in REAL_OF_COMPLEX])
def test_grad_of_real_function_vs_fd_both_directions(f, engine, dtype):
    z = Z3.astype(dtype)
    g = wg.grad(f, engine=engine)(z)
    assert g.dtype == dtype, f"{f.__name__}: grad dtype {g.dtype} for a {dtype} input"
    want = fd_grad(f, Z3)
    tol = rtol("jvp", np.float32 if dtype == C64 else np.float64)
    assert_close(g.real, want.real, tol, what=f"{f.__name__}: df/dx")
    assert_close(g.imag, want.imag, tol, what=f"{f.__name__}: -df/dy")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", REAL_OF_COMPLEX, ids=[f.__name__ for f in REAL_OF_COMPLEX])
def test_reverse_against_forward_dot_product(f, engine):
    """vjp (linear transpose, no conjugation) against jvp along a complex tangent."""
    rng = np.random.default_rng(3)
    t = random_like(Z3, rng)
    _, f_dot = wg.jvp(f, (Z3,), (t,), engine=engine)
    out, pullback = wg.vjp(f, Z3, engine=engine)
    ct = random_like(out, rng)
    dot_product_check(ct, f_dot, pullback(ct), (t,), rtol("exact", np.float64))


# --- holomorphic functions -----------------------------------------------------------
def poly(z):
    return z ** 3 - 2.0j * z + 1.0


def exp_over(z):
    return np.exp(z) / (z + 2.0)


def log_sqrt(z):
    return np.log(z) * np.sqrt(z)


def trig(z):
    return np.tan(z) + np.cosh(z) * np.sin(z) - np.tanh(z)


def via_real_constant(z):
    return z * np.float64(2.5) + np.exp(1j * z)


M3 = np.array([[2.0, 0.5, -0.3], [0.1, 1.5, 0.4], [-0.2, 0.3, 2.5]])
V3 = np.array([0.5, -1.0, 2.0])


def matrix_functions(z):
    a = M3 + z * np.eye(3) + 0.5j * M3.T
    return np.linalg.det(a) * np.sum(np.linalg.inv(a) @ V3) + np.sum(np.linalg.solve(a, V3 * z))


def reductions(z):
    w = V3 * z + 1.0j
    return np.prod(w) + np.sum(np.cumsum(w) ** 2) + np.einsum("i,ij,j", w, M3, w) + \
        np.mean(np.concatenate([w, w[::-1] * z])) + np.dot(w, np.stack([w, V3]).T)[1]


def powers(z):
    return z ** 2.5 + 2.0 ** z + z ** (1.0 + 0.5j) + np.expm1(z) * np.log1p(z)


ELEMENTWISE = [poly, exp_over, log_sqrt, trig, via_real_constant, powers]
HOLOMORPHIC = ELEMENTWISE + [matrix_functions, reductions]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", HOLOMORPHIC, ids=[f.__name__ for f in HOLOMORPHIC])
def test_holomorphic_grad_is_complex_derivative(f, engine):
    for z in (0.3 + 0.4j, -0.6 + 1.1j):
        g = wg.grad(f, holomorphic=True, engine=engine)(z)
        assert_close(g, fd_holomorphic(f, z), rtol("jvp", np.float64), what=f.__name__)
        # Cauchy-Riemann: the derivative along i is i f'(z)
        _, along_i = wg.jvp(f, (z,), (1j,), engine=engine)
        assert_close(along_i, 1j * g, rtol("exact", np.float64), what=f"{f.__name__} along i")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", ELEMENTWISE, ids=[f.__name__ for f in ELEMENTWISE])
def test_holomorphic_jacobians_agree(f, engine):
    z = Z3 + 1.0
    jf = wg.jacfwd(f, holomorphic=True, engine=engine)(z)
    jr = wg.jacrev(f, holomorphic=True, engine=engine)(z)
    want = np.diag(fd_holomorphic(f, z))
    assert_close(jf, want, rtol("jvp", np.float64), what=f"{f.__name__}: jacfwd")
    assert_close(jr, jf, rtol("ad", np.float64), what=f"{f.__name__}: jacrev vs jacfwd")


@pytest.mark.parametrize("engine", ENGINES)
def test_holomorphic_hessian(engine):
    def f(z):
        return np.sum(np.exp(z) * z)
    h = wg.hessian(f, holomorphic=True, engine=engine)(Z3)
    assert_close(h, np.diag(np.exp(Z3) * (Z3 + 2.0)), rtol("hessian", np.float64))


@pytest.mark.parametrize("engine", ENGINES)
def test_jacrev_of_real_outputs_of_complex_input(engine):
    def f(z):
        return np.abs(z) ** 2 + np.real(z[::-1])
    jac = wg.jacrev(f, engine=engine)(Z3)
    for k in range(3):
        row = fd_grad(lambda z, k=k: f(z)[k], Z3)
        assert_close(jac[k], row, rtol("jvp", np.float64), what=f"jacrev row {k}")


@pytest.mark.parametrize("engine", ENGINES)
def test_jacfwd_of_complex_outputs_of_real_input(engine):
    def f(x):
        return np.exp(1j * x) * (1.0 + 2.0j)
    x = np.array([0.1, -0.4])
    jac = wg.jacfwd(f, engine=engine)(x)
    assert jac.dtype == C128
    assert_close(jac, np.diag(1j * np.exp(1j * x) * (1.0 + 2.0j)), rtol("exact", np.float64))


# --- complex intermediates of real functions ---------------------------------------
def rotate_and_project(x):
    return np.sum(np.real(np.exp(1j * x) * (1.0 + 2.0j)) * x)


def complex_literal_math(x):
    w = x + 1j * x ** 2
    return np.sum(np.abs(w) + np.angle(w))


def promoted_by_array(x):
    c = np.array([1.0 - 1j, 2.0j, 0.5])
    return np.sum(np.imag(c * x) ** 2)


def through_fft(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2) + np.sum(np.fft.irfft(np.fft.rfft(x) * 1j, n=3))


def astype_complex(x):
    return np.sum(np.real(x.astype(np.complex128) ** 2) + np.imag((x * 1j).astype(complex)))


REAL_WITH_COMPLEX_INSIDE = [rotate_and_project, complex_literal_math, promoted_by_array,
                            through_fft, astype_complex]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", REAL_WITH_COMPLEX_INSIDE,
                         ids=[f.__name__ for f in REAL_WITH_COMPLEX_INSIDE])
def test_complex_intermediate_in_real_function(f, engine, dtype):
    x = np.array([0.3, -0.8, 1.2], dtype)
    g = wg.grad(f, engine=engine)(x)
    assert g.dtype == x.dtype, f"{f.__name__}: the cotangent of a real input is real"
    want = fd_grad(lambda z: f(z.real), x).real
    tol = rtol("jvp", dtype)
    assert_close(g, want, tol, what=f.__name__)


# --- what is refused ------------------------------------------------------------------
def complex_output(z):
    return z * z


def real_output(z):
    return np.abs(z)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev"])
def test_complex_output_needs_holomorphic(transform, engine):
    with pytest.raises(errors.UnsupportedDtypeError, match="complex output.*holomorphic=True"):
        getattr(wg, transform)(complex_output, engine=engine)(0.5 + 1j)
    with pytest.raises(TypeError):          # the builtin base, as JAX raises
        getattr(wg, transform)(complex_output, engine=engine)(0.5 + 1j)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("transform", ["jacfwd", "hessian"])
def test_complex_input_of_forward_jacobian_needs_holomorphic(transform, engine):
    with pytest.raises(errors.UnsupportedDtypeError, match="complex input.*holomorphic=True"):
        getattr(wg, transform)(real_output, engine=engine)(Z3)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
def test_holomorphic_needs_complex_values(transform, engine):
    with pytest.raises(errors.UnsupportedDtypeError, match="holomorphic=True.*real input"):
        getattr(wg, transform)(complex_output, holomorphic=True, engine=engine)(0.5)
    if transform in ("grad", "value_and_grad"):
        with pytest.raises(errors.UnsupportedDtypeError,
                           match="holomorphic=True.*real output"):
            getattr(wg, transform)(real_output, holomorphic=True, engine=engine)(0.5 + 1j)


def sign_of(z):
    return np.sum(np.abs(np.sign(z)))


def maximum_of(z):
    return np.sum(np.abs(np.maximum(z, 0.0)))


def ordered(z):
    return np.sum(np.where(z < 1.0, np.abs(z), 0.0))


def floor_of(z):
    return np.sum(np.abs(np.floor(z)))


def max_of(z):
    return np.abs(np.max(z))


def max_method(z):
    return np.abs(z.max())


def norm_of(z):
    return np.linalg.norm(z)


def var_of(z):
    return np.var(z)


def var_method(z):
    return z.var()


def arctan2_of(z):
    return np.sum(np.arctan2(z, 1.0))


# ufuncs and functions are refused by name where the library table meets
# them; operators and methods where their primitive does
REFUSED = [(sign_of, "np.sign"), (maximum_of, "np.maximum"), (ordered, "less"),
           (floor_of, "np.floor"), (max_of, "np.max"), (max_method, "reduce_max"), (norm_of, "np.linalg.norm"),
           (var_of, "np.var"), (var_method, "np.var"), (arctan2_of, "np.arctan2")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f, name", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_unaudited_rules_refuse_complex_values(f, name, engine):
    with pytest.raises(errors.UnsupportedDtypeError, match=rf"test_complex.py:\d+: {name} on a "
                                                           "complex value"):
        wg.grad(f, engine=engine)(Z3)


# --- the transpose is linear, not conjugate-linear ---------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_transpose_of_scaling_is_not_conjugated(engine):
    a = 0.5 - 2.0j

    def scale(t):
        return a * t
    out, pullback = wg.vjp(scale, 1.0 + 1.0j, engine=engine)
    ct = 0.3 + 0.7j
    assert_close(pullback(ct)[0], a * ct, rtol("exact", np.float64))
    transposed = wg.linear_transpose(scale, 1.0 + 1.0j)
    assert_close(transposed(ct)[0], a * ct, rtol("exact", np.float64))


@pytest.mark.parametrize("engine", ENGINES)
def test_abs_at_zero_has_value_and_a_finite_derivative(engine):
    z = np.array([0.0 + 0.0j, 3.0 + 4.0j])
    g = wg.grad(modulus, engine=engine)(z)
    assert np.all(np.isfinite(g))
    assert_close(g[1], (3.0 - 4.0j) / 5.0, rtol("exact", np.float64))


# --- Python and NumPy scalar types ------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_scalar_types_follow_the_input(engine):
    """As for floats: a Python complex's derivative is a Python complex, a
    NumPy scalar's a NumPy scalar of its dtype; both engines alike."""
    def f(z):
        return np.abs(z) ** 2
    g = wg.grad(f, engine=engine)
    assert type(g(3 + 4j)) is complex
    assert type(g(np.complex128(3 + 4j))) is np.complex128
    assert type(g(np.complex64(3 + 4j))) is np.complex64
    value, d = wg.value_and_grad(poly, holomorphic=True, engine=engine)(0.3 + 0.4j)
    assert type(value) is type(poly(0.3 + 0.4j)) and type(d) is complex


# --- eig: complex results of real matrices, derivatives for distinct eigenvalues -------
def eig_invariant(a):
    """Gauge-invariant: unchanged by each eigenvector's phase."""
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(v) ** 2 * np.real(w)) + np.sum(np.imag(w) ** 2) + \
        np.real(np.sum(v[0] * np.conj(v[1]) * w))


A3 = np.array([[1.0, -1.5, 0.2], [1.5, 1.1, -0.1], [0.3, 0.0, 3.0]])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a", [A3, A3 + 0.3j * A3[::-1]], ids=["real", "complex"])
def test_eig_gauge_invariant_function_vs_fd(a, engine):
    g = wg.grad(eig_invariant, engine=engine)(a)
    assert g.dtype == a.dtype
    assert_close(g, fd_grad(eig_invariant, a) if a.dtype.kind == "c" else
                 fd_grad(lambda z: eig_invariant(z.real), a).real, rtol("jvp", np.float64))


@pytest.mark.parametrize("engine", ENGINES)
def test_eig_results_decompose_and_keep_lapack_phase(engine):
    """A V = V diag(w) with unit columns whose largest entry is real, and the
    tangent of V keeps both (so it is the derivative of NumPy's V)."""
    t = np.sin(np.arange(9.0)).reshape(3, 3)
    (w, v), (dw, dv) = wg.jvp(lambda a: tuple(np.linalg.eig(a)), (A3,), (t,), engine=engine)
    assert_close(A3 @ v, v * w, rtol("exact", np.float64))
    assert_close(np.linalg.norm(v, axis=0), np.ones(3), rtol("exact", np.float64))
    top = np.argmax(np.abs(v), axis=0)
    assert_close(v[top, range(3)].imag, np.zeros(3), 0.0)
    assert_close(dv[top, range(3)].imag, np.zeros(3), rtol("exact", np.float64))
    assert_close(np.real(np.sum(np.conj(v) * dv, axis=0)), np.zeros(3), rtol("exact", np.float64))
    # the differentiated identity: dA V + A dV = dV W + V dW
    assert_close(t @ v + A3 @ dv, dv * w + v * dw, rtol("exact", np.float64))


@pytest.mark.parametrize("engine", ENGINES)
def test_eig_of_real_spectrum_is_complex(engine):
    """JAX's convention: eig's results are complex whatever the eigenvalues
    (NumPy before 2.5 gives float64 for a real matrix whose eigenvalues are
    all real; 2.5 gives complex too); the values are NumPy's."""
    s = A3 + A3.T
    (w, v), _ = wg.jvp(lambda a: tuple(np.linalg.eig(a)), (s,), (np.eye(3),), engine=engine)
    want_w, want_v = np.linalg.eig(s)
    assert w.dtype == C128 and v.dtype == C128
    assert_close(w, want_w, rtol("ref", np.float64))
    assert_close(v, want_v, rtol("ref", np.float64))


# --- Jacobians of transforms: the FFT primitives' batch rules ---------------------------
def deblur(x):
    return np.fft.irfft(np.fft.rfft(x, axis=0) * (1.0 + 0.5j), n=8, axis=0)


def spectrum2(z):
    return np.fft.ifft2(np.fft.fft2(z, s=(3, 5)) * 2.0, norm="ortho")


@pytest.mark.parametrize("engine", ENGINES)
def test_fft_jacobians_forward_equal_reverse(engine):
    x = np.sin(np.arange(12.0)).reshape(6, 2)
    jf, jr = wg.jacfwd(deblur, engine=engine)(x), wg.jacrev(deblur, engine=engine)(x)
    assert jf.shape == (8, 2, 6, 2)
    assert_close(jf, jr, rtol("ad", np.float64), what="real -> real through rfft/irfft")
    rng = np.random.default_rng(5)
    t = rng.standard_normal(x.shape)
    assert_close(np.tensordot(jf, t, axes=2), (deblur(x + EPS * t) - deblur(x - EPS * t)) / (2 * EPS),
                 rtol("jvp", np.float64), what="Jacobian vs FD")
    z = np.cos(np.arange(12.0)).reshape(3, 4) + 0.5j
    jf = wg.jacfwd(spectrum2, holomorphic=True, engine=engine)(z)
    jr = wg.jacrev(spectrum2, holomorphic=True, engine=engine)(z)
    assert jf.shape == (3, 5, 3, 4)
    assert_close(jf, jr, rtol("ad", np.float64), what="holomorphic fft2/ifft2")


def rfft_of_complex(z):
    return np.sum(np.abs(np.fft.rfft(z)))


def rfftn_of_complex(z):
    return np.sum(np.abs(np.fft.rfftn(z)))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", [rfft_of_complex, rfftn_of_complex],
                         ids=["rfft", "rfftn"])
def test_real_transforms_refuse_complex_input_as_numpy_does(f, engine):
    with pytest.raises(TypeError):
        f(Z3)                           # NumPy's own refusal
    with pytest.raises(errors.UnsupportedDtypeError,
                       match=r"test_complex.py:\d+: np.fft.rfftn? of a complex value"):
        wg.grad(f, engine=engine)(Z3)


def test_rule_evaluating_a_real_only_primitive_on_complex_values_refuses():
    """A rule that evaluates a primitive on concrete values (det's jvp calls
    the adjugate on the primal in the trace engine) never computes a
    primitive not audited for complex values on complex ones: the
    adjugate's real-valued impl dropped the imaginary part, and grad of det
    gave 4.14 where the derivative is 4.14+1.52j. Every such primitive refuses."""
    from wengert.primitives.adjugate import adjugate
    z = np.array([[1.0 + 1j, 0.5], [0.2, 2.0 - 0.5j]])
    with pytest.raises(errors.UnsupportedDtypeError, match="adjugate"):
        adjugate(z)
    a = np.array([[1.0, 0.5], [0.2, 2.0]])
    for e in ENGINES:
        g = wg.grad(lambda s: np.linalg.det(a * s + np.eye(2)), holomorphic=True, engine=e)(
            0.3 + 0.4j)
        h = 1e-6
        fd = (np.linalg.det(a * (0.3 + 0.4j + h) + np.eye(2))
              - np.linalg.det(a * (0.3 + 0.4j - h) + np.eye(2))) / (2 * h)
        assert_close(g, fd, 1e-6, what=f"det of a complex matrix ({e})")


# --- a composite not audited for complex values -----------------------------------
EXACT = rtol("exact", np.float64)


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_complex_values_are_refused_where_not_audited(engine):
    """np.linalg.norm's composite squares x where NumPy takes |x|^2: on
    complex values it would be silently wrong, so it is refused; |x (1+2j)|
    goes through audited rules only and is right (sqrt(5) sign(x))."""
    z = np.array([1 + 2j, 3 - 1j])
    with pytest.raises(UnsupportedDtypeError, match="np.linalg.norm"):
        wg.jvp(tc.complex_norm, (z,), (np.ones(2, complex),), engine=engine)
    with pytest.raises(UnsupportedDtypeError, match="np.linalg.norm"):
        wg.grad(tc.complex_norm, engine=engine)(z)
    for x in (0.5, -0.5):
        assert_close(wg.grad(tc.complex_inside, engine=engine)(x), np.sqrt(5.0) * np.sign(x),
                     EXACT)
