"""A differential fuzzer: random NumPy programs with control flow, written to
a real file (the source engine reads source), differentiated by every engine
and mode and checked against finite differences and against each other.

A program is a module: a global array ``G``, a global float ``C``, a random
generator ``RS``, a helper ``h`` that reads them, and ``f(x, v)`` (``x`` a float,
``v`` an array of ``N`` floats) made of assignments, ``if``/``elif``/``else`` on
traced and Python conditions, nested ``for`` and ``while`` loops with
``break``, ``continue`` and early ``return``, ``v[i] = e`` and ``v[i] += e``,
helper calls, random draws and broadcasting. Its output is a float.

Checks (``check``), for the source and the trace engine:

* the derivative's value equals the plain call's, with the same random draws,
  and a derivative call leaves the generator where one plain call leaves it;
* the gradient against central differences of the plain function (at points
  where two step sizes agree: not next to a branch's switch);
* jvp against vjp by the dot-product test, and the two engines against each
  other;
* nested gradients in x, to order 4 (source engine), against central
  differences of the order below;
* the same derivative objects again after the inputs, ``G`` (in place), ``C``
  (rebound) and the random state changed;
* with ``--hessians``, the Hessian in v (source engine) of every third
  program against differences of the gradient.

A typed ``wengert`` error (``UnsupportedSyntax``...) is a refusal, not a
failure; any other exception, and any wrong value, is a failure. Run many:
``python tests/fuzz_programs.py --programs 10000 --jobs 2`` (``make fuzz``).
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import os
import re
import sys
import tempfile
import time
import warnings

import numpy as np

import wengert as wg
from wengert.errors import WengertError

N = 4                   # length of v and G
_COUNTER = itertools.count()
_DIR = None


# --- the generator ------------------------------------------------------------------
class Gen:
    """Writes one program, drawing every choice from ``pick(n) -> 0..n-1``
    (a seeded generator, or hypothesis's ``data.draw``)."""

    UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))",
             "np.sqrt(1.0 + {0} * {0})", "np.log(1.0 + {0} * {0})", "abs({})", "({}) ** 2",
             "np.arctan({})", "-({})")
    BINARY = ("{} + {}", "{} - {}", "{} * {}", "{0} / (1.0 + {1} * {1})",
              "np.maximum({}, {})", "np.minimum({}, {})", "np.where({0} > {1}, {0}, 0.5 * {1})")

    def __init__(self, pick):
        self.pick = pick
        self.lines = []
        self.loop_vars = []         # Python ints in scope (loop counters)
        self.depth = 0
        self.in_loop = 0
        self.uses_random = False
        self.scalars = ["x", "s", "t", "u"]      # float names in scope
        self.fresh = itertools.count()

    def choice(self, items):
        return items[self.pick(len(items))]

    def chance(self, p_in_8):
        return self.pick(8) < p_in_8

    def const(self):
        return self.choice(("0.5", "1.5", "0.25", "2.0", "0.7", "C", "1.0"))

    def scalar(self, depth=0):
        """A float expression."""
        k = self.pick(10 if depth < 2 else 4)
        if k < 2:
            return self.choice(self.scalars)
        if k == 2:
            return self.const()
        if k == 3:
            if self.loop_vars and self.chance(5):
                return f"v[{self.choice(self.loop_vars)}]"
            return f"v[{self.pick(N)}]"
        if k == 4:
            return self.choice(self.UNARY).format(_par(self.scalar(depth + 1)))
        if k in (5, 6):
            return self.choice(self.BINARY).format(_par(self.scalar(depth + 1)),
                                                   _par(self.scalar(depth + 1)))
        if k == 7:
            return self.choice(("np.sum({})", "np.mean({})", "np.max({})", "G @ ({})")).format(
                self.array(depth + 1))
        if k == 8:
            return f"h({self.scalar(depth + 1)}, {self.scalar(depth + 1)})"
        self.uses_random = True
        return self.choice(("RS.randn()", "RS.rand()", "float(np.sum(RS.randn(2)))"))

    def array(self, depth=0):
        """An expression of shape (N,)."""
        k = self.pick(7 if depth < 2 else 3)
        if k == 0:
            return "v"
        if k == 1:
            return "G"
        if k == 2:
            return f"v * ({self.scalar(depth + 1)})"
        if k == 3:
            return self.choice(("np.sin({})", "np.tanh({})", "({}) ** 2")).format(
                self.array(depth + 1))
        if k == 4:
            return self.choice(("{} + {}", "{} * {}", "{} - {}")).format(
                _par(self.array(depth + 1)), _par(self.array(depth + 1)))
        if k == 5:
            self.uses_random = True
            return f"(v + 0.1 * RS.randn({N}))"
        return f"np.where(v > {self.scalar(depth + 1)}, v, G)"

    def condition(self):
        k = self.pick(6)
        if k < 3:
            return f"{self.scalar(1)} > {self.scalar(1)}"
        if k == 3 and self.loop_vars:
            return f"{self.choice(self.loop_vars)} {self.choice(('==', '>', '<'))} {self.pick(3)}"
        if k == 4:
            return f"{self.scalar(1)} > {self.const()} and {self.scalar(2)} < 3.0"
        return f"C > {self.choice(('0.5', '1.0'))}"          # a Python float

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def block(self, n, assign=None):
        """``n`` statements; a name first assigned in them is not seen after
        the block. ``assign``: a new name the block assigns last."""
        start, scope = len(self.lines), len(self.scalars)
        for _ in range(n):
            self.statement()
        if assign is not None:
            self.emit(f"{assign} = {self.scalar(1)}")
        if len(self.lines) == start:
            self.emit("pass")
        del self.scalars[scope:]

    def statement(self):
        k = self.pick(16 if self.depth < 3 else 8)
        if k < 4:
            self.emit(f"{self.choice(self.scalars[1:])} = {self.scalar()}")
        elif k == 4:
            self.emit(f"{self.choice(self.scalars[1:])} {self.choice(('+=', '*=', '-='))} "
                      f"{self.scalar(1)}")
        elif k == 5:
            idx = self.choice(self.loop_vars) if self.loop_vars and self.chance(5) else self.pick(N)
            self.emit(f"v[{idx}] {self.choice(('=', '+=', '*='))} {self.scalar(1)}")
        elif k == 6:
            self.emit(f"v = {self.array()} * 1.0")      # never an alias of G
        elif k == 7 and self.in_loop:
            self.emit(f"if {self.condition()}:")
            self.depth += 1
            self.emit(self.choice(("break", "continue")))
            self.depth -= 1
        elif k in (8, 9, 10):
            self.if_statement()
        elif k in (11, 12):
            self.for_loop()
        elif k == 13:
            self.while_loop()
        elif k == 14:
            self.emit(f"if {self.condition()}:")
            self.depth += 1
            self.emit(f"return {self.scalar()}")
            self.depth -= 1
        else:
            self.emit(f"s = s + {self.scalar(1)}")

    def if_statement(self):
        # sometimes a name first assigned in every branch, read after the if
        # (on every path that gets there it is assigned)
        fresh = f"w{next(self.fresh)}" if self.chance(3) else None
        self.emit(f"if {self.condition()}:")
        self.depth += 1
        self.block(1 + self.pick(2), fresh)
        self.depth -= 1
        if self.chance(3):
            self.emit(f"elif {self.condition()}:")
            self.depth += 1
            self.block(1, fresh)
            self.depth -= 1
        if fresh or self.chance(4):
            self.emit("else:")
            self.depth += 1
            self.block(1 + self.pick(2), fresh)
            self.depth -= 1
        if fresh:
            self.scalars.append(fresh)

    def for_loop(self):
        var = "ijk"[len(self.loop_vars)] if len(self.loop_vars) < 3 else None
        if var is None:
            return
        self.emit(f"for {var} in range({1 + self.pick(N)}):")
        self.depth += 1
        self.loop_vars.append(var)
        self.in_loop += 1
        self.block(1 + self.pick(3))
        self.in_loop -= 1
        self.loop_vars.pop()
        self.depth -= 1

    def while_loop(self):
        counter = f"n{self.depth}"
        self.emit(f"{counter} = 0")
        self.emit(f"while {self.scalar(1)} < {self.choice(('2.0', '5.0', '1.0'))} and "
                  f"{counter} < {1 + self.pick(4)}:")
        self.depth += 1
        self.emit(f"{counter} = {counter} + 1")
        self.in_loop += 1
        self.block(1 + self.pick(2))
        self.in_loop -= 1
        self.depth -= 1

    def program(self):
        g = ", ".join(repr(round(0.3 + 0.4 * k, 2)) for k in range(N))
        self.depth = 1
        self.emit("s = x * 0.5")
        self.emit("t = np.sum(v) * 0.25")
        self.emit("u = 1.0")
        self.block(2 + self.pick(5))
        self.emit(f"return {self.scalar()}")
        body = "\n".join(self.lines)
        return (f"import numpy as np\n\n"
                f"G = np.array([{g}])\n"
                f"C = {self.choice(('0.7', '1.3'))}\n"
                f"RS = np.random.RandomState(0)\n\n\n"
                f"def h(a, b):\n"
                f"    if a > b:\n"
                f"        return np.sin(a) * C + b\n"
                f"    return a * b * 0.5 + G[0]\n\n\n"
                f"def f(x, v):\n{body}\n")


def _par(e):
    """``e`` in parentheses unless it is one name or number."""
    return e if re.fullmatch(r"[\w.]+", e) else f"({e})"


# --- loading a program from a file -----------------------------------------------
def load(source):
    """Write ``source`` to a file and import it as a fresh module."""
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="wengert-fuzz-")
    name = f"fuzzprog_{os.getpid()}_{next(_COUNTER)}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- checking one program ---------------------------------------------------------
class WrongValue(AssertionError):
    """A derivative (or value) that disagrees with its reference."""


class Report:
    def __init__(self):
        self.checks = 0
        self.refused = {}           # engine -> typed error name of the first refusal
        self.skipped_fd = 0         # points where finite differences were not reliable


def _close(got, want, rtol, atol, what, source):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise WrongValue(f"{what}: shape {got.shape} against {want.shape}\n{source}")
    finite = np.isfinite(want) & np.isfinite(got)
    if not np.array_equal(np.isfinite(want), np.isfinite(got)):
        raise WrongValue(f"{what}: non-finite mismatch {got} against {want}\n{source}")
    err = np.max(np.abs(got - want)[finite], initial=0.0)
    scale = np.max(np.abs(want)[finite], initial=0.0)
    if err > atol + rtol * scale:
        raise WrongValue(f"{what}: {got} against {want} (error {err:.3g})\n{source}")


def _run(fn, seed, mod):
    mod.RS.seed(seed)
    return fn()


def _fd_grad(f, x, v, seed, mod, eps):
    """Central differences of f in (x, v), every evaluation with the same draws."""
    def at(dx, dv):
        return _run(lambda: float(f(x + dx, v + dv)), seed, mod)
    gx = (at(eps, 0.0) - at(-eps, 0.0)) / (2 * eps)
    gv = np.array([(at(0.0, eps * e) - at(0.0, -eps * e)) / (2 * eps) for e in np.eye(N)])
    return gx, gv


def _reliable_fd(f, x, v, seed, mod, report):
    """Finite differences where two step sizes agree, else None."""
    a = _fd_grad(f, x, v, seed, mod, 1e-5)
    b = _fd_grad(f, x, v, seed, mod, 1e-6)
    scale = max(1.0, abs(a[0]), float(np.max(np.abs(a[1]))))
    if abs(a[0] - b[0]) > 1e-4 * scale or np.max(np.abs(a[1] - b[1])) > 1e-4 * scale:
        report.skipped_fd += 1
        return None
    return a


def _typed(fn, engine, report):
    """``fn()``, or None when wengert refuses with a typed error (noted)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except WengertError as err:
        report.refused.setdefault(engine, type(err).__name__)
        return None


def _state(rs):
    st = rs.get_state()
    return st[1].copy(), st[2], st[3], st[4]


def _same_state(a, b):
    return np.array_equal(a[0], b[0]) and a[1:] == b[1:]


def _point(f, mod, rng):
    """(x, v, the random state's seed, the plain value there), the value None
    where the program is not finite there, even in values it does not return
    (an overflow, a log of a negative: reverse mode multiplies such a value's
    zero cotangent, and 0 * inf is nan, as in every AD tool)."""
    x = float(rng.uniform(-1.5, 1.5))
    v = rng.uniform(-1.0, 1.0, N)
    draw_seed = int(rng.integers(0, 2 ** 31))
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            plain = _run(lambda: f(x, v.copy()), draw_seed, mod)
    except (ZeroDivisionError, FloatingPointError, OverflowError):
        return x, v, draw_seed, None
    if not np.isfinite(plain) or abs(plain) > 1e6:
        return x, v, draw_seed, None
    return x, v, draw_seed, plain


def check(source, seed=0, orders=4, hessians=False):
    """Run every check on the program ``source``; raise ``WrongValue`` on a
    wrong value (any non-wengert exception propagates). Returns a Report.
    ``hessians``: also the Hessian in v of every third program (``--hessians``;
    Hessians through loops with early exits still crash: issue 11)."""
    mod = load(source)
    f = mod.f
    report = Report()
    rng = np.random.default_rng(seed)
    x, v, draw_seed, plain = _point(f, mod, rng)
    if plain is None:
        return report
    after_plain = _state(mod.RS)
    grads = {}
    for engine in ("source", "trace"):
        vg = wg.value_and_grad(f, argnums=(0, 1), engine=engine)
        v_in = v.copy()
        res = _typed(lambda: _run(lambda: vg(x, v_in), draw_seed, mod), engine, report)
        if res is None:
            continue
        if not np.array_equal(v_in, v):
            raise WrongValue(f"{engine}: the caller's array was written\n{source}")
        if not _same_state(_state(mod.RS), after_plain):
            raise WrongValue(f"{engine}: a derivative call drew other random numbers than a "
                             f"plain call\n{source}")
        value, (gx, gv) = res
        report.checks += 1
        _close(value, plain, 1e-12, 1e-12, f"{engine}: value_and_grad's value", source)
        grads[engine] = (gx, gv, vg)
    if not grads:
        return report
    fd = _reliable_fd(f, x, v, draw_seed, mod, report)
    for engine, (gx, gv, _) in grads.items():
        if fd is not None:
            report.checks += 1
            _close(gx, fd[0], 1e-5, 1e-6, f"{engine}: d/dx against finite differences", source)
            _close(gv, fd[1], 1e-5, 1e-6, f"{engine}: d/dv against finite differences", source)
    if len(grads) == 2:
        report.checks += 1
        (ax, av, _), (bx, bv, _) = grads["source"], grads["trace"]
        _close(ax, bx, 1e-9, 1e-12, "source against trace: d/dx", source)
        _close(av, bv, 1e-9, 1e-12, "source against trace: d/dv", source)
    _check_jvp_vjp(f, x, v, draw_seed, mod, report, source)
    if fd is not None and seed % 3 == 0:
        _check_float32(f, x, v, draw_seed, mod, grads, report, source)
    if "source" in grads and orders > 1:
        _check_nested(f, x, v, draw_seed, mod, report, source, orders)
        if hessians and seed % 3 == 1:
            _check_hessian(f, x, v, draw_seed, mod, grads["source"][2], report, source)
    _check_again(f, mod, grads, rng, report, source)
    return report


def _check_hessian(f, x, v, draw_seed, mod, vg, report, source):
    """The Hessian in v (jacfwd of jacrev, source engine), and jacfwd against
    jacrev of the gradient, against differences of the AD gradient."""
    def grad_v(u):
        return vg(x, u)[1][1]
    h = _typed(lambda: _run(lambda: wg.hessian(lambda u: f(x, u), engine="source")(v),
                            draw_seed, mod), "source", report)
    if h is None:
        return
    cols = []
    for e in np.eye(N):
        hi = _run(lambda: grad_v(v + 1e-5 * e), draw_seed, mod)
        lo = _run(lambda: grad_v(v - 1e-5 * e), draw_seed, mod)
        lo2 = _run(lambda: grad_v(v - 1e-6 * e), draw_seed, mod)
        hi2 = _run(lambda: grad_v(v + 1e-6 * e), draw_seed, mod)
        a, b = (hi - lo) / 2e-5, (hi2 - lo2) / 2e-6
        if np.max(np.abs(a - b)) > 1e-4 * max(1.0, np.max(np.abs(a))):
            report.skipped_fd += 1
            return
        cols.append(b)
    report.checks += 1
    _close(h, np.array(cols).T, 1e-4, 1e-5, "source: Hessian in v against differences of "
           "the gradient", source)


def _check_float32(f, x, v, draw_seed, mod, grads, report, source):
    """With ``v`` float32: the gradient keeps its dtype, the value is the
    plain call's, and the derivative is the float64 one to float32 accuracy.
    (The value's dtype may differ: where branches return float32 on one path
    and float64 on another, a traced if returns their join, float64.)"""
    v32 = v.astype(np.float32)
    try:
        plain = _run(lambda: f(x, v32.copy()), draw_seed, mod)
    except (ZeroDivisionError, FloatingPointError, OverflowError):
        return
    for engine, (gx64, gv64, _) in grads.items():
        vg = wg.value_and_grad(f, argnums=(0, 1), engine=engine)
        res = _typed(lambda: _run(lambda: vg(x, v32), draw_seed, mod), engine, report)
        if res is None:
            continue
        value, (gx, gv) = res
        report.checks += 1
        if np.asarray(gv).dtype != np.float32:
            raise WrongValue(f"{engine}: the gradient of a float32 input is "
                             f"{np.asarray(gv).dtype}\n{source}")
        _close(value, plain, 1e-6, 1e-6, f"{engine}, float32: value", source)
        scale = max(1.0, abs(gx64), float(np.max(np.abs(gv64))))
        _close(gx, gx64, 0.0, 2e-3 * scale, f"{engine}, float32: d/dx against float64", source)
        _close(gv, gv64, 0.0, 2e-3 * scale, f"{engine}, float32: d/dv against float64", source)


def _check_jvp_vjp(f, x, v, draw_seed, mod, report, source):
    """<ct, J t> == <J^T ct, t>, each side with the program's draws."""
    rng = np.random.default_rng(draw_seed)
    tx, tv = float(rng.normal()), rng.normal(size=N)
    ct = float(rng.normal())
    for engine in ("source", "trace"):
        fwd = _typed(lambda: _run(lambda: wg.jvp(f, (x, v), (tx, tv), engine=engine),
                                  draw_seed, mod), engine, report)
        rev = _typed(lambda: _run(lambda: wg.vjp(f, x, v, engine=engine), draw_seed, mod),
                     engine, report)
        if fwd is None or rev is None:
            continue
        out, pullback = rev
        cx, cv = pullback(ct)
        report.checks += 1
        lhs = ct * float(fwd[1])
        rhs = float(cx) * tx + float(np.dot(cv, tv))
        _close(lhs, rhs, 1e-9, 1e-10, f"{engine}: dot-product test (jvp against vjp)", source)


def _check_nested(f, x, v, draw_seed, mod, report, source, orders):
    """Order k in x against central differences of order k - 1 (source engine)."""
    def fx(t):
        return f(t, v.copy())
    derivs = [fx]
    for _ in range(orders):
        derivs.append(wg.grad(derivs[-1], engine="source"))
    for k in range(2, orders + 1):
        lower, higher = derivs[k - 1], derivs[k]
        got = _typed(lambda: _run(lambda: higher(x), draw_seed, mod), "source", report)
        if got is None:
            return
        fd = []
        for eps in (1e-4, 1e-5):
            a = _typed(lambda: _run(lambda: lower(x + eps), draw_seed, mod), "source", report)
            b = _typed(lambda: _run(lambda: lower(x - eps), draw_seed, mod), "source", report)
            if a is None or b is None:
                return
            fd.append((a - b) / (2 * eps))
        scale = max(1.0, abs(fd[0]))
        if abs(fd[0] - fd[1]) > 1e-3 * scale:
            report.skipped_fd += 1
            return
        report.checks += 1
        _close(got, fd[1], 1e-4, 1e-5, f"order {k} in x against differences of order {k - 1}",
               source)


def _check_again(f, mod, grads, rng, report, source):
    """The same derivative objects after G changed in place, C was rebound,
    and at new inputs with another random state."""
    mod.G[0] += 0.5
    mod.C = mod.C * 1.5 + 0.125
    x, v, draw_seed, plain = _point(f, mod, rng)
    if plain is None:
        return
    fd = _reliable_fd(f, x, v, draw_seed, mod, report)
    for engine, (_, _, vg) in grads.items():
        res = _typed(lambda: _run(lambda: vg(x, v), draw_seed, mod), engine, report)
        if res is None:
            continue
        value, (gx, gv) = res
        report.checks += 1
        _close(value, plain, 1e-12, 1e-12, f"{engine}, second call: value", source)
        if fd is not None:
            _close(gx, fd[0], 1e-5, 1e-6, f"{engine}, second call: d/dx", source)
            _close(gv, fd[1], 1e-5, 1e-6, f"{engine}, second call: d/dv", source)


def generate(seed):
    rng = np.random.default_rng(seed)
    return Gen(lambda n: int(rng.integers(0, n))).program()


# --- many programs ------------------------------------------------------------------
def _one(seed, hessians=False):
    source = generate(seed)
    try:
        rep = check(source, seed, hessians=hessians)
        return seed, "ok", rep.checks, rep.skipped_fd, sorted(set(rep.refused.values())), ""
    except WrongValue as err:
        return seed, "wrong", 0, 0, [], str(err)
    except Exception as err:   # noqa: BLE001 -- a crash, reported with the program
        return seed, "crash", 0, 0, [], f"{type(err).__name__}: {err}\n{source}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--hessians", action="store_true",
                    help="also check the Hessian in v of every third program")
    args = ap.parse_args(argv)
    one = functools.partial(_one, hessians=args.hessians)
    seeds = range(args.start, args.start + args.programs)
    t0 = time.time()
    counts = {"ok": 0, "wrong": 0, "crash": 0}
    checks = skipped = 0
    refused = {}
    failures = []
    if args.jobs > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(args.jobs)
        results = pool.imap_unordered(one, seeds, chunksize=4)
    else:
        results = map(one, seeds)
    unchecked = 0
    for seed, status, n, sk, ref, text in results:
        counts[status] += 1
        checks += n
        unchecked += status == "ok" and n == 0
        skipped += sk
        for r in ref:
            refused[r] = refused.get(r, 0) + 1
        if status != "ok":
            failures.append((seed, status, text))
    for seed, status, text in sorted(failures)[:5]:
        print(f"--- seed {seed}: {status}\n{text}\n")
    print(f"{args.programs} programs in {time.time() - t0:.0f} s: {counts['ok']} ok, "
          f"{counts['wrong']} wrong values, {counts['crash']} crashes; {checks} value checks "
          f"({unchecked} programs not finite at their point, or refused by both engines, "
          f"checked nothing), "
          f"{skipped} points where finite differences were unreliable (skipped); "
          f"typed refusals: {refused or 'none'}")
    return 1 if counts["wrong"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
