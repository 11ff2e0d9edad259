"""The GradBench comparison: wengert against JAX and PyTorch, in one process, on one core.

    python -m bench.gradbench_compare [--evals gmm,lse] [--quick] [--manual FILE]
                                                                      (or: make bench-gradbench)

For every GradBench eval, at the size its wengert module's ``make_input()`` gives (GradBench's
default size; the data files of ``../shared/gradbench-data`` where the eval ships data), each
function -- the objective and each derivative -- is timed for

  source, trace   wengert's eval module (``bench/gradbench/evals/<eval>.py``) per engine
  wengert-numba   the same module with ``backend="numba"`` (source engine; the objective
                  under ``wengert.jit``): "n/a" while wengert has no numba backend; "(py)"
                  marks a function that wengert ran on the Python backend instead (its
                  warning is in the notes); its compile time (first call less best) is in
                  the notes and in its own column, ``nb compile``
  jax, torch      ``bench/gradbench/peers_jax.py`` and ``peers_torch.py``, for the evals that
                  GradBench's own JAX and PyTorch tools implement, with the same strategies
  manual          GradBench's C++ ``manual`` tool (derivatives by hand), not run here: the
                  figures of ``python -m bench.gradbench_manual CHECKOUT --json FILE`` read
                  from ``--manual FILE`` (taken at the same input; "n/a" without the file)

Every tool gets the same GradBench-format input; ``prepare`` (JSON to arrays) and ``output``
(result to JSON) are not timed. After one untimed call (code generation, JIT compilation), a
function is run until it has run ``--min-runs`` times and for ``--min-seconds`` in all; the
table shows the best (smallest) time. The runs of all tools and functions of an eval are
interleaved, one sample each per round, so that load that comes and goes on the machine falls
on all of them alike. The clock is the process's CPU time (``--clock cpu``, the default: the
process runs on one CPU, and time slices taken by other programs are not counted) or elapsed
time (``--clock wall``). A tool whose first call takes over ``--slow`` seconds is timed once
more only; a call over ``--timeout`` seconds is abandoned ("timeout").

Outputs are compared with wengert's source-engine output (the trace engine's if the source
engine failed): every number must agree to 1e-6, relative to the larger of its own magnitude
and 1e-3 of the largest magnitude in the output ('!' and a note otherwise). A missing peer
prints "n/a"; an error prints in the table, with its message under it, and the bench goes on.

Columns: times per tool; ``wg/jax``, ``wg/torch`` and ``wg/manual``, wengert's time (its
fastest engine or backend) over the peer's (below 1: wengert is faster); ``d/obj``, wengert's
derivative time over its objective time. The closing section checks the targets: wengert's
derivative <= JAX's and <= PyTorch's, derivative / objective <= 4 on gmm, lse, llsq, kmeans,
lstm and ode, and derivative <= 2x the manual tool's (issue 15).

One core: before NumPy, JAX or PyTorch load (re-executing itself if one already has), the
process sets OMP/MKL/OpenBLAS to one thread and XLA's CPU client single-threaded
(``XLA_FLAGS``); it then pins itself to one CPU and sets PyTorch to one thread.
"""
from __future__ import annotations

import os
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1", "JAX_PLATFORMS": "cpu"}
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def _one_core_env_missing():
    return (any(os.environ.get(k) != v for k, v in ONE_THREAD.items())
            or XLA_ONE_THREAD not in os.environ.get("XLA_FLAGS", ""))


if __name__ == "__main__" and _one_core_env_missing():
    # thread pools read these when NumPy, JAX and PyTorch load: set them before the imports
    # below, or, if one of those is loaded already, set them and start again
    os.environ.update(ONE_THREAD)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + XLA_ONE_THREAD).strip()
    if any(name in sys.modules for name in ("numpy", "jax", "torch")):
        os.execv(sys.executable, [sys.executable, "-m", "bench.gradbench_compare", *sys.argv[1:]])

import argparse  # noqa: E402  (after the re-exec above)
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import wengert as wg  # noqa: E402

from bench.numba_support import (backend_problem, fell_back, numba_version,  # noqa: E402
                                  wengert_warnings)

# The twelve evals, in GradBench's order, with their functions; the first is the objective
# (particle and saddle ask only for derivatives).
EVALS = {
    "hello": ("square", "double"),
    "gmm": ("objective", "jacobian"),
    "ba": ("objective", "jacobian"),
    "ht": ("objective", "jacobian"),
    "lstm": ("objective", "jacobian"),
    "lse": ("primal", "gradient"),
    "llsq": ("primal", "gradient"),
    "det": ("primal", "gradient"),
    "kmeans": ("cost", "dir"),
    "ode": ("primal", "gradient"),
    "particle": ("rr", "ff", "fr", "rf"),
    "saddle": ("rr", "ff", "fr", "rf"),
}
NO_OBJECTIVE = {"particle", "saddle"}
RATIO_TARGET_EVALS = ("gmm", "lse", "llsq", "kmeans", "lstm", "ode")
RATIO_TARGET = 4.0
TOOLS = ("source", "trace", "wengert-numba", "jax", "torch")
WENGERT_TOOLS = ("source", "trace", "wengert-numba")   # wengert's time: the fastest of these
REFERENCE_TOOLS = ("source", "trace")                   # whose output the others must match
NUMBA_TOOL = "wengert-numba"
PEERS = {"jax": "bench.gradbench.peers_jax", "torch": "bench.gradbench.peers_torch"}
MANUAL = "manual"          # GradBench's C++ tool: figures read from --manual FILE
MANUAL_TARGET = 2.0        # wengert's derivative / manual's, at most (issue 15)
RTOL = 1e-6
FLOOR = 1e-3


# --- one cell: one function of one tool --------------------------------------------
class Cell:
    """What one tool did on one function: a time (ns) and an output, or why not."""

    def __init__(self, time_ns=None, runs=0, output=None, error=None, na=False, timed_out=False,
                 first_ns=None, fallbacks=()):
        self.time_ns, self.runs, self.output, self.error, self.na = time_ns, runs, output, error, na
        self.timed_out = timed_out
        self.mismatch = None        # max relative error when it disagrees with the reference
        self.first_ns = first_ns    # the untimed first call (code generation, compilation)
        self.fallbacks = list(fallbacks)   # wengert's warnings then (it ran Python instead)


def short_error(exc):
    text = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


class CallTimeout(Exception):
    pass


def _alarm(signum, frame):
    # fire again in a second: a callback that swallows the exception (a garbage-collector
    # hook, say) must not let the call run on unbounded
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    raise CallTimeout


class Measurement:
    """One tool on one function: ``start`` prepares (untimed) and makes one untimed call,
    then ``sample`` takes timed samples until ``done``; ``cell`` gives the best.

    A sample is one call, or as many as take about a millisecond for a fast function (the time
    kept is per call). A tool whose first call takes over ``opts.slow`` seconds is timed once
    more only; a call over ``opts.timeout`` seconds (wall time) is abandoned."""

    def __init__(self, function, inp, opts):
        self.function, self.inp, self.opts = function, inp, opts
        self.clock = time.process_time_ns if opts.clock == "cpu" else time.perf_counter_ns
        self.samples, self.min_runs, self.number = [], opts.min_runs, 1
        self.args = self.result = self.error = self.first = None
        self.timed_out = False
        self.warnings = []

    def _guarded(self, step):
        try:
            step()
        except CallTimeout:
            self.error, self.timed_out = f"a call took over {self.opts.timeout:g} s", True
        except Exception as exc:   # a tool's failure is a table entry, not the end of the bench
            self.error = short_error(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _call_wall(self):
        signal.setitimer(signal.ITIMER_REAL, self.opts.timeout)
        t0 = time.perf_counter()
        self.result = self.function.run(*self.args)
        return time.perf_counter() - t0

    def _start(self):
        self.args = self.function.prepare(self.inp)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = self._call_wall()        # code generation, JIT compilation
        self.first, self.warnings = first, wengert_warnings(caught)
        if first > self.opts.slow:
            self.min_runs = 1
        else:                                # calibrate on a second call
            self.number = min(10_000, max(1, int(1e-3 / max(self._call_wall(), 1e-7))))

    def _sample(self):
        signal.setitimer(signal.ITIMER_REAL, self.opts.timeout * self.number)   # not timed
        t0 = self.clock()
        for _ in range(self.number):
            self.result = self.function.run(*self.args)
        self.samples.append((self.clock() - t0) / self.number)

    def start(self):
        self._guarded(self._start)

    def sample(self):
        self._guarded(self._sample)

    @property
    def done(self):
        return self.error is not None or (
            len(self.samples) >= self.min_runs
            and sum(self.samples) * self.number >= self.opts.min_seconds * 1e9)

    def cell(self):
        if self.error is None:
            try:
                output = self.function.output(self.result)
            except Exception as exc:
                self.error = short_error(exc)
        if self.error is not None:
            return Cell(error=self.error, timed_out=self.timed_out)
        return Cell(round(min(self.samples)), len(self.samples) * self.number, output,
                    first_ns=round(self.first * 1e9), fallbacks=self.warnings)


def measure_all(measurements):
    """Start every measurement, then sample them in rounds, one sample each per round, until
    each is done: load that comes and goes on the machine then falls on all tools alike."""
    for m in measurements:
        m.start()
    pending = [m for m in measurements if not m.done]
    while pending:
        for m in pending:
            m.sample()
        pending = [m for m in pending if not m.done]


# --- comparing outputs -----------------------------------------------------------------
def leaves(obj, path=""):
    """(path, number) pairs of a JSON value, dict keys sorted."""
    if isinstance(obj, dict):
        for key in sorted(obj):
            yield from leaves(obj[key], f"{path}.{key}")
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, float(obj)


def max_relative_error(output, reference):
    """The largest elementwise relative difference (inf when the structures differ)."""
    got, want = list(leaves(output)), list(leaves(reference))
    if [p for p, _ in got] != [p for p, _ in want]:
        return math.inf
    a = np.array([v for _, v in got])
    b = np.array([v for _, v in want])
    if a.size == 0:
        return 0.0
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return 0.0 if np.array_equal(a, b, equal_nan=True) else math.inf
    scale = np.maximum(np.abs(b), FLOOR * np.max(np.abs(b)))
    scale[scale == 0.0] = 1.0
    return float(np.max(np.abs(a - b) / scale))


# --- one eval ----------------------------------------------------------------------------
def tool_functions(name, eval_module, peers, numba_problem=None):
    """{tool: dict of Functions, or an error string, or None (not implemented)} for one eval;
    ``numba_problem``: why wengert has no numba backend here (None: it has)."""
    found = {}
    for tool in TOOLS:
        try:
            if isinstance(eval_module, str) and tool in WENGERT_TOOLS:
                found[tool] = eval_module
            elif tool == NUMBA_TOOL:
                found[tool] = None if numba_problem else eval_module.functions(
                    engine="source", backend="numba")
            elif tool in WENGERT_TOOLS:
                found[tool] = eval_module.functions(engine=tool)
            elif tool in PEERS:
                peer = peers[tool]
                found[tool] = None if isinstance(peer, str) else peer.functions(name)
            else:
                found[tool] = None
        except Exception as exc:
            found[tool] = short_error(exc)
    return found


def bench_eval(name, sizes, opts, peers, report):
    """Time every function of eval ``name`` with every tool, interleaved; ``report(row)`` is
    called per function."""
    try:
        module = importlib.import_module(f"bench.gradbench.evals.{name}")
        inp = module.make_input(**sizes)
    except Exception as exc:
        module, inp = f"no module: {short_error(exc)}", None
    found = tool_functions(name, module, peers, opts.numba_problem)
    names = list(EVALS[name])
    if isinstance(found["source"], dict):
        names += [f for f in found["source"] if f not in names]
    measurements = {}
    for fn in names:
        for tool in TOOLS:
            funcs = found[tool]
            if (tool in opts.tools and isinstance(funcs, dict) and fn in funcs
                    and inp is not None):
                measurements[fn, tool] = Measurement(funcs[fn], inp, opts)
    measure_all(list(measurements.values()))
    rows = []
    for fn in names:
        cells = {}
        for tool in TOOLS:
            funcs = found[tool]
            if (fn, tool) in measurements:
                cells[tool] = measurements[fn, tool].cell()
            elif tool not in opts.tools:
                cells[tool] = Cell(na=True, error="not selected")
            elif isinstance(funcs, str):
                cells[tool] = Cell(error=funcs)
            else:
                cells[tool] = Cell(na=True)
        reference = next((t for t in REFERENCE_TOOLS if cells[t].time_ns is not None), None)
        cells[MANUAL] = manual_cell(opts.manual_rows, name, fn, describe(inp))
        for tool in TOOLS:
            cell = cells[tool]
            if reference is not None and tool != reference and cell.time_ns is not None:
                err = max_relative_error(cell.output, cells[reference].output)
                if err > RTOL:
                    cell.mismatch = err
        row = {"eval": name, "function": fn, "cells": cells, "input": describe(inp),
               "reference": reference}
        rows.append(row)
        report(row)
    return rows


# --- the manual tool's figures ----------------------------------------------------------
def load_manual(path):
    """{(eval, function): row} from ``gradbench_manual --json``'s file."""
    with open(path) as f:
        data = json.load(f)
    return {(row["eval"], row["function"]): row for row in data["rows"]}


def manual_cell(manual_rows, name, fn, input_text):
    """The manual tool's cell for one function: its time if measured at this input."""
    row = (manual_rows or {}).get((name, fn))
    if row is None:
        return Cell(na=True)
    if row.get("error"):
        return Cell(error=f"manual: {row['error']}")
    if row.get("input") != input_text:
        return Cell(na=True, error=f"manual figures taken at another input ({row.get('input')})")
    cell = Cell(row["time_ns"], row.get("runs", 0))
    cell.mismatch = row.get("mismatch")     # gradbench_manual compared it with wengert's
    return cell


def describe(inp, depth=0):
    """A short summary of an input's sizes: its numbers, and the shapes of its arrays."""
    if isinstance(inp, (int, float)) and depth == 0:
        return f"{inp:g}"
    if not isinstance(inp, dict):
        return ""
    parts = []
    for key, value in inp.items():
        if isinstance(value, bool) or key in ("min_runs", "min_seconds"):
            continue
        if isinstance(value, (int, float)):
            parts.append(f"{key}={value:g}")
        elif isinstance(value, list) and value:
            try:
                shape = np.shape(value)
            except ValueError:
                shape = (len(value),)
            parts.append(f"{key}:{'x'.join(map(str, shape))}")
        elif isinstance(value, dict) and depth == 0:
            inner = describe(value, depth + 1)
            if inner:
                parts.append(inner)
    return " ".join(parts)


# --- the table ---------------------------------------------------------------------------
def fmt_time(ns):
    if ns is None:
        return None
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns / 1e3:.3g} us"


def cell_text(cell, tool=None):
    if cell.na:
        return "n/a"
    if cell.error is not None:
        return "timeout" if cell.timed_out else "error"
    return (fmt_time(cell.time_ns) + ("!" if cell.mismatch is not None else "")
            + (" (py)" if tool == NUMBA_TOOL and fell_back(cell.fallbacks) else ""))


def wengert_ns(cells):
    times = [cells[t].time_ns for t in WENGERT_TOOLS if cells[t].time_ns is not None]
    return min(times) if times else None


def ratio(a, b):
    return None if a is None or b is None else a / b


def fmt_ratio(r):
    """Two decimals, or two significant digits where those would show 0.00 or overflow the
    column (the manual tool's det is a thousand times slower, its ode a thousand faster)."""
    if r is None:
        return "-"
    return f"{r:.2f}" if 0.01 <= r < 1000 else f"{r:.2g}"


COLUMNS = (("eval", 8, "<"), ("function", 9, "<"), ("source", 10, ">"), ("trace", 10, ">"),
           (NUMBA_TOOL, 15, ">"), ("nb compile", 10, ">"), ("jax", 10, ">"), ("torch", 10, ">"), (MANUAL, 10, ">"),
           ("wg/jax", 7, ">"), ("wg/torch", 8, ">"), ("wg/manual", 9, ">"), ("d/obj", 6, ">"))


def format_line(values):
    return "  ".join(f"{v:{align}{width}}" for v, (_, width, align) in zip(values, COLUMNS))


def is_objective(row):
    return row["eval"] not in NO_OBJECTIVE and row["function"] == EVALS[row["eval"]][0]


def compile_text(cell):
    """The numba cell's compile time: its first call less its best ("-" if not timed)."""
    if cell.time_ns is None or cell.first_ns is None:
        return "-"
    return fmt_time(max(cell.first_ns - cell.time_ns, 0))


def row_values(row, objective_ns):
    cells = row["cells"]
    wg = wengert_ns(cells)
    d_obj = None if is_objective(row) else ratio(wg, objective_ns)
    texts = [cell_text(cells[t], t) for t in TOOLS + (MANUAL,)]
    texts.insert(TOOLS.index(NUMBA_TOOL) + 1, compile_text(cells[NUMBA_TOOL]))
    return [row["eval"], row["function"]] + texts + [
        fmt_ratio(ratio(wg, cells["jax"].time_ns)), fmt_ratio(ratio(wg, cells["torch"].time_ns)),
        fmt_ratio(ratio(wg, cells[MANUAL].time_ns)), fmt_ratio(d_obj)]


def notes(rows):
    """Errors and mismatches, one line each, under the table."""
    lines = []
    for row in rows:
        for tool in TOOLS + (MANUAL,):
            cell = row["cells"][tool]
            where = f"{row['eval']}.{row['function']} [{tool}]"
            if cell.error is not None and (not cell.na or tool == MANUAL):
                lines.append(f"{where} error: {cell.error}")
            if cell.mismatch is not None:
                lines.append(f"{where} output differs from wengert {row['reference']}'s: max "
                             f"relative error {cell.mismatch:.3g} (tolerance {RTOL:g})")
            for warning in cell.fallbacks:
                lines.append(f"{where} wengert warned: {warning}")
        numba = row["cells"][NUMBA_TOOL]
        if numba.time_ns is not None and numba.first_ns is not None:
            lines.append(f"{row['eval']}.{row['function']} [{NUMBA_TOOL}] compile: "
                         f"{fmt_time(max(numba.first_ns - numba.time_ns, 0))} (first call "
                         f"{fmt_time(numba.first_ns)} less the best)")
    return lines


def target_lines(rows):
    """The issue's targets, met or missed, for every measured derivative."""
    lines = []
    objective = {}
    for row in rows:
        if is_objective(row):
            objective[row["eval"]] = wengert_ns(row["cells"])
            continue
        wg = wengert_ns(row["cells"])
        label = f"{row['eval']}.{row['function']}"
        for peer in PEERS:
            r = ratio(wg, row["cells"][peer].time_ns)
            if r is not None:
                verdict = "met" if r <= 1.0 else "MISSED"
                lines.append(f"{label:<16} wengert / {peer:<5} = {r:6.2f}  (<= 1)  {verdict}")
            elif row["cells"][peer].time_ns is not None:
                lines.append(f"{label:<16} wengert / {peer:<5}: no wengert time  MISSED")
        r = ratio(wg, row["cells"][MANUAL].time_ns)
        if r is not None:
            verdict = "met" if r <= MANUAL_TARGET else "MISSED"
            lines.append(f"{label:<16} wengert / manual = {r:6.2f}  (<= {MANUAL_TARGET:g})  "
                         f"{verdict}")
        if row["eval"] in RATIO_TARGET_EVALS:
            r = ratio(wg, objective.get(row["eval"]))
            if r is not None:
                verdict = "met" if r <= RATIO_TARGET else "MISSED"
                lines.append(f"{label:<16} derivative / objective = {r:6.2f}  (<= {RATIO_TARGET:g})"
                             f"  {verdict}")
            elif wg is None:
                lines.append(f"{label:<16} derivative / objective: no wengert time  MISSED")
    return lines


# --- set-up ------------------------------------------------------------------------------
def pin_one_cpu():
    """Run on one CPU of those allowed; returns its number (None where unsupported)."""
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError):
        return None


def load_peers():
    """{tool: module, or the reason it is not available}."""
    peers = {}
    for tool, modname in PEERS.items():
        try:
            peers[tool] = importlib.import_module(modname)
        except ImportError as exc:
            peers[tool] = f"not installed ({exc.name or exc})"
        except Exception as exc:
            peers[tool] = f"failed to load: {short_error(exc)}"
    torch_module = sys.modules.get("torch")
    if torch_module is not None:
        torch_module.set_num_threads(1)
        try:
            torch_module.set_num_interop_threads(1)
        except RuntimeError:
            pass                    # already set, or already used: harmless
    return peers


def finish_options(opts):
    """The timing defaults ``--quick`` sets, and the ``--size`` specs parsed."""
    if opts.min_runs is None:
        opts.min_runs = 1 if opts.quick else 2
    if opts.min_seconds is None:
        opts.min_seconds = 0.1 if opts.quick else 1.0
    opts.sizes = parse_sizes(opts.size)
    return opts


def parse_sizes(specs):
    """``--size gmm:d=10,k=25`` (repeatable) -> {"gmm": {"d": 10, "k": 25}}."""
    sizes = {}
    for spec in specs:
        name, _, assignments = spec.partition(":")
        for assignment in filter(None, assignments.split(",")):
            key, _, value = assignment.partition("=")
            try:
                sizes.setdefault(name, {})[key] = int(value)
            except ValueError:
                sizes.setdefault(name, {})[key] = float(value)
    return sizes


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.gradbench_compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--evals", default=",".join(EVALS),
                        help="comma-separated evals (default: all twelve)")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help="comma-separated tools among " + ",".join(TOOLS))
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions (min 1 run, 0.1 s) for development")
    parser.add_argument("--min-runs", type=int, default=None, help="timed runs at least (2)")
    parser.add_argument("--min-seconds", type=float, default=None,
                        help="seconds of timed runs at least (1.0)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: the process's CPU time, robust to other load on the machine "
                             "(default); wall: elapsed time")
    parser.add_argument("--slow", type=float, default=5.0,
                        help="a tool whose first call takes longer is timed once more only (5)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="a call taking longer is abandoned and shown as 'timeout' (30)")
    parser.add_argument("--size", action="append", default=[], metavar="EVAL:K=V,...",
                        help="sizes passed to the eval's make_input, e.g. gmm:d=10,k=25")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE")
    parser.add_argument("--manual", metavar="FILE",
                        help="GradBench's C++ manual tool's figures, from "
                             "python -m bench.gradbench_manual CHECKOUT --json FILE")
    parser.add_argument("--nan-safe", choices=("on", "off"), default="on",
                        help="wengert's wg.nan_safe setting (on, the default: exact zeros kept "
                             "through singular derivatives; off: plain products, to measure "
                             "what the guard costs)")
    opts = parser.parse_args(argv)
    opts.evals = [e for e in opts.evals.split(",") if e]
    unknown = [e for e in opts.evals if e not in EVALS]
    if unknown:
        parser.error(f"unknown evals {unknown}; known: {', '.join(EVALS)}")
    opts.tools = [t for t in opts.tools.split(",") if t]
    return finish_options(opts)


def header(peers, cpu, problem):
    versions = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    try:
        from importlib import metadata
        versions.append(f"wengert {metadata.version('wengert')}")
    except Exception:
        pass
    for tool, peer in peers.items():
        versions.append(f"{tool} {peer}" if isinstance(peer, str) else f"{tool} {peer.VERSION}")
    versions.append(f"numba {numba_version() or 'not installed'}"
                    + (f" ({NUMBA_TOOL}: n/a, {problem})" if problem else ""))
    return [", ".join(versions),
            f"one core: cpu {cpu}, OMP/MKL/OpenBLAS threads 1, XLA_FLAGS={os.environ['XLA_FLAGS']!r}"
            + (", torch threads 1" if sys.modules.get("torch") is not None else "")]


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    wg.nan_safe(opts.nan_safe == "on")
    signal.signal(signal.SIGALRM, _alarm)
    cpu = pin_one_cpu()
    peers = load_peers()
    opts.numba_problem = (backend_problem("numba") if NUMBA_TOOL in opts.tools
                          else "not selected")
    opts.manual_rows = load_manual(opts.manual) if opts.manual else None
    for line in header(peers, cpu, opts.numba_problem):
        print(line)
    if opts.manual:
        print(f"{MANUAL}: GradBench's C++ tool, figures from {opts.manual} (its own wall "
              "clock, one thread)")
    print(f"timing: {opts.clock} time, best of >= {opts.min_runs} runs and >= {opts.min_seconds:g} s "
          f"per cell (1 run after a first call over {opts.slow:g} s), after one untimed call; "
          "'!': output differs from wengert's")
    print()
    print(format_line([name for name, _, _ in COLUMNS]))
    print(format_line(["-" * width for _, width, _ in COLUMNS]))
    rows = []
    objective_ns = {}

    def report(row):
        if is_objective(row):
            objective_ns[row["eval"]] = wengert_ns(row["cells"])
        print(format_line(row_values(row, objective_ns.get(row["eval"]))), flush=True)

    for name in opts.evals:
        rows += bench_eval(name, opts.sizes.get(name, {}), opts, peers, report)
    print()
    print("inputs:")
    seen = set()
    for row in rows:
        if row["eval"] not in seen:
            seen.add(row["eval"])
            print(f"  {row['eval']:<8} {row['input'] or '(none)'}")
    lines = notes(rows)
    if lines:
        print()
        print("notes:")
        for line in lines:
            print("  " + line)
    print()
    print("targets (wengert = its fastest engine or backend):")
    for line in target_lines(rows) or ["(no derivative measured)"]:
        print("  " + line)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump([{"eval": r["eval"], "function": r["function"], "input": r["input"],
                        "clock": opts.clock,
                        "times_ns": {t: c.time_ns for t, c in r["cells"].items()},
                        "first_call_ns": {t: c.first_ns for t, c in r["cells"].items()
                                          if c.first_ns is not None},
                        "fallback": {t: c.fallbacks for t, c in r["cells"].items()
                                     if c.fallbacks},
                        "runs": {t: c.runs for t, c in r["cells"].items()},
                        "errors": {t: c.error for t, c in r["cells"].items() if c.error},
                        "mismatch": {t: c.mismatch for t, c in r["cells"].items()
                                     if c.mismatch is not None}}
                       for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
