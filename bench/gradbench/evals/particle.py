"""GradBench ``particle``: aim a charged particle at the origin, by nested
gradient descent.

A particle starts at (0, 8) with velocity (0.75, 0) and moves in the field of
two unit charges at (10, 10 - w) and (10, 0): its acceleration is minus the
gradient of the potential ``p(x; w)`` in ``x``. Naive Euler steps of 0.1 run
until it crosses the x axis; the cost is the square of that crossing's
x coordinate (linearly interpolated). GradBench's descent (``saddle.argmin``)
then minimises the cost over ``w``.

The cost's gradient in ``w`` differentiates the whole simulation, its
``while`` loop and the derivative of the potential in every step: a
derivative of a derivative. The four GradBench functions choose forward
(``f``, ``wg.jacfwd``) or reverse (``r``, ``wg.grad``) mode for the outer
derivative (in ``w``) and the inner one (in ``x``).
"""
from __future__ import annotations

import numpy as np

from ..common import Function
from .saddle import argmin, gradient

DELTA_T = 1e-1


# --- the problem ---------------------------------------------------------------
def potential(x0, x1, w):
    """1/|x - (10, 10 - w)| + 1/|x - (10, 0)| at the point x = (x0, x1)."""
    dx = x0 - 10.0
    dy = x1 - 10.0 + w
    return 1.0 / np.sqrt(dx * dx + dy * dy) + 1.0 / np.sqrt(dx * dx + x1 * x1)


def naive_euler(ws, grad_potential):
    """The squared miss distance at the origin for ``w = ws[0]``;
    ``grad_potential(x0, x1, w)`` is the gradient of ``potential`` in the
    point, a pair."""
    w = ws[0]
    x0, x1 = 0.0, 8.0
    v0, v1 = 0.75, 0.0
    a0, a1 = grad_potential(x0, x1, w)
    while x1 + DELTA_T * v1 > 0.0:
        x0 = x0 + DELTA_T * v0
        x1 = x1 + DELTA_T * v1
        v0 = v0 - DELTA_T * a0
        v1 = v1 - DELTA_T * a1
        a0, a1 = grad_potential(x0, x1, w)
    # the crossing, by linear interpolation along the next step
    x0 = x0 + DELTA_T * v0
    x1 = x1 + DELTA_T * v1
    x0_f = x0 - x1 / v1 * v0
    return x0_f * x0_f


# --- GradBench glue ------------------------------------------------------------
def functions(engine="auto", backend="python"):
    def variant(outer, inner):
        grad_x = gradient(potential, inner, engine, argnums=(0, 1), backend=backend)
        grad_w = gradient(naive_euler, outer, engine, backend=backend)

        def run(w0):
            return argmin(naive_euler, grad_w, w0, grad_x)
        return Function(lambda input: (np.array([float(input["w"])]),), run,
                        lambda r: float(r[0]))

    return {o + i: variant(o, i) for o in "fr" for i in "fr"}


def make_input(w=0.0):
    """GradBench's input: the starting control parameter (the eval sends 0)."""
    return {"w": w}
