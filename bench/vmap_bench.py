"""Per-example gradients and a batched Newton solve: ``wg.vmap(wg.grad)`` against a Python
loop of ``wg.grad``, the same gradients vectorised by hand in NumPy, and JAX and PyTorch.

Three problems, at batch sizes 16, 256 and 4096, timed in one process:

  mlp      per-example gradients of a two-layer tanh MLP's squared loss (16 inputs, 32
           hidden units, 4 outputs): ``vmap(grad(loss), in_axes=(None, 0, 0))``;
  mlp-8    the same MLP, small (8 inputs, 16 hidden units, 2 outputs: the size of the
           issue's measurement, where a loop of ``grad`` took 254x NumPy by hand);
  logreg   per-example gradients of the logistic loss (32 features);
  newton   d x / d a of the root of ``x^3 + x = a`` found by Newton's method in a
           ``while`` loop that runs until the step is below 1e-12: each example stops at
           its own step (``vmap(grad(root))``).

Columns: wengert's ``vmap(grad)`` with the Python backend and with numba (compiled once,
before timing); a Python loop of ``wg.grad`` over the examples (the results stacked);
NumPy by hand (the gradient written out, vectorised over the batch; for newton the same
iteration carrying its tangent, examples masked as they finish); JAX ``jit(vmap(grad))``
(for newton ``jit(vmap(jacfwd))``: JAX's reverse mode refuses ``lax.while_loop``) and
PyTorch ``torch.func.vmap(grad)`` (newton: ``torch.func`` refuses data-dependent control
flow), each where installed, on one CPU thread in float64. Every column's result is checked
against wengert's Python backend before it is timed. A time is the best of 5 per-call
means after a warm-up (``timeit``'s autorange), in milliseconds.

The targets (issue 26): the Python backend within 2x of NumPy by hand at every size; numba
at or below JAX and PyTorch at 256 and 4096; at least 50x faster than the Python loop at
4096. The verdicts are printed under each table.

Run from the repository root:  ``python -m bench.vmap_bench``  (``make bench-vmap``).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")        # one thread for every library (before imports)
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import sys  # noqa: E402
import timeit  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import wengert as wg  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None
try:
    import torch
    import torch.func
    torch.set_num_threads(1)
except ImportError:
    torch = None

SIZES = (16, 256, 4096)
REPEATS = 5
MLPS = {"mlp": (16, 32, 4), "mlp-8": (8, 16, 2)}     # inputs, hidden units, outputs
D_LOGREG = 32


# --- the problems, as a user writes them ---------------------------------------------
def mlp_loss(params, x, y):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.sum((out - y) ** 2)


def logreg_loss(w, x, y):
    z = x @ w
    return np.logaddexp(0.0, z) - y * z


def newton_root(a):
    x = a
    step = 1.0
    while abs(step) > 1e-12:
        step = (x * x * x + x - a) / (3.0 * x * x + 1.0)
        x = x - step
    return x


# --- NumPy by hand --------------------------------------------------------------------
def mlp_by_hand(params, X, Y):
    (W1, b1), (W2, b2) = params
    h = np.tanh(X @ W1 + b1)
    r = 2.0 * (h @ W2 + b2 - Y)
    da = (r @ W2.T) * (1.0 - h * h)
    return ((X[:, :, None] * da[:, None, :], da), (h[:, :, None] * r[:, None, :], r))


def logreg_by_hand(w, X, y):
    z = X @ w
    return (1.0 / (1.0 + np.exp(-z)) - y)[:, None] * X


def newton_by_hand(A):
    x, dx = A.copy(), np.ones_like(A)
    step = np.ones_like(A)
    active = np.ones(A.shape, bool)
    while active.any():
        f, df = x * x * x + x - A, 3.0 * x * x + 1.0
        d_f = df * dx - 1.0
        s = f / df
        d_s = (d_f - s * 6.0 * x * dx) / df
        x = np.where(active, x - s, x)
        dx = np.where(active, dx - d_s, dx)
        step = np.where(active, s, step)
        active = np.abs(step) > 1e-12
    return dx


# --- JAX and PyTorch ----------------------------------------------------------------
def jax_versions():
    if jax is None:
        return {}

    def mlp(params, x, y):
        (W1, b1), (W2, b2) = params
        out = jnp.tanh(x @ W1 + b1) @ W2 + b2
        return jnp.sum((out - y) ** 2)

    def logreg(w, x, y):
        z = x @ w
        return jnp.logaddexp(0.0, z) - y * z

    def root(a):
        def cond(c):
            return jnp.abs(c[1]) > 1e-12

        def body(c):
            x, _ = c
            s = (x * x * x + x - a) / (3.0 * x * x + 1.0)
            return x - s, s
        return jax.lax.while_loop(cond, body, (a, jnp.ones_like(a)))[0]

    per_example = jax.jit(jax.vmap(jax.grad(mlp), in_axes=(None, 0, 0)))
    return {"mlp": per_example, "mlp-8": per_example,
            "logreg": jax.jit(jax.vmap(jax.grad(logreg), in_axes=(None, 0, 0))),
            "newton": jax.jit(jax.vmap(jax.jacfwd(root)))}


def torch_versions():
    if torch is None:
        return {}

    def mlp(params, x, y):
        (W1, b1), (W2, b2) = params
        out = torch.tanh(x @ W1 + b1) @ W2 + b2
        return torch.sum((out - y) ** 2)

    def logreg(w, x, y):
        z = x @ w
        return torch.logaddexp(torch.zeros_like(z), z) - y * z

    grad = torch.func.grad
    per_example = torch.func.vmap(grad(mlp), in_dims=(None, 0, 0))
    return {"mlp": per_example, "mlp-8": per_example,
            "logreg": torch.func.vmap(grad(logreg), in_dims=(None, 0, 0))}


def to_torch(tree):
    return wg.tree.map(lambda x: torch.from_numpy(np.ascontiguousarray(x)), tree)


# --- the problems' data -------------------------------------------------------------
def problems(size, rng):
    out = []
    for name, (d, h, o) in MLPS.items():
        params = ((rng.standard_normal((d, h)) / 4, rng.standard_normal(h) / 4),
                  (rng.standard_normal((h, o)) / 4, rng.standard_normal(o) / 4))
        out.append((name, mlp_loss, mlp_by_hand,
                    (params, rng.standard_normal((size, d)), rng.standard_normal((size, o))),
                    (None, 0, 0)))
    w = rng.standard_normal(D_LOGREG) / 4
    Xl = rng.standard_normal((size, D_LOGREG))
    yl = (rng.random(size) < 0.5).astype(float)
    A = rng.uniform(-5.0, 5.0, size)
    return out + [("logreg", logreg_loss, logreg_by_hand, (w, Xl, yl), (None, 0, 0)),
                  ("newton", newton_root, newton_by_hand, (A,), 0)]


def per_call_ms(fn, args):
    fn(*args)
    timer = timeit.Timer(lambda: fn(*args))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e3


def python_loop(grad, args, in_axes):
    """``grad`` example by example, the results stacked leaf by leaf."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(np.shape(a)[0] for a, ax in zip(args, axes) if ax is not None)

    def run(*args):
        rows = [grad(*[a if ax is None else a[b] for a, ax in zip(args, axes)])
                for b in range(size)]
        return wg.tree.map(lambda *xs: np.stack(xs), *rows)
    return run


def agree(name, column, got, want):
    for g, w in zip(wg.tree.leaves(got), wg.tree.leaves(want)):
        g = np.asarray(g.detach() if hasattr(g, "detach") else g)
        if g.shape != np.shape(w) or not np.allclose(g, w, rtol=1e-8, atol=1e-10):
            raise AssertionError(f"{name}, {column}: the result differs from wengert's")


def run(size, rng, peers_jax, peers_torch):
    rows = []
    for name, fn, by_hand, args, in_axes in problems(size, rng):
        python = wg.vmap(wg.grad(fn), in_axes=in_axes)
        want = python(*args)
        row = {"problem": name, "size": size, "python": per_call_ms(python, args)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", wg.NumbaFallbackWarning)
            numba = wg.vmap(wg.grad(fn, backend="numba"), in_axes=in_axes, backend="numba")
            agree(name, "numba", numba(*args), want)
        fell_back = any(issubclass(w.category, wg.NumbaFallbackWarning) for w in caught)
        row["numba"] = None if fell_back else per_call_ms(numba, args)
        loop = python_loop(wg.grad(fn), args, in_axes)
        agree(name, "loop", loop(*args), want)
        row["loop"] = per_call_ms(loop, args)
        agree(name, "numpy", by_hand(*args), want)
        row["numpy"] = per_call_ms(by_hand, args)
        for column, peers, convert in (("jax", peers_jax, lambda t: t),
                                       ("torch", peers_torch, to_torch)):
            peer = peers.get(name)
            if peer is None:
                row[column] = "not installed" if not peers else "unsupported"
                continue
            peer_args = convert(args)
            agree(name, column, peer(*peer_args), want)
            row[column] = per_call_ms(peer, peer_args)
        rows.append(row)
    return rows


def _ms(v):
    return v if isinstance(v, str) else "fallback" if v is None else f"{v:.3f}"


def _ratio(a, b):
    return "-" if not isinstance(a, float) or not isinstance(b, float) else f"{a / b:.2f}"


def print_table(rows):
    head = ("problem", "B", "wg python", "wg numba", "loop of grad", "NumPy by hand", "JAX",
            "PyTorch", "python/NumPy", "numba/JAX", "numba/torch", "loop/python")
    fmt = "{:<8} {:>5} {:>10} {:>10} {:>13} {:>14} {:>13} {:>13} {:>13} {:>10} {:>12} {:>12}"
    print(fmt.format(*head))
    for r in rows:
        print(fmt.format(r["problem"], r["size"], _ms(r["python"]), _ms(r["numba"]),
                         _ms(r["loop"]), _ms(r["numpy"]), _ms(r["jax"]), _ms(r["torch"]),
                         _ratio(r["python"], r["numpy"]), _ratio(r["numba"], r["jax"]),
                         _ratio(r["numba"], r["torch"]), _ratio(r["loop"], r["python"])))


def verdicts(rows):
    """The issue's targets, one line each: met or not, and where not."""
    def fails(test):
        return [f"{r['problem']}@{r['size']}" for r in rows if not test(r)]

    def at_most(a, b):
        return not isinstance(b, float) or (isinstance(a, float) and a <= b)
    big = [r for r in rows if r["size"] >= 256]
    checks = [
        ("python backend within 2x of NumPy by hand, every size",
         fails(lambda r: r["python"] <= 2.0 * r["numpy"])),
        ("numba at or below JAX at 256 and 4096",
         [f"{r['problem']}@{r['size']}" for r in big if not at_most(r["numba"], r["jax"])]),
        ("numba at or below PyTorch at 256 and 4096",
         [f"{r['problem']}@{r['size']}" for r in big if not at_most(r["numba"], r["torch"])]),
        ("at least 50x faster than the Python loop at 4096",
         [f"{r['problem']}@{r['size']}" for r in rows
          if r["size"] == max(SIZES) and r["loop"] < 50.0 * r["python"]]),
    ]
    for text, missed in checks:
        print(f"  {'met    ' if not missed else 'MISSED '} {text}"
              + (f" (not at: {', '.join(missed)})" if missed else ""))


def main(sizes=SIZES):
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}, "
          f"torch {torch.__version__ if torch else 'not installed'}; one thread; times in ms")
    rng = np.random.default_rng(0)
    peers_jax, peers_torch = jax_versions(), torch_versions()
    rows = [r for size in sizes for r in run(size, rng, peers_jax, peers_torch)]
    rows.sort(key=lambda r: ([p for p, *_ in problems(1, rng)].index(r["problem"]), r["size"]))
    print_table(rows)
    verdicts(rows)


if __name__ == "__main__":
    main()
