"""``y op= v`` writes into an array ``y``: NumPy keeps ``y``'s dtype (casting
the result by the ``same_kind`` rule, raising where that rule refuses) and
its shape (raising where the result would broadcast to a larger one). The
source engine rewrites ``y op= v`` as a new value, so it must give the new
value ``y``'s dtype and shape, or raise where NumPy raises. Before, a float32
``y += x`` of a float64 ``x`` became float64 (another value, silently), and
``int += float`` and a broadcasting write computed where NumPy raises.

Every case is run in plain NumPy first: where NumPy raises, both engines
must raise a typed error; where it computes, the value and its dtype must
be NumPy's, and the gradient that of finite differences."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import InPlaceUpdateError, WengertError

from checks import FD_EPS_F32_OUTPUT, JVP_RTOL_F32, JVP_RTOL_F64, assert_close

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
