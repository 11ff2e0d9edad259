"""Loops over array elements, for ``lower/test_lower.py``: the programs whose
derivatives lowering must make linear (in-place updates, sums into
accumulators), and programs where writing in place would be wrong (a view
or an old value read after the update, a stored residual, the caller's
array). Each takes arrays of length n (``ARGS``) and returns a scalar."""
from __future__ import annotations

import numpy as np

import wengert as wg


def branchy(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s


def one_sided(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            s = s + x[i] * x[i]
    return s


def euler(x0, k):
    xs = np.zeros(k.shape[0])
    x = x0
    for i in range(k.shape[0]):
        x = x + 0.01 * (-k[i] * x)
        xs[i] = x
    return np.sum(xs ** 2)


def prefix(x):
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * x[i]
    return np.sum(out * out)


def horner(c, t):
    p = 0.0
    for i in range(c.shape[0]):
        p = p * t + c[i]
    return p


def stencil(u):
    m = u.shape[0]
    for _ in range(2):
        new = u * 1.0
        for i in range(1, m - 1):
            for j in range(1, m - 1):
                new[i, j] = u[i, j] + 0.1 * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1]
                                             + u[i, j - 1] - 4.0 * u[i, j])
        u = new
    return np.sum(u ** 2)


def damped(x):
    y = x * 1.0
    while np.sum(y * y) > 0.5:
        y = 0.7 * y
    return np.sum(y)


def shifts(y):
    s = 0.0
    for i in range(1, y.shape[0]):
        s = s + y[i] * y[i - 1]
    return s + np.sum(y[:-1] * y[1:])


def gather(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s = s + x[idx[k]] ** 2
    return s + np.sum(x[idx])


# --- where writing in place would be wrong ---------------------------------------
def view_read_after(x):
    # a functional update (``wg.at``): ``head``, a view of the old ``y`` in
    # the generated code, must keep the old values
    y = x * 2.0
    head = y[0:3]
    y = wg.at(y)[1].set(5.0 * x[0])
    return np.sum(head * x[0:3]) + np.sum(y * x)


def old_value_read_after(x):
    y = x * 1.0
    z = y * 1.0
    for i in range(x.shape[0]):
        y[i] = y[i] * x[i]
    return np.sum(y) + np.sum(z * x)


def stored_each_step(x):
    a = x * 1.0
    s = 0.0
    for i in range(x.shape[0]):
        a[i] = a[i] * 0.5 + 1.0
        s = s + np.sum(a * x)
    return s


def writes_argument(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i]
    return np.sum(x)


def two_carries(x):
    a = x * 1.0
    b = x * 2.0
    for i in range(x.shape[0]):
        a, b = b, a
        a[i] = a[i] + b[i]
    return np.sum(a * b)


def ARGS(n, rng):
    """name -> (args, argnums) at length n."""
    x = rng.uniform(-1.0, 1.0, n)
    pos = rng.uniform(0.5, 1.5, n)
    m = max(int(round(np.sqrt(n))), 3)
    return {
        "branchy": ((x,), 0),
        "one_sided": ((pos - 0.5,), 0),
        "euler": ((0.7, pos), (0, 1)),
        "prefix": ((rng.uniform(0.9, 1.1, n),), 0),
        "horner": ((x, 0.9), (0, 1)),
        "stencil": ((rng.uniform(0.0, 1.0, (m, m)),), 0),
        "damped": ((x,), 0),
        "shifts": ((x,), 0),
        "gather": ((x, rng.integers(0, n, max(n // 2, 2))), 0),
        "view_read_after": ((x,), 0),
        "old_value_read_after": ((x,), 0),
        "stored_each_step": ((x,), 0),
        "writes_argument": ((x,), 0),
        "two_carries": ((x,), 0),
    }


# programs the trace engine runs too (no subscripted assignment)
TRACEABLE = ("branchy", "one_sided", "horner", "damped", "shifts", "gather")

LINEAR = ("branchy", "one_sided", "euler", "prefix", "horner", "stencil", "damped", "shifts",
          "gather")
