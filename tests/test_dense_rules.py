"""Rules that make no array of the operand's size the mathematics does not
need (dense programs: their cost is the NumPy calls of the derivative).

* ``sub``'s transpose sums the cotangent to the subtrahend's shape and then
  negates it: ``x - a`` with ``a`` broadcast costs a sum and the sign of a
  small array, never a negated copy of the cotangent;
* ``reduce_max``/``reduce_min``'s jvp keeps the places that attain the
  extremum as booleans: only the counts are converted to floats.

For each program of a class: the property, read off the gradient's Program,
and the gradient against the trace engine and finite differences.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.api.backend import python_function

from checks import assert_close, fd_jvp, rtol

RNG = np.random.default_rng(11)


def _size(aval):
    return int(np.prod(aval.shape))


def _eqns(prog):
    for e in prog.eqns:
        yield e
        for v in e.params.values():
            subs = v if isinstance(v, tuple) else (v,)
            for p in subs:
                if hasattr(p, "eqns"):
                    yield from _eqns(p)


# --- sub: the sign on the smaller array ---------------------------------------
def minus_scalar(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def minus_row(x):
    return np.sum(np.sin(x - np.mean(x, axis=0)) ** 2)


def minus_column(x):
    return np.sum(np.tanh(x - np.sum(x * x, axis=1)[:, None]))


def minus_keepdims(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))


def minus_float(x):
    return np.sum(np.cos(x - np.sum(x) * 0.1))


SUBS = [minus_scalar, minus_row, minus_column, minus_keepdims, minus_float]


def _matrix():
    return RNG.standard_normal((6, 5))


@pytest.mark.parametrize("fun", SUBS, ids=lambda f: f.__name__)
def test_sub_transpose_negates_the_summed_cotangent(fun):
    x = _matrix()
    g = wg.grad(fun, engine="source")
    g(x)
    negs = [e for e in _eqns(g.program) if e.prim.name == "neg"]
    big = [e for e in negs if _size(e.outputs[0].aval) == x.size]
    assert not big, f"a negation of x's size in\n{g.program}"


# --- reduce_max / reduce_min: boolean places ------------------------------------
def max_all(x):
    return np.max(x) * np.sum(x)


def min_axis0(x):
    return np.sum(np.min(x, axis=0) ** 2)


def max_axis1_keep(x):
    return np.sum(np.exp(x - np.max(x, axis=1, keepdims=True)))


def amin_method(x):
    return np.sum(x.min(axis=1) * np.arange(x.shape[0]))


def max_weighted(x):
    return np.sum(np.max(x, axis=1) * np.arange(1.0, x.shape[0] + 1.0))


EXTREMA = [max_all, min_axis0, max_axis1_keep, amin_method, max_weighted]


@pytest.mark.parametrize("fun", EXTREMA, ids=lambda f: f.__name__)
def test_extremum_places_stay_boolean(fun):
    x = _matrix()
    g = wg.grad(fun, engine="source")
    g(x)
    converted = [e for e in _eqns(g.program) if e.prim.name == "convert"
                 and _size(e.inputs[0].aval) == x.size]
    assert not converted, f"an array of x's size converted in\n{g.program}"


@pytest.mark.parametrize("fun", SUBS + EXTREMA, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_against_trace_and_differences(fun, dtype):
    x = _matrix().astype(dtype)
    g = wg.grad(fun, engine="source")(x)
    assert g.dtype == dtype
    assert_close(g, wg.grad(fun, engine="trace")(x), rtol("ad", x))
    t = RNG.standard_normal(x.shape)
    assert_close(np.sum(g * t), fd_jvp(fun, (x,), (t,)), rtol("program", x))
    # forward mode: the jvp of the extremum rule, against the gradient
    _, dot = wg.jvp(fun, (x,), (t.astype(dtype),), engine="source")
    assert_close(dot, np.sum(g * t), rtol("program", x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ties_share_the_derivative_evenly(dtype):
    # no finite difference at a tie: the reference is the rule's meaning,
    # the weight of a row spread evenly over the places attaining its max
    x = np.array([[1.0, 3.0, 3.0, -2.0], [2.0, 2.0, 2.0, 0.5], [0.0, -1.0, 4.0, 1.5]], dtype)
    g = wg.grad(max_weighted, engine="source")(x)
    hit = x == x.max(axis=1, keepdims=True)
    want = hit / hit.sum(axis=1, keepdims=True) * np.arange(1.0, x.shape[0] + 1.0)[:, None]
    assert g.dtype == dtype
    assert_close(g, want, rtol("exact", x))
    assert_close(g, wg.grad(max_weighted, engine="trace")(x), rtol("exact", x))


# --- a count of booleans: np.count_nonzero ------------------------------------------
def count_positive(x):
    return np.sum(x > 0) * np.sum(x)


def count_method(x):
    return (x == np.max(x)).sum() * np.sum(x * x)


def count_rows(x):
    # over one axis of two: NumPy's sum (count_nonzero is no faster there)
    return np.sum(np.sum(x > 0, axis=0) * np.sum(x, axis=0))


COUNTS = [(count_positive, (7,), True), (count_positive, (4, 5), True),
          (count_method, (7,), True), (count_method, (4, 5), True),
          (count_rows, (4, 5), False)]


@pytest.mark.parametrize("fun,shape,whole", COUNTS,
                         ids=lambda a: getattr(a, "__name__", None) or str(a))
def test_count_of_booleans(fun, shape, whole):
    x = RNG.standard_normal(shape)
    prog = wg.make_program(fun, x, engine="source")
    gen = python_function(prog)
    assert ("count_nonzero" in gen.source) == whole, gen.source
    (got,), (want,) = gen(x), interpret(prog, x)
    assert type(got) is type(want) and got == want == fun(x)
    g = wg.grad(fun, engine="source")(x)
    assert_close(g, wg.grad(fun, engine="trace")(x), rtol("ad", x))
    t = RNG.standard_normal(shape)
    assert_close(np.sum(g * t), fd_jvp(fun, (x,), (t,)), rtol("program", x))
