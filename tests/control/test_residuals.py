"""Rematerialization of a loop body's cheap scalar residuals
(``wengert/control/residuals.py``, ``recompute_residuals``): the reverse loop
recomputes what a Newton step's derivative needs from its carry alone
instead of storing six values a step, with the stored values' results bit
for bit; costly operations (``np.sin``) stay stored.
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.control import while_loop
from wengert.control.residuals import recompute_residuals
from wengert.core.ir import Aval, verify
from wengert.core.staging import stage
from wengert.testing import check_grads
from wengert.transforms.partial_eval import linearize_program
from wengert.transforms.vjp import vjp_program

from control_cases import stored_per_iteration


def _cube_root(a):
    """Newton's iteration for a ** (1/3): y - (y*y*y - a) / (3*y*y)."""
    s = Aval((), np.float64)
    c = stage(lambda a, y: [np.abs(y * y * y - a) >= 1e-12], [s, s], name="not_converged")
    b = stage(lambda a, y: [y - (y * y * y - a) / (3 * y * y)], [s, s], name="cube_step")
    y, count = while_loop(c, b, [a], [a])
    return y


def test_cheap_scalar_residuals_of_a_loop_are_recomputed_not_stored():
    """The reverse loop recomputes what the Newton step's derivative needs from
    y alone (the forward loop would otherwise store six values a step); the
    derivative is d a^(1/3)/da, in every mode."""
    prog = vjp_program(wg.make_program(_cube_root, 2.0))
    verify(prog)
    assert stored_per_iteration(prog, "while_loop") == 1
    for a in (2.0, 0.3, 7.5):
        assert wg.grad(_cube_root)(a) == pytest.approx(a ** (-2 / 3) / 3, rel=1e-12)
        assert wg.jvp(_cube_root, (a,), (1.0,))[1] == pytest.approx(a ** (-2 / 3) / 3,
                                                                   rel=1e-12)
    assert wg.grad(_cube_root)(1.0) == 1.0           # no step: y = a
    check_grads(_cube_root, (2.0,), order=2, eps=1e-5, rtol=1e-6)
    # a for loop alike: s * s and s + s come from s and i from the index
    def f(x):
        return wg.fori_loop(6, lambda i, s: s - 0.1 * s * s * i + x, x)

    prog = vjp_program(wg.make_program(f, 0.5))
    assert stored_per_iteration(prog, "for_loop") == 1
    check_grads(f, (0.5,), order=2)
    # np.sin and np.cos are no cheap operations: sin(s) and cos(s) are stored
    def g(x):
        return wg.fori_loop(6, lambda i, s: np.sin(s) * x, x)

    assert stored_per_iteration(vjp_program(wg.make_program(g, 0.5)), "for_loop") == 2
    check_grads(g, (0.5,), order=2)


def _bits(values):
    """Values compared bit for bit (signed zeros too), with their dtypes."""
    return [(np.asarray(v).dtype, np.asarray(v).tobytes()) for v in values]


def test_recomputed_residuals_give_the_stored_ones_values():
    """recompute_residuals on a Newton step (cube root): one stored value in
    place of six, and the linear body computes what it did from them."""
    f64 = Aval((), np.float64)
    body = stage(lambda a, y: [y - (y * y * y - a) / (3 * y * y)], [f64, f64], name="step")
    known, lin, nres = linearize_program(body, [True, True])
    known2, lin2, nres2 = recompute_residuals(known, lin, nres, 1, free=known.inputs[:1])
    assert nres == 6 and nres2 == 2              # the carry y, and a (a free const)
    assert {id(v) for v in known2.outputs[1:]} == {id(v) for v in known.inputs}
    verify(known2)
    verify(lin2)
    for a, y, ta, ty in [(2.0, 1.3, 1.0, 0.0), (2.0, 1.3, 0.0, 1.0), (-5.0, 0.4, 0.3, -2.0)]:
        outs = interpret(known, a, y)
        outs2 = interpret(known2, a, y)
        assert _bits(outs[:1]) == _bits(outs2[:1])
        want = interpret(lin, *outs[1:], ta, ty)
        assert _bits(interpret(lin2, *outs2[1:], ta, ty)) == _bits(want)
    # np.sin is not cheap: its cosine stays a stored residual
    body = stage(lambda a, y: [y - np.sin(y) * a], [f64, f64], name="sin_step")
    known, lin, nres = linearize_program(body, [True, True])
    assert recompute_residuals(known, lin, nres, 1, free=known.inputs[:1])[2] == nres
