"""User functions for test_trust.py (issue 10: no silent wrong derivative).

The source engine reads a function's source, so each case lives in a file.
Every function here once gave a wrong derivative without an error; the test
next to its use says which mechanism was at fault.
"""
import numpy as np

import wengert as wg


# --- results that depended on what ran before (id() reuse in simplify) ----------
def abs_tanh(s):
    b = s * s
    t = np.abs(-b)
    u = t ** 2
    return np.tanh(t + 0.7 / (1 + t ** 2)) + 0.0 * u


R = np.array([1.0, 4.0, 7.0])


def entropy_like(x):
    return np.sum((R + x) * np.log(R + x))


def logistic(x):
    return 1 / (1 + np.exp(x))


def sum_logistic(x):
    return np.sum(logistic(x))


def d1_sum_logistic(x):
    return np.sum(wg.grad(sum_logistic, engine="source")(x))


def d2_sum_logistic(x):
    return np.sum(wg.grad(d1_sum_logistic, engine="source")(x))


def d3_sum_logistic(x):
    return np.sum(wg.grad(d2_sum_logistic, engine="source")(x))


# --- threads ---------------------------------------------------------------------------
def loop_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s * np.mean(x)


def loop_branch_grad(x):
    """The gradient of ``loop_branch`` by hand."""
    n = x.shape[0]
    s = np.sum(np.where(x > 0.0, x ** 2, -np.sin(x)))
    ds = np.where(x > 0.0, 2 * x, -np.cos(x))
    return ds * np.mean(x) + s / n
