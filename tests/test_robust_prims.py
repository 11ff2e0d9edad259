"""The primitives' face, tested by class (issue 11): each section takes one
kind of mistake and runs every member of its class in both engines.

* NumPy's keyword names: every function and call of the library table
  (``wengert.primitives.library``, SciPy's families included where SciPy is
  installed) takes its library's parameters by their names, every ufunc of
  the table its keywords, and every array method ndarray's; a keyword call gives
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
from wengert.core import errors
from wengert.numpy import library, math_twins, functions as npf
from wengert.core.pytree import flatten
from wengert.numpy.array_methods import ArrayMethods

import robust_prims_cases as rc
from checks import assert_close, dot_product_check, fd_jvp, norm, rtol

ENGINES = ("trace", "source")
HERE = os.path.basename(__file__)
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are


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


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, good, bad", rc.SHAPE_GUARDS, ids=[c[0] for c in rc.SHAPE_GUARDS])
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
        with pytest.raises(errors.ShapeMismatchError, match=rf"{CASES}:\d+: "):
            g(*wrong)
    # and the value alone, through a jvp (forward mode: other rules run)
    with pytest.raises(errors.ShapeMismatchError, match=rf"{CASES}:\d+: "):
        wg.jvp(f, wrong, tuple(np.ones_like(w) for w in wrong), engine=engine)


# --- NumPy's own keyword names ---------------------------------------------------------
def _ids(funcs):
    # a callable object (SciPy's distributions, frozen by calling) has no __name__
    return [f"{getattr(f, '__module__', 'numpy').replace('numpy.', 'np.')}.{f.__name__}"
            if hasattr(f, "__name__") else library.display_name(f) for f in funcs]


def _numpy_signature(f):
    """NumPy's own signature (recorded where an older NumPy gives none);
    None for a callable object (calling a SciPy distribution freezes it: the
    wrapper keeps the arguments for the methods, whose signatures are
    checked as their own entries)."""
    if not hasattr(f, "__name__"):
        return None
    return rc.numpy_signature(f, _ids([f])[0])


# every function and call of the library table, SciPy's families included
# where SciPy is installed: each family a merge adds is held to the contract
library.load_scipy()
WRAPPED = {**library.FUNCTIONS, **library.CALLS}
SIGNED = sorted((f for f in WRAPPED if _numpy_signature(f) is not None),
                key=library.display_name)


def test_most_wrapped_functions_expose_a_signature():
    """The signature test below covers NumPy's part of the table entirely
    (SciPy's callables may hide theirs: a C function, an object's method)."""
    numpy_part = [f for f in WRAPPED if not library.display_name(f).startswith("scipy.")]
    assert numpy_part and set(numpy_part) <= set(SIGNED), sorted(
        library.display_name(f) for f in set(numpy_part) - set(SIGNED))
    assert set(npf.FUNCTIONS) <= set(WRAPPED)


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


@pytest.mark.parametrize("np_fn", SIGNED, ids=[library.display_name(f) for f in SIGNED])
def test_wrapper_takes_numpys_parameters(np_fn):
    assert_takes_parameters(_numpy_signature(np_fn), inspect.signature(WRAPPED[np_fn]),
                            library.display_name(np_fn))


# a tracer's methods are its NumPy face's (``core.tracer`` forwards to them)
METHODS = sorted(m for m in vars(ArrayMethods) if not m.startswith("_") and callable(
    getattr(np.ndarray, m, None)) and callable(vars(ArrayMethods)[m]))


@pytest.mark.parametrize("name", METHODS)
def test_array_method_takes_ndarrays_parameters(name):
    """A traced array's method takes ndarray's parameters by name (its
    ``**kwargs`` are those of the NumPy function it forwards to)."""
    theirs = list(rc.numpy_signature(getattr(np.ndarray, name), f"ndarray.{name}")
                  .parameters.values())[1:]
    ours = list(inspect.signature(vars(ArrayMethods)[name]).parameters.values())[1:]
    named = [p.name for p in theirs if p.kind != p.VAR_KEYWORD]
    assert [p.name for p in ours][:len(named)] == named, (name, ours)
    rest = [p.name for p in ours][len(named):]
    if any(p.kind == p.VAR_KEYWORD for p in theirs):
        forwarded = [p for p in inspect.signature(getattr(np, name)).parameters.values()
                     if p.name not in named and p.name != "a"]
        assert rest == [p.name for p in forwarded] or rest == ["kwargs"], (name, rest)
    else:
        assert rest == [], (name, rest)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, kw, pos", rc.KEYWORD_CALLS, ids=[c[0] for c in rc.KEYWORD_CALLS])
def test_keyword_call(name, kw, pos, engine):
    """The keyword call's value is NumPy's (dtype included); its vjp matches
    the positional call's and, through the dot-product with a jvp, finite
    differences."""
    x = rc.RNG.standard_normal((3, 4, 2))
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


UFUNC_LIST = sorted(library.UFUNCS, key=library.display_name)


def _held(ufunc, args):
    """SciPy's ufuncs lead with orders and shape parameters (``jv(v, x)``,
    ``gammainc(a, x)``), in some of which no derivative is implemented (a
    tangent there is refused): they are held fixed, and the last operand is
    differentiated. ``(g, differentiated operands)``."""
    k = ufunc.nin - 1 if library.display_name(ufunc).startswith("scipy.") else 0

    def g(f):
        def held(*d):
            return f(*args[:k], *d)
        return held
    return g, args[k:]


def _numpy_refuses(f, args):
    """Whether NumPy itself refuses the call (a keyword this ufunc does not
    take, a dtype it has no loop for): wengert must refuse it as NumPy does."""
    try:
        f(*args)
    except TypeError:
        return True
    return False


@pytest.mark.filterwarnings("ignore:'where' used without 'out'")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ufunc", UFUNC_LIST, ids=[library.display_name(u) for u in UFUNC_LIST])
def test_ufunc_keywords(ufunc, engine):
    """Every mapped ufunc: ``dtype=`` computes in that dtype (NumPy's value
    and dtype, the tangent against FD), ``where=`` and ``out=`` (a write in
    place) are refused with the user's line: dropping them would give other
    values than NumPy."""
    rng = np.random.default_rng(5)
    hold, args = _held(ufunc, tuple(rng.uniform(0.2, 0.8, 3) for _ in range(ufunc.nin)))
    ones = tuple(np.ones(3) for _ in args)
    name = library.display_name(ufunc)
    outs = np.zeros(3) if ufunc.nout == 1 else tuple(np.zeros(3) for _ in range(ufunc.nout))
    for key, val, err in (("where", np.array([True, False, True]), errors.NoDerivativeRule),
                          ("out", outs, errors.InPlaceUpdateError)):
        f = hold(rc.ufunc_functions(ufunc, **{key: val}))
        # NumPy refuses where= for a gufunc (matmul) only; it is not asked, as
        # SciPy 1.17's ufuncs corrupt the heap when called with where=
        refused = (ufunc.signature is not None if key == "where"
                   else _numpy_refuses(f, args))
        if refused:
            with pytest.raises(TypeError):          # NumPy itself refuses the keyword
                wg.jvp(f, args, ones, engine=engine)
            continue
        with pytest.raises(err, match=rf"{CASES}:\d+: {re.escape(name)}\(\.\.\., {key}="):
            wg.jvp(f, args, ones, engine=engine)
    f = hold(rc.ufunc_functions(ufunc, dtype=np.float32, casting="same_kind"))
    if _numpy_refuses(f, args):           # no float32 loop (comparisons, float_power)
        with pytest.raises(TypeError):
            wg.jvp(f, args, ones, engine=engine)
        return
    want = f(*args)
    t = tuple(rng.standard_normal(3) for _ in args)
    out, tan = wg.jvp(f, args, t, engine=engine)
    for leaves in (flatten(out)[0], flatten(want)[0], flatten(tan)[0]):   # nout >= 1
        assert all(np.asarray(v).dtype == np.float32 for v in leaves), (out, want, tan)
    assert_close(out, want, rtol("ref", np.float32), what=f"{name} value")
    assert_close(tan, fd_jvp(f, args, t), rtol("jvp", np.float32), what=f"{name} tangent")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name, f, err, msg", rc.REFUSED, ids=[c[0] for c in rc.REFUSED])
def test_unimplemented_keyword_is_refused(name, f, err, msg, engine):
    with pytest.raises(err, match=rf"{CASES}:\d+: {msg}"):
        wg.grad(lambda x: np.sum(f(x)), engine=engine)(np.ones((3, 2)))


# --- writes of traced values in the trace engine ---------------------------------------


@pytest.mark.parametrize("name, f, source_error", rc.WRITES, ids=[w[0] for w in rc.WRITES])
def test_write_of_traced_value(name, f, source_error):
    """The trace engine refuses with the user's line and the ways out; the
    engine it names gives the derivative NumPy's semantics define (FD:
    a value stored into an integer array is truncated, so it has none)."""
    x = np.array([0.3, -0.7, 1.1])
    for transform in (wg.grad(f, engine="trace"),
                      lambda x: wg.jvp(f, (x,), (np.ones(3),), engine="trace"),
                      lambda x: wg.vjp(f, x, engine="trace")):
        with pytest.raises(errors.InPlaceUpdateError,
                           match=rf"{CASES}:\d+: .*in place.*engine='source' \(or 'auto'\)"):
            transform(x)
    for engine in ("source", "auto"):
        if source_error is None:
            check_grad_fd(f, (x,), engine, name)
        else:
            with pytest.raises(source_error, match=rf"{CASES}:\d+: "):
                wg.grad(f, engine=engine)(x)


@pytest.mark.parametrize("engine", ENGINES)
def test_write_advice_wg_at_works(engine):
    check_grad_fd(rc.wr_with_at, (np.array([0.3, -0.7, 1.1]),), engine, "wg.at")


# --- math builtins ----------------------------------------------------------------------
MATH_CASES = sorted(math_twins.TWINS, key=lambda f: f.__name__)


def _math_args(fn):
    return rc.MATH_ARGS.get(fn, (0.37,))


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
    user = rc.in_user_code(fn, len(args))
    want = user(*args)
    for engine in ("source", "auto"):
        out, _ = wg.vjp(user, *args, engine=engine)
        assert out.dtype == want.dtype == np.float32, (engine, out.dtype)
        assert_close(out, want, rtol("ref", np.float32), what=f"{fn.__name__} value")
        check_grad_fd(lambda *a: np.sum(user(*a)), args, engine, fn.__name__)
    twin = re.escape(math_twins.numpy_name(fn))
    with pytest.raises(errors.UnsupportedFunctionError,
                       match=rf"{CASES}:\d+: math\.{fn.__name__} was called .* Use {twin} instead"):
        wg.grad(lambda *a: np.sum(user(*a)), engine="trace")(*args)


# --- dtypes kept, NEP 50 exactly ------------------------------------------------------


def _kind(v):
    """What NumPy's promotion sees: a Python scalar's type (weakly typed), else the dtype."""
    if type(v) in (bool, int, float, complex):
        return f"python {type(v).__name__}"
    return np.asarray(v).dtype.name


def _dtype_cases():
    unary = [rc.dt_sin, rc.dt_square_op, rc.dt_sqrt_op, rc.dt_neg, rc.dt_abs, rc.dt_np_square,
             rc.dt_mod, rc.dt_floordiv, rc.dt_exp, rc.dt_sum, rc.dt_mean, rc.dt_max, rc.dt_prod]
    binary = [rc.dt_mul, rc.dt_add, rc.dt_div, rc.dt_sub, rc.dt_pow, rc.dt_scaled_square,
              rc.dt_np_add, rc.dt_maximum, rc.dt_arctan2, rc.dt_where]
    cases = []
    for f in unary:
        cases += [(f, (k,), ENGINES) for k in rc.FLOAT_KINDS]
    cases += [(rc.dt_float, (k,), ("source",)) for k in ("pyfloat", "f32scalar")]
    for f in binary:
        cases += [(f, (a, b), ENGINES) for a in rc.OPERANDS for b in rc.OPERANDS
                  if a in rc.FLOAT_KINDS or b in rc.FLOAT_KINDS]
    cases += [(rc.dt_matmul, (a, b), ENGINES) for a in ("f32", "f64", "i64")
              for b in ("f32", "f64", "i64") if a != "i64" or b != "i64"]
    cases += [(rc.dt_getitem, (k,), ENGINES) for k in ("f32", "f64")]
    cases += [(rc.dt_builtin_max, ("pyfloat", "pyfloat"), ENGINES)]    # Python's max, min
    for a in ("f32", "f64"):
        cases += [(rc.dt_setitem, (a, b), ("source",)) for b in rc.OPERANDS if b != "i64"]
        cases += [(rc.dt_at_set, (a, b), ENGINES) for b in rc.OPERANDS if b != "i64"]
    return [pytest.param(f, kinds, engine, id=f"{f.__name__[3:]}-{'-'.join(kinds)}-{engine}")
            for f, kinds, engines in cases for engine in engines]


@pytest.mark.parametrize("f, kinds, engine", _dtype_cases())
def test_dtypes_follow_numpy(f, kinds, engine):
    args = [rc.OPERANDS[k]() for k in kinds]
    want = (rc.setitem_reference if f is rc.dt_at_set else f)(*args)
    nums = tuple(i for i, k in enumerate(kinds) if k in rc.FLOAT_KINDS)
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


FLOAT32_FUNCTIONS = ([(name, kw, [(3, 4, 2)]) for name, kw, _ in rc.KEYWORD_CALLS]
                     + [(name, f, good) for name, f, good, _ in rc.SHAPE_GUARDS])


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
    def times_v32(*xs):
        return ufunc(*xs) * rc.V32

    f, args = _held(ufunc, (0.4, 0.7, 0.3)[:ufunc.nin])
    f = f(times_v32)
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
