"""``check_grads``: derivatives against central finite differences, and
reverse against forward mode by the dot-product test <u, J v> = <J^T u, v>.

Used by the test-suite and exported for users checking their own functions
and custom rules. Raises ``AssertionError`` with the measured errors.
"""
from __future__ import annotations

import numpy as np

from .pytree import flatten, unflatten

__all__ = ["check_grads", "fd_jvp"]


def _eps_tol(leaves):
    """Step and tolerance: float32 anywhere (inputs or outputs) needs both larger."""
    f32 = any(np.asarray(x).dtype == np.float32 for x in leaves)
    return (1e-3, 2e-2) if f32 else (1e-6, 1e-5)


def _inner(a, b):
    la, _ = flatten(a)
    lb, _ = flatten(b)
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(la, lb))


def _axpy(alpha, v, x):
    lx, tree = flatten(x)
    lv, _ = flatten(v)
    return unflatten(tree, [np.asarray(xi) + alpha * np.asarray(vi).astype(np.asarray(xi).dtype)
                            for xi, vi in zip(lx, lv)])


def _random_like(tree_value, rng):
    leaves, tree = flatten(tree_value)
    return unflatten(tree, [rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype)
                            if np.shape(x) else np.asarray(rng.standard_normal(),
                                                           np.asarray(x).dtype)
                            for x in leaves])


def fd_jvp(fun, args, tangents, eps):
    """Central difference of ``fun`` at ``args`` along ``tangents``."""
    hi = fun(*_axpy(eps, tangents, tuple(args)))
    lo = fun(*_axpy(-eps, tangents, tuple(args)))
    lh, tree = flatten(hi)
    ll, _ = flatten(lo)
    return unflatten(tree, [(np.asarray(h, np.float64) - np.asarray(l, np.float64)) / (2 * eps)
                            for h, l in zip(lh, ll)])


def _close(name, got, want, tol):
    lg, _ = flatten(got)
    lw, _ = flatten(want)
    for g, w in zip(lg, lw):
        g = np.asarray(g, np.float64)
        w = np.asarray(w, np.float64)
        scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
        err = float(np.max(np.abs(g - w))) if w.size else 0.0
        if not err <= tol * scale:
            raise AssertionError(f"{name}: max error {err:.3g} exceeds {tol:.1g} (scale {scale:.3g})"
                                 f"\n got  {g}\n want {w}")


def check_grads(fun, args, order=2, modes=("fwd", "rev"), eps=None, rtol=None, seed=0):
    """Check ``fun``'s derivatives at ``args`` up to ``order``, in ``modes``."""
    from . import api
    args = tuple(args)
    leaves, _ = flatten(args)
    out_leaves, _ = flatten(fun(*args))
    eps0, tol0 = _eps_tol(leaves + out_leaves)
    eps = eps or eps0
    rtol = rtol or tol0
    rng = np.random.default_rng(seed)
    v = _random_like(args, rng)
    out, out_dot = None, None
    if "fwd" in modes:
        out, out_dot = api.jvp(fun, args, v)
        _close("jvp vs finite differences", out_dot, fd_jvp(fun, args, v, eps), rtol)
    if "rev" in modes:
        out, pullback = api.vjp(fun, *args)
        u = _random_like(out, rng)
        ct = pullback(u)
        lhs = _inner(ct, v)
        rhs_val = out_dot if out_dot is not None else fd_jvp(fun, args, v, eps)
        rhs = _inner(u, rhs_val)
        if not abs(lhs - rhs) <= rtol * max(1.0, abs(lhs), abs(rhs)):
            raise AssertionError(f"vjp dot-product test: <J^T u, v> = {lhs!r} but <u, J v> = "
                                 f"{rhs!r}")
    if order > 1:
        if "fwd" in modes:
            def jvp_of(*a):
                return api.jvp(fun, a, v)[1]
            check_grads(jvp_of, args, order - 1, modes, eps, rtol * 10, seed + 1)
        if "rev" in modes:
            u2 = _random_like(api.vjp(fun, *args)[0], np.random.default_rng(seed + 7))

            def vjp_of(*a):
                return api.vjp(fun, *a)[1](u2)
            check_grads(vjp_of, args, order - 1, modes, eps, rtol * 10, seed + 2)
