"""Derivatives on arrays of other libraries (``core.atoms.is_duck_array``: Dask, CuPy, any array
implementing NumPy's protocols) and through the Array API namespace, through the public API
(``api/source.py`` and ``api/compiled.py``: code of its own for such inputs, arrays made
``like=`` one; ``api/prepare.py``'s ``cast_like``: the derivative of the input's library).

Checked: both engines' grad, vjp and jvp of ordinary losses on Dask arrays give Dask arrays,
lazily (a ``map_blocks`` probe counts the blocks computed: none before ``.compute()``), equal
to NumPy's; the caller's arrays are untouched; NumPy inputs keep their code; a choice that
needs a Dask value (``if``, ``while``, ``float()``), a Dask method that swallowed a traced value
(once a silent zero gradient: ``dask_x.dot(w)`` made a Dask array of the tracer) and a Dask
array of unknown shape raise typed errors naming the line; the functions listed in
``docs/guide/dask-and-gpu.md`` are those that pass. Once raised ``TypeError: not an array
value: EnvObject``. CuPy: the same on a GPU, skipped (named) where CuPy or a GPU is missing.
"""
import os
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import ConcretizationError, ShapeMismatchError

from array_library_cases import NAMES, NUMPY_ONLY, Probe, call, doc_list
from strict_arrays import Strict

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install wengert[dask])")

ENGINES = ("source", "trace")
DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "guide", "dask-and-gpu.md")


def logistic(w, X, y):
    return np.mean(np.log(1.0 + np.exp(-y * (X @ w))))


def sums(w, X, y):
    return np.sum(np.sin(X * w) ** 2) + (X @ w).sum()


def chosen(w, X, y):
    z = X @ w
    return np.sum(np.where(z > 0, z ** 2, -z))


def sliced(w, X, y):
    return np.sum((X[2:30, 1:4] @ w[1:4]) ** 2) + np.sum(X[::2] * w)


def methods(w, X, y):
    return (X @ w).mean() + np.maximum(X @ w, 0.0).sum() + X.T.sum()


def logsumexp(w, X, y):
    return np.sum(np.log(np.sum(np.exp(X * w), axis=1)))


def scaled(w, X, y):
    return np.sum(np.tanh(X @ w) * y) / X.shape[0]


LOSSES = (logistic, sums, chosen, sliced, methods, logsumexp, scaled)


def _data(n=40, d=5):
    rng = np.random.default_rng(0)
    return rng.normal(size=d), rng.normal(size=(n, d)), np.sign(rng.normal(size=n))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_grad_of_a_dask_input_is_a_lazy_dask_array_equal_to_numpys(loss, engine):
    w, X, y = _data()
    probe = Probe(X, (10, 5))
    name = probe.array.name
    g = wg.grad(loss, argnums=(0, 1), engine=engine)(w, probe.array, da.from_array(y, chunks=10))
    assert isinstance(g[1], da.Array) and probe.count == 0
    want = wg.grad(loss, argnums=(0, 1), engine=engine)(w, X, y)
    np.testing.assert_allclose(g[0].compute() if isinstance(g[0], da.Array) else g[0], want[0],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g[1].compute(), want[1], rtol=1e-12, atol=1e-12)
    assert probe.count > 0 and probe.array.name == name      # computed now; input untouched


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_vjp_and_jvp_on_dask_are_lazy_and_equal_numpys(loss, engine):
    w, X, y = _data()
    probe = Probe(X, (10, 5))
    yd = da.from_array(y, chunks=10)
    out, pullback = wg.vjp(lambda X: loss(w, X, yd), probe.array, engine=engine)
    ct, = pullback(1.0)
    _, t = wg.jvp(lambda X: loss(w, X, yd), (probe.array,), (probe.array * 0.5,), engine=engine)
    assert isinstance(ct, da.Array) and isinstance(t, da.Array) and probe.count == 0
    want_out, want_pb = wg.vjp(lambda X: loss(w, X, y), X, engine=engine)
    np.testing.assert_allclose(np.asarray(out), want_out, rtol=1e-12)
    np.testing.assert_allclose(ct.compute(), want_pb(1.0)[0], rtol=1e-12, atol=1e-12)
    # forward against reverse: <J 0.5 X, 1> = <0.5 X, J^T 1>
    np.testing.assert_allclose(t.compute(), np.sum(0.5 * X * want_pb(1.0)[0]), rtol=1e-10)


def _field(x):
    return np.sin(x) * np.sum(x ** 2)


def _energy(x):
    return np.sum(np.sin(x) * x ** 3)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_and_hessians_of_dask_inputs_are_lazy_dask_arrays(how, engine):
    """jacfwd's seed, an identity (``np.eye``, which Dask makes without ``like=``), is
    converted to the input's library."""
    x = np.linspace(0.1, 1.0, 6)
    fun = _energy if how == "hessian" else _field
    probe = Probe(x, 3)
    got = getattr(wg, how)(fun, engine=engine)(probe.array)
    assert isinstance(got, da.Array) and probe.count == 0
    np.testing.assert_allclose(got.compute(), getattr(wg, how)(fun, engine=engine)(x),
                               rtol=1e-12, atol=1e-14)


def _root_times_first(x):
    return np.sum(np.sqrt(x) * x[0])


def test_numpy_inputs_keep_their_code_and_dask_gets_its_own():
    """The code for NumPy arrays is the code of before (no ``like=``, the nan test of the
    safe quotient, ``x.item(0)``); a Dask call between two NumPy calls does not replace it.
    The Dask code reads no value: the select always, ``x[0]`` a 0-d Dask array."""
    x = np.linspace(0.1, 1.0, 8)
    g = wg.grad(_root_times_first, engine="source")
    want = g(x)
    numpy_code = g.source
    got = g(da.from_array(x, chunks=4))
    dask_code = g.source
    g(x)
    assert g.source == numpy_code and "like=" not in numpy_code
    assert "if (s := " in numpy_code and "x.item(0)" in numpy_code   # the nan test, a float read
    assert "like=x" in dask_code and "if " not in dask_code and ".item(" not in dask_code
    np.testing.assert_allclose(got.compute(), want, rtol=1e-14)


def _branchy(x):
    s = np.sum(x)
    if s > 1.0:                         # the line named
        return s * 2.0
    return s


def _loopy(x):
    s = np.sum(x)
    while s < 100.0:                    # the line named
        s = s * 2.0
    return s


def _floaty(x):
    return float(np.sum(x)) * np.sum(x)     # the line named


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun, line", [(_branchy, 2), (_loopy, 2), (_floaty, 1)],
                         ids=["if", "while", "float"])
def test_a_choice_on_a_dask_value_raises_naming_the_line(fun, line, engine):
    x = da.from_array(np.linspace(0.1, 1.0, 8), chunks=4)
    with pytest.raises(ConcretizationError) as err:
        wg.grad(fun, engine=engine)(x)
    lineno = fun.__code__.co_firstlineno + line
    assert f"{os.path.basename(__file__)}:{lineno}" in str(err.value)
    if fun is not _floaty:      # (float() of a traced value is refused on NumPy's too)
        assert wg.grad(fun, engine=engine)(np.linspace(0.1, 1.0, 8)).shape == (8,)


def test_auto_does_not_fall_back_to_tracing_for_a_choice_on_a_dask_value():
    """The source engine's refusal is the error (tracing cannot stay lazy either), with no
    fallback warning; NumPy's arrays keep the source engine's code after it."""
    g = wg.grad(_branchy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ConcretizationError, match="an if"):
            g(da.from_array(np.linspace(0.1, 1.0, 8), chunks=4))
        g(np.linspace(0.1, 1.0, 8))
    assert "def _branchy_grad" in g.source


def test_a_dask_method_given_a_traced_value_raises_instead_of_a_zero_gradient():
    """``dask_x.dot(w)`` is Dask's method: it made a Dask array of the tracer, and the
    gradient came back all zeros."""
    w, X, _ = _data()
    with pytest.raises(ConcretizationError, match="np.dot"):
        wg.grad(lambda w, X: np.sum(X.dot(w) ** 2), engine="trace")(w, da.from_array(X, 10))
    g = wg.grad(lambda w, X: np.sum(np.dot(X, w) ** 2), engine="trace")(w, da.from_array(X, 10))
    np.testing.assert_allclose(g, 2 * X.T @ (X @ w))


def test_a_dask_array_of_unknown_shape_is_refused():
    x = da.from_array(np.arange(8.0), chunks=4)
    masked = x[x > 3.0]                 # lengths known only when computed
    with pytest.raises(ShapeMismatchError, match="compute_chunk_sizes"):
        wg.grad(lambda v: np.sum(v ** 2), engine="trace")(masked)


def test_values_read_from_outside_may_be_dask_arrays():
    """A closure over a Dask array: read at each call, like a NumPy global."""
    w, X, y = _data()
    Xd = da.from_array(X, chunks=(10, 5))
    g = wg.grad(lambda w: logistic(w, Xd, y), engine="source")(w)
    np.testing.assert_allclose(np.asarray(g), wg.grad(logistic)(w, X, y), rtol=1e-12)


def _dask_run(name, engine, x0):
    def loss(x):
        return np.sum(call(np, name, x))
    want = wg.grad(loss, engine=engine)(x0)
    probe = Probe(x0, (2, 2))
    try:
        g = wg.grad(loss, engine=engine)(probe.array)
    except Exception:   # noqa: BLE001 -- a function Dask or wengert cannot run lazily
        return False
    lazy = isinstance(g, da.Array) and probe.count == 0
    return lazy and np.allclose(g.compute(), want, rtol=1e-12, atol=1e-12)


def _namespace_run(name, engine, x0, how):
    def loss(x):
        xp = x.__array_namespace__() if how == "method" else compat.array_namespace(x)
        return xp.sum(call(xp, name, x))

    def plain(x):
        return np.sum(call(np, name, x))
    try:
        g = wg.grad(loss, engine=engine)(x0)
    except Exception:   # noqa: BLE001 -- a function without a rule
        return False
    return np.allclose(g, wg.grad(plain, engine="trace")(x0), rtol=1e-12, atol=1e-12)


compat = None


def test_the_functions_listed_as_running_on_dask_are_those_that_do():
    x0 = np.random.default_rng(1).uniform(0.1, 0.9, size=(3, 4))
    works = [n for n in NAMES + NUMPY_ONLY if all(_dask_run(n, e, x0) for e in ENGINES)]
    with open(DOC) as f:
        assert doc_list(f.read(), "Functions that differentiate lazily on Dask arrays") == works


def test_the_functions_listed_for_the_array_api_namespace_are_those_that_work():
    global compat
    compat = pytest.importorskip("array_api_compat", reason="array_api_compat is not installed")
    x0 = np.random.default_rng(2).uniform(0.1, 0.9, size=(3, 4))
    works = [n for n in NAMES if all(_namespace_run(n, e, x0, how) for e in ENGINES
                                     for how in ("method", "compat"))]
    with open(DOC) as f:
        assert doc_list(f.read(), "Functions of the Array API namespace") == works


@pytest.mark.parametrize("engine", ENGINES)
def test_array_api_code_checks_against_finite_differences(engine):
    def loss(x):
        xp = x.__array_namespace__()
        return xp.mean(xp.log(1.0 + xp.exp(-xp.matmul(x, xp.matrix_transpose(x)))))
    x0 = np.random.default_rng(3).normal(size=(3, 4))
    wg.testing.check_grads(loss, (x0,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(wg.grad(loss, engine=engine)(x0),
                               wg.grad(lambda x: np.mean(np.log(1.0 + np.exp(-(x @ x.T)))),
                                       engine="trace")(x0))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_no_input_is_forced_to_numpy(loss, engine):
    """On ``Strict`` arrays (``tests/strict_arrays.py``: NumPy's protocols, refusing conversion
    to NumPy and NumPy operands, as CuPy does), grad, vjp and jvp run in the input's library:
    every array either engine makes meets the inputs as one of theirs (once: the trace
    engine's seeds and the source engine's fills were NumPy's)."""
    w, X, y = _data()
    sw, sX, sy = Strict(w), Strict(X), Strict(y)
    g = wg.grad(loss, argnums=(0, 1), engine=engine)(sw, sX, sy)
    want = wg.grad(loss, argnums=(0, 1), engine=engine)(w, X, y)
    assert all(isinstance(a, Strict) for a in g)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a.get(), b, rtol=1e-12, atol=1e-14)
    _, pullback = wg.vjp(lambda X: loss(sw, X, sy), sX, engine=engine)
    ct, = pullback(1.0)
    _, t = wg.jvp(lambda X: loss(sw, X, sy), (sX,), (Strict(0.5 * X),), engine=engine)
    np.testing.assert_allclose(ct.get(), want[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(t.get()), np.sum(0.5 * X * want[1]), rtol=1e-10)
    assert sX.get().tobytes() == X.tobytes()        # the caller's array untouched


def _cupy():
    """CuPy with a GPU, or a skip naming which is missing."""
    cp = pytest.importorskip("cupy", reason="CuPy is not installed (pip install wengert[cupy])")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy: no GPU")
    except Exception as err:    # noqa: BLE001 -- CUDA missing or no driver
        pytest.skip(f"CuPy: no GPU ({type(err).__name__})")
    return cp


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_cupy_gradients_stay_on_the_gpu_and_equal_numpys(loss, engine):
    cp = _cupy()
    w, X, y = _data()
    g = wg.grad(loss, argnums=(0, 1), engine=engine)(cp.asarray(w), cp.asarray(X), cp.asarray(y))
    want = wg.grad(loss, argnums=(0, 1), engine=engine)(w, X, y)
    assert all(isinstance(a, cp.ndarray) for a in g)
    for a, b in zip(g, want):
        np.testing.assert_allclose(cp.asnumpy(a), b, rtol=1e-10, atol=1e-12)
