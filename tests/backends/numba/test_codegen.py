"""``backend="numba"`` (``wengert/backends/numba/codegen.py``): the source
engine's code compiled by numba.

Every program of the corpus (``source_corpus.CASES``), the loops of
``lower_cases.py``, ``control_cases.py`` and ``bench/scaling_programs.py``
gives, under the numba backend, what the Python backend gives, to rounding
(``rtol("exact")``: the same operations, sums perhaps in another order), on
grad, jvp and vjp (to float32 rounding on float32 values, whose operations
numba may round differently); and never writes the caller's arrays. A construct numba
cannot compile falls back to the Python backend with exactly one warning
per function (the corpus's list of them is ``FALLS_BACK``, so a regression
in what compiles shows), and raises with ``fallback=False``. ``wg.jit``
compiles the plain function. Without numba, ``backend="numba"`` raises a
typed error saying how to install it.

Two constructs that fell back: float32 loops (numba typed a Python number as
float64, so ``x * 0.5`` was a float64 array and ``x[i] > 0.1`` compared in
float64: loops carrying a float32 array could not be typed, and a float32
threshold branched the other way from NumPy 2, a wrong result with no
error), and np.prod's gradient at zeros and over axes.

numba compiles take 0.1-1 s each (2.5 minutes in all on 2 cores with an
empty cache, 40 s with it), so these tests carry the ``numba`` mark:
``make test-numba`` runs them (``.ci/run`` calls it); ``make test`` leaves
them out (pyproject's ``addopts``). The compiled code is cached on disk
(``numba.codegen.cache_dir``), so a second run is quicker.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import wengert as wg
from bench import scaling_programs as SP

import lower_cases as L
from checks import assert_close, rtol
from control_cases import STORING_LOOPS, nested_loop
from numba_checks import agree, closure, copies, fallbacks, unchanged
from source_corpus import CASES, CASE_IDS, SCALAR_IDS


pytestmark = pytest.mark.numba


# corpus cases whose code numba cannot compile (each says why in its warning): none now.
# (Values whose length varies from one iteration to the next, an inner loop's stored by an
# outer one, were refused; they are a list of arrays: ``test_ragged_stacks_are_lists_of_arrays``.)
FALLS_BACK = {}


# --- the corpus ------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_corpus_agrees_with_the_python_backend(case):
    # reverse mode by grad where the output is a scalar, else by vjp (each
    # compile costs; the loops below run all three)
    scalar = case.id in SCALAR_IDS
    fell = agree(case.fn, case.fresh(), case.argnums, scalar, case.id,
                  ("grad", "jvp") if scalar else ("jvp", "vjp"))
    if case.id not in FALLS_BACK:
        assert not fell, [str(w.message) for w in fell]
        return
    # one warning per function and process: another case of the function may
    # have given it; fallback=False says what numba refused, every time
    assert all(FALLS_BACK[case.id] in str(w.message) for w in fell)
    args = case.fresh()
    dyn = case.dyn(args)
    part = closure(case.fn, args[len(case.nums):])
    refused = []
    for run in (lambda: wg.grad(case.fn, case.argnums, engine="source", backend="numba",
                                fallback=False)(*args) if scalar else None,
                lambda: wg.jvp(part, dyn, dyn, engine="source", backend="numba",
                               fallback=False)):
        try:
            run()
        except wg.NumbaCompileError as err:
            refused.append(str(err))
    assert any(FALLS_BACK[case.id] in r for r in refused), refused


# --- loops ----------------------------------------------------------------------------
_LOWER = L.ARGS(9, np.random.default_rng(2))


@pytest.mark.parametrize("name", sorted(_LOWER))
def test_lower_cases_agree_with_the_python_backend(name):
    args, argnums = _LOWER[name]
    fell = agree(getattr(L, name), args, argnums, True, name)
    assert not fell, [str(w.message) for w in fell]


_CONTROL = {name: (fn, x) for name, (fn, x) in STORING_LOOPS.items()}


@pytest.mark.parametrize("n", [0, 1, 9])
@pytest.mark.parametrize("name", sorted(_CONTROL))
def test_control_loops_agree_with_the_python_backend(name, n):
    fn, x = _CONTROL[name]
    fell = agree(fn, (x, n), 0, True, f"{name} n={n}")
    assert not fell, [str(w.message) for w in fell]


@pytest.mark.parametrize("prog", SP.PROGRAMS, ids=[p.name for p in SP.PROGRAMS])
def test_scaling_programs_agree_with_the_python_backend(prog):
    args = prog.inputs(50, np.random.default_rng(3))
    fell = agree(prog.make(np), args, prog.argnums, True, prog.name)
    assert not fell, [str(w.message) for w in fell]


# --- fallback ---------------------------------------------------------------------------
def r_of_qr(x):
    # QR's derivative reads its factors from NumPy code of wengert's own (a row's
    # ``DefinedCall`` with no numba twin), which numba's subset cannot run (the
    # fallback warns once per function)
    return np.sum(np.linalg.qr(x)[1] ** 2)


def test_fallback_warns_once_and_gives_the_python_backends_values():
    x = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.4, 0.1, 1.2]])
    before = x.copy()
    with pytest.raises(wg.NumbaCompileError, match="NumPy code of a row") as err:
        wg.grad(r_of_qr, engine="source", backend="numba", fallback=False)(x)
    assert "test_codegen.py" in str(err.value) and err.value.construct
    want = wg.grad(r_of_qr, engine="source")(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        g = wg.grad(r_of_qr, engine="source", backend="numba")
        got = [g(x), g(x * 1.5), wg.grad(r_of_qr, engine="source", backend="numba")(x)]
    fell = fallbacks(seen)
    assert len(fell) == 1, [str(w.message) for w in fell]
    message = str(fell[0].message)
    assert "r_of_qr" in message and "NumPy code of a row" in message
    assert fell[0].filename.endswith("test_codegen.py")
    assert_close(got[0], want, rtol("exact", want))
    assert_close(got[2], want, rtol("exact", want))
    assert_close(got[1], wg.grad(r_of_qr, engine="source")(x * 1.5), rtol("exact", want))
    np.testing.assert_array_equal(x, before)


def test_numba_typing_errors_fall_back_too():
    """A construct numba's typing refuses at the first call (not known up
    front): the same one warning, the Python backend's values."""
    # a sort along an axis: its gradient's np.argsort(x, axis=0), which numba's typing
    # refuses (det's gradient was the example here until its emit wrote numba's subset)
    a = np.eye(3) + np.arange(9.0).reshape(3, 3) * 0.1
    with pytest.raises(wg.NumbaCompileError, match="numba: ") as err:
        wg.grad(sorted_columns, engine="source", backend="numba", fallback=False)(a)
    assert "test_codegen.py" in str(err.value)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = wg.grad(sorted_columns, engine="source", backend="numba")(a)
    assert len(fallbacks(seen)) == 1
    want = wg.grad(sorted_columns, engine="source")(a)
    assert_close(got, want, rtol("exact", want))


def sorted_columns(a):
    return np.sum(np.sort(a, axis=0) * a)


# --- wg.jit, reuse, what is recorded ----------------------------------------------------
@pytest.mark.parametrize("name", sorted(_LOWER))
def test_jit_agrees_with_the_plain_function(name):
    args, _ = _LOWER[name]
    fn = getattr(L, name)
    before = copies(args)
    jitted = wg.jit(fn)
    got = jitted(*args)
    unchanged(args, before)        # (the plain function may write its arguments)
    want = fn(*copies(args))
    assert_close(got, want, rtol("exact", want), what=f"jit {name}")
    assert f"def {name}_jit(" in jitted.source
    assert type(jitted.last.fn).__name__ == "NumbaFunction"


def test_code_is_shared_per_backend_and_compile_time_is_recorded():
    x = np.linspace(-1.0, 1.0, 7)
    python = wg.grad(L.branchy, engine="source")
    first = wg.grad(L.branchy, engine="source", backend="numba")
    second = wg.grad(L.branchy, engine="source", backend="numba")
    assert_close(first(x), python(x), rtol("exact", x))
    assert_close(second(x * 2.0), python(x * 2.0), rtol("exact", x))
    assert first.codes is second.codes and first.codes is not python.codes
    assert first.generations == 1
    fn = first.last.fn
    assert fn.compile_seconds > 0.0
    assert fn.cached and os.path.isfile(fn.filename)
    with open(fn.filename) as fh:
        assert fh.read() == first.source


def test_hessian_and_jacobians_take_the_backend():
    x = np.array([0.4, -0.3, 0.8])
    for how in (wg.hessian, wg.jacrev, wg.jacfwd):
        f = L.branchy if how is wg.hessian else nested_loop
        args = (x,) if how is wg.hessian else (x, 2)
        want = how(f, engine="source")(*args)
        got = how(f, engine="source", backend="numba")(*args)
        assert_close(got, want, rtol("exact", want), what=how.__name__)


def with_try(x):
    with open(__file__):  # outside the source engine's language: engine="auto" traces it
        y = np.sin(x)
    return np.sum(y * 2.0)


def test_auto_falling_back_to_trace_says_numba_compiles_nothing():
    x = np.array([0.3, 0.5])
    with pytest.warns(UserWarning, match="backend='numba' compiles nothing"):
        got = wg.grad(with_try, engine="auto", backend="numba")(x)
    assert_close(got, 2.0 * np.cos(x), rtol("exact", x))


# --- values outside the function: parameters of the compiled code ----------------
GLOBAL_W = np.linspace(0.5, 1.5, 5)


def _closure_cases():
    """(name, function of x, a change to what it closes over) for each kind of
    value outside the function the compiled code reads at each call."""
    arr = np.linspace(-1.0, 2.0, 5)
    mat = np.arange(10.0).reshape(2, 5) / 7.0

    def of_array(x):
        return np.sum(np.sin(x * arr))

    def of_matrix(x):
        return np.sum(mat @ np.cos(x))

    scale = 1.7

    def of_float(x):
        return np.sum(np.exp(x) * scale)

    power = 3

    def of_int(x):
        return np.sum(x ** power)

    def outer():
        inner_arr = arr * 2.0

        def middle():
            def innermost(x):
                return np.sum(np.tanh(x * inner_arr) * scale)
            return innermost
        return middle(), inner_arr

    nested, inner_arr = outer()

    def of_global(x):
        return np.sum(GLOBAL_W * x * x)

    def rebind():
        nonlocal scale, power
        scale, power = -0.6, 2

    def change_arrays():
        arr[:] = arr[::-1] * 1.5
        mat[:] = -mat
        inner_arr[:] += 0.25
        GLOBAL_W[:] = GLOBAL_W * 2.0

    return [("array", of_array, change_arrays), ("matrix", of_matrix, change_arrays),
            ("float", of_float, rebind), ("int", of_int, rebind),
            ("nested", nested, change_arrays), ("global", of_global, change_arrays)]


@pytest.mark.parametrize("which", range(6), ids=["array", "matrix", "float", "int", "nested",
                                                  "global"])
def test_closures_over_arrays_and_numbers_compile_and_are_read_at_each_call(which):
    """A closure cell or global that is an array or a number is a parameter of
    the compiled code (no fallback), read at each call: after the value
    changes, numba gives what the Python backend gives."""
    saved = GLOBAL_W.copy()
    try:
        name, f, change = _closure_cases()[which]
        x = np.linspace(0.1, 0.9, 5)
        python = wg.grad(f, engine="source")
        with warnings.catch_warnings():
            warnings.simplefilter("error", wg.NumbaFallbackWarning)
            numba_ = wg.grad(f, engine="source", backend="numba", fallback=False)
            for _ in range(2):
                want = python(x)
                assert_close(numba_(x), want, rtol("exact", want), what=name)
                assert type(numba_.last.fn).__name__ == "NumbaFunction"
                change()
    finally:
        GLOBAL_W[:] = saved


def test_large_constants_are_passed_not_frozen():
    """A constant array of many items is a parameter of the compiled code
    (numba's compile time grows with what it freezes), with the same values."""
    def weighted(x):
        w = np.arange(300.0) / 300.0        # folded: a constant f64[300]
        return np.sum(np.sin(x) * w)
    x = np.linspace(-1.0, 1.0, 300)
    want = wg.grad(weighted, engine="source")(x)
    g = wg.grad(weighted, engine="source", backend="numba", fallback=False)
    assert_close(g(x), want, rtol("exact", want))
    assert "passed at each call" in g.source


# --- reductions numba has over every axis only ------------------------------------
def _axes_of(ndim, fn):
    one = list(range(ndim)) + [-1]
    return one if fn.startswith("arg") else one + [(0, ndim - 1)] + ([(0, 1)] if ndim == 3 else [])


_AXIS_CASES = [(fn, shape, axis) for fn in ("min", "max", "prod", "argmin", "argmax")
               for shape in ((4, 5), (3, 4, 5)) for axis in _axes_of(len(shape), fn)]


@pytest.mark.parametrize("fn, shape, axis", _AXIS_CASES,
                         ids=[f"{f}-{len(s)}d-{a}" for f, s, a in _AXIS_CASES])
def test_axis_reductions_compile_over_each_axis(fn, shape, axis):
    """min, max, prod, argmin, argmax over some axes of a 2-D and 3-D array
    compile (no fallback) and give NumPy's values (a strided input too);
    min and max differentiate under numba as under the Python backend."""
    def reduce(x):
        return getattr(np, fn)(x, axis=axis) * 1

    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", wg.NumbaFallbackWarning)
        jitted = wg.jit(reduce, fallback=False, engine="source")
        for arg in (x, x[..., ::-1]):
            want = getattr(np, fn)(arg, axis=axis)
            got = jitted(arg)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert_close(got, want, rtol("exact", want), what=fn)
        if fn in ("min", "max"):
            def cost(x):
                return np.sum(np.sin(getattr(np, fn)(x, axis=axis)))
            want = wg.grad(cost, engine="source")(x)
            got = wg.grad(cost, engine="source", backend="numba", fallback=False)(x)
            assert_close(got, want, rtol("exact", want), what=f"{fn} grad")


def _gather_squares(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s = s + x[idx[k]] ** 2
    return s


@pytest.mark.parametrize("bad", [[1, 7], [4], [0, -5]], ids=str)
def test_an_index_out_of_range_raises_as_in_python(bad):
    # the code is staged at valid indices; an index out of range at a later
    # call raises IndexError on both backends (numba without bounds checks
    # read another element: a wrong gradient, silently)
    x = np.arange(4.0)
    g = wg.grad(_gather_squares, engine="source", backend="numba", fallback=False)
    assert_close(g(x, np.array([0, 3])), wg.grad(_gather_squares, engine="source")(
        x, np.array([0, 3])), rtol("exact", x))
    for backend in ("python", "numba"):
        with pytest.raises(IndexError):
            wg.grad(_gather_squares, engine="source", backend=backend)(x, np.array(bad))


def long_loop(x):
    s = x[0]
    for i in range(1, x.shape[0]):
        s = s * 0.5 + np.sin(x[i]) * np.cos(x[i - 1])
    return s


def test_code_longer_than_the_limit_falls_back_or_raises(monkeypatch):
    """Code over ``WENGERT_NUMBA_MAX_LINES`` statement lines is refused before
    numba compiles it (its compile time grows faster than the code): one
    warning naming the length and the limit, and the Python backend's values;
    ``fallback=False`` raises; a limit it fits compiles."""
    x = np.linspace(0.1, 1.0, 7)
    want = wg.grad(long_loop, engine="source")(x)
    monkeypatch.setenv("WENGERT_NUMBA_MAX_LINES", "5")
    with pytest.raises(wg.NumbaCompileError, match="WENGERT_NUMBA_MAX_LINES"):
        wg.grad(long_loop, engine="source", backend="numba", fallback=False)(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = wg.grad(long_loop, engine="source", backend="numba")(x)
    messages = [str(w.message) for w in seen if issubclass(w.category, wg.NumbaFallbackWarning)]
    assert len(messages) == 1 and "lines, more than 5" in messages[0], messages
    assert_close(got, want, rtol("exact", want))
    monkeypatch.setenv("WENGERT_NUMBA_MAX_LINES", "nonsense")
    with pytest.raises(wg.BackendError, match="positive number"):
        wg.grad(long_loop, engine="source", backend="numba", fallback=False)(x)
    monkeypatch.setenv("WENGERT_NUMBA_MAX_LINES", "200")
    g = wg.grad(long_loop, engine="source", backend="numba", fallback=False)
    assert_close(g(x), want, rtol("exact", want))


def test_pullback_keeps_the_primals_of_its_vjp_call():
    """The compiled pullback runs the forward sweep again at each call: a
    write into the caller's array after ``vjp`` must not move the point it
    differentiates at (the Python backend's pullback holds its residuals)."""
    def f(x):
        return np.sum(x * x * x)
    x = np.array([1.0, 2.0])
    _, pullback = wg.vjp(f, x, engine="source", backend="numba", fallback=False)
    x[:] = 10.0
    (got,) = pullback(1.0)
    assert_close(got, np.array([3.0, 12.0]), rtol("exact", got))


# --- float32 loops ----------------------------------------------------------------------
def threshold(x):
    # at x[i] == float32(0.1) NumPy 2 compares in float32 (not greater)
    s = x[0] * 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.1:
            s = s + x[i] * x[i]
        else:
            s = s + 3.0 * x[i]
    return s


def stencil(x):
    y = x.copy()
    for t in range(3):
        y = 0.25 * y + 0.5 * np.roll(y, 1)
    return np.sum(y * y)


def clipped(x):
    y = x
    for i in range(2):
        y = np.where(y > 0.3, y * 1.5, 0.1) + np.maximum(y, 0.2)
    return np.sum(y)


def int_literals(x):
    out = np.zeros_like(x)
    acc = x[0]
    for i in range(x.shape[0]):
        acc = acc * 2 - 1 + x[i] / 3
        out[i] = acc
    return np.sum(out ** 2)


def recurrence(x):
    h = x[0]
    for i in range(1, x.shape[0]):
        h = np.tanh(0.5 * h + x[i]) * 2.0
    return h


def prefix_products(x):
    out = np.zeros_like(x)
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
        out[i] = p
    return np.sum(out)


_F32 = [threshold, stencil, clipped, int_literals, recurrence, prefix_products]
_X32 = np.array([0.1, 0.5, 0.1, 0.7, 0.25, -0.4], np.float32)


@pytest.mark.parametrize("fn", _F32, ids=lambda f: f.__name__)
def test_float32_loops_compile_and_keep_float32(fn):
    x = _X32.copy()
    for name, numba_fn, python_fn in (
            ("grad", wg.grad(fn, engine="source", backend="numba", fallback=False),
             wg.grad(fn, engine="source")),
            ("jit", wg.jit(fn, fallback=False), fn)):
        got, want = numba_fn(x), python_fn(x.copy())
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32, name
        assert_close(got, want, rtol("exact", np.float32), what=f"{fn.__name__} {name}")
    np.testing.assert_array_equal(x, _X32)


def test_a_float32_threshold_branches_as_numpy():
    # the value at a threshold of float32(0.1): numba compared it with the
    # float64 0.1 (greater), a silently other branch; NumPy 2: equal
    x = np.full(3, 0.1, np.float32)
    assert wg.jit(threshold, fallback=False)(x) == threshold(x)
    got = wg.grad(threshold, engine="source", backend="numba", fallback=False)(x)
    np.testing.assert_array_equal(got, np.full(3, 3.0, np.float32))


# --- prod's gradient --------------------------------------------------------------------
def prods(x):
    # over every axis, one axis, the other, and two of three (x: 2 x 3 x 4)
    return (np.prod(x) + np.sum(np.prod(x, axis=1) ** 2)
            + np.sum(np.sin(np.prod(x, axis=0))) + np.sum(np.prod(x, axis=(0, 2))))


def _with_zeros(count):
    x = np.linspace(0.6, 1.4, 24).reshape(2, 3, 4)
    x.flat[[5, 17, 11][:count]] = 0.0
    if count == 2:
        x[0, 0, :2] = 0.0           # two zeros in one row of the last axis
    return x


@pytest.mark.parametrize("x", [_with_zeros(0), _with_zeros(1), _with_zeros(2),
                               np.full((2, 3, 4), 1e20), -_with_zeros(1)],
                         ids=["no-zero", "one-zero", "two-zeros", "overflow", "negative"])
def test_prod_gradient_compiles_at_zeros_and_over_axes(x):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning)      # the overflow's
        fell = agree(prods, (x,), 0, True, "prod", ("grad", "jvp"))
        got = wg.grad(prods, engine="source", backend="numba", fallback=False)(x)
    assert not fell and not [w for w in seen if issubclass(w.category, wg.NumbaFallbackWarning)]
    with np.errstate(all="ignore"):
        want = wg.grad(prods, engine="source")(x)
    assert_close(got, want, rtol("exact", want), what="prod grad")


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "break-inner-ragged", "while-in-for-ragged", "return-in-nested-late")], ids=lambda c: c.id)
def test_ragged_stacks_are_lists_of_arrays(case):
    """An outer loop storing an inner loop's values, whose trip count varies, keeps them in
    a list of arrays numba types (made of empty arrays of their type, never of Nones): it
    compiles (``fallback=False``) and equals the Python backend, grad and jvp."""
    args = case.fresh()
    g = wg.grad(case.fn, case.argnums, engine="source", backend="numba", fallback=False)
    assert_close(g(*args), wg.grad(case.fn, case.argnums, engine="source")(*case.fresh()),
                 rtol("exact"))
    assert "for _ in range(" in g.source and "[None]" not in g.source
    dyn = case.dyn(args)
    part = closure(case.fn, args[len(case.nums):])
    t = np.cos(np.arange(np.size(dyn[0]))).reshape(np.shape(dyn[0]))
    got = wg.jvp(part, dyn, (t,), engine="source", backend="numba", fallback=False)[1]
    want = wg.jvp(part, dyn, (t,), engine="source")[1]
    assert_close(got, want, rtol("exact"))
