"""Everyday code that inspects, selects and rearranges the values it differentiates
(issue 25): each program is written as a user writes it and checked in the source engine,
the trace engine and ``auto``, against central finite differences, or against the typed
error it is meant to raise.

* values that carry no derivative flow through (``np.isnan``, ``np.any``, ``(w > 0).all()``,
  ``np.count_nonzero``, ``np.unique``, ``np.nonzero``, ``int()``, ``float()`` of a boolean);
  once each was ``NoDerivativeRule`` or a raw ``AttributeError``;
* boolean masks computed from the data, read and written (``x[m]``, ``x[m] = v``,
  ``x[m] += v``, ``np.where(m)``): once ``NonDifferentiableInputError`` with no line;
* lists as operands (``x - [3.0, 5.0]``, ``x ** [1.0, 2.0]``, ``np.hypot(x, [...])``): once
  raw ``TypeError``s; ``jvp`` of ``a % y`` at a scalar ``a``: once a raw AttributeError;
* the functions users called that had no rule, in programs;
* the parts of a decomposition that are a chosen basis: a typed error where a derivative
  depends on the choice, the rest differentiated; ``eigh(a, UPLO="U")`` is NumPy's.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize

import wengert as wg
from wengert.core.errors import UndefinedDerivativeError

from checks import JVP_RTOL_F64, assert_close, fd_jvp

ENGINES = ("source", "trace", "auto")
W = np.array([0.7, -1.3, 2.1, 0.45, -0.2, 1.6])


def _grad_fd(f, x, engine, rtol=JVP_RTOL_F64):
    """``grad(f)`` in ``engine`` against central differences along two directions."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # auto's fallback warning, where it falls back
        g = wg.grad(f, engine=engine)(x)
    rng = np.random.default_rng(3)
    for _ in range(2):
        t = rng.standard_normal(np.shape(x))
        assert_close(np.sum(g * t), fd_jvp(f, (x,), (t,)), rtol, 1e-9,
                     what=f"{f.__name__} in {engine}: <grad, t> against FD")


# --- values that carry no derivative ---------------------------------------------------
def guarded_norm(w):
    if np.any(np.isnan(w)) or np.any(np.isinf(w)):
        return 0.0 * np.sum(w)
    return np.sqrt(np.sum(w ** 2))


def all_positive_method(w):
    if (w > -5.0).all() and not (w > 100.0).any():
        return np.sum(w ** 3)
    return np.sum(w)


def counted(w):
    k = np.count_nonzero(w > 0)
    return np.sum(w ** 2) / k + k * w[0]


def close_pairs(w):
    near = np.isclose(w[:3], w[3:], atol=0.5)
    return np.sum(np.where(near, w[:3] * w[3:], w[:3] ** 2)) * float(np.allclose(w, w))


def distinct_levels(w):
    levels = np.unique(np.round(w))
    return np.sum(w ** 2) * len(levels) + np.sum(np.unique(w) ** 3)


def unique_counts(w):
    values, inverse, counts = np.unique(np.floor(w), return_inverse=True, return_counts=True)
    return np.sum(w * counts[inverse]) + np.sum(values)


def integer_part(w):
    return int(w[0] * 2.0) * w[1] ** 2 + float(w[2] > 0) * w[2] + bool(w[3] > 0) * w[3]


def ranks(w):
    order = np.argsort(w)
    top = np.argmax(w)
    return np.sum(w[order] * np.arange(6.0)) + w[top] ** 2 + np.searchsorted(np.sort(w), 0.5)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", [guarded_norm, all_positive_method, counted, close_pairs,
                               distinct_levels, unique_counts, integer_part, ranks],
                         ids=lambda f: f.__name__)
def test_values_without_a_derivative_flow_through(f, engine):
    _grad_fd(f, W, engine)


# --- boolean masks --------------------------------------------------------------------
def masked_sum(w):
    return np.sum(w[w > 0] ** 2)


def masked_mean(w):
    big = w[np.abs(w) > 0.5]
    return np.mean(big) * len(big) + np.std(big)


def masked_rows(w):
    x = w.reshape(3, 2)
    rows = x[x[:, 0] > 0]
    return np.sum(rows ** 2) + np.max(w[w < 1.0])


def masked_write(w):
    y = w * 1.0
    y[w < 0] = 0.0
    return np.sum(y ** 2)


def masked_write_values(w):
    y = w * 2.0
    m = w > 0.5
    y[m] = w[m] ** 3
    return np.sum(y * w)


def masked_add(w):
    y = w * 1.0
    y[w < 0] += w[w < 0] ** 2
    return np.sum(y ** 3)


def where_indices(w):
    i, = np.where(w > 0.0)
    j = np.nonzero(w < 0.0)[0]
    return np.sum(w[i] ** 2) - np.sum(w[j]) + np.sum(np.flatnonzero(w > 1.0)) * w[0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", [masked_sum, masked_mean, masked_rows, masked_write,
                               masked_write_values, masked_add, where_indices],
                         ids=lambda f: f.__name__)
def test_masks_from_the_data(f, engine):
    _grad_fd(f, W, engine)
    _grad_fd(f, -W[::-1], engine)       # another mask: the same code, other lengths


def test_the_length_of_a_masked_value_is_read_when_the_code_runs():
    """The source engine generates the derivative once; the mask's count is read from the
    arrays the code makes, never a number fixed when it was generated."""
    g = wg.grad(masked_mean, engine="source")
    for x in (W, np.array([0.9, 0.1, -2.0, 3.0, 0.2, -0.7]), np.full(6, 1.5)):
        assert_close(g(x), wg.grad(masked_mean, engine="trace")(x), 1e-12)
    assert g.generations == 1
    assert "np.shape(" in g.source and "np.nonzero(" in g.source


# --- lists and tuples as operands --------------------------------------------------------
def misfit(x):
    return np.sum((x - [3.0, 5.0]) ** 2)


def powers(x):
    return np.sum(x ** [1.0, 2.0]) + np.sum([2.0, 0.5] * x)


def hypot_list(x):
    return np.sum(np.hypot(x, [1.0, 2.0])) + np.dot(x, (1.0, -1.0))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f", [misfit, powers, hypot_list], ids=lambda f: f.__name__)
def test_lists_as_operands(f, engine):
    _grad_fd(f, np.array([1.2, 0.7]), engine)


Y = np.array([1.5, 2.5, 3.5])


def mod_against_array(a):
    return np.sum(a % Y)


@pytest.mark.parametrize("engine", ENGINES)
def test_jvp_of_a_scalar_against_an_array(engine):
    """``a % y`` with a scalar ``a``: its tangent is ``a``'s, to be broadcast (once a raw
    AttributeError: 'float' object has no attribute 'shape')."""
    out, t = wg.jvp(mod_against_array, (0.7,), (1.0,), engine=engine)
    assert_close(out, mod_against_array(0.7), 1e-12)
    assert_close(t, 3.0, 1e-12)


# --- the functions users called, in programs ---------------------------------------------
def robust_scale(w):
    med = np.median(w)
    spread = np.percentile(w, 75.0) - np.percentile(w, 25.0)
    return np.sum(((w - med) / spread) ** 2) + np.nanquantile(w, 0.9)


def covariances(w):
    x = w.reshape(2, 3)
    return np.sum(np.cov(x) ** 2) + np.sum(np.corrcoef(x + [[0.0, 1.0, 0.5], [2.0, 0.0, 1.0]]))


def scatter_add(w):
    acc = np.zeros(4) + w[0]
    np.add.at(acc, [0, 2, 2, 3], w[1:5] ** 2)
    return np.sum(acc ** 2) + np.sum(np.multiply.outer(w[:2], w[2:4])) + np.add.reduce(w)


def filled_diagonal(w):
    m = np.outer(w[:3], w[3:]) * 1.0
    np.fill_diagonal(m, w[:3] ** 2)
    return np.sum(m ** 2)


def binned(w):
    counts, edges = np.histogram(w, bins=3, weights=w ** 2)
    per_bin = np.bincount(np.array([0, 1, 1, 2, 0, 2]), weights=w)
    return np.sum(counts * edges[1:]) + np.sum(per_bin ** 2)


def edited(w):
    z = np.insert(w, 2, w[0] ** 2)
    z = np.delete(z, [0, 4])
    return np.sum(z ** 2) + np.sum(np.ediff1d(w) ** 2) + np.sum(np.diagflat(w[:2]))


def fitted(w):
    coef = np.polyfit(np.arange(6.0), w, 2)
    return np.sum(coef ** 2) + np.sum(np.polyder(coef)) + np.sum(np.polyint(coef))


def sequences(w):
    g = np.geomspace(1.0 + w[0] ** 2, 10.0, 4)
    return np.sum(g) + np.sum(np.logspace(w[1], 1.0, 3)) + np.sum(np.cumulative_sum(w))


def parts(w):
    frac, whole = np.modf(w * 3.1)
    q, r = np.divmod(w, 0.61)
    return np.sum(frac ** 2 + whole * w + r * q) + np.sum(np.fmod(w, 0.9) + np.copysign(w, -1.0))


def rosenbrock(w):
    return scipy.optimize.rosen(w) + np.sum(scipy.optimize.rosen_der(w) ** 2) * 1e-3


# writes through a call (np.add.at, np.fill_diagonal) are the trace engine's: the source
# engine refuses them (UnsupportedSyntax) and auto falls back on the trace engine; SciPy's
# rosen converts its argument before a rule sees it: the source engine's (and auto's)
PROGRAMS = [(robust_scale, ENGINES), (covariances, ENGINES), (scatter_add, ("trace", "auto")),
            (filled_diagonal, ("trace", "auto")), (binned, ENGINES), (edited, ENGINES),
            (fitted, ENGINES), (sequences, ENGINES), (parts, ENGINES),
            (rosenbrock, ("source", "auto"))]


@pytest.mark.parametrize("f, engine", [(f, e) for f, engines in PROGRAMS for e in engines],
                         ids=[f"{f.__name__}-{e}" for f, engines in PROGRAMS for e in engines])
def test_the_new_functions_in_programs(f, engine):
    _grad_fd(f, W, engine)


def test_writes_through_a_call_are_refused_by_the_source_engine():
    with pytest.raises(wg.UnsupportedSyntax, match=r"np\.add\.at writes into its argument"):
        wg.grad(scatter_add, engine="source")(W)
    with pytest.raises(wg.UnsupportedSyntax, match="np.fill_diagonal writes"):
        wg.grad(filled_diagonal, engine="source")(W)


# --- decompositions: the chosen basis, and eigh's UPLO ------------------------------------
A = np.random.default_rng(5).standard_normal((5, 3))
_Q, _ = np.linalg.qr(np.random.default_rng(6).standard_normal((4, 4)))
TIED = _Q @ np.diag([1.0, 1.0, 2.0, 3.0]) @ _Q.T        # a repeated eigenvalue


def qr_defined_part(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q[:, :3] ** 3) + np.sum(r ** 2)


def qr_complement_projector(a):
    q, _ = np.linalg.qr(a, mode="complete")
    return np.sum(q[:, 3:] @ q[:, 3:].T * np.arange(25.0).reshape(5, 5))


def qr_chosen_columns(a):
    q, _ = np.linalg.qr(a, mode="complete")
    return np.sum(q[:, 3:] ** 3)


def svd_defined_part(a):
    u, s, vh = np.linalg.svd(a, full_matrices=True)
    return np.sum(u[:, :3] ** 3) + np.sum(s ** 2) + np.sum(vh ** 3)


def svd_chosen_columns(a):
    u, s, vh = np.linalg.svd(a, full_matrices=True)
    return np.sum(u[:, 4] ** 3)


def eigh_defined_part(a):
    w, v = np.linalg.eigh(a)
    # (even powers: an eigenvector's sign is LAPACK's choice too)
    return np.sum(w ** 2) + np.sum(v[:, 2:] ** 4) + np.sum(v[:, :2] @ v[:, :2].T * a)


def eigh_chosen_vector(a):
    w, v = np.linalg.eigh(a)
    return np.sum(v[:, 0] ** 3)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f, x", [(qr_defined_part, A), (qr_complement_projector, A),
                                  (svd_defined_part, A), (eigh_defined_part, TIED)],
                         ids=["qr", "qr-projector", "svd", "eigh"])
def test_the_well_defined_parts_differentiate(f, x, engine):
    _grad_fd(f, x, engine, rtol=1e-5)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("f, x, what", [
    (qr_chosen_columns, A, "extra columns of np.linalg.qr"),
    (svd_chosen_columns, A, "extra columns of U of np.linalg.svd"),
    (eigh_chosen_vector, TIED, "eigenvectors of a repeated eigenvalue")],
    ids=["qr", "svd", "eigh"])
def test_a_derivative_of_the_chosen_basis_is_a_typed_error(f, x, what, engine):
    """The columns are LAPACK's choice, not a function of the input: finite differences
    contradicted the gradient wengert once gave for them."""
    with pytest.raises(UndefinedDerivativeError, match=what):
        wg.grad(f, engine=engine)(x)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)], ids=["single", "batched"])
def test_eigh_is_numpys_for_both_triangles(uplo, shape):
    """The eigenvectors' signs are NumPy's (the upper triangle was once read as the
    transpose's lower one: the opposite signs, in autograd's own tests)."""
    a = np.random.default_rng(7).standard_normal(shape)

    def eigh_of(x):
        return np.linalg.eigh(x, UPLO=uplo)

    want = np.linalg.eigh(a, UPLO=uplo)
    for engine in ("source", "trace"):
        (w, v), _ = wg.jvp(eigh_of, (a,), (np.zeros(shape),), engine=engine)
        assert_close(w, want[0], 1e-12)
        assert_close(v, want[1], 1e-10)
