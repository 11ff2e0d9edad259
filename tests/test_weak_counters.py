"""A loop's index is a Python int, weakly typed (NEP 50): ``x[i] * i`` of a
float32 ``x`` is float32 in NumPy. The source engine held a ``range`` loop's
counter as an int64 array value, so ``s = s + x[i] * i`` became float64, the
loop's carry was widened and the value (and its gradient's dtype) differed
from NumPy's with no error; the gradient then failed in the symbolic-length
arithmetic (a multi-result loop read as a number). Each program here mixes
a loop index with float32 (and float64) values: the value must be NumPy's
bit for bit, of NumPy's dtype, and the gradient that of the trace engine
(which runs NumPy) and of finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg

from checks import FD_EPS_F32_OUTPUT, JVP_RTOL_F32, assert_close


def times_index(x):
    s = x[0]
    for i in range(1, x.shape[0]):
        s = s + x[i] * i
    return s


def plus_index(x):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s = s + (x[i] + i) ** 2
    return s


def over_index(x):
    s = x[0]
    for i in range(2, x.shape[0], 2):
        s = s + x[i] / (i + 1)
    return s


def reversed_index(x):
    n = x.shape[0]
    s = x[0] * 0
    for i in range(n - 1, -1, -1):
        s = s * 0.5 + x[i] * (n - i)
    return s


def while_index(x):
    s = x[0]
    i = 1
    while i < x.shape[0]:
        s = s + x[i] * i
        i += 1
    return s


def array_times_index(x):
    acc = x * 0
    for i in range(3):
        acc = acc + x * i
    return np.sum(acc)


PROGRAMS = [times_index, plus_index, over_index, reversed_index, while_index,
            array_times_index]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_index_is_weakly_typed(f, dtype):
    x = np.array([0.1, 0.5, -0.3, 0.7, 0.25, 1.5], dtype)
    want = f(x.copy())
    value, grad = wg.value_and_grad(f, engine="source")(x.copy())
    assert np.asarray(value).dtype == np.asarray(want).dtype == dtype
    assert value == want                                   # bit for bit
    t_value, t_grad = wg.value_and_grad(f, engine="trace")(x.copy())
    assert grad.dtype == t_grad.dtype == dtype
    assert_close(grad, t_grad, rtol=1e-6 if dtype is np.float32 else 1e-13)
    x64 = x.astype(np.float64)
    eps = FD_EPS_F32_OUTPUT if dtype is np.float32 else 1e-6
    fd = np.array([(f((x64 + eps * e).astype(dtype)) - f((x64 - eps * e).astype(dtype)))
                   / (2 * eps) for e in np.eye(len(x))], dtype=np.float64)
    assert_close(grad, fd, rtol=JVP_RTOL_F32 * 20 if dtype is np.float32 else 1e-6)
