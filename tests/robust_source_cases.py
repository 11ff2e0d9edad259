"""Ordinary code the source engine once refused (issue 11), one function per
construct; ``frontends/source/test_blocks.py`` differentiates each in every mode.
Each takes floats or arrays and returns a float."""
from __future__ import annotations

import os

import numpy as np


# --- tuples through traced branches and loops --------------------------------------
def _pair(x):
    s = np.sum(x * x)
    if s > 1.0:
        return (s, x * 2.0)          # an early return of a tuple in a traced if
    return (2.0 * s, x)


def early_return_pair(x):
    s, y = _pair(x)
    return s * np.sum(np.sin(y))


def tuple_in_branches(x):
    if np.sum(x) > 0.5:
        p = (x[0], (x * 2.0, 3.0))
    else:
        p = (x[1] * 3.0, (np.cos(x), 1.0))
    return p[0] * np.sum(p[1][0]) + p[1][1]


def tuple_carried(x):
    st = (x[0], x * 2.0)
    while st[0] < 10.0:
        st = (st[0] * 2.0 + 0.1, st[1] + st[0])
    return np.sum(st[1] ** 2)


# --- while loops whose test starts on Python values ---------------------------------
def fixed_point(x):
    a, b = x[0], x[1]
    y = 0.0
    diff = 1.0
    while diff > 1e-13:            # a Python test, traced after the first step
        y_new = a * np.cos(y) + b
        diff = abs(y_new - y)
        y = y_new
    return y


def counted_break(x):
    i = 0
    s = 1.0
    while i < 8:                    # a Python counter; the break depends on x
        s = s * x[0] + x[1]
        if s > 4.0:
            break
        i += 1
    return s * i


# --- Python values a data-dependent loop changes --------------------------------------
def label_in_loop(x):
    s = x[0]
    while s < 10.0:
        label = "step"              # not an array: unknown after the loop, not read there
        s = s * 2.0 + len(label) * 0.01
    return s * x[1]


def one_path_in_loop(x):
    s = x[0]
    n = 0
    while s < 10.0 and n < 50:
        if s > 2.0:
            t = s * x[1]            # assigned on one path of a traced branch
            s = s + t
        s = s * 1.5
        n += 1
    return s


def list_per_step(x):
    s = x[0]
    while s < 10.0:
        parts = [s, x[1]]           # a list built and used within one step
        s = parts[0] * 2.0 + parts[1]
    return s


def label_read_after(x):
    s = x[0]
    while s < 10.0:
        label = "a"
        s = s * 2.0
    return s if label else 0.0


# --- loops over dicts and Python sequences -------------------------------------------------
def dict_loops(x):
    d = {"a": x[:2], "bb": x[2:] * 2.0}
    s = 0.0
    for v in d.values():
        s = s + np.sum(v ** 2)
    for k, v in d.items():
        s = s + np.sum(np.sin(v)) * len(k)
    for k in d:
        s = s + np.sum(d[k]) * 0.5
    return s


def break_in_list_loop(x):
    s = 0.0
    for c in [1.0, 2.0, 3.0, 4.0]:
        s = s + c * x[0]
        if s > 2.0:                 # a traced break in a loop over a list
            break
        s = s * x[1]
    return s


def break_in_dict_loop(x):
    d = {"a": x[:2], "b": x[2:]}
    s = 0.0
    for v in d.values():
        s = s + np.sum(v * v)
        if s > 1.0:
            break
        s = s * 2.0
    return s


# --- methods ---------------------------------------------------------------------------
class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        h = np.tanh(self.w * x)
        if np.sum(h) > 0.0:
            return np.sum(h ** 2)
        return np.sum(h)


# --- keyword arguments at the call ----------------------------------------------------------
def with_keywords(x, y, k=2, scale=1.0, w=None):
    s = np.sum(np.sin(x * scale) * y) * k
    if w is not None:
        s = s + np.sum(w * x)
    return s


# --- gradients replayed inside another transformation -------------------------------------
# (sums, means and broadcasts whose cotangents are uniform arrays: the simplified
# derivative once held ``add_any`` of a scalar and a matrix, valid as NumPy code
# but not as a Program replayed under jvp)
def sum_and_mean(W):
    return np.sum(W) * 2.0 + np.mean(W ** 2)


def broadcast_rows(W):
    return np.sum(W + np.sum(W, axis=1, keepdims=True)) + np.sum(np.tanh(W)) * 0.5


def mean_of_maximum(W):
    return np.mean(np.maximum(W, 0.1)) - np.sum(W * 3.0) + np.sum(W) ** 2


# --- the examples, as written --------------------------------------------------------
def while_in_traced_if(x, y):
    if y[0] > 1.5:
        b = y
    else:
        s = np.mean(y)
        while s < 1.5:
            s = s + np.sum(x * x)
        b = y * s
    return np.sum(b * x)


def conditional_expression(x):
    return 1.0 if x > 1.0 else x * x


def where_with_a_float(x):
    return np.sum(np.where(x > 1.0, 1.0, x) ** 2)


# --- calls made at each call, never while the code is generated ------------------------------
class Counter:
    """A callable object with state: each call is seen."""

    def __init__(self):
        self.calls = 0

    def __call__(self, a):
        self.calls += 1
        return np.full(3, a * self.calls)


COUNTER = Counter()


def calls_a_counter(x):
    return np.sum(x * COUNTER(2.0))


def writes_to_a_file_descriptor(x, fd):
    os.write(fd, b"w")
    return np.sum(x * x)


def zeros_of_a_traced_length(x):
    return np.sum(np.zeros(int(x[0]) + 2)) + np.sum(x)


def branchy_sum(W):
    if np.sum(W) > 0:
        return np.sum(W ** 3)
    return np.sum(np.sin(W))


# --- Python values a traced branch sets differently on each path ----------------------------
def dict_inside_a_branch(x):
    s = x[0]
    if s > 0.0:
        d = {"a": x * 2.0}           # used inside the branch only
        s = s + np.sum(d["a"])
    return s * x[1]


def label_per_path(x):
    s = x[0]
    if s > 0.0:
        lbl = "up"                   # set on both paths, never read after
        s = s * 2.0
    else:
        lbl = "down"
        s = s - 1.0
    return s * x[1]


def float32_carry_given_a_python_float(x):
    u = x[0]
    n = 0
    while x[1] < 2.0 and n < 2:
        n += 1
        u = u * 0.5 + 0.25           # a Python float meets a float32 carry
    return u


# --- loops on constant operands whose test is read at each call ----------------------------
LIMIT = np.array([1.0, 2.0])
DRAWS = np.random.RandomState(0)


def loop_on_a_global_test(x):
    n = 0
    s = x[0]
    while np.max(LIMIT) < 5.0 and n < 3:      # LIMIT is read at each call
        n = n + 1
    return s * 2.0 ** n


def loop_on_a_drawn_test(x):
    n = 0
    while DRAWS.rand() < 0.7 and n < 6:        # a draw at each test, at each call
        n = n + 1
    return x[0] * n


def draw_after_or(x):
    s = x[0] * 1.0
    if s > 0.0 or DRAWS.rand() < 0.5:      # drawn only where s <= 0
        s = s * 3.0
    return s


def draw_in_a_conditional_expression(x):
    return x[0] * 2.0 if x[0] > 0.0 else x[0] * DRAWS.rand()


def _draws_unless(v):
    if np.sum(v) > 1.0:
        return v[0]
    return v[1] * DRAWS.rand()


def the_same_drawing_branch_twice(x):
    a = _draws_unless(x)            # two equal branches, each drawing: two draws
    b = _draws_unless(x)
    return a + 2.0 * b


def nested_conditional_expressions(x):
    v = x[0]
    return (v * 2 if v > 8 else v * 3 if v > 7 else v * 4 if v > 6 else v * 5 if v > 5 else
            v * 6 if v > 4 else v * 7 if v > 3 else v * 8 if v > 2 else v * 9 if v > 1 else
            v * 10 if v > 0.5 else v * 11 if v > 0.25 else v * 12 if v > 0.1 else
            v * 13 if v > 0.05 else v * DRAWS.rand())
