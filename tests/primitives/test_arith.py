"""The arithmetic rows (``wengert/primitives/arith.py``) make no array of
the operand's size the mathematics does not need: ``sub``'s transpose sums
the cotangent to the subtrahend's shape and then negates it, so ``x - a``
with ``a`` broadcast costs a sum and the sign of a small array, never a
negated copy of the cotangent. Read off the gradient's Program; the
gradient against the trace engine and finite differences.
"""
import numpy as np
import pytest

import wengert as wg

from checks import assert_close, fd_jvp, rtol


RNG = np.random.default_rng(11)


def _size(aval):
    return int(np.prod(aval.shape))


def _eqns(prog):
    for e in prog.eqns:
        yield e
        for v in e.params.values():
            subs = v if isinstance(v, tuple) else (v,)
            for p in subs:
                if hasattr(p, "eqns"):
                    yield from _eqns(p)


# --- sub: the sign on the smaller array ---------------------------------------
def minus_scalar(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def minus_row(x):
    return np.sum(np.sin(x - np.mean(x, axis=0)) ** 2)


def minus_column(x):
    return np.sum(np.tanh(x - np.sum(x * x, axis=1)[:, None]))


def minus_keepdims(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))


def minus_float(x):
    return np.sum(np.cos(x - np.sum(x) * 0.1))


SUBS = [minus_scalar, minus_row, minus_column, minus_keepdims, minus_float]


def _matrix():
    return RNG.standard_normal((6, 5))


@pytest.mark.parametrize("fun", SUBS, ids=lambda f: f.__name__)
def test_sub_transpose_negates_the_summed_cotangent(fun):
    x = _matrix()
    g = wg.grad(fun, engine="source")
    g(x)
    negs = [e for e in _eqns(g.program) if e.prim.name == "neg"]
    big = [e for e in negs if _size(e.outputs[0].aval) == x.size]
    assert not big, f"a negation of x's size in\n{g.program}"


@pytest.mark.parametrize("fun", SUBS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_against_trace_and_differences(fun, dtype):
    x = _matrix().astype(dtype)
    g = wg.grad(fun, engine="source")(x)
    assert g.dtype == dtype
    assert_close(g, wg.grad(fun, engine="trace")(x), rtol("ad", x))
    t = RNG.standard_normal(x.shape)
    assert_close(np.sum(g * t), fd_jvp(fun, (x,), (t,)), rtol("program", x))
    # forward mode: the jvp, against the gradient
    _, dot = wg.jvp(fun, (x,), (t.astype(dtype),), engine="source")
    assert_close(dot, np.sum(g * t), rtol("program", x))
