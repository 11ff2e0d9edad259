"""What converted code calls (``wengert/frontends/source/runtime.py``): the
user's functions are converted, wengert's own derivatives are called (a
trace-engine ``grad`` inside a source-engine function, its wrapper carrying
the user's function as ``__wrapped__``), and a callable object is called
once per call (generating code finds the result's shape on a copy).
"""
from __future__ import annotations

import numpy as np

import wengert as wg

import robust_source_cases as rc
import trust_cases as tc
from checks import assert_close, rtol


def test_wengert_derivative_called_inside_converted_code():
    """A trace-engine ``grad`` called in a source-engine function is called,
    not converted (its wrapper carries the user's function as __wrapped__)."""
    assert_close(wg.grad(tc.grad_inside, engine="source")(2.0), 9.0 * 4.0,
                 rtol("exact", np.float64))
    g = wg.grad(lambda x, y: np.sum(np.sin(x) * y), engine="trace")
    prog = wg.make_program(g, np.ones(3), np.ones(3))
    assert [str(v.aval.shape) for v in prog.outputs] == ["(3,)"]   # the gradient's, not f's


def test_a_callable_object_is_called_once_per_call():
    """Found the result's shape on a copy: generating code calls nothing."""
    rc.COUNTER.calls = 0
    g = wg.grad(rc.calls_a_counter, engine="source")
    x = np.ones(3)
    for k in (1, 2, 3):
        assert_close(g(x), np.full(3, 2.0 * k), 0.0, 0.0, what=f"call {k}")
        assert rc.COUNTER.calls == k
