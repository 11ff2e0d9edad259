"""GradBench ``hello``: ``square(x) = x * x`` and its derivative ``double``.

The protocol's smoke test: the input is a bare number, with no ``min_runs`` or
``min_seconds``, and each function runs once.
"""
import wengert as wg

from ..common import Function, ad_options, compiled


def square(x):
    return x * x


def _prepare(input):
    return (float(input),)


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    return {
        "square": Function(_prepare, compiled(square, backend), float),
        "double": Function(_prepare, wg.grad(square, **ad), float),
    }


def make_input(x=1.0):
    return float(x)
