"""``wg.vmap`` (``wengert/api/vmap.py``): JAX's meanings of ``in_axes``, ``out_axes`` and
``axis_size`` (pytree prefixes, None, negative axes, keyword arguments), the typed errors,
every composition with the other transforms in both engines against a loop over the batch,
per-example gradients (the documented example) and their one vectorised code, the numba
backend, pickling. The rows' batch rules are checked one by one in
``primitives/test_rules.py``, the library's functions in ``numpy/test_functions.py``.
"""
import pickle
import warnings

import numpy as np
import pytest

import wengert as wg

import vmap_cases as V
from batch_checks import stacked
from checks import BATCH_RTOL_F64, assert_close, fd_jacobian

ENGINES = ["trace", "source"]
RNG = np.random.default_rng(26)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))


def loop(fn, args, in_axes, size):
    return stacked([fn(*[a if ax is None else np.take(a, b, axis=ax)
                         for a, ax in zip(args, in_axes)]) for b in range(size)])


# --- in_axes, out_axes, axis_size ------------------------------------------------------
AXES_CASES = {       # in_axes: (x, y) batched along those axes
    "0": (0, X, Y), "(0, 0)": ((0, 0), X, Y), "(1, 0)": ((1, 0), X.T, Y),
    "(-1, None)": ((-1, None), X.T, Y[0]), "(None, 1)": ((None, 1), X[0], Y.T),
    "[0, -2]": ([0, -2], X, Y)}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(AXES_CASES))
def test_in_axes_pick_the_batch_axis_of_each_argument(name, engine):
    in_axes, x, y = AXES_CASES[name]
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes, in_axes)
    got = wg.vmap(V.pair, in_axes=in_axes, engine=engine)(x, y)
    assert_close(got, loop(V.pair, (x, y), axes, 4), BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_axes", [0, 1, -1], ids=str)
def test_out_axes_place_the_batch_axis(out_axes, engine):
    got = wg.vmap(V.elementwise, out_axes=out_axes, engine=engine)(X)
    want = np.moveaxis(np.sin(X) * X, 0, out_axes)
    assert_close(got, want, BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
def test_pytree_prefixes_and_none_in_axes_and_out_axes(engine):
    def fn(d, c):
        return {"s": d["a"] * c, "t": np.sum(d["b"])}, c * 2.0
    d = {"a": X, "b": Y[0]}
    out = wg.vmap(fn, in_axes=({"a": 0, "b": None}, None), out_axes=({"s": 1, "t": 0}, None),
                  engine=engine)(d, 3.0)
    assert_close(out[0]["s"], (X * 3.0).T, BATCH_RTOL_F64)
    assert_close(out[0]["t"], np.full(4, np.sum(Y[0])), BATCH_RTOL_F64)
    assert out[1] == 6.0


@pytest.mark.parametrize("engine", ENGINES)
def test_keyword_arguments_are_batched_along_their_first_axis(engine):
    got = wg.vmap(V.pair, in_axes=(None,), engine=engine)(X[0], y=Y)
    assert_close(got, loop(V.pair, (X[0], Y), (None, 0), 4), BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
def test_axis_size_batches_a_function_of_no_batched_argument(engine):
    got = wg.vmap(V.elementwise, in_axes=None, axis_size=5, engine=engine)(X[0])
    assert got.shape == (5, 3)
    assert_close(got, np.broadcast_to(np.sin(X[0]) * X[0], (5, 3)), BATCH_RTOL_F64)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_output_the_batch_does_not_reach_is_broadcast(engine):
    got = wg.vmap(lambda x, y: (x * 2.0, np.sum(y)), in_axes=(0, None), engine="trace")(X, Y)
    assert got[1].shape == (4,) and np.all(got[1] == np.sum(Y))


@pytest.mark.parametrize("call, match", [
    (lambda: wg.vmap(V.pair)(X, Y[:3]), "different lengths"),
    (lambda: wg.vmap(V.pair, in_axes=(0,))(X, Y), "1 entries for 2 positional"),
    (lambda: wg.vmap(V.pair, in_axes=(2, 0))(X, Y), "out of range"),
    (lambda: wg.vmap(V.pair)(1.5, Y), "only an array"),
    (lambda: wg.vmap(V.pair, in_axes=None)(X, Y), "axis_size"),
    (lambda: wg.vmap(V.elementwise, out_axes=None)(X), "out_axes is None"),
    (lambda: wg.vmap(V.pair, in_axes="0"), "each entry is an int"),
    (lambda: wg.vmap(V.pair, in_axes=(0, 1.5)), "each entry is an int"),
    (lambda: wg.vmap(V.elementwise, axis_size=-1), "axis_size"),
    (lambda: wg.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": X}), "does not match"),
], ids=["sizes", "in_axes-length", "axis-range", "scalar", "nothing-batched", "out-none",
        "in_axes-type", "axis-type", "axis_size", "prefix"])
def test_bad_axes_are_typed_errors_that_say_what_to_do(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# --- compositions, both engines --------------------------------------------------------
def _compositions(engine):
    x0 = X[0]
    return {
        "vmap(grad)": (lambda: wg.vmap(wg.grad(V.scalar_of, engine=engine), engine=engine)(X),
                       lambda: np.stack([wg.grad(V.scalar_of)(x) for x in X])),
        "grad(vmap)": (
            lambda: wg.grad(lambda p: wg.vmap(V.pair, in_axes=(0, None),
                                              engine=engine)(X, p).sum(), engine=engine)(Y[0]),
            lambda: wg.grad(lambda p: sum(V.pair(x, p).sum() for x in X))(Y[0])),
        "jacfwd(vmap)": (
            lambda: wg.jacfwd(wg.vmap(V.elementwise, engine=engine), engine=engine)(X),
            lambda: wg.jacfwd(V.elementwise)(X)),
        "jacrev(vmap)": (
            lambda: wg.jacrev(wg.vmap(V.scalar_of, engine=engine), engine=engine)(X),
            lambda: wg.jacrev(lambda X: np.stack([V.scalar_of(x) for x in X]))(X)),
        "vmap(vmap)": (
            lambda: wg.vmap(wg.vmap(V.scalar_of, engine=engine), engine=engine)(
                np.stack([X, Y])),
            lambda: np.array([[V.scalar_of(x) for x in Z] for Z in (X, Y)])),
        "vmap(vmap, in_axes=1)": (
            lambda: wg.vmap(wg.vmap(V.scalar_of, in_axes=1, engine=engine), engine=engine)(
                np.stack([X.T, Y.T])),
            lambda: np.array([[V.scalar_of(x) for x in Z] for Z in (X, Y)])),
        "vmap(jvp)": (
            lambda: wg.vmap(lambda x, t: wg.jvp(V.scalar_of, (x,), (t,), engine=engine)[1],
                            engine=engine)(X, Y),
            lambda: np.array([wg.jvp(V.scalar_of, (x,), (t,))[1] for x, t in zip(X, Y)])),
        "vmap(jvp) of tangents": (
            lambda: wg.vmap(lambda t: wg.jvp(V.scalar_of, (x0,), (t,), engine=engine)[1],
                            engine=engine)(Y),
            lambda: np.array([wg.jvp(V.scalar_of, (x0,), (t,))[1] for t in Y])),
        "vmap(hessian)": (
            lambda: wg.vmap(wg.hessian(V.scalar_of, engine=engine), engine=engine)(X),
            lambda: np.stack([wg.hessian(V.scalar_of)(x) for x in X])),
        "grad(grad(vmap))": (
            lambda: wg.grad(lambda p: wg.grad(lambda q: wg.vmap(
                V.pair, in_axes=(0, None), engine=engine)(X, q).sum(),
                engine=engine)(p).sum(), engine=engine)(Y[0]),
            lambda: wg.grad(lambda p: wg.grad(lambda q: sum(
                V.pair(x, q).sum() for x in X))(p).sum())(Y[0])),
    }


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(_compositions("trace")))
def test_vmap_composes_with_every_transform_in_any_order(name, engine):
    got, want = _compositions(engine)[name]
    assert_close(got(), want(), 1e-10, what=f"{name} ({engine})")


def test_vmap_of_a_pullback_batches_its_cotangents():
    _, pullback = wg.vjp(V.elementwise, X[0])
    got, = wg.vmap(pullback)(Y)
    assert_close(got, np.stack([pullback(y)[0] for y in Y]), BATCH_RTOL_F64)


# --- per-example gradients ---------------------------------------------------------------
def _mlp(rng, d=5, h=7, o=2, n=16):
    params = ((rng.standard_normal((d, h)), rng.standard_normal(h)),
              (rng.standard_normal((h, o)), rng.standard_normal(o)))
    return params, rng.standard_normal((n, d)), rng.standard_normal((n, o))


@pytest.mark.parametrize("engine", ENGINES)
def test_per_example_gradients_of_an_mlp_are_a_loop_of_gradients(engine):
    params, x, y = _mlp(np.random.default_rng(0))
    per_example = wg.vmap(wg.grad(V.mlp_loss, engine=engine), in_axes=(None, 0, 0),
                          engine=engine)
    got = per_example(params, x, y)
    want = stacked([wg.grad(V.mlp_loss)(params, x[b], y[b]) for b in range(len(x))])
    assert_close(got, want, 1e-10)
    # the mean of the per-example gradients is the gradient of the mean loss
    mean = wg.grad(lambda p: wg.vmap(V.mlp_loss, in_axes=(None, 0, 0))(p, x, y).mean())(params)
    assert_close(wg.tree.map(lambda g: g.mean(axis=0), got), mean, 1e-10)


def test_per_example_gradients_are_one_vectorised_code():
    """The generated code of ``vmap(grad(loss))`` is straight-line NumPy over the batch:
    no loop over the examples, each product one ``matmul`` of the batch."""
    params, x, y = _mlp(np.random.default_rng(1))
    per_example = wg.vmap(wg.grad(V.mlp_loss), in_axes=(None, 0, 0))
    per_example(params, x, y)
    src = per_example.source
    assert "for " not in src and "while " not in src, src
    assert src.count("matmul(") + src.count(" @ ") >= 2, src


@pytest.mark.numba
def test_per_example_gradients_compile_with_numba():
    params, x, y = _mlp(np.random.default_rng(2))
    numba = wg.vmap(wg.grad(V.mlp_loss, backend="numba", fallback=False), in_axes=(None, 0, 0),
                    backend="numba", fallback=False)
    python = wg.vmap(wg.grad(V.mlp_loss), in_axes=(None, 0, 0))
    assert_close(numba(params, x, y), python(params, x, y), 1e-12)
    w = np.random.default_rng(3).standard_normal(5)
    lab = (x[:, 0] > 0).astype(float)
    got = wg.vmap(wg.grad(V.logistic_loss), in_axes=(None, 0, 0), backend="numba",
                  fallback=False)(w, x, lab)
    assert_close(got, wg.vmap(wg.grad(V.logistic_loss), in_axes=(None, 0, 0))(w, x, lab),
                 1e-12)


# --- the trace engine's Python control flow, pickling ------------------------------------
def test_trace_engine_runs_python_if_once_per_example_with_a_warning():
    x = np.array([4.0, -1.0, 9.0])
    with pytest.warns(wg.core.errors.LoopedBatchWarning, match="once per example"):
        got = wg.vmap(V.abs_or_root, engine="trace")(x)
    assert_close(got, np.array([2.0, 1.0, 3.0]), BATCH_RTOL_F64)


def test_the_source_engine_batches_the_same_if_without_a_loop():
    x = np.array([4.0, -1.0, 9.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batched = wg.vmap(V.safe_sqrt)
        got = batched(x)
    assert_close(got, np.array([2.0, 2.0, 3.0]), BATCH_RTOL_F64)
    assert "np.where" in batched.source and "for " not in batched.source


def test_a_vmap_pickles_as_its_recipe():
    batched = wg.vmap(wg.grad(V.mlp_loss), in_axes=(None, 0, 0))
    again = pickle.loads(pickle.dumps(batched))
    params, x, y = _mlp(np.random.default_rng(4))
    assert_close(again(params, x, y), batched(params, x, y), 0.0)


def test_a_vmap_with_a_dict_prefix_pickles_with_its_axes():
    batched = wg.vmap(V.pair, in_axes=({"a": 0}["a"], None))
    again = pickle.loads(pickle.dumps(batched))
    assert_close(again(X, Y[0]), batched(X, Y[0]), 0.0)
    by_dict = wg.vmap(V.dict_pair, in_axes=({"x": 0, "y": None},))
    again = pickle.loads(pickle.dumps(by_dict))
    d = {"x": X, "y": Y[0]}
    assert_close(again(d), by_dict(d), 0.0)


def test_a_call_made_at_run_time_runs_once_per_example_in_order():
    """``rng.normal(x)`` with ``x`` batched: one draw per example, in the order a loop over
    the examples makes them (``host_call``'s rule, ``PER_LANE``)."""
    xs = np.array([0.0, 10.0, -5.0])
    batched = wg.vmap(V.noisy, engine="source")
    batched(xs)                                     # the code is generated at this call
    V.RNG_FOR_DRAWS = np.random.default_rng(1)
    got = batched(xs)
    again = np.random.default_rng(1)
    want = np.array([again.normal(x, 1.0) + x for x in xs])
    assert_close(got, want, 0.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_values_of_a_run_time_length_under_a_batch(engine):
    """``x[x > 0]`` with ``x`` shared by the batch and ``w`` batched: the batched function,
    its per-example gradients in ``x`` (whose transpose broadcasts a batched cotangent to a
    length known only at run time: ``broadcast_like`` with a shared ``like`` once fell back
    to a refusal) and the gradient of the batch's sum, against loops over the batch."""
    W, x = np.array([1.0, 2.0, -3.0]), np.array([0.5, -1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)         # no fallback to the trace engine
        got = wg.vmap(V.masked_sums, in_axes=(0, None), engine=engine)(W, x)
        grads = wg.vmap(wg.grad(V.masked_sums, argnums=1, engine=engine), in_axes=(0, None),
                        engine=engine)(W, x)
    assert_close(got, np.array([V.masked_sums(w, x) for w in W]), 1e-12)
    want = np.array([wg.grad(V.masked_sums, argnums=1)(w, x) for w in W])
    assert_close(grads, want, 1e-12)
    fd = [fd_jacobian(lambda x, w=w: V.masked_sums(w, x), (x,))[0] for w in W]
    assert_close(grads, np.array(fd), 1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_result_whose_length_depends_on_the_values_is_refused(engine):
    """``np.nonzero``/``np.unique`` on a batch: each example may have another length, so
    no batch of them has one shape: a typed error that says what to write instead."""
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]])
    with pytest.raises(wg.ShapeMismatchError, match="examples of a batch"):
        wg.vmap(lambda x: np.nonzero(x)[0], engine=engine)(X)
    with pytest.raises(wg.ShapeMismatchError, match="np.where"):
        wg.vmap(lambda x: np.sum(np.unique(x)), engine=engine)(X)


class _Recorder:
    def __init__(self):
        self.last = None


_REC = _Recorder()


def _records(x):
    _REC.last = x
    return np.sum(x ** 2)


def test_an_object_written_under_vmap_of_grad_holds_plain_values_after():
    """The trace engine's vmap of grad of a function that stores its argument on a global
    object: afterwards the object holds the batch's values (a NumPy array, one example per
    row), never a tracer of the finished transform (it once held a BatchTracer: the
    settling of written objects did not reach through grad to the function's globals)."""
    X = np.arange(6.0).reshape(3, 2)
    g = wg.vmap(wg.grad(_records, engine="trace"), engine="trace")(X)
    np.testing.assert_array_equal(g, 2 * X)
    assert type(_REC.last) is np.ndarray
    np.testing.assert_array_equal(_REC.last, X)


class _Model:
    def __init__(self):
        self.nfev, self.cache, self.total = 0, None, 0.0

    def loss(self, x):
        self.nfev += 1
        self.cache = x * 2.0
        self.total += np.sum(x)
        return np.sum(x ** 2) + np.sum(self.cache)


_VMAPPED = {
    "vmap": lambda m, e: wg.vmap(m.loss, engine=e),
    "vmap_grad": lambda m, e: wg.vmap(wg.grad(m.loss, engine=e), engine=e),
    "grad_vmap": lambda m, e: wg.grad(lambda x: np.sum(wg.vmap(m.loss, engine=e)(x)), engine=e),
}


@pytest.mark.parametrize("how", sorted(_VMAPPED))
@pytest.mark.parametrize("engine", ENGINES)
def test_an_attribute_written_under_vmap_holds_the_batch_in_both_engines(engine, how):
    """Issue 25: the engines once differed on ``self.cache = x`` under vmap (the trace
    engine stored the batch, the source engine's code wrote each example in turn, so the
    last one stayed; and vmap of grad of a method left a BatchTracer on its object). Both
    now make one write per call of the vmapped function, of the batch: the examples'
    values along the first axis, as vmap returns its outputs; ``+=`` of a counter happens
    once, ``+=`` of a batched value adds the batch."""
    X = np.arange(6.0).reshape(3, 2)
    m = _Model()
    _VMAPPED[how](m, engine)(X)
    assert m.nfev == 1
    assert type(m.cache) is np.ndarray and type(m.total) is np.ndarray
    np.testing.assert_array_equal(m.cache, 2.0 * X)
    np.testing.assert_array_equal(m.total, X.sum(axis=1))


@pytest.mark.parametrize("engine", ENGINES)
def test_an_attribute_written_under_vmap_of_vmap_holds_both_batch_axes(engine):
    X = np.arange(12.0).reshape(2, 3, 2)
    m = _Model()
    wg.vmap(wg.vmap(m.loss, engine=engine), engine=engine)(X)
    assert m.nfev == 1
    np.testing.assert_array_equal(m.cache, 2.0 * X)
