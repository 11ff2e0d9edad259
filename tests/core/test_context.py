"""The staging context (``wengert/core/context.py``): generating code is
owned by the generation. Eight threads generating at once give the code and
the values one thread gives, and what one function generates does not
depend on what was generated before it.

The state a generation collects (guards on symbolic lengths, constants of
symbolic shape, checks of what the code read from outside the function)
lives in its ``StagingContext``; these tests fail if any of it is shared: a
guard of one thread's generation recorded in another's, a constant's
symbolic shape looked up in another generation's table, or a memoised shape
rule answering for a guard. One source-engine derivative shared by threads
on a cold cache, and jvp and vjp in threads, give every thread its right
value.
"""
from __future__ import annotations

import functools
import sys
import threading
import time
import types

import numpy as np
import pytest

import wengert as wg
from wengert.core.pytree import flatten

import thread_cases as C
import trust_cases as tc
from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp, inner, rtol


THREADS = 8


def _args(seed, *shapes, ints=()):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(0.2, 0.9, size=s) for s in shapes) + tuple(ints)


# both arguments: a length-1 ``w``'s derivative sums over x's axis, so code
# made for one must not be used for the other (a guard: ``w.shape[0] == 1``)
_grad_both = functools.partial(wg.grad, argnums=(0, 1))


# name, function, transform, argument sets (several shapes each: code made at
# one is reused at another where its guards hold, and made again elsewhere)
CASES = [
    ("neighbours", C.neighbours, wg.grad, [_args(0, 4), _args(1, 6), _args(2, 1)]),
    ("weighted", C.weighted, _grad_both, [_args(3, 4, 1), _args(4, 4, 4), _args(5, 6, 1),
                                          _args(6, 1, 1), _args(20, 6, 6), _args(21, 1, 4)]),
    ("made_constants", C.made_constants, wg.grad, [_args(7, 3), _args(8, 5)]),
    ("branch_on_length", C.branch_on_length, wg.grad, [_args(9, 2), _args(10, 5),
                                                       _args(11, 3)]),
    ("mean_squared_error", C.mean_squared_error, wg.grad,
     [_args(12, 3, (5, 3), 5), _args(13, 3, (7, 3), 7)]),
    ("matrix_stats", C.matrix_stats, wg.grad, [_args(14, (3, 4), (2, 4)),
                                               _args(15, (5, 4), (2, 4))]),
    ("damped", C.damped, wg.grad, [_args(16, 4, ints=(20,)), _args(17, 6, ints=(3,))]),
    ("made_constants_jacfwd", C.made_constants, wg.jacfwd, [_args(18, 3), _args(19, 4)]),
]
IDS = [c[0] for c in CASES]


def _fresh(f):
    """A new function object of ``f``'s code: nothing cached on it."""
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                              f.__closure__)


def _run(derivative, argsets):
    """(code text, value, made) of each argument set, in order; ``made``: the
    first argument set whose code it ran (code is reused at other shapes
    where its guards hold, so a guard left out shows here)."""
    out, codes = [], []
    for args in argsets:
        value = derivative(*args)
        code = derivative.last
        made = next((j for j, c in enumerate(codes) if c is code), len(codes))
        codes.append(code)
        out.append((derivative.source, value, made))
    return out


@pytest.fixture(scope="module")
def reference():
    """One thread's code and values: each case generated on its own."""
    return {name: _run(transform(_fresh(f), engine="source"), argsets)
            for name, f, transform, argsets in CASES}


@pytest.fixture
def fine_switching():
    """Threads switch every few microseconds (not every 5 ms), so their
    generations interleave at many points."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.mark.parametrize("name", IDS)
def test_reference_values_are_right(reference, name):
    """The reference is the right derivative (against central differences)
    and the trace engine's."""
    _, f, transform, argsets = CASES[IDS.index(name)]
    for args, (_, value, _) in zip(argsets, reference[name]):
        traced = transform(f, engine="trace")(*args)
        assert_close(value, traced, PROGRAM_RTOL_F64, what=f"{name}: source vs trace")
        t = np.random.default_rng(1).normal(size=np.shape(args[0]))
        want = fd_jvp(lambda x: f(x, *args[1:]), (args[0],), (t,))
        if transform is _grad_both:
            t = tuple(np.random.default_rng(1).normal(size=np.shape(a)) for a in args)
            want = fd_jvp(f, args, t)
            assert_close(inner(value, t), want, PROGRAM_RTOL_F64, what=f"{name}: grad vs FD")
        elif transform is wg.grad:
            assert_close(inner(value, t), want, PROGRAM_RTOL_F64, what=f"{name}: grad vs FD")
        else:
            assert_close(np.asarray(value) @ t, want, PROGRAM_RTOL_F64,
                         what=f"{name}: jacfwd vs FD")


def _equal(a, b):
    """The same values, bit for bit (leafwise, shapes and dtypes too)."""
    la, ta = flatten(a)
    lb, tb = flatten(b)
    return ta == tb and all(np.shape(x) == np.shape(y) and np.asarray(x).dtype ==
                            np.asarray(y).dtype and np.array_equal(x, y)
                            for x, y in zip(la, lb))


def _same_as_reference(got, want, what, reuse=True):
    assert len(got) == len(want), what
    for k, ((text, value, made), (text0, value0, made0)) in enumerate(zip(got, want)):
        assert text == text0, f"{what}, argument set {k}: the code differs\n{text}\n---\n{text0}"
        assert _equal(value, value0), f"{what}, argument set {k}: {value} != {value0}"
        assert made == made0 or not reuse, (f"{what}, argument set {k}: ran the code made for set {made}, "
                               f"not {made0}")


def test_eight_threads_generate_what_one_thread_does(reference, fine_switching):
    """Eight threads at once, each through every case in its own order
    (rotated), each case on a fresh function object and on one object all
    threads share; a barrier starts them together."""
    shared = {name: transform(_fresh(f), engine="source") for name, f, transform, _ in CASES}
    barrier = threading.Barrier(THREADS)
    results = [None] * THREADS
    spans = [None] * THREADS
    errors = []

    def work(k):
        try:
            barrier.wait()
            start = time.perf_counter()
            mine, values = {}, {}
            for name, f, transform, argsets in CASES[k:] + CASES[:k]:
                mine[name] = _run(transform(_fresh(f), engine="source"), argsets)
                # a shared object's ``.source`` is the latest call's, of any thread
                values[name] = [shared[name](*args) for args in argsets]
            results[k] = mine, values
            spans[k] = start, time.perf_counter()
        except BaseException as err:    # noqa: BLE001 -- reported by the main thread
            errors.append((k, err))
            barrier.abort()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0][1]
    # all eight were generating at one moment
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans
    for k, (mine, values) in enumerate(results):
        for name, want in reference.items():
            _same_as_reference(mine[name], want, f"thread {k}, {name}, fresh function")
            for j, value in enumerate(values[name]):
                assert _equal(value, want[j][1]), f"thread {k}, {name}, shared, set {j}"
    # the shared objects' code was generated by the threads; called again
    # here, each argument set uses it (threads that generated the same code at
    # once each kept their own copy, so which copy a call runs may differ)
    for name, f, transform, argsets in CASES:
        _same_as_reference(_run(shared[name], argsets), reference[name], f"{name}, shared",
                           reuse=False)


@pytest.mark.parametrize("first", IDS)
def test_generating_one_function_does_not_change_another(reference, first):
    """``first`` generated, then every other case, then ``first`` again on a
    fresh object: the same code, whatever was generated in between or
    before (each against the reference, generated each on its own)."""
    order = [c for c in CASES if c[0] == first] + [c for c in CASES if c[0] != first]
    for _ in range(2):
        for name, f, transform, argsets in order:
            got = _run(transform(_fresh(f), engine="source"), argsets)
            _same_as_reference(got, reference[name], f"{name} after {first}")
        order = order[::-1]


def test_threads_convert_functions_at_once(tmp_path, fine_switching):
    """Eight threads converting new functions at once, while a garbage
    collection callback runs Python code (which lets a thread pause in the
    middle of a tree): CPython 3.11-3.12 share the AST conversion's depth
    between threads and raised "SystemError: AST constructor recursion depth
    mismatch" (one thread test in six full runs failed so) until the source
    frontend converted one tree at a time. Every gradient is right."""
    import gc
    import importlib.util
    n_fns = 32
    lines = ["import numpy as np"]
    for k in range(n_fns):
        expr = "x[i]"
        for d in range(30):
            expr = f"np.sin({expr} * {d + 1.0})" if d % 2 else f"({expr} + {k}.5)"
        lines += [f"def f{k}(x):", "    s = 0.0", "    for i in range(x.shape[0]):",
                  f"        s = s + {expr}", "    return s"]
    path = tmp_path / "many_functions.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("many_functions", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.array([0.3, -0.2])
    errors = []

    def work(k):
        for j in range(k, n_fns, 8):
            f = getattr(mod, f"f{j}")
            try:
                got = wg.grad(f, engine="source")(x)
                want = wg.grad(f, engine="trace")(x)
                if not np.allclose(got, want, rtol=1e-12):
                    errors.append(f"f{j}: {got} != {want}")
            except Exception as err:        # noqa: BLE001 -- every error is a failure
                errors.append(repr(err))

    def callback(phase, info):
        return None

    old = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(50, 5, 5)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*old)
        gc.callbacks.remove(callback)
    assert errors == []


# --- one source-engine derivative, many threads -----------------------------------
def _in_threads(work, n_threads=8):
    """Run ``work(k)`` in ``n_threads`` threads at once, switching between
    them as often as the interpreter can (so any shared state is hit)."""
    import sys
    import threading
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)


def test_threads_share_one_cold_source_grad():
    """Eight threads, one source-engine grad object, a cold cache, different
    shapes: every result right, and the cached code right afterwards."""
    g = wg.grad(tc.loop_branch, engine="source")
    results = []

    def work(k):
        rng = np.random.default_rng(k)
        for rep in range(25):
            x = rng.normal(size=2 + (k + rep) % 8)
            try:
                results.append(bool(np.allclose(g(x), tc.loop_branch_grad(x), rtol=1e-10)))
            except Exception as err:    # noqa: BLE001 -- counted as a failure below
                results.append(repr(err))

    _in_threads(work)
    assert results == [True] * 200
    for n in range(2, 10):
        x = np.random.default_rng(100 + n).normal(size=n)
        assert_close(g(x), tc.loop_branch_grad(x), rtol("exact", np.float64))


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_threads_jvp_and_vjp(engine):
    """Issue 10: jvp and vjp in eight threads at once: every thread's values right."""
    results = []

    def work(k):
        rng = np.random.default_rng(k)
        for _ in range(10):
            x = rng.normal(size=3 + k)
            try:
                _, t = wg.jvp(tc.loop_branch, (x,), (np.ones_like(x),), engine=engine)
                _, pullback = wg.vjp(tc.loop_branch, x, engine=engine)
                want = tc.loop_branch_grad(x)
                results.append(bool(np.allclose(t, want.sum(), rtol=1e-10)
                                    and np.allclose(pullback(1.0)[0], want, rtol=1e-10)))
            except Exception as err:    # noqa: BLE001 -- counted as a failure below
                results.append(repr(err))

    _in_threads(work)
    assert results == [True] * 80
