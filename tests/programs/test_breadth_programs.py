"""Whole programs through every layer: ordinary scientific programs
(``breadth_programs.py``) run unchanged. The gradient of each, in the
default engine with no fallback warning, agrees with central finite
differences; where the trace engine can run the program, the two engines
agree; forward over the program (jacfwd) agrees with reverse (grad).
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import wengert as wg

import checks
from breadth_programs import PROGRAMS

NAMES = sorted(PROGRAMS)


def _setup(name):
    fun, make_args, trace_ok = PROGRAMS[name]
    args = make_args(np.random.default_rng(zlib.crc32(name.encode())))
    return fun, args, trace_ok


def _fd_grad(fun, args):
    grads = []
    for i in range(len(args)):
        def f_i(x, i=i):
            full = list(args)
            full[i] = x
            return fun(*full)
        jac = checks.fd_jacobian(f_i, (np.asarray(args[i], float),))
        grads.append(jac.reshape(np.shape(args[i])))
    return tuple(grads)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_against_finite_differences(name):
    fun, args, _ = _setup(name)
    argnums = tuple(range(len(args)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no fallback to the trace engine
        got = wg.grad(fun, argnums=argnums)(*args)
    checks.assert_close(got, _fd_grad(fun, args), checks.PROGRAM_RTOL_F64,
                        what=f"{name}: gradient vs finite differences")


@pytest.mark.parametrize("name", [n for n in NAMES if PROGRAMS[n][2]])
def test_trace_engine_agrees(name):
    fun, args, _ = _setup(name)
    argnums = tuple(range(len(args)))
    src = wg.grad(fun, argnums=argnums, engine="source")(*args)
    tr = wg.grad(fun, argnums=argnums, engine="trace")(*args)
    checks.assert_close(tr, src, checks.AD_VS_AD_RTOL_F64, what=f"{name}: trace vs source")


@pytest.mark.parametrize("name", NAMES)
def test_forward_agrees_with_reverse(name):
    fun, args, _ = _setup(name)
    argnums = tuple(range(len(args)))
    rev = wg.grad(fun, argnums=argnums)(*args)
    fwd = wg.jacfwd(fun, argnums=argnums)(*args)
    checks.assert_close(fwd, rev, checks.AD_VS_AD_RTOL_F64, what=f"{name}: jacfwd vs grad")
