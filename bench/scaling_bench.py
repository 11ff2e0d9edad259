"""How the cost of ``grad`` on element loops grows with the array length n.

    python -m bench.scaling_bench [--sizes 1000,10000,100000]
                                  [--engines source,trace,autograd,numba,numba-grad]
                                  [--programs branchy,euler] [--max-seconds 20] [--quick]

The programs (``bench/scaling_programs.py``: a branchy sum, Euler steps stored with
``xs[i] = x``, prefix products, a 2-D heat stencil, a ``while`` loop with an array carry,
Horner's rule over n coefficients) loop over an array one element at a time, as a scientist
writes them. For each program and each n, in one process:

  plain     the function itself (the baseline);
  source    ``wengert.grad(f, argnums)`` (the source engine), after one untimed call;
  gen       the source engine's first call less its best call: code generation and
            whatever else only the first call does, at this n (a fresh ``grad`` object
            per n; the source conversion is cached per function, so after the smallest n
            gen is the transform and code generation); "n/a" when the call itself takes
            over GEN_MAX_CALL seconds, where two calls' noise exceeds code generation;
  trace     ``wengert.grad(f, argnums, engine="trace")``;
  autograd  ``autograd.grad(f, argnum)``;
  numba     the plain function under ``numba.njit`` (compiled per n: a new function object),
            after its first call; "n/a" with numba's reason under the table where numba
            cannot compile it. Its value must equal the plain call's (rtol NUMBA_RTOL);
  numba-grad  ``wengert.grad(f, argnums, engine="source", backend="numba")``: "n/a (no
            backend)" while wengert has no numba backend; "(py)" where wengert warned that
            it ran the Python backend instead (the warning is under the table);
  cc        a numba column's compile time: its first call less its best call, per n;
  /plain    each gradient's time over the plain call's; ngrad/numba, numba-grad's time over
            the numba primal's.

euler, prefix and heat write into an array in place, which neither the trace engine nor
autograd accepts: those two differentiate the program's twin, the same mathematics with the
values appended to a Python list and stacked (see ``scaling_programs``); plain and source run
the in-place text.

Timing: one untimed call, then the best of up to REPEATS timed calls (each a batch of calls
lasting at least BATCH_SECONDS, for fast functions), stopping early once TIME_BUDGET seconds
are spent: a call slower than the budget is timed once, and one whose untimed call took over
``--max-seconds`` is not called again (that call is its time, and gen is "n/a"). Once one call
of a tool took more than ``--max-seconds`` S, the tool is skipped at the program's larger n
("skipped (>S s at smaller n)"); so is a call predicted to take over PREDICT_FACTOR * S from
the tool's growth between the two smaller n (at least linear): quadratic gradients would
otherwise run for hours at n = 1e5.

Checks, on the untimed calls' results: every gradient must agree with the source engine's
(``np.allclose``, rtol AD_RTOL, relative to the gradient's largest entry) and the source
gradient's directional derivative along a random direction with a central difference of the
plain function (rtol FD_RTOL); a disagreement prints '!' in the row and a note under the
table. A tool that raises prints "error" in its cell and the message under the table; the
bench goes on.

How to read it: a linear-time gradient keeps each /plain ratio flat as n grows; a ratio that
grows tenfold with n is a gradient quadratic in n. The closing "targets" section judges the
source engine per program (issue 14): source/plain <= RATIO_TARGET at every n measured, and
the ratio at the largest n at most GROWTH_TARGET times the ratio at the smallest; and the numba
backend (issue 15): numba-grad / numba <= NUMBA_RATIO_TARGET at the largest n.

Times are wall-clock: on a loaded machine they are noisy (the header prints the load
average); the ratios, taken a moment apart in one process, are steadier than the times.
``--quick`` runs n = 300 and 3,000 with a smaller time budget, to check the bench itself.

Run from the repository root:  ``make bench-scaling``  (or ``python -m bench.scaling_bench``).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import wengert

from .grad_bench import _version
from .numba_support import backend_problem, fell_back, first_call as first_call_warned, \
    njit, numba_version, short_reason, warm_up as warm_up_numba
from .scaling_programs import PROGRAMS

try:
    import autograd
    import autograd.numpy as anp
except ImportError:        # the `bench` extra is not installed: time the rest
    autograd = anp = None

ENGINES = ("source", "trace", "autograd", "numba", "numba-grad")
GRAD_ENGINES = ("source", "trace", "autograd", "numba-grad")   # the gradients, checked
NUMBA_COLUMNS = ("numba", "numba-grad")                         # with a compile-time column
SIZES = (1000, 10000, 100000)
QUICK_SIZES = (300, 3000)
MAX_SECONDS = 20.0
REPEATS = 5
BATCH_SECONDS = 0.02       # a timed batch of fast calls lasts at least this
TIME_BUDGET = 2.0          # seconds of timed calls per cell, at most (one call at least)
QUICK_TIME_BUDGET = 0.3
AD_RTOL = 1e-7             # between gradients, relative to the largest entry
FD_RTOL = 1e-5             # directional derivative against a central difference
FD_STEP = 1e-6             # relative to the largest input entry
RATIO_TARGET = 4.0         # source/plain at most this at every n
GROWTH_TARGET = 1.3        # source/plain at the largest n over that at the smallest
PREDICT_FACTOR = 3.0       # skip a call predicted to take over this many --max-seconds
GEN_MAX_CALL = 1.0         # gen is not reported for calls slower than this (seconds)
NUMBA_RTOL = 1e-9          # the numba primal's value against the plain call's
NUMBA_RATIO_TARGET = 3.0   # numba-grad / numba primal at the largest n, at most (issue 15)


# --- timing -----------------------------------------------------------------------
def best_seconds(fn, args, budget):
    """Best per-call time of ``fn(*args)`` in seconds, after the caller's untimed call."""
    t0 = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - t0
    best, spent = first, first
    number = max(1, int(BATCH_SECONDS / max(first, 1e-9)))
    for _ in range(REPEATS):
        if spent >= budget:
            break
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        batch = time.perf_counter() - t0
        best, spent = min(best, batch / number), spent + batch
    return best


def first_call(fn, args):
    """The untimed call: its result and how long it took."""
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


# --- checks -----------------------------------------------------------------------
def _leaves(g):
    return [np.asarray(v, dtype=float) for v in (g if isinstance(g, tuple) else (g,))]


def disagreement(got, want):
    """None if the gradients agree, else a short description of the largest difference."""
    gl, wl = _leaves(got), _leaves(want)
    if len(gl) != len(wl):
        return f"{len(gl)} gradients, expected {len(wl)}"
    for k, (g, w) in enumerate(zip(gl, wl)):
        if g.shape != w.shape:
            return f"gradient {k} has shape {g.shape}, expected {w.shape}"
        scale = max(float(np.max(np.abs(w), initial=0.0)), 1e-300)
        err = float(np.max(np.abs(g - w), initial=0.0))
        if not err <= AD_RTOL * scale:          # also catches NaN
            return f"gradient {k}: max difference {err:.3g} (largest entry {scale:.3g})"
    return None


def fd_disagreement(plain, args, argnums, grad, rng):
    """None if <grad, v> matches a central difference of ``plain`` along a random v."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    dirs = {i: rng.standard_normal(np.shape(args[i])) for i in nums}
    scale = max(float(np.max(np.abs(args[i]))) for i in nums)
    h = FD_STEP * max(scale, 1.0)

    def at(sign):
        moved = list(args)
        for i in nums:
            moved[i] = args[i] + sign * h * dirs[i]
        return float(plain(*moved))
    fd = (at(1.0) - at(-1.0)) / (2 * h)
    ad = sum(float(np.sum(g * dirs[i])) for g, i in zip(_leaves(grad), nums))
    if abs(ad - fd) <= FD_RTOL * max(abs(fd), 1.0):
        return None
    return f"directional derivative {ad:.10g}, central difference {fd:.10g}"


def _error(err):
    msg = str(err).strip().splitlines()
    return f"{type(err).__name__}: {msg[0] if msg else ''}"


# --- one program at one n -----------------------------------------------------------
def gradient_fns(prog, engines, numba_problem=None):
    """engine -> the gradient function it times; the twin where the text writes in place."""
    functional = prog.twin or prog.make
    fns = {}
    if "numba-grad" in engines and numba_problem is None:
        fns["numba-grad"] = lambda: wengert.grad(prog.make(np), argnums=prog.argnums,
                                                 engine="source", backend="numba")
    if "source" in engines:
        fns["source"] = lambda: wengert.grad(prog.make(np), argnums=prog.argnums)
    if "trace" in engines:
        fns["trace"] = lambda: wengert.grad(functional(np), argnums=prog.argnums,
                                            engine="trace")
    if "autograd" in engines and autograd is not None:
        fns["autograd"] = lambda: autograd.grad(functional(anp), argnum=prog.argnums)
    return fns


def skip_reason(history, n, max_seconds):
    """Why a tool is not run at ``n``, or None; ``history``: its (n, seconds) so far."""
    if not history:
        return None
    if max(t for _, t in history) > max_seconds:
        return f"skipped (>{max_seconds:g} s at smaller n)"
    n2, t2 = history[-1]
    power = 1.0                       # one size measured: assume linear growth
    if len(history) > 1:
        n1, t1 = history[-2]
        if t1 > 0 and n2 > n1:
            power = max(power, math.log(t2 / t1) / math.log(n2 / n1))
    predicted = t2 * (n / n2) ** power
    if predicted > PREDICT_FACTOR * max_seconds:
        return (f"skipped (predicted {predicted:.0f} s > {PREDICT_FACTOR * max_seconds:g} s "
                f"from its growth at smaller n, n^{power:.1f})")
    return None


def measure_numba_primal(row, plain, args, opts):
    """The plain function under numba.njit: its time and compile time in ``row``."""
    try:
        compiled = njit(plain)
        value, first, _ = first_call_warned(compiled, args)
        best = best_seconds(compiled, args, opts.budget)
    except Exception as err:                    # noqa: BLE001 -- numba's reason, reported
        row["time"]["numba"] = "n/a"
        row["notes"].append(f"numba cannot compile the plain function: {short_reason(err)}")
        return
    row["time"]["numba"], row["cc"]["numba"] = best, max(first - best, 0.0)
    row["numba_value"] = value
    want = plain(*args)
    if not np.allclose(value, want, rtol=NUMBA_RTOL, atol=0.0):
        row["mismatch"] = True
        row["notes"].append(f"the numba primal gives {value!r}, the plain call {want!r}")


def measure(prog, n, engines, history, opts):
    """One table row: times (seconds) per tool and notes. ``history``: tool -> its
    (n, seconds) at the smaller n, which decides whether it runs at this n."""
    args = prog.inputs(n, np.random.default_rng(n))
    plain = prog.make(np)
    row = dict(name=prog.name, n=n, time={}, gen=None, cc={}, notes=[], mismatch=False)
    first_call(plain, args)
    row["time"]["plain"] = best_seconds(plain, args, opts.budget)
    if "numba" in engines:
        measure_numba_primal(row, prog.make(np), args, opts)
    if "numba-grad" in engines and opts.numba_problem is not None:
        row["time"]["numba-grad"] = f"n/a ({opts.numba_problem})"
    grads = {}
    for eng, build in gradient_fns(prog, engines, opts.numba_problem).items():
        why = skip_reason(history.setdefault(eng, []), n, opts.max_seconds)
        if why:
            row["time"][eng] = "skipped"
            row["notes"].append(f"{eng} {why}")
            continue
        try:
            fn = build()
            grads[eng], first, warned = first_call_warned(fn, args)
            slow = first > opts.max_seconds
            best = first if slow else best_seconds(fn, args, opts.budget)
        except Exception as err:                # noqa: BLE001 -- reported, not fatal
            row["time"][eng] = "error"
            row["notes"].append(f"{eng} raised {_error(err)}")
            continue
        row["time"][eng] = best
        history[eng].append((n, best))
        if eng == "source" and best <= GEN_MAX_CALL:
            row["gen"] = max(first - best, 0.0)
        if eng == "numba-grad":
            row["cc"][eng] = None if slow else max(first - best, 0.0)
            row["python_instead"] = fell_back(warned)
            row["notes"] += [f"numba-grad: wengert warned: {w}" for w in warned]
    row["checked"] = bool(grads)
    ref = "source" if "source" in grads else next(iter(grads), None)
    for eng, g in grads.items():
        if eng != ref:
            bad = disagreement(g, grads[ref])
            if bad:
                row["mismatch"] = True
                row["notes"].append(f"{eng} disagrees with {ref}: {bad}")
    if ref is not None:
        bad = fd_disagreement(plain, args, prog.argnums, grads[ref], np.random.default_rng(1))
        if bad:
            row["mismatch"] = True
            row["notes"].append(f"{ref} disagrees with finite differences: {bad}")
    return row


# --- printing -------------------------------------------------------------------
def fmt_time(t):
    if not isinstance(t, float):
        return "n/a" if t is None else t
    if t == 0.0:
        return "~0"              # gen: the first call was no slower than the best (noise)
    if t >= 1.0:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.1f} ms"
    return f"{t * 1e6:.3g} us"


def ratio(row, eng, base="plain"):
    t, p = row["time"].get(eng), row["time"].get(base)
    return t / p if isinstance(t, float) and isinstance(p, float) else None


def ratio_columns(engines):
    """(column title, engine, baseline): gradients over the plain call, and numba-grad over
    the numba primal."""
    cols = [(f"{eng}/plain", eng, "plain") for eng in engines if eng in GRAD_ENGINES
            and eng != "numba-grad"]
    if "numba-grad" in engines:
        cols.append(("ngrad/numba", "numba-grad", "numba"))
    return cols


def columns(engines):
    cols = [("program", 8), ("n", 7), ("plain", 9)]
    for eng in engines:
        width = 16 if eng == "numba-grad" else 9
        cols.append((eng, width))
        if eng == "source":
            cols.append(("gen", 9))
        if eng in NUMBA_COLUMNS:
            cols.append(("cc", 9))
    cols += [(title, max(len(title), 8)) for title, _, _ in ratio_columns(engines)]
    return cols + [("agree", 5)]


def format_row(row, engines):
    cells = [row["name"], f"{row['n']:,}", fmt_time(row["time"]["plain"])]
    for eng in engines:
        text = fmt_time(row["time"].get(eng))
        cells.append(text + (" (py)" if eng == "numba-grad" and row.get("python_instead")
                             else ""))
        if eng == "source":
            cells.append(fmt_time(row["gen"]))
        if eng in NUMBA_COLUMNS:
            cells.append(fmt_time(row["cc"].get(eng)) if eng in row["cc"] else "-")
    for _, eng, base in ratio_columns(engines):
        r = ratio(row, eng, base)
        cells.append("-" if r is None else f"{r:.1f}x")
    cells.append("!" if row["mismatch"] else "yes" if row["checked"] else "-")
    return cells


def print_line(cells, cols):
    print("  ".join(c.ljust(w) if k == 0 else c.rjust(w)
                    for k, (c, (_, w)) in enumerate(zip(cells, cols))), flush=True)


def targets(rows):
    """program -> (passed, reason): the source engine's ratio at every n and its growth."""
    out = {}
    for name in dict.fromkeys(r["name"] for r in rows):
        mine = sorted((r for r in rows if r["name"] == name), key=lambda r: r["n"])
        ratios = [ratio(r, "source") for r in mine]
        if any(x is None for x in ratios):
            missing = [f"{r['n']:,}" for r, x in zip(mine, ratios) if x is None]
            out[name] = (False, f"source not measured at n = {', '.join(missing)}")
            continue
        worst = max(ratios)
        growth = ratios[-1] / ratios[0]
        ok = worst <= RATIO_TARGET and growth <= GROWTH_TARGET
        out[name] = (ok, f"source/plain {' -> '.join(f'{x:.1f}x' for x in ratios)}; "
                         f"max {worst:.1f}x (<= {RATIO_TARGET:g}), growth "
                         f"{growth:.2f}x (<= {GROWTH_TARGET:g})")
    return out


def numba_targets(rows):
    """program -> (passed, reason): numba-grad over the numba primal at the largest n."""
    out = {}
    for name in dict.fromkeys(r["name"] for r in rows):
        last = max((r for r in rows if r["name"] == name), key=lambda r: r["n"])
        r = ratio(last, "numba-grad", "numba")
        if r is None:
            out[name] = (False, f"not measured at n = {last['n']:,} (numba "
                                f"{fmt_time(last['time'].get('numba'))}, numba-grad "
                                f"{fmt_time(last['time'].get('numba-grad'))})")
        elif last.get("python_instead"):
            out[name] = (False, f"numba-grad ran on the Python backend ({r:.1f}x)")
        else:
            out[name] = (r <= NUMBA_RATIO_TARGET,
                         f"numba-grad/numba {r:.1f}x at n = {last['n']:,} "
                         f"(<= {NUMBA_RATIO_TARGET:g})")
    return out


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.scaling_bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=None,
                        help=f"comma-separated n (default {','.join(map(str, SIZES))})")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated, of " + ", ".join(ENGINES))
    parser.add_argument("--programs", default=",".join(p.name for p in PROGRAMS),
                        help="comma-separated program names")
    parser.add_argument("--max-seconds", type=float, default=MAX_SECONDS,
                        help="skip a tool at larger n once one call took longer (seconds)")
    parser.add_argument("--quick", action="store_true",
                        help=f"n = {','.join(map(str, QUICK_SIZES))}, a smaller time budget")
    opts = parser.parse_args(argv)
    sizes = opts.sizes or ",".join(map(str, QUICK_SIZES if opts.quick else SIZES))
    opts.sizes = sorted(int(s.replace("_", "")) for s in sizes.split(","))
    opts.engines = [e for e in ENGINES if e in opts.engines.split(",")]
    unknown = set(opts.programs.split(",")) - {p.name for p in PROGRAMS}
    if unknown:
        parser.error(f"unknown programs {sorted(unknown)}; "
                     f"known: {', '.join(p.name for p in PROGRAMS)}")
    opts.programs = [p for p in PROGRAMS if p.name in opts.programs.split(",")]
    opts.budget = QUICK_TIME_BUDGET if opts.quick else TIME_BUDGET
    return opts


def main(argv=None):
    opts = parse(sys.argv[1:] if argv is None else argv)
    t_start = time.perf_counter()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    opts.numba_problem = backend_problem("numba") if "numba-grad" in opts.engines else None
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"wengert {_version('wengert')}, "
          f"autograd {_version('autograd') if autograd is not None else 'missing'}, "
          f"numba {numba_version() or 'missing'}; "
          f"{os.cpu_count()} cpus, load average {load}")
    engines = [e for e in opts.engines if e != "autograd" or autograd is not None]
    if "autograd" in opts.engines and autograd is None:
        print("autograd is not installed (pip install -e '.[bench]'): timing the rest")
    if opts.numba_problem is not None:
        print(f"numba-grad: n/a ({opts.numba_problem}): wengert.grad takes no "
              "backend='numba' here")
    print(f"wall-clock, best of up to {REPEATS} timed calls after one untimed call; "
          f"--max-seconds {opts.max_seconds:g}; trace and autograd run the list twin of "
          f"euler, prefix, heat; heat's n is the nominal size (grid round(sqrt(n))^2 cells)")
    print()
    # load the engines' modules once, so the first program's times do not include them
    wengert.grad(lambda x: x * x)(1.0)
    if "numba" in engines:
        warm_up_numba()
    cols = columns(engines)
    print_line([c for c, _ in cols], cols)
    print_line(["-" * w for _, w in cols], cols)
    rows = []
    for prog in opts.programs:
        history = {}
        for n in opts.sizes:
            row = measure(prog, n, engines, history, opts)
            rows.append(row)
            print_line(format_row(row, engines), cols)
    notes = [(r, note) for r in rows for note in r["notes"]]
    if notes:
        print()
        for r, note in notes:
            print(f"{r['name']} n={r['n']:,}: {note}")
    if "source" in engines:
        print(f"\ntargets (source engine): source/plain <= {RATIO_TARGET:g} at every n, and "
              f"its growth from n = {opts.sizes[0]:,} to {opts.sizes[-1]:,} <= "
              f"{GROWTH_TARGET:g}x")
        for name, (ok, why) in targets(rows).items():
            print(f"  {name:<8}  {'PASS' if ok else 'FAIL'}  {why}")
    if "numba-grad" in engines and "numba" in engines:
        print(f"\ntargets (numba backend, issue 15): numba-grad / numba primal <= "
              f"{NUMBA_RATIO_TARGET:g} at n = {opts.sizes[-1]:,}")
        for name, (ok, why) in numba_targets(rows).items():
            print(f"  {name:<8}  {'PASS' if ok else 'FAIL'}  {why}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s; load average {load}")
    return rows


if __name__ == "__main__":
    main()
