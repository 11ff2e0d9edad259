"""What converted code calls for expressions
(``wengert/frontends/source/ops.py``): augmented assignments, conditional
expressions and boolean operators, shapes and lengths.

* ``y op= v`` writes into an array ``y``: NumPy keeps ``y``'s dtype (casting
  the result by the ``same_kind`` rule, raising where that rule refuses) and
  its shape (raising where the result would broadcast to a larger one). The
  source engine rewrites ``y op= v`` as a new value (``augmented``), so it
  must give the new value ``y``'s dtype and shape, or raise where NumPy
  raises. Before, a float32 ``y += x`` of a float64 ``x`` became float64
  (another value, silently), and ``int += float`` and a broadcasting write
  computed where NumPy raises. Every case is run in plain NumPy first: where
  NumPy raises, both engines must raise a typed error; where it computes,
  the value and its dtype must be NumPy's, and the gradient that of finite
  differences.
* shapes and lengths stay Python values; a shape from a traced value is a
  ``ConcretizationError``;
* conditional expressions and selects with Python float branches have zero
  tangents; a draw on one path of ``a or b`` / ``y if c else z`` is made on
  its path only, and nested conditional expressions are looked at once.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import InPlaceUpdateError
from wengert.core.ir import verify

import robust_source_cases as rc
import source_cases as C
from checks import FD_EPS_F32_OUTPUT, JVP_RTOL_F32, JVP_RTOL_F64, assert_close
from source_corpus import X3


# --- y op= v: NumPy's dtype and shape, or NumPy's refusal ---------------------------
X = np.array([0.7, -0.3, 1.9])
W = np.array([1.3, 0.4, -2.1])
DTYPES = [np.float32, np.float64, np.int64, np.complex128]


def _x(x):
    return x


def _x32(x):
    return x.astype(np.float32)


def _int(x):
    return np.arange(1, 4)


def _float(x):
    return 0.5


def _row(x):
    return x[None, :] * np.ones((2, 1))      # broadcasts y to (2, 3)


# v, from the float64 input x of shape (3,)
OPERANDS = {"x": _x, "x32": _x32, "int": _int, "float": _float, "row": _row}
OPS = ["+=", "-=", "*=", "/="]


def make(dtype, operand, op, derived):
    """``f(x)``: ``y`` a fresh array of ``dtype`` (made from ``x`` where
    ``derived``: traced in both engines), written ``y op= v``, then read."""
    v_of = OPERANDS[operand]

    def f(x):
        y = (x * 2.0).astype(dtype) if derived else np.ones(3, dtype)
        if op == "+=":
            y += v_of(x)
        elif op == "-=":
            y -= v_of(x)
        elif op == "*=":
            y *= v_of(x)
        else:
            y /= v_of(x)
        return np.sum(np.real(y) * W)
    return f


CASES = list(itertools.product(DTYPES, OPERANDS, OPS, [True, False]))


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("dtype,operand,op,derived", CASES,
                         ids=[f"{d.__name__}-{o}-{op}-{'derived' if dv else 'fresh'}"
                              for d, o, op, dv in CASES])
def test_augmented_write_keeps_numpy_semantics(engine, dtype, operand, op, derived):
    f = make(dtype, operand, op, derived)
    try:
        with np.errstate(all="ignore"):
            want = f(X.copy())
    except (TypeError, ValueError) as err:          # NumPy refuses the write
        # NumPy's kind of error (its UFuncTypeError is a TypeError), or the
        # trace engine's refusal to write a traced value into a plain array
        base = TypeError if isinstance(err, TypeError) else ValueError
        with pytest.raises((base, InPlaceUpdateError)) as got:
            wg.value_and_grad(f, engine=engine)(X.copy())
        assert isinstance(got.value, base) or engine == "trace", got.value
        return
    try:
        value, grad = wg.value_and_grad(f, engine=engine)(X.copy())
    except InPlaceUpdateError:
        # the trace engine refuses to write a traced value into a plain array
        assert engine == "trace" and not derived
        return
    assert np.asarray(value).dtype == np.asarray(want).dtype, (value, want)
    f32 = dtype is np.float32 or operand == "x32"     # rounding to float32 inside
    assert_close(value, want, rtol=JVP_RTOL_F32 if f32 else 1e-13)
    eps = FD_EPS_F32_OUTPUT if f32 else 1e-6
    fd = np.array([(f(X + eps * e) - f(X - eps * e)) / (2 * eps) for e in np.eye(3)])
    assert_close(np.real(grad), fd, rtol=JVP_RTOL_F32 * 10 if f32 else JVP_RTOL_F64)


def test_numpy_refuses_some_cases():
    """The table above covers NumPy's refusals as well as its casts: int +=
    float and a broadcast write raise in NumPy, float32 += float64 casts."""
    with pytest.raises(TypeError):
        make(np.int64, "x", "+=", False)(X.copy())
    with pytest.raises(ValueError):
        make(np.float64, "row", "+=", False)(X.copy())


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_float32_write_in_a_loop_stays_float32(engine):
    """A float32 accumulator written in a loop keeps float32 at every step,
    as NumPy's does (its rounding at each step is part of the value)."""
    def f(x):
        acc = (x * 0.0).astype(np.float32)
        for k in range(5):
            acc += x * (k + 0.1)
        return np.sum(acc * W)
    value, grad = wg.value_and_grad(f, engine=engine)(X.copy())
    want = f(X.copy())
    # bit for bit: accumulating in float64 and rounding once gives another value
    assert np.asarray(value).dtype == np.asarray(want).dtype and value == want
    fd = np.array([(f(X + 1e-3 * e) - f(X - 1e-3 * e)) / 2e-3 for e in np.eye(3)])
    assert_close(grad, fd, rtol=JVP_RTOL_F32 * 10)


# --- shapes and lengths stay Python values ----------------------------------------
def test_shapes_and_lengths_are_python_values():
    # n = x.shape[0]; m = n * 2 + len(x) - x.ndim: no equation, m is the literal 8
    prog = verify(wg.make_program(C.shapes_stay_python, X3, engine="source"))
    assert [e.prim.name for e in prog.eqns] == ["reduce_sum", "mul"]
    assert prog.eqns[1].inputs[1].val == 8 and type(prog.eqns[1].inputs[1].val) is int


# --- conditional expressions and boolean operators --------------------------------
def _fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("x", [0.5, 1.5])
def test_float_constants_in_selects_under_jvp_and_grad(engine, x):
    """``1.0 if x > 1.0 else ...`` and ``np.where(x > 1.0, 1.0, x)``: a Python
    float branch has a zero tangent (once a raw AttributeError)."""
    f = rc.conditional_expression
    out, t = wg.jvp(f, (x,), (1.0,), engine=engine)
    assert_close(t, (f(x + 1e-6) - f(x - 1e-6)) / 2e-6, 1e-6, 1e-8)
    v = np.array([0.5, 1.5, 0.9]) * x
    g = rc.where_with_a_float
    assert_close(wg.grad(g, engine=engine)(v), _fd_grad(g, v), 1e-6, 1e-8)
    out, t = wg.jvp(g, (v,), (np.ones(3),), engine=engine)
    assert_close(t, _fd_grad(g, v).sum(), 1e-6, 1e-8)


def test_a_shape_from_a_traced_value_is_a_concretization_error():
    with pytest.raises(wg.ConcretizationError, match="robust_source_cases.py"):
        wg.grad(rc.zeros_of_a_traced_length, engine="source")(np.ones(3))


@pytest.mark.parametrize("engine", ["trace", "auto"])
def test_a_shape_from_a_traced_value_is_the_trace_engines(engine):
    """``int(x[0])`` is an integer part, a constant of the derivative: the trace engine
    (which records one call) takes its value there, and ``auto`` falls back to it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = wg.grad(rc.zeros_of_a_traced_length, engine=engine)(np.ones(3))
    assert_close(g, np.ones(3), 0.0)


@pytest.mark.parametrize("name", ["draw_after_or", "draw_in_a_conditional_expression"])
@pytest.mark.parametrize("x0", [0.5, -0.5])
def test_a_draw_on_one_path_of_an_expression(name, x0):
    """``a or draw()`` and ``y if c else draw()`` on a traced test: the draw
    is made on its path only, as in the plain call."""
    f = getattr(rc, name)
    x = np.array([x0, 0.0])
    for seed in range(4):
        rc.DRAWS.seed(seed)
        got = wg.grad(f, engine="source")(x)
        after = rc.DRAWS.rand()
        rc.DRAWS.seed(seed)
        want = wg.grad(f, engine="trace")(x)
        assert rc.DRAWS.rand() == after
        assert_close(got, want, 0.0, 0.0, what=f"seed {seed}")


@pytest.mark.parametrize("x0", [3.5, 0.01])
def test_nested_conditional_expressions_with_a_draw_are_looked_at_once(x0):
    """Twelve nested ``x if c else y`` ending in a draw: right values and
    draws, and the first look for draws is not repeated at each level (it
    cost 2 ** depth draws staged: 4.9 s where it now takes 0.1 s)."""
    from wengert.core.trace import effects_made
    f = rc.nested_conditional_expressions
    x = np.array([x0, 0.0])
    rc.DRAWS.seed(3)
    before = effects_made()
    got = wg.grad(f, engine="source")(x)
    staged = effects_made() - before
    after = rc.DRAWS.rand()
    rc.DRAWS.seed(3)
    assert_close(got, wg.grad(f, engine="trace")(x), 0.0, 0.0)
    assert rc.DRAWS.rand() == after
    assert staged < 64, staged
