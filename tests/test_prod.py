"""np.prod's gradient is each entry's others' product, ``prod_{j != i} x_j``,
as NumPy computes that product (np.prod of the others, entry by entry): for
every kind of operand where ``prod / x`` is wrong (an exact zero, two, a
product that underflows to 0 or overflows to inf while the others' products
need not) and the plain kind, over the reduced axes' forms, in both engines.
Finite differences cannot check the extreme scales (a step of 1e-6 swamps
entries of 1e-200); NumPy's own product overflows there, hence the filter."""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg

from checks import assert_close

ENGINES = ("trace", "source")
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered",
                                        "ignore:invalid value encountered")

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


def _operand(scales, rng):
    """Three slices of four entries along axis 1, each with ``scales``."""
    return rng.choice([-1.0, 1.0], (3, 4)) * rng.uniform(0.5, 2.0, (3, 4)) * np.asarray(scales)


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


@pytest.mark.parametrize("engine", ENGINES)
def test_prod_gradient_over_two_axes(engine):
    """Two reduced axes, not adjacent, with a zero in one slice."""
    x = np.random.default_rng(3).uniform(-2.0, 2.0, (2, 3, 2))
    x[1, 2, 0] = 0.0
    got = wg.grad(prod_outer, engine=engine)(x)
    want = others_product(x, (0, 2))
    assert_close(got, want, 1e-12, what="np.prod gradient over axes (0, 2)")
