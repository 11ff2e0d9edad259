"""Gradient of an FFT-based objective: wengert (source engine) against
autograd and JAX, at three sizes.

The objective is a regularised deconvolution: find a signal ``x`` whose blur
by a kernel (a product with its transfer function ``h`` in the Fourier
domain, ``rfft``/``irfft``) matches an observation ``y``, with a spectral
smoothness penalty (``|X_k|^2 k^2``, the squared derivative by Parseval):

    loss(x) = sum((irfft(rfft(x) * h, n) - y)^2) + lam * sum(|rfft(x)|^2 * k^2) / n

Each library runs the same body, written against its numpy module (plain
``numpy`` for the baseline and wengert, ``autograd.numpy``, ``jax.numpy``).
Timings, per call, in milliseconds: the plain function; ``wengert.grad`` of
the source engine (generated once, timed after); ``autograd.grad``; JAX's
``jax.jit(jax.grad(f))`` on CPU in float64 (compiled first, timed after,
``block_until_ready``). The gradients must agree before anything is timed.
Ratios are gradient time over plain-function time, and wengert over each peer.

Run from the repository root:  ``python -m bench.fft_bench``.
"""
from __future__ import annotations

import timeit

import numpy as np

import wengert

try:
    import autograd
    import autograd.numpy as anp
except ImportError:         # the bench extra is not installed: time wengert alone
    autograd = anp = None

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None

SIZES = (4_096, 65_536, 1_048_576)
REPEATS = 5


def make_loss(xp, h, y, k2, lam):
    """The objective over numpy module ``xp`` (constants closed over)."""
    n = y.shape[0]

    def loss(x):
        spec = xp.fft.rfft(x)
        blurred = xp.fft.irfft(spec * h, n)
        misfit = xp.sum((blurred - y) ** 2)
        smooth = xp.sum(xp.abs(spec) ** 2 * k2)
        return misfit + lam * smooth / n
    return loss


def problem(n, seed=0):
    rng = np.random.default_rng(seed)
    freq = np.arange(n // 2 + 1)
    h = np.exp(-(freq / (0.1 * n)) ** 2) * np.exp(-2j * np.pi * freq * 3 / n)   # blur + shift
    k2 = (freq / n) ** 2
    truth = np.cumsum(rng.standard_normal(n)) / np.sqrt(n)
    y = np.fft.irfft(np.fft.rfft(truth) * h, n) + 0.01 * rng.standard_normal(n)
    x = rng.standard_normal(n) * 0.1
    return x, h, y, k2, 1e-2


def per_call_ms(fn, arg):
    for _ in range(2):
        fn(arg)
    timer = timeit.Timer(lambda: fn(arg))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e3


def run(sizes=SIZES):
    rows = []
    for n in sizes:
        x, h, y, k2, lam = problem(n)
        plain = make_loss(np, h, y, k2, lam)
        wg_grad = wengert.grad(plain, engine="source")
        g_ref = wg_grad(x)
        row = {"n": n, "plain": per_call_ms(plain, x), "wengert": per_call_ms(wg_grad, x)}
        if autograd is not None:
            ag_grad = autograd.grad(make_loss(anp, h, y, k2, lam))
            assert np.allclose(ag_grad(x), g_ref, rtol=1e-8, atol=1e-10), "autograd disagrees"
            row["autograd"] = per_call_ms(ag_grad, x)
        if jax is not None:
            jx_grad = jax.jit(jax.grad(make_loss(jnp, jnp.asarray(h), jnp.asarray(y),
                                                 jnp.asarray(k2), lam)))
            xj = jnp.asarray(x)
            assert np.allclose(np.asarray(jx_grad(xj)), g_ref, rtol=1e-8, atol=1e-10), \
                "JAX disagrees"
            row["jax"] = per_call_ms(lambda a: jx_grad(a).block_until_ready(), xj)
        rows.append(row)
    return rows


def table(rows):
    peers = [p for p in ("autograd", "jax") if p in rows[0]]
    head = (f"{'n':>9} {'plain ms':>9} {'wengert ms':>11} {'x plain':>8}"
            + "".join(f" {p + ' ms':>12} {'x plain':>8}" for p in peers)
            + "".join(f" {'wg/' + p:>11}" for p in peers))
    lines = [head, "-" * len(head)]
    for r in rows:
        line = (f"{r['n']:>9} {r['plain']:>9.3f} {r['wengert']:>11.3f} "
                f"{r['wengert'] / r['plain']:>8.2f}")
        for p in peers:
            line += f" {r[p]:>12.3f} {r[p] / r['plain']:>8.2f}"
        for p in peers:
            line += f" {r['wengert'] / r[p]:>11.2f}"
        lines.append(line)
    return "\n".join(lines)


def main():
    print("grad of a deconvolution + spectral smoothness loss (rfft/irfft), float64, CPU")
    print(table(run()))


if __name__ == "__main__":
    main()
