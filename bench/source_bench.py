"""Per-call time of ``grad`` on scalar Python programs: the source engine
against the plain function, the trace engine and autograd.

The programs (``bench/scalar_programs.py``: seed 000, seed 004, a 100-step
loop with a branch, Horner's rule of degree 50 with list and array
coefficients, a while-loop Newton solve) take Python floats and return a
float. Each is written once, as a factory of the numpy module: ``numpy`` for
the plain call and wengert, ``autograd.numpy`` for autograd. Per program, in
one process:

  plain     the function itself (the baseline);
  source    ``wengert.grad(f, argnums, engine="source")``, called after a
            warm-up call, so code generation is not in the per-call time;
  code      the generated function alone (``g.source``'s function, called
            with the floats), i.e. ``source`` less the per-call dispatch
            (argument flattening, cache key, result rebuilding);
  codegen   the one-off cost of the source engine: the first call of a fresh
            ``grad`` object (source conversion, transform, code generation,
            one evaluation), best of CODEGEN_REPEATS, in milliseconds;
  trace     ``wengert.grad(f, argnums, engine="trace")``;
  autograd  ``autograd.grad(f, argnum)``;
  numba     the plain function under ``numba.njit``, after its first call; "n/a" where
            numba cannot compile it (numba's reason is under the table); its value must
            equal the plain call's;
  numba-grad  ``wengert.grad(f, argnums, engine="source", backend="numba")``: "n/a (no
            backend)" while wengert has no numba backend; "(py)" where wengert warned that
            it ran the Python backend instead;
  cc        a numba column's compile time: its first call less its per-call time, in ms;
  ngrad/numba  numba-grad's time over the numba primal's.

Before timing, every gradient must agree with every other (rtol AD_RTOL) and
with a five-point central finite difference of the plain function (rtol
FD_RTOL); a disagreement raises. An engine that cannot handle a program
(an exception from building or calling its gradient) is reported below the
table with its error, and the rest is timed. Timings follow
``bench.grad_bench``: warm-up, ``timeit.Timer.autorange``, best of 5 repeats
of the per-call mean, in microseconds. Without autograd installed the rest
is still timed.

Targets: source/plain <= 3 and autograd/source >= 10 (a miss is marked *).

Run from the repository root:  ``make bench``  (or ``python -m bench.source_bench``;
add ``--source`` to print the generated code of each gradient).
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

import wengert

from .grad_bench import _version, per_call_us
from .numba_support import backend_problem, fell_back, first_call, njit, numba_version, \
    short_reason
from .numba_support import warm_up as warm_up_numba
from .scalar_programs import PROGRAMS

try:
    import autograd
    import autograd.numpy as anp
except ImportError:        # the `bench` extra is not installed: time the rest
    autograd = anp = None

CODEGEN_REPEATS = 3
FD_RTOL = 1e-6             # against the finite difference
AD_RTOL = 1e-9             # between the AD gradients
ATOL = 1e-10
SOURCE_TARGET = 3.0        # source/plain at most this
AUTOGRAD_TARGET = 10.0     # autograd/source at least this
NUMBA_RTOL = 1e-12         # the numba primal's value against the plain call's


# --- checks -------------------------------------------------------------------
def _as_tuple(g):
    return tuple(float(np.asarray(v)) for v in (g if isinstance(g, tuple) else (g,)))


def finite_difference(f, args, argnums, rel_step=1e-4):
    """Five-point central difference (error O(h^4)) of ``f`` in each argument of
    ``argnums``. The programs branch on their values: the step is small enough
    that no branch flips at the benchmark's points."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    out = []
    for i in nums:
        h = rel_step * max(1.0, abs(args[i]))

        def at(d):
            a = list(args)
            a[i] = args[i] + d
            return f(*a)
        out.append((-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h))
    return tuple(out)


def check_agree(name, grads, fd):
    """``grads``: engine -> gradient tuple. Raises on the first disagreement."""
    # raise, not assert: the check must survive ``python -O``
    for eng, g in grads.items():
        if len(g) != len(fd) or not np.allclose(g, fd, rtol=FD_RTOL, atol=ATOL):
            raise AssertionError(f"{name}: {eng} gradient {g} differs from the central finite "
                                 f"difference {fd} (rtol {FD_RTOL})")
    items = list(grads.items())
    for k, (e1, g1) in enumerate(items):
        for e2, g2 in items[k + 1:]:
            if not np.allclose(g1, g2, rtol=AD_RTOL, atol=ATOL):
                raise AssertionError(f"{name}: {e1} gradient {g1} differs from {e2} gradient "
                                     f"{g2} (rtol {AD_RTOL})")


# --- one program ------------------------------------------------------------------
def _error(err):
    msg = str(err).strip().splitlines()
    return f"{type(err).__name__}: {msg[0] if msg else ''}"


def _generated_function(g):
    """The generated Python function behind a source-engine ``grad`` (None if
    the library's internals differ): called with the float arguments, it
    returns the flat tuple of gradients."""
    fn = getattr(getattr(getattr(g, "last", None), "fn", None), "fn", None)
    return fn if callable(fn) else None


def codegen_ms(make, args, argnums):
    """First call of a fresh source-engine ``grad``: best of CODEGEN_REPEATS."""
    best = math.inf
    for _ in range(CODEGEN_REPEATS):
        g = wengert.grad(make(np), argnums=argnums, engine="source")
        t0 = time.perf_counter()
        g(*args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def numba_primal(name, make, args, row):
    """The plain function under numba.njit: per-call time and compile time into ``row``."""
    try:
        compiled = njit(make(np))
        value, first, _ = first_call(compiled, args)
    except Exception as err:                       # noqa: BLE001 -- numba's reason, reported
        row["errors"]["numba"] = short_reason(err)
        return
    want = make(np)(*args)
    if not np.allclose(value, want, rtol=NUMBA_RTOL, atol=ATOL):
        raise AssertionError(f"{name}: the numba primal gives {value!r}, the plain call {want!r}")
    row["numba"] = per_call_us(compiled, args)
    row["numba_cc"] = max(first * 1e3 - row["numba"] * 1e-3, 0.0)


def run_program(name, make, args, argnums, has_math, numba_problem=None):
    plain = make(np)
    row = dict(name=name, errors={}, source_code=None, numba=None, numba_cc=None,
               ngrad_cc=None, warned=[])
    fns = {"source": wengert.grad(make(np), argnums=argnums, engine="source"),
           "trace": wengert.grad(make(np), argnums=argnums, engine="trace")}
    if autograd is not None:
        fns["autograd"] = autograd.grad(make(anp), argnum=argnums)
    if numba_problem is None:
        fns["numba-grad"] = wengert.grad(make(np), argnums=argnums, engine="source",
                                         backend="numba")
    grads, firsts = {}, {}
    for eng, g in list(fns.items()):
        try:
            # the source engine generates its code here, the numba backend compiles it
            out, firsts[eng], warned = first_call(g, args)
            grads[eng] = _as_tuple(out)
        except Exception as err:                   # noqa: BLE001 -- reported, not fatal
            row["errors"][eng] = _error(err)
            del fns[eng]
            continue
        if eng == "numba-grad":
            row["warned"] = warned
    check_agree(name, grads, finite_difference(plain, args, argnums))
    numba_primal(name, make, args, row)

    row["plain"] = per_call_us(plain, args)
    row["plain_math"] = per_call_us(make(math), args) if has_math else None
    row["code"] = row["codegen"] = None
    if "source" in fns:
        g = fns["source"]
        row["source_code"] = g.source
        row["source"] = per_call_us(g, args)
        code = _generated_function(g)
        if code is not None:
            row["code"] = per_call_us(code, args)
        row["codegen"] = codegen_ms(make, args, argnums)
    for eng in ("trace", "autograd", "numba-grad"):
        row[eng] = per_call_us(fns[eng], args) if eng in fns else None
    if row["numba-grad"] is not None:
        row["ngrad_cc"] = max(firsts["numba-grad"] * 1e3 - row["numba-grad"] * 1e-3, 0.0)
    return row


# --- printing ---------------------------------------------------------------------
def _us(v):
    return "n/a" if v is None else f"{v:.2f}"


def _ratio(a, b, mark=None):
    if a is None or b is None:
        return "n/a"
    r = a / b
    miss = mark is not None and not mark(r)
    return f"{r:.1f}x" + (" *" if miss else "")


def _ms(v):
    return "n/a" if v is None else f"{v:.1f}"


def _numba_grad(r, numba_problem):
    if numba_problem is not None:
        return f"n/a ({numba_problem})"
    if "numba-grad" in r["errors"]:
        return "error"
    return _us(r["numba-grad"]) + (" (py)" if fell_back(r["warned"]) else "")


def print_table(rows, numba_problem=None):
    head = ("problem", "plain (us)", "source (us)", "code (us)", "codegen (ms)", "trace (us)",
            "autograd (us)", f"source/plain<={SOURCE_TARGET:g}",
            f"autograd/source>={AUTOGRAD_TARGET:g}", "trace/plain", "numba (us)", "cc (ms)",
            "numba-grad (us)", "cc (ms)", "ngrad/numba")
    width = max(len(head[0]), *(len(r["name"]) for r in rows))
    widths = [max(len(h), 16) if h == "numba-grad (us)" else len(h) for h in head[1:]]
    fmt = "{:<%d}" % width + "".join("  {:>%d}" % w for w in widths)
    print(fmt.format(*head))
    print(fmt.format("-" * width, *("-" * w for w in widths)))
    for r in rows:
        src = r.get("source")
        print(fmt.format(
            r["name"], _us(r["plain"]), "error" if "source" in r["errors"] else _us(src),
            _us(r["code"]), "n/a" if r["codegen"] is None else f"{r['codegen']:.1f}",
            "error" if "trace" in r["errors"] else _us(r["trace"]),
            "error" if "autograd" in r["errors"] else _us(r["autograd"]),
            _ratio(src, r["plain"], lambda x: x <= SOURCE_TARGET),
            _ratio(r["autograd"], src, lambda x: x >= AUTOGRAD_TARGET),
            _ratio(r["trace"], r["plain"]), _us(r["numba"]), _ms(r["numba_cc"]),
            _numba_grad(r, numba_problem), _ms(r["ngrad_cc"]),
            _ratio(r.get("numba-grad"), r["numba"])))
    print(f"\n* misses its target. code: the generated function alone (source less its per-call "
          f"dispatch). codegen: first call of a fresh grad, best of {CODEGEN_REPEATS}. "
          "cc: a numba column's first call less its per-call time.")
    for r in rows:
        if r["plain_math"] is not None:
            print(f"{r['name']}: the plain call with math instead of numpy (math.sin on floats) "
                  f"takes {r['plain_math']:.2f} us")
    for r in rows:
        for eng, msg in r["errors"].items():
            if eng == "numba":
                print(f"{r['name']}: numba cannot compile the plain function: {msg}")
            else:
                print(f"{r['name']}: the {eng} engine raised {msg}" if eng in ("source", "trace")
                      else f"{r['name']}: {eng} raised {msg}")
        for warning in r["warned"]:
            print(f"{r['name']}: numba-grad: wengert warned: {warning}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    show_source = "--source" in argv
    t_start = time.perf_counter()
    numba_problem = backend_problem("numba")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"wengert {_version('wengert')}, "
          f"autograd {_version('autograd') if autograd is not None else 'missing'}, "
          f"numba {numba_version() or 'missing'}")
    if autograd is None:
        print("autograd is not installed (pip install -e '.[bench]'): "
              "timing the plain function and wengert only")
    # load the source engine's modules once, so the first program's codegen
    # time does not include them
    wengert.grad(lambda x: x * x, engine="source")(1.0)
    warm_up_numba()
    rows = [run_program(*p, numba_problem=numba_problem) for p in PROGRAMS]
    engines = ("source, trace" + (", autograd" if autograd is not None else "")
               + (", numba-grad" if numba_problem is None else ""))
    print(f"gradients ({engines}) agree with each other (rtol {AD_RTOL:g}) and with a "
          f"central finite difference (rtol {FD_RTOL:g}) on every program they ran")
    print()
    print_table(rows, numba_problem)
    if show_source:
        for r in rows:
            if r["source_code"] is not None:
                print(f"\n--- {r['name']}: generated code (g.source) ---")
                print(r["source_code"], end="")
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
