"""Explicit duplication (``wengert/transforms/dup.py``): a variable used n
times is split by n - 1 ``dup`` equations; the program keeps its values and
its vjp (dup's transpose adds the two cotangents).
"""
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import verify
from wengert.transforms.dup import explicit_dup
from wengert.transforms.vjp import vjp_program


def _prims(prog):
    return [e.prim.name for e in prog.eqns]


def test_explicit_dup_splits_a_variable_used_three_times():
    prog = explicit_dup(wg.make_program(lambda x: x * x + x, 2.0))
    verify(prog)
    assert _prims(prog).count("dup") == 2          # three uses need two dups
    assert interpret(prog, 2.0)[0] == 6.0
    _, gx = interpret(vjp_program(prog), 2.0, 1.0)
    assert gx == pytest.approx(5.0)
