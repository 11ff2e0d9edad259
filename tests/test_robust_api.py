"""The public API under conditions a single process with well-formed input
never shows (issue 11), each tested as a class, in every engine and every
transform it applies to:

* pytree structure keys are linear in the tree's size, and nesting past
  ``MAX_DEPTH`` is a typed error;
* ``engine="auto"`` falling back to tracing mid-function draws and prints
  what one plain call does, and warns once per function (not per name).
"""
import contextlib
import io
import random
import signal
import threading
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert import api_source, errors
from wengert.pytree import MAX_DEPTH, flatten, leaf_paths, unflatten

import robust_cases as R
from checks import EXACT_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jvp, inner, random_like

ENGINES = ("trace", "source", "auto")


# --- 2. deep pytrees ------------------------------------------------------------
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


LIMIT_TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev",
                    "hessian")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("transform", LIMIT_TRANSFORMS)
def test_past_max_depth_is_a_typed_error(transform, engine):
    t = nest("list", MAX_DEPTH + 1)
    with pytest.raises(errors.PytreeDepthError) as info:
        if transform == "jvp":
            wg.jvp(R.top_of_list, (t,), (t,), engine=engine)
        elif transform in ("vjp", "linearize"):
            getattr(wg, transform)(R.top_of_list, t, engine=engine)
        else:
            getattr(wg, transform)(R.top_of_list, engine=engine)(t)
    assert isinstance(info.value, ValueError)
    assert f"deeper than {MAX_DEPTH} levels" in str(info.value)
    assert "[0][0][0]" in str(info.value) and "flatter structure" in str(info.value)


# --- 3. engine="auto" falling back -----------------------------------------------
TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian")


def derivative(transform, fn, x, engine, **kw):
    """One call of ``transform`` of ``fn`` at ``x``: its values."""
    # a tangent of ones (x itself where x is not an array: a bad argument)
    tangent = np.ones_like(x) if isinstance(x, np.ndarray) else x
    if transform == "jvp":
        return wg.jvp(fn, (x,), (tangent,), engine=engine, **kw)
    if transform == "vjp":
        out, pullback = wg.vjp(fn, x, engine=engine, **kw)[:2]
        return out, pullback(1.0)
    if transform == "linearize":
        out, linear = wg.linearize(fn, x, engine=engine, **kw)
        return out, linear(tangent)
    return getattr(wg, transform)(fn, engine=engine, **kw)(x)


def _reseed():
    R.RS.seed(7)
    np.random.seed(7)
    R.GEN.bit_generator.state = np.random.default_rng(7).bit_generator.state
    random.seed(7)


def _after():
    """Where every generator is left, and what was printed, after a call."""
    return (R.RS.random_sample(), np.random.random_sample(), R.GEN.random(), random.random())


def _run(call):
    _reseed()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = call()
    return value, _after(), out.getvalue().count(R.PRINTED)


EFFECTS = ["draws_rs_then_try", "draws_np_then_try", "draws_gen_then_try",
           "draws_random_then_try", "prints_then_try", "draws_rs_then_traced_index",
           "draws_gen_then_traced_index"]


@pytest.mark.filterwarnings("ignore:wengert.*trace engine:UserWarning")
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", EFFECTS)
def test_auto_fallback_mid_function_draws_and_prints_what_one_plain_call_does(name, transform):
    fn = getattr(R, name)
    x = np.array([0.3, -0.7])
    # the source engine refuses it after the draw or print (so auto falls back)
    with pytest.raises((errors.UnsupportedSyntax, errors.ConcretizationError)):
        _run(lambda: derivative(transform, fn, x, "source"))
    _, plain_after, plain_printed = _run(lambda: fn(x))
    got, after, printed = _run(lambda: derivative(transform, fn, x, "auto"))
    assert after == plain_after, "the generators are not where one plain call leaves them"
    assert printed == plain_printed == (name == "prints_then_try")
    # the same draws as the trace engine's one run: the same derivative
    want, _, _ = _run(lambda: derivative(transform, fn, x, "trace"))
    assert_close(got, want, EXACT_RTOL_F64, what=f"{transform} of {name}")


def _fallback_warnings(calls):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = [call() for call in calls]
    return values, [str(w.message) for w in caught
                    if issubclass(w.category, UserWarning) and "trace engine" in str(w.message)]


def test_auto_fallback_warns_once_per_function_even_with_one_name():
    first, second = R.twin_first, R.twin_second
    assert first.__qualname__ == second.__qualname__ and first is not second
    for fn in (first, second):
        api_source._WARNED.discard(api_source.fallback_key(fn))
    values, messages = _fallback_warnings([
        lambda: wg.grad(first)(0.3), lambda: wg.grad(first)(0.5),
        lambda: wg.jvp(first, (0.3,), (1.0,))[1], lambda: wg.grad(second)(0.3),
        lambda: wg.vjp(second, 0.3)[1](1.0)[0]])
    assert len(messages) == 2, messages
    for message, fn in zip(messages, (first, second)):
        # each names its own function's try, at its own line
        assert f"robust_cases.py:{fn.__code__.co_firstlineno + 1}" in message, message
    assert_close(values, [np.cos(0.3), np.cos(0.5), np.cos(0.3), -np.sin(0.3), -np.sin(0.3)],
                 EXACT_RTOL_F64)


def test_auto_fallback_warns_once_for_the_closures_of_one_def():
    a, b = R.make_refused_closure(2.0), R.make_refused_closure(3.0)
    api_source._WARNED.discard(api_source.fallback_key(a))
    values, messages = _fallback_warnings([lambda: wg.grad(a)(0.3), lambda: wg.grad(b)(0.3)])
    assert len(messages) == 1, messages
    assert_close(values, [2.0 * np.cos(0.3), 3.0 * np.cos(0.3)], EXACT_RTOL_F64)


def test_fallback_warnings_are_remembered_in_a_bounded_table():
    seen = api_source._Seen(3)
    assert [seen.add(k) for k in "abca"] == [True, True, True, False]
    seen.add("d")           # "b" is now the oldest: forgotten
    assert len(seen) == 3 and "b" not in seen and {"a", "c", "d"} <= {k for k in "acd" if k in seen}
    assert seen.add("b") and "c" not in seen
    assert api_source._WARNED.size >= 1000      # large enough never to repeat in practice
    key = api_source.fallback_key(R.twin_first)
    assert key == (R.__file__, R.twin_first.__code__.co_firstlineno, "twin")
