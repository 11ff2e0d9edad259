"""Copies merged out of generated code (``wengert/backends/python/coalesce.py``,
``liveness.py``; issue 27).

The code writer inlines sub-Programs with copies (``s_3 = s_2`` out of a branch, ``s =
s_3`` at the end of a step, ``s_4 = s`` after a loop); ``coalesce`` gives two names one
where the code never needs both at once. Checked here on hand-written functions (each
run before and after, on several inputs: the same results) and on what it must not do:
merge names that interfere (a swap, a value read after its copy is overwritten), merge
two of the user's variables (``y = y0``), a cotangent with a value, or a parameter with
a variable that takes other values.
"""
import textwrap

import numpy as np
import pytest

from wengert.backends.python.coalesce import coalesce
from wengert.core.ir import Aval, Role

F = Aval((), np.float64, weak=True)


def _names(**labels):
    """{identifier: (label, aval, role)}: ``labels`` gives the user labels ("" for a
    nameless temporary); a ``ct`` prefix is a cotangent."""
    return {k: (v, F, Role.COTANGENT if (v or k).startswith("ct") else Role.VALUE)
            for k, v in labels.items()}


def _run(src, *args):
    ns = {"np": np}
    exec(src, ns)
    return ns["f"](*args)


def _check(src, names, args_list):
    src = textwrap.dedent(src)
    out = coalesce(src, "f", names)
    for args in args_list:
        assert _run(out, *args) == _run(src, *args), out
    compile(out, "<coalesced>", "exec")
    return out


def test_a_branch_and_a_loop_carry_lose_their_copies():
    src = """
    def f(x, n):
        s = 0.0
        for i in range(n):
            if x > i:
                s_2 = s * 0.5
                s_3 = s_2
            else:
                s_1 = s + x
                s_3 = s_1
            s = s_3
        s_4 = s
        return (s_4,)
    """
    names = _names(x="x", n="n", s="s", s_1="s", s_2="s", s_3="s", s_4="s", i="i")
    out = _check(src, names, [(0.3, 4), (2.5, 3), (1.0, 0)])
    assert "s_" not in out and out.count(" = ") == 3, out     # s = 0.0, and one per branch
    assert "s = s * 0.5" in out and "s = s + x" in out


def test_a_swap_keeps_both_names():
    src = """
    def f(x, y):
        a = x
        b = y
        for i in range(3):
            a, b = b, a
        return (a, b)
    """
    names = _names(x="x", y="y", a="", b="", i="i")
    out = _check(src, names, [(1.0, 2.0)])
    assert "a, b = b, a" in out, out


def test_a_value_read_after_its_copy_is_overwritten_keeps_its_name():
    src = """
    def f(x):
        v0 = x * 2.0
        v1 = v0
        v0 = x + 1.0
        return (v0 + v1,)
    """
    out = _check(src, _names(x="x", v0="", v1=""), [(3.0,)])
    assert "v1 = v0" in out, out


def test_two_of_the_users_variables_stay_two():
    """``y = y0`` is the user's own line: ``y`` takes other values, the parameter not."""
    src = """
    def f(y0, a):
        y = y0
        while abs(y * y - a) > 1e-12:
            y_1 = 0.5 * (y + a / y)
            y = y_1
        return (y,)
    """
    out = _check(src, _names(y0="y0", a="a", y="y", y_1="y"), [(1.0, 2.0)])
    assert "y = y0" in out and "y_1" not in out, out


def test_a_parameter_takes_in_only_its_versions_and_temporaries_assigned_once():
    src = """
    def f(h, x0):
        h_1 = h
        x2 = x0
        for i in range(2):
            x2 = x2 * h_1
        return (x2,)
    """
    out = _check(src, _names(h="h", h_1="h", x0="x0", x2="", i="i"), [(0.5, 3.0)])
    assert "h_1" not in out and "x2 = x0" in out, out


def test_a_cotangent_and_a_value_are_never_one_variable():
    src = """
    def f(x):
        v1 = x * 3.0
        ct_x = v1
        ct_x = ct_x + 1.0
        return (ct_x,)
    """
    out = _check(src, _names(x="x", v1="", ct_x="ct_x"), [(2.0,)])
    assert "ct_x = v1" in out, out


def test_copies_into_names_nothing_reads_go():
    src = """
    def f(x):
        v0 = x * 2.0
        ct5, ct_x = v0, x
        return (ct_x,)
    """
    out = _check(src, _names(x="x", v0="", ct5="", ct_x="ct_x"), [(2.0,)])
    # (a dead computation is the Program's to drop, not this pass's: ``v0`` stays)
    assert "ct5" not in out and "ct_x = x" in out and out.count(" = ") == 2, out


def test_an_emptied_branch_goes_and_its_heading_with_it():
    src = """
    def f(x, c):
        a = x
        if c:
            # grad of: y = x * 2   (m.py:3)
            b = a * 2.0
            a = b
        else:
            # grad of: y = x   (m.py:5)
            b = a
            a = b
        return (a,)
    """
    out = _check(src, _names(x="", c="", a="", b=""), [(1.0, True), (1.0, False)])
    assert "else" not in out and "(m.py:5)" not in out, out
    assert "(m.py:3)" in out


def test_an_emptied_if_body_tests_not():
    """(The test of the ``if``, renamed by the same merge, is read under its new name:
    the fuzzer once met ``if not v83:`` where ``v83`` had become ``v89``.)"""
    src = """
    def f(x, c):
        a = x * 1.5
        c_1 = c
        if c_1:
            b = a
        else:
            b = a + 1.0
        return (b,)
    """
    out = _check(src, _names(x="", c="", a="", b="", c_1=""), [(1.0, True), (1.0, False)])
    assert "if not c:" in out and "else" not in out and "c_1" not in out, out


def test_a_negation_read_once_by_a_sum_moves_into_it():
    src = """
    def f(x, y):
        ct9 = -y
        v1 = x + ct9
        ct12 = -x
        acc = np.zeros(2)
        acc[0] += ct12
        return (v1, acc[0])
    """
    out = _check(src, _names(x="", y="", ct9="", v1="", ct12="", acc=""), [(1.0, 2.5)])
    assert "x - y" in out and "acc[0] -= x" in out and "-y" not in out, out


def test_a_comprehension_keeps_its_own_names():
    """A name a comprehension binds is its own: not renamed, not live outside it."""
    src = """
    def f(x):
        p_1 = x
        v0 = [p_1 * p for p in range(3)]
        p = p_1
        return (p, v0[2])
    """
    out = _check(src, _names(x="x", p="p", p_1="p", v0=""), [(2.0,)])
    assert "for p in range(3)" in out, out


@pytest.mark.parametrize("n", [0, 1, 5])
def test_break_and_continue_keep_what_the_exit_reads(n):
    src = """
    def f(x, n):
        s = x
        t = x
        for i in range(n):
            if i == 3:
                break
            t_1 = t * 2.0
            if i == 1:
                continue
            s = t
            t = t_1
        return (s, t)
    """
    _check(src, _names(x="x", n="n", s="s", t="t", t_1="t", i="i"), [(1.5, n)])
