"""Derivatives on arrays of other libraries (Dask; ``tests/strict_arrays.py``'s ``Strict``,
which refuses conversion to NumPy and NumPy operands as CuPy does) through what NumPy's
protocols do not carry: sorts (``argsort``, gathers at a sort's positions and the scatter-adds
of their transposes: ``core/libraries.py``), scatter-adds of repeated indices, loops (the
stacked per-step values of a ``for`` and of ``wg.fori_loop``, ``backends/python/codegen.py``'s
buffers and ``control/loops.py``'s ``YsBuffer``) and Dask arrays read from outside the
function (``api/source.py``'s ``outside_library``).

Checked, in both engines: the derivative is an array of the input's library, lazy (a
``map_blocks`` probe counts the blocks computed: none before ``.compute()``), equal to NumPy's
(which is checked against finite differences); a sort's derivative runs per block (no task
holding the whole array); the caller's arrays are untouched. What came back wrong before:
``np.sort`` of a Dask array raised ``NotImplementedError: Don't yet support nd fancy
indexing``; the gradient of ``x[idx]`` a ``TypeError`` from ``np.add.at``; a ``for`` over a
Dask array's rows and ``fori_loop`` computed every block (NumPy buffers), and so did
``np.cumprod`` and ``np.linalg.qr`` (NumPy code of wengert's own: now one task of the graph);
a sort of a closure Dask array raised ``NotImplementedError: The out parameter is not fully
supported``.
"""
import numpy as np
import pytest

import wengert as wg

from array_library_cases import NAMES, NUMPY_ONLY, Probe, call
from checks import assert_close, fd_jvp
from strict_arrays import Strict

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install wengert[dask])")

ENGINES = ("source", "trace")
IDX = np.array([0, 2, 2, 1, 5, 0])
RANKS = np.arange(6.0)[:, None]


def sorted_rows(x):
    return np.sum(np.sort(x, axis=0) * np.arange(6.0)[:, None]) + np.sum(np.sort(x) ** 2)


def medians(x):
    return np.sum(np.median(x, axis=1) ** 2) + np.sum(np.percentile(x, 30.0, axis=0))


def partitioned(x):
    return np.sum(np.partition(x, 1, axis=0)[:2] * np.array([1.0, 3.0])[:, None])


def gathered(x):
    return np.sum(np.sin(x[IDX]) * x[IDX, 1:2])         # repeated rows: added twice


def scattered(x):
    return np.sum(wg.at(np.zeros((6, 3)))[IDX].add(x) ** 2)


def row_loop(x):
    s = 0.0
    for r in x:
        s = s + np.sum(np.sin(r) * r)
    return s


def fori(x):
    return np.sum(wg.fori_loop(3, lambda i, c: np.sin(c) * 1.1 + c[0], x) ** 2)


def argmax_read(x):
    return np.sum(x[0, np.argmax(x[0])] * x)


def stored(x):
    y = x * 1.0
    y[1:3] = np.sin(x[0:2])
    pairs = wg.at(y)[np.array([0, 4]), np.array([1, 2])].set(2.0)    # Dask: not its own store
    return np.sum(wg.at(y)[0, np.argmax(x[0])].set(0.0) ** 2) + np.sum(wg.at(y)[IDX].set(1.0) * x) \
        + np.sum(pairs * x)


def argmax_rows(x):
    s = 0.0
    for r in x:                     # an int per step stored (Dask once made its buffer float)
        s = s + r[np.argmax(r)] ** 2 + np.sum(r)
    return s


def broadcast_take(x):
    # one row of positions for every row: not the per-block pattern of a sort's gather
    return np.sum(np.take_along_axis(x, np.array([[0, 2, 2]]), axis=1) ** 2 * np.arange(1.0, 4.0))


FUNS = (sorted_rows, medians, partitioned, gathered, scattered, row_loop, fori, argmax_read,
        stored, argmax_rows, broadcast_take)


def products(x):
    return np.sum(np.cumprod(x, axis=0) ** 2)       # a linear recurrence: NumPy code of its own


def triangular(x):
    return np.sum(np.linalg.qr(x[:3] + 2.0 * np.eye(3))[1] ** 2)


def determinant(x):
    return np.linalg.det(x[:3] + 2.0 * np.eye(3)) ** 2    # a function of NumPy's Dask lacks


# rows whose impl is NumPy code of wengert's own (``DefinedCall``, the adjugate's choice) or a
# function of NumPy's Dask lacks (which Dask computes): one task of Dask's graph
def solved(x):
    a = x[:3] + 2.0 * np.eye(3)
    return np.sum(np.linalg.inv(a) ** 2) + np.sum(np.linalg.solve(a, x[3]))  # Dask's: square chunks


def correlated(x):
    # np.convolve and np.correlate: NumPy's functions Dask lacks (once: 6 blocks computed
    # while the derivative was made, in both engines)
    return np.sum(np.sin(np.correlate(x[0], x[1], "full"))) + np.sum(np.convolve(x[2], x[3]) ** 2)


TASKS = (products, triangular, determinant, solved, correlated)


def _x():
    return np.random.default_rng(5).uniform(0.1, 0.9, size=(6, 3))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun", FUNS + TASKS, ids=lambda f: f.__name__)
def test_dask_derivative_is_lazy_and_equals_numpys(fun, engine):
    x = _x()
    probe = Probe(x, (2, 2))
    name = probe.array.name
    g = wg.grad(fun, engine=engine)(probe.array)
    assert isinstance(g, da.Array) and probe.count == 0
    want = wg.grad(fun, engine=engine)(x)
    assert_close(g.compute(), want, rtol=1e-12)
    assert probe.count > 0 and probe.array.name == name
    # NumPy's gradient against finite differences, along a direction
    t = np.random.default_rng(6).normal(size=x.shape)
    assert_close(np.sum(want * t), fd_jvp(fun, (x,), (t,)), rtol=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fun", FUNS, ids=lambda f: f.__name__)
def test_strict_derivative_stays_in_its_library(fun, engine):
    """Index arrays, constants and loop buffers meet a ``Strict`` input as its own arrays."""
    x = _x()
    sx = Strict(x.copy())
    g = wg.grad(fun, engine=engine)(sx)
    assert isinstance(g, Strict)
    assert_close(g.get(), wg.grad(fun, engine=engine)(x), rtol=1e-12)
    assert sx.get().tobytes() == x.tobytes()


@pytest.mark.parametrize("engine", ENGINES)
def test_dask_vjp_and_jvp_of_a_sort_agree(engine):
    """Forward against reverse (the dot-product test) on Dask: the jvp gathers the tangent at
    the sort's positions, the vjp adds the cotangent back at them."""
    x, t = _x(), np.random.default_rng(7).normal(size=(6, 3))
    xd = da.from_array(x, chunks=(2, 2))
    _, pullback = wg.vjp(lambda v: np.sort(v, axis=0) * RANKS, xd, engine=engine)
    ct = np.random.default_rng(8).normal(size=(6, 3))
    back, = pullback(da.from_array(ct, chunks=(3, 3)))
    _, fwd = wg.jvp(lambda v: np.sort(v, axis=0) * RANKS, (xd,), (da.from_array(t, chunks=2),),
                    engine=engine)
    assert isinstance(back, da.Array) and isinstance(fwd, da.Array)
    assert_close(float(np.sum(fwd * ct).compute()), float(np.sum(back * t).compute()),
                 rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", ["jacfwd", "jacrev", "hessian"])
def test_dask_jacobians_and_hessians_of_a_sort(how, engine):
    """Batched gathers and scatters at the sort's positions (jacfwd's identity seed, an int
    index made ``like=`` the input: Dask's ``np.zeros(shape, dtype, like=)`` once dropped the
    dtype, and the scatter failed when computed)."""
    def fun(x):
        return np.sort(x, axis=0) ** 3 if how != "hessian" else np.sum(np.sort(x, axis=0) ** 3)
    x = _x()
    probe = Probe(x, (2, 2))
    got = getattr(wg, how)(fun, engine=engine)(probe.array)
    assert isinstance(got, da.Array) and probe.count == 0
    assert_close(got.compute(), getattr(wg, how)(fun, engine=engine)(x), rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dask_sort_derivative_runs_per_block(engine):
    """The sort's argsort and its gather and scatter run on blocks (the sorted axis in one
    chunk), not as one task holding the whole array (``core.libraries``' fallback)."""
    x = np.random.default_rng(9).normal(size=(8, 12))
    xd = da.from_array(x, chunks=(2, 3))
    g = wg.grad(lambda v: np.sum(np.sort(v, axis=1) * np.arange(12.0)), engine=engine)(xd)
    names = {k[0] if isinstance(k, tuple) else k for k in dict(g.__dask_graph__())}
    assert not any("numpy-" in str(n) and str(n).startswith(("_getitem", "_add_at"))
                   for n in names)
    assert g.numblocks[0] == 4          # the rows keep their chunks
    assert_close(g.compute(), wg.grad(lambda v: np.sum(np.sort(v, axis=1) * np.arange(12.0)))(x),
                 rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dask_gather_gradient_adds_per_chunk_of_rows(engine):
    """The gradient of ``x[rows]`` (an embedding lookup: repeated rows) adds each chunk of
    rows in a task of its own, not the whole array in one."""
    x = np.random.default_rng(10).normal(size=(40, 3))
    rows = np.random.default_rng(11).integers(-40, 40, size=60)
    xd = da.from_array(x, chunks=(10, 3))

    def loss(v):
        return np.sum(np.tanh(v[rows]) * np.arange(3.0))
    g = wg.grad(loss, engine=engine)(xd)
    tasks = [k for k in dict(g.__dask_graph__()) if str(k[0] if isinstance(k, tuple) else k)
             .startswith("_add_at_numpy")]
    assert g.numblocks[0] >= 4 and 1 < len(tasks) <= g.numblocks[0]
    assert_close(g.compute(), wg.grad(loss, engine=engine)(x), rtol=1e-12)


# what does not run on a CuPy-like library: nothing of the corpus (cumprod's linear
# recurrence, NumPy code of wengert's own, is written for any library: ``DefinedCall.any_library``)
NOT_ON_STRICT = ()


def _strict_run(name, engine, x0):
    def loss(x):
        return np.sum(call(np, name, x))
    try:
        g = wg.grad(loss, engine=engine)(Strict(x0.copy()))
    except TypeError:   # a conversion to NumPy the library refuses
        return False
    return isinstance(g, Strict) and np.allclose(g.get(), wg.grad(loss, engine=engine)(x0),
                                                 rtol=1e-12, atol=1e-12)


def test_the_corpus_runs_on_strict_arrays():
    """Every function of ``array_library_cases`` but ``NOT_ON_STRICT`` differentiates on
    ``Strict`` arrays in both engines, its gradient a ``Strict`` equal to NumPy's."""
    x0 = np.random.default_rng(1).uniform(0.1, 0.9, size=(3, 4))
    fails = [n for n in NAMES + NUMPY_ONLY if not all(_strict_run(n, e, x0) for e in ENGINES)]
    assert fails == list(NOT_ON_STRICT)


def _unique_sum(x):
    return np.sum(np.unique(x) ** 2)        # the line named


@pytest.mark.parametrize("engine", ENGINES)
def test_a_length_known_from_dask_values_raises_naming_the_line(engine):
    """``np.unique`` of a Dask array has a length known only when computed: a typed error
    naming the user's line (once a raw TypeError from Dask's unique or an int() of None)."""
    x = da.from_array(_x(), chunks=(2, 2))
    with pytest.raises(wg.ConcretizationError, match="length of") as err:
        wg.grad(_unique_sum, engine=engine)(x)
    assert f"test_array_library_loops.py:{_unique_sum.__code__.co_firstlineno + 1}" in str(err.value)


def _graph_size(engine, fun, rows):
    x = np.random.default_rng(12).normal(size=(rows, 6))
    g = wg.grad(fun, engine=engine)(da.from_array(x, chunks=(4, 3)))
    return len(dict(g.__dask_graph__()))


@pytest.mark.parametrize("engine", ENGINES)
def test_the_graph_of_a_sort_or_a_gather_gradient_grows_linearly_with_the_chunks(engine):
    """The tasks grow by the same number per chunk added (the sort's blocks, the scatter's
    task per chunk of rows): the graph's size is linear in the chunks, as issue 30 asks."""
    rows = np.array([0, 3, 3, 7, 1, 6, 2])

    def loss(v):
        k = v.shape[0]
        return np.sum(np.sort(v, axis=1) * np.arange(6.0)) + np.sum(v[(rows * k) // 8] ** 2)
    n32, n64, n128 = (_graph_size(engine, loss, k) for k in (32, 64, 128))
    assert 1.5 < (n128 - n64) / (n64 - n32) < 2.5     # a slope per chunk, not a square


def _closure(a):
    def loss(w):
        return np.sum(np.sort(a * w, axis=0) * RANKS) + np.sum(a[IDX] @ w)
    return loss


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dask_array_read_from_a_closure_stays_lazy(engine):
    x, w = _x(), np.array([0.5, -1.0, 2.0])
    probe = Probe(x, (2, 2))
    f = wg.grad(_closure(probe.array), engine=engine)
    g = f(w)
    assert isinstance(g, da.Array) and probe.count == 0
    assert_close(g.compute(), wg.grad(_closure(x), engine=engine)(w), rtol=1e-12)
    if engine == "source":      # read at each call from its cell, not a constant of the code
        assert "cell_a.cell_contents" in f.source and "constant dask" not in f.source.lower()
        assert "like=cell_a.cell_contents" in f.source


GLOBAL = _x()


def _global_loss(w):
    return np.sum(np.sort(GLOBAL * w, axis=0) * RANKS)


def test_a_global_turned_dask_gets_dask_code_and_stays_lazy():
    """The code made for a NumPy global is NumPy's; the same function after the global became
    a Dask array makes code of its own (its type is a guard), lazy; NumPy's again after."""
    global GLOBAL
    w = np.array([0.5, -1.0, 2.0])
    x = GLOBAL
    f = wg.grad(_global_loss, engine="source")
    want = f(w)
    numpy_code = f.source
    probe = Probe(x, (3, 3))
    GLOBAL = probe.array
    try:
        g = f(w)
        assert isinstance(g, da.Array) and probe.count == 0 and "like=" in f.source
        assert_close(g.compute(), want, rtol=1e-12)
    finally:
        GLOBAL = x
    f(w)
    assert f.source == numpy_code and "like=" not in numpy_code


def test_numpy_code_of_a_sort_and_a_scatter_is_unchanged():
    """NumPy's inputs keep NumPy's calls (no ``core.libraries`` helper)."""
    for fun in (sorted_rows, gathered, partitioned):
        f = wg.grad(fun, engine="source")
        f(_x())
        assert "core.libraries" not in f.source and "like=" not in f.source
