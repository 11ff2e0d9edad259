"""``make demo``: the seed articles, reproduced.

Run as ``python -m wengert.demo``. Every printed derivative is also checked
against a central finite difference, and the demo exits non-zero if one is off.

Layer: root.
"""
from __future__ import annotations

import sys

import numpy as np

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

FAILURES = []


def check(label, got, want, tol=1e-6):
    ok = np.allclose(got, want, rtol=tol, atol=tol)
    print(f"  {label:<34} {np.array2string(np.asarray(got), precision=12):>24}   "
          f"{'ok' if ok else 'MISMATCH (expected ' + str(want) + ')'}")
    if not ok:
        FAILURES.append(label)


def fd(f, args, i, eps=1e-6):
    hi = list(args)
    lo = list(args)
    hi[i] += eps
    lo[i] -= eps
    return (f(*hi) - f(*lo)) / (2 * eps)


def banner(text):
    print("\n" + "=" * 78 + f"\n{text}\n" + "=" * 78)


# --- seed 000: forward and reverse derivative programs ----------------------
def seed000(x, y):
    p = 7.0 * x
    r = 1.0 / y
    q = p * x * 5.0
    v = 2.0 * p * q + 3.0 * r
    return v


def damped(x, n):
    """A loop with a branch (for ``wengert show``): the state halves when it
    grows past 1."""
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + np.sin(x * i)
        else:
            s = s + x * x
    return s


def demo_seed000():
    banner("seed 000: a straight-line program, its forward and reverse derivatives")
    x, y = 2.0, 3.0
    prog = wg.make_program(seed000, x, y)
    print("\nANF (one primitive per line):\n")
    print(prog)
    dup_prog = explicit_dup(prog)
    print("\nexplicit duplication (every variable used once):\n")
    print(dup_prog)
    fwd = simplify(jvp_program(prog))
    print("\nforward derivative (interleaved; zero terms omitted):\n")
    print(fwd)
    rev = simplify(vjp_program(dup_prog))
    print("\nreverse derivative (forward sweep, then the lines backwards; "
          "dup <-> add_any):\n")
    print(rev)
    print(f"\nevaluated at x = {x}, y = {y}:")
    v, dv_dx = interpret(fwd, x, y, 1.0, 0.0)
    _, dv_dy = interpret(fwd, x, y, 0.0, 1.0)
    check("v", v, seed000(x, y))
    check("forward dv/dx (seed dx=1, dy=0)", dv_dx, fd(seed000, (x, y), 0))
    check("forward dv/dy (seed dx=0, dy=1)", dv_dy, fd(seed000, (x, y), 1))
    _, gx, gy = interpret(rev, x, y, 1.0)
    check("reverse dv/dx (one sweep)", gx, fd(seed000, (x, y), 0))
    check("reverse dv/dy (same sweep)", gy, fd(seed000, (x, y), 1))


# --- seed 004: z = x*y + sin(x), and one tape for two outputs ---------------
def seed004(x, y):
    return x * y + np.sin(x)


def two_outputs(x):
    return 2.0 * x + np.sin(x), 4.0 * x + np.cos(x)


def demo_seed004():
    banner("seed 004: z = x*y + sin(x) by reverse mode; one tape, two outputs")
    z, (gx, gy) = wg.value_and_grad(seed004, argnums=(0, 1))(0.5, 4.2)
    check("z", z, 2.579425538604203, 1e-15)
    check("dz/dx", gx, 5.077582561890373, 1e-15)
    check("dz/dy", gy, 0.5, 1e-15)
    x = 0.5
    (z, v), pullback = wg.vjp(two_outputs, x)
    print("\n  recorded once, swept backwards twice (seeds gz=1,gv=0 and gz=0,gv=1):")
    dz, = pullback((1.0, 0.0))
    dv, = pullback((0.0, 1.0))
    check("dz/dx = 2 + cos(x)", dz, 2 + np.cos(x))
    check("dv/dx = 4 - sin(x)", dv, 4 - np.sin(x))


# --- seed 001: the gradient of trace(A @ B) ---------------------------------
def trace_of_product(a, b):
    return np.trace(a @ b)


def demo_seed001():
    banner("seed 001: gradient of trace(A @ B) is (B^T, A^T)")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    ga, gb = wg.grad(trace_of_product, argnums=(0, 1))(a, b)
    check("max |dA - B^T|", np.max(np.abs(ga - b.T)), 0.0, 1e-12)
    check("max |dB - A^T|", np.max(np.abs(gb - a.T)), 0.0, 1e-12)
    print("\n  the traced program and its vjp:\n")
    prog = wg.make_program(trace_of_product, a, b)
    print(prog)
    print()
    print(simplify(vjp_program(prog)))


def main():
    demo_seed000()
    demo_seed004()
    demo_seed001()
    if FAILURES:
        print(f"\n{len(FAILURES)} value(s) did not match: {', '.join(FAILURES)}")
        sys.exit(1)
    print("\nall values match.")


if __name__ == "__main__":
    main()
