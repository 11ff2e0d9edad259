"""Functions for frontends/source/test_env.py (the source engine reads their source)."""
import numpy as np

SCALE = 2.0
COEFFS = np.array([1.0, 2.0])


def scaled(x):
    return SCALE * x * x


def poly(x):
    return COEFFS[0] * x + COEFFS[1] * x * x


def make_closure(c):
    def f(x):
        return c * np.sin(x)
    return f
