"""GradBench ``lse``: LogSumExp of a vector, computed stably, and its gradient.

``make_input()`` gives the largest size the eval sends by default (n = 1,280,000).
"""
import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled


def logsumexp(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def _prepare(input):
    return (np.array(input["x"], dtype=np.float64),)


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    return {
        "primal": Function(_prepare, compiled(logsumexp, backend), float),
        "gradient": Function(_prepare, wg.grad(logsumexp, **ad), np.ndarray.tolist),
    }


def make_input(n=1_280_000, seed=0):
    x = np.random.default_rng(seed).random(n)
    return {"x": x.tolist(), "min_runs": 1, "min_seconds": 0.0}
