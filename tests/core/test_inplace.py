"""``y += v`` on a traced array in the trace engine, with NumPy's meaning
(``wengert/core/inplace.py``).

NumPy writes an augmented assignment into the array's memory: other names of
the array and views of its memory see the write. The trace engine's tracer
becomes its updated value (every name of it sees the change) and refuses,
with ``InPlaceUpdateError`` at the user's line, a write into a view or into
an array with a live view. Every derivative is checked against finite
differences of the function as Python runs it (on a copy of the argument).

Storing a traced value into an array in place, a traced array or a plain
one, by any subscript or ``out=``, is ``InPlaceUpdateError`` naming the
user's line and the way out (``engine="source"``, which then gives the
right derivative, or ``wg.at``).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors
from wengert.core.errors import InPlaceUpdateError, ShapeMismatchError, UnsupportedDtypeError

import robust_prims_cases as rc
from checks import PROGRAM_RTOL_F64, assert_close, fd_jacobian, fd_jvp, rtol


X = np.array([0.3, -0.2, 0.9, 1.4])


# --- names that share the tracer itself: the write must reach them ---------
def other_name(x):
    y = x * 1.5
    z = y
    y += x * x
    return np.sum(z * x)


def held_in_list(x):
    y = x * 1.5
    keep = [y]
    y -= np.sin(x)
    return np.sum(keep[0] * x)


def held_in_dict(x):
    y = x * 1.5
    keep = {"y": y}
    y *= x
    return np.sum(keep["y"] ** 2)


def each_operator(x):
    y = x + 2.0
    z = y
    y += x
    y -= 0.5 * x
    y *= x
    y /= 1.0 + x * x
    y **= 2
    return np.sum(z)


def argument_written(x):
    x *= 2.0            # the caller's array in Python; wengert never writes it
    return np.sum(x * x)


def in_a_loop(x):
    acc = x * 0.0
    hist = []
    for k in range(3):
        hist.append(acc)
        acc += np.cos(k * x)      # every stored entry is the same array in Python
    return np.sum(hist[0] * x) + np.sum(acc)


def matrix_rows(x):
    m = np.outer(x, x)
    same = m
    m @= np.eye(4) * 2.0
    return np.sum(same)


def scalar_rebinds(x):
    s = x[0]            # a NumPy scalar: ``s += v`` binds a new value, as Python does
    t = s
    s += x[1]
    return s * t


def copy_then_write(x):
    y = x * 1.0
    z = y.copy()        # a new array: the write does not reach it
    y += x
    return np.sum(z * y)


def flatten_is_a_copy(x):
    y = np.outer(x, x)
    f = y.flatten()
    y += 1.0
    return np.sum(f * f) + np.sum(y)


def dead_view(x):
    y = x * 1.0
    s = np.sum(y[1:] - y[:-1])      # views taken and dropped before the write
    y += x
    return s + np.sum(y * y)


SHARED = [other_name, held_in_list, held_in_dict, each_operator, argument_written,
          in_a_loop, matrix_rows, scalar_rebinds, copy_then_write, flatten_is_a_copy,
          dead_view]


def _plain(fn):
    """``fn`` as Python runs it, on a copy of its argument."""
    return lambda x: fn(np.array(x, dtype=float))


@pytest.mark.parametrize("fn", SHARED, ids=lambda f: f.__name__)
def test_write_reaches_every_name(fn):
    x = X.copy()
    g = wg.grad(fn, engine="trace")(x)
    assert np.array_equal(x, X), "the caller's array was written"
    t = np.random.default_rng(1).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(_plain(fn), (X,), (t,)), PROGRAM_RTOL_F64)
    # forward mode and the value itself
    val, tan = wg.jvp(fn, (X.copy(),), (t,), engine="trace")
    assert_close(val, _plain(fn)(X), 1e-14)
    assert_close(tan, np.dot(g, t), PROGRAM_RTOL_F64)


@pytest.mark.parametrize("fn", [other_name, held_in_list, in_a_loop, matrix_rows],
                         ids=lambda f: f.__name__)
def test_second_order_through_the_write(fn):
    h = wg.hessian(fn, engine="trace")(X.copy())
    g = wg.grad(fn, engine="trace")
    assert_close(h, fd_jacobian(lambda x: g(x), (X,)), 1e-6)


# --- views: Python writes through them, the trace engine refuses -----------
def _view_then_base_write(take):
    def fn(x):
        y = np.outer(x, x) if take.__name__.startswith("m_") else x * 1.0
        v = take(y)
        y += 1.0  # write
        return np.sum(v * v)
    fn.__name__ = f"base_write_{take.__name__}"
    return fn


def _view_write(take):
    def fn(x):
        y = np.outer(x, x) if take.__name__.startswith("m_") else x * 1.0
        v = take(y)
        v += 1.0  # write
        return np.sum(y * y)
    fn.__name__ = f"view_write_{take.__name__}"
    return fn


def slice_(y): return y[1:3]


def step_slice(y): return y[::2]


def ellipsis(y): return y[...]


def new_axis(y): return y[None]


def reshape_(y): return y.reshape(2, 2)


def np_reshape(y): return np.reshape(y, (2, 2))


def ravel_(y): return np.ravel(y)


def expand_dims(y): return np.expand_dims(y, 0)


def atleast_2d(y): return np.atleast_2d(y)


def m_row(y): return y[1]


def m_transpose(y): return y.T


def m_np_transpose(y): return np.transpose(y)


def m_swapaxes(y): return y.swapaxes(0, 1)


def m_column(y): return y[:, 2]


def m_diagonal_block(y): return y[1:3, 1:3]


TAKES = [slice_, step_slice, ellipsis, new_axis, reshape_, np_reshape, ravel_, expand_dims,
         atleast_2d, m_row, m_transpose, m_np_transpose, m_swapaxes, m_column,
         m_diagonal_block]
VIEW_CASES = [_view_then_base_write(t) for t in TAKES] + [_view_write(t) for t in TAKES]


@pytest.mark.parametrize("fn", VIEW_CASES, ids=lambda f: f.__name__)
def test_write_through_a_view_raises_or_agrees(fn):
    # where NumPy gives a view, the write must be refused; where the trace
    # engine's value is the array itself (a 1-d .T), it must agree
    x = X.copy()
    try:
        g = wg.grad(fn, engine="trace")(x)
    except InPlaceUpdateError as err:
        assert f"{__file__}:" in str(err) and "view" in str(err)
        return
    t = np.random.default_rng(2).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(_plain(fn), (X,), (t,)), PROGRAM_RTOL_F64)


@pytest.mark.parametrize("fn", VIEW_CASES, ids=lambda f: f.__name__)
def test_views_are_views_in_numpy(fn):
    # the cases are real: Python's result differs from the functional one
    # (``y = y + 1.0``), so a tracer that rebinds would be silently wrong
    plain = _plain(fn)(X)
    rebound = _functional(fn)(X.copy())
    assert not np.isclose(plain, rebound)


def _functional(fn):
    take = fn.__closure__[0].cell_contents

    def run(x):
        y = np.outer(x, x) if take.__name__.startswith("m_") else x * 1.0
        v = take(y).copy()
        if fn.__name__.startswith("base"):
            y = y + 1.0
            return np.sum(v * v)
        v = v + 1.0
        return np.sum(y * y)
    return run


# --- what NumPy itself refuses ---------------------------------------------
def grows(x):
    y = x * 1.0
    y += np.outer(x, x)     # the result is 4x4: NumPy cannot write it into y
    return np.sum(y)


def narrows(x):
    k = np.arange(4)
    k += x                  # float into int: NumPy refuses (same_kind)
    return np.sum(k)


def test_broadcast_result_is_refused_like_numpy():
    with pytest.raises(ValueError):
        _plain(grows)(X)
    with pytest.raises(ShapeMismatchError, match="shape"):
        wg.grad(grows, engine="trace")(X.copy())


def test_narrowing_write_is_refused_like_numpy():
    with pytest.raises(TypeError):
        _plain(narrows)(X)
    with pytest.raises((UnsupportedDtypeError, InPlaceUpdateError)):
        wg.grad(narrows, engine="trace")(X.copy())


def float32_kept(x):
    y = (x * 2.0).astype(np.float32)
    z = y
    y += x                  # float64 into float32: NumPy casts, y stays float32
    return np.sum(z * z)


def test_write_keeps_the_arrays_dtype():
    g = wg.grad(float32_kept, engine="trace")(X.copy())
    t = np.random.default_rng(3).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(_plain(float32_kept), (X,), (t,)), 1e-3)
    val, _ = wg.jvp(float32_kept, (X.copy(),), (t,), engine="trace")
    assert np.asarray(val).dtype == np.float32


# --- a function's result, then a write into its operand --------------------
# NumPy's result is a new array (the write does not reach it), the operand
# itself (``y.conj()`` of a real array, ``np.asarray``) or a view of it (the
# write does); a rule that hands the operand back unchanged must not make a
# new array follow the write
RESULTS = {
    "np.conj": np.conj, "y.conj()": lambda y: y.conj(), "np.positive": np.positive,
    "np.sum(axis=())": lambda y: np.sum(y, axis=()), "y.sum(axis=())": lambda y: y.sum(axis=()),
    "np.roll(0)": lambda y: np.roll(y, 0), "np.nan_to_num": np.nan_to_num,
    "np.clip": lambda y: np.clip(y, -10, 10), "y.clip": lambda y: y.clip(-10, 10),
    "astype(float)": lambda y: y.astype(float), "np.astype": lambda y: np.astype(y, np.float64),
    "y * 1": lambda y: y * 1, "y + 0": lambda y: y + 0, "y ** 1": lambda y: y ** 1,
    "np.where(True)": lambda y: np.where(True, y, 0.0), "np.concatenate([y])":
    lambda y: np.concatenate([y]), "np.stack([y])[0]": lambda y: np.stack([y])[0],
    "np.hstack([y])": lambda y: np.hstack([y]), "np.tile(1)": lambda y: np.tile(y, 1),
    "np.repeat(1)": lambda y: np.repeat(y, 1), "y.repeat(1)": lambda y: y.repeat(1),
    "np.sort": np.sort, "np.take": lambda y: np.take(y, [0, 1, 2, 3]),
    "y[[0, 1, 2, 3]]": lambda y: y[[0, 1, 2, 3]], "np.maximum(y, y)": lambda y: np.maximum(y, y),
    "np.squeeze": np.squeeze, "np.real": np.real, "np.atleast_1d": np.atleast_1d,
    "y.reshape(4)": lambda y: y.reshape(4), "np.flip(np.flip)": lambda y: np.flip(np.flip(y)),
    "np.eye @ y": lambda y: np.eye(4) @ y, "np.cumsum": lambda y: np.cumsum(y[None], axis=0)[0],
    "np.mean(axis=0)": lambda y: np.mean(y[None], axis=0), "y.T": lambda y: y.T,
}


@pytest.mark.parametrize("take", RESULTS.values(), ids=RESULTS.keys())
def test_a_functions_result_sees_the_write_as_in_numpy(take):
    def fn(x):
        y = x * 1.5
        z = take(y)
        y += x * x
        return np.sum(z * x) + np.sum(y)
    try:
        g = wg.grad(fn, engine="trace")(X.copy())
    except InPlaceUpdateError:
        return          # refused: a view NumPy may share (never a guess)
    t = np.random.default_rng(4).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(_plain(fn), (X,), (t,)), PROGRAM_RTOL_F64)


def test_dead_views_are_not_kept():
    # a loop slicing one array each step: the base keeps weak references to
    # its live views only (pruned as they double), so an in-place write's
    # scan of them does not grow with the steps
    from wengert.core import inplace

    class Node:
        def become(self, new):
            pass

    base = Node()
    live = []
    for step in range(1000):
        view = Node()
        inplace._link(view, base)
        if step % 100 == 0:
            live.append(view)           # a few kept, the rest die at once
    del view
    assert len(base._views) <= 2 * 64 + len(live)
    assert inplace._live_view(base) and len(base._views) == len(live)
    live.clear()
    assert not inplace._live_view(base)


# --- writes of traced values: refused with the user's line and the ways out -------
ENGINES = ("trace", "source")
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are


def check_grad_fd(f, args, engine, what=""):
    """The gradient (every argument) against central differences along a
    random direction (float32 tolerances where the output is float32)."""
    argnums = tuple(range(len(args)))
    g = wg.grad(f, argnums=argnums, engine=engine)(*args)
    rng = np.random.default_rng(1)
    t = tuple(rng.standard_normal(np.shape(a)) for a in args)
    got = sum(float(np.sum(gi * ti)) for gi, ti in zip(g, t))
    want = fd_jvp(f, args, t)
    assert_close(got, want, rtol("program", *args, f(*args)), what=f"{what} gradient against FD")


# writes the trace engine makes as NumPy does (issue 25): into a traced array, which becomes
# the updated value (``inplace.assign``), and into an integer array, which truncates the
# value (an integer part: a constant of the derivative)
TRACE_WRITES = ("traced-item", "plain-item-int")


@pytest.mark.parametrize("name, f, source_error", rc.WRITES, ids=[w[0] for w in rc.WRITES])
def test_write_of_traced_value(name, f, source_error):
    """The trace engine refuses a traced value written into a plain float array with the
    user's line and the ways out; the engine it names gives the derivative NumPy's
    semantics define (FD: a value stored into an integer array is truncated, so it has
    none, which the trace engine gives too)."""
    x = np.array([0.3, -0.7, 1.1])
    if name in TRACE_WRITES:
        for engine in ("trace", "source", "auto"):
            check_grad_fd(f, (x,), engine, name)
        return
    for transform in (wg.grad(f, engine="trace"),
                      lambda x: wg.jvp(f, (x,), (np.ones(3),), engine="trace"),
                      lambda x: wg.vjp(f, x, engine="trace")):
        with pytest.raises(errors.InPlaceUpdateError,
                           match=rf"{CASES}:\d+: .*in place.*engine='source' \(or 'auto'\)"):
            transform(x)
    for engine in ("source", "auto"):
        if source_error is None:
            check_grad_fd(f, (x,), engine, name)
        else:
            with pytest.raises(source_error, match=rf"{CASES}:\d+: "):
                wg.grad(f, engine=engine)(x)


@pytest.mark.parametrize("engine", ENGINES)
def test_write_advice_wg_at_works(engine):
    check_grad_fd(rc.wr_with_at, (np.array([0.3, -0.7, 1.1]),), engine, "wg.at")
