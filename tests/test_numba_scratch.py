"""``backend="numba"`` keeps the buffers its code allocates and never
returns (``backends/scratch.py``), and hands them back at the next call.

Over the scaling bench's programs (``bench/scaling_programs.py``) and the
transforms: successive calls on new inputs, at the same shapes (the
buffers reused: the same arrays) and at others (new ones), each agree with
the Python backend; no result shares memory with a kept buffer, and no
call changes an earlier call's result; threads calling one gradient at
once all get their own answers.
"""
from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np
import pytest

import wengert as wg

from checks import assert_close, rtol

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import scaling_programs as SP  # noqa: E402

pytestmark = pytest.mark.numba

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
