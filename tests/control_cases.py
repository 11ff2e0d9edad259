"""Loops shared by the control-flow tests and the backends' tests.

* ``STORING_LOOPS``: Python loops the source engine keeps structured, each a
  kind of residual a loop stores (scalars, an inner loop's rows, a while
  loop's growing list, float32 arrays): ``control/test_loops.py`` checks
  where the generated gradient stores them, ``backends/numba/test_codegen.py``
  runs them under the numba backend;
* ``stored_per_iteration``: what the forward loop of a vjp Program stores each
  iteration (``control/test_loops.py``, ``control/test_residuals.py``);
* ``Y_KINDS`` and ``reference_ys``: each kind of value a loop body stores (its
  ``y``), and the stacked values a Python loop gives
  (``control/test_for_loop.py``, ``control/test_while_loop.py``).
"""
import numpy as np

from wengert.core.ir import Aval

F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
X = np.array([0.3, -0.2, 0.9])


# --- where a loop stores its residuals --------------------------------------------
def scalar_loop(x, n):
    """Scalar carries, ``k`` a Python float: the residuals are scalars the
    reverse loop reads back one at a time (Python lists, as measured faster)."""
    a, b = x[0], x[1]
    s, k = 0.5, 1.0
    for i in range(n):
        s = s * np.sin(s + a) * k + b
        k = k * 0.9
    return s


def nested_loop(x, n):
    """A for loop in a for loop: the outer one stores the inner one's
    residuals, (n, 3, *x) rows."""
    c = x
    for i in range(n):
        for j in range(3):
            c = np.sin(c) * 0.9 + 0.01 * j
        c = c * np.cos(c)
    return np.sum(c * c)


def while_loop_f(x, n):
    """A while loop with an array carry: its residuals grow by doubling."""
    k = 0
    while k < n:
        x = np.sin(x) * 1.1 + 0.2
        k += 1
    return np.sum(x * x)


def f32_loop(x, n):
    c = x
    for i in range(n):
        c = np.tanh(c) * np.float32(1.5)
    return np.sum(c)


STORING_LOOPS = {"scalar": (scalar_loop, np.array([0.7, 0.2])), "nested": (nested_loop, X),
                 "while": (while_loop_f, X), "f32": (f32_loop, X.astype(np.float32))}


def stored_per_iteration(prog, prim):
    """The values the forward loop of a vjp Program stores each iteration."""
    loop = next(e for e in prog.eqns if e.prim.name == prim)     # the forward one
    p = loop.params
    return len(loop.outputs) - p["num_carry"] - (prim == "while_loop")


# --- per-iteration values in buffers --------------------------------------------
# A loop's ys (its stored residuals) go to arrays allocated once: np.empty((n,
# *y)) before a for loop, row i written in step i (a reverse loop's too); a
# while loop's double when full. Each kind of value a loop stores: the body
# (i, c) -> (new carry, y) of a (3,) float64 carry, and the y it stores.
F64_3 = Aval((3,), F64)
Y_KINDS = {
    "f64_vector": (lambda i, c: c * 2.0 + i, Aval((3,), F64)),
    "f32_matrix": (lambda i, c: np.outer(c, c[:2]).astype(F32), Aval((3, 2), F32)),
    "i64_scalar": (lambda i, c: i * 3 + 1, Aval((), I64)),
    "i64_vector": (lambda i, c: np.arange(4) * i, Aval((4,), I64)),
    "bool_vector": (lambda i, c: c > 0.2, Aval((3,), np.dtype(bool))),
    "f64_scalar": (lambda i, c: np.sum(c) * 0.5, Aval((), F64)),
}


def reference_ys(kind, n, reverse, x):
    """The same loop, in Python: the stacked ys, index order."""
    y_of, aval = Y_KINDS[kind]
    ys, c = {}, x
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        ys[i] = np.asarray(y_of(np.int64(i), c), aval.dtype)
        c = np.sin(c) + 0.1
    return np.stack([ys[i] for i in range(n)]) if n > 0 else np.zeros((0,) + aval.shape,
                                                                       aval.dtype)
