"""Example functions for ``wengert show`` and ``make demo``."""
import numpy as np


def seed000(x, y):
    """Seed 000's straight-line program."""
    p = 7 * x
    r = 1 / y
    q = p * x * 5
    v = 2 * p * q + 3 * r
    return v


def damped(x, n):
    """A loop with a branch: the state halves when it grows past 1."""
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + np.sin(x * i)
        else:
            s = s + x * x
    return s
