"""The rows whose impl is code of wengert's own (a linear recurrence, the adjugate, erf, QR's
and lstsq's NumPy calls), and arrays made ``like=`` a traced value, on arrays of a library
that computes at once and refuses conversion to NumPy (``Strict``, which behaves as CuPy's
arrays do: ``tests/strict_arrays.py``): the derivative runs in that library and equals
NumPy's, in both engines; a row whose code would copy the array to NumPy is refused with a
typed error naming the user's line (``core.libraries.numpy_only``), never run on a copy.
"""
import numpy as np
import pytest

import wengert as wg
from strict_arrays import Strict

ENGINES = ("source", "trace")


def _square(x):
    # a well-conditioned 3 x 3 matrix of the first three columns, made like the input
    return x[:, :3].T @ x[:, :3] + 3.0 * np.eye(3, like=x)


CASES = {
    "cumprod": lambda x: np.sum(np.cumprod(x, axis=1) ** 2),
    # long axes go by blocks of the recurrence (``primitives.scan._scan_blocks``)
    "cumprod_long": lambda x: np.sum(np.cumprod(np.tile(x, (1, 40)) ** 0.1, axis=1)),
    "det": lambda x: np.linalg.det(_square(x)),
    "slogdet": lambda x: np.linalg.slogdet(_square(x))[1],
    "inv": lambda x: np.sum(np.linalg.inv(_square(x)) ** 2),
    "solve": lambda x: np.sum(np.linalg.solve(_square(x), x[0, :3])),
    "qr": lambda x: np.sum(np.linalg.qr(x.T)[1] ** 2),
    "eigh": lambda x: np.sum(np.linalg.eigh(_square(x))[0] ** 2),
    "cholesky": lambda x: np.sum(np.linalg.cholesky(_square(x))),
    "pinv": lambda x: np.sum(np.linalg.pinv(x) ** 2),
    "made_like": lambda x: np.sum(x * np.arange(x.shape[1], like=x)
                                  + np.ones((x.shape[0], 1), like=x) * np.eye(x.shape[0], x.shape[1], like=x)),
}


def _x(n=3, m=4):
    return np.random.default_rng(5).uniform(0.5, 1.5, size=(n, m))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_rules_of_wengerts_own_code_run_in_the_inputs_library(name, engine):
    f = CASES[name]
    x = _x()
    want = wg.grad(f, engine=engine)(x)
    s = Strict(x.copy())
    got = wg.grad(f, engine=engine)(s)
    assert isinstance(got, Strict)
    np.testing.assert_allclose(got.get(), want, rtol=1e-10, atol=1e-12)
    assert s.get().tobytes() == x.tobytes()     # the caller's array untouched
    # and NumPy's derivative is the function's (finite differences)
    wg.testing.check_grads(f, (x,), order=1, modes=("rev",))


@pytest.mark.parametrize("engine", ENGINES)
def test_arrays_made_like_a_traced_value_follow_its_lengths(engine):
    # np.eye(n, like=x) with n a length of x: one code for every length (source engine)
    f = CASES["made_like"]
    g = wg.grad(f, engine=engine)
    for n, m in ((3, 4), (4, 5), (2, 4)):
        x = _x(n, m)
        got = g(Strict(x))
        np.testing.assert_allclose(got.get(), wg.grad(f, engine="trace")(x), rtol=1e-12)


def test_erf_runs_in_the_inputs_library():
    special = pytest.importorskip("scipy.special", reason="SciPy is not installed")

    def f(x):
        return np.sum(special.erf(x) * x)
    x = _x()
    for engine in ENGINES:
        got = wg.grad(f, engine=engine)(Strict(x))
        assert isinstance(got, Strict)
        np.testing.assert_allclose(got.get(), wg.grad(f, engine=engine)(x), rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_row_that_would_copy_to_numpy_is_refused_naming_the_line(engine):
    def f(x):
        # np.unique's positions are NumPy code of wengert's own, not written for any library
        return np.sum(np.unique(np.round(x, 1) * x) ** 2)
    x = _x()
    np.testing.assert_allclose(wg.grad(f, engine=engine)(x), wg.grad(f, engine="trace")(x))
    with pytest.raises(wg.NoDerivativeRule, match=r"would copy .* to NumPy") as err:
        wg.grad(f, engine=engine)(Strict(x))
    assert "test_array_library_rules.py:" in str(err.value)


def test_a_traced_value_in_a_named_tuple_is_not_taken_for_like():
    """A call whose traced values sit in a named tuple (``np.stack(P(x, 2 * x))``) is
    differentiated, not taken for one that named a traced value only through ``like=``
    (it once recursed without end)."""
    import collections
    pair = collections.namedtuple("pair", "a b")

    def f(x):
        return np.sum(np.stack(pair(x, 2.0 * x)) ** 2)
    x = _x()
    for engine in ENGINES:
        np.testing.assert_allclose(wg.grad(f, engine=engine)(x), 10.0 * x, rtol=1e-13)
