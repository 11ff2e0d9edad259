"""The converter (``wengert/frontends/source/rewrite.py``): ``break``,
``continue`` and ``return`` become flags of their own loop and function.

A break, continue or return sets the flag of its own loop (an inner loop's
break once stopped the outer loop too), a return inside a loop inside an if
reaches the function, and the statements after a return inside a traced if
run on the path that did not return; a variable unassigned on a path is
refused (typed) rather than filled.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg

import trust_cases as tc
from checks import assert_close, rtol


def _fd(f, x, eps=1e-5):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# --- control flow ----------------------------------------------------------------------
def _trace_value_and_grad(f, x):
    return wg.value_and_grad(f, engine="trace")(x)


@pytest.mark.parametrize("name,points", [
    ("inner_break", (2.0, -3.0)),               # (0.25, 0.125) at 2: not (1.0, 0.5)
    ("inner_break_traced", (0.5, 150.0, 2500.0)),
    ("inner_continue", (0.7, -1.2)),
    ("return_in_nested_loop_in_if", (0.5, 3.0, 20.0)),
    ("return_in_while_in_for", (0.5, 2.0, 9.0)),
])
def test_each_loop_exits_with_its_own_flag(name, points):
    """A break, continue or return sets the flag of its own loop (an inner
    loop's break once stopped the outer loop too), and a return inside a
    loop inside an if reaches the function."""
    f = getattr(tc, name)
    for x in points:
        got = wg.value_and_grad(f, engine="source")(x)
        want = _trace_value_and_grad(f, x)
        assert_close(got, want, rtol("exact", np.float64))
        assert_close(got[1], _fd(f, x), rtol("program", np.float64))
    assert wg.value_and_grad(tc.inner_break, engine="source")(2.0) == (0.25, 0.125)


def test_return_in_traced_if_inside_python_if():
    """The statements after the return assign b on the path that did not
    return: b is an operand there (it was dropped as unassigned, and the
    function returned the return value's zero fill: (0, 0) at 0.5)."""
    g = wg.value_and_grad(tc.return_in_traced_if_in_python_if, engine="source")
    assert g(0.5) == (1.0, 2.0) and g(1.5) == (1.5, 1.0)


def test_variable_unassigned_only_where_the_function_returned():
    """Unassigned on a path whose return depends on traced values: the
    source engine cannot tell it is never read, so it refuses (typed) rather
    than fill it; auto takes the trace engine, which is right."""
    with pytest.raises(wg.UnsupportedSyntax, match="'w'"):
        wg.value_and_grad(tc.assigned_except_where_returned, engine="source")(1.5)
    with pytest.warns(UserWarning, match="trace engine"):
        g = wg.value_and_grad(tc.assigned_except_where_returned)
        assert g(1.5) == (4.5, 6.0) and g(-2.0) == (2.0, -1.0)


def test_reading_an_unassigned_variable_is_an_error():
    """Issue 10: a variable read where it was never assigned is a typed error, never a value."""
    with pytest.raises(wg.UnsupportedSyntax, match="'b'"):
        wg.grad(tc.reads_unassigned, engine="source")(0.5)
