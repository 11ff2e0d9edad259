"""The reductions (``wengert/primitives/reduce.py``).

* ``reduce_prod``: np.prod's gradient is each entry's others' product,
  ``prod_{j != i} x_j``, as NumPy computes that product (np.prod of the
  others, entry by entry): for every kind of operand where ``prod / x`` is
  wrong (an exact zero, two, a product that underflows to 0 or overflows to
  inf while the others' products need not) and the plain kind, over the
  reduced axes' forms, in both engines. Finite differences cannot check the
  extreme scales (a step of 1e-6 swamps entries of 1e-200); NumPy's own
  product overflows there, hence the filter.
* ``reduce_max``/``reduce_min``'s jvp keeps the places that attain the
  extremum as booleans: only the counts are converted to floats (no array of
  the operand's size the mathematics does not need); ties share the
  derivative evenly.
* a sum of booleans over the whole array is written ``np.count_nonzero``.

Each against the trace engine and finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret

from checks import assert_close, fd_jvp, rtol


# --- reduce_prod: each entry's others' product ------------------------------------
ENGINES = ("trace", "source")
# name -> the scales of one slice's entries (random signs and U(0.5, 2) factors)
SLICES = {
    "plain": (1.0, 1.0, 1.0, 1.0),
    "one-zero": (1.0, 0.0, 1.0, 1.0),
    "two-zeros": (0.0, 1.0, 0.0, 1.0),
    "underflow": (1e-200, 1e-200, 1.0, 1.0),
    "overflow": (1e200, 1e200, 1e-200, 1.0),
}


def others_product(x, axes):
    """Entry by entry: the product over the entry's slice (the entries that
    share its coordinates off ``axes``), less the entry itself."""
    coords = np.indices(x.shape)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        same = np.ones(x.shape, bool)
        for d in range(x.ndim):
            if d not in axes:
                same &= coords[d] == idx[d]
        same[idx] = False
        out[idx] = np.prod(x[same])
    return out


def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.sum(np.prod(x, axis=1))


def prod_outer(x):
    return np.sum(np.prod(x, axis=(0, 2)))


FORMS = {"all": (prod_all, (0, 1)), "axis1": (prod_rows, (1,))}
# NumPy's own products over- and underflow at the extreme scales
OVERFLOWS_IGNORED = pytest.mark.filterwarnings("ignore:overflow encountered",
                                               "ignore:invalid value encountered")


def _operand(scales, rng):
    """Three slices of four entries along axis 1, each with ``scales``."""
    return rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(0.5, 2.0, (3, 4)) * np.asarray(scales)


@OVERFLOWS_IGNORED
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("kind", sorted(SLICES))
def test_prod_gradient_is_the_others_product(kind, form, engine):
    fun, axes = FORMS[form]
    x = _operand(SLICES[kind], np.random.default_rng(7))
    if form == "all":       # every entry in one slice: the pattern once
        x = x[:1]
    with np.errstate(all="ignore"):
        want = others_product(x, axes)
    got = wg.grad(fun, engine=engine)(x)
    assert np.all(np.isfinite(got)) == np.all(np.isfinite(want)), (got, want)
    # relative to each entry's own size: the values span 400 orders of magnitude
    scale = np.where((want == 0.0) | ~np.isfinite(want), 1.0, np.abs(want))
    assert_close(got / scale, want / scale, 1e-12, what=f"np.prod gradient ({kind}, {form})")


@OVERFLOWS_IGNORED
@pytest.mark.parametrize("engine", ENGINES)
def test_prod_gradient_over_two_axes(engine):
    """Two reduced axes, not adjacent, with a zero in one slice."""
    x = np.random.default_rng(3).uniform(-2.0, 2.0, (2, 3, 2))
    x[1, 2, 0] = 0.0
    got = wg.grad(prod_outer, engine=engine)(x)
    want = others_product(x, (0, 2))
    assert_close(got, want, 1e-12, what="np.prod gradient over axes (0, 2)")


# --- reduce_max / reduce_min: boolean places ------------------------------------
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


def _matrix():
    return RNG.standard_normal((6, 5))


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


@pytest.mark.parametrize("fun", EXTREMA, ids=lambda f: f.__name__)
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
