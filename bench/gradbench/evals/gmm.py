"""GradBench ``gmm``: the log posterior of a Gaussian mixture model with a
Wishart prior on the precision matrices, and its gradient with respect to
``alpha``, ``mu``, ``q`` and ``l``.

Component k's precision matrix is Q_k^T Q_k, with Q_k lower triangular: its
diagonal is exp(q_k), its strictly lower part l_k, filled column by column.
Then, with beta_ik = alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2,

    log p(X | theta) = sum_i logsumexp_k(beta_ik) - n (logsumexp(alpha) + d/2 log 2 pi)
    log p(theta)     = K (n' d log(gamma / sqrt 2) - log Gamma_d(n' / 2))
                       - gamma^2 / 2 sum_k |Q_k|_F^2 + m sum_k sum(q_k),   n' = d + m + 1.

The multivariate log-gamma depends on d and m only: plain Python (``math.lgamma``).
``make_input()`` gives the largest size the eval sends by default
(d = 64, k = 100, n = 1000).
"""
import functools
import math

import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled

INDEPENDENT = ("alpha", "mu", "q", "l")


def logsumexp(v):
    """log sum exp over the first axis, shifted by the maximum for stability."""
    top = np.max(v, axis=0)
    return top + np.log(np.sum(np.exp(v - top), axis=0))


def log_multigamma(a, d):
    return d * (d - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a - j / 2) for j in range(d))


@functools.lru_cache
def q_layout(d):
    """A d x d map into the vector [0, exp(q_0), ..., exp(q_{d-1}), l_0, l_1, ...]:
    the diagonal reads exp(q), the strictly lower part reads l column by
    column, the upper part reads 0."""
    layout = np.zeros((d, d), dtype=np.intp)
    layout[range(d), range(d)] = np.arange(1, d + 1)
    position = d + 1
    for j in range(d):
        for i in range(j + 1, d):
            layout[i, j] = position
            position += 1
    return layout


def gmm_objective(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = alpha.shape[0]
    Q = np.concatenate([np.zeros((k, 1)), np.exp(q), l], axis=1)[:, q_layout(d)]   # k x d x d
    centered = x[None, :, :] - mu[:, None, :]                                       # k x n x d
    Qx = centered @ np.swapaxes(Q, 1, 2)                                            # Q_k (x_i - mu_k)
    beta = (alpha + np.sum(q, axis=1))[:, None] - 0.5 * np.sum(Qx * Qx, axis=2)     # k x n
    log_likelihood = (np.sum(logsumexp(beta))
                      - n * (logsumexp(alpha) + 0.5 * d * math.log(2 * math.pi)))
    dof = d + m + 1
    log_prior = (k * (dof * d * math.log(gamma / math.sqrt(2)) - log_multigamma(0.5 * dof, d))
                 - 0.5 * gamma ** 2 * (np.sum(np.exp(2 * q)) + np.sum(l * l))
                 + m * np.sum(q))
    return log_likelihood + log_prior


def _prepare(input):
    arrays = [np.array(input[name], dtype=np.float64) for name in INDEPENDENT + ("x",)]
    return (*arrays, int(input["m"]), float(input["gamma"]))


def _as_json(gradient):
    return {name: g.tolist() for name, g in zip(INDEPENDENT, gradient)}


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    jacobian = wg.grad(gmm_objective, argnums=(0, 1, 2, 3), **ad)
    return {
        "objective": Function(_prepare, compiled(gmm_objective, backend), float),
        "jacobian": Function(_prepare, jacobian, _as_json),
    }


def make_input(d=64, k=100, n=1000, m=0, gamma=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "d": d, "k": k, "n": n, "m": m, "gamma": gamma,
        "x": rng.normal(size=(n, d)).tolist(),
        "alpha": rng.normal(size=k).tolist(),
        "mu": rng.uniform(size=(k, d)).tolist(),
        "q": rng.normal(size=(k, d)).tolist(),
        "l": rng.normal(size=(k, d * (d - 1) // 2)).tolist(),
        "min_runs": 1, "min_seconds": 0.0,
    }
