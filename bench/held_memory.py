"""What a pullback holds: memory kept by ``wg.vjp`` (trace engine) of a
Python loop that reads a global matrix at every step, at several trip
counts, against autograd's (if installed) in the same process.

The problem: ``y <- tanh(M @ y)`` for K steps, ``M`` a global SIZE x SIZE
matrix, the loss ``sum(y)``. The plain function holds ``M`` and one ``y``;
reverse mode must also keep each step's ``y`` (K x SIZE floats). wengert
keeps a copy of ``M`` (the caller may write to it before calling the
pullback), one copy while its bytes stay the same: what it holds must grow
like K x SIZE, not K x SIZE^2 (a copy of ``M`` per step).

  held      memory allocated by ``vjp`` and still held with its pullback
            (``tracemalloc``), MB;
  /M        that, over the size of ``M``;
  per step  (held - M) / K, KB: the residuals of one step.

Every pullback's gradient must equal autograd's (to 1e-12 of its largest
entry, where autograd is installed) and a central difference's along a random direction (rtol
1e-6), else the benchmark raises. Target: wengert's held memory at most
2 x M + 4 x K x SIZE floats (a miss is marked *).

Run from the repository root: ``python -m bench.held_memory``.
"""
from __future__ import annotations

import argparse
import tracemalloc

import numpy as np

import wengert as wg

try:
    import autograd
    import autograd.numpy as anp
except ImportError:                 # optional peer
    autograd = anp = None

SIZE = 300
M = np.random.default_rng(0).standard_normal((SIZE, SIZE)) / np.sqrt(SIZE)


def loss(y, k, xp=np):
    for _ in range(k):
        y = xp.tanh(M @ y)
    return xp.sum(y)


def held(vjp_of):
    """(bytes still held after ``vjp_of()``, its result)."""
    tracemalloc.start()
    out = vjp_of()
    cur, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return cur, out


def run(steps):
    rng = np.random.default_rng(1)
    y0 = rng.standard_normal(SIZE)
    rows = []
    for k in steps:
        w_bytes, (_, pullback) = held(lambda: wg.vjp(lambda y: loss(y, k), y0, engine="trace"))
        g = pullback(1.0)[0]
        d = rng.standard_normal(SIZE)
        eps = 1e-6
        fd = (loss(y0 + eps * d, k) - loss(y0 - eps * d, k)) / (2 * eps)
        if not np.isclose(g @ d, fd, rtol=1e-6, atol=1e-9):
            raise AssertionError(f"K={k}: gradient {g @ d} against finite difference {fd}")
        a_bytes = None
        if autograd is not None:
            a_bytes, (pb, _) = held(lambda: autograd.make_vjp(lambda y: loss(y, k, anp))(y0))
            ga = pb(1.0)
            if np.max(np.abs(g - ga)) > 1e-12 * np.max(np.abs(ga)):
                raise AssertionError(f"K={k}: wengert and autograd gradients differ")
        rows.append((k, w_bytes, a_bytes))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[10, 50, 200, 800])
    args = ap.parse_args()
    print(f"numpy {np.__version__}, wengert {wg.__version__}, "
          f"autograd {'missing' if autograd is None else 'present'}; M is {SIZE}x{SIZE} "
          f"({M.nbytes / 1e6:.2f} MB)")
    head = (f"{'K':>5}  {'wengert held (MB)':>17}  {'/M':>6}  {'per step (KB)':>13}  "
            f"{'autograd held (MB)':>18}  {'wengert/autograd':>16}")
    print(head)
    print("-" * len(head))
    for k, w, a in run(args.steps):
        miss = " *" if w > 2 * M.nbytes + 4 * k * SIZE * 8 else ""
        ratio = "n/a" if a is None else f"{w / a:.1f}x"
        a_text = "n/a" if a is None else f"{a / 1e6:.2f}"
        print(f"{k:>5}  {w / 1e6:>15.2f}{miss:2}  {w / M.nbytes:>5.1f}x  "
              f"{(w - M.nbytes) / k / 1e3:>13.1f}  {a_text:>18}  {ratio:>16}")
    print("* misses its target: at most 2 x M + 4 x K x SIZE floats held")


if __name__ == "__main__":
    main()
