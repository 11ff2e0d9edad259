"""Ordinary scientific programs, written as a NumPy/SciPy user writes them
(``import numpy as np``, ``scipy.special``, ``scipy.stats``...), each a
scalar objective of the arguments it is differentiated in. They are the
kind of program issue 12 found wengert could not run unchanged: each one
calls several of the library functions added for it.

``PROGRAMS`` maps a name to ``(objective, make_args, trace_ok)``:
``make_args(rng)`` draws the arguments (all differentiated), and
``trace_ok`` says whether the trace engine runs it too (a program that
calls a function NumPy does not dispatch, such as ``np.array`` of a list or
``scipy.stats``, runs in the source engine only: the trace engine never
sees those calls).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special
from scipy import stats
from scipy.special import gammaln, logsumexp


# --- regression and classification -----------------------------------------------
_X = np.random.default_rng(7).standard_normal((20, 3))
_Y = (np.random.default_rng(8).random(20) < 0.5).astype(float)


def logistic_regression(w):
    """Negative log-likelihood with a Gaussian prior on the weights."""
    z = _X @ w
    nll = -np.sum(_Y * scipy.special.log_expit(z) + (1 - _Y) * scipy.special.log_expit(-z))
    return nll - np.sum(stats.norm.logpdf(w, 0.0, 2.0))


def robust_regression(params):
    """Student-t likelihood: heavy-tailed residuals, log-scale parameter."""
    w, log_s = params[:3], params[3]
    resid = _Y - _X @ w
    return -np.sum(stats.t.logpdf(resid, 4.0, 0.0, np.exp(log_s)))


# --- mixtures and variational inference ------------------------------------------
_DATA = np.concatenate([np.random.default_rng(9).normal(-1.0, 0.5, 15),
                        np.random.default_rng(10).normal(1.5, 0.7, 15)])


def gaussian_mixture(means, log_scales, logits):
    """Log-likelihood of a 1-d mixture of three Gaussians."""
    log_w = logits - logsumexp(logits)
    comp = stats.norm.logpdf(_DATA[:, None], means[None, :], np.exp(log_scales)[None, :])
    return -np.sum(logsumexp(comp + log_w, axis=1))


_EPS = np.random.default_rng(11).standard_normal((8, 2))


def black_box_vi(mu, log_sigma):
    """A reparametrised ELBO for a correlated 2-d Gaussian target."""
    z = mu + np.exp(log_sigma) * _EPS
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    log_p = stats.multivariate_normal.logpdf(z, np.zeros(2), cov)
    entropy = np.sum(log_sigma) + 0.5 * 2 * (1 + np.log(2 * np.pi))
    return -(np.mean(log_p) + entropy)


def dirichlet_multinomial(log_alpha):
    """Log marginal likelihood of counts under a Dirichlet prior."""
    alpha = np.exp(log_alpha)
    counts = np.array([3.0, 0.0, 5.0, 2.0])
    a0, n = np.sum(alpha), np.sum(counts)
    return -(gammaln(a0) - gammaln(a0 + n) + np.sum(gammaln(alpha + counts) - gammaln(alpha)))


# --- neural networks ----------------------------------------------------------------
def mlp_classifier(w1, w2):
    """Two layers, softmax cross-entropy, labels fixed."""
    h = np.tanh(_X @ w1)
    logits = h @ w2
    labels = np.repeat(np.arange(2), 10)
    logp = scipy.special.log_softmax(logits, axis=1)
    return -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))


def rnn(w_h, w_x, h0):
    """A tanh recurrence over a short sequence, read out by a norm."""
    h = h0
    for t in range(5):
        h = np.tanh(w_h @ h + w_x * np.sin(0.5 * t))
    return np.linalg.norm(np.concatenate([h, np.atleast_1d(np.sum(h ** 2))]))


# --- physics and signals ------------------------------------------------------------
def diffusion_roll(u0):
    """An explicit periodic diffusion stencil written with np.roll."""
    u = u0
    for _ in range(4):
        u = u + 0.2 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(u ** 3)


def two_body(q1, q2):
    """Energy of two particles whose positions are built from scalars."""
    p = np.array([q1, q2])
    r = np.array([np.cos(p[0]), np.sin(p[1])])
    return np.sum(r ** 2) / (1.0 + np.hypot(q1, q2))


def spectral_smoothing(x):
    """A rough-signal penalty computed in the Fourier domain."""
    spec = np.fft.rfft(x)
    k = np.arange(spec.shape[0])
    return np.sum(k ** 2 * np.abs(spec) ** 2) / x.shape[0] + np.sum(x ** 2)


def deconvolution(signal):
    """Least squares through a fixed blur kernel (scipy.signal)."""
    kernel = np.array([0.25, 0.5, 0.25])
    target = np.linspace(0.0, 1.0, 8)
    blurred = scipy.signal.convolve(signal, kernel, mode="same")
    return np.sum((blurred - target) ** 2) + 0.1 * np.sum(np.diff(signal) ** 2)


# --- linear algebra ------------------------------------------------------------------
_T = np.linspace(0.0, 1.0, 6)


def gp_marginal_likelihood(log_ell, log_sf):
    """A Gaussian process's negative log marginal likelihood via Cholesky."""
    d = _T[:, None] - _T[None, :]
    k = np.exp(2 * log_sf) * np.exp(-0.5 * d ** 2 / np.exp(2 * log_ell)) + 0.1 * np.eye(6)
    y = np.sin(3 * _T)
    c = scipy.linalg.cholesky(k, lower=True)
    alpha = scipy.linalg.solve_triangular(c, y, lower=True)
    return 0.5 * np.sum(alpha ** 2) + np.sum(np.log(np.diag(c)))


def pca_energy(a):
    """Energy captured by the top two principal directions."""
    s = np.linalg.svd(a - np.mean(a, axis=0), compute_uv=False)
    return np.sum(s[:2] ** 2) / np.sum(s ** 2)


def spring_network(pos):
    """Pairwise spring energy: lengths from np.linalg.norm over an axis."""
    p = pos.reshape(4, 2)
    diff = p[:, None, :] - p[None, :, :]
    lengths = np.linalg.norm(diff + np.eye(4)[:, :, None], axis=-1)
    return np.sum(np.triu(lengths - 1.0, k=1) ** 2)


def _r(*shape):
    def draw(rng):
        return rng.uniform(-1.0, 1.0, shape)
    return draw


PROGRAMS = {
    "logistic_regression": (logistic_regression, lambda rng: (_r(3)(rng),), False),
    "robust_regression": (robust_regression, lambda rng: (_r(4)(rng),), False),
    "gaussian_mixture": (gaussian_mixture, lambda rng: (_r(3)(rng), 0.3 * _r(3)(rng),
                                                        _r(3)(rng)), False),
    "black_box_vi": (black_box_vi, lambda rng: (_r(2)(rng), 0.3 * _r(2)(rng)), False),
    "dirichlet_multinomial": (dirichlet_multinomial, lambda rng: (_r(4)(rng),), False),
    "mlp_classifier": (mlp_classifier, lambda rng: (_r(3, 4)(rng), _r(4, 2)(rng)), False),
    "rnn": (rnn, lambda rng: (0.5 * _r(3, 3)(rng), _r(3)(rng), _r(3)(rng)), True),
    "diffusion_roll": (diffusion_roll, lambda rng: (_r(7)(rng),), True),
    "two_body": (two_body, lambda rng: (0.7, -0.4), False),
    "spectral_smoothing": (spectral_smoothing, lambda rng: (_r(8)(rng),), True),
    "deconvolution": (deconvolution, lambda rng: (_r(8)(rng),), False),
    "gp_marginal_likelihood": (gp_marginal_likelihood, lambda rng: (-0.5, 0.2), False),
    "pca_energy": (pca_energy, lambda rng: (_r(6, 3)(rng),), True),
    "spring_network": (spring_network, lambda rng: (_r(8)(rng),), True),
}
