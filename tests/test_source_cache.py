"""The source engine's generated code is reused across calls, and
regenerated when what it baked in changes: the signature, or a global or
closure value the function reads."""
import numpy as np
import pytest

import wengert as wg
import cache_cases as C


def test_rebinding_a_global_number_regenerates():
    g = wg.grad(C.scaled, engine="source")
    assert g(1.5) == pytest.approx(2 * 2.0 * 1.5)
    assert g(1.5) == pytest.approx(6.0)          # the cached code
    old = C.SCALE
    try:
        C.SCALE = 5.0
        assert g(1.5) == pytest.approx(2 * 5.0 * 1.5)
    finally:
        C.SCALE = old
    assert g(1.5) == pytest.approx(6.0)


def test_rebinding_a_global_array_regenerates():
    g = wg.grad(C.poly, engine="source")
    assert g(0.5) == pytest.approx(1.0 + 2 * 2.0 * 0.5)
    old = C.COEFFS
    try:
        C.COEFFS = np.array([3.0, 0.0])
        assert g(0.5) == pytest.approx(3.0)
    finally:
        C.COEFFS = old


def test_closures_over_different_values_are_different_functions():
    f2, f3 = C.make_closure(2.0), C.make_closure(3.0)
    g2, g3 = wg.grad(f2, engine="source"), wg.grad(f3, engine="source")
    for _ in range(2):                            # first call generates, second reuses
        assert g2(0.3) == pytest.approx(2.0 * np.cos(0.3))
        assert g3(0.3) == pytest.approx(3.0 * np.cos(0.3))


def test_new_shapes_and_python_int_values_reuse_the_code():
    """A new length and a new trip count: the code reads both (``x.shape[0]``,
    ``n``), so it is generated once; the values follow them."""
    def total(x, n):
        s = 0.0
        for i in range(n):
            s = s + x[i] ** 2
        return s

    g = wg.grad(total, engine="source")
    x3, x5 = np.arange(1.0, 4.0), np.arange(1.0, 6.0)
    np.testing.assert_allclose(g(x3, 3), 2 * x3)
    np.testing.assert_allclose(g(x5, 2), [2.0, 4.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(g(x3, 3), 2 * x3)
    np.testing.assert_allclose(g(x5, 4), [2.0, 4.0, 6.0, 8.0, 0.0])
    assert g.generations == 1
