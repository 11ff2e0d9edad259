"""GradBench's C++ ``manual`` tool (derivatives written by hand) on wengert's bench inputs.

    python -m bench.gradbench_manual PATH/TO/gradbench [--evals lse,ode] [--json FILE]
                                     [--cache DIR] [--quick] [--no-check]

The ``manual`` tool lives in a GradBench checkout (``tools/manual/<eval>.cpp``, built on the
reference objectives of ``cpp/gradbench/evals``); none of it is part of wengert. This command
builds each eval's program into a cache folder outside the repository (``--cache``, default
``~/.cache/wengert/gradbench-manual``; a program is rebuilt when its sources, the compiler or
the flags change) with the flags of GradBench's ``cpp/common.mk`` for a build run on the
machine that times it (``-std=c++17 -O3 -Wall -march=native``, no OpenMP: one thread), then
runs it the way GradBench's ``cpp.py`` does: ``<program> input.json <function>``, which prints
the output as one JSON line, then one timing line per run (``{"name": "evaluate",
"nanoseconds": ...}``, the program's own steady clock around the computation alone).

The input of each eval is the one ``bench.gradbench_compare`` times: ``make_input()`` of
``bench/gradbench/evals/<eval>.py`` (GradBench's default size; ``../shared/gradbench-data``
where the eval ships data), with ``min_runs`` and ``min_seconds`` set here. The table shows
the best run. Unless ``--no-check``, each output is compared with wengert's for the same input
(the source engine's, the trace engine's where that fails), as ``gradbench_compare`` compares
its tools: every number to 1e-6 relative ('!' and a note otherwise).

``--json FILE`` writes the figures for ``python -m bench.gradbench_compare --manual FILE``.
GradBench's ``nlohmann/json.hpp`` comes from the checkout (``make -C cpp`` there downloads it)
or from the system (Debian: ``apt-get install nlohmann-json3-dev``). Without a checkout, a
compiler or that header, the command says what is missing, prints "n/a" and exits with 0.
The process pins itself (and so the programs) to one CPU.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .gradbench_compare import (EVALS, describe, finish_options, fmt_time, max_relative_error,
                                pin_one_cpu, short_error, RTOL)

# cpp/common.mk's CXXFLAGS with NATIVE=yes and MULTITHREADED=no, and its LDFLAGS
CXXFLAGS = ("-std=c++17", "-O3", "-Wall", "-march=native", "-Wno-unknown-pragmas")
LDFLAGS = ("-lm",)
DEFAULT_CACHE = Path.home() / ".cache" / "wengert" / "gradbench-manual"
SYSTEM_INCLUDES = ("/usr/include", "/usr/local/include")
RUN_TIMEOUT = 600.0        # seconds for one program run (all its timed runs)


class Unavailable(Exception):
    """What is missing for the manual tool to run here (printed, then "n/a")."""


# --- the checkout, the compiler, the JSON header ------------------------------------------
def manual_evals(checkout):
    """The evals the checkout's manual tool implements, in wengert's order."""
    checkout = Path(checkout)
    listed = checkout / "tools" / "manual" / "evals.txt"
    if not listed.is_file() or not (checkout / "cpp" / "gradbench" / "main.hpp").is_file():
        raise Unavailable(f"{checkout} is not a GradBench checkout (no tools/manual/evals.txt "
                          "or cpp/gradbench/main.hpp); pass the path of a clone of "
                          "github.com/gradbench/gradbench")
    names = set(listed.read_text().split())
    return [e for e in EVALS if e in names]


def find_compiler():
    for name in filter(None, (os.environ.get("CXX"), "c++", "g++", "clang++")):
        path = shutil.which(name)
        if path:
            return path
    raise Unavailable("no C++ compiler (set CXX, or install g++: apt-get install g++)")


def json_include(checkout, cache):
    """An include folder that provides GradBench's ``json.hpp``."""
    own = Path(checkout) / "cpp"
    if (own / "json.hpp").is_file():
        return own
    for root in filter(None, [*os.environ.get("CPATH", "").split(":"), *SYSTEM_INCLUDES]):
        if (Path(root) / "nlohmann" / "json.hpp").is_file():
            shim = Path(cache) / "include"
            shim.mkdir(parents=True, exist_ok=True)
            header = shim / "json.hpp"
            text = "#include <nlohmann/json.hpp>\n"
            if not header.is_file() or header.read_text() != text:
                header.write_text(text)
            return shim
    raise Unavailable("GradBench's json.hpp is missing: run `make -C cpp` in the checkout, "
                      "or install nlohmann's JSON header (apt-get install nlohmann-json3-dev)")


def compiler_version(compiler):
    out = subprocess.run([compiler, "--version"], capture_output=True, text=True)
    return (out.stdout or out.stderr).splitlines()[0].strip()


# --- building -------------------------------------------------------------------------------
def sources_digest(checkout, compiler_id, include):
    """A digest of everything a build reads: the manual tool's and cpp/'s sources, the
    compiler and the flags (the programs are rebuilt when any of them changes)."""
    checkout = Path(checkout)
    digest = hashlib.sha256(repr((compiler_id, CXXFLAGS, LDFLAGS, str(include))).encode())
    for folder in (checkout / "tools" / "manual", checkout / "cpp"):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if path.suffix in (".cpp", ".hpp", ".h"):
                digest.update(str(path.relative_to(checkout)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build(checkout, name, compiler, include, out_dir):
    """The eval's program, built if not cached: (path, seconds spent building)."""
    target = Path(out_dir) / name
    if target.is_file():
        return target, 0.0
    target.parent.mkdir(parents=True, exist_ok=True)
    manual = Path(checkout) / "tools" / "manual"
    partial = target.with_suffix(".tmp")
    cmd = [compiler, "-o", str(partial), str(manual / f"{name}.cpp"), *LDFLAGS, *CXXFLAGS,
           f"-I{Path(checkout) / 'cpp'}", f"-I{include}"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=manual)
    if done.returncode != 0:
        raise RuntimeError(f"build of {name} failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    partial.replace(target)
    return target, time.perf_counter() - t0


# --- running and parsing ---------------------------------------------------------------------
def parse_run_output(text):
    """A manual program's stdout: (output, {timing name: [nanoseconds, ...]}). The first
    line is the output's JSON, each further line one timing ``{"name", "nanoseconds"}``."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("the program printed nothing")
    output = json.loads(lines[0])
    timings = {}
    for line in lines[1:]:
        timing = json.loads(line)
        timings.setdefault(timing["name"], []).append(int(timing["nanoseconds"]))
    if not timings.get("evaluate"):
        raise ValueError("the program printed no 'evaluate' timing")
    return output, timings


def run_program(program, function, inp, workdir, timeout=RUN_TIMEOUT):
    """Run one function once (the program repeats it as ``inp`` asks): parsed output."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=workdir) as f:
        json.dump(inp, f)
        f.flush()
        done = subprocess.run([str(program), f.name, function], capture_output=True, text=True,
                              timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{program.name} {function} exited with {done.returncode}: "
                           f"{done.stderr.strip()[-500:]}")
    return parse_run_output(done.stdout)


def wengert_output(name, function, inp):
    """wengert's output for the same input: (output, engine), or (None, why)."""
    module = importlib.import_module(f"bench.gradbench.evals.{name}")
    errors = []
    for engine in ("source", "trace"):
        try:
            return module.functions(engine=engine)[function](inp), engine
        except Exception as exc:       # reported as the check's result, not fatal
            errors.append(f"{engine}: {short_error(exc)}")
    return None, "; ".join(errors)


# --- one eval --------------------------------------------------------------------------------
def bench_eval(name, program, opts, workdir):
    """One row per function of the eval: time, runs, agreement with wengert."""
    module = importlib.import_module(f"bench.gradbench.evals.{name}")
    inp = module.make_input(**opts.sizes.get(name, {}))
    timed = dict(inp, min_runs=opts.min_runs, min_seconds=opts.min_seconds) \
        if isinstance(inp, dict) else inp
    rows = []
    for function in EVALS[name]:
        row = {"eval": name, "function": function, "input": describe(inp), "time_ns": None,
               "runs": 0, "prepare_ns": None, "mismatch": None, "error": None, "check": None}
        try:
            output, timings = run_program(program, function, timed, workdir)
        except Exception as exc:
            row["error"] = short_error(exc)
            rows.append(row)
            continue
        row["time_ns"] = min(timings["evaluate"])
        row["runs"] = len(timings["evaluate"])
        row["prepare_ns"] = min(timings.get("prepare", [0]))
        if opts.check:
            reference, engine = wengert_output(name, function, inp)
            if reference is None:
                row["check"] = f"not checked: wengert failed ({engine})"
            else:
                err = max_relative_error(output, reference)
                row["check"] = f"wengert {engine}: max relative error {err:.2g}"
                if err > RTOL:
                    row["mismatch"] = err
        rows.append(row)
    return rows


# --- the table ------------------------------------------------------------------------------
COLUMNS = (("eval", 8, "<"), ("function", 9, "<"), ("manual", 10, ">"), ("runs", 5, ">"),
           ("prepare", 10, ">"), ("agrees", 7, ">"))


def format_line(values):
    return "  ".join(f"{v:{align}{width}}" for v, (_, width, align) in zip(values, COLUMNS))


def row_values(row, checked):
    if row["error"] is not None:
        return [row["eval"], row["function"], "error", "-", "-", "-"]
    agrees = "-" if not checked or row["check"] is None or row["check"].startswith("not") \
        else ("!" if row["mismatch"] is not None else "yes")
    return [row["eval"], row["function"], fmt_time(row["time_ns"]), str(row["runs"]),
            fmt_time(row["prepare_ns"]) or "-", agrees]


def na_table(evals, why):
    print(f"manual: n/a ({why})")
    print(format_line([c for c, _, _ in COLUMNS]))
    for name in evals:
        for function in EVALS[name]:
            print(format_line([name, function, "n/a", "-", "-", "-"]))


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.gradbench_manual",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("gradbench", nargs="?", default=os.environ.get("GRADBENCH_CHECKOUT"),
                        help="a GradBench checkout (default: $GRADBENCH_CHECKOUT)")
    parser.add_argument("--evals", default=None,
                        help="comma-separated evals (default: all the manual tool implements)")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE),
                        help=f"where the programs are built (default {DEFAULT_CACHE})")
    parser.add_argument("--quick", action="store_true", help="min 1 run, 0.1 s per function")
    parser.add_argument("--min-runs", type=int, default=None, help="timed runs at least (2)")
    parser.add_argument("--min-seconds", type=float, default=None,
                        help="seconds of timed runs at least (1.0)")
    parser.add_argument("--size", action="append", default=[], metavar="EVAL:K=V,...",
                        help="sizes passed to the eval's make_input, as in gradbench_compare")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="do not compare the outputs with wengert's")
    parser.add_argument("--json", metavar="FILE",
                        help="write the figures for gradbench_compare --manual FILE")
    opts = parser.parse_args(argv)
    return finish_options(opts)


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    wanted = [e for e in (opts.evals or ",".join(EVALS)).split(",") if e]
    unknown = [e for e in wanted if e not in EVALS]
    if unknown:
        sys.exit(f"unknown evals {unknown}; known: {', '.join(EVALS)}")
    try:
        if not opts.gradbench:
            raise Unavailable("no GradBench checkout given (pass its path, or set "
                              "GRADBENCH_CHECKOUT)")
        implemented = manual_evals(opts.gradbench)
        compiler = find_compiler()
        include = json_include(opts.gradbench, opts.cache)
    except Unavailable as why:
        na_table(wanted, why)
        return 0
    evals = [e for e in wanted if e in implemented]
    compiler_id = compiler_version(compiler)
    out_dir = Path(opts.cache) / sources_digest(opts.gradbench, compiler_id, include)
    cpu = pin_one_cpu()
    print(f"GradBench manual tool from {opts.gradbench}; {compiler_id}; "
          f"{' '.join(CXXFLAGS)}; programs in {out_dir}; one core: cpu {cpu}")
    print(f"timing: the program's own clock around each run, best of >= {opts.min_runs} runs "
          f"and >= {opts.min_seconds:g} s; 'agrees': output equal to wengert's to "
          f"{RTOL:g} relative")
    skipped = [e for e in wanted if e not in implemented]
    if skipped:
        print(f"not implemented by the manual tool: {', '.join(skipped)}")
    print()
    print(format_line([c for c, _, _ in COLUMNS]))
    print(format_line(["-" * w for _, w, _ in COLUMNS]))
    rows, builds = [], {}
    with tempfile.TemporaryDirectory(dir=_ensure(opts.cache)) as workdir:
        for name in evals:
            try:
                program, builds[name] = build(opts.gradbench, name, compiler, include, out_dir)
            except Exception as exc:
                rows.append({"eval": name, "function": "(build)", "error": short_error(exc)})
                print(format_line([name, "(build)", "error", "-", "-", "-"]), flush=True)
                continue
            for row in bench_eval(name, program, opts, workdir):
                rows.append(row)
                print(format_line(row_values(row, opts.check)), flush=True)
    print()
    print("inputs:")
    for row in rows:
        if row.get("input") and row["function"] == EVALS[row["eval"]][0]:
            print(f"  {row['eval']:<8} {row['input']}")
    built = {k: v for k, v in builds.items() if v}
    if built:
        print("built: " + ", ".join(f"{k} {v:.1f} s" for k, v in built.items()))
    notes = [f"{r['eval']}.{r['function']}: {r['error'] or r.get('check')}" for r in rows
             if r.get("error") or r.get("mismatch") is not None]
    if notes:
        print("notes:")
        for line in notes:
            print("  " + line)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"tool": "manual", "compiler": compiler_id, "flags": list(CXXFLAGS),
                       "min_runs": opts.min_runs, "min_seconds": opts.min_seconds,
                       "rows": rows}, f, indent=1)
    return 0


def _ensure(folder):
    Path(folder).mkdir(parents=True, exist_ok=True)
    return folder


if __name__ == "__main__":
    sys.exit(main())
