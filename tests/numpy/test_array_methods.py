"""NumPy's face for traced values (``wengert/numpy/array_methods.py``, which
``core/tracer.py`` forwards to): a traced array's method takes ndarray's
parameters by name, and ``x.var()`` is ndarray's method, not hidden by the
staged tracer's own ``var`` attribute (its Program variable).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import verify
from wengert.core.trace import eval_program
from wengert.numpy.array_methods import ArrayMethods

import robust_prims_cases as rc
from checks import assert_close


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


# --- x.var() is ndarray's method --------------------------------------------------
def test_make_program_traces_the_var_method():
    """``x.var()`` under the trace frontend: the staged tracer's ``var``
    attribute (its Program variable) must not hide ndarray's ``var`` method."""
    x = np.array([0.5, -1.0, 2.0])
    prog = verify(wg.make_program(lambda x: x.var() + x.std(), x))
    assert_close(eval_program(prog, [x])[0], np.var(x) + np.std(x), 1e-12, what="x.var()")
