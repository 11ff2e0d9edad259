"""``numba_kernels``: the numba backend's whole-array arithmetic as loops.

Each spelling against NumPy, over its class: the four operators on every
pairing of 0-d to 3-d operands that broadcast (trailing axes, size-one
axes, a number on either side), C-contiguous, transposed, reversed and
sliced operands; written in place into C targets, into slices that are not
contiguous (``x[:, 1:3]``, ``x[::2]``, ``x.T``) and from a value that is a
view of the target. Floats compare bit for bit (the same IEEE operation per
element). Then end to end: whole-array derivatives under
``backend="numba", fallback=False`` agree with the Python backend, and their
code calls the loops.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from checks import assert_close, rtol

numba = pytest.importorskip("numba")
from wengert.backends import numba_kernels as K  # noqa: E402

pytestmark = pytest.mark.numba

OPS = ["+", "-", "*", "/"]
# operand shapes that broadcast: trailing axes, size-one axes, 0-d
SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (3, 4)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (4,)),
          ((2, 1, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (2, 3, 4)), ((2, 3, 1), (2, 1, 4)),
          ((0, 4), (4,)), ((3, 4), ())]
# how an operand is laid out: as made, transposed twice (strided), reversed
# along its first axis, a slice of a larger array
LAYOUTS = ["C", "strided", "reversed", "slice"]


def _laid_out(a, how):
    if how == "C" or a.ndim == 0:
        return a
    if how == "strided":
        return np.asfortranarray(a)
    if how == "reversed":
        return a[::-1].copy()[::-1]
    wide = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,))
    wide[..., ::2] = a
    return wide[..., ::2]


_JITTED = {}


def _jitted(kind, op):
    """``kernel(a, b)`` under numba, ``kernel`` the ``kind`` loop of ``op``
    (one function per kind and operator, compiled once per signature)."""
    fn = _JITTED.get((kind, op))
    if fn is None:
        namespace = {"kernel": getattr(K, kind)(op)}
        exec("def f(a, b):\n    return kernel(a, b)\n", namespace)
        fn = _JITTED[kind, op] = numba.njit(error_model="numpy")(namespace["f"])
    return fn


def _binary(op):
    return _jitted("binary", op)


def _numpy(op, a, b):
    with np.errstate(all="ignore"):
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}[op](a, b)


# every shape pairing and layout for one operator (the loop's text is the
# same for all four, ``_CORE_TEXT``), every operator on some
BINARY = [("*", s, how) for s in SHAPES for how in ("C", "strided", "slice")] + [("*", s, "reversed") for s in SHAPES[1:6]] + [
    (op, s, how) for op in "+-/" for s in SHAPES[2:5] for how in ("C", "slice")]


@pytest.mark.parametrize("op, shapes, layout", BINARY, ids=str)
def test_binary_agrees_with_numpy(op, shapes, layout):
    rng = np.random.default_rng(0)
    a, b = (_laid_out(rng.standard_normal(s), layout) for s in shapes)
    b = np.where(np.abs(b) < 0.1, 0.0, b)           # zero divisors too: inf and nan as NumPy's
    for x, y in [(a, b), (b, a)]:
        got = _binary(op)(x, y)
        np.testing.assert_array_equal(got, _numpy(op, x, y))
        assert got.dtype == np.float64 and got.flags.c_contiguous


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("op", OPS)
def test_binary_with_a_number_agrees_with_numpy(op, side):
    a = np.random.default_rng(1).standard_normal((2, 3, 5))[:, ::-1]
    for s in (1.5, 0.0, 3):
        x, y = (a, s) if side == "left" else (s, a)
        np.testing.assert_array_equal(_binary(op)(x, y), _numpy(op, x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_binary_keeps_float32_and_complex(dtype):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((3, 4)) + (1j * rng.standard_normal((3, 4)) if dtype is
                                        np.complex128 else 0)).astype(dtype)
    got = _binary("*")(a, a[0])
    assert got.dtype == dtype
    assert_close(got, a * a[0], rtol("exact", got))


# targets written in place: (base shape, the target as an index of the base)
TARGETS = [((3, 4), ()), ((2, 5, 4), (slice(None), slice(1, 3))), ((2, 5, 4), (slice(None), 2)),
           ((9,), slice(None, None, 2)), ((4, 3), "T"), ((2, 3, 4), (0,)), ((3, 8), (slice(None),
                                                                                  slice(None, None, 2)))]


def _target(base, where):
    return base.T if where == "T" else base[where]


VALUES = ["same", "row", "number", "first-axis-one"]
# every target and value for ``+=`` and the reflected ``t = v - t``; every
# operator on two targets
IN_PLACE = [(op, kind, t, v) for op, kind in (("+", "augmented"), ("-", "reflected"))
            for t in TARGETS for v in VALUES] + [
    (op, kind, t, "row") for op in OPS for kind in ("augmented", "reflected")
    for t in TARGETS[1:3]]


@pytest.mark.parametrize("op, kind, target, value", IN_PLACE, ids=str)
def test_in_place_agrees_with_numpy(op, kind, target, value):
    rng = np.random.default_rng(3)
    base = rng.standard_normal(target[0])
    t = _target(base, target[1])
    v = {"same": rng.standard_normal(t.shape), "row": rng.standard_normal(t.shape[-1:]),
         "number": 0.75, "first-axis-one": rng.standard_normal((1,) + t.shape[1:])}[value]
    want = base.copy()
    wt = _target(want, target[1])
    wt[...] = _numpy(op, wt, v) if kind == "augmented" else _numpy(op, v, wt)
    _jitted(kind, op)(t, v)
    np.testing.assert_array_equal(base, want)


@pytest.mark.parametrize("view", ["itself", "shifted", "reversed"])
def test_in_place_from_a_view_of_the_target_reads_the_old_values(view):
    base = np.arange(12.0)
    want = base.copy()
    t, v = {"itself": (base, base), "shifted": (base[1:], base[:-1]),
            "reversed": (base, base[::-1])}[view]
    wt, wv = {"itself": (want, want), "shifted": (want[1:], want[:-1]),
              "reversed": (want, want[::-1])}[view]
    wt[...] = wt - wv.copy()
    _jitted("augmented", "-")(t, v)
    np.testing.assert_array_equal(base, want)


def test_a_value_that_does_not_broadcast_to_the_target_raises():
    with pytest.raises(ValueError):
        _jitted("augmented", "+")(np.zeros((3, 4)), np.zeros((2, 3, 4)))
    with pytest.raises(ValueError):
        _binary("+")(np.zeros((3, 4)), np.zeros(3))


# --- end to end --------------------------------------------------------------------
def _rotate_like(cam, x, w):
    """Whole-array arithmetic of mixed dimensions, as GradBench's ba writes it."""
    v = x - cam[3:6]
    theta = np.sqrt(np.sum(cam[0:3] * cam[0:3], axis=0))
    k = cam[0:3] / theta
    r = v * np.cos(theta) + k * np.sum(k * v, axis=0) * (1.0 - np.cos(theta))
    proj = r[0:2] / r[2]
    return np.sum(w * (proj * cam[6] + cam[7:9]), axis=1)


def _outer_like(a, b):
    """Broadcasting of size-one axes, a transposed operand, minus and division."""
    m = a[:, None, :] * b[None, :, :] - b.T[:, :, None][: a.shape[0]]
    return np.sum(-m / (1.0 + a[:, None, :] ** 2))


@pytest.mark.parametrize("fn, args", [
    (_rotate_like, lambda r: (r.standard_normal((9, 7)) + 2.0, r.standard_normal((3, 7)),
                              r.standard_normal(7))),
    (_outer_like, lambda r: (r.standard_normal((3, 4)), r.standard_normal((5, 4))))],
    ids=["rotate", "outer"])
def test_whole_array_derivatives_agree_with_the_python_backend(fn, args):
    a = args(np.random.default_rng(4))
    before = [x.copy() for x in a]
    jac = wg.jacrev(fn, argnums=tuple(range(len(a))), engine="source")
    jac_n = wg.jacrev(fn, argnums=tuple(range(len(a))), engine="source", backend="numba",
                      fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", wg.NumbaFallbackWarning)
        got = jac_n(*a)
    want = jac(*a)
    assert_close(got, want, rtol("exact", want))
    for x, y in zip(a, before):
        np.testing.assert_array_equal(x, y)
    # the arithmetic is the loops', not numba's array expressions
    calls = {name for name in K.KERNELS if f" {name}(" in jac_n.source}
    assert "mul" in calls and calls & {"sub", "isub", "rsub"}, jac_n.source
