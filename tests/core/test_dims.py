"""Symbolic lengths (``wengert/core/dims.py``): one generated derivative for
every input shape (issue 3, DESIGN.md: "A source-engine derivative is
generated once per function and argnums; it is valid for every input
shape").

The source engine stages lengths as symbols (``Dim``); the generated code
reads ``x.shape[0]``. Here every case of the source-engine corpus
(``source_corpus.CASES``) is generated at its own shapes and then called at
two others: its values must equal the trace engine's at those shapes, and,
for every case whose code does not depend on a length, the same generated
code must serve all three shapes. Guards (a comparison of lengths made while
staging) must send a call whose shapes answer them differently to new code.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core import dims, lengths
from wengert.core.context import StagingContext
from wengert.core.pytree import flatten

import shape_cases as S
from checks import AD_VS_AD_RTOL_F64, assert_close
from source_corpus import CASES, is_scalar

# cases whose code holds a number made from a length, so it is generated again
# at each new shape (values are still checked):
NOT_GENERIC = {
    "for-enumerate-list": "a loop over a Python list runs as Python, unrolled",
    "append-sum": "a loop over an array that builds a list runs as Python, unrolled",
    "comprehensions": "comprehensions over an array run as Python, unrolled",
    "comprehensions-zip-enumerate": "comprehensions run as Python, unrolled",
    "builtins": "range(len(x) // 2) runs as Python, unrolled",
    "append-stack": "jacfwd's identity, scaled, is folded into a constant",
    "attrs-methods": "1.0 / n is a float made from a length",
}

ARRAY_CASES = [c for c in CASES if any(np.ndim(a) for a in c.dyn(c.args))]


def _other(a, grow):
    """``a`` at other lengths (each length >= 2 grown by ``grow``), its values
    tiled from ``a``'s and nudged apart, so they keep their signs and sizes."""
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    shape = tuple(d + grow if d >= 2 else d for d in a.shape)
    out = np.resize(a, shape)
    return out * (1.0 + 0.01 * np.arange(out.size).reshape(shape) / max(out.size, 1))


def _derivative(case, engine):
    make = wg.grad if is_scalar(case) else wg.jacfwd
    fn = case.bound(case.fn if engine == "source" else case.traced)
    return make(fn, tuple(range(len(case.nums))), engine=engine)


@pytest.mark.parametrize("case", ARRAY_CASES, ids=[c.id for c in ARRAY_CASES])
def test_code_made_at_one_shape_serves_others(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = _derivative(case, "source")
        g(*case.dyn(case.fresh()))
        for grow in (2, 5):
            args = [_other(a, grow) for a in case.dyn(case.fresh())]
            got = g(*args)
            want = _derivative(case, "trace")(*args)
            for a, b in zip(flatten(got)[0], flatten(want)[0]):
                assert np.shape(a) == np.shape(b)
                assert_close(a, b, AD_VS_AD_RTOL_F64, what=f"{case.id} at {np.shape(args[0])}")
    made = {id(c) for c in g.cache.values()}
    if case.id in NOT_GENERIC:
        assert len(made) == 3, NOT_GENERIC[case.id]
    else:
        assert len(made) == 1, "the code was generated again for a new shape"


def test_source_reads_lengths_from_the_arguments():
    g = wg.grad(S.neighbours, engine="source")
    x = np.array([0.3, -0.8, 0.6])
    g(x)
    # each length is read from the argument once, at the function's entry
    code = "\n".join(line.split("#")[0] for line in g.source.splitlines())   # (comments quote)
    assert "    x_shape0 = x.shape[0]" in code and code.count("x.shape[0]") == 1
    assert "range(x_shape0)" in g.source
    assert "x_shape0 - 1" in g.source
    assert not re.search(r"(?<![\w.])3(?![\w.])", g.source)   # no length written as a number
    for n in (2, 7, 4, 1):
        y = np.linspace(-1.0, 1.0, n)
        want = 2 * y + np.r_[y[1:], 0.0] + np.r_[0.0, y[:-1]]
        assert_close(g(y), want, 1e-13)
    # one code for every length but 2, where x[1:] has length 1 and broadcasts (a
    # guard): its own code. (The table is shared by every grad of the function, so
    # only this test's lengths are counted.)
    made = {n: id(c) for (_, ((shape, *_),)), c in g.cache.items() if shape[0] in (3, 2, 7, 4, 1)
            for n in shape}
    assert made[3] == made[7] == made[4] == made[1] != made[2]


def test_code_staged_for_an_outer_transformation_leaves_the_generic_code_in_use():
    # under an outer transformation (the trace engine's jacfwd of a source
    # gradient) code is staged at fixed lengths; it is not evidence against the
    # code staged with symbolic lengths, which later calls at new lengths still use
    def fn(x):
        return S.neighbours(x) * 1.0
    g = wg.grad(fn, engine="source")
    g(np.array([0.3, -0.8, 0.6]))
    hess = wg.jacfwd(g, engine="trace")(np.linspace(-1.0, 1.0, 5))
    assert_close(hess, 2 * np.eye(5) + np.eye(5, k=1) + np.eye(5, k=-1), 1e-13)
    made = g.codes.generations
    for n in (6, 7, 8, 9):
        y = np.linspace(-1.0, 1.0, n)
        assert_close(g(y), 2 * y + np.r_[y[1:], 0.0] + np.r_[0.0, y[:-1]], 1e-13)
    # the first new length stages once more to confirm the pending code; then none
    assert g.codes.generations == made


def test_the_generated_source_runs_at_any_shape_on_its_own():
    g = wg.grad(S.matrix_stats, (0, 1), engine="source")
    a, b = np.arange(6.0).reshape(2, 3) / 7, np.arange(12.0).reshape(4, 3) / 5
    g(a, b)
    # the names the code reads from outside it, as its header lists them
    namespace = {k: v for k, v in g.last.fn.namespace.items() if k != "matrix_stats_grad"}
    exec(g.source, namespace)
    fn = namespace["matrix_stats_grad"]
    ref = wg.grad(S.matrix_stats, (0, 1), engine="trace")
    # (the code holds where its guards do: here, every length other than 1)
    for m, n, k in ((2, 3, 4), (5, 2, 3), (3, 4, 2)):
        a = np.cos(np.arange(m * n).reshape(m, n))
        b = np.sin(np.arange(k * n).reshape(k, n))
        for got, want in zip(fn(a, b), ref(a, b)):
            assert_close(got, want, AD_VS_AD_RTOL_F64)
        for got, want in zip(g(a, b), ref(a, b)):
            assert_close(got, want, AD_VS_AD_RTOL_F64)
    assert len({id(c) for c in g.cache.values()}) == 1


@pytest.mark.parametrize("again", [False, True], ids=["first", "second"])
def test_a_guard_on_a_length_sends_other_shapes_to_new_code(again):
    # "second": the same staging again, so shape rules memoised in the first
    # (elementwise broadcasting) would answer without recording their guards
    for _ in range(2 if again else 1):
        g = wg.grad(S.branch_on_length, engine="source")
        for n, power in ((2, 3), (3, 3), (5, 2), (9, 2), (1, 3)):
            x = np.linspace(0.5, 1.5, n)
            assert_close(g(x), power * x ** (power - 1), 1e-13)
        # one code for 2 <= n <= 3, one for n > 3, and n = 1 (which answers the
        # broadcasting guard "!= 1" otherwise) its own
        assert len({id(c) for c in g.cache.values()}) == 3


def test_broadcasting_a_length_one_argument_is_its_own_code():
    g = wg.grad(S.weighted, (0, 1), engine="source")
    x = np.array([0.1, 0.5, -0.7])
    for w in (np.array([2.0]), np.array([1.0, 2.0, 3.0]), np.array([-1.0])):
        gx, gw = g(x, w)
        assert_close(gx, np.cos(x) * w, 1e-13)
        assert_close(gw, np.sum(np.sin(x), keepdims=True) if w.size == 1 else np.sin(x), 1e-13)
    assert len({id(c) for c in g.cache.values()}) == 2


def test_a_number_made_from_a_length_is_never_reused_at_another():
    g = wg.grad(S.baked_length, engine="source")
    for n in (3, 4, 6, 3):
        x = np.linspace(-1.0, 1.0, n)
        assert_close(g(x), 2 * x / n, 1e-13)
    assert len({id(c) for c in g.cache.values()}) == 3


def test_pytree_arguments_generalise_too():
    g = wg.grad(S.dict_input, engine="source")
    for n in (2, 5):
        p = {"w": np.linspace(1, 2, n), "x": np.linspace(-1, 1, n)}
        got = g(p)
        assert_close(got["x"], p["w"] + 2 * p["x"], 1e-13)
        assert_close(got["w"], p["x"], 1e-13)
    assert len({id(c) for c in g.cache.values()}) == 1


def test_an_outer_transformation_at_another_shape_gets_its_own_program():
    # the trace engine's jacfwd replays the source gradient's Program, whose
    # params hold the lengths it was staged at: at another shape it is staged again
    g = wg.grad(S.neighbours, engine="source")
    g(np.array([0.3, -0.8, 0.6]))
    y = np.linspace(-1.0, 1.0, 5)
    hess = wg.jacfwd(g, engine="trace")(y)
    want = 2 * np.eye(5) + np.eye(5, k=1) + np.eye(5, k=-1)
    assert_close(hess, want, 1e-13)


def test_dims_keep_their_expression_and_record_comparisons():
    n = dims.Dim(4, ("in", 0, 0))
    m = dims.Dim(3, ("in", 1, 2))
    e = (n - 1) * m + 2
    assert int(e) == 11 and type(e) is dims.Dim
    text = lengths.render(e, lambda k, a: f"s{k}[{a}]")
    assert eval(text, {"s0": (4,), "s1": (0, 0, 3)}) == 11
    assert eval(text, {"s0": (6,), "s1": (0, 0, 2)}) == 12
    with StagingContext(symbolic=True) as ctx:
        assert n != 1 and not (n < m) and n == n
    guards = ctx.guards
    check = lengths.guard_function(guards, 2)
    assert check((4,), (0, 0, 3)) and check((9,), (0, 0, 5))
    assert not check((1,), (0, 0, 3)) and not check((4,), (0, 0, 7))
    assert len(guards) == 2        # n == n compares nothing


@pytest.mark.parametrize("s", [slice(None), slice(1, None), slice(None, -1), slice(2, -1),
                               slice(None, 2), slice(-2, None), slice(None, None, -1),
                               slice(1, 5)])
def test_slice_lengths_are_symbolic_and_guarded(s):
    with StagingContext(symbolic=True) as ctx:
        got = dims.slice_length(dims.Dim(6, ("in", 0, 0)), s)
    guards = ctx.guards
    check = lengths.guard_function(guards, 1)
    for n in range(0, 12):
        if check((n,)):
            text = lengths.render(got, lambda k, a: "n")
            assert eval(text, {"n": n}) == len(range(n)[s]), (s, n)


def test_a_mean_keeps_its_weight_symbolic():
    g = wg.grad(S.mean_squared_error, engine="source")
    rng = np.random.default_rng(0)
    w = np.array([0.5, -1.0, 2.0])
    for n in (5, 8, 2):
        x, y = rng.normal(size=(n, 3)), rng.normal(size=n)
        assert_close(g(w, x, y), 2 * (x @ w - y) @ x / n, 1e-12)
    assert "1.0 / x_shape0" in g.source and "    x_shape0 = x.shape[0]\n" in g.source
    assert len({id(c) for c in g.cache.values()}) == 1
    # the code divides by n: a guard (n != 0) gives n = 0 its own code, which
    # answers as NumPy does instead of raising ZeroDivisionError
    x, y = np.zeros((0, 3)), np.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(g(w, x, y), wg.grad(S.mean_squared_error, engine="trace")(w, x, y), 1e-12)
    assert len({id(c) for c in g.cache.values()}) == 2
