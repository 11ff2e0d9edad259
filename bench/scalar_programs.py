"""Scalar programs for ``bench.source_bench``: Python floats in, a float out.

Each program is written once, as a factory taking the numpy module ``xp``:
``make_loop(numpy)`` is the plain function (and the one wengert
differentiates), ``make_loop(autograd.numpy)`` the same body for autograd.
``make_loop(math)`` also works for the programs that call only ``sin``:
``source_bench`` uses it to show what the plain call costs with ``math.sin``
instead of ``np.sin`` on Python floats. The bodies are ordinary Python:
arithmetic, ``if``, ``for``, ``while``, ``abs``, and module-level constants.

  seed000      p = 7x, r = 1/y, q = 5px, v = 2pq + 3r    (seed 000; grad wrt x, y)
  seed004      x*y + sin(x)                              (seed 004; grad wrt x, y)
  loop         100 steps of s -> s/2 + sin(i x) when s > 1, else s + x^2   (wrt x)
  horner_list  Horner's rule for a degree-50 polynomial, coefficients in a
               module-level Python list                                     (wrt x)
  horner_array the same, coefficients in a module-level NumPy array          (wrt x)
  newton       the cube root of a by Newton's method, ``while |y^3 - a| >= 1e-12``
                                                                            (wrt a)
"""
from __future__ import annotations

import numpy as np

# degree-50 polynomial sum_k c_k x^k with c_k = (-1)^k / (k + 1), k = 0..50 (a
# truncated log(1+x)/x), stored highest degree first, as Horner's rule reads them
HORNER_COEFFS = [(-1.0) ** k / (k + 1) for k in range(50, -1, -1)]
HORNER_COEFFS_ARRAY = np.array(HORNER_COEFFS)

NEWTON_TOL = 1e-12


def make_seed000(xp):
    """Seed 000: a straight-line program of two inputs."""
    def seed000(x, y):
        p = 7 * x
        r = 1 / y
        q = p * x * 5
        v = 2 * p * q + 3 * r
        return v
    return seed000


def make_seed004(xp):
    """Seed 004: z = x*y + sin(x)."""
    def seed004(x, y):
        return x * y + xp.sin(x)
    return seed004


def make_loop(xp):
    """A 100-step loop whose branch depends on the running value."""
    def loop(x):
        s = x
        for i in range(100):
            if s > 1.0:
                s = s * 0.5 + xp.sin(x * i)
            else:
                s = s + x * x
        return s
    return loop


def make_horner_list(xp):
    """p(x) = sum_k c_k x^k by Horner's rule; c_k from a Python list."""
    def horner_list(x):
        acc = 0.0
        for c in HORNER_COEFFS:
            acc = acc * x + c
        return acc
    return horner_list


def make_horner_array(xp):
    """The same polynomial; c_k from a NumPy array."""
    def horner_array(x):
        acc = 0.0
        for c in HORNER_COEFFS_ARRAY:
            acc = acc * x + c
        return acc
    return horner_array


def make_newton(xp):
    """y = a^(1/3) by Newton's method on y^3 = a, from y = a; d/da through the iterations."""
    def newton(a):
        y = a
        while abs(y * y * y - a) >= NEWTON_TOL:
            y = y - (y * y * y - a) / (3 * y * y)
        return y
    return newton


# (name, factory, arguments, argnums, whether make(math) is the same program)
PROGRAMS = [
    ("seed000 2pq+3r (x,y)", make_seed000, (2.0, 3.0), (0, 1), False),
    ("seed004 x*y+sin(x) (x,y)", make_seed004, (0.5, 4.2), (0, 1), True),
    ("loop 100 steps + branch", make_loop, (1.05,), 0, True),
    ("horner deg 50, list", make_horner_list, (0.9,), 0, False),
    ("horner deg 50, array", make_horner_array, (0.9,), 0, False),
    ("newton cbrt while-loop", make_newton, (2.0,), 0, False),
]
