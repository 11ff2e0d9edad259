"""The gradient of a logistic-regression loss where the data lives: NumPy in memory, and Dask
on a 2-worker ``dask.distributed.LocalCluster`` (issue 30).

    loss(w) = mean(logaddexp(0, -y * (X @ w)))      X: rows x 100 float64, y: +-1

X is made on the cluster in chunks of ``--chunk`` rows (1e5 by default: 80 MB) and kept there
(``persist``); the NumPy columns use the same numbers, gathered. Timed, best of ``--repeat``
(seconds): the plain function and ``wg.grad`` (source engine, the code generated beforehand)
on each; the derivative / function ratio (target on Dask: at most 4); and on Dask the peak
memory a worker allocated above the data it holds, in chunks (target: at most 3), measured
with ``tracemalloc`` in each worker process (NumPy reports its arrays to it). The gradients
must agree before anything is timed.

Run from the repository root:  ``python -m bench.dask_bench`` (2e6 rows: 1.6 GB of X, held
twice), or ``python -m bench.dask_bench --rows 200000`` for a quick run.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import wengert as wg


def loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _start_tracing():
    tracemalloc.start()


def _reset_peak():
    tracemalloc.reset_peak()
    return tracemalloc.get_traced_memory()[0]


def _peak():
    return tracemalloc.get_traced_memory()[1]


def _peak_per_worker(client, job):
    """The most any worker allocated above what it held before ``job()`` ran, in bytes."""
    base = client.run(_reset_peak)
    job()
    peaks = client.run(_peak)
    return max(peaks[k] - base[k] for k in peaks)


def main(argv=None):
    import dask.array as da
    from distributed import Client, LocalCluster

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n, d, rows = args.rows, args.cols, min(args.chunk, args.rows)
    chunk_bytes = rows * d * 8

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, \
            Client(cluster) as client:
        client.run(_start_tracing)
        rng = da.random.default_rng(0)
        X = rng.standard_normal((n, d), chunks=(rows, d))
        y = da.sign(rng.standard_normal(n, chunks=rows))
        X, y = client.persist([X, y])
        w = np.random.default_rng(1).normal(size=d) / np.sqrt(d)
        Xn, yn = client.compute([X, y], sync=True)

        grad = wg.grad(loss, engine="source")
        g_np = grad(w, Xn, yn)
        g_da = client.compute(grad(w, X, y), sync=True)
        err = np.max(np.abs(g_da - g_np)) / np.max(np.abs(g_np))
        assert err < 1e-10, f"the Dask gradient differs from NumPy's: {err:.2e}"

        rep = args.repeat
        f_np = _best(lambda: loss(w, Xn, yn), rep)
        d_np = _best(lambda: grad(w, Xn, yn), rep)
        f_da = _best(lambda: client.compute(loss(w, X, y), sync=True), rep)
        d_da = _best(lambda: client.compute(grad(w, X, y), sync=True), rep)
        m_f = _peak_per_worker(client, lambda: client.compute(loss(w, X, y), sync=True))
        m_d = _peak_per_worker(client, lambda: client.compute(grad(w, X, y), sync=True))

    print(f"logistic regression, X {n} x {d} float64 ({n * d * 8 / 1e9:.2f} GB), chunks of "
          f"{rows} rows ({chunk_bytes / 1e6:.0f} MB), {-(-n // rows)} chunks; "
          f"gradients agree to {err:.1e}")
    print(f"{'':28}{'function s':>12}{'gradient s':>12}{'ratio':>8}{'peak/worker':>14}")
    print(f"{'NumPy, in memory':28}{f_np:12.3f}{d_np:12.3f}{d_np / f_np:8.2f}{'':>14}")
    print(f"{'Dask, LocalCluster(2)':28}{f_da:12.3f}{d_da:12.3f}{d_da / f_da:8.2f}"
          f"{m_d / chunk_bytes:11.2f} ch")
    print(f"  (the function alone peaks at {m_f / chunk_bytes:.2f} chunks per worker; "
          "targets on Dask: ratio <= 4, peak <= 3 chunks)")


if __name__ == "__main__":
    main()
