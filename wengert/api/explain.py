"""``wg.explain(fun, *args, argnums=0)``: what wengert does with ``fun``, on ``args``.

Returns (and prints) an ``Explanation``:

* ``program``: the Program of ``fun`` (``make_program``: the source engine's, with the
  function's control flow and names, where it reads the function);
* ``code``: the gradient's generated code (``wg.grad(fun, argnums).source``), each block
  of its reverse sweep under a comment naming the line of ``fun`` it differentiates;
  ``line_map``: ``{line of code: (file, line of fun)}``, those comments read back and
  each line of the forward sweep (which no comment heads) the line it computes;
* ``checks``: for each differentiated argument, the gradient against a central finite
  difference along a random direction (seeded: the same at every call), ``Check``;
* ``unused``: the inputs (arguments, or leaves of a pytree argument) that no output
  depends on: their gradient is zero because nothing reads them;
* ``cost``: the gradient's time over the function's, measured on ``args`` (each timed
  best of a few runs of at least ``_MIN_SECONDS``); the cheap-gradient principle puts it
  at a small constant (DESIGN.md: about 3).

The output must be a real scalar (what ``grad`` takes). The function runs several times
(the checks, the timings): give it no side effects you mind repeating.

Layer: api.
"""
from __future__ import annotations

import inspect
import sys
import time

import numpy as np

from ..core.ir import Lit, reached_vars
from ..core.pytree import flatten, unflatten
from ..core.where import line_map
from .transforms import grad, make_program

__all__ = ["explain", "Explanation", "Check"]

_MIN_SECONDS = 0.02
_REPEATS = 3


class Check:
    """One argument's gradient against a central finite difference along a random
    unit-scale direction ``u``: ``fd`` is ``(f(x + h u) - f(x - h u)) / 2h``,
    ``ad`` is ``<grad f(x), u>``; ``ok`` when they agree to ``tol``."""

    __slots__ = ("argnum", "name", "ad", "fd", "error", "tol", "ok")

    def __init__(self, argnum, name, ad, fd, tol):
        self.argnum, self.name, self.ad, self.fd, self.tol = argnum, name, ad, fd, tol
        self.error = abs(ad - fd) / max(1.0, abs(fd))
        self.ok = bool(np.isfinite(ad) and self.error <= tol)

    def __repr__(self):
        return (f"Check({self.name}: grad.u = {self.ad:.12g}, finite difference "
                f"{self.fd:.12g}, error {self.error:.2g}, {'ok' if self.ok else 'MISMATCH'})")


class Explanation:
    """What ``explain`` found; ``str()`` is the report it prints."""

    def __init__(self, name, program, code, line_map_, checks, unused, times, value,
                 gradient):
        self.name = name
        self.program = program              # the Program (print() shows it)
        self.code = code                    # the gradient's code, or None (traced)
        self.line_map = line_map_
        self.checks = checks
        self.unused = unused
        self.function_seconds, self.gradient_seconds = times
        self.value, self.gradient = value, gradient

    @property
    def cost(self):
        """The gradient's time over the function's."""
        return self.gradient_seconds / self.function_seconds

    @property
    def ok(self):
        """Every argument's gradient matched its finite difference."""
        return all(c.ok for c in self.checks)

    def __str__(self):
        rule = "-" * 78
        out = [f"== {self.name}: the program", str(self.program), rule,
               "== the gradient's code (each reverse block under the line it differentiates)"]
        out.append(self.code.rstrip() if self.code is not None else
                   "(no code: the trace engine differentiated it at this call)")
        if self.line_map:
            lines = sorted({w for w in self.line_map.values()}, key=lambda w: (w[0], w[1]))
            out.append("   lines of the code per line of the function: " + ", ".join(
                f"{_short(f)}:{n} -> {_ranges(k for k, w in self.line_map.items() if w == (f, n))}"
                for f, n in lines))
        out += [rule, "== gradient against finite differences (a random direction u)"]
        for c in self.checks:
            out.append(f"   {c.name:<16} grad.u = {c.ad: .12g}   finite difference = "
                       f"{c.fd: .12g}   error {c.error:.1e}   {'ok' if c.ok else 'MISMATCH'}")
        out += [rule, "== inputs the output does not depend on: "
                + (", ".join(self.unused) if self.unused else "none")]
        out += [f"== cost: the gradient takes {self.cost:.2f}x the function's time "
                f"({self.gradient_seconds * 1e6:.1f} us against {self.function_seconds * 1e6:.1f} "
                "us, best of runs on these arguments)"]
        return "\n".join(out)

    def __repr__(self):
        return (f"<Explanation of {self.name}: {len(self.checks)} gradient check(s) "
                f"{'ok' if self.ok else 'FAILED'}, cost {self.cost:.2f}x>")


def _short(path):
    return path.rsplit("/", 1)[-1]


def _ranges(numbers):
    nums = sorted(numbers)
    parts, start = [], None
    for k, n in enumerate(nums):
        if start is None:
            start = n
        if k + 1 == len(nums) or nums[k + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ",".join(parts)


def _best_time(fn, args):
    """The best of ``_REPEATS`` timings of ``fn(*args)``, each averaged over enough calls
    to last ``_MIN_SECONDS``."""
    fn(*args)
    calls, best = 1, float("inf")
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        t = time.perf_counter() - t0
        if t >= _MIN_SECONDS:
            break
        calls *= 2
    best = t / calls
    for _ in range(_REPEATS - 1):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _arg_names(fun, args):
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()]
    except (TypeError, ValueError):
        params = []
    return [params[k] if k < len(params) else f"arg{k}" for k in range(len(args))]


def _check(fun, args, k, name, g_k, rng):
    """The finite-difference check of argument ``k`` (gradient ``g_k``)."""
    leaves, tree = flatten(args[k])
    g_leaves, _ = flatten(g_k)
    dirs = [rng.standard_normal(np.shape(x)) for x in leaves]
    f32 = any(np.asarray(x).dtype == np.float32 for x in leaves)
    h, tol = (1e-3, 2e-2) if f32 else (1e-6, 1e-5)
    scale = max([1.0] + [float(np.max(np.abs(x))) for x in leaves if np.size(x)])
    h *= scale

    def moved(x, step):
        if type(x) is float:
            return float(x + step)
        return (np.asarray(x) + step).astype(np.asarray(x).dtype)

    def at(sign):
        new = list(args)
        new[k] = unflatten(tree, [moved(x, sign * h * d) for x, d in zip(leaves, dirs)])
        return float(fun(*new))
    fd = (at(1.0) - at(-1.0)) / (2 * h)
    ad = float(sum(np.sum(np.asarray(g) * d) for g, d in zip(g_leaves, dirs)))
    return Check(k, name, ad, fd, tol)


def _unused(prog, names):
    """The Program inputs no output depends on, by name."""
    outs = {x for x in prog.outputs if not isinstance(x, Lit)}
    return [n for v, n in zip(prog.inputs, names) if not (reached_vars(prog, v) & outs)]


def explain(fun, *args, argnums=0, out=None):
    """Explain ``grad(fun, argnums)`` at ``args``: what wengert made of ``fun`` and
    whether its gradient is right there.

    The report (printed, and returned as an ``Explanation``) holds the program of
    ``fun``, the gradient's generated code with each reverse block under the line of
    ``fun`` it differentiates and the map from the code's lines to ``fun``'s
    (``line_map``), a check of each differentiated argument's gradient against a
    central finite difference along a random (seeded) direction (``checks``, ``ok``),
    the inputs the output does not depend on (``unused``) and the gradient's time over
    the function's on these arguments (``cost``). From a shell:
    ``wengert explain FILE:FUNC --args "..."``.

    Args:
        fun: a function with one real scalar output, as ``grad`` takes.
        *args: the arguments to explain it at; ``fun`` runs on them several times.
        argnums: the position of the argument to differentiate, or a tuple of them.
        out: a file to print the report to; ``None`` (the default) prints to stdout,
            ``False`` prints nothing.

    Returns:
        An ``Explanation``: ``program``, ``code`` (None where the trace engine
        differentiated ``fun``), ``line_map``, ``checks`` (one ``Check`` per argument:
        ``ad``, ``fd``, ``error``, ``ok``), ``ok``, ``unused``, ``cost``, ``value``,
        ``gradient``; ``str()`` of it is the report.

    Raises:
        NonScalarOutputError: the output is not one real number.
        NonDifferentiableInputError: a differentiated argument is not a float.

    Example:
        >>> import numpy as np, wengert as wg
        >>> found = wg.explain(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), out=False)
        >>> found.ok, found.gradient, found.unused
        (True, array([ 3., 12.]), [])
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    name = getattr(fun, "__name__", repr(fun))
    g = grad(fun, argnums=argnums)
    gradient = g(*args)
    value = fun(*args)
    try:
        code = g.source
    except AttributeError:
        code = None
    prog = make_program(fun, *args)
    files = {getattr(getattr(fun, "__code__", None), "co_filename", "")}
    generated = getattr(getattr(g, "last", None), "fn", None)
    lines = (getattr(generated, "line_map", None) or line_map(code, files)
             if code is not None else {})
    arg_names = _arg_names(fun, args)
    rng = np.random.default_rng(0)
    g_parts = (gradient,) if isinstance(argnums, int) else gradient
    checks = [_check(fun, args, k, arg_names[k], g_k, rng) for k, g_k in zip(nums, g_parts)]
    leaf_names = []
    for k, a in enumerate(args):
        leaves, _ = flatten(a)
        kept = [x for x in leaves if not (type(x) in (int, bool) or isinstance(x, str))]
        leaf_names += ([arg_names[k]] if len(kept) == 1 and not isinstance(a, (tuple, list, dict))
                       else [f"{arg_names[k]}[{j}]" for j in range(len(kept))])
    unused = _unused(prog, leaf_names) if len(leaf_names) == len(prog.inputs) else []
    times = (_best_time(fun, args), _best_time(g, args))
    found = Explanation(name, prog, code, lines, checks, unused, times, value, gradient)
    if out is not False:
        print(found, file=sys.stdout if out is None else out)
    return found
