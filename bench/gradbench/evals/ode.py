"""GradBench ``ode``: s steps of fourth-order Runge-Kutta on

    y_0' = x_0,   y_i' = x_i y_{i-1}  (i > 0),   y(0) = 0,   t in [0, 2],

and the gradient of the last component of the solution with respect to x.
``make_input()`` gives the largest size the eval sends by default
(n = 100000, s = 100).
"""
import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled


def ode_fun(x, y):
    # y shifted down by one, with 1 in front: z_0 = x_0, z_i = x_i y_{i-1}
    return x * np.concatenate([np.ones(1), y[:-1]])


def runge_kutta_step(x, y, h):
    k1 = ode_fun(x, y)
    k2 = ode_fun(x, y + h / 2 * k1)
    k3 = ode_fun(x, y + h / 2 * k2)
    k4 = ode_fun(x, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def primal(x, s):
    h = 2.0 / s
    y = np.zeros_like(x)
    for _ in range(s):
        y = runge_kutta_step(x, y, h)
    return y


def last(x, s):
    return primal(x, s)[-1]


def _prepare(input):
    return np.array(input["x"], dtype=np.float64), int(input["s"])


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    return {
        "primal": Function(_prepare, compiled(primal, backend), np.ndarray.tolist),
        "gradient": Function(_prepare, wg.grad(last, **ad), np.ndarray.tolist),
    }


def make_input(n=100_000, s=100, seed=0):
    x = np.random.default_rng(seed).random(n)
    return {"x": x.tolist(), "s": s, "min_runs": 1, "min_seconds": 0.0}
