"""``check_grads``: derivatives against central finite differences, and
reverse against forward mode by the dot-product test <u, J v> = <J^T u, v>.

Used by the test-suite and exported for users checking their own functions
and custom rules. Raises ``AssertionError`` with the measured errors.

Complex values follow JAX's conventions (``primitives.complex_parts``): a
complex leaf gets a complex random direction (real and imaginary parts
both), and vectors pair by ``Re(sum(a * b))`` (bilinear, no conjugate),
the pairing under which wengert's transposes are transposes.

Layer: root.
"""
from __future__ import annotations

import numpy as np

from .core.pytree import flatten, unflatten
from .api import transforms as api

__all__ = ["check_grads", "fd_jvp"]


def _eps_tol(leaves):
    """Step and tolerance: float32 anywhere (inputs or outputs) needs both larger."""
    f32 = any(np.asarray(x).dtype in (np.float32, np.complex64) for x in leaves)
    return (1e-3, 2e-2) if f32 else (1e-6, 1e-5)


def _wide(x):
    """float64, or complex128 for a complex value."""
    a = np.asarray(x)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _inner(a, b):
    la, _ = flatten(a)
    lb, _ = flatten(b)
    return sum(float(np.real(np.sum(_wide(x) * _wide(y)))) for x, y in zip(la, lb))


def _axpy(alpha, v, x):
    lx, tree = flatten(x)
    lv, _ = flatten(v)
    return unflatten(tree, [np.asarray(xi) + alpha * np.asarray(vi).astype(np.asarray(xi).dtype)
                            for xi, vi in zip(lx, lv)])


def _random_like(tree_value, rng):
    leaves, tree = flatten(tree_value)
    out = []
    for x in leaves:
        dtype = np.asarray(x).dtype
        r = rng.standard_normal(np.shape(x))
        if dtype.kind == "c":
            r = r + 1j * rng.standard_normal(np.shape(x))
        out.append(np.asarray(r, dtype))
    return unflatten(tree, out)


def fd_jvp(fun, args, tangents, eps):
    """The central difference of ``fun`` at ``args`` along ``tangents``.

    Args:
        fun: the function.
        args: a tuple of its arguments.
        tangents: the direction: a tuple shaped like ``args``.
        eps: the step.

    Returns:
        ``(fun(args + eps t) - fun(args - eps t)) / (2 eps)``, shaped like the output.

    Raises:
        ValueError: a tangent that does not broadcast with its argument (NumPy's).

    Example:
        >>> import numpy as np, wengert as wg
        >>> print(round(wg.testing.fd_jvp(np.sin, (0.0,), (1.0,), 1e-6), 9))
        1.0
    """
    hi = fun(*_axpy(eps, tangents, tuple(args)))
    lo = fun(*_axpy(-eps, tangents, tuple(args)))
    lh, tree = flatten(hi)
    ll, _ = flatten(lo)
    return unflatten(tree, [(_wide(h) - _wide(l)) / (2 * eps) for h, l in zip(lh, ll)])


def _close(name, got, want, tol):
    lg, _ = flatten(got)
    lw, _ = flatten(want)
    for g, w in zip(lg, lw):
        g, w = _wide(g), _wide(w)
        scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
        err = float(np.max(np.abs(g - w))) if w.size else 0.0
        if not err <= tol * scale:
            raise AssertionError(f"{name}: max error {err:.3g} exceeds {tol:.1g} (scale {scale:.3g})"
                                 f"\n got  {g}\n want {w}")


def check_grads(fun, args, order=2, modes=("fwd", "rev"), eps=None, rtol=None, seed=0):
    """Check ``fun``'s derivatives at ``args`` against finite differences.

    Forward mode against central differences along a random direction, reverse
    against forward by the dot-product test ``<u, J v> == <J^T u, v>``, then the
    same on the derivatives themselves, up to ``order``.

    Args:
        fun: the function.
        args: a tuple of its arguments (floats, arrays, pytrees of them).
        order: the highest order checked.
        modes: ``"fwd"``, ``"rev"`` or both.
        eps: the finite-difference step (default: by dtype).
        rtol: the relative tolerance (default: by dtype).
        seed: the seed of the random directions.

    Returns:
        None; it raises where a check fails.

    Raises:
        AssertionError: a derivative disagrees; the message gives both values.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.testing.check_grads(lambda x: np.sin(x) * x, (np.array([0.5, 1.0]),))
    """
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
