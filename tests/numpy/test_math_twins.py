"""The ``math`` module's functions on traced values
(``wengert/numpy/math_twins.py``): every ``math`` function with a NumPy twin
works when given to a transform and, in the source engine, inside user code,
keeping what ``math`` returns (a Python float); the trace engine refuses it
inside user code naming the user's line and the twin; one without a twin is
refused.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors
from wengert.numpy import math_twins

import robust_prims_cases as rc
from checks import assert_close, fd_jvp, rtol


ENGINES = ("trace", "source")
HERE = os.path.basename(__file__)
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are


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


NO_TWIN = [math.gamma, math.lgamma, math.asinh, math.copysign]


@pytest.mark.parametrize("engine", ENGINES + ("auto",))
@pytest.mark.parametrize("fn", NO_TWIN, ids=[f.__name__ for f in NO_TWIN])
def test_math_builtin_without_twin_is_refused(fn, engine):
    args = (0.4, 0.7)[:2 if fn is math.copysign else 1]
    with pytest.raises(errors.UnsupportedFunctionError,
                       match=rf"{HERE}:\d+: math\.{fn.__name__} was given to a transform"):
        wg.grad(fn, engine=engine)(*args)
