"""``np.cumprod`` and its derivative (a linear recurrence, ``primitives/scan.py``'s
``linrec``) compile under numba: ``cumprod`` along an axis is a numba helper over the rows
(numba's own takes no axis), and the recurrence, NumPy code of wengert's own in the Python
backend (by blocks), is its twin in numba's subset (``linrec_loops``, place by place). The
derivatives equal the Python backend's (forward and reverse, second order, an axis long
enough for the Python code's blocks), and the generated text runs without wengert.

What once came back otherwise: every derivative of ``cumprod`` (and of ``cumprod`` along an
axis, even its plain value) ran the Python backend with a ``NumbaFallbackWarning``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg

from checks import assert_close, fd_jvp, rtol


pytestmark = pytest.mark.numba


def along_rows(x):
    return np.sum(np.cumprod(x * 0.999, axis=1) ** 2)


def along_columns(x):
    return np.sum(np.cumprod(x, axis=0) * np.arange(x.shape[1]))


def flat(x):
    return np.sum(np.cumprod(x[:, 0] * 0.99) * np.arange(x.shape[0]))


def middle_axis(x):
    return np.sum(np.cumprod(np.stack([x, 1.01 * x, 0.98 * x], axis=1), axis=1) ** 2)


FUNCTIONS = (along_rows, along_columns, flat, middle_axis)


def _x(n=4, m=6, seed=3):
    return np.random.default_rng(seed).uniform(0.6, 1.3, size=(n, m))


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_equals_the_python_backends(fun):
    g = wg.grad(fun, backend="numba", fallback=False)
    x = _x()
    got = g(x)
    assert_close(got, wg.grad(fun)(x), 1e-12)
    t = np.cos(np.arange(x.size)).reshape(x.shape)
    assert_close(np.sum(got * t), fd_jvp(fun, (x,), (t,)), rtol("jvp"))
    # an axis long enough for the Python code's blocks (> 4 x 32 places); the same code
    x = _x(m=300)
    assert_close(g(x), wg.grad(fun)(x), 1e-12)


@pytest.mark.parametrize("fun", [along_rows, middle_axis], ids=lambda f: f.__name__)
def test_forward_mode_equals_the_python_backends(fun):
    x = _x(3, 4)
    t = np.sin(np.arange(x.size)).reshape(x.shape)
    got = wg.jvp(fun, (x,), (t,), backend="numba", fallback=False)
    want = wg.jvp(fun, (x,), (t,))
    assert_close(got[0], want[0], 1e-13)
    assert_close(got[1], want[1], 1e-12)


def test_second_order_equals_the_python_backends():
    # (a Hessian of the 1-D case: numba compiles the larger ones in minutes, issue 29)
    x = _x(5, 2)
    assert_close(wg.hessian(flat, backend="numba", fallback=False)(x), wg.hessian(flat)(x), 1e-12)


def test_the_code_runs_without_wengert():
    x = _x()
    g = wg.grad(along_rows, backend="numba", fallback=False)
    g(x)
    assert "def linrec_loops(" in g.source and "def cumprod_last_axis(" in g.source
    namespace = {"np": np}
    exec(g.source, namespace)
    # the buffers kept between calls (``scratch``), where the code takes them: empty ones
    kept = sorted(set(re.findall(r"scratch\[(\d+)\]", g.source)))
    got = namespace["along_rows_grad"](x, *([tuple(np.empty(0) for _ in kept)] if kept else []))
    assert_close(got[0] if kept else got, wg.grad(along_rows)(x), 1e-12)
