"""``api/fresh.py`` and ``lower.fresh_outputs``: no array a transform returns
(values, gradients, tangents, cotangents, Jacobians, Hessians, jit's results)
shares memory with an argument, a tangent or cotangent passed in, a global, a
closure cell, a constant of the generated code, or another output; every
transform, both engines, the Python backend and numba's.

Once: the gradient of ``np.sum(x * y)`` in ``x`` *was* the caller's ``y``, a
gradient equal to a global array was that array, and a pullback returned its
cotangent argument itself: the caller's next in-place update of ``y``
silently changed the gradient it held.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.pytree import flatten, unflatten

G = np.array([1.0, -2.0, 3.0])
M = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])


def _closure():
    c = np.array([0.5, 0.25, -1.0])

    def by_closure(x):
        return np.sum(x * c)
    return by_closure, c


by_closure, C = _closure()


def times_arg(x, y):
    return np.sum(x * y)            # d/dx is y


def times_global(x, y):
    return np.sum(x * G)            # d/dx is G


def times_constant(x, y):
    return np.sum(x * np.array([4.0, 5.0, 6.0]))     # d/dx is a constant of the code


def closure_of(x, y):
    return by_closure(x)            # d/dx is C, a closure cell's


def identity(x, y):
    return x                        # the value is x, the tangent the seed, the cotangent too


def transposed(x, y):
    return x.reshape(3, 1).T        # a view of x


def returns_global(x, y):
    return np.sum(x) * 0.0 + G      # a value that is G plus a scalar: new


def global_value(x, y):
    return G                        # the value is the global itself


def twice(x, y):
    z = 2.0 * x
    return z, z                     # one array, two outputs


def quadratic(x, y):
    return 0.5 * x @ M @ x          # Hessian M, a global


SCALAR = ["times_arg", "times_global", "times_constant", "closure_of", "quadratic"]
VECTOR = ["identity", "transposed", "returns_global", "twice"]
FUNCS = {f.__name__: f for f in (times_arg, times_global, times_constant, closure_of, identity,
                                 transposed, returns_global, global_value, twice, quadratic)}


def _visible(args, extra=()):
    """Every array the caller can reach besides the results."""
    return list(flatten(args)[0]) + [G, M, C] + list(extra)


def _check(outs, visible):
    leaves = [x for x in flatten(outs)[0] if isinstance(x, np.ndarray)]
    for k, o in enumerate(leaves):
        for v in visible:
            assert not np.shares_memory(o, v), (k, o, v)
        for p in leaves[:k]:
            assert not np.shares_memory(o, p), (k, o)


def _args():
    return np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])


OPTIONS = [("source", "python"), ("trace", "python")]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("engine, backend", OPTIONS)
@pytest.mark.parametrize("name", SCALAR)
def test_gradients_are_new_arrays(name, engine, backend):
    f = FUNCS[name]
    x, y = _args()
    kw = {"engine": engine} if engine == "trace" else {"engine": engine, "backend": backend}
    _check(wg.grad(f, **kw)(x, y), _visible((x, y)))
    _check(wg.grad(f, argnums=(0, 1), **kw)(x, y), _visible((x, y)))
    _check(wg.value_and_grad(f, **kw)(x, y), _visible((x, y)))
    _check(wg.jacrev(f, **kw)(x, y), _visible((x, y)))
    _check(wg.jacfwd(f, **kw)(x, y), _visible((x, y)))
    _check(wg.hessian(f, **kw)(x, y), _visible((x, y)))


@pytest.mark.parametrize("engine, backend", OPTIONS)
@pytest.mark.parametrize("name", VECTOR + ["global_value"])
def test_values_jacobians_and_jit_are_new_arrays(name, engine, backend):
    f = FUNCS[name]
    x, y = _args()
    kw = {"engine": engine} if engine == "trace" else {"engine": engine, "backend": backend}
    if name != "global_value":
        _check(wg.jacfwd(f, **kw)(x, y), _visible((x, y)))
        _check(wg.jacrev(f, **kw)(x, y), _visible((x, y)))
    if engine == "source":
        _check(wg.jit(f, backend=backend)(x, y), _visible((x, y)))


@pytest.mark.parametrize("engine, backend", OPTIONS)
@pytest.mark.parametrize("name", SCALAR + VECTOR + ["global_value"])
def test_jvp_vjp_and_linearize_hand_out_new_arrays(name, engine, backend):
    f = FUNCS[name]
    x, y = _args()
    kw = {"engine": engine} if engine == "trace" else {"engine": engine, "backend": backend}
    tx, ty = np.array([0.5, 0.0, -1.0]), np.array([1.0, 1.0, 1.0])
    out, t_out = wg.jvp(f, (x, y), (tx, ty), **kw)
    _check((out, t_out), _visible((x, y), (tx, ty)))
    out, pullback = wg.vjp(f, x, y, **kw)
    leaves, tree = flatten(out)
    ct = unflatten(tree, [np.ones(np.shape(o)) for o in leaves])
    cts = pullback(ct)
    _check((out, cts), _visible((x, y), flatten(ct)[0]))
    cts2 = pullback(ct)                     # a second call: not the first's arrays
    _check((cts, cts2), _visible((x, y), flatten(ct)[0]))
    if engine == "trace" or backend == "python":
        out, lin = wg.linearize(f, x, y, engine=engine)
        t = lin(tx, ty)
        _check((out, t), _visible((x, y), (tx, ty)))
        _check((t, lin(tx, ty)), _visible((x, y), (tx, ty)))


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_aux_values_are_new_arrays(engine):
    def loss(x):
        return np.sum(x * x), {"g": G, "x": x, "name": "loss"}
    x = np.array([1.0, 2.0, 3.0])
    g, aux = wg.grad(loss, has_aux=True, engine=engine)(x)
    assert aux["name"] == "loss"
    np.testing.assert_array_equal(aux["g"], G)
    _check((g, aux["g"], aux["x"]), [x, G])


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_writing_into_a_gradient_changes_nothing_else(engine):
    x, y = _args()
    g = wg.grad(times_arg, engine=engine)(x, y)
    g *= 0.0
    np.testing.assert_array_equal(y, [4.0, 5.0, 6.0])
    g = wg.grad(times_global, engine=engine)(x, y)
    g += 1.0
    np.testing.assert_array_equal(G, [1.0, -2.0, 3.0])
    np.testing.assert_array_equal(wg.grad(times_global, engine=engine)(x, y), G)


def test_the_generated_code_copies_only_what_would_alias():
    x, y = _args()
    g = wg.grad(times_arg, engine="source")
    g(x, y)
    assert "y.copy()" in g.source, g.source
    g = wg.grad(quadratic, engine="source")
    g(x, y)
    assert ".copy()" not in g.source, g.source       # a new array: handed over as it is


@pytest.mark.numba
@pytest.mark.parametrize("name", SCALAR + VECTOR)
def test_numba_backend_hands_out_new_arrays_too(name):
    f = FUNCS[name]
    x, y = _args()
    kw = {"engine": "source", "backend": "numba"}
    if name in SCALAR:
        _check(wg.grad(f, argnums=(0, 1), **kw)(x, y), _visible((x, y)))
        _check(wg.value_and_grad(f, **kw)(x, y), _visible((x, y)))
        _check(wg.hessian(f, **kw)(x, y), _visible((x, y)))
    _check(wg.jacfwd(f, **kw)(x, y), _visible((x, y)))
    _check(wg.jacrev(f, **kw)(x, y), _visible((x, y)))
    _check(wg.jit(f, backend="numba")(x, y), _visible((x, y)))
    tx, ty = np.array([0.5, 0.0, -1.0]), np.array([1.0, 1.0, 1.0])
    _check(wg.jvp(f, (x, y), (tx, ty), **kw), _visible((x, y), (tx, ty)))
