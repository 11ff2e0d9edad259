"""Reverse mode through a long loop: peak memory and time of each
checkpointing schedule against storing everything.

The problem: explicit Euler for ``x' = sin(x) - x^3`` on a state of SIZE
floats, STEPS steps of ``h = 1 / STEPS``, as ``wg.fori_loop(STEPS, step, x0,
checkpoint=...)``; the loss is the sum of the final state, differentiated
with respect to the initial state by ``wg.grad`` (``--engine``, default
``source``: generated code). Per schedule, in one process:

  held        the most states held at once, the current one included
              (``control.schedules.count``; store-all: every step, each
              with its residuals, three arrays of SIZE floats here);
  recomputed  steps run again in the reverse sweep;
  memory      peak traced memory (``tracemalloc``) of the first gradient
              call, MB (it also generates the code, a few milliseconds);
  time        the second call, seconds (without tracemalloc, which slows
              Python down).

Every gradient must equal the store-all gradient (rtol 1e-12), else the
benchmark raises. Targets: CTZ's memory at most 2% of store-all's, and
binomial with 20 snapshots at most 3x store-all's time (a miss is marked *).

Run from the repository root: ``python -m bench.checkpoint_bench``
(``--steps 10000`` for a quick run; store-all at 100000 steps holds about
2.4 GB).
"""
from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np

import wengert as wg
from wengert.control.schedules import count, schedule_of

SCHEDULES = [("store-all", None, None), ("ctz", "ctz", None), ("binomial s=20", "binomial", 20),
             ("binomial s=100", "binomial", 100)]
GRAD_RTOL = 1e-12
MEMORY_TARGET = 0.02        # ctz memory / store-all memory, at most
TIME_TARGET = 3.0           # binomial(20) time / store-all time, at most


def make_loss(checkpoint, snapshots):
    def loss(x0, h, n):
        def step(i, x):
            return x + h * (np.sin(x) - x * x * x)
        return np.sum(wg.fori_loop(n, step, x0, checkpoint=checkpoint, snapshots=snapshots))
    return loss


def plain(x0, h, n):
    x = x0
    for _ in range(n):
        x = x + h * (np.sin(x) - x * x * x)
    return np.sum(x)


def measure(grad_fn, args):
    """(gradient, seconds, peak MB): the first call, traced by tracemalloc,
    generates the code; the second is timed."""
    gc.collect()
    tracemalloc.start()
    grad_fn(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    gc.collect()
    start = time.perf_counter()
    g = grad_fn(*args)
    return g, time.perf_counter() - start, peak / 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--engine", default="source", choices=("source", "trace"))
    opts = ap.parse_args(argv)
    n = opts.steps
    x0 = np.linspace(-1.0, 1.0, opts.size)
    args = (x0, 1.0 / n, n)
    start = time.perf_counter()
    plain(*args)
    plain_s = time.perf_counter() - start
    print(f"explicit Euler, x' = sin(x) - x^3: {n} steps of a {opts.size}-float state; "
          f"grad by the {opts.engine} engine (the loop alone: {plain_s:.2f} s)\n")
    rows, ref = [], None
    for label, checkpoint, snapshots in SCHEDULES:
        g, seconds, mb = measure(wg.grad(make_loss(checkpoint, snapshots), engine=opts.engine),
                                 args)
        if ref is None:
            ref = g
        else:
            np.testing.assert_allclose(g, ref, rtol=GRAD_RTOL, atol=0,
                                       err_msg=f"{label}: gradient differs from store-all's")
        schedule = schedule_of(checkpoint, snapshots)
        if schedule is None:
            stored, recomputed = n, 0
        else:
            c = count(schedule, n)
            stored, recomputed = c.max_held, c.recomputed
        rows.append((label, stored, recomputed, mb, seconds))
        del g
    base_mb, base_s = rows[0][3], rows[0][4]
    print("| schedule | states held | recomputed steps | peak memory (MB) | memory / store-all "
          "| grad time (s) | time / store-all |")
    print("|---|---|---|---|---|---|---|")
    for label, stored, recomputed, mb, seconds in rows:
        mem_ratio, time_ratio = mb / base_mb, seconds / base_s
        miss_m = "*" if label == "ctz" and mem_ratio > MEMORY_TARGET else ""
        miss_t = "*" if label == "binomial s=20" and time_ratio > TIME_TARGET else ""
        print(f"| {label} | {stored} | {recomputed} | {mb:.1f} | {100 * mem_ratio:.2f}%{miss_m} "
              f"| {seconds:.2f} | {time_ratio:.2f}x{miss_t} |")
    print(f"\ntargets: ctz memory <= {100 * MEMORY_TARGET:.0f}% of store-all's; binomial s=20 "
          f"time <= {TIME_TARGET:.0f}x store-all's (* marks a miss)")


if __name__ == "__main__":
    main()
