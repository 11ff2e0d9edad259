"""Per-call time of ``grad``: wengert (trace engine) against autograd.

Two problems, each timed three ways in one process -- the plain function call
(the baseline), ``wengert.grad(f, ..., engine="trace")`` and ``autograd.grad``:

  scalar   seed 004's ``f(x, y) = x*y + sin(x)`` at x=0.5, y=4.2, gradient
           with respect to both arguments (argnums=(0, 1));
  logreg   the logistic-regression loss ``mean(log(1 + exp(-y * (X @ w))))``
           on 1000 samples x 100 features (seeded data, labels in {-1, +1}),
           gradient with respect to w.

Both libraries run the same function body: each problem is built by a factory
that takes the numpy module, given plain ``numpy`` for wengert and the baseline
and ``autograd.numpy`` for autograd. Before timing, the two gradients must
agree (``np.allclose``). Each timing warms up, sizes its loop with
``timeit.Timer.autorange`` and reports the best of 5 repeats of the per-call
mean, in microseconds. Without autograd installed, wengert's numbers are still
printed.

Run from the repository root:  ``make bench``  (or ``python -m bench.grad_bench``).
"""
from __future__ import annotations

import sys
import timeit
from importlib import metadata

import numpy as np

import wengert

try:
    import autograd
    import autograd.numpy as anp
except ImportError:        # the `bench` extra is not installed: time wengert alone
    autograd = anp = None

REPEATS = 5
WARMUP_CALLS = 3


# --- problems: one body per problem, written against a numpy module ------
def make_scalar(xp):
    """Seed 004: z = x*y + sin(x)."""
    def f(x, y):
        return x * y + xp.sin(x)
    return f


def make_logreg(xp):
    """Mean logistic loss; logaddexp(0, -z) is log(1 + exp(-z)) without overflow."""
    def loss(w, X, y):
        return xp.mean(xp.logaddexp(0.0, -y * (X @ w)))
    return loss


def scalar_problem():
    return dict(name="scalar f(x,y) (seed 004)", make=make_scalar, args=(0.5, 4.2),
                argnums=(0, 1))


def logreg_problem(n=1000, d=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d)
    y = np.where(X @ w_true + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    w = 0.1 * rng.standard_normal(d)
    return dict(name=f"logreg loss ({n}x{d})", make=make_logreg, args=(w, X, y), argnums=0)


# --- timing ---------------------------------------------------------------
def per_call_us(fn, args):
    """Best of REPEATS per-call means, in microseconds, after a warm-up."""
    for _ in range(WARMUP_CALLS):
        fn(*args)
    timer = timeit.Timer(lambda: fn(*args))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e6


def check_agree(name, g_w, g_a):
    gw = g_w if isinstance(g_w, tuple) else (g_w,)
    ga = g_a if isinstance(g_a, tuple) else (g_a,)
    # raise, not assert: the check must survive ``python -O``
    if len(gw) != len(ga):
        raise AssertionError(f"{name}: {len(gw)} wengert gradients, {len(ga)} autograd")
    for k, (a, b) in enumerate(zip(gw, ga)):
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-7, atol=1e-10):
            raise AssertionError(f"{name}: gradient {k} differs: wengert {a!r} vs autograd {b!r}")


def run_problem(prob):
    args, argnums = prob["args"], prob["argnums"]
    plain = prob["make"](np)
    g_w = wengert.grad(prob["make"](np), argnums=argnums, engine="trace")
    row = dict(name=prob["name"], autograd=None)
    if autograd is not None:
        g_a = autograd.grad(prob["make"](anp), argnum=argnums)
        check_agree(prob["name"], g_w(*args), g_a(*args))
    row["plain"] = per_call_us(plain, args)
    row["wengert"] = per_call_us(g_w, args)
    if autograd is not None:
        row["autograd"] = per_call_us(g_a, args)
    return row


def print_table(rows):
    head = ("problem", "plain (us)", "wengert (us)", "autograd (us)", "wengert/plain",
            "wengert/autograd")
    width = max(len(head[0]), *(len(r["name"]) for r in rows))
    fmt = "{:<%d}  {:>12}  {:>12}  {:>13}  {:>13}  {:>16}" % width
    print(fmt.format(*head))
    print(fmt.format(*("-" * len(h) if i else "-" * width for i, h in enumerate(head))))
    for r in rows:
        ag = r["autograd"]
        print(fmt.format(r["name"], f"{r['plain']:.2f}", f"{r['wengert']:.2f}",
                         "n/a" if ag is None else f"{ag:.2f}",
                         f"{r['wengert'] / r['plain']:.1f}x",
                         "n/a" if ag is None else f"{r['wengert'] / ag:.2f}x"))


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def main():
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"wengert {_version('wengert')}, "
          f"autograd {_version('autograd') if autograd is not None else 'missing'}")
    if autograd is None:
        print("autograd is not installed (pip install -e '.[bench]'): "
              "timing wengert only, gradients not cross-checked")
    rows = [run_problem(p) for p in (scalar_problem(), logreg_problem())]
    if autograd is not None:
        print("gradients of wengert and autograd agree (np.allclose) on every problem")
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
