"""Functions for test_code_reuse.py (the source engine reads their source)."""
import numpy as np

SCALE = 2.0
POWERS = np.array([0.0, 1.0, 2.0, 3.0])     # a float array: read at each call
DATA = np.linspace(0.1, 1.0, 6)


def design(t):
    # a design matrix made from data that is not differentiated
    return np.cos(np.outer(t, POWERS)) + t[:, None] ** POWERS


def design_loss(w, t):
    return np.sum((design(t) @ w - np.sin(t)) ** 2)


def design_loss_kw(w, *, t):
    return np.sum((design(t) @ w - np.sin(t)) ** 2)


def design_loss_tree(w, data):
    t, y = data["t"], data["y"]
    return np.sum((design(t) @ w - y) ** 2)


def global_loss(w):
    # a global float array: read by the code at each call
    return np.sum((design(DATA) @ w - 1.0) ** 2)


class Model:
    def __init__(self, t):
        self.t = t

    def loss(self, w):
        return np.sum((design(self.t) @ w - 0.5) ** 2)


def object_loss(w, model):
    return np.sum((design(model.t) @ w) ** 2)


def make_closure_loss(t):
    def loss(w):
        return np.sum((design(t) @ w) ** 2)
    return loss


def scaled(x):
    return SCALE * np.sum(x * x)


def helper(x):
    return np.sin(x)


def uses_helper(x):
    return np.sum(helper(x))


def cube(x):
    return np.sum(x ** 3)
