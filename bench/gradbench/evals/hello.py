"""GradBench ``hello``: ``square(x) = x * x`` and its derivative ``double``.

The protocol's smoke test: the input is a bare number, with no ``min_runs`` or
``min_seconds``, and each function runs once.
"""
import wengert as wg

from ..common import Function


def square(x):
    return x * x


def _prepare(input):
    return (float(input),)


def functions(engine="auto"):
    return {
        "square": Function(_prepare, square, float),
        "double": Function(_prepare, wg.grad(square, engine=engine), float),
    }


def make_input(x=1.0):
    return float(x)
