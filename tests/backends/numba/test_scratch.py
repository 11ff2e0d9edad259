"""Scratch buffers (``wengert/backends/numba/scratch.py``, with the escape
analysis of ``escape.py``): which allocations of generated code may be
handed back at the next call, and the rewrite.

Each snippet is generated-code shaped (a function, top-level allocations,
loops); ``buf`` is the allocation under test. A buffer that may reach a
result (returned, renamed, viewed, stored in a list or a tuple) must never
be reused; one that only lends its values must be. The rewrite runs as
plain Python (the helpers are Python functions numba compiles): two calls
reusing one scratch tuple give the original code's results, and the
results share no memory with the scratch.

``backend="numba"`` keeps the buffers its code allocates and never returns,
and hands them back at the next call (these tests carry the ``numba``
mark). Over the scaling bench's programs (``bench/scaling_programs.py``)
and the transforms: successive calls on new inputs, at the same shapes (the
buffers reused: the same arrays) and at others (new ones), each agree with
the Python backend; no result shares memory with a kept buffer, and no call
changes an earlier call's result; threads calling one gradient at once all
get their own answers.
"""
from __future__ import annotations

import textwrap
import threading
import warnings

import numpy as np
import pytest

import wengert as wg
from bench import scaling_programs as SP
from wengert.backends.numba import scratch as S

from checks import assert_close, rtol


def _code(body, params="x"):
    return f"def f({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def _reused(body, params="x"):
    return [a.name for a in S.reusable(_code(body, params), "f")]


# buf reaches a result: never reused (each a way a value can travel)
ESCAPES = {
    "returned": """
        buf = np.zeros((n,))
        return (buf,)""",
    "tuple-rename": """
        buf = np.empty((n,))
        a, b = buf, x
        return (a,)""",
    "tuple-unpack-rows": """
        buf = np.empty((2, n))
        a, b = buf
        return (a,)""",
    "chained-rename": """
        buf = np.empty((n,))
        a = c = buf
        return (c,)""",
    "slice": """
        buf = np.empty((n,))
        v = buf[1:]
        return (v,)""",
    "row-view": """
        buf = np.empty((3, n))
        v = buf[0]
        return (v,)""",
    "transpose": """
        buf = np.empty((3, n))
        return (buf.T,)""",
    "reshape": """
        buf = np.empty((3, n))
        v = np.ascontiguousarray(buf).reshape((-1,))
        return (v,)""",
    "np-reshape": """
        buf = np.empty((3, n))
        v = np.reshape(buf, (-1,))
        return (v,)""",
    "ufunc-out": """
        buf = np.empty((n,))
        v = np.add(x, x, buf)
        return (v,)""",
    "dot-out": """
        buf = np.empty((n, n))
        v = np.dot(x, x, buf)
        return (v,)""",
    "in-list": """
        buf = np.empty((n,))
        keep = [x, buf]
        return (keep[1],)""",
    "appended": """
        buf = np.empty((n,))
        keep = []
        keep.append(buf)
        v = keep[0]
        return (v,)""",
    "list-item-stored": """
        buf = np.empty((n,))
        keep = [None] * 2
        keep[1] = buf
        return (keep[1],)""",
    "list-extended": """
        buf = np.empty((n,))
        keep = [x]
        keep += [buf]
        return (keep,)""",
    "list-joined": """
        buf = np.empty((n,))
        keep = [x] + [buf]
        return (keep[1],)""",
    "part-of-tuple": """
        buf = np.empty((n,))
        return (x, (buf, x))""",
    "in-a-loop-carry": """
        buf = np.empty((n,))
        v = x
        for i in range(3):
            v, w = buf, v
        return (w,)""",
    "in-a-branch": """
        buf = np.empty((n,))
        if n > 2:
            v = buf
        else:
            v = x.copy()
        return (v,)""",
    "conditional-expression": """
        buf = np.empty((n,))
        v = buf if n > 2 else x
        return (v,)""",
    "builtin-max": """
        buf = np.empty((n,))
        v = max(buf, x)
        return (v,)""",
    "iterated": """
        buf = np.empty((2, n))
        for row in buf:
            v = row
        return (v,)""",
    "into-a-parameter": """
        buf = np.empty((n,))
        x.append(buf)
        return (1.0,)""",
    "in-place-op-renamed": """
        buf = np.zeros((n,))
        buf *= 2.0
        out = buf
        return (out,)""",
}


# buf lends values only: reused
KEPT = {
    "element-stored-into-result": """
        buf = np.empty((n,))
        out = np.zeros((n,))
        for i in range(n):
            buf[i] = x[i]
            out[i] = buf[i] * 2.0
        return (out,)""",
    "row-stored-into-result": """
        buf = np.empty((3, n))
        out = np.zeros((3, n))
        buf[0] = x
        out[1] = buf[0]
        return (out,)""",
    "arithmetic": """
        buf = np.full((n,), 1.0)
        v = buf * x
        return (v,)""",
    "reduced": """
        buf = np.zeros((n,))
        s = np.sum(buf)
        return (s,)""",
    "copied": """
        buf = np.empty((n,))
        v = buf.copy()
        return (v,)""",
    "fresh-ufunc": """
        buf = np.empty((n,))
        v = np.sin(buf)
        return (v,)""",
    "scalar-cast": """
        buf = np.empty((n,))
        v = float(buf[0])
        return (v,)""",
    "renamed-not-returned": """
        buf = np.empty((n,))
        a, b = buf, x
        return (b,)""",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_a_buffer_reaching_a_result_is_not_reused(name):
    assert "buf" not in _reused("n = x.shape[0]\n" + textwrap.dedent(ESCAPES[name]).strip("\n"))


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_buffer_lending_values_only_is_reused(name):
    assert "buf" in _reused("n = x.shape[0]\n" + textwrap.dedent(KEPT[name]).strip("\n"))


# allocations that are not reused whatever happens to them
NOT_ALLOCATIONS = {
    "in-a-loop": """
        for i in range(2):
            buf = np.empty((n,))
        return (1.0,)""",
    "in-a-branch": """
        if n > 1:
            buf = np.empty((n,))
        return (1.0,)""",
    "fortran-order": """
        buf = np.empty((n, 2), order="F")
        return (1.0,)""",
    "shape-not-a-tuple": """
        buf = np.empty(n)
        return (1.0,)""",
    "full-of-unknown-dtype": """
        buf = np.full((n,), x[0])
        return (1.0,)""",
    "early-return": """
        buf = np.empty((n,))
        if n > 1:
            return (2.0,)
        return (1.0,)""",
    "nested-def": """
        buf = np.empty((n,))
        def g():
            return 1.0
        return (1.0,)""",
}


@pytest.mark.parametrize("name", sorted(NOT_ALLOCATIONS))
def test_what_is_not_a_reusable_allocation(name):
    assert _reused("n = x.shape[0]\n" + textwrap.dedent(NOT_ALLOCATIONS[name]).strip("\n")) == []


def test_dtypes_and_ndims_are_read_from_the_text():
    code = _code("""
        n = x.shape[0]
        a = np.empty((n,))
        b = np.zeros((n, 2), np.float32)
        c = np.empty((n,), dtype=np.bool_)
        d = np.full((2, n, 3), 1)
        e = np.full((n,), np.float32(0.5))
        f = np.full((n,), -2.5)
        return (x,)""")
    got = {a.name: (a.dtype, a.ndim) for a in S.reusable(code, "f")}
    want = {"a": (np.float64, 1), "b": (np.float32, 2), "c": (np.bool_, 1),
            "d": (np.int64, 3), "e": (np.float32, 1), "f": (np.float64, 1)}
    assert got == {k: (np.dtype(dt), nd) for k, (dt, nd) in want.items()}


# a program like the prefix gradient: residuals, a cotangent buffer, a result
_PREFIX = """
    n = x.shape[0]
    out = np.zeros((n,))
    out[0] = x[0]
    res = np.empty((max(n - 1, 0),))
    for i in range(1, n):
        res[i - 1] = out[i - 1]
        out[i] = out[i - 1] * x[i]
    ct_out = np.full((n,), 1.0)
    ct_x = np.zeros((n,))
    for i in range(n - 1, 0, -1):
        ct = ct_out[i]
        ct_x[i] += res[i - 1] * ct
        ct_out[i - 1] += ct * x[i]
    ct_x[0] += ct_out[0]
    total = np.sum(out)
    return (ct_x, total)
"""


def test_the_rewritten_code_reuses_its_buffers_and_gives_the_same_results():
    code = _code(_PREFIX)
    allocs = S.reusable(code, "f")
    assert [a.name for a in allocs] == ["out", "res", "ct_out"]
    text, helpers, param = S.with_scratch(code, "f", allocs, {"np"})
    assert f"def f(x, {param}):" in text
    namespace = {"np": np, **{h: S.REUSE_HELPERS[kind] for h, kind in helpers.items()}}
    exec(compile(text, "<scratch-test>", "exec"), namespace)
    plain = {"np": np}
    exec(compile(code, "<plain>", "exec"), plain)
    rng = np.random.default_rng(0)
    kept = tuple(np.empty((0,) * a.ndim, a.dtype) for a in allocs)
    results = []
    for n in (6, 6, 9):             # the same shape twice, then another
        x = rng.uniform(0.5, 1.5, n)
        got, new = namespace["f"](x, kept)
        want = plain["f"](x)
        assert_close(got, want, 1e-15)
        same = all(a is b for a, b in zip(new, kept))
        assert same == (results and results[-1][0].shape == (n,) or False)
        for buf in new:
            assert not any(np.shares_memory(buf, r) for r in got if isinstance(r, np.ndarray))
        results.append((got[0], got[0].copy()))
        kept = new
    for got, copy in results:       # no later call wrote an earlier result
        np.testing.assert_array_equal(got, copy)


# a while loop storing one row per step in a buffer that doubles when full
_DOUBLING = """
    n = x.shape[0]
    k = 0
    acc = np.empty((2, n))
    y = x.copy()
    while True:
        if np.sum(y * y) < tol:
            break
        y = y * 0.5
        if k == acc.shape[0]:
            acc = np.concatenate((acc, np.empty_like(acc)))
        acc[k] = y
        k += 1
    acc = acc[:k]
    total = np.zeros((n,))
    for j in range(k):
        total += acc[j] * (j + 1.0)
    return (total, k)
"""


def _run_rewritten(code, calls):
    """Each call's (results of the rewritten code, of the original, the kept tuple)."""
    allocs = S.reusable(code, "f")
    text, helpers, _ = S.with_scratch(code, "f", allocs, {"np"})
    namespace = {"np": np, **{h: S.REUSE_HELPERS[kind] for h, kind in helpers.items()}}
    exec(compile(text, "<scratch-test>", "exec"), namespace)
    plain = {"np": np}
    exec(compile(code, "<plain>", "exec"), plain)
    kept = tuple(np.empty((0,) * a.ndim, a.dtype) for a in allocs)
    out = []
    for args in calls:
        got, kept = namespace["f"](*args, kept)
        out.append((got, plain["f"](*args), kept))
    return allocs, out


def test_a_doubling_buffer_keeps_its_largest_size():
    code = _code(_DOUBLING, "x, tol")
    x = np.linspace(1.0, 2.0, 5)
    calls = [(x, 1e-6), (x * 0.1, 1e-6), (x * 3.0, 1e-9), (x[:3], 1e-6)]
    allocs, out = _run_rewritten(code, calls)
    assert [(a.name, bool(a.grows)) for a in allocs] == [("acc", True)]     # total: returned
    for got, want, _ in out:
        assert got[1] == want[1]
        assert_close(got[0], want[0], 1e-15)
    rows = [kept[0].shape for _, _, kept in out]
    # the first call doubles 2 -> 32 rows; the next (fewer steps) takes it as it
    # is; a longer loop doubles it again; another n starts afresh
    assert rows[1] == rows[0] and out[1][2][0] is out[0][2][0]
    assert rows[2][0] > rows[0][0] >= out[0][1][1]
    assert rows[3][1] == 3 and out[3][2][0] is not out[2][2][0]


# the same loop, each variant reading the buffer where its rows matter
NOT_DOUBLING = {
    "whole-buffer-read": ("acc[k] = y\n", "acc[k] = y\n    s = np.sum(acc)\n"),
    "another-buffers-rows": ("if k == acc.shape[0]:", "if k == y.shape[0] + acc.shape[0]:"),
    "sliced-in-the-loop": ("acc[k] = y\n", "acc[k] = y\n    s = acc[:k]\n"),
    "no-cut": ("acc = acc[:k]\n", "\n"),
    "shape-read": ("acc[k] = y\n", "acc[k] = y\n    m = acc.shape[0]\n"),
}


@pytest.mark.parametrize("name", sorted(NOT_DOUBLING))
def test_a_buffer_whose_rows_matter_is_not_taken_larger(name):
    old, new = NOT_DOUBLING[name]
    body = textwrap.dedent(_DOUBLING)
    assert old in body
    code = _code(body.replace(old, new), "x, tol")
    allocs = S.reusable(code, "f")
    assert "acc" in [a.name for a in allocs] and not any(a.grows for a in allocs)


# --- backend='numba' hands its buffers back at the next call ----------------------
PROGRAMS = {p.name: p for p in SP.PROGRAMS}


# heat allocates its buffers inside its loops only: nothing to keep
KEEPS_NONE = {"heat"}


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [tree] if isinstance(tree, np.ndarray) else []


def _kept(fn):
    """The arrays the numba function keeps between calls (its pool)."""
    return [] if fn is None else [a for kept in fn._pool for a in kept]


def _check_calls(call, python, inputs, fn_of):
    """``call`` and ``python`` at each of ``inputs``: equal results, none
    sharing memory with a kept buffer, none changed by a later call. The
    kept arrays after each call (``fn_of()``: the NumbaFunction)."""
    results, kept = [], []
    for args in inputs:
        got = call(*args)
        want = python(*args)
        assert_close(got, want, rtol("exact", want))
        for leaf in _leaves(got):
            assert not any(np.shares_memory(leaf, k) for k in _kept(fn_of()))
        results.append((got, [leaf.copy() for leaf in _leaves(got)]))
        kept.append(_kept(fn_of()))
    for got, copies in results:
        for leaf, copy in zip(_leaves(got), copies):
            np.testing.assert_array_equal(leaf, copy, err_msg="a later call wrote a result")
    return kept


@pytest.mark.numba
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_successive_calls_reuse_buffers_and_stay_right(name):
    prog = PROGRAMS[name]
    f = prog.make(np)
    rng = np.random.default_rng(1)
    inputs = [prog.inputs(n, rng) for n in (60, 60, 90, 90)]
    python = wg.grad(f, prog.argnums, engine="source")
    with warnings.catch_warnings():
        warnings.simplefilter("error", wg.NumbaFallbackWarning)
        g = wg.grad(f, prog.argnums, engine="source", backend="numba", fallback=False)
        kept = _check_calls(g, python, inputs, lambda: g.last.fn)
    if name in KEEPS_NONE:
        assert kept == [[]] * 4 and "scratch" not in g.source
        return
    assert "scratch" in g.source and all(kept)
    same = [all(a is b for a, b in zip(kept[k], kept[k + 1])) for k in range(3)]
    # the same arrays at the same shape; new ones at another (n = 60 -> 90)
    assert same == [True, False, True]


def _prefix_parts():
    prog = PROGRAMS["prefix"]
    f = prog.make(np)
    rng = np.random.default_rng(2)
    return f, [prog.inputs(n, rng)[0] for n in (40, 40, 70)]


@pytest.mark.numba
def test_jvp_and_vjp_calls_stay_right():
    f, xs = _prefix_parts()
    rng = np.random.default_rng(3)
    tangents = [rng.standard_normal(x.shape) for x in xs]
    _check_calls(lambda x, t: wg.jvp(f, (x,), (t,), engine="source", backend="numba",
                                     fallback=False),
                 lambda x, t: wg.jvp(f, (x,), (t,), engine="source"),
                 list(zip(xs, tangents)), lambda: None)
    # vjp: one pullback called at several cotangents, at several primals
    earlier = []
    for x in xs:
        out, pull = wg.vjp(f, x, engine="source", backend="numba", fallback=False)
        out_p, pull_p = wg.vjp(f, x, engine="source")
        assert_close(out, out_p, rtol("exact", out_p))
        for ct in (1.0, -2.5, 0.5):
            got, want = pull(np.float64(ct)), pull_p(np.float64(ct))
            assert_close(got, want, rtol("exact", want))
            earlier.append((got[0], got[0].copy()))
    for got, copy in earlier:
        np.testing.assert_array_equal(got, copy, err_msg="a later call wrote a result")


@pytest.mark.numba
@pytest.mark.parametrize("name", ["prefix", "relax"])
def test_threads_calling_one_gradient_get_their_own_answers(name):
    prog = PROGRAMS[name]
    f = prog.make(np)
    g = wg.grad(f, prog.argnums, engine="source", backend="numba", fallback=False)
    python = wg.grad(f, prog.argnums, engine="source")
    rng = np.random.default_rng(4)
    inputs = [prog.inputs(n, rng) for n in (50, 50, 80, 50, 80, 120) * 2]
    wants = [python(*args) for args in inputs]
    g(*inputs[0])                       # compiled before the threads start
    got = [None] * len(inputs)
    errors = []

    def work(k0):
        try:
            for _ in range(20):
                for k in range(k0, len(inputs), 4):
                    got[k] = g(*inputs[k])
        except Exception as err:        # noqa: BLE001 -- reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, want in enumerate(wants):
        assert_close(got[k], want, rtol("exact", want), what=f"thread result {k}")
