"""Gradient of a variational-inference objective that calls SciPy:
wengert's source engine against autograd and JAX.

The objective is the importance-weighted ELBO (IWAE bound) of Bayesian
logistic regression with a mean-field Gaussian posterior q(w) = N(mu,
diag(sigma^2)), sigma = exp(log_sigma), and a standard normal prior:

    w_s    = mu + sigma * eps_s                       (S samples, drawn once)
    log p  = sum_i log sigmoid(y_i x_i . w_s)         (np.logaddexp)
           + sum_j scipy.stats.norm.logpdf(w_sj, 0, 1)
    log q  = sum_j scipy.stats.norm.logpdf(w_sj, mu_j, sigma_j)
    bound  = scipy.special.logsumexp(log p - log q) - log S

and the gradient of -bound with respect to (mu, log_sigma). One body,
written against a (numpy, special, stats) triple, runs in every library:
SciPy's for the plain call and wengert, ``autograd.scipy``'s for autograd,
``jax.scipy``'s for JAX (``jax.jit(jax.grad(...))`` on the CPU, compiled
before timing). The gradients must agree before anything is timed.

Three sizes (n observations x d features, S samples). Each timing warms up,
sizes its loop with ``timeit.Timer.autorange`` and reports the best of 5
repeats of the per-call mean, in milliseconds.

Run from the repository root:  ``python -m bench.vi_bench``
"""
from __future__ import annotations

import os
import sys
import timeit
from importlib import metadata

import numpy as np
import scipy.special
import scipy.stats

import wengert

try:
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.special as aspecial
    import autograd.scipy.stats as astats
except ImportError:         # the `bench` extra is not installed
    autograd = None

try:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)       # float64, as NumPy computes
    import jax.numpy as jnp
    import jax.scipy.special as jspecial
    import jax.scipy.stats as jstats
except ImportError:
    jax = None

REPEATS = 5
WARMUP_CALLS = 3
SIZES = ((100, 10, 16), (1000, 50, 64), (10000, 100, 256))   # (n, d, S)


def make_objective(xp, special, stats):
    """-IWAE bound of Bayesian logistic regression, over (mu, log_sigma)."""
    def neg_bound(mu, log_sigma, X, y, eps):
        sigma = xp.exp(log_sigma)
        w = mu + sigma * eps                                   # (S, d)
        margins = y * (w @ X.T)                                # (S, n)
        loglik = -xp.sum(xp.logaddexp(0.0, -margins), axis=1)
        logprior = xp.sum(stats.norm.logpdf(w, 0.0, 1.0), axis=1)
        logq = xp.sum(stats.norm.logpdf(w, mu, sigma), axis=1)
        log_weights = loglik + logprior - logq
        return -(special.logsumexp(log_weights) - xp.log(eps.shape[0]))
    return neg_bound


def problem(n, d, samples, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    w_true = rng.standard_normal(d)
    y = np.where(X @ w_true + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    eps = rng.standard_normal((samples, d))
    mu = 0.1 * rng.standard_normal(d)
    log_sigma = np.full(d, -1.0)
    return dict(name=f"n={n} d={d} S={samples}", args=(mu, log_sigma, X, y, eps))


def per_call_ms(fn, args):
    """Best of REPEATS per-call means, in milliseconds, after a warm-up."""
    for _ in range(WARMUP_CALLS):
        fn(*args)
    timer = timeit.Timer(lambda: fn(*args))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e3


def check_agree(name, who, got, want):
    # raise, not assert: the check must survive ``python -O``
    for k, (a, b) in enumerate(zip(got, want)):
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-10):
            raise AssertionError(f"{name}: gradient {k} of {who} differs from wengert's")


def run(prob):
    args = prob["args"]
    plain = make_objective(np, scipy.special, scipy.stats)
    g_w = wengert.grad(make_objective(np, scipy.special, scipy.stats), argnums=(0, 1),
                       engine="source")
    want = g_w(*args)
    row = dict(name=prob["name"], autograd=None, jax=None)
    if autograd is not None:
        g_a = autograd.grad(lambda p, X, y, eps: make_objective(anp, aspecial, astats)(
            p[0], p[1], X, y, eps))

        def g_a2(mu, log_sigma, X, y, eps):
            return g_a((mu, log_sigma), X, y, eps)
        check_agree(prob["name"], "autograd", g_a2(*args), want)
    if jax is not None:
        g_j = jax.jit(jax.grad(make_objective(jnp, jspecial, jstats), argnums=(0, 1)))
        jargs = tuple(jnp.asarray(a) for a in args)

        def g_j2(*a):
            return jax.block_until_ready(g_j(*a))
        check_agree(prob["name"], "jax", g_j2(*jargs), want)    # compiles it
    row["plain"] = per_call_ms(plain, args)
    row["wengert"] = per_call_ms(g_w, args)
    if autograd is not None:
        row["autograd"] = per_call_ms(g_a2, args)
    if jax is not None:
        row["jax"] = per_call_ms(g_j2, jargs)
    return row


def _fmt(v):
    return "n/a" if v is None else f"{v:.3f}"


def _ratio(a, b):
    return "n/a" if a is None or b is None else f"{a / b:.2f}x"


def print_table(rows):
    head = ("problem", "plain (ms)", "wengert (ms)", "autograd (ms)", "jax jit (ms)",
            "wengert/plain", "wengert/autograd", "wengert/jax")
    width = max(len(head[0]), *(len(r["name"]) for r in rows))
    fmt = "{:<%d}" % width + "".join("  {:>%d}" % len(h) for h in head[1:])
    print(fmt.format(*head))
    print(fmt.format(*("-" * (width if i == 0 else len(h)) for i, h in enumerate(head))))
    for r in rows:
        print(fmt.format(r["name"], _fmt(r["plain"]), _fmt(r["wengert"]), _fmt(r["autograd"]),
                         _fmt(r["jax"]), _ratio(r["wengert"], r["plain"]),
                         _ratio(r["wengert"], r["autograd"]), _ratio(r["wengert"], r["jax"])))


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def main():
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {_version('scipy')}, "
          f"autograd {_version('autograd')}, jax {_version('jax')} (CPU, x64, jit)")
    rows = [run(problem(*size)) for size in SIZES]
    print("gradients agree (np.allclose) across wengert, autograd and jax on every size")
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
