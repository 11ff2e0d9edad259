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

The ``while`` case: the same step as a ``while`` loop on a float clock,
``while t < 1``, whose trip count (WHILE_STEPS, default 2000) the loop finds
only when it ends: under the source engine the statement ``while
wg.checkpointed(t < T):`` against the plain ``while``; under the trace
engine ``wg.while_loop(..., checkpoint="ctz")`` against
``checkpoint=None``. Its table gives the same columns; target: the
checkpointed gradient's peak memory at most 1.5 MB (2000 steps on 1000
floats; a miss is marked *).

With ``--backend numba`` (or ``both``) the ``while`` table is printed again for the
numba backend's compiled gradients, whose arrays numba allocates outside Python's
allocator, unseen by tracemalloc: there ``memory`` is the growth of the process's peak
resident set over a call made after the first (``/proc/self/status``'s VmHWM, reset
through ``/proc/self/clear_refs``, after glibc's ``malloc_trim``; Linux), and ``compile`` numba's compile time of each
gradient (cold: numba's disk cache empty; ``NUMBA_CACHE_DIR``, ``WENGERT_CACHE_DIR``).

Run from the repository root: ``python -m bench.checkpoint_bench``
(``--steps 10000`` for a quick run; store-all at 100000 steps holds about
2.4 GB; ``--case while`` for the ``while`` table alone).
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import time
import tracemalloc

import numpy as np

import wengert as wg
from wengert.control.schedules import CTZ, count, schedule_of

SCHEDULES = [("store-all", None, None), ("ctz", "ctz", None), ("binomial s=20", "binomial", 20),
             ("binomial s=100", "binomial", 100)]
GRAD_RTOL = 1e-12
MEMORY_TARGET = 0.02        # ctz memory / store-all memory, at most
TIME_TARGET = 3.0           # binomial(20) time / store-all time, at most
WHILE_MB_TARGET = 1.5       # the checkpointed while loop's peak memory (MB), at most


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


def _peak_rss():
    """The process's peak resident set, bytes (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmHWM in /proc/self/status")


def measure_compiled(grad_fn, args):
    """(gradient, seconds, peak MB, compile seconds) of a numba gradient: the first call
    compiles; the peak is the resident set's growth over the second (the peak reset
    before it); the third is timed."""
    grad_fn(*args)
    compile_s = grad_fn.last.fn.compile_seconds
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)    # freed heap pages back to the system (glibc)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")                    # the peak resident set := the current one
    base = _peak_rss()
    grad_fn(*args)
    peak = _peak_rss() - base
    start = time.perf_counter()
    g = grad_fn(*args)
    return g, time.perf_counter() - start, peak / 1e6, compile_s


def while_statement(x, h, T):
    t = 0.0
    while t < T:
        x = x + h * (np.sin(x) - x * x * x)
        t = t + h
    return np.sum(x)


def while_statement_ckpt(x, h, T):
    t = 0.0
    while wg.checkpointed(t < T):
        x = x + h * (np.sin(x) - x * x * x)
        t = t + h
    return np.sum(x)


def make_while_loss(checkpoint):
    def loss(x, h, T):
        def step(c):
            t, y = c
            return t + h, y + h * (np.sin(y) - y * y * y)
        return np.sum(wg.while_loop(lambda c: c[0] < T, step, (0.0, x), checkpoint=checkpoint)[1])
    return loss


def while_table(n, size, engine, backend="python"):
    """The ``while`` case: rows of (label, held, recomputed, MB, seconds); for numba,
    the labels give each gradient's compile time."""
    x0 = np.linspace(-1.0, 1.0, size)
    args = (x0, 1.0 / n, 1.0 - 0.5 / n)        # n steps of h = 1/n until t reaches 1
    if engine == "source":
        fns = [("store-all (while)", while_statement),
               ("ctz (while wg.checkpointed)", while_statement_ckpt)]
    else:
        fns = [("store-all (wg.while_loop)", make_while_loss(None)),
               ("ctz (wg.while_loop)", make_while_loss("ctz"))]
    print(f"\nwhile loop: the same step until t reaches 1, {n} steps of a {size}-float state; "
          f"grad by the {engine} engine, {backend} backend\n")
    rows, ref = [], None
    for label, fn in fns:
        if backend == "numba":
            g, seconds, mb, compile_s = measure_compiled(
                wg.grad(fn, engine=engine, backend="numba", fallback=False), args)
            label = f"{label}, numba (compile {compile_s:.1f} s)"
        else:
            g, seconds, mb = measure(wg.grad(fn, engine=engine), args)
        if ref is None:
            ref = g
        else:
            np.testing.assert_allclose(g, ref, rtol=GRAD_RTOL, atol=0,
                                       err_msg=f"{label}: gradient differs from store-all's")
        if label.startswith("store-all"):
            rows.append((label, n, 0, mb, seconds))
        else:
            c = count(CTZ(), n)
            rows.append((label, c.max_held, c.recomputed, mb, seconds))
    return rows


def print_table(rows, miss_m=lambda label, ratio, mb: "", miss_t=lambda label, ratio: ""):
    base_mb, base_s = rows[0][3], rows[0][4]
    print("| schedule | states held | recomputed steps | peak memory (MB) | memory / store-all "
          "| grad time (s) | time / store-all |")
    print("|---|---|---|---|---|---|---|")
    for label, stored, recomputed, mb, seconds in rows:
        mem_ratio, time_ratio = mb / base_mb, seconds / base_s
        print(f"| {label} | {stored} | {recomputed} | {mb:.2f}{miss_m(label, mem_ratio, mb)} "
              f"| {100 * mem_ratio:.2f}% | {seconds:.3f} | {time_ratio:.2f}x"
              f"{miss_t(label, time_ratio)} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--while-steps", type=int, default=2000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--engine", default="source", choices=("source", "trace"))
    ap.add_argument("--case", default="both", choices=("for", "while", "both"))
    ap.add_argument("--backend", default="python", choices=("python", "numba", "both"),
                    help="the while table's backend (numba: compiled, peak resident set)")
    opts = ap.parse_args(argv)
    if opts.case != "while":
        for_case(opts)
    if opts.case != "for":
        for backend in ("python", "numba") if opts.backend == "both" else (opts.backend,):
            rows = while_table(opts.while_steps, opts.size, opts.engine, backend)
            print_table(rows, miss_m=lambda label, ratio, mb: "*" if label.startswith("ctz")
                        and mb > WHILE_MB_TARGET else "")
        print(f"\ntarget: the checkpointed while loop's peak memory <= {WHILE_MB_TARGET} MB "
              "(* marks a miss)")


def for_case(opts):
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
    print_table(rows, miss_m=lambda label, ratio, mb: "*" if label == "ctz"
                and ratio > MEMORY_TARGET else "",
                miss_t=lambda label, ratio: "*" if label == "binomial s=20"
                and ratio > TIME_TARGET else "")
    print(f"\ntargets: ctz memory <= {100 * MEMORY_TARGET:.0f}% of store-all's; binomial s=20 "
          f"time <= {TIME_TARGET:.0f}x store-all's (* marks a miss)")


if __name__ == "__main__":
    main()
