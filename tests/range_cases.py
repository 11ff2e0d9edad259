"""Loops over ``range(start, stop, step)`` of every kind: positive,
negative and odd starts and steps, empty ranges, backwards (``RANGES``), and
the programs made over each (``MAKERS``: a scalar scan, products written in
place, two nested loops; ``make_prefix_list``, ``make_prefix``'s mathematics
without in-place writes, for the trace engine).

Read by ``frontends/source/test_loops.py`` (the derivative carries no index
arithmetic that cancels) and ``lower/test_facts.py`` (the loops hold Python
floats).
"""
from __future__ import annotations

import numpy as np

N = 11

# (start, stop - n, step): stop is n plus the second number, so the ranges
# scale with the array; the index i reads x[i], x[i - 1] and x[-i - 1]
# (NumPy's negative indices wrap, the same in every engine)
RANGES = {
    "from_1": (1, 0, 1),
    "from_2_to_n_minus_1": (2, -1, 1),
    "odd_step_3": (1, 0, 3),
    "step_2_from_0": (0, 0, 2),
    "negative_start": (-4, -2, 1),
    "negative_start_odd_step": (-9, -1, 3),
    "backwards": (N - 1, -N, -1),           # range(n - 1, 0, -1)
    "backwards_by_2": (N - 2, -N - 1, -2),  # range(n - 2, -1, -2)
    "empty": (5, -N + 2, 1),                # range(5, 2)
    "empty_backwards": (1, -N + 4, -1),     # range(1, 4, -1)
}


def _range(x, spec):
    start, stop, step = spec
    return range(start, len(x) + stop, step)


def make_scan(spec):
    """A scalar carry through the range: no in-place write."""
    def scan(x):
        s = 0.5
        for i in _range(x, spec):
            s = s * x[i - 1] + np.sin(x[i]) * x[-i - 1]
        return s
    return scan


def make_prefix(spec):
    """Products written in place, ``out[i] = out[i - 1] * x[i] + ...``."""
    def prefix(x):
        out = x * 1.0
        for i in _range(x, spec):
            out[i] = out[i - 1] * x[i] + 0.25 * out[-i - 1]
        return np.sum(out * out)
    return prefix


def make_prefix_list(spec):
    """``make_prefix``'s mathematics without in-place writes: each write is a
    new array (what the trace engine accepts)."""
    def prefix_list(x):
        out = x * 1.0
        n = len(x)
        for i in _range(x, spec):
            v = out[i - 1] * x[i] + 0.25 * out[-i - 1]
            j = i % n
            out = np.concatenate([out[:j], np.stack([v]), out[j + 1:]])
        return np.sum(out * out)
    return prefix_list


def make_nested(spec):
    """Two loops over offset ranges, the inner writing a row in place."""
    def nested(x):
        m = N
        u = np.reshape(x, (m, m)) * 1.0
        for i in range(1, m - 1):
            for j in _range(np.zeros(m), spec):
                u[i, j] = u[i - 1, j] * u[i + 1, j - 1] + np.cos(u[i, -j - 1])
        return np.sum(u ** 2)
    return nested


MAKERS = {"scan": make_scan, "prefix": make_prefix, "nested": make_nested}
