"""Functions for api/test_codes.py (the source engine reads their source)."""
import numpy as np

import wengert as wg

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


WEIGHTS = [1.0, 1.0, 1.0, 1.0, 3.0, 5.0]      # equal neighbours: n and n + 1 agree


def weight_of_list(x, n):
    # an outside list indexed by the int: another item at another n
    return WEIGHTS[n] * np.sum(x * x)


def weight_of_local_list(x, n):
    ws = [2.0, 2.0, 2.0, 7.0, 9.0]
    return ws[n] * np.sum(x * x)


def weight_of_call(x, n):
    # a function that is called, not converted, on the int
    return float(np.sign(n - 3.5) + 2.0) * np.sum(x * x)


def weight_of_floor(x, n):
    return np.floor(n / 3) * np.sum(x * x)


# --- ints that only set trip counts and lengths ----------------------------------
def trip_for(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x * (i + 1.0)))
    return s


def trip_while(x, n):
    k = 0
    y = x
    while k < n:
        y = 0.9 * y + 0.1 * np.tanh(y)
        k = k + 1
    return np.sum(y * y)


def trip_fori(x, n):
    return np.sum(wg.fori_loop(n, lambda i, c: c * 0.95 + np.sin(c) * 0.01, x))


def lengths_made(x, n):
    z = np.zeros(n) + 1.0
    o = np.ones((n, x.shape[0]))
    return np.sum(z) * np.sum(x ** 2) + np.sum(o @ np.cos(x))


def leading_slice(x, n):
    return np.sum(x[:n] ** 3) + np.sum(x[n:] * 2.0)


def int_in_values(x, n):
    # n as a number in the computation (a weight), and in a mean's divisor
    return np.sum(x ** 2) * n + np.sum(np.cos(x)) / n


def em_steps(theta, data, n_iter):
    # an EM-style loop: the iteration count changes from call to call
    for _ in range(n_iter):
        w = np.exp(-(data - theta) ** 2)
        theta = 0.5 * theta + 0.5 * np.sum(w * data) / np.sum(w)
    return theta


def trip_helper(x, n):
    return _helper_loop(x, n) + n


def _helper_loop(x, n):
    s = 0.0
    for i in range(1, n):
        s = s + np.sum(x ** 2) / i
    return s


def outer_made(x, n):
    # a constant of the int's length, met by a traced value
    return np.sum(np.outer(np.ones(n), x) ** 2)


def leading_part(x, n):
    return np.sum(x[:n] ** 2) * n


TABLE = {1: 0.5, 2: 1.5, 3: 1.5, 4: 2.5}


def weight_of_dict(x, n):
    # a dict keyed by the int (a symbolic int is not the dict's key: staged at
    # the int's value instead)
    return TABLE[n] * np.sum(x * x)


def weight_of_local_dict(x, n):
    table = {1: 0.5, 2: 1.5, 3: 1.5, 4: 2.5}
    return table[n] * np.sum(x * x)


def outer_loss(w, t):
    # code that holds at every length of t (its second staging agrees)
    return np.sum((np.outer(t, w) - np.sin(t)[:, None]) ** 2)
