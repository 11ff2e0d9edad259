"""The rule helpers rows share (``wengert/core/rules.py``): shape rules and
dtype promotion, each run over its whole class in both engines.

* shape rules: every rule that checks its operands refuses bad shapes with
  ``ShapeMismatchError`` naming the user's line, also after a derivative of
  the same function ran at good shapes (a remembered answer, compiled code or
  a concrete NumPy evaluation must not skip the check);
* dtypes (NEP 50, ``result_dtype``): for each family of functions and each
  mix of operand kinds (float32 and float64 arrays, Python float and int,
  integer array, float32 scalar) the primal has NumPy's dtype (a Python float
  stays one), each gradient its input's, and a jvp's tangent its output's;
  float32 inputs give float32 gradients.

The cases are ``robust_prims_cases.py``'s (errors name their lines there).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors

import robust_prims_cases as rc
from checks import assert_close, dot_product_check, fd_jvp, norm, rtol


ENGINES = ("trace", "source")
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are


# --- shape rules: a guard always runs ------------------------------------------------
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
