"""User functions for core/test_context.py (the source engine reads them): each
generates code with symbolic lengths, and between them they stage loops,
guards of broadcasting and of lengths, and constants of symbolic shape."""
import numpy as np


def neighbours(x):
    # a loop over a length, slices whose bounds follow it, a sum's transpose
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 2
    return s + np.sum(x[1:] * x[:-1])


def weighted(x, w):
    # w of length 1 broadcasts against x, of x's length it does not: a guard
    return np.sum(np.sin(x) * w)


def made_constants(x):
    # constants of symbolic shape: zeros_like, ones(n), eye(n)
    n = x.shape[0]
    z = np.zeros_like(x)
    o = np.ones(n)
    for i in range(n):
        z = z + x * o * (i + 1.0)
    return np.sum(z * z) + np.sum(np.eye(n) @ x * x) + x.sum()


def branch_on_length(x):
    # the code depends on the length: a guard records the comparison
    if x.shape[0] > 3:
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def mean_squared_error(w, a, y):
    # a mean's weight 1 / n is a number computed from a length
    return np.mean((a @ w - y) ** 2)


def matrix_stats(a, b):
    # 2-d: reductions over either axis, a product, zeros made from a shape
    z = np.zeros(a.shape[1])
    for row in a:
        z = z + row * row
    return np.sum(a @ b.T) + np.sum(a, axis=0) @ b[-1] + np.sum(z * b[0])


def damped(x, k):
    # a while loop whose trip count depends on the values
    t = 0
    while np.sum(x * x) > 1e-3 and t < k:
        x = 0.5 * x + 0.1 * np.tanh(x)
        t = t + 1
    return np.sum(x * x) + t
