"""GradBench ``llsq``: a linear least-squares objective and its gradient.

    y(x) = 1/2 sum_i (s_i - x_0 - x_1 t_i - ... - x_{m-1} t_i^{m-1})^2,
    t_i = -1 + 2 i / (n - 1),  s_i = sign(t_i).

``t``, ``s`` and the powers of ``t`` depend on ``n`` only, not on ``x``: they are
constants of the derivative. ``make_input()`` gives the largest size the eval
sends by default (n = 16392, m = 128).
"""
import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled


def llsq(x, n):
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    powers = np.vander(t, len(x), increasing=True)   # powers[i, j] = t_i ** j
    r = np.sign(t) - powers @ x
    return 0.5 * np.sum(r * r)


def _prepare(input):
    return np.array(input["x"], dtype=np.float64), int(input["n"])


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    return {
        "primal": Function(_prepare, compiled(llsq, backend), float),
        "gradient": Function(_prepare, wg.grad(llsq, **ad), np.ndarray.tolist),
    }


def make_input(n=16392, m=128, seed=0):
    x = np.random.default_rng(seed).random(m)
    return {"x": x.tolist(), "n": n, "min_runs": 1, "min_seconds": 0.0}
