"""numba compile times per GradBench eval: cold, warm, fallback, and speed against Python.

    python -m bench.numba_compile_bench [--evals gmm,det] [--timeout 120] [--keep DIR]

For each function of each eval (at the size the eval's ``make_input()`` gives), in a child
process of its own on one thread:

  cold cpu  the CPU time of the first call with ``backend="numba"`` (code generation and
            numba's compilation) with ``NUMBA_CACHE_DIR`` and ``WENGERT_CACHE_DIR`` in a fresh, empty folder
            (the issue's "on one core"); ``cold`` the same call's elapsed time
  warm      the first call again, in a new child over the same folder (numba's disk cache)
  fallback  "y" when wengert warned that it ran the Python backend instead (the warning is in
            the notes), "err" when the call raised, "timeout" when the child ran past
            ``--timeout`` seconds (the figure then shows ">T")
  numba     the best of a few calls after the first (CPU time), warm child
  python    the same function on the Python backend, same child
  nb/py     numba over python (below 1: numba is faster)

The targets (issue 29): cold <= 10 s, warm <= 0.5 s, no fallback, nb/py <= 1.
"""
from __future__ import annotations

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                   "NUMBA_NUM_THREADS": "1"})

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

EVALS = ("gmm", "ba", "ht", "lstm", "lse", "llsq", "det", "kmeans", "ode", "particle",
         "saddle")
COLD_TARGET, WARM_TARGET = 10.0, 0.5


def best_time(run, args, budget=0.5, most=20):
    """The best CPU time of a few calls (seconds)."""
    times, spent = [], 0.0
    while len(times) < 2 or (spent < budget and len(times) < most):
        t0 = time.process_time()
        run(*args)
        times.append(time.process_time() - t0)
        spent += times[-1]
    return min(times)


def child(name, fn_name, with_python):
    """One function of one eval, in this (child) process: a JSON line on stdout."""
    import wengert as wg
    module = importlib.import_module(f"bench.gradbench.evals.{name}")
    inp = module.make_input()
    function = module.functions(engine="source", backend="numba")[fn_name]
    args = function.prepare(inp)
    out = {"first": None, "numba": None, "python": None, "warnings": [], "error": None}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0, c0 = time.perf_counter(), time.process_time()
            function.run(*args)
            out["first"] = time.perf_counter() - t0
            out["first_cpu"] = time.process_time() - c0
        out["warnings"] = sorted({str(w.message).splitlines()[0][:200] for w in caught
                                  if issubclass(w.category, wg.NumbaFallbackWarning)})
        out["numba"] = best_time(function.run, args)
    except Exception as exc:     # a table entry, not the end of the bench
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    out["cache"] = cache_counts()
    if with_python:
        py = module.functions(engine="source")[fn_name]
        py_args = py.prepare(inp)
        py.run(*py_args)
        out["python"] = best_time(py.run, py_args)
    print("RESULT " + json.dumps(out))


def cache_counts():
    """(compiled, loaded): how many of numba's compilations in this process
    ran the compiler (a miss of its disk cache) and how many loaded one
    from the cache, over every dispatcher alive."""
    import gc
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:
        return [0, 0]
    live = [o for o in gc.get_objects() if isinstance(o, Dispatcher)]
    return [sum(sum(d.stats.cache_misses.values()) for d in live),
            sum(sum(d.stats.cache_hits.values()) for d in live)]


def run_child(name, fn_name, folder, timeout, with_python):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(folder, "numba"),
               WENGERT_CACHE_DIR=os.path.join(folder, "wengert"),
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "bench.numba_compile_bench", "--child", name, fn_name]
    if with_python:
        cmd.append("--with-python")
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=root)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"child failed: {tail[:160]}"}


def functions_of(name):
    from bench.gradbench_compare import EVALS as ALL
    return ALL[name]


def fmt(seconds, timeout=None):
    if seconds is None:
        return f">{timeout:g}" if timeout else "-"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.numba_compile_bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--evals", default=",".join(EVALS))
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a child may run (cold compile included)")
    parser.add_argument("--keep", metavar="DIR", help="cache folder to use (default: fresh)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--with-python", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        return child(*opts.child, opts.with_python)
    cols = f"{'eval':8} {'function':10} {'cold cpu':>9} {'cold':>9} {'warm':>9} " \
           f"{'fallback':>8} {'numba':>9} {'python':>9} {'nb/py':>6}"
    print(cols)
    notes = []
    for name in opts.evals.split(","):
        for fn_name in functions_of(name):
            folder = opts.keep or tempfile.mkdtemp(prefix="wg_nbcompile_")
            cold = run_child(name, fn_name, folder, opts.timeout, False)
            warm = (run_child(name, fn_name, folder, opts.timeout, True)
                    if not cold.get("timeout") else {"timeout": True})
            if cold.get("timeout") or warm.get("timeout"):
                status = "timeout"
            elif cold.get("error") or warm.get("error"):
                status = "err"
                notes.append(f"{name}.{fn_name}: {cold.get('error') or warm.get('error')}")
            elif cold.get("warnings"):
                status = "y"
                notes += [f"{name}.{fn_name}: {w}" for w in cold["warnings"]]
            else:
                status = "n"
            nb, py = warm.get("numba"), warm.get("python")
            rel = f"{nb / py:.2f}" if nb and py else "-"
            over = opts.timeout if cold.get("timeout") else None
            print(f"{name:8} {fn_name:10} {fmt(cold.get('first_cpu'), over):>9} "
                  f"{fmt(cold.get('first'), over):>9} {fmt(warm.get('first')):>9} {status:>8} "
                  f"{fmt(nb):>9} {fmt(py):>9} {rel:>6}", flush=True)
    for note in notes:
        print("  " + note)


if __name__ == "__main__":
    main()
