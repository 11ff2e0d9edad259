"""Where the source engine keeps the code it generated (``wengert/api/codes.py``):
generated once, reused widely. Derivative objects made by the same recipe
share their code, and what the code does not fold is read at each call, so
reuse never gives a stale derivative.
"""
import threading

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from checks import PROGRAM_RTOL_F64, assert_close, fd_jvp, inner
import reuse_cases as C

W = np.array([0.3, -0.2, 0.5, 0.1])


def _fd_grad_check(g, f, w, rest, what):
    """``g(w, *rest)`` against central differences of ``f`` along two directions."""
    got = g(w, *rest)
    for seed in range(2):
        t = np.random.default_rng(seed).normal(size=w.shape)
        want = fd_jvp(lambda v: f(v, *rest), (w,), (t,))
        assert_close(inner(got, t), want, PROGRAM_RTOL_F64, what=what)
    return got


# --- (a) one code for every object made the same way ------------------------
TRANSFORMS = {
    "grad": lambda f: wg.grad(f, engine="source"),
    "value_and_grad": lambda f: wg.value_and_grad(f, engine="source"),
    "jacfwd": lambda f: wg.jacfwd(f, engine="source"),
    "jacrev": lambda f: wg.jacrev(f, engine="source"),
    "hessian": lambda f: wg.hessian(f, engine="source"),
    "grad_grad_sum": lambda f: wg.jacrev(wg.grad(f, engine="source"), engine="source"),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_second_object_reuses_the_first_ones_code(name):
    make = TRANSFORMS[name]
    x = np.array([0.4, -0.7, 1.1])
    first = make(C.cube)
    want = first(x)
    made = first.generations
    assert made >= 1
    for _ in range(3):
        again = make(C.cube)
        got = again(x)
        assert again.codes is first.codes
        assert again.generations == made, f"{name}: a new object generated code again"
        assert_close(got, want, 0.0, what=name)
        assert again.source == first.source
    # the values are the derivatives (the trace engine's, independently made)
    traced = {"grad": wg.grad, "value_and_grad": wg.value_and_grad, "jacfwd": wg.jacfwd,
              "jacrev": wg.jacrev, "hessian": wg.hessian,
              "grad_grad_sum": lambda f, engine: wg.jacrev(wg.grad(f, engine=engine),
                                                           engine=engine)}[name]
    assert_close(want, traced(C.cube, engine="trace")(x), PROGRAM_RTOL_F64, what=name)


OPTIONS = [
    ("argnums", lambda f: wg.grad(f, argnums=0, engine="source"),
     lambda f: wg.grad(f, argnums=1, engine="source")),
    ("argnums_tuple", lambda f: wg.grad(f, argnums=(0,), engine="source"),
     lambda f: wg.grad(f, argnums=(0, 1), engine="source")),
    ("transform", lambda f: wg.grad(f, engine="source"),
     lambda f: wg.value_and_grad(f, engine="source")),
    ("engine", lambda f: wg.grad(f, engine="source"), lambda f: wg.grad(f, engine="auto")),
]


@pytest.mark.parametrize("name,one,other", OPTIONS, ids=[o[0] for o in OPTIONS])
def test_different_options_have_different_code(name, one, other):
    def f(x, y):
        return np.sum(np.sin(x) * y)
    x, y = np.array([0.1, 0.2]), np.array([1.5, -0.5])
    a, b = one(f), other(f)
    assert a.codes is not b.codes
    ra, rb = a(x, y), b(x, y)
    assert a.generations == 1 and b.generations == 1
    ta = {"argnums": wg.grad(f, argnums=0), "argnums_tuple": wg.grad(f, argnums=(0,)),
          "transform": wg.grad(f), "engine": wg.grad(f)}[name]
    tb = {"argnums": wg.grad(f, argnums=1), "argnums_tuple": wg.grad(f, argnums=(0, 1)),
          "transform": wg.value_and_grad(f), "engine": wg.grad(f)}[name]
    assert_close(ra, ta(x, y), PROGRAM_RTOL_F64)
    assert_close(rb, tb(x, y), PROGRAM_RTOL_F64)


def test_a_redefined_function_is_another_function():
    x = np.array([0.3, 0.6])

    def f(x):
        return np.sum(np.sin(x))
    old = wg.grad(f, engine="source")
    np.testing.assert_allclose(old(x), np.cos(x))

    def f(x):       # noqa: F811 -- redefined on purpose
        return np.sum(x ** 3)
    new = wg.grad(f, engine="source")
    assert new.codes is not old.codes
    np.testing.assert_allclose(new(x), 3 * x ** 2)
    np.testing.assert_allclose(old(x), np.cos(x))


# what a function reads from outside, changed between two objects' calls:
# (name, function, change(monkeypatch), derivative before, after)
CHANGES = [
    ("global_number", C.scaled, lambda mp: mp.setattr(C, "SCALE", 5.0),
     lambda x: 2 * 2.0 * x, lambda x: 2 * 5.0 * x),
    ("global_helper", C.uses_helper, lambda mp: mp.setattr(C, "helper", np.tanh),
     np.cos, lambda x: 1 - np.tanh(x) ** 2),
    ("reassigned_code", C.cube, lambda mp: mp.setattr(C.cube, "__code__", C.helper.__code__),
     lambda x: 3 * x ** 2, lambda x: np.ones_like(x) * np.nan),
]


@pytest.mark.parametrize("name,f,change,before,after", CHANGES, ids=[c[0] for c in CHANGES])
def test_a_changed_global_misses_the_shared_code(monkeypatch, name, f, change, before, after):
    x = np.array([0.2, -0.4, 0.9])
    first = wg.grad(f, engine="source")
    np.testing.assert_allclose(first(x), before(x))
    made = first.generations
    change(monkeypatch)
    second = wg.grad(f, engine="source")
    if name == "reassigned_code":
        # ``helper`` returns an array: grad now refuses it (its output is not a
        # scalar), where the old code would have answered 3 x**2
        with pytest.raises(TypeError):
            second(x)
        with pytest.raises(TypeError):
            first(x)
    else:
        np.testing.assert_allclose(second(x), after(x))
        np.testing.assert_allclose(first(x), after(x))
        assert second.generations == made + 1
    monkeypatch.undo()
    np.testing.assert_allclose(wg.grad(f, engine="source")(x), before(x))


def test_the_shared_table_is_bounded():
    keys = [("test", api_codes.Ident(object()), k) for k in range(api_codes.SIZE + 50)]
    for key in keys:
        api_codes.codes_for(key)
    assert len(api_codes._TABLE) <= api_codes.SIZE
    assert keys[0] not in api_codes._TABLE and keys[-1] in api_codes._TABLE


def test_threads_making_objects_of_one_function_agree():
    """Eight threads each make their own ``grad`` of one function and call it
    at once: the same values and the same code as one thread."""
    def f(x, t):
        return np.sum(np.tanh(C.design(t) @ x) ** 2)
    x, t = W.copy(), np.linspace(0.0, 1.0, 7)
    want = wg.grad(f, engine="trace")(x, t)
    barrier = threading.Barrier(8)
    out, errors = [None] * 8, []

    def work(k):
        try:
            barrier.wait()
            g = wg.grad(f, engine="source")
            out[k] = (g(x, t), g.source, g.codes)
        except BaseException as err:    # noqa: BLE001 -- reported by the main thread
            errors.append(err)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    for value, source, codes in out:
        assert_close(value, want, PROGRAM_RTOL_F64)
        assert source == out[0][1]
        assert codes is out[0][2]


# --- (c) what is not differentiated is read at each call ---------------------
@pytest.mark.parametrize("place", ["argument", "keyword", "pytree", "object_attribute",
                                   "object_changed_in_place", "closure_changed_in_place",
                                   "global_changed_in_place", "method"])
def test_values_made_from_data_are_made_at_each_call(monkeypatch, place):
    """A design matrix built from data that is not differentiated: new data of
    the same shape at each call, through every place data comes from; the
    gradient follows the data (against finite differences) and the code is
    generated once."""
    ts = [np.linspace(0.1, 1.0, 6) * s for s in (1.0, 1.7, -0.6)]
    model = C.Model(ts[0].copy())
    cell = ts[0].copy()
    closure = C.make_closure_loss(cell)
    g = None
    for k, t in enumerate(ts):
        if place == "argument":
            f, rest = C.design_loss, (t,)
        elif place == "pytree":
            f, rest = C.design_loss_tree, ({"t": t, "y": np.sin(3 * t)},)
        elif place == "object_attribute":
            model.t = t         # a new array on the same object (an object argument
            f, rest = C.object_loss, (model,)   # is keyed by identity)
        elif place == "object_changed_in_place":
            model.t[...] = t
            f, rest = C.object_loss, (model,)
        elif place == "closure_changed_in_place":
            cell[...] = t
            f, rest = closure, ()
        elif place == "global_changed_in_place":
            monkeypatch.setattr(C, "DATA", C.DATA.copy()) if k == 0 else None
            C.DATA[...] = t
            f, rest = C.global_loss, ()
        elif place == "method":
            model.t = t         # a new array on the same object
            f, rest = model.loss, ()
        if place == "keyword":
            g = g or wg.grad(C.design_loss_kw, engine="source")
            got = g(W, t=t)
            for seed in range(2):
                d = np.random.default_rng(seed).normal(size=W.shape)
                want = fd_jvp(lambda v: C.design_loss_kw(v, t=t), (W,), (d,))
                assert_close(inner(got, d), want, PROGRAM_RTOL_F64, what=f"{place}, data {k}")
        else:
            g = g or wg.grad(f, engine="source")
            _fd_grad_check(g, f, W, rest, f"{place}, data {k}")
        if k == 0:
            made = g.generations     # (shared with earlier objects of the same function)
    assert g.generations == made, f"{place}: code generated again for new data"


# --- (b) Python ints that set trip counts and lengths are read by the code ---------
X = np.linspace(-0.9, 1.1, 25)

# the int only sets trip counts and lengths (or is a number the code writes by
# name): one generation serves every value
SYMBOLIC_INTS = {
    "for_range": C.trip_for,
    "while_counter": C.trip_while,
    "fori_loop": C.trip_fori,
    "helper_loop": C.trip_helper,
    "ones_of_length": C.outer_made,
    "leading_slice": C.leading_part,
}
# the int is used by its value (an item of a list, a function called on it,
# a constant folded from it): each value gets its own code, never another's
PINNED_INTS = {
    "outside_list": C.weight_of_list,
    "local_list": C.weight_of_local_list,
    "called_function": C.weight_of_call,
    "numpy_floor": C.weight_of_floor,
    "folded_reciprocal": C.int_in_values,
    "folded_sum": C.lengths_made,
    "outside_dict": C.weight_of_dict,
    "local_dict": C.weight_of_local_dict,
}
TRIP_COUNTS = list(range(2, 22))


def _check_at(g, f, x, n, what):
    got = g(x, n)
    t = np.random.default_rng(n).normal(size=x.shape)
    want = fd_jvp(lambda v: f(v, n), (x,), (t,))
    assert_close(inner(got, t), want, PROGRAM_RTOL_F64, what=f"{what} at n={n}")
    return got


@pytest.mark.parametrize("name", sorted(SYMBOLIC_INTS))
def test_new_trip_counts_reuse_the_code(name):
    """20 calls, each with a new int: generated once, and each gradient is
    the derivative at that int (against central differences)."""
    f = SYMBOLIC_INTS[name]
    g = wg.grad(f, engine="source")
    made = None
    for n in TRIP_COUNTS:
        _check_at(g, f, X, n, name)
        made = g.generations if made is None else made
        assert g.generations == made, f"{name}: generated again at n={n}"
    assert "def " in g.source and ", n)" in g.source.splitlines()[
        next(k for k, line in enumerate(g.source.splitlines()) if line.startswith("def "))]


@pytest.mark.parametrize("name", sorted(PINNED_INTS))
def test_ints_used_by_value_get_code_of_their_own(name):
    """An int whose value the code uses (no expression kept): right at every
    value, which the same code at two neighbouring values would not show
    (the lists repeat items, floor(n / 3) repeats values)."""
    f = PINNED_INTS[name]
    g = wg.grad(f, engine="source")
    x = X[:6]
    for n in (1, 2, 3, 4, 1, 4):
        _check_at(g, f, x, n, name)
        assert_close(g(x, n), wg.grad(f, engine="trace")(x, n), PROGRAM_RTOL_F64,
                     what=f"{name}: source vs trace at n={n}")
    assert g.generations <= 4


def test_an_em_loop_generates_once():
    """The EM loop of issue 14: a new iteration count at each step."""
    data = np.linspace(-1.0, 2.0, 64)
    g = wg.grad(C.em_steps, engine="source")
    theta = 0.3
    for n_iter in range(1, 21):
        got = g(theta, data, n_iter)
        want = fd_jvp(lambda th: C.em_steps(th, data, n_iter), (theta,), (1.0,))
        assert_close(got, want, PROGRAM_RTOL_F64, what=f"em at {n_iter} iterations")
    assert g.generations == 1


def test_threads_with_their_own_trip_counts_agree():
    """Eight threads call one shared object and one of their own, each with its
    own sequence of trip counts: the code and values one thread gets."""
    f = C.trip_for
    want = {n: wg.grad(f, engine="trace")(X, n) for n in TRIP_COUNTS}
    single = wg.grad(f, engine="source")
    single(X, 3)
    text = single.source
    shared = wg.grad(f, argnums=(0,), engine="source")    # a recipe of its own
    barrier = threading.Barrier(8)
    out, errors = [None] * 8, []

    def work(k):
        try:
            barrier.wait()
            mine = wg.grad(f, engine="source")
            order = TRIP_COUNTS[k:] + TRIP_COUNTS[:k]
            out[k] = [(n, mine(X, n), shared(X, n)[0], mine.source) for n in order]
        except BaseException as err:    # noqa: BLE001 -- reported by the main thread
            errors.append(err)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    for rows in out:
        for n, a, b, source in rows:
            assert_close(a, want[n], PROGRAM_RTOL_F64, what=f"own object at n={n}")
            assert_close(b, want[n], PROGRAM_RTOL_F64, what=f"shared object at n={n}")
            assert source == text
    assert single.generations == 1 and shared.generations <= 8


def test_the_shared_code_keeps_no_call_arrays_alive():
    """The table outlives the objects and calls that filled it: it keeps the
    function, never the arrays a call was given (a design matrix's data)."""
    import gc
    import weakref
    t = np.linspace(0.0, 1.0, 40)
    g = wg.grad(C.outer_loss, engine="source")
    w = W.copy()
    g(w, t)
    g(W, t[:30].copy())         # other lengths: the same code
    assert g.generations == 1 and g.last.respecialize is not None
    refs = [weakref.ref(t), weakref.ref(w)]
    del t, w, g
    gc.collect()
    assert all(r() is None for r in refs)
