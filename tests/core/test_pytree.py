"""Pytrees (``wengert/core/pytree.py``): walks are linear in the tree's size
(explicit stacks, never recursion), structure keys are linear and tell
structures apart, and nesting past ``MAX_DEPTH`` is a typed error (see
``api/test_checks.py``). Derivatives through deep trees are right and
quick in both engines.
"""
import contextlib
import signal
import threading

import numpy as np
import pytest

import wengert as wg
from wengert.core.pytree import MAX_DEPTH, flatten, leaf_paths, unflatten

import robust_cases as R
from checks import PROGRAM_RTOL_F64, fd_jvp, inner, random_like


# --- deep pytrees ---------------------------------------------------------------
@contextlib.contextmanager
def deadline(seconds):
    """Fail, rather than hang, when the body runs past ``seconds``: the bug
    guarded against is work exponential in the depth, which never ends."""
    if threading.current_thread() is not threading.main_thread():
        yield           # signals reach the main thread only; the body still runs
        return

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def nest(kind, depth, leaf=0.5, side=1.5):
    """``depth`` containers inside each other; each holds the next and a leaf."""
    t = leaf
    for k in range(depth):
        v = side + 0.01 * k
        t = {"a": t, "b": v} if kind == "dict" else [t, v] if kind == "list" else (t, v)
    return t


def _top_reader(kind):
    return R.top_of_dict if kind == "dict" else R.top_of_list


def _apply(transform, fn, t, engine, direction):
    """The derivative along ``direction`` by ``transform``, and its output tree."""
    if transform == "grad":
        g = wg.grad(fn, engine=engine)(t)
        return inner(g, direction), g
    if transform == "vjp":
        g, = wg.vjp(fn, t, engine=engine)[1](1.0)
        return inner(g, direction), g
    return wg.jvp(fn, (t,), (direction,), engine=engine)[1], None


DEEP = [(k, d, tr) for k in ("dict", "list", "tuple") for d in (26, 200) for tr in ("grad", "vjp", "jvp")]
DEEP += [("dict", MAX_DEPTH, "grad"), ("list", MAX_DEPTH, "vjp")]


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("kind, depth, transform", DEEP,
                         ids=[f"{k}-{d}-{tr}" for k, d, tr in DEEP])
def test_deep_pytree_derivatives_are_right_and_quick(kind, depth, transform, engine):
    t = nest(kind, depth)
    fn = _top_reader(kind)
    direction = random_like(t, np.random.default_rng(depth))
    with deadline(60):
        got, g = _apply(transform, fn, t, engine, direction)
    want = fd_jvp(fn, (t,), (direction,))
    assert abs(got - want) <= PROGRAM_RTOL_F64 * max(1.0, abs(want)), (got, want)
    if g is not None:           # the gradient has the argument's structure
        assert flatten(g)[1] == flatten(t)[1]


def test_structure_keys_are_linear_and_tell_structures_apart():
    t = nest("dict", MAX_DEPTH)
    leaves, tree = flatten(t)
    # one key entry per node: MAX_DEPTH dicts, their leaves, the innermost leaf
    assert len(tree.key) == 2 * MAX_DEPTH + 1
    assert repr(tree) == "{'a': " * MAX_DEPTH + "*" + ", 'b': *}" * MAX_DEPTH
    assert unflatten(tree, leaves) == t
    # the innermost leaf's path, its middle left out
    assert leaf_paths(tree)[0] == "['a']" * 6 + f"[...{MAX_DEPTH - 12} more...]" + "['a']" * 6
    assert leaf_paths(tree)[1] == "['a']" * 6 + f"[...{MAX_DEPTH - 12} more...]" + \
        "['a']" * 5 + "['b']"
    assert leaf_paths(tree)[-1] == "['b']"
    # equal structures give equal keys; any difference, a different key
    same = flatten(nest("dict", MAX_DEPTH, leaf=9.0))[1]
    assert same == tree and hash(same) == hash(tree)
    for other in (nest("dict", MAX_DEPTH - 1), nest("list", MAX_DEPTH), {"a": 1.0, "c": 2.0},
                  [1.0, (2.0,)], [1.0, [2.0]], [1.0, None], (1.0, 2.0)):
        assert flatten(other)[1] != tree
    assert flatten([1.0, (2.0,)])[1] != flatten([1.0, [2.0]])[1]
    assert flatten({"a": 1.0})[1] != flatten({"b": 1.0})[1]
    assert flatten([None, 1.0])[1] != flatten([1.0, None])[1]
