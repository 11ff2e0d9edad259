"""Numerical checks shared by the test-suite, and every tolerance it uses.

* ``fd_jvp``: a central difference along one direction (wengert.testing's,
  with the inputs promoted to float64 first, so a float32 rule is compared
  with the derivative of the same function rather than with float32 noise);
* ``dot_product_check``: ``<ct, L t> == <L^T ct, t>``, exact up to rounding,
  where ``<a, b> = Re(sum(a * b))`` (bilinear, no conjugate: JAX's
  convention for complex values, under which wengert's transposes of
  holomorphic and of real-linear maps like ``real``/``conj`` are exact; for
  real values it is the usual dot product);
* ``assert_close``: pytrees compared leaf by leaf, relative to the largest
  expected magnitude (never below ``floor``), so entries near zero are judged
  on the scale of the whole array.

Tolerances are named by what they bound; ``rtol(kind, dtype)`` picks the
float64 or float32 one.
"""
from __future__ import annotations

import numpy as np

from wengert import testing as wg_testing
from wengert.core.ir import aval_of
from wengert.core.primitive import Zero
from wengert.core.pytree import flatten, unflatten

# --- tolerances -----------------------------------------------------------
# central-difference step; inputs are float64 when it is taken
FD_EPS = 1e-5
# the step when the function's output is float32 whatever its inputs (astype):
# rounding of the output, 6e-8 relative, is then divided by the step
FD_EPS_F32_OUTPUT = 1e-3

# a jvp rule against finite differences (error of FD itself is ~1e-10)
JVP_RTOL_F64 = 1e-6
JVP_RTOL_F32 = 2e-4
# second order: finite differences of a derivative computed by AD
JVP2_RTOL_F64 = 1e-5
JVP2_RTOL_F32 = 2e-3
# identities that hold exactly in real arithmetic: the dot-product test,
# Autodidax's commuting diagram, one value computed along two paths
EXACT_RTOL_F64 = 1e-12
EXACT_RTOL_F32 = 1e-5
# impl against an independent NumPy reference (another algorithm: LU vs
# eigenvalues for det, bincount for scatter-add)
REF_RTOL_F64 = 1e-10
REF_RTOL_F32 = 1e-5
# whole programs (the corpus) against finite differences; Jacobians,
# gradients and Hessians of a dozen primitives deep
PROGRAM_RTOL_F64 = 1e-6
PROGRAM_RTOL_F32 = 2e-3
# one derivative computed two ways by AD (jacfwd vs jacrev): different
# operation orders, so rounding differs a little more than "exact"
AD_VS_AD_RTOL_F64 = 1e-10
AD_VS_AD_RTOL_F32 = 1e-4
# a function compiled by numba against the same Python: the same operations, but
# reductions may add in another order
COMPILED_RTOL_F64 = 1e-12
# a batch computed as one (wg.vmap) against a loop over its examples: the same
# operations, but a batched product or reduction may add in another order, and a
# stack of matrices may take another LAPACK path than one matrix
BATCH_RTOL_F64 = 1e-10
BATCH_RTOL_F32 = 1e-4
# Hessian (forward over reverse) against FD of the AD gradient
HESSIAN_RTOL_F64 = 1e-6
HESSIAN_RTOL_F32 = 5e-3

_TABLE = {
    "jvp": (JVP_RTOL_F64, JVP_RTOL_F32),
    "jvp2": (JVP2_RTOL_F64, JVP2_RTOL_F32),
    "exact": (EXACT_RTOL_F64, EXACT_RTOL_F32),
    "ref": (REF_RTOL_F64, REF_RTOL_F32),
    "program": (PROGRAM_RTOL_F64, PROGRAM_RTOL_F32),
    "hessian": (HESSIAN_RTOL_F64, HESSIAN_RTOL_F32),
    "ad": (AD_VS_AD_RTOL_F64, AD_VS_AD_RTOL_F32),
    "batch": (BATCH_RTOL_F64, BATCH_RTOL_F32),
}


def is_f32(tree):
    """True when any float leaf of ``tree`` is float32 (the looser tolerances apply)."""
    leaves, _ = flatten(tree)
    return any(np.asarray(x).dtype in (np.float32, np.complex64) for x in leaves)


def rtol(kind, *dtypes_or_trees):
    """The tolerance of ``kind``: the float32 one if any argument is the
    float32 dtype or a pytree with a float32 leaf, else the float64 one."""
    f64, f32 = _TABLE[kind]
    for x in dtypes_or_trees:
        if isinstance(x, (np.dtype, type)):
            if np.dtype(x) in (np.float32, np.complex64):
                return f32
        elif is_f32(instantiate(x)):
            return f32
    return f64


# --- helpers over pytrees --------------------------------------------------
def instantiate(tree):
    """Symbolic ``Zero`` leaves become arrays of zeros."""
    if isinstance(tree, Zero):
        return np.zeros(tree.aval.shape, tree.aval.dtype)
    if isinstance(tree, (tuple, list)):
        return type(tree)(instantiate(t) for t in tree)
    return tree


def upcast(tree):
    """Float leaves (and Python floats) as float64 arrays, complex ones as
    complex128; others unchanged."""
    leaves, tree_def = flatten(tree)
    out = []
    for x in leaves:
        a = np.asarray(x)
        out.append(a.astype(np.float64) if a.dtype.kind == "f" else
                   a.astype(np.complex128) if a.dtype.kind == "c" else x)
    return unflatten(tree_def, out)


def random_like(tree, rng):
    """Standard normal leaves with the shape and (float) dtype of ``tree``'s;
    complex leaves get standard normal real and imaginary parts."""
    leaves, tree_def = flatten(tree)
    out = []
    for x in leaves:
        av = aval_of(x)
        dtype = av.dtype if av.dtype.kind in "fc" else np.dtype(np.float64)
        r = rng.standard_normal(av.shape)
        if dtype.kind == "c":
            r = r + 1j * rng.standard_normal(av.shape)
        out.append(np.asarray(r, dtype))
    return unflatten(tree_def, out)


def inner(a, b):
    """Sum over leaves of the elementwise products, in float64 (for complex
    leaves the real part of the bilinear sum, in complex128)."""
    la, ta = flatten(instantiate(a))
    lb, tb = flatten(instantiate(b))
    assert len(la) == len(lb), f"inner: {len(la)} leaves against {len(lb)}"
    return sum(float(np.real(np.sum(_wide(x) * _wide(y)))) for x, y in zip(la, lb))


def _wide(x):
    a = np.asarray(x)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def norm(a):
    """The Euclidean norm (of complex leaves: over real and imaginary parts)."""
    la, _ = flatten(instantiate(a))
    return float(np.sqrt(sum(float(np.sum(np.abs(_wide(x)) ** 2)) for x in la)))


# --- the checks --------------------------------------------------------------
def fd_jvp(fun, args, tangents, eps=None):
    """Central difference of ``fun`` at ``args`` along ``tangents`` (tuples),
    with float arguments promoted to float64. The step is ``FD_EPS``, or
    ``FD_EPS_F32_OUTPUT`` when the output is float32 even so."""
    args = upcast(tuple(args))
    if eps is None:
        eps = FD_EPS_F32_OUTPUT if is_f32(fun(*args)) else FD_EPS
    return wg_testing.fd_jvp(fun, args, upcast(tuple(tangents)), eps)


def assert_close(got, want, rtol, atol=0.0, floor=1.0, what="values"):
    """Leafwise: same shape, and ``max|got - want| <= atol + rtol * max(max|want|, floor)``."""
    lg, tg = flatten(instantiate(got))
    lw, tw = flatten(instantiate(want))
    assert len(lg) == len(lw), f"{what}: {len(lg)} leaves, expected {len(lw)} ({tg} vs {tw})"
    for k, (g, w) in enumerate(zip(lg, lw)):
        g = np.asarray(g)
        w = np.asarray(w)
        assert g.shape == w.shape, f"{what} (leaf {k}): shape {g.shape}, expected {w.shape}"
        g, w = _wide(g), _wide(w)
        assert np.all(np.isfinite(g)) == np.all(np.isfinite(w)), \
            f"{what} (leaf {k}): finiteness differs\n got  {g}\n want {w}"
        if g.size == 0:
            continue
        finite = np.isfinite(w)
        assert np.array_equal(g[~finite], w[~finite], equal_nan=True), \
            f"{what} (leaf {k}): non-finite entries differ\n got  {g}\n want {w}"
        if not finite.any():
            continue
        err = float(np.max(np.abs(g[finite] - w[finite])))
        scale = max(float(np.max(np.abs(w[finite]))), floor)
        bound = atol + rtol * scale
        assert err <= bound, (f"{what} (leaf {k}): max error {err:.3g} exceeds {bound:.3g} "
                              f"(rtol {rtol:g}, scale {scale:.3g})\n got  {g}\n want {w}")


def dot_product_check(ct, lin_t, lin_t_ct, t, rtol=EXACT_RTOL_F64, what="dot-product test"):
    """``<ct, L t> == <L^T ct, t>`` for a linear map L and its transpose L^T.

    The bound is relative to ``|ct| |L t| + |L^T ct| |t|`` (Cauchy-Schwarz),
    so it is an identity up to rounding, not a finite-difference estimate.
    """
    lhs = inner(ct, lin_t)
    rhs = inner(lin_t_ct, t)
    scale = norm(ct) * norm(lin_t) + norm(lin_t_ct) * norm(t)
    assert scale > 0, f"{what}: every vector is zero, so the test would prove nothing"
    assert abs(lhs - rhs) <= rtol * scale, (
        f"{what}: <ct, L t> = {lhs!r} but <L^T ct, t> = {rhs!r} "
        f"(difference {abs(lhs - rhs):.3g}, allowed {rtol * scale:.3g})")


def fd_jacobian(fun, args, eps=FD_EPS):
    """The Jacobian of ``fun`` at ``args`` by central differences, one column
    per input scalar: a (total output size) x (total input size) matrix over
    the flattened leaves, in float64."""
    args = upcast(tuple(args))
    leaves, tree_def = flatten(args)
    sizes = [np.size(x) for x in leaves]
    cols = []
    for i, x in enumerate(leaves):
        for j in range(sizes[i]):
            basis = [np.zeros(np.shape(y)) for y in leaves]
            basis[i].reshape(-1)[j] = 1.0
            col = fd_jvp(fun, args, unflatten(tree_def, basis), eps)
            cols.append(np.concatenate([np.ravel(c) for c in flatten(col)[0]]))
    return np.stack(cols, axis=1)


def jacobian_matrix(jac, out_avals, in_avals):
    """wengert's nested Jacobian (one block per output leaf and input leaf,
    block shape out_shape + in_shape) as one dense 2-D matrix."""
    blocks, _ = flatten(jac)
    assert len(blocks) == len(out_avals) * len(in_avals), \
        f"{len(blocks)} Jacobian blocks for {len(out_avals)} outputs x {len(in_avals)} inputs"
    rows, k = [], 0
    for o in out_avals:
        row = []
        for i in in_avals:
            b = np.asarray(blocks[k])
            assert b.shape == o.shape + i.shape, \
                f"Jacobian block of shape {b.shape}, expected {o.shape + i.shape}"
            row.append(b.reshape(o.size, i.size).astype(np.float64))
            k += 1
        rows.append(np.concatenate(row, axis=1))
    return np.concatenate(rows, axis=0)


def check_two_argument_grad(fn, g, sizes, seed):
    """``g = grad(fn, argnums=(0, 1), engine="source")`` at each length of
    ``sizes``: against the trace engine, and along random directions against
    finite differences. Returns nothing; asserts."""
    import wengert as wg
    rng = np.random.default_rng(seed)
    for n in sizes:
        x, w = rng.standard_normal(n), rng.standard_normal(n)
        got = g(x, w)
        assert_close(got, wg.grad(fn, argnums=(0, 1), engine="trace")(x, w), AD_VS_AD_RTOL_F64)
        tx, tw = rng.standard_normal(n), rng.standard_normal(n)
        assert_close(float(np.sum(got[0] * tx) + np.sum(got[1] * tw)),
                     fd_jvp(fn, (x, w), (tx, tw)), PROGRAM_RTOL_F64)


def eqns_named(prog, name):
    """The equations of primitive ``name`` in ``prog``, at every depth
    (inside loops' and branches' Programs too)."""
    from wengert.core.ir import sub_programs
    for e in prog.eqns:
        if e.prim.name == name:
            yield e
        for sub in sub_programs(e):
            yield from eqns_named(sub, name)

