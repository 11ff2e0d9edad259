"""GradBench ``saddle``: a saddle point by nested gradient descent.

    x* = argmin_x max_y f(x, y),    y* = argmax_y f(x*, y),
    f(x, y) = (x0^2 + x1^2) - (y0^2 + y1^2)

Both searches start at the input point and use GradBench's descent
(``argmin`` below). The outer search needs the gradient of
``max_y f(x, y)`` in ``x``, and that value is itself computed by a descent
that uses the gradient of ``f`` in ``y``: wengert differentiates the inner
search, its ``while`` loop and the inner derivative inside it, which is a
derivative of a derivative. The four GradBench functions choose forward
(``f``, ``wg.jacfwd``) or reverse (``r``, ``wg.grad``) mode for the outer
and the inner derivative; the final ``argmax`` uses the outer one's mode.
"""
from __future__ import annotations

import numpy as np

import wengert as wg

from ..common import Function, ad_options


# --- GradBench's gradient descent ----------------------------------------------
def argmin(f, grad_f, x, data):
    """GradBench's descent for ``f(x, data)``: steps of ``eta`` along the
    gradient, ``eta`` doubled after 10 accepted steps and halved after a
    rejected one; stops when the gradient or the step is below 1e-5."""
    fx = f(x, data)
    gx = grad_f(x, data)
    i = 0
    eta = 1e-5
    x_new = x       # the source engine wants names assigned in one branch bound before
    f_new = fx
    while np.sqrt(np.sum(gx * gx)) > 1e-5:
        if i == 10:
            eta = eta * 2.0
            i = 0
        else:
            x_new = x - eta * gx
            if np.sqrt(np.sum((x - x_new) * (x - x_new))) <= 1e-5:
                break
            f_new = f(x_new, data)
            if f_new < fx:
                x = x_new
                fx = f_new
                gx = grad_f(x, data)
                i = i + 1
            else:
                eta = eta / 2.0
                i = 0
    return x


def gradient(f, mode, engine, argnums=0, backend="python"):
    """The gradient of scalar ``f`` in its first argument (or ``argnums``):
    reverse mode (``wg.grad``) or forward mode (``wg.jacfwd``, one direction
    per entry), with wengert's ``engine`` and ``backend``."""
    ad = ad_options(engine, backend)
    if mode == "r":
        return wg.grad(f, argnums, **ad)
    return wg.jacfwd(f, argnums, **ad)


# --- the problem ---------------------------------------------------------------
def f(x, y):
    return np.sum(x * x) - np.sum(y * y)


def neg_f(y, x):
    """-f as a function of y: maximising f is minimising this."""
    return -f(x, y)


def max_f(x, inner):
    """max_y f(x, y), by a descent from ``start`` using ``grad_y``; ``inner``
    is ``(start, grad_y)`` with ``grad_y`` the gradient of ``neg_f``."""
    start, grad_y = inner
    return f(x, argmin(neg_f, grad_y, start, x))


def saddle(start, grad_x, grad_y, grad_y_outer):
    """The GradBench output: x* and y* concatenated."""
    x = argmin(max_f, grad_x, start, (start, grad_y))
    y = argmin(neg_f, grad_y_outer, start, x)
    return np.concatenate([x, y])


# --- GradBench glue ------------------------------------------------------------
def functions(engine="auto", backend="python"):
    def variant(outer, inner):
        grad_y = gradient(neg_f, inner, engine, backend=backend)
        grad_x = gradient(max_f, outer, engine, backend=backend)
        grad_y_outer = gradient(neg_f, outer, engine, backend=backend)

        def run(start):
            return saddle(start, grad_x, grad_y, grad_y_outer)
        return Function(lambda input: (np.asarray(input["start"], float),), run,
                        lambda r: r.tolist())

    return {o + i: variant(o, i) for o in "fr" for i in "fr"}


def make_input(start=(1.0, 1.0)):
    """GradBench's input: the start point (the eval sends (1, 1))."""
    return {"start": list(start)}
