"""Element-loop programs for ``bench.scaling_bench``: an array of n numbers in, a float out.

These are the loops a scientist writes over an array, one element at a time: the
programs whose gradients must cost a constant times the plain call at every n
(issue 14). Each is written once, as a factory taking the numpy module ``xp``:
``make_x(numpy)`` is the plain function and the one wengert's source engine
differentiates. Where the program writes into an array in place (``xs[i] = x``),
which neither autograd nor wengert's trace engine accepts, ``make_x_twin(xp)``
computes the same mathematics without in-place writes, the way an autograd user
writes it (values collected in a Python list, then ``xp.stack``, which both accept);
``make_x_twin(autograd.numpy)`` is the autograd function and ``make_x_twin(numpy)``
the one the trace engine differentiates. The twins' gradients are checked
against the in-place program's.

  branchy   s += x[i]**2 if x[i] > 0 else -sin(x[i]), written with if/else    (wrt x)
  euler     n explicit Euler steps of x' = f_i - x^2, each state stored with
            xs[i] = x; returns h * sum(xs**2)                          (wrt the forcing f)
  prefix    prefix products out[i] = out[i-1] * x[i], x within 1/n of 1 so the
            products stay within [1/e, e]; returns sum(out)                    (wrt x)
  heat      HEAT_STEPS explicit (Jacobi) steps of the 2-D heat equation on an
            m x m grid (m = round(sqrt(n)), so about n cells), u[i, j] read and
            new[i, j] written in a double loop; returns sum(u**2)   (wrt the initial u)
  relax     the fixed point y = (cos(y) + x) / 2 by iteration, ``while`` the root
            mean square of the last step exceeds RELAX_TOL: an array carry of n
            numbers through ~20 iterations; returns sum(y**2)               (wrt x)
  horner    Horner's rule p = p * t + c[i] over n coefficients    (wrt c and t)

``PROGRAMS`` lists them as ``Program`` records: the factories, ``inputs(n, rng)``
building the arguments for a nominal size n, and the ``argnums`` differentiated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

HEAT_STEPS = 3
HEAT_RATE = 0.2            # dt / dx^2: below 1/4, the explicit scheme is stable
RELAX_TOL = 1e-6           # the while loop stops when a step's root mean square is under this
HORNER_T = 0.9


# --- branchy sum ----------------------------------------------------------------
def make_branchy(xp):
    """The sum of x[i]^2 over positive entries and of -sin(x[i]) over the others."""
    def branchy(x):
        s = 0.0
        for i in range(len(x)):
            if x[i] > 0:
                s = s + x[i] ** 2
            else:
                s = s - xp.sin(x[i])
        return s
    return branchy


# --- Euler steps stored in place ------------------------------------------------------
def make_euler(xp):
    """x' = f(t) - x^2 from x(0) = 1 on [0, 1], one explicit Euler step per forcing value."""
    def euler(f):
        n = len(f)
        h = 1.0 / n
        xs = xp.zeros(n)
        x = 1.0
        for i in range(n):
            x = x + h * (f[i] - x * x)
            xs[i] = x
        return h * xp.sum(xs ** 2)
    return euler


def make_euler_twin(xp):
    """The same steps, the states appended to a list and stacked afterwards."""
    def euler_twin(f):
        n = len(f)
        h = 1.0 / n
        xs = []
        x = 1.0
        for i in range(n):
            x = x + h * (f[i] - x * x)
            xs.append(x)
        return h * xp.sum(xp.stack(xs) ** 2)
    return euler_twin


# --- prefix products ---------------------------------------------------------------
def make_prefix(xp):
    """out[i] = x[0] * ... * x[i], written in place, summed."""
    def prefix(x):
        n = len(x)
        out = xp.zeros(n)
        out[0] = x[0]
        for i in range(1, n):
            out[i] = out[i - 1] * x[i]
        return xp.sum(out)
    return prefix


def make_prefix_twin(xp):
    """The same products, collected in a list."""
    def prefix_twin(x):
        n = len(x)
        out = [x[0]]
        for i in range(1, n):
            out.append(out[i - 1] * x[i])
        return xp.sum(xp.stack(out))
    return prefix_twin


# --- 2-D heat stencil ------------------------------------------------------------------
def make_heat(xp):
    """Explicit steps of u_t = u_xx + u_yy, the boundary held fixed."""
    def heat(u0):
        m = u0.shape[0]
        u = u0 * 1.0                  # a copy: the caller's grid is never written
        for step in range(HEAT_STEPS):
            new = u * 1.0
            for i in range(1, m - 1):
                for j in range(1, m - 1):
                    new[i, j] = u[i, j] + HEAT_RATE * (
                        u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4.0 * u[i, j])
            u = new
        return xp.sum(u ** 2)
    return heat


def make_heat_twin(xp):
    """The same steps, each new grid built row by row from lists."""
    def heat_twin(u0):
        m = u0.shape[0]
        u = u0
        for step in range(HEAT_STEPS):
            rows = [u[0]]
            for i in range(1, m - 1):
                row = [u[i, 0]]
                for j in range(1, m - 1):
                    row.append(u[i, j] + HEAT_RATE * (
                        u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4.0 * u[i, j]))
                row.append(u[i, m - 1])
                rows.append(xp.stack(row))
            rows.append(u[m - 1])
            u = xp.stack(rows)
        return xp.sum(u ** 2)
    return heat_twin


# --- while loop with an array carry -------------------------------------------------
def make_relax(xp):
    """Solve y = (cos(y) + x) / 2 elementwise by fixed-point iteration (a contraction)."""
    def relax(x):
        y = x
        step = 1.0
        while step > RELAX_TOL:
            y_next = 0.5 * (xp.cos(y) + x)
            step = xp.sqrt(xp.mean((y_next - y) ** 2))
            y = y_next
        return xp.sum(y ** 2)
    return relax


# --- Horner over a long coefficient array ----------------------------------------------
def make_horner(xp):
    """p(t) = sum_i c[i] t^(n-1-i) by Horner's rule."""
    def horner(c, t):
        p = 0.0
        for i in range(len(c)):
            p = p * t + c[i]
        return p
    return horner


# --- the list -----------------------------------------------------------------------
def _vector(n, rng):
    return (rng.standard_normal(n),)


def _forcing(n, rng):
    return (1.0 + 0.5 * rng.standard_normal(n),)


def _near_one(n, rng):
    # |log x_i| <= 1/n, so every prefix product lies within [1/e, e]
    return (np.exp(rng.uniform(-1.0, 1.0, n) / n),)


def _grid(n, rng):
    m = max(3, int(round(np.sqrt(n))))
    return (rng.standard_normal((m, m)),)


def _coefficients(n, rng):
    return (rng.standard_normal(n), HORNER_T)


@dataclass(frozen=True)
class Program:
    name: str
    make: Callable            # xp -> the plain function (in-place writes allowed)
    twin: Callable | None     # xp -> the same maths without in-place writes, or None
    inputs: Callable          # (n, rng) -> the argument tuple for nominal size n
    argnums: int | tuple


PROGRAMS = [
    Program("branchy", make_branchy, None, _vector, 0),
    Program("euler", make_euler, make_euler_twin, _forcing, 0),
    Program("prefix", make_prefix, make_prefix_twin, _near_one, 0),
    Program("heat", make_heat, make_heat_twin, _grid, 0),
    Program("relax", make_relax, None, _vector, 0),
    Program("horner", make_horner, None, _coefficients, (0, 1)),
]
