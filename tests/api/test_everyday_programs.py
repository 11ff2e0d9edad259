"""The everyday Python of issue 25 (this file: items 3 to 6), written the way
users write it: dicts built item by item, dict and list arguments, ``has_aux``
values of any type, an evaluation counter and a cache on ``self``,
``nonlocal`` and ``global`` counters, ``try``/``except``/``finally``,
``a = list(args); a[i] = x``, a SciPy function given directly, a gradient
taken inside the function being differentiated, masked singular functions.
Each is checked in the source engine, the trace engine and ``auto`` against
finite differences, or raises the typed error named (the engines agree, or
one refuses with its reason). Once each of these was refused by the source
engine, or a raw error, or nan (``test_*`` docstrings say which).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
import scipy.special
import scipy.stats

import wengert as wg
from wengert.core.errors import InPlaceUpdateError
from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp

ENGINES = ("source", "trace", "auto")
X = np.array([0.6, -1.1, 1.7])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def fd_grad(f, x, *rest):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return fd_jvp(lambda t: f(t, *rest), (float(x),), (1.0,))
    return np.array([fd_jvp(lambda t: f(t, *rest), (x,), (e,)) for e in np.eye(x.size)])


def check(f, x, *rest, engines=ENGINES):
    want = fd_grad(f, x, *rest)
    for engine in engines:
        got = wg.grad(f, engine=engine)(x, *rest)
        assert_close(got, want, PROGRAM_RTOL_F64, what=f"{f.__name__}, {engine}")


# --- dicts and lists --------------------------------------------------------------------
def metrics(x):
    out = {}
    out["mse"] = np.mean(x ** 2)
    out["reg"] = 0.1 * np.sum(np.abs(x))
    out["mse"] += 1.0
    return out["mse"] + out["reg"]


def dict_methods(x):
    d = {"a": x[0]}
    d.update({"b": x[1] ** 2})
    d.setdefault("c", np.sin(x[2]))
    d.setdefault("a", 100.0)
    return d["a"] * d["b"] + d["c"]


def per_key(x):
    terms = {}
    for k, name in enumerate(("a", "b", "c")):
        terms[name] = x[k] ** 2 * (k + 1)
    return sum(terms.values())


def dict_in_branch(x):
    state = {"scale": 1.0, "bias": 0.0}
    if np.sum(x) > 0:
        state["scale"] = np.sum(x ** 2)
    else:
        state["scale"] = np.sum(np.cos(x))
    return state["scale"] + state["bias"]


@pytest.mark.parametrize("f", [metrics, dict_methods, per_key, dict_in_branch],
                         ids=lambda f: f.__name__)
def test_dicts_built_in_the_function(f):
    """Once: ``out = {}; out["a"] = ...`` was ``TypeError: not an array value:
    dict`` in the source engine, a dict set in a loop or a branch refused."""
    check(f, X)
    check(f, -X)


def loss_of_params(params, x):
    w, b = params["w"], params["b"]
    return np.sum((x * w + b) ** 2) + params["reg"] * np.sum(w ** 2)


def test_dict_and_list_arguments():
    params = {"w": np.array([0.5, -0.2, 0.3]), "b": 0.1, "reg": 0.01}
    for engine in ENGINES:
        g = wg.grad(loss_of_params, engine=engine)(params, X)
        for key in ("w", "b", "reg"):
            e = {k: np.zeros_like(v) if isinstance(v, np.ndarray) else 0.0
                 for k, v in params.items()}
            e[key] = np.ones_like(params[key]) if isinstance(params[key], np.ndarray) else 1.0
            want = fd_jvp(lambda p: loss_of_params(p, X), (params,), (e,))
            assert_close(np.sum(g[key]), want, PROGRAM_RTOL_F64)

    def by_list(ws, x):
        return np.sum(ws[0] * x) + ws[1] * np.sum(x ** 2)
    for engine in ("trace", "auto"):
        g = wg.grad(by_list, engine=engine)([X * 2, 0.5], X)
        assert_close(g[0], X, 1e-12)
        assert_close(g[1], np.sum(X ** 2), 1e-12)


def copy_and_set(*args):
    a = list(args)
    a[0] = a[0] * 2.0
    return np.sum(a[0] * a[1])


def copy_of_list_argument(xs):
    a = list(xs)
    a[0] = a[0] * 3.0
    return np.sum(a[0] * xs[1]) + np.sum(xs[0])


def test_a_list_copy_written_is_not_the_callers():
    """Once: ``a = list(xs); a[0] = ...`` was refused as a write into the
    caller's value, though ``list()`` made a new list."""
    y = np.array([0.3, 0.2, -0.5])
    for engine in ENGINES:
        assert_close(wg.grad(copy_and_set, argnums=(0, 1), engine=engine)(X, y), (2 * y, 2 * X),
                     1e-12)
        g = wg.grad(copy_of_list_argument, engine=engine)([X, y])
        assert_close(g[0], 3 * y + 1.0, 1e-12)
        assert_close(g[1], 3 * X, 1e-12)


def item_written_in_place(xs):
    a = list(xs)
    a[0] += 1.0                     # writes into xs[0] itself, which is read below
    return np.sum(a[0] * xs[0])


def test_a_write_into_a_shared_item_is_refused_by_the_source_engine_only():
    y = np.array([0.3, 0.2, -0.5])
    with pytest.raises(wg.WengertError, match="changes 'a' in place"):
        wg.grad(item_written_in_place, engine="source")([X.copy(), y])
    assert_close(wg.grad(item_written_in_place, engine="trace")([X.copy(), y])[0], 2 * (X + 1),
                 1e-12)


# --- has_aux of any type --------------------------------------------------------------
SCALES = {"w": np.array([1.0, 2.0, 3.0])}


def loss_with_report(x):
    loss = np.sum(SCALES["w"] * x ** 2)
    return loss, {"name": "quadratic", "n": 3, "value": loss, "grad_hint": 2 * x,
                  "scales": SCALES, "ok": True, "note": None}


def test_aux_values_of_any_type():
    """Once: a string in the aux dict, or a closed-over dict of arrays, was
    ``TypeError: not an array value`` in the source engine."""
    for engine in ENGINES:
        g, aux = wg.grad(loss_with_report, has_aux=True, engine=engine)(X)
        assert_close(g, 2 * SCALES["w"] * X, 1e-12)
        assert aux["name"] == "quadratic" and aux["n"] == 3 and aux["ok"] is True
        assert aux["note"] is None
        assert_close(aux["value"], np.sum(SCALES["w"] * X ** 2), 1e-12)
        assert_close(aux["grad_hint"], 2 * X, 1e-12)
        assert_close(aux["scales"]["w"], SCALES["w"], 0.0)
        assert not np.shares_memory(aux["scales"]["w"], SCALES["w"])


# --- objects: counters and caches --------------------------------------------------------
class Objective:
    def __init__(self):
        self.nfev = 0
        self.cache = None
        self.w = np.array([1.0, 2.0, -1.0])

    def __call__(self, x):
        self.nfev += 1
        self.cache = x
        return np.sum(self.w * np.sin(x))

    def scaled(self, x):
        self.nfev += 1
        return np.sum(x ** 2) * self.nfev       # reads what it wrote


@pytest.mark.parametrize("engine", ENGINES)
def test_an_evaluation_counter_counts_each_call_once(engine):
    """Once: ``self.nfev += 1`` made the source engine refuse the function."""
    obj = Objective()
    f = obj.__call__
    for transform, calls in ((wg.grad, 2), (wg.value_and_grad, 2), (wg.jacfwd, 2),
                             (wg.jacrev, 2), (wg.hessian, 2)):
        obj.nfev = 0
        t = transform(f, engine=engine)
        t(X)
        t(X + 0.1)
        assert obj.nfev == calls, transform.__name__
        assert type(obj.cache) is np.ndarray and np.array_equal(obj.cache, X + 0.1)
    obj.nfev = 0
    wg.jvp(f, (X,), (X,), engine=engine)
    wg.vjp(f, X, engine=engine)[1](1.0)
    assert obj.nfev == 2
    assert_close(wg.grad(f, engine=engine)(X), obj.w * np.cos(X), 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_value_read_after_it_was_written(engine):
    obj = Objective()
    g = wg.grad(obj.scaled, engine=engine)
    assert_close(g(X), 2 * X * 1, 1e-12)
    assert_close(g(X), 2 * X * 2, 1e-12)
    assert obj.nfev == 2


def make_counted():
    count = 0

    def f(x):
        nonlocal count
        count += 1
        return np.sum(np.exp(x)) * 0.5
    return f, lambda: count


CALLS = 0


def counted_globally(x):
    global CALLS
    CALLS = CALLS + 1
    return np.sum(np.tanh(x))


def accumulate(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    add(np.sum(x ** 2))
    add(np.sum(np.sin(x)))
    return total


@pytest.mark.parametrize("engine", ENGINES)
def test_nonlocal_and_global(engine):
    """Once: ``nonlocal`` (and ``global``) made the source engine refuse."""
    global CALLS
    f, count = make_counted()
    g = wg.grad(f, engine=engine)
    g(X)
    g(X)
    assert count() == 2
    assert_close(g(X), 0.5 * np.exp(X), 1e-12)
    CALLS = 0
    wg.grad(counted_globally, engine=engine)(X)
    assert CALLS == 1
    check(accumulate, X, engines=(engine,))


def add_in_branch(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    if np.sum(x) > 0:
        add(np.sum(x))
    return total


def test_a_nonlocal_assigned_inside_a_traced_branch_is_refused_by_the_source_engine():
    with pytest.raises(wg.UnsupportedSyntax, match="nonlocal"):
        wg.grad(add_in_branch, engine="source")(X)
    check(add_in_branch, X, engines=("trace", "auto"))


# --- try/except/finally ------------------------------------------------------------------
def with_default(x, options):
    try:
        scale = options["scale"]
    except KeyError:
        scale = 2.0
    finally:
        offset = 0.5
    return np.sum(scale * x ** 2) + offset


def returns_in_try(x):
    try:
        return np.sum(np.log1p(x ** 2))
    except ValueError:
        return 0.0


def raises_by_shape(x):
    try:
        if x.shape[0] > 2:
            raise ValueError("too long")
        y = np.sum(x)
    except ValueError:
        y = np.sum(x[:2] ** 2)
    return y


def checks_shape(x):
    if x.ndim != 1:
        raise ValueError("x must be 1-d")
    return np.sum(np.sin(x))


@pytest.mark.parametrize("f, rest", [(with_default, ({},)), (with_default, ({"scale": 3.0},)),
                                     (returns_in_try, ()), (raises_by_shape, ()),
                                     (checks_shape, ())], ids=lambda v: getattr(v, "__name__", ""))
def test_try_except_finally(f, rest):
    """Once: any ``try`` made the source engine refuse the function."""
    check(f, X, *rest)


def cholesky_or_identity(x):
    a = np.outer(x, x) + np.eye(3) * 0.5
    try:
        chol = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        chol = np.eye(3)
    return np.sum(chol)


def test_an_exception_only_the_values_decide_is_refused_naming_the_line():
    with pytest.raises(wg.UnsupportedSyntax, match=r"test_everyday_programs.py:\d+: try: "
                                                   r"whether cholesky raises LinAlgError"):
        wg.grad(cholesky_or_identity, engine="source")(X)
    check(cholesky_or_identity, X, engines=("trace", "auto"))


RS = np.random.RandomState(0)
OPTS = {"a": 0.5}


def draw_under_key_lookup(x):
    s = np.sum(x ** 2)
    for i in range(2):
        try:
            s = s + OPTS["a"] * RS.randn() + OPTS["a"] * x[i]
        except KeyError:
            s = s + x[i] ** 3
        finally:
            s = s + 0.7
    try:
        s = s + float(np.sum(RS.randn(2))) * OPTS["missing"]
    except KeyError:
        s = s + np.mean(x)
    return s


def draw_of_traced_scale_under_value_error(x):
    try:
        s = np.sum(x) + RS.normal(0.0, np.abs(x[0]))
    except ValueError:
        s = np.sum(x)
    return s


def clock_under_key_error(x):
    try:
        s = np.sum(x) + 0.0 * time.time()
    except KeyError:
        s = np.sum(x)
    return s


def test_a_key_error_around_a_random_draw_is_decided_while_staging():
    """Once refused ("whether host_call raises Exception depends on the values"):
    a draw of NumPy's generator with fixed arguments cannot raise KeyError, so the
    except clause is taken exactly when the dict lookup (decided while staging)
    fails; the draws do not change the gradient."""
    want = 2.0 * X + np.array([0.5, 0.5, 0.0]) + 1.0 / 3.0
    for engine in ENGINES:
        assert_close(wg.grad(draw_under_key_lookup, engine=engine)(X), want, 1e-12)
    g = wg.grad(draw_under_key_lookup, engine="source")
    g(X)
    assert "randn(" in g.source


def test_a_draw_of_traced_parameters_or_a_user_call_is_still_refused():
    """A draw whose scale is traced may raise ValueError when the code runs (a
    negative scale), any other call made at run time (the clock, I/O, a C method)
    anything: refused, with the reason and the line."""
    with pytest.raises(wg.UnsupportedSyntax, match=r"try: whether host_call raises ValueError"):
        wg.grad(draw_of_traced_scale_under_value_error, engine="source")(X)
    with pytest.raises(wg.UnsupportedSyntax, match=r"try: whether host_call raises Exception"):
        wg.grad(clock_under_key_error, engine="source")(X)
    check(clock_under_key_error, X, engines=("trace", "auto"))


def nan_for_negative(x):
    if np.sum(x) < 0:
        raise ValueError("negative")
    return np.sum(x ** 2)


def test_a_raise_on_a_traced_condition_is_refused():
    with pytest.raises(wg.UnsupportedSyntax, match="raise inside a branch"):
        wg.grad(nan_for_negative, engine="source")(X)
    check(nan_for_negative, np.abs(X), engines=("trace", "auto"))
    with pytest.raises(ValueError, match="negative"):
        wg.grad(nan_for_negative)(-np.abs(X))


# --- library functions and nested derivatives ----------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_a_scipy_function_given_directly(engine):
    """Once: ``wg.grad(scipy.stats.chi2.pdf)`` was a raw ``AttributeError:
    'NoneType' object has no attribute '_parse_args'`` in the source engine."""
    for fn, args in ((scipy.stats.chi2.pdf, (1.5, 3.0)), (scipy.stats.norm.logpdf, (0.3, 0.1, 2.0)),
                     (scipy.stats.norm.cdf, (0.4,))):
        got = wg.grad(fn, engine=engine)(*args)
        want = fd_jvp(lambda t: fn(t, *args[1:]), (args[0],), (1.0,))
        assert_close(got, want, PROGRAM_RTOL_F64)
    got = wg.grad(scipy.special.logsumexp, engine=engine)(X)
    assert_close(got, np.exp(X - scipy.special.logsumexp(X)), 1e-12)


def energy(y):
    return np.sum(y ** 3) + np.sum(np.sin(y))


def penalised(x):
    return energy(x) + 0.1 * np.sum(wg.grad(energy)(x) ** 2)


GRAD_ENERGY = wg.grad(energy)


def penalised_by_global(x):
    return energy(x) + 0.1 * np.sum(GRAD_ENERGY(x) ** 2)


@pytest.mark.parametrize("f", [penalised, penalised_by_global], ids=lambda f: f.__name__)
def test_a_gradient_inside_the_function(f):
    check(f, X)


# --- masked singular functions ----------------------------------------------------------
def pairwise_distances(x):
    return np.sum(np.tril(np.sqrt((x[:, None] - x[None, :]) ** 2), -1))


def safe_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def relu_sqrt(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0)))


@pytest.mark.parametrize("engine", ENGINES)
def test_masked_singular_functions_have_finite_gradients(engine):
    """Once ``[nan, nan]``: 0 times the infinite slope of sqrt at the masked
    diagonal (JAX, autograd and PyTorch give nan too)."""
    assert_close(wg.grad(pairwise_distances, engine=engine)(np.array([1.5, -0.7])),
                 np.array([1.0, -1.0]), 1e-12)
    x = np.array([0.0, 4.0, -1.0])
    assert_close(wg.grad(safe_sqrt, engine=engine)(x), np.array([0.0, 0.25, 0.0]), 1e-12)
    assert_close(wg.grad(relu_sqrt, engine=engine)(np.array([-1.0, 4.0])),
                 np.array([0.0, 0.25]), 1e-12)
    check(pairwise_distances, X, engines=(engine,))


def dict_after_an_early_return(x):
    if np.sum(x) > 2.0:
        return np.sum(x) * 3.0
    d = {}
    d["a"] = np.sum(x * x)
    d["b"] = d["a"] * 0.5
    return np.sum(x) * d["b"]


def test_a_dict_built_after_an_early_return():
    """Once a raw ``KeyError`` in the source engine (found by the fuzzer): the
    path that returned early fills the dict with zeros, which were taken for
    a Python value since its items were Python floats."""
    check(dict_after_an_early_return, X)
    check(dict_after_an_early_return, X + 1.0)
    check(dict_after_an_early_return, 0.4)


# --- auto's errors after a fallback ----------------------------------------------------------
def refused_by_both(x):
    a = np.outer(x, x) + np.eye(3)
    try:                                    # the source engine: may raise at run time
        c = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        c = np.eye(3)
    y = np.zeros(3)
    y += c[0]                               # the trace engine: a traced value written in place
    return np.sum(y)


def test_autos_error_names_both_engines_reasons():
    """Once: after the fallback, the trace engine's error alone, telling the
    user to use the source engine, which had just refused."""
    with pytest.raises(InPlaceUpdateError) as info:
        wg.grad(refused_by_both)(X)
    text = str(info.value)
    assert "writes a traced value into an array in place" in text
    assert "tried the source engine first, which refused" in text
    assert "whether cholesky raises LinAlgError" in text
    assert "engine='source'" not in text and "engine='trace'" not in text
    with pytest.raises(InPlaceUpdateError) as alone:
        wg.grad(refused_by_both, engine="trace")(X)
    assert "tried the source engine" not in str(alone.value)


def test_a_scipy_distribution_without_rules_is_a_typed_error():
    """A SciPy distribution wengert has no rules for, given directly: a
    NoDerivativeRule naming it, not SciPy's code converted."""
    with pytest.raises(wg.NoDerivativeRule, match=r"scipy.stats.weibull_min.pdf has no"):
        wg.grad(scipy.stats.weibull_min.pdf, engine="source")(1.5, 2.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_callable_object_given_directly(engine):
    """Once: ``wg.grad(obj, engine="source")`` of an instance with a Python
    ``__call__`` was refused (its source "not available"); it is its bound
    ``__call__``, counted as often as a plain call."""
    obj = Objective()
    assert_close(wg.grad(obj, engine=engine)(X), obj.w * np.cos(X), 1e-12)
    assert_close(wg.jacfwd(obj, engine=engine)(X), obj.w * np.cos(X), 1e-12)
    assert obj.nfev == 2 and np.array_equal(obj.cache, X)


# --- the caller's arrays are never written -------------------------------------------------
def writes_its_matrix(x, m):
    m[0, 1] = 1.0
    return np.sum(m @ x)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_write_into_a_non_differentiated_argument_stays_inside(engine):
    """Once: the trace engine ran ``m[0, 1] = 1.0`` on the caller's array.
    The function sees its own write (the gradient of sum(m @ x) with
    m = [[0, 1], [0, 0]] is [0, 1]); the caller's m stays zero."""
    m = np.zeros((2, 2))
    for transform in (wg.grad, wg.value_and_grad, wg.jacrev, wg.jacfwd):
        out = transform(writes_its_matrix, engine=engine)(np.array([1.0, 2.0]), m)
        got = out[1] if transform is wg.value_and_grad else out
        assert_close(got, np.array([0.0, 1.0]), 0.0)
        assert not m.any()
    assert_close(wg.hessian(writes_its_matrix, engine=engine)(np.array([1.0, 2.0]), m),
                 np.zeros((2, 2)), 0.0)
    assert not m.any()
