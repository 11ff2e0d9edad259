"""User functions for core/test_dims.py (the source engine reads them)."""
import numpy as np


def neighbours(x):
    # a loop over a length, slices whose bounds follow it, a sum's broadcast
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2
    return s + np.sum(x[1:] * x[:-1])


def branch_on_length(x):
    # the code depends on the length: a guard records the comparison
    if x.shape[0] > 3:
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def weighted(x, w):
    # w of length 1 broadcasts; of x's length it does not
    return np.sum(np.sin(x) * w)


def baked_length(x):
    # 1 / len(x) is a float made from a length: the code holds that number
    return np.sum(x * x) * (1.0 / len(x))


def matrix_stats(a, b):
    # 2-d: reductions over either axis, a product, zeros made from a shape
    z = np.zeros(a.shape[1])
    for row in a:
        z = z + row * row
    return np.sum(a @ b.T) + np.sum(a, axis=0) @ b[-1] + np.sum(z * b[0])


def dict_input(p):
    return np.sum(p["w"] * p["x"]) + np.sum(p["x"] ** 2)


def mean_squared_error(w, x, y):
    # the mean's weight 1 / n is a number computed from a length: kept symbolic
    return np.mean((x @ w - y) ** 2)
