"""Aliasing (``wengert/frontends/source/alias.py``, ``views.py``): Python's
in-place writes against the source engine's functional updates.

``y[i] = v``, ``y[i] += v`` and ``y += v`` write into an array in Python, and
every other name bound to it or to a view of it sees the write. The source
engine binds a new value to ``y`` instead, so where another name that may
share ``y``'s memory is read after the write it raises ``InPlaceUpdateError``
at the line of the write (never a silent wrong derivative); where nothing
shares, the derivative equals finite differences. The trace engine, on the
same functions, raises or agrees with finite differences.
"""
import inspect

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import InPlaceUpdateError, WengertError

from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp

X = np.array([0.3, -0.2, 0.9, 1.4])
G = np.array([1.0, 2.0, 3.0, 4.0])


def ident(a):
    """A helper that returns its argument: the analysis cannot see inside."""
    return a


# --- each way a name may share an array, then a write and a read -----------
# the line marked ``# write`` is where the error must point

def bare_name(x):
    y = x * 2.0
    z = y
    y[1] = 5.0 * x[0]  # write
    return np.sum(z * x)


def slice_view(x):
    y = x * 2.0
    head = y[0:3]
    y[1] = 5.0 * x[0]  # write
    return np.sum(head * x[0:3])


def write_into_view(x):
    y = x * 2.0
    head = y[0:3]
    head[0] = 7.0 * x[1]  # write
    return np.sum(y * x)


def row_of_matrix(x):
    a = np.outer(x, x)
    row = a[1]
    a[1, 0] = 3.0 * x[2]  # write
    return np.sum(row * x)


def write_into_row(x):
    a = np.outer(x, x)
    row = a[2]
    row[0] = 3.0 * x[1]  # write
    return np.sum(a)


def attr_T(x):
    a = np.outer(x, x) + 1.0
    at = a.T
    a[0, 1] = x[3] * x[3]  # write
    return np.sum(at[1] * x)


def attr_real(x):
    y = x * 2.0
    r = y.real
    y[0] = x[1] * x[2]  # write
    return np.sum(r * x)


def method_reshape(x):
    y = x * 2.0
    m = y.reshape(2, 2)
    y[3] = x[0] * x[1]  # write
    return np.sum(m[1] * x[0:2])


def method_ravel(x):
    a = np.outer(x, x)
    flat = a.ravel()
    a[0, 0] = x[2] * 4.0  # write
    return np.sum(flat * flat)


def method_transpose(x):
    a = np.outer(x, x) + 1.0
    at = a.transpose()
    a[0, 2] = x[1] ** 3  # write
    return np.sum(at * at)


def method_swapaxes(x):
    a = np.outer(x, x) + 1.0
    at = a.swapaxes(0, 1)
    a[0, 2] = x[1] ** 3  # write
    return np.sum(at[2] * x)


def np_asarray(x):
    y = x * 2.0
    z = np.asarray(y)
    y[2] = x[0] ** 2  # write
    return np.sum(z * x)


def np_reshape(x):
    y = x * 2.0
    m = np.reshape(y, (2, 2))
    y[0] = x[3] ** 2  # write
    return np.sum(m[0] * x[2:4])


def np_ravel(x):
    a = np.outer(x, x)
    flat = np.ravel(a)
    a[1, 1] = x[0] * 4.0  # write
    return np.sum(flat * flat)


def np_transpose(x):
    a = np.outer(x, x) + 1.0
    at = np.transpose(a)
    a[0, 3] = x[1] ** 3  # write
    return np.sum(at[3] * x)


def np_expand_dims(x):
    y = x * 2.0
    e = np.expand_dims(y, 0)
    y[1] = x[2] ** 2  # write
    return np.sum(e * x)


def np_atleast_2d(x):
    y = x * 2.0
    e = np.atleast_2d(y)
    y[1] = x[2] ** 2  # write
    return np.sum(e * x)


def np_broadcast_to(x):
    y = x * 2.0
    b = np.broadcast_to(y, (2, 4))
    y[1] = x[2] ** 2  # write
    return np.sum(b * x)


def tuple_packing(x):
    y = x * 2.0
    pair = (y, 1.0)
    y[0] = x[1] * x[3]  # write
    return np.sum(pair[0] * x) + pair[1]


def list_packing(x):
    y = x * 2.0
    items = [y, x]
    y[0] = x[1] * x[3]  # write
    return np.sum(items[0] * items[1])


def tuple_unpacking(x):
    y = x * 2.0
    a, b = y, x
    y[3] = x[0] * x[1]  # write
    return np.sum(a * b)


def list_append(x):
    y = x * 2.0
    parts = []
    parts.append(y)
    y[2] = x[0] * x[3]  # write
    return np.sum(parts[0] * x)


def helper_returning_argument(x):
    y = x * 2.0
    z = ident(y)
    y[1] = 5.0 * x[0]  # write
    return np.sum(z * x)


def augmented_subscript(x):
    y = x * 2.0
    z = y
    y[1] += 5.0 * x[0]  # write
    return np.sum(z * x)


def augmented_name(x):
    y = x * 2.0
    z = y
    y += x * x  # write
    return np.sum(z * x)


def augmented_into_view(x):
    y = x * 2.0
    head = y[1:]
    head *= x[0]  # write
    return np.sum(y * x)


def read_earlier_in_loop(x):
    y = x * 2.0
    z = y
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum(z * x)
        y[i] = x[i] * x[3]  # write
    return acc


def for_over_rows(x):
    a = np.outer(x, x)
    acc = 0.0
    for row in a:
        a[0, 0] = a[0, 0] * x[1]  # write
        acc = acc + np.sum(row * x)
    return acc


def conditional_alias(x):
    y = x * 2.0
    z = y if x.shape[0] > 2 else x
    y[1] = 5.0 * x[0]  # write
    return np.sum(z * x)


def alias_from_other_branch(x):
    y = x * 2.0
    if x.shape[0] > 2:
        z = y
    else:
        z = x * 3.0
    y[1] = 5.0 * x[0]  # write
    return np.sum(z * x)


def write_under_traced_if(x):
    y = x * 2.0
    z = y
    if x[0] > 0:
        y[1] = 3.0 * x[2]  # write
    return np.sum(z * x)


def while_with_break(x):
    y = x * 2.0
    z = y[1:]
    i = 0
    while True:
        if i >= 2:
            break
        y[i + 1] = x[i] * 3.0  # write
        i += 1
    return np.sum(z * x[1:])


def enumerate_rows(x):
    a = np.outer(x, x)
    acc = 0.0
    for i, row in enumerate(a):
        a[i, 0] = x[i] * 2.0  # write
        acc = acc + np.sum(row * x)
    return acc


def global_through_local(x):
    z = G
    z[0] = x[1] * 3.0  # write
    return np.sum(G * x)


def argument_alias(x):
    z = x
    x[0] = x[1] * 3.0  # write
    return np.sum(z * x)


ALIASED = [bare_name, slice_view, write_into_view, row_of_matrix, write_into_row, attr_T,
           attr_real, method_reshape, method_ravel, method_transpose, method_swapaxes,
           np_asarray, np_reshape, np_ravel, np_transpose, np_expand_dims, np_atleast_2d,
           np_broadcast_to, tuple_packing, list_packing, tuple_unpacking, list_append,
           helper_returning_argument, augmented_subscript, augmented_name,
           augmented_into_view, read_earlier_in_loop, for_over_rows, conditional_alias,
           alias_from_other_branch, write_under_traced_if, while_with_break, enumerate_rows,
           global_through_local, argument_alias]


def _write_line(fn):
    lines, first = inspect.getsourcelines(fn)
    marked = [first + k for k, text in enumerate(lines) if text.rstrip().endswith("# write")]
    assert len(marked) == 1, fn.__name__
    return marked[0]


def _plain(fn):
    """``fn`` as Python runs it, on a copy (finite differences of the real
    semantics, aliasing included; the caller's array untouched)."""
    return lambda x: fn(np.array(x, dtype=float))


@pytest.mark.parametrize("fn", ALIASED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("engine", ["source", "auto"])
def test_aliased_write_raises_at_the_write(fn, engine):
    # the case really is one where a functional update would be wrong: the
    # alias sees the write in Python
    with pytest.raises(InPlaceUpdateError) as info:
        wg.grad(fn, engine=engine)(X.copy())
    err = info.value
    assert err.lineno == _write_line(fn)
    assert err.filename == __file__
    assert f"{__file__}:{err.lineno}:" in str(err)
    assert ".copy()" in str(err)
    assert err.names[0] in str(err) and err.names[1] in str(err)


@pytest.mark.parametrize("fn", ALIASED, ids=lambda f: f.__name__)
def test_trace_engine_on_aliased_writes_raises_or_agrees(fn):
    x = X.copy()
    try:
        g = wg.grad(fn, engine="trace")(x)
    except WengertError:
        return
    t = np.random.default_rng(0).standard_normal(X.shape)
    assert_close(np.dot(g, t), fd_jvp(_plain(fn), (X,), (t,)), PROGRAM_RTOL_F64)


# --- patterns where nothing read later shares the written array ------------

def fill_zeros(x):
    n = x.shape[0]
    xs = np.zeros(n)
    for i in range(n):
        xs[i] = x[i] * x[i]
    return np.sum(xs)


def times_one(x):
    out = x * 1.0
    out[0] = out[1] * x[2]
    return np.sum(out * x)


def copy_then_write(x):
    y = x.copy()
    for i in range(3):
        y[i + 1] = y[i] * x[i]
    return np.sum(y)


def jacobi_steps(x):
    u = x * 1.0
    for _ in range(3):
        u_new = u.copy()
        for i in range(1, 3):
            u_new[i] = 0.5 * (u[i - 1] + u[i + 1]) * x[i]
        u = u_new
    return np.sum(u * u)


def swap_then_write(x):
    a = x * 1.0
    b = x * 2.0
    for k in range(3):
        a[0] = a[0] * b[1] + x[k]
        a, b = b, a
    return np.sum(a * b)


def swap_scalars_in_place(x):
    y = x * 2.0
    for i in range(3):
        tmp = y[i]
        y[i] = y[i + 1] * x[0]
        y[i + 1] = tmp
    return np.sum(y * x)


def alias_dead_before_write(x):
    y = x * 2.0
    z = y
    s = np.sum(z * x)
    y[1] = 5.0 * x[0]
    return s + np.sum(y)


def row_read_before_write(x):
    a = np.outer(x, x)
    row = a[0]
    s = np.sum(row)
    a[0, 1] = x[3] * 2.0
    return s + np.sum(a)


def rebound_before_read(x):
    y = x * 2.0
    z = y
    y[1] = 5.0 * x[0]
    z = y * 1.0
    return np.sum(z * x)


def float_augmented(x):
    s = 0.0
    prev = s
    for i in range(4):
        prev = s
        s += x[i] * x[i]
    return s + prev


def write_into_argument(x):
    x[0] = x[1] * 3.0
    x += x * x
    return np.sum(x * x)


def accumulate_in_place(x):
    acc = np.zeros(2)
    for i in range(2):
        acc += x[2 * i:2 * i + 2] * x[i]
    return np.sum(acc * acc)


def scalar_unpacked(x):
    y = x * 2.0
    a, b = y[0], y[1]
    y[0] = b * x[2]
    y[1] = a * x[3]
    return np.sum(y * x) + a


COMMON = [fill_zeros, times_one, copy_then_write, jacobi_steps, swap_then_write,
          swap_scalars_in_place, alias_dead_before_write, row_read_before_write,
          rebound_before_read, float_augmented, write_into_argument, accumulate_in_place,
          scalar_unpacked]


@pytest.mark.parametrize("fn", COMMON, ids=lambda f: f.__name__)
@pytest.mark.parametrize("engine", ["source", "auto", "trace"])
def test_unshared_writes_match_finite_differences(fn, engine):
    x = X.copy()
    t = np.random.default_rng(1).standard_normal(X.shape)
    want = fd_jvp(_plain(fn), (X,), (t,))
    try:
        g = wg.grad(fn, engine=engine)(x)
    except InPlaceUpdateError:
        assert engine == "trace"        # the trace engine refuses x[i] = v
        return
    assert_close(np.dot(g, t), want, PROGRAM_RTOL_F64)
    np.testing.assert_array_equal(x, X)      # the caller's array is not written


# --- a user's function that writes into its caller's array -----------------
# Python changes the caller's array too; the functional update does not, so
# a helper that writes into an argument the caller reads afterwards raises at
# the helper's write

def set_first(a, v):
    a[0] = v  # write
    return np.sum(a)


def apply_bc(u):
    u[-1] = 0.0  # write


def scale_in_place(a, c):
    a *= c  # write


def write_through_alias(a):
    b = a
    b[1] = b[2] * 2.0  # write


def pass_along(a):
    apply_bc(a)
    return a


def helper_return_ignored(x):
    y = x * 2.0
    s = set_first(y, x[1] * 3.0)
    return s + np.sum(y * x)


def helper_without_return(x):
    u = x * x
    apply_bc(u)
    return np.sum(u * x)


def helper_augmented(x):
    u = x * x
    scale_in_place(u, x[0])
    return np.sum(u * x)


def helper_writes_alias(x):
    u = x * x
    write_through_alias(u)
    return np.sum(u * x)


def helper_passes_on(x):
    u = x * x
    pass_along(u)
    return np.sum(u * x)


def nested_def_writes(x):
    u = x * x

    def bc(v):
        v[0] = 1.0  # write
    bc(u)
    return np.sum(u * x)


def helper_in_loop(x):
    u = x * x
    acc = 0.0
    for _ in range(2):
        acc = acc + np.sum(u * x)
        apply_bc(u)
    return acc


HELPERS = [(helper_return_ignored, set_first), (helper_without_return, apply_bc),
           (helper_augmented, scale_in_place), (helper_writes_alias, write_through_alias),
           (helper_passes_on, apply_bc), (nested_def_writes, nested_def_writes),
           (helper_in_loop, apply_bc)]


@pytest.mark.parametrize("fn,writer", HELPERS, ids=[f.__name__ for f, _ in HELPERS])
def test_helper_writing_into_caller_array_raises_at_its_write(fn, writer):
    with pytest.raises(InPlaceUpdateError) as info:
        wg.grad(fn)(X.copy())
    assert info.value.lineno == _write_line(writer)
    assert f"{__file__}:{info.value.lineno}:" in str(info.value)
    assert "called at" in str(info.value) and ".copy()" in str(info.value)


def step(u, c):
    u[1:] = u[1:] * c
    return u


def own_copy(a):
    a = a.copy()
    a[0] = a[1] * a[2]
    return a


def float_accumulate(s, v):
    s += v * v
    return s


def rebinds_from_helper(x):
    u = x * x
    for k in range(2):
        u = step(u, 1.5 + k)
    return np.sum(u * x)


def helper_copies(x):
    u = x * 2.0
    w = own_copy(u)
    return np.sum(u * w)


def helper_on_floats(x):
    s = x[0] * 1.0
    t = float_accumulate(s, x[1])
    return s * t


def helper_last_use(x):
    u = x * x
    s = np.sum(u * x)
    apply_bc(u)
    return s


HELPERS_SAFE = [rebinds_from_helper, helper_copies, helper_on_floats, helper_last_use]


@pytest.mark.parametrize("fn", HELPERS_SAFE, ids=lambda f: f.__name__)
def test_helper_writes_nothing_read_later_match_finite_differences(fn):
    x = X.copy()
    t = np.random.default_rng(2).standard_normal(X.shape)
    g = wg.grad(fn, engine="source")(x)
    assert_close(np.dot(g, t), fd_jvp(_plain(fn), (X,), (t,)), PROGRAM_RTOL_F64)
    np.testing.assert_array_equal(x, X)
