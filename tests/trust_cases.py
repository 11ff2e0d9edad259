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


# --- control flow: which flag an exit sets --------------------------------------------
def inner_break(x):
    s = x
    for i in range(3):
        s = s * 0.5
        for j in range(2):
            break
        if i > 100:
            break
    return s


def inner_break_traced(x):
    s = x
    for i in range(4):
        s = s * 0.5
        for j in range(3):
            if s > 100.0:
                break
            s = s + 1.0
        if s > 1000.0:
            break
    return s


def inner_continue(x):
    s = x
    for i in range(3):
        for j in range(3):
            if j == 1:
                continue
            s = s * 1.5
        s = s - 0.25
    return s


def return_in_nested_loop_in_if(x):
    s = x
    for i in range(3):
        if i > 0:
            for j in range(2):
                if s > 10.0:
                    return s
                s = s * 2.0
        s = s + 1.0
    return s


def return_in_while_in_for(x):
    s = x
    for i in range(3):
        k = 0
        while k < 2:
            if s * s > 50.0:
                return 3.0 * s
            s = s * 1.5
            k = k + 1
        s = s + 0.5
    return s


# --- the function converted is the one called ---------------------------------------
def make_with_default(g=lambda x: 0.5 * np.dot(x, x)):
    return g


def twice(f):
    import functools

    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@twice
def doubled_square(x):
    return x ** 2


def cube(x):
    return x ** 3


def grad_inside(x):
    return wg.grad(cube, engine="trace")(x) * x


# --- custom_vjp under grad of one float ----------------------------------------------
@wg.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (np.clip(ct, -1.0, 1.0),))


def scaled_clip(x):
    return 10.0 * clip_gradient(x)
