"""The primitives' face, tested by class (issue 11): each section takes one
kind of mistake and runs every member of its class in both engines.

* NumPy's keyword names: every wrapped NumPy function, ufunc and array
  method takes NumPy's parameters by NumPy's names; a keyword call gives
  the positional call's value and gradient, and a keyword wengert does not
  implement is refused, never dropped.
* math builtins: every ``math`` function with a NumPy twin works when given
  to a transform and, in the source engine, inside user code, keeping what
  ``math`` returns (a Python float); the trace engine refuses it inside user
  code naming the user's line and the twin.
* writes of traced values (trace engine): storing one into an array in
  place, a traced array or a plain one, by any subscript or ``out=``, is
  ``InPlaceUpdateError`` naming the user's line and the way out
  (``engine="source"``, which then gives the right derivative, or ``wg.at``).
* dtypes (NEP 50): for each family of functions and each mix of operand
  kinds (float32 and float64 arrays, Python float and int, integer array,
  float32 scalar) the primal has NumPy's dtype (a Python float stays one),
  each gradient its input's, and a jvp's tangent its output's.
* shape rules: every rule that checks its operands refuses bad shapes with
  ``ShapeMismatchError`` naming the user's line, also after a derivative of
  the same function ran at good shapes (a remembered answer, compiled code or
  a concrete NumPy evaluation must not skip the check).
"""
from __future__ import annotations

import inspect
import math
import os
import re

import numpy as np
import pytest

import wengert as wg
from wengert import errors
from wengert.primitives import math_twins, numpy_functions as npf, numpy_ufuncs
from wengert.primitives.numpy_api import Tracer

from checks import assert_close, dot_product_check, fd_jvp, norm, rtol

ENGINES = ("trace", "source")
HERE = os.path.basename(__file__)


def _arrays(shapes, seed=0):
    """Random float64 arrays of ``shapes``; square matrices are made
    well-conditioned (solve, inv and det are among the rules)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + 3.0 * np.eye(s[-1])
        out.append(a)
    return out


def check_grad_fd(f, args, engine, what=""):
    """The gradient (every argument) against central differences along a
    random direction (float32 tolerances where the output is float32)."""
    argnums = tuple(range(len(args)))
    g = wg.grad(f, argnums=argnums, engine=engine)(*args)
    rng = np.random.default_rng(1)
    t = tuple(rng.standard_normal(np.shape(a)) for a in args)
    got = sum(float(np.sum(gi * ti)) for gi, ti in zip(g, t))
    want = fd_jvp(f, args, t)
    assert_close(got, want, rtol("program", *args, f(*args)), what=f"{what} gradient against FD")


# --- shape rules: a guard always runs ------------------------------------------------
def sg_add(a, b):
    return np.sum(a + b)


def sg_mul_2d(a, b):
    return np.sum(a * b)


def sg_where(a, b):
    return np.sum(np.where(a > 0.0, a, b))


def sg_matmul(a, b):
    return np.sum(a @ b)


def sg_dot(a, b):
    return np.sum(np.dot(a, b))


def sg_einsum(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b))


def sg_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=([1], [0])))


def sg_concatenate(a, b):
    return np.sum(np.concatenate([a, b], axis=0) ** 2)


def sg_stack(a, b):
    return np.sum(np.stack([a, b]) ** 2)


def sg_reshape(a):
    return np.sum(np.sin(a.reshape(6)))


def sg_broadcast_to(a, b):
    return np.sum(np.broadcast_to(a, (3, 4)) * b)


def sg_transpose(a, b):
    return np.sum(np.transpose(a, (1, 0)) * b)


def sg_squeeze(a):
    return np.sum(np.squeeze(a, axis=0) ** 2)


def sg_solve(a, b):
    return np.sum(np.linalg.solve(a, b))


def sg_inv(a):
    return np.sum(np.linalg.inv(a))


def sg_det(a):
    return np.linalg.det(a)


SHAPE_GUARDS = [
    ("broadcast", sg_add, [(3,), (3,)], [(3,), (4,)]),
    ("broadcast-2d", sg_mul_2d, [(2, 3), (3,)], [(2, 3), (2,)]),
    ("where", sg_where, [(3,), (3,)], [(3,), (2,)]),
    ("matmul", sg_matmul, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("matmul-vector", sg_matmul, [(3,), (3, 4)], [(2,), (3, 4)]),
    ("matmul-batch", sg_matmul, [(2, 3, 4), (2, 4, 5)], [(3, 3, 4), (2, 4, 5)]),
    ("dot", sg_dot, [(2, 3), (3,)], [(2, 3), (4,)]),
    ("einsum", sg_einsum, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("tensordot", sg_tensordot, [(2, 3), (3, 4)], [(2, 3), (2, 4)]),
    ("concatenate", sg_concatenate, [(2, 3), (1, 3)], [(2, 3), (1, 4)]),
    ("stack", sg_stack, [(3,), (3,)], [(3,), (4,)]),
    ("reshape", sg_reshape, [(2, 3)], [(2, 4)]),
    ("broadcast_to", sg_broadcast_to, [(4,), (3, 4)], [(5,), (3, 4)]),
    ("transpose", sg_transpose, [(2, 3), (3, 2)], [(2, 3, 1), (3, 2)]),
    ("squeeze", sg_squeeze, [(1, 3)], [(2, 3)]),
    ("solve", sg_solve, [(3, 3), (3,)], [(3, 3), (4,)]),
    ("solve-batch", sg_solve, [(2, 3, 3), (2, 3, 2)], [(2, 3, 3), (3, 3, 2)]),
    ("inv", sg_inv, [(3, 3)], [(3, 4)]),
    ("det", sg_det, [(3, 3)], [(3, 4)]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, good, bad", SHAPE_GUARDS, ids=[c[0] for c in SHAPE_GUARDS])
def test_shape_guard_runs_after_good_shapes(name, f, good, bad, engine):
    """Good shapes first (the gradient is right), then bad ones: through the
    same derivative (its code and remembered rules exist) and through a new
    one, each refuses with ShapeMismatchError naming this file's line."""
    args = tuple(_arrays(good))
    check_grad_fd(f, args, engine, name)
    first = wg.grad(f, argnums=tuple(range(len(args))), engine=engine)
    first(*args)
    wrong = tuple(_arrays(bad, seed=2))
    for g in (first, wg.grad(f, argnums=tuple(range(len(args))), engine=engine)):
        with pytest.raises(errors.ShapeMismatchError, match=rf"{HERE}:\d+: "):
            g(*wrong)
    # and the value alone, through a jvp (forward mode: other rules run)
    with pytest.raises(errors.ShapeMismatchError, match=rf"{HERE}:\d+: "):
        wg.jvp(f, wrong, tuple(np.ones_like(w) for w in wrong), engine=engine)


# --- NumPy's own keyword names ---------------------------------------------------------
def _ids(funcs):
    return [f"{getattr(f, '__module__', 'numpy').replace('numpy.', 'np.')}.{f.__name__}"
            for f in funcs]


def _numpy_signature(f):
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):       # a builtin NumPy gives no signature for
        return None


SIGNED = [f for f in npf.FUNCTIONS if _numpy_signature(f) is not None]


def test_most_wrapped_functions_expose_a_signature():
    """The signature test below covers the table, not a sliver of it."""
    assert len(SIGNED) == len(npf.FUNCTIONS), sorted(
        set(_ids(npf.FUNCTIONS)) - set(_ids(SIGNED)))


def assert_takes_parameters(theirs, ours, what):
    """Every parameter of ``theirs`` is one of ``ours``, of the same kind, at
    the same position when it can be passed by position, with the same
    default; ``ours`` may add keyword-only parameters with defaults (names
    of other NumPy versions), and takes ``**kwargs`` only where NumPy does."""
    mine = list(ours.parameters.values())
    names = [p.name for p in mine]
    for k, p in enumerate(theirs.parameters.values()):
        assert p.name in names, f"{what}: parameter {p.name!r} missing from {ours}"
        q = ours.parameters[p.name]
        assert q.kind == p.kind, f"{what}: {p.name!r} is {q.kind}, NumPy's is {p.kind}"
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL):
            assert names.index(p.name) == k, f"{what}: {p.name!r} at another position"
        if p.default is not p.empty:
            assert q.default is p.default or q.default == p.default, \
                f"{what}: {p.name}={q.default!r}, NumPy's default is {p.default!r}"
    for q in mine:
        if q.name not in theirs.parameters:
            assert q.kind == q.KEYWORD_ONLY and q.default is not q.empty, \
                f"{what}: extra parameter {q.name!r} NumPy does not have"


@pytest.mark.parametrize("np_fn", SIGNED, ids=_ids(SIGNED))
def test_wrapper_takes_numpys_parameters(np_fn):
    assert_takes_parameters(inspect.signature(np_fn), inspect.signature(npf.FUNCTIONS[np_fn]),
                            _ids([np_fn])[0])


METHODS = sorted(m for m in vars(Tracer) if not m.startswith("_") and callable(
    getattr(np.ndarray, m, None)) and callable(vars(Tracer)[m]))


@pytest.mark.parametrize("name", METHODS)
def test_array_method_takes_ndarrays_parameters(name):
    """A traced array's method takes ndarray's parameters by name (its
    ``**kwargs`` are those of the NumPy function it forwards to)."""
    theirs = list(inspect.signature(getattr(np.ndarray, name)).parameters.values())[1:]
    ours = list(inspect.signature(vars(Tracer)[name]).parameters.values())[1:]
    named = [p.name for p in theirs if p.kind != p.VAR_KEYWORD]
    assert [p.name for p in ours][:len(named)] == named, (name, ours)
    rest = [p.name for p in ours][len(named):]
    if any(p.kind == p.VAR_KEYWORD for p in theirs):
        forwarded = [p for p in inspect.signature(getattr(np, name)).parameters.values()
                     if p.name not in named and p.name != "a"]
        assert rest == [p.name for p in forwarded] or rest == ["kwargs"], (name, rest)
    else:
        assert rest == [], (name, rest)


# each keyword call, with its positional twin where NumPy has one
def kw_moveaxis(x):
    return np.moveaxis(x, source=0, destination=-1) * W342


def pos_moveaxis(x):
    return np.moveaxis(x, 0, -1) * W342


def kw_moveaxis_many(x):
    return np.moveaxis(x, source=[0, 1], destination=[-1, 0]) * W342


def pos_moveaxis_many(x):
    return np.transpose(x, (1, 2, 0)) * W342


def kw_swapaxes(x):
    return np.swapaxes(x, axis1=0, axis2=2) * W432


def pos_swapaxes(x):
    return np.swapaxes(x, 0, 2) * W432


def kw_trace_method(x):
    return x.trace(offset=1, axis1=1, axis2=2)


def kw_transpose(x):
    return np.transpose(x, axes=(2, 0, 1)) * W423


def pos_transpose(x):
    return np.transpose(x, (2, 0, 1)) * W423


def kw_reshape(x):
    return np.sin(np.reshape(x, shape=(6, 4)))


def pos_reshape(x):
    return np.sin(np.reshape(x, (6, 4)))


def kw_reshape_f(x):
    return np.sin(np.reshape(x, (6, 4), order="F")) * W64


def kw_ravel_f(x):
    return np.ravel(x, order="F") * np.arange(24.0)


def kw_sum(x):
    return np.sum(x, axis=1, keepdims=True) * W214


def pos_sum(x):
    return np.sum(x, 1, None, None, True) * W214


def kw_sum_method(x):
    return x.sum(axis=(0, 2), keepdims=True) ** 2


def kw_sum_where(x):
    return np.sum(x ** 2, axis=0, where=MASK34, initial=0.5)


def kw_prod_where(x):
    return np.prod(x, axis=2, where=MASK34, initial=2.0)


def kw_mean(x):
    return np.mean(x ** 2, axis=-1, keepdims=True, dtype=np.float32)


def pos_mean(x):
    return np.mean(x ** 2, -1, np.float32, None, True)


def kw_max(x):
    return np.max(x, axis=0, initial=0.25)


def kw_max_where(x):
    return np.max(x, axis=0, initial=-5.0, where=MASK34)


def kw_min(x):
    return np.min(x * W234, axis=(1, 2), keepdims=True)


def pos_min(x):
    return np.min(x * W234, (1, 2), None, True)


def kw_var(x):
    return np.var(x, axis=1, correction=1)


def pos_var(x):
    return np.var(x, 1, None, None, 1)


def kw_std(x):
    return np.std(x, axis=0, ddof=1, keepdims=True)


def pos_std(x):
    return np.std(x, 0, None, None, 1, True)


def kw_cumsum(x):
    return np.cumsum(x, axis=2) * W234


def pos_cumsum(x):
    return np.cumsum(x, 2) * W234


def kw_trace(x):
    return np.trace(x, offset=1, axis1=1, axis2=2)


def pos_trace(x):
    return np.trace(x, 1, 1, 2)


def kw_diagonal(x):
    return np.diagonal(x, offset=-1, axis1=0, axis2=2)


def pos_diagonal(x):
    return np.diagonal(x, -1, 0, 2)


def kw_tensordot(x):
    return np.tensordot(x, W234, axes=([0, 1], [0, 1]))


def pos_tensordot(x):
    return np.tensordot(x, W234, ([0, 1], [0, 1]))


def kw_squeeze(x):
    return np.squeeze(x[:1], axis=0) * W34


def pos_squeeze(x):
    return np.squeeze(x[:1], 0) * W34


def kw_expand_dims(x):
    return np.expand_dims(x, axis=(0, 2)) * 2.0


def pos_expand_dims(x):
    return np.expand_dims(x, (0, 2)) * 2.0


def kw_broadcast_to(x):
    return np.broadcast_to(x[0, :, 0], shape=(3, 4)) * W34[:, 0]


def pos_broadcast_to(x):
    return np.broadcast_to(x[0, :, 0], (3, 4)) * W34[:, 0]


def kw_concatenate(x):
    return np.concatenate([x, x ** 2], axis=1, dtype=np.float32)


def pos_concatenate(x):
    return np.concatenate([x, x ** 2], 1).astype(np.float32)


def kw_stack(x):
    return np.stack([x, np.sin(x)], axis=-1)


def pos_stack(x):
    return np.stack([x, np.sin(x)], -1)


def kw_clip(x):
    return np.clip(x, min=-0.5, max=0.5) * W234


def pos_clip(x):
    return np.clip(x, -0.5, 0.5) * W234


def kw_clip_method(x):
    return x.clip(min=-0.5, max=0.5) * W234


def kw_norm(x):
    return np.linalg.norm(x, ord=1, axis=2, keepdims=True)


def pos_norm(x):
    return np.linalg.norm(x, 1, 2, True)


def kw_cholesky(x):
    a = np.einsum("ijk,ljk->il", x, x, optimize=True) + 3.0 * np.eye(3)
    return np.linalg.cholesky(a, upper=True)


def pos_cholesky(x):
    a = np.einsum("ijk,ljk->il", x, x) + 3.0 * np.eye(3)
    return np.linalg.cholesky(a).T


def kw_zeros_like(x):
    return np.sin(x) + np.zeros_like(x, shape=(4, 2), dtype=np.float32)


def kw_full_like(x):
    return np.full_like(x, fill_value=x[0, 0, 0] ** 2) * W234


def kw_round(x):
    return np.round(x, decimals=1) + x


def pos_round(x):
    return np.round(x, 1) + x


def kw_astype(x):
    return np.sin(x).astype(dtype=np.float32, casting="same_kind")


def kw_ufunc_dtype(x):
    return np.multiply(x, W234, dtype=np.float32)


def pos_ufunc_dtype(x):
    return np.multiply(x.astype(np.float32), W234.astype(np.float32))


_RNG = np.random.default_rng(7)
W234 = _RNG.standard_normal((3, 4, 2))
W342, W432, W423 = (_RNG.standard_normal(s) for s in ((4, 2, 3), (2, 4, 3), (2, 3, 4)))
W214, W64, W34 = (_RNG.standard_normal(s) for s in ((3, 1, 2), (6, 4), (4, 2)))
MASK34 = _RNG.standard_normal((4, 2)) > 0.0

KEYWORD_CALLS = [
    ("moveaxis", kw_moveaxis, pos_moveaxis), ("moveaxis-many", kw_moveaxis_many, pos_moveaxis_many),
    ("swapaxes", kw_swapaxes, pos_swapaxes), ("trace-method", kw_trace_method, pos_trace),
    ("transpose", kw_transpose, pos_transpose), ("reshape", kw_reshape, pos_reshape),
    ("reshape-F", kw_reshape_f, None), ("ravel-F", kw_ravel_f, None),
    ("sum", kw_sum, pos_sum), ("sum-method", kw_sum_method, None),
    ("sum-where-initial", kw_sum_where, None), ("prod-where-initial", kw_prod_where, None),
    ("mean-dtype", kw_mean, pos_mean), ("max-initial", kw_max, None),
    ("max-where", kw_max_where, None), ("min", kw_min, pos_min), ("var-correction", kw_var, pos_var),
    ("std", kw_std, pos_std), ("cumsum", kw_cumsum, pos_cumsum), ("trace", kw_trace, pos_trace),
    ("diagonal", kw_diagonal, pos_diagonal), ("tensordot", kw_tensordot, pos_tensordot),
    ("squeeze", kw_squeeze, pos_squeeze), ("expand_dims", kw_expand_dims, pos_expand_dims),
    ("broadcast_to", kw_broadcast_to, pos_broadcast_to),
    ("concatenate-dtype", kw_concatenate, pos_concatenate), ("stack", kw_stack, pos_stack),
    ("clip", kw_clip, pos_clip), ("clip-method", kw_clip_method, pos_clip),
    ("norm", kw_norm, pos_norm), ("cholesky-upper", kw_cholesky, pos_cholesky),
    ("zeros_like-shape", kw_zeros_like, None), ("full_like", kw_full_like, None),
    ("round", kw_round, pos_round), ("astype", kw_astype, None),
    ("ufunc-dtype", kw_ufunc_dtype, pos_ufunc_dtype),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, kw, pos", KEYWORD_CALLS, ids=[c[0] for c in KEYWORD_CALLS])
def test_keyword_call(name, kw, pos, engine):
    """The keyword call's value is NumPy's (dtype included); its vjp matches
    the positional call's and, through the dot-product with a jvp, finite
    differences."""
    x = _RNG.standard_normal((3, 4, 2))
    want = kw(x)
    out, pullback = wg.vjp(kw, x, engine=engine)
    assert np.asarray(out).dtype == np.asarray(want).dtype, name
    assert_close(out, want, rtol("ref", want), what=f"{name} value")
    ct = np.random.default_rng(3).standard_normal(np.shape(want)).astype(np.asarray(want).dtype)
    g, = pullback(ct)
    if pos is not None:
        out_p, pullback_p = wg.vjp(pos, x, engine=engine)
        assert_close(out_p, out, rtol("exact", want), what=f"{name} positional value")
        assert_close(pullback_p(ct)[0], g, rtol("exact", want), what=f"{name} positional vjp")
    t = np.random.default_rng(4).standard_normal(x.shape)
    got = float(np.sum(np.asarray(g, np.float64) * t))
    fd = float(np.sum(np.asarray(fd_jvp(kw, (x,), (t,)), np.float64) * ct))
    assert_close(got, fd, rtol("program", want), what=f"{name} vjp against FD")


UFUNC_LIST = sorted(numpy_ufuncs.UFUNCS, key=lambda u: u.__name__)


def _numpy_refuses(f, args):
    """Whether NumPy itself refuses the call (a keyword this ufunc does not
    take, a dtype it has no loop for): wengert must refuse it as NumPy does."""
    try:
        f(*args)
    except TypeError:
        return True
    return False


def _ufunc_functions(ufunc, **kwargs):
    """``ufunc(..., **kwargs)`` as a function of its operands."""
    if ufunc.nin == 1:
        def call1(x):
            return ufunc(x, **kwargs)
        return call1

    def call2(x, y):
        return ufunc(x, y, **kwargs)
    return call2


@pytest.mark.filterwarnings("ignore:'where' used without 'out'")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ufunc", UFUNC_LIST, ids=[u.__name__ for u in UFUNC_LIST])
def test_ufunc_keywords(ufunc, engine):
    """Every mapped ufunc: ``dtype=`` computes in that dtype (NumPy's value
    and dtype, the tangent against FD), ``where=`` and ``out=`` (a write in
    place) are refused with the user's line: dropping them would give other
    values than NumPy."""
    rng = np.random.default_rng(5)
    args = tuple(rng.uniform(0.2, 0.8, 3) for _ in range(ufunc.nin))
    ones = tuple(np.ones(3) for _ in args)
    name = ufunc.__name__
    for key, val, err in (("where", np.array([True, False, True]), errors.NoDerivativeRule),
                          ("out", np.zeros(3), errors.InPlaceUpdateError)):
        f = _ufunc_functions(ufunc, **{key: val})
        if _numpy_refuses(f, args):
            with pytest.raises(TypeError):          # NumPy itself refuses the keyword
                wg.jvp(f, args, ones, engine=engine)
            continue
        with pytest.raises(err, match=rf"{HERE}:\d+: np\.{name}\(\.\.\., {key}="):
            wg.jvp(f, args, ones, engine=engine)
    f = _ufunc_functions(ufunc, dtype=np.float32, casting="same_kind")
    if _numpy_refuses(f, args):           # no float32 loop (comparisons, float_power)
        with pytest.raises(TypeError):
            wg.jvp(f, args, ones, engine=engine)
        return
    want = f(*args)
    t = tuple(rng.standard_normal(3) for _ in args)
    out, tan = wg.jvp(f, args, t, engine=engine)
    assert out.dtype == want.dtype == np.float32 and tan.dtype == np.float32, (out, tan)
    assert_close(out, want, rtol("ref", np.float32), what=f"{name} value")
    assert_close(tan, fd_jvp(f, args, t), rtol("jvp", np.float32), what=f"{name} tangent")


def rf_mean_where(x):
    return np.mean(x, where=x > 0.0)


def rf_var_mean(x):
    return np.var(x, mean=np.mean(x))


def rf_ravel_k(x):
    return np.ravel(x, order="K")


def rf_sum_out(x):
    return np.sum(x, axis=0, out=np.zeros(2))


def rf_clip_kwargs(x):
    return np.clip(x, 0.0, 1.0, dtype=np.float32)


def rf_method_out(x):
    return x.max(axis=0, out=np.zeros(2))


def rf_max_where_alone(x):
    return np.max(x, where=x > 0.0)


REFUSED = [("mean-where", rf_mean_where, errors.NoDerivativeRule, r"np\.mean\(\.\.\., where="),
           ("var-mean", rf_var_mean, errors.NoDerivativeRule, r"np\.var\(\.\.\., mean="),
           ("ravel-order-K", rf_ravel_k, errors.NoDerivativeRule, r"np\.ravel\(\.\.\., order="),
           ("sum-out", rf_sum_out, errors.InPlaceUpdateError, r"np\.sum\(\.\.\., out="),
           ("clip-ufunc-keyword", rf_clip_kwargs, errors.NoDerivativeRule, r"np\.clip\(\.\.\., dtype="),
           ("method-out", rf_method_out, errors.InPlaceUpdateError, r"np\.max\(\.\.\., out="),
           ("max-where-without-initial", rf_max_where_alone, ValueError, r"np\.max with where= needs initial=")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, err, msg", REFUSED, ids=[c[0] for c in REFUSED])
def test_unimplemented_keyword_is_refused(name, f, err, msg, engine):
    with pytest.raises(err, match=rf"{HERE}:\d+: {msg}"):
        wg.grad(lambda x: np.sum(f(x)), engine=engine)(np.ones((3, 2)))


# --- writes of traced values in the trace engine ---------------------------------------
def wr_traced_item(x):
    y = x * 2.0
    y[1] = x[0] ** 2
    return np.sum(y * x)


def wr_plain_item(x):
    z = np.zeros(3)
    z[0] = x[0]
    return np.sum(z * x)


def wr_plain_item_f32(x):
    z = np.zeros(3, np.float32)
    z[2] = x[1] * 3.0
    return np.sum(z * np.float32(2.0))


def wr_plain_item_int(x):
    z = np.zeros(3, np.int64)
    z[2] = x[1]
    return np.sum(z * x)


def wr_plain_complex(x):
    z = np.zeros(3, np.complex128)
    z[0] = x[0]
    return np.sum(np.real(z) * x)


def wr_plain_slice(x):
    z = np.ones(3)
    z[0:2] = x[1:] ** 2
    return np.sum(z * x)


def wr_plain_fancy(x):
    z = np.ones(3)
    z[[2, 0]] = x[:2]
    return np.sum(z * x)


def wr_plain_mask(x):
    z = np.ones(3)
    z[z > 0.0] = x
    return np.sum(z * x)


def wr_plain_ellipsis(x):
    z = np.ones(3)
    z[...] = np.sin(x)
    return np.sum(z * x)


def wr_plain_augmented_item(x):
    z = np.ones(3)
    z[1] += x[2]
    return np.sum(z * x)


def wr_plain_augmented(x):
    z = np.ones(3)
    z += x
    return np.sum(z * x)


def wr_ufunc_out(x):
    z = np.ones(3)
    np.multiply(x, 2.0, out=z)
    return np.sum(z * x)


# the writes, and what the source engine does with them: the derivative
# (None), or a typed refusal of its own (an explicit out=; complex values)
WRITES = [("traced-item", wr_traced_item, None), ("plain-item", wr_plain_item, None),
          ("plain-item-float32", wr_plain_item_f32, None),
          ("plain-item-int", wr_plain_item_int, None),
          ("plain-item-complex", wr_plain_complex, errors.UnsupportedDtypeError),
          ("plain-slice", wr_plain_slice, None), ("plain-fancy", wr_plain_fancy, None),
          ("plain-mask", wr_plain_mask, None), ("plain-ellipsis", wr_plain_ellipsis, None),
          ("plain-augmented-item", wr_plain_augmented_item, None),
          ("plain-augmented", wr_plain_augmented, None),
          ("ufunc-out", wr_ufunc_out, errors.InPlaceUpdateError)]


@pytest.mark.parametrize("name, f, source_error", WRITES, ids=[w[0] for w in WRITES])
def test_write_of_traced_value(name, f, source_error):
    """The trace engine refuses with the user's line and the ways out; the
    engine it names gives the derivative NumPy's semantics define (FD:
    a value stored into an integer array is truncated, so it has none)."""
    x = np.array([0.3, -0.7, 1.1])
    for transform in (wg.grad(f, engine="trace"),
                      lambda x: wg.jvp(f, (x,), (np.ones(3),), engine="trace"),
                      lambda x: wg.vjp(f, x, engine="trace")):
        with pytest.raises(errors.InPlaceUpdateError,
                           match=rf"{HERE}:\d+: .*in place.*engine='source' \(or 'auto'\)"):
            transform(x)
    for engine in ("source", "auto"):
        if source_error is None:
            check_grad_fd(f, (x,), engine, name)
        else:
            with pytest.raises(source_error, match=rf"{HERE}:\d+: "):
                wg.grad(f, engine=engine)(x)


def wr_with_at(x):
    z = np.zeros(3)
    z = wg.at(z)[0].set(x[0])
    y = wg.at(x)[1].set(x[0] ** 2)
    return np.sum(z * y)


@pytest.mark.parametrize("engine", ENGINES)
def test_write_advice_wg_at_works(engine):
    check_grad_fd(wr_with_at, (np.array([0.3, -0.7, 1.1]),), engine, "wg.at")


# --- math builtins ----------------------------------------------------------------------
# arguments inside every twin's domain; two-argument functions get two
MATH_ARGS = {math.atan2: (0.37, -0.81), math.pow: (1.3, 0.7), math.hypot: (0.37, -0.81),
             math.log: (1.7,)}
MATH_CASES = sorted(math_twins.TWINS, key=lambda f: f.__name__)


def _math_args(fn):
    return MATH_ARGS.get(fn, (0.37,))


def _in_user_code(fn, nargs):
    """``fn`` called inside a user function, its Python float result scaled
    by a float32 array (NumPy keeps float32: the result is weakly typed)."""
    if nargs == 1:
        def user1(x):
            return fn(x) * V32
        return user1

    def user2(x, y):
        return fn(x, y) * V32
    return user2


V32 = np.array([1.5, -0.5], np.float32)


@pytest.mark.parametrize("engine", ENGINES + ("auto",))
@pytest.mark.parametrize("fn", MATH_CASES, ids=[f.__name__ for f in MATH_CASES])
def test_math_builtin_given_to_a_transform(fn, engine):
    args = _math_args(fn)
    nums = tuple(range(len(args)))
    value, g = wg.value_and_grad(fn, argnums=nums, engine=engine)(*args)
    assert type(value) is float and all(type(gi) is float for gi in g), (value, g)
    assert value == pytest.approx(fn(*args), rel=1e-14)
    check_grad_fd(fn, args, engine, fn.__name__)
    out, tan = wg.jvp(fn, args, tuple(1.0 for _ in args), engine=engine)
    assert type(out) is float and type(tan) is float, (type(out), type(tan))
    assert tan == pytest.approx(sum(g), rel=1e-12)


@pytest.mark.parametrize("fn", MATH_CASES, ids=[f.__name__ for f in MATH_CASES])
def test_math_builtin_in_user_code(fn):
    """Source engine: the twin, NumPy's dtype (float32), the gradient (FD).
    Trace engine: only ``float()`` of the tracer is seen; the error names
    the user's line and the NumPy function to write instead."""
    args = _math_args(fn)
    user = _in_user_code(fn, len(args))
    want = user(*args)
    for engine in ("source", "auto"):
        out, _ = wg.vjp(user, *args, engine=engine)
        assert out.dtype == want.dtype == np.float32, (engine, out.dtype)
        assert_close(out, want, rtol("ref", np.float32), what=f"{fn.__name__} value")
        check_grad_fd(lambda *a: np.sum(user(*a)), args, engine, fn.__name__)
    twin = re.escape(math_twins.numpy_name(fn))
    with pytest.raises(errors.UnsupportedFunctionError,
                       match=rf"{HERE}:\d+: math\.{fn.__name__} was called .* Use {twin} instead"):
        wg.grad(lambda *a: np.sum(user(*a)), engine="trace")(*args)


# --- dtypes kept, NEP 50 exactly ------------------------------------------------------
OPERANDS = {
    "f32": lambda: np.array([0.3, 0.6, 0.2], np.float32),
    "f64": lambda: np.array([0.35, 0.65, 0.25]),
    "pyfloat": lambda: 0.45,
    "pyint": lambda: 2,
    "i64": lambda: np.array([1, 2, 3]),
    "f32scalar": lambda: np.float32(0.7),
}
FLOAT_KINDS = ("f32", "f64", "pyfloat", "f32scalar")


def _kind(v):
    """What NumPy's promotion sees: a Python scalar's type (weakly typed), else the dtype."""
    if type(v) in (bool, int, float, complex):
        return f"python {type(v).__name__}"
    return np.asarray(v).dtype.name


def dt_sin(x):
    return np.sin(x)


def dt_square_op(x):
    return x ** 2


def dt_sqrt_op(x):
    return x ** 0.5


def dt_neg(x):
    return -x


def dt_abs(x):
    return abs(x)


def dt_np_square(x):
    return np.square(x)


def dt_mod(x):
    return x % 0.25 + x


def dt_floordiv(x):
    return x // 0.25 + x


def dt_exp(x):
    return np.exp(x)


def dt_float(x):
    return float(x) * 2.0


def dt_mul(x, y):
    return x * y


def dt_add(x, y):
    return x + y


def dt_div(x, y):
    return x / y


def dt_sub(x, y):
    return x - y


def dt_pow(x, y):
    return x ** y


def dt_scaled_square(x, y):
    return np.sum(x ** 2 * y)


def dt_np_add(x, y):
    return np.add(x, y)


def dt_maximum(x, y):
    return np.maximum(x, y)


def dt_arctan2(x, y):
    return np.arctan2(x, y)


def dt_where(x, y):
    return np.where(np.array([True, False, True]), x, y)


def dt_sum(x):
    return np.sum(x)


def dt_mean(x):
    return np.mean(x)


def dt_max(x):
    return np.max(x)


def dt_prod(x):
    return np.prod(x)


def dt_matmul(x, y):
    return x @ y


def dt_getitem(x):
    return x[1] * x


def dt_setitem(x, v):
    y = x * 1
    y[1:] = v[1:] if np.ndim(v) else v
    return y


def dt_at_set(x, v):
    return wg.at(x * 1)[1:].set(v[1:] if np.ndim(v) else v)


def _setitem_reference(x, v):
    y = x * 1
    y[1:] = v[1:] if np.ndim(v) else v
    return y


def _dtype_cases():
    unary = [dt_sin, dt_square_op, dt_sqrt_op, dt_neg, dt_abs, dt_np_square, dt_mod,
             dt_floordiv, dt_exp, dt_sum, dt_mean, dt_max, dt_prod]
    binary = [dt_mul, dt_add, dt_div, dt_sub, dt_pow, dt_scaled_square, dt_np_add, dt_maximum,
              dt_arctan2, dt_where]
    cases = []
    for f in unary:
        cases += [(f, (k,), ENGINES) for k in FLOAT_KINDS]
    cases += [(dt_float, (k,), ("source",)) for k in ("pyfloat", "f32scalar")]
    for f in binary:
        cases += [(f, (a, b), ENGINES) for a in OPERANDS for b in OPERANDS
                  if a in FLOAT_KINDS or b in FLOAT_KINDS]
    cases += [(dt_matmul, (a, b), ENGINES) for a in ("f32", "f64", "i64")
              for b in ("f32", "f64", "i64") if a != "i64" or b != "i64"]
    cases += [(dt_getitem, (k,), ENGINES) for k in ("f32", "f64")]
    for a in ("f32", "f64"):
        cases += [(dt_setitem, (a, b), ("source",)) for b in OPERANDS if b != "i64"]
        cases += [(dt_at_set, (a, b), ENGINES) for b in OPERANDS if b != "i64"]
    return [pytest.param(f, kinds, engine, id=f"{f.__name__[3:]}-{'-'.join(kinds)}-{engine}")
            for f, kinds, engines in cases for engine in engines]


@pytest.mark.parametrize("f, kinds, engine", _dtype_cases())
def test_dtypes_follow_numpy(f, kinds, engine):
    args = [OPERANDS[k]() for k in kinds]
    want = (_setitem_reference if f is dt_at_set else f)(*args)
    nums = tuple(i for i, k in enumerate(kinds) if k in FLOAT_KINDS)
    dyn = [args[i] for i in nums]

    def g(*xs):
        full = list(args)
        for i, x in zip(nums, xs):
            full[i] = x
        return f(*full)

    out, pullback = wg.vjp(g, *dyn, engine=engine)
    assert _kind(out) == _kind(want), f"primal {_kind(out)}, NumPy gives {_kind(want)}"
    assert_close(out, want, rtol("ref", np.float32), what="primal")
    ct = np.ones_like(want) if isinstance(want, np.ndarray) else type(want)(1.0) \
        if not isinstance(want, float) else 0.5
    cts = pullback(ct)
    for x, c in zip(dyn, cts):
        assert _kind(c) == _kind(x), f"gradient {_kind(c)} of an input {_kind(x)}"
    rng = np.random.default_rng(11)
    tangents = tuple(rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype)
                     if isinstance(x, np.ndarray) else type(x)(rng.standard_normal())
                     for x in dyn)
    out_j, tan = wg.jvp(g, tuple(dyn), tangents, engine=engine)
    assert _kind(out_j) == _kind(want), f"jvp primal {_kind(out_j)}, NumPy gives {_kind(want)}"
    assert _kind(tan) == _kind(want), f"tangent {_kind(tan)} of an output {_kind(want)}"
    # and the two derivatives agree: <ct, J t> = <J^T ct, t> (both 0 where
    # the float operands do not reach the output: np.maximum(0.3, 2))
    if norm(tan) == 0.0:
        assert norm(cts) == 0.0, "a zero jvp, but a vjp that is not"
    else:
        dot_product_check(ct, tan, cts, tangents, rtol=rtol("exact", np.float32))


FLOAT32_FUNCTIONS = ([(name, kw, [(3, 4, 2)]) for name, kw, _ in KEYWORD_CALLS]
                     + [(name, f, good) for name, f, good, _ in SHAPE_GUARDS])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, shapes", FLOAT32_FUNCTIONS,
                         ids=[c[0] for c in FLOAT32_FUNCTIONS])
def test_float32_stays_float32(name, f, shapes, engine):
    """float32 inputs (the other families above): NumPy's primal dtype,
    float32 gradients, a tangent of the output's dtype."""
    args = tuple(a.astype(np.float32) for a in _arrays(shapes))
    want = f(*args)
    out, pullback = wg.vjp(f, *args, engine=engine)
    assert _kind(out) == _kind(want), (name, _kind(out), _kind(want))
    cts = pullback(np.ones_like(want))
    assert all(_kind(c) == "float32" for c in cts), [_kind(c) for c in cts]
    _, tan = wg.jvp(f, args, tuple(np.ones_like(a) for a in args), engine=engine)
    assert _kind(tan) == _kind(want), (name, _kind(tan), _kind(want))


SCALAR_UFUNCS = [u for u in UFUNC_LIST if u is not np.matmul]     # matmul takes no scalars


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ufunc", SCALAR_UFUNCS, ids=[u.__name__ for u in SCALAR_UFUNCS])
def test_ufunc_of_python_floats_is_numpys(ufunc, engine):
    """A ufunc of Python floats gives a NumPy scalar (``np.sin(0.5)`` is an
    np.float64, ``np.add(0.5, 0.25)`` too), whatever wengert's wrapper is
    written with: the result then promotes a float32 array it meets."""
    args = (0.4, 0.7)[:ufunc.nin]

    def f(*xs):
        return ufunc(*xs) * V32

    want = f(*args)
    out, _ = wg.jvp(f, args, tuple(1.0 for _ in args), engine=engine)
    assert _kind(out) == _kind(want), (_kind(out), _kind(want))
    assert_close(out, want, rtol("ref", want), what=ufunc.__name__)


NO_TWIN = [math.gamma, math.lgamma, math.asinh, math.copysign]


@pytest.mark.parametrize("engine", ENGINES + ("auto",))
@pytest.mark.parametrize("fn", NO_TWIN, ids=[f.__name__ for f in NO_TWIN])
def test_math_builtin_without_twin_is_refused(fn, engine):
    args = (0.4, 0.7)[:2 if fn is math.copysign else 1]
    with pytest.raises(errors.UnsupportedFunctionError,
                       match=rf"{HERE}:\d+: math\.{fn.__name__} was given to a transform"):
        wg.grad(fn, engine=engine)(*args)
