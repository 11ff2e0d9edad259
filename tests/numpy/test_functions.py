"""The function table: every NumPy and SciPy function wengert
differentiates (``wengert.primitives.library``), checked case by case
(``fn_cases*.py``) in both engines:

* the value and dtype against the plain call (float32 stays float32 where
  NumPy keeps it);
* the jvp against central finite differences (float64);
* reverse against forward mode by the dot-product test;
* second order: the jvp of the jvp against finite differences of the jvp;
* a library entry without a case fails ``test_every_entry_has_a_case``;
* batched (``wg.vmap`` over three draws of the differentiated operands): the values and
  dtypes of a loop over the batch, and the jvp of the batched function that of the loop
  (``batch_checks``), in both engines.

A ``complex=True`` case also runs on complex operands (complex128 for
float64, complex64 for float32; real and imaginary parts drawn from the
operand's own domain): the jvp is checked against finite differences along
a real and along an imaginary direction, and the dot-product test pairs
vectors by ``Re(sum(a * b))``, the bilinear pairing of JAX's convention
(``checks.inner``), under which the transposes are exact.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.numpy import library

import checks
from cases import DIFF, F64, NONDIFF, ZERO_DERIV
from fn_cases import ALL_CASES
from batch_checks import assert_batched, assert_batched_jvp


COMPLEX_OF = {np.dtype(np.float64): np.dtype(np.complex128),
              np.dtype(np.float32): np.dtype(np.complex64)}


def _draw(case, dtype, seed_offset=0):
    rng = np.random.default_rng(1000 + case.seed + seed_offset)
    if np.dtype(dtype).kind != "c":
        return [a.draw(rng, dtype) for a in case.args]
    # complex: the differentiated operands get an imaginary part of a second draw
    real_dt = np.empty(0, dtype).real.dtype
    parts = [a.draw(rng, real_dt) for a in case.args]
    imags = [a.draw(rng, real_dt) for a in case.args]
    return [np.asarray(x + 1j * np.asarray(y), dtype) if a.diff else x
            for a, x, y in zip(case.args, parts, imags)]


def _with_complex(dtypes, case):
    """``dtypes``, and their complex twins for a ``complex=True`` case."""
    return tuple(dtypes) + (tuple(COMPLEX_OF[np.dtype(d)] for d in dtypes) if case.complex
                            else ())


def _split(case, args):
    """The differentiated operands, and ``g`` taking just those."""
    diff = [i for i, a in enumerate(case.args) if a.diff]
    fixed = {i: args[i] for i in range(len(args)) if i not in diff}
    fun = case.fun

    def g(*d):
        full = []
        k = 0
        for i in range(len(fixed) + len(d)):
            if i in fixed:
                full.append(fixed[i])
            else:
                full.append(d[k])
                k += 1
        return fun(*full)
    return tuple(args[i] for i in diff), g


def _params(engines_of=lambda c: c.engines, dtypes_of=lambda c: c.dtypes):
    out = []
    for c in ALL_CASES:
        for e in engines_of(c):
            for dt in _with_complex(dtypes_of(c), c):
                out.append(pytest.param(c, e, dt, id=f"{c.test_id}-{e}-{np.dtype(dt).name}"))
    return out


def _tangents(primals, rng):
    return tuple(checks.random_like(p, rng) for p in primals)


@pytest.mark.parametrize("case, engine, dtype", _params())
def test_value_and_dtype(case, engine, dtype):
    args = _draw(case, dtype)
    want = case.fun(*args)
    primals, g = _split(case, args)
    got, _ = wg.jvp(g, primals, _tangents(primals, np.random.default_rng(0)), engine=engine)
    assert checks.flatten(got)[1] == checks.flatten(want)[1], \
        f"{case.name}: the result's structure is {type(got).__name__}, the plain call's " \
        f"{type(want).__name__}"
    for gl, wl in zip(checks.flatten(got)[0], checks.flatten(want)[0]):
        assert np.asarray(gl).dtype == np.asarray(wl).dtype, \
            f"{case.name}: dtype {np.asarray(gl).dtype}, the plain call gives {np.asarray(wl).dtype}"
    checks.assert_close(got, want, case.rtol or checks.rtol("ref", dtype), what=case.name)


@pytest.mark.parametrize("case, engine, dtype", _params())
def test_jvp_and_vjp(case, engine, dtype):
    args = _draw(case, dtype)
    primals, g = _split(case, args)
    rng = np.random.default_rng(1)
    t = _tangents(primals, rng)
    out, out_dot = wg.jvp(g, primals, t, engine=engine)
    if case.mode in (NONDIFF, ZERO_DERIV):
        leaves, tree = checks.flatten(out)       # one zero per leaf (np.shape: a tuple)
        zeros = checks.unflatten(tree, [np.zeros(np.shape(x)) for x in leaves])
        checks.assert_close(out_dot, zeros, 0.0,
                            what=f"{case.name}: tangent of a piecewise-constant function")
        return
    want = checks.fd_jvp(g, primals, t)
    checks.assert_close(out_dot, want, case.rtol or checks.rtol("jvp", dtype),
                        what=f"{case.name}: jvp vs finite differences")
    if np.dtype(dtype).kind == "c":
        # the real and the imaginary directions apart (t above mixes them)
        for part, unit in (("real", 1.0), ("imaginary", 1.0j)):
            d = tuple(np.asarray(unit * np.asarray(checks.random_like(p, rng)).real, p.dtype)
                      if np.asarray(p).dtype.kind == "c" else checks.random_like(p, rng)
                      for p in primals)
            checks.assert_close(wg.jvp(g, primals, d, engine=engine)[1],
                                checks.fd_jvp(g, primals, d),
                                case.rtol or checks.rtol("jvp", dtype),
                                what=f"{case.name}: jvp along the {part} direction vs FD")
    out2, pullback = wg.vjp(g, *primals, engine=engine)
    ct = checks.random_like(out2, rng)
    checks.dot_product_check(ct, out_dot, pullback(ct), t,
                             rtol=max(checks.rtol("exact", dtype), case.rtol or 0.0) * 10)


@pytest.mark.parametrize("case, engine, dtype", _params(
    dtypes_of=lambda c: (F64,) if c.mode == DIFF and c.order >= 2 else ()))
def test_second_order(case, engine, dtype):
    args = _draw(case, dtype)
    primals, g = _split(case, args)
    rng = np.random.default_rng(2)
    t1, t2 = _tangents(primals, rng), _tangents(primals, rng)

    def jvp_of(*p):
        return wg.jvp(g, p, t1, engine=engine)[1]

    _, got = wg.jvp(jvp_of, primals, t2, engine=engine)
    want = checks.fd_jvp(jvp_of, primals, t2)
    checks.assert_close(got, want, (case.rtol or 0.0) * 10 or checks.rtol("jvp2", dtype),
                        what=f"{case.name}: second order vs finite differences of the jvp")


def test_every_entry_has_a_case():
    covered = {c.name for c in ALL_CASES}
    missing = [name for name, _, _ in library.entries() if name not in covered]
    assert not missing, f"library functions without a case in tests/fn_cases_*.py: {missing}"


def test_every_case_names_an_entry():
    names = {name for name, _, _ in library.entries()}
    unknown = sorted({c.name for c in ALL_CASES} - names)
    assert not unknown, f"cases name functions that are not in the library table: {unknown}"


_BATCH = 3
# results whose shape depends on the values (the indices np.where(cond) gives): each
# example of a batch may have another, so vmap refuses them with a typed error
VALUE_SHAPED = {"np.where[indices]", "np.nonzero", "np.flatnonzero", "np.argwhere", "np.extract",
                "np.unique", "np.unique[forms]", "np.unique[picked]", "np.unique_all",
                "np.unique_counts", "np.unique_inverse", "np.unique_values", "np.bincount",
                "np.bincount[weights]"}


@pytest.mark.parametrize("case, engine, dtype", _params())
def test_vmap_matches_a_loop_over_the_batch(case, engine, dtype):
    examples = [_draw(case, dtype, seed_offset=100 + b) for b in range(_BATCH)]
    _, g = _split(case, examples[0])
    diff = [i for i, a in enumerate(case.args) if a.diff]
    if not diff:                    # nothing differentiated (np.bincount): batch every operand
        g, diff = case.fun, list(range(len(case.args)))
    args = [np.stack([np.asarray(e[i]) for e in examples]) for i in diff]
    in_axes = [0] * len(args)
    if case.test_id in VALUE_SHAPED:
        with pytest.raises(wg.WengertError, match="examples of a batch"):
            wg.vmap(g, engine=engine)(*args)
        return
    tol = max(case.rtol or 0.0, checks.rtol("batch", dtype))
    assert_batched(g, args, in_axes, tol, engine=engine, what=f"{case.name}: vmap")
    if case.mode == DIFF:
        rng = np.random.default_rng(3)
        tangents = [checks.random_like(a, rng) for a in args]
        assert_batched_jvp(g, args, in_axes, list(range(len(args))), tangents, tol,
                           engine=engine, what=f"{case.name}: jvp of vmap")
