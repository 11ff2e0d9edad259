"""Gradients on a GPU with CuPy (issue 30): runs the CuPy tests of
``tests/api/test_array_libraries.py``, then times the gradient of a logistic-regression loss
on NumPy (CPU) and on CuPy (GPU), both engines' code generated beforehand, the gradients
checked against each other first. Where CuPy does not import or no GPU is present it says so
and stops (exit status 0: nothing to measure).

    loss(w) = mean(logaddexp(0, -y * (X @ w)))      X: rows x cols float64

Run from the repository root:  ``python -m bench.cupy_bench [--rows 1000000 --cols 100]``.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import wengert as wg


def loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


def _best(fn, repeat, sync=lambda: None):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-tests", action="store_true", help="time only")
    args = ap.parse_args(argv)
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no GPU")
    except Exception as err:    # noqa: BLE001 -- CuPy missing, or CUDA without a device
        print(f"cupy_bench: skipped: CuPy or a GPU is missing ({type(err).__name__}: {err})")
        return 0
    if not args.no_tests:
        import pytest
        code = pytest.main(["-q", "-p", "no:randomly", "tests/api/test_array_libraries.py",
                            "-k", "cupy"])
        if code != 0:
            return int(code)
    rng = np.random.default_rng(0)
    n, d = args.rows, args.cols
    X, y = rng.normal(size=(n, d)), np.sign(rng.normal(size=n))
    w = rng.normal(size=d) / np.sqrt(d)
    Xg, yg, wg_ = cp.asarray(X), cp.asarray(y), cp.asarray(w)
    sync = cp.cuda.Device().synchronize
    print(f"logistic regression, X {n} x {d} float64")
    print(f"{'':22}{'function ms':>13}{'gradient ms':>13}{'ratio':>8}")
    for engine in ("source", "trace"):
        grad = wg.grad(loss, engine=engine)
        g_cpu, g_gpu = grad(w, X, y), grad(wg_, Xg, yg)
        assert isinstance(g_gpu, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(g_gpu), g_cpu, rtol=1e-9, atol=1e-12)
        rows = [("NumPy", lambda: loss(w, X, y), lambda: grad(w, X, y), lambda: None),
                ("CuPy", lambda: loss(wg_, Xg, yg), lambda: grad(wg_, Xg, yg), sync)]
        for name, f, g, s in rows:
            tf, tg = _best(f, args.repeat, s), _best(g, args.repeat, s)
            print(f"{name + ', ' + engine:22}{tf * 1e3:13.2f}{tg * 1e3:13.2f}{tg / tf:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
