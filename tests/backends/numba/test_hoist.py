"""A loop's temporaries in buffers made before it (``wengert/backends/numba/hoist.py``, with
``escape.aliases``), and slice updates written through a view.

The rewrite of marked statements, on generated-code-shaped snippets run as plain NumPy
(no numba): a temporary whose value is dead before its statement runs again writes into
one buffer allocated before the outermost loop, with the code's results unchanged; one
whose value outlives the step (carried to the next, stored in a list or a tuple that is,
read after the loop, returned, read before its statement in a step, assigned in a
branch) keeps its own array: a buffer shared with a value alive at once would be
overwritten under it ("carried-and-read-after" gives other numbers when forced to share). A
shape that may change in the loop keeps its allocation; every mark is stripped.

Under ``backend="numba"`` (``numba`` mark): loops whose temporaries are hoisted (ode's
shape: shifted slices, a reverse sweep's slice updates; nested loops; rows stored for the
reverse sweep) and loops whose temporaries escape (carried, the result of the last step,
a list of them) agree with the Python backend in grad, jvp and vjp, the caller's arrays
untouched, and the gradient's code holds the buffers (its text read). A statement of the
function's top level is written into a buffer made just before it, which the scratch keeps
between calls only where it reaches no result: a returned product of matrices (``np.dot``
into its buffer) is never kept.
"""
from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

import wengert as wg
from wengert.backends.numba import hoist as H

from checks import assert_close
from numba_checks import agree

M = "  #~fresh np.empty((n,), np.float64)"
M2 = "  #~fresh np.empty((2, n), np.float64)"


def _code(body, params="x"):
    body = textwrap.dedent(body).strip("\n").replace("{M}", M).replace("{M2}", M2)
    return f"def f({params}):\n" + textwrap.indent("n = x.shape[0]\n" + body, "    ") + "\n"


def _run(source, x):
    namespace = {"np": np}
    exec(source, namespace)
    return namespace["f"](x.copy())


def _check(body):
    """The rewritten code: no mark left, the original's results."""
    source = _code(body)
    got = H.loop_buffers(source, "f", "np")
    assert "#~fresh" not in got
    x = np.random.default_rng(0).random(5) + 0.5
    for a, b in zip(_run(source, x), _run(got, x)):
        np.testing.assert_array_equal(a, b)
    return got


# the statement's value is dead before it runs again: one buffer for every step
HOISTED = {
    "dead-each-step": """
        acc = np.zeros((n,))
        for i in range(3):
            t = x * x{M}
            u = t + 1.0{M}
            acc += u
        return (acc,)""",
    "stored-as-a-row": """
        ys = np.empty((3, n))
        for i in range(3):
            t = np.sin(x + i){M}
            ys[i] = t
        return (ys,)""",
    "viewed-in-the-step": """
        acc = np.zeros((n,))
        for i in range(3):
            t = x * (i + 2.0){M}
            v = t[1:]
            acc[:-1] += v
        return (acc,)""",
    "inner-loop": """
        acc = np.zeros((n,))
        for i in range(3):
            for j in range(2):
                t = np.negative(x){M}
                acc += t
        return (acc,)""",
    "while-loop": """
        acc = np.zeros((n,))
        k = 0
        while True:
            if k == 3:
                break
            t = -x{M}
            acc -= t
            k += 1
        return (acc,)""",
    "concatenated": """
        acc = np.zeros((n,))
        for i in range(3):
            h = x[:1] * (i + 2.0)
            u = x[1:]
            t = np.concatenate((h, u), axis=0){M}
            acc += t
        return (acc,)""",
    "concatenated-on-the-last-axis": """
        acc = np.zeros((2, n))
        for i in range(3):
            a = np.zeros((2, 1)) + i
            b = np.ones((2, n - 1)) * x[1:]
            t = np.concatenate((a, b), axis=-1){M2}
            acc += t
        return (acc,)""",
    "copied-from-a-marked-one": """
        acc = np.zeros((n,))
        for i in range(3):
            s = x * (i + 1.0){M}
            t = s.copy()
            t[0] = 0.0
            acc += t + s
        return (acc,)""",
    "in-place-then-read": """
        acc = np.zeros((n,))
        for i in range(3):
            t = x * 2.0{M}
            t += acc
            acc += t
        return (acc,)""",
}

# the value outlives the step, or its shape may change: its own array each step
KEPT = {
    "carried": """
        y = x.copy()
        for i in range(3):
            t = x * y{M}
            y = t
        return (y,)""",
    "carried-and-read-after": """
        acc = np.zeros((n,))
        y = x.copy()
        for i in range(3):
            t = x * (i + 2.0){M}
            acc += t - y
            y = t
        return (acc,)""",
    "carried-as-a-view": """
        y = x.copy()
        for i in range(3):
            t = y * 0.5{M}
            y = t[:]
        return (y,)""",
    "carried-in-a-tuple": """
        pair = (x, x)
        for i in range(3):
            t = pair[0] * 0.5{M}
            pair = (t, x)
        return (pair[0],)""",
    "stored-in-a-list": """
        keep = []
        for i in range(3):
            t = x * (i + 1.0){M}
            keep.append(t)
        return (keep[0], keep[2])""",
    "read-after-the-loop": """
        t = x
        for i in range(3):
            t = x * (i + 1.0){M}
        return (t,)""",
    "returned-through-a-name": """
        out = x
        for i in range(3):
            t = x * (i + 1.0){M}
            out = t
        return (out,)""",
    "read-before-written": """
        acc = np.zeros((n,))
        t = x
        for i in range(3):
            acc += t
            t = x * (i + 1.0){M}
        return (acc,)""",
    "assigned-in-a-branch": """
        acc = np.zeros((n,))
        for i in range(3):
            t = x * (i + 1.0){M}
            if i > 0:
                u = t
            acc += u if i > 0 else x
        return (acc,)""",
    "shape-changing-in-the-loop": """
        acc = np.zeros((n,))
        for i in range(3):
            n = x.shape[0]
            t = x * 2.0{M}
            acc += t
        return (acc,)""",
    "in-a-branch-of-the-step": """
        acc = np.zeros((n,))
        for i in range(3):
            if i > 0:
                t = x * 2.0{M}
                acc += t
        return (acc,)""",
    "not-a-ufunc": """
        acc = np.zeros((n,))
        for i in range(3):
            t = np.outer(x, x)[0]{M}
            acc += t
        return (acc,)""",
}


@pytest.mark.parametrize("name", sorted(HOISTED))
def test_a_temporary_dead_each_step_is_written_into_a_hoisted_buffer(name):
    got = _check(HOISTED[name])
    loop = min(got.index(w) for w in ("for ", "while ") if w in got)
    assert re.search(r"buf_t = np\.empty\(\((2, )?max\(n, 0\),\), np\.float64\)",
                     got[:loop]), got
    assert re.search(r"\bbuf_t\b", got[loop:]), got


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_temporary_outliving_its_step_keeps_its_own_array(name):
    got = _check(KEPT[name])
    assert "buf_" not in got, got


def test_sharing_the_carried_temporarys_buffer_would_be_wrong():
    # what the analysis guards against: "carried-and-read-after" forced into one
    # buffer overwrites y (the last step's t) with the new t before it reads y
    x = np.random.default_rng(0).random(5) + 0.5
    want = _run(_code(KEPT["carried-and-read-after"]), x)[0]
    shared = _code(KEPT["carried-and-read-after"].replace("x * (i + 2.0){M}",
                                                          "np.multiply(x, i + 2.0, buf)"))
    shared = shared.replace("    y = x.copy()", "    y = x.copy()\n    buf = np.empty((n,))")
    assert not np.array_equal(_run(shared, x)[0], want)


def test_the_buffer_goes_before_the_outermost_loop_and_the_mark_is_stripped():
    got = _check(HOISTED["inner-loop"])
    lines = got.splitlines()
    at = next(k for k, line in enumerate(lines) if "buf_t = " in line)
    assert lines[at + 1].strip().startswith("for i in range"), got
    assert "t = np.negative(x, buf_t)" in got


def test_a_top_level_temporary_is_written_into_a_buffer_made_just_before_it():
    # once a call: the scratch keeps it between calls where it reaches no result
    got = _check("""
        t = x * 2.0{M}
        xx = np.outer(x, t)
        u = xx @ xx{M2}
        return (t, u)""".replace("{M2}", "  #~fresh np.empty((n, n), np.float64)"))
    assert "buf_t = np.empty((max(n, 0),), np.float64)\n    t = np.multiply(x, 2.0, buf_t)" \
        in got, got
    assert "u = np.dot(xx, xx, buf_u)" in got, got


def test_two_buffers_never_share_a_name_with_the_code():
    body = """
        buf_t = np.zeros((n,))
        for i in range(3):
            t = x * x{M}
            buf_t += t
        return (buf_t,)"""
    got = _check(body)
    assert "buf_t_1 = np.empty" in got and "np.multiply(x, x, buf_t_1)" in got, got


# --- slice updates -----------------------------------------------------------------------
SLICE_VIEWS = {
    "shifted": ("acc = np.zeros((n,))", "acc[:-1] += x[1:]"),
    "row-and-slice": ("acc = np.zeros((3, n))", "acc[1, 1:] -= x[:-1]"),
    "loop-index-and-slice": ("acc = np.zeros((3, n))", "acc[i, :] *= x"),
}
SLICE_KEPT = {
    "an-index-array": ("acc = np.zeros((n,))", "acc[np.arange(n) % 2 == 0] += 1.0"),
    "an-element": ("acc = np.zeros((n,))", "acc[i] += 1.0"),
    "a-name-not-a-loop-index": ("acc = np.zeros((n,))\nidx = np.array([0, 1])",
                                "acc[idx, :] += 1.0"),
}


def _slice_body(setup, update):
    setup = setup.replace("\n", "\n        ")
    return f"""
        {setup}
        acc += 1.0
        for i in range(3):
            {update}
        return (acc,)"""


@pytest.mark.parametrize("name", sorted(SLICE_VIEWS))
def test_a_slice_update_writes_through_a_view(name):
    got = _check(_slice_body(*SLICE_VIEWS[name]))
    assert "acc_view = acc[" in got and "acc_view " in got.split("acc_view = ")[1], got


@pytest.mark.parametrize("name", sorted(SLICE_KEPT))
def test_an_update_that_may_not_be_a_view_is_kept(name):
    setup, update = SLICE_KEPT[name]
    source = _code(_slice_body(setup, update).replace("acc[idx, :]", "acc[idx]"))
    got = H.loop_buffers(source, "f", "np")
    assert "_view" not in got, got


# --- under numba ---------------------------------------------------------------------------
def shifted_steps(x, n):
    y = np.zeros_like(x)
    for _ in range(n):
        k = x * np.concatenate([np.ones(1), y[:-1]])
        y = y + 0.1 * k * x
    return y[-1]


def carried_temporary(x, n):
    y = x
    for _ in range(n):
        t = np.sin(y) * x
        y = t
    return np.sum(y)


def stored_temporaries(x, n):
    s = 0.0
    for i in range(n):
        t = np.tanh(x * (i + 1.0))
        s = s + np.sum(t * t)
    return s


def nested_loops(x, n):
    y = x
    for i in range(n):
        for j in range(2):
            t = y * x
            y = y + 0.01 * np.cos(t)
    return np.sum(y)


def last_step(x, n):
    y = x
    for i in range(n):
        y = np.cos(x * y) * 0.5
    return y


PROGRAMS = {"shifted_steps": shifted_steps, "carried_temporary": carried_temporary,
            "stored_temporaries": stored_temporaries, "nested_loops": nested_loops}


@pytest.mark.numba
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loops_agree_with_the_python_backend(name):
    pytest.importorskip("numba")
    x = np.random.default_rng(1).random(7) + 0.1
    assert not agree(PROGRAMS[name], (x, 4), 0, True, name)


@pytest.mark.numba
def test_the_gradients_code_holds_the_buffers():
    pytest.importorskip("numba")
    x = np.random.default_rng(2).random(9)
    g = wg.grad(shifted_steps, backend="numba", engine="source")
    assert_close(g(x, 5), wg.grad(shifted_steps, engine="source")(x, 5), 1e-13)
    source = g.source
    loop = source.rindex("for ")         # the reverse sweep's
    assert "buf_" in source[:loop] and "_view = " in source, source
    assert "reuse_empty(scratch" in source


@pytest.mark.numba
def test_the_last_steps_temporary_is_the_result_not_a_buffer():
    pytest.importorskip("numba")
    x = np.random.default_rng(3).random(6)
    f = wg.jit(last_step, engine="source")
    first = f(x, 3)
    want = last_step(x, 3)
    assert_close(first, want, 1e-14)
    second = f(x * 2.0, 4)
    assert_close(first, want, 1e-14)         # the second call wrote nothing into the first's
    assert_close(second, last_step(x * 2.0, 4), 1e-14)
    assert not np.shares_memory(first, second)


def layer(w, x):
    h = np.tanh(x @ w)
    return np.sum(h * h)


@pytest.mark.numba
def test_a_returned_product_of_matrices_is_never_a_kept_buffer():
    # ct_w = x.T @ (...) is written into a buffer (np.dot's out) that the result is:
    # the next call must not write into the first call's result
    pytest.importorskip("numba")
    rng = np.random.default_rng(4)
    w, x = rng.random((3, 4)), rng.random((5, 3))
    g = wg.grad(layer, engine="source", backend="numba")
    first = g(w, x)
    keep = first.copy()
    second = g(w * 2.0, x)
    assert "np.dot(" in g.source and "scratch" in g.source, g.source
    np.testing.assert_array_equal(first, keep)
    assert not np.shares_memory(first, second)
    assert_close(second, wg.grad(layer, engine="source")(w * 2.0, x), 1e-13)
