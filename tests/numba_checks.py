"""The numba backend against the Python backend: ``agree`` runs grad (of a
scalar output), jvp and vjp of a function under both and asserts the same
values to rounding, and the caller's arrays unchanged; it returns the
``NumbaFallbackWarning``s seen (a construct numba cannot compile falls back to
the Python backend with one).

Read by the numba backend's tests (``backends/numba/``).
"""
from __future__ import annotations

import warnings

import numpy as np

import wengert as wg

from checks import assert_close, random_like, rtol


def copies(args):
    """The arguments, arrays copied."""
    return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)


def unchanged(args, before):
    """Each array of ``args`` equals its copy in ``before``."""
    for a, b in zip(args, before):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="an argument was written")


def fallbacks(seen):
    """The ``NumbaFallbackWarning``s among the warnings ``seen``."""
    return [w for w in seen if issubclass(w.category, wg.NumbaFallbackWarning)]


def agree(fn, args, argnums, scalar, what, modes=("grad", "jvp", "vjp")):
    """grad (of a scalar output), jvp and vjp (those of ``modes``) of ``fn``
    at ``args`` under both backends agree; the caller's arrays are unchanged.
    The fallback warnings seen."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    rng = np.random.default_rng(5)
    before = copies(args)
    dyn = tuple(args[i] for i in nums)
    part = closure(fn, args[len(nums):])
    tangents = random_like(dyn, rng)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        if scalar and "grad" in modes:
            want = wg.grad(fn, argnums, engine="source")(*copies(args))
            got = wg.grad(fn, argnums, engine="source", backend="numba")(*args)
            assert_close(got, want, rtol("exact", want), what=f"{what} grad")
        if "jvp" in modes:
            want = wg.jvp(part, copies(dyn), tangents, engine="source")
            got = wg.jvp(part, dyn, tangents, engine="source", backend="numba")
            assert_close(got, want, rtol("exact", want), what=f"{what} jvp")
        if "vjp" in modes:
            out, pullback = wg.vjp(part, *copies(dyn), engine="source")
            ct = random_like(out, rng)
            out_n, pullback_n = wg.vjp(part, *dyn, engine="source", backend="numba")
            assert_close(out_n, out, rtol("exact", out), what=f"{what} vjp value")
            want = pullback(ct)
            assert_close(pullback_n(ct), want, rtol("exact", want), what=f"{what} vjp")
    unchanged(args, before)
    return fallbacks(seen)


def closure(fn, rest):
    """``fn`` of its leading arguments, ``rest`` fixed (a function the source
    engine reads: source_cases.with_static)."""
    if not rest:
        return fn
    import source_cases
    return source_cases.with_static(fn, *rest)
