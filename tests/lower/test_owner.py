"""Which arrays the code owns, and so may write in place
(``wengert/lower/owner.py``, with ``core/rules.py``'s ``ElementwiseLower``):
elementwise rows written into a dead operand.

``np.exp(t, out=t)``, ``t *= s``, ``np.subtract(a, t, out=t)``, where ``t``
is an array the code made, has the result's shape and dtype, and nothing
reads it (or a view of it) afterwards; and has more than one element
(NumPy makes a new array of one element faster than it writes into one).

``WRITES``: programs where each listed row is written in place (read off the
lowered form) and the code's text says so. ``KEEPS``: programs where writing
in place would be wrong (the operand is read later, is the caller's array, a
view, another dtype, broadcast, the same value twice, or tiny). For all: the code
equals the interpreter bit for bit, leaves the caller's arrays unchanged,
and the source engine's gradient matches the trace engine and differences.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.lower import lower
from wengert.api.backend import python_function
from wengert.transforms.simplify import simplify

from checks import assert_close, fd_jvp, rtol

RNG = np.random.default_rng(5)


# --- written in place -----------------------------------------------------------
def shifted_exp(x):
    return np.exp(x - np.max(x))                 # exp into x - max(x)


def chain(x):
    return np.tanh(np.sin(x * 2.0) + 1.0) / 3.0  # every step into the first product


def subtrahend(x):
    return 2.0 - np.exp(x)                       # the right operand overwritten


def divisor(x):
    return 1.5 / np.cosh(x)


def scaled_rows(x):
    return (x * x) * np.arange(1.0, x.shape[1] + 1.0)   # a row broadcast into the product


WRITES = [(shifted_exp, ["exp"]), (chain, ["sin", "add", "tanh", "div"]),
          (subtrahend, ["sub"]), (divisor, ["div"]), (scaled_rows, ["mul"])]


# --- kept functional ------------------------------------------------------------
def read_later(x):
    y = np.exp(x)
    return np.sin(y) * y                          # y is read after sin


def callers_array(x):
    return np.exp(x)                              # x is the caller's


def view_read_later(x):
    t = np.exp(x)
    head = t[1:]
    return np.sin(t)[1:] + head                   # a view of t is read after sin


def transposed(x):
    t = np.exp(x)
    return np.sin(t.T) + t.T                      # a view of t, read twice


def promoted(x):
    t = np.exp(x.astype(np.float32))
    return t * np.float64(2.0)                    # float32 operand, float64 result


def broadcast_up(x):
    t = np.exp(x[:, :1])
    return t + x                                  # t is smaller than the result


def squared(x):
    t = np.exp(x)
    return t * t                                  # one value, both operands


def tiny(x):
    return np.exp(x[:1, :1] * 2.0)               # one element: a new array is faster


KEEPS = [read_later, callers_array, view_read_later, transposed, promoted, broadcast_up,
         squared, tiny]
KEPT = {read_later: ["exp"], callers_array: ["exp"], view_read_later: ["exp", "sin"],
        transposed: ["exp"], promoted: ["mul"], broadcast_up: ["add"], squared: ["mul"],
        tiny: ["exp"]}


def _lowered(fun, x):
    prog = simplify(wg.make_program(fun, x, engine="source"), copies=True)
    return prog, lower(prog)


def _matrix():
    # values of order 1/2: exp(exp(x)) and the like stay mild enough for
    # central differences (1e-7 relative at worst over 150 seeds)
    return 0.5 * RNG.standard_normal((4, 5))


@pytest.mark.parametrize("fun,rows", WRITES, ids=lambda f: getattr(f, "__name__", ""))
def test_elementwise_rows_write_into_their_dead_operand(fun, rows):
    prog, low = _lowered(fun, _matrix())
    written = sorted(e.prim.name for e in low.inplace)
    assert written == sorted(rows), f"{written}\n{prog}"
    src = python_function(prog).source
    assert "out=" in src or any(f" {op}= " in src for op in "+-*/"), src


@pytest.mark.parametrize("fun", KEEPS, ids=lambda f: f.__name__)
def test_elementwise_rows_kept_where_writing_would_be_wrong(fun):
    prog, low = _lowered(fun, _matrix())
    written = {e.prim.name for e in low.inplace}
    assert not written & set(KEPT[fun]), f"{written}\n{prog}"


@pytest.mark.parametrize("fun", [f for f, _ in WRITES] + KEEPS, ids=lambda f: f.__name__)
def test_code_equals_interpreter_and_leaves_inputs(fun):
    x = _matrix()
    prog = wg.make_program(fun, x, engine="source")
    want = interpret(prog, x)
    before = x.copy()
    got = python_function(simplify(prog, copies=True))(x)
    np.testing.assert_array_equal(x, before)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fun", [f for f, _ in WRITES] + KEEPS, ids=lambda f: f.__name__)
def test_gradients_against_trace_and_differences(fun):
    x = _matrix()
    loss = lambda x: np.sum(np.sin(fun(x)))     # noqa: E731
    before = x.copy()
    g = wg.grad(loss, engine="source")(x)
    np.testing.assert_array_equal(x, before)
    assert_close(g, wg.grad(loss, engine="trace")(x), rtol("ad", np.float32 if fun is promoted
                                                            else x))
    if fun is promoted:
        return      # float32 inside: differences are rounding noise; the engines agree above
    t = RNG.standard_normal(x.shape)
    assert_close(np.sum(g * t), fd_jvp(loss, (x,), (t,)), rtol("program", x))
