"""What to test each primitive on, and a named corpus of small programs.

``SPECS`` has one entry per name in ``wengert.primitives.PRIMITIVES``
(test_rules.py fails for a primitive without one). An entry says how the
primitive is tested (``mode``), on which operands (``cases``: generators with
shapes, dtypes and a domain where the primitive is smooth), against which
NumPy reference, through which public wrapper, and in which operands it is
linear (for the transpose test).

Modes:

* ``DIFF``        smooth in its float operands: jvp vs finite differences,
                  second order, both API modes;
* ``ZERO_DERIV``  piecewise constant (floor, sign...): the jvp is zero, and so
                  are finite differences away from the jumps;
* ``STOPPED``     the value itself, its derivative zero by definition
                  (``stop_gradient``): the jvp is zero, finite differences not;
* ``NONDIFF``     no derivative at all (comparisons, logical, argmax,
                  isfinite): impl and abstract_eval only, and a jvp through
                  it carries a zero tangent;
* ``API``         inline or custom-rule primitives, whose behaviour is the
                  user's rule: tested in control/test_custom.py.

``CORPUS`` maps names to programs: plain Python functions over ``np.*``, with
arguments to differentiate (constants are closed over).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import wengert as wg
from wengert.demo import seed000  # noqa: F401  (in the corpus)

from wengert.primitives import (
    arith, einsum, fanout, index, linalg, matrix, ordering, reduce, safe, scatter, selection,
    unbounded,
    shape, stop, transcendental)
from wengert.numpy import composite
from wengert.primitives.index import normalize_index

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)

DIFF = "diff"
ZERO_DERIV = "zero_deriv"
STOPPED = "stopped"
NONDIFF = "nondiff"
API = "api"

EACH = "each"   # linear in each operand separately (mul, matmul, einsum)
ALL = "all"     # linear in all its differentiated operands jointly (concatenate)


# --- operand generators -----------------------------------------------------
@dataclass(frozen=True)
class Arg:
    """One operand: ``draw(rng, dtype)`` makes it; ``diff`` says whether it is
    differentiated (bool masks, integer exponents and constants are not)."""
    draw: Callable[[np.random.Generator, np.dtype], Any]
    desc: str
    diff: bool = True


def _floats(shape, dtype, values):
    return np.asarray(values, dtype).reshape(shape)


def real(shape, lo=-2.0, hi=2.0):
    return Arg(lambda rng, dt: _floats(shape, dt, rng.uniform(lo, hi, shape)),
               f"U({lo},{hi}){shape}")


def pos(shape, lo=0.5, hi=2.0):
    return real(shape, lo, hi)


def away(shape, lo=0.5, hi=2.0):
    """Either sign, magnitude in [lo, hi]: away from 0 (abs, sign, div)."""
    def draw(rng, dt):
        return _floats(shape, dt, rng.choice([-1.0, 1.0], shape) * rng.uniform(lo, hi, shape))
    return Arg(draw, f"+-U({lo},{hi}){shape}")


def frac(shape, lo, hi, unit=1.0):
    """``unit * (k + u)``, k integer, u in [lo, hi]: away from the jumps of
    floor/ceil (u in (0.2, 0.8)) or round (u in (-0.3, 0.3))."""
    def draw(rng, dt):
        k = rng.integers(-3, 3, shape)
        return _floats(shape, dt, unit * (k + rng.uniform(lo, hi, shape)))
    return Arg(draw, f"{unit}*(k+U({lo},{hi})){shape}")


def cells(shape, offset):
    """``2k + offset + U(0, 0.8)``: operands drawn with offsets 0 and 1 are
    1 apart at least 0.2 everywhere, with either one larger (maximum, minimum)."""
    def draw(rng, dt):
        k = rng.integers(-2, 2, shape)
        return _floats(shape, dt, 2.0 * k + offset + rng.uniform(0.0, 0.8, shape))
    return Arg(draw, f"cells{offset}{shape}")


def grid(shape):
    """Float values in {-1, 0, 1}: comparisons see ties."""
    return Arg(lambda rng, dt: _floats(shape, dt, rng.integers(-1, 2, shape)), f"grid{shape}",
               diff=False)


def bools(shape):
    """A random mask; with two or more entries, at least one of each value
    (so neither branch of a where is vacuous)."""
    def draw(rng, dt):
        m = rng.random(shape) < 0.5
        if m.size >= 2:
            m.reshape(-1)[:2] = [True, False]
        return m
    return Arg(draw, f"bool{shape}", diff=False)


def ints(values):
    arr = np.asarray(values, np.int64)
    return Arg(lambda rng, dt: arr.copy(), f"int{arr.shape}", diff=False)


def const(value):
    """A fixed operand (a Python scalar keeps its weak type)."""
    return Arg(lambda rng, dt: value, f"const({value!r})", diff=False)


def with_nonfinite(shape):
    def draw(rng, dt):
        x = rng.uniform(-2, 2, shape).astype(dt)
        x.reshape(-1)[:3] = [np.inf, -np.inf, np.nan]
        return x
    return Arg(draw, f"nonfinite{shape}", diff=False)


def diagdom(n, batch=(), negative=False):
    """Diagonally dominant, so well conditioned; ``negative`` flips one
    diagonal entry's sign (a negative determinant for slogdet)."""
    def draw(rng, dt):
        a = rng.uniform(-1.0, 1.0, batch + (n, n))
        d = np.full(n, n + 1.0)
        if negative:
            d[0] = -d[0]
        return (a + np.diag(d)).astype(dt)
    return Arg(draw, f"diagdom{batch + (n, n)}")


def spd(n, batch=()):
    def draw(rng, dt):
        m = rng.uniform(-1.0, 1.0, batch + (n, n))
        return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dt)
    return Arg(draw, f"spd{batch + (n, n)}")


# --- cases -------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """Operands, params and dtype for one test of one primitive.

    ``params`` go to the primitive (``bind``/``impl``/rules); ``call_params``
    to the reference and the public wrapper (they differ for indices, where
    the wrapper takes a boolean mask and the primitive its normalised form).
    ``mode``/``linear_in`` override the primitive's for this case; ``tangent``
    maps random tangents of the differentiated operands to admissible ones.
    """
    id: str
    args: tuple
    params: dict = field(default_factory=dict)
    dtype: np.dtype = F64
    call_params: dict | None = None
    mode: str | None = None
    linear_in: Any = None
    tangent: Callable | None = None

    @property
    def wrapper_params(self):
        return self.params if self.call_params is None else self.call_params

    def operands(self, prim_name):
        """The operands, drawn from an RNG seeded by the primitive and case
        names (crc32: stable across runs, unlike ``hash``)."""
        rng = np.random.default_rng(zlib.crc32(f"{prim_name}:{self.id}".encode()))
        return [a.draw(rng, self.dtype) for a in self.args]

    @property
    def diff_positions(self):
        return [i for i, a in enumerate(self.args) if a.diff]


@dataclass(frozen=True)
class PrimSpec:
    mode: str
    cases: tuple = ()
    reference: Callable | None = None   # reference(*operands, **call_params)
    wrapper: Callable | None = None     # wrapper(*operands, **call_params), the public verb
    linear_in: Any = ()                 # EACH, ALL, or a tuple of operand-position groups
    reason: str = ""

    def mode_of(self, case):
        return case.mode or self.mode

    def linear_groups(self, case):
        """Groups of operand positions to transpose jointly, restricted to the
        case's differentiated (float) operands."""
        spec = self.linear_in if case.linear_in is None else case.linear_in
        diff = case.diff_positions
        n = len(case.args)
        if spec == EACH:
            groups = [(i,) for i in range(n)]
        elif spec == ALL:
            groups = [tuple(diff)]
        else:
            groups = list(spec)
        return [g for g in groups if g and all(i in diff for i in g)]


def _tag(dtype):
    return "f64" if np.dtype(dtype) == F64 else "f32"


def _shp(s):
    return "x".join(map(str, s)) if s else "s"


def variants(base_id, args, params=None, dtypes=(F64, F32), **kw):
    """One Case per dtype."""
    return tuple(Case(f"{base_id}-{_tag(dt)}", tuple(args), dict(params or {}), np.dtype(dt), **kw)
                 for dt in dtypes)


UNARY_SHAPES = ((), (3,), (2, 3))
# broadcasting pairs: scalar with scalar, same shape, (3,1) with (4,), array with scalar
BINARY_SHAPES = (((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((), (2, 3)))
F32_BINARY_SHAPES = (((), ()), ((3, 1), (4,)))


def unary_cases(gen, dtypes=(F64, F32)):
    return sum((variants(_shp(s), [gen(s)], dtypes=dtypes) for s in UNARY_SHAPES), ())


def binary_cases(gen_x, gen_y):
    out = ()
    for sx, sy in BINARY_SHAPES:
        out += variants(f"{_shp(sx)}_{_shp(sy)}", [gen_x(sx), gen_y(sy)], dtypes=(F64,))
    for sx, sy in F32_BINARY_SHAPES:
        out += variants(f"{_shp(sx)}_{_shp(sy)}", [gen_x(sx), gen_y(sy)], dtypes=(F32,))
    return out


def _unary_spec(reference, wrapper, gen, mode=DIFF, linear_in=()):
    return PrimSpec(mode, unary_cases(gen), reference, wrapper, linear_in)


# --- references that are not one NumPy call -----------------------------------
def _flat_positions(shape, idx):
    """Where ``x[idx]`` reads from, as flat positions (an index-free way to
    describe a gather, used by the scatter references)."""
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[idx]


def ref_index_add(x, v, idx):
    pos = _flat_positions(np.shape(x), idx)
    vals = np.broadcast_to(v, pos.shape)
    dtype = np.asarray(x).dtype          # an update keeps x's dtype, as x[idx] += v does
    added = np.bincount(pos.ravel(), weights=vals.ravel().astype(np.float64), minlength=np.size(x))
    return (np.asarray(x, np.float64) + added.reshape(np.shape(x))).astype(dtype)


def ref_index_set(x, v, idx):
    pos = _flat_positions(np.shape(x), idx)
    out = np.array(x).ravel()           # keeps x's dtype, as x[idx] = v does
    out[pos.ravel()] = np.broadcast_to(v, pos.shape).ravel()
    return out.reshape(np.shape(x))


def ref_erf(x):
    """erf by its Taylor series, in float64: independent of math.erf."""
    x = np.asarray(x, np.float64)
    term, total = x.copy(), x.copy()
    for n in range(1, 60):
        term = term * (-x * x) / n
        total = total + term / (2 * n + 1)
    return 2.0 / np.sqrt(np.pi) * total


def ref_cumsum(x, axis, reverse):
    if not reverse:
        return np.cumsum(x, axis=axis)
    return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)


def ref_matmul(x, y):
    return np.einsum("...ij,...jk->...ik", x, y)


def ref_solve(a, b):
    return np.linalg.inv(a.astype(np.float64)) @ b.astype(np.float64)


def ref_inv(a):
    n = a.shape[-1]
    return np.linalg.solve(a.astype(np.float64), np.broadcast_to(np.eye(n), a.shape))


def _det_by_eigvals(a):
    return np.prod(np.linalg.eigvals(a.astype(np.float64)), axis=-1).real


def ref_det(a):
    return _det_by_eigvals(a)


def ref_slogdet(a):
    d = _det_by_eigvals(a)
    return np.sign(d), np.log(np.abs(d))


def ref_cholesky(a):
    """Cholesky-Banachiewicz, row by row, on each matrix of a stack."""
    a = np.asarray(a, np.float64)
    out = np.zeros_like(a)
    for b in np.ndindex(a.shape[:-2]):
        m, low = a[b], out[b]
        n = m.shape[0]
        for i in range(n):
            for j in range(i + 1):
                s = m[i, j] - low[i, :j] @ low[j, :j]
                low[i, j] = np.sqrt(s) if i == j else s / low[j, j]
    return out


def ref_getitem(x, idx):
    return np.asarray(x)[idx]


# --- wrappers: the public verbs, adapted to (operands, params) -----------------
def call_reduce_sum(x, axes):
    return reduce.reduce_sum(x, axes=axes)


def call_reduce_max(x, axes):
    return reduce.reduce_max(x, axis=axes)


def call_reduce_min(x, axes):
    return reduce.reduce_min(x, axis=axes)


def call_reduce_prod(x, axes):
    return reduce.reduce_prod(x, axis=axes)


def call_cumsum(x, axis, reverse):
    return reduce.cumsum(x, axis, reverse)


def call_argmax(x, axis):
    return reduce.argmax(x, axis)


def call_argmin(x, axis):
    return reduce.argmin(x, axis)


def call_concatenate(*xs, axis):
    return index.concatenate(*xs, axis=axis)


def call_einsum(*ops, spec):
    return einsum.einsum(spec, *ops)


def _sym(a):
    return arith.mul(0.5, arith.add(a, shape.swapaxes(a, -1, -2)))


def call_cholesky_of_sym(a):
    """The derivative of cholesky is defined along symmetric directions; the
    wrapper symmetrises its input so that FD and AD see the same function."""
    return matrix.cholesky(_sym(a))


def ref_cholesky_of_sym(a):
    return ref_cholesky(0.5 * (a + np.swapaxes(a, -1, -2)))


def sym_tangents(tangents):
    return [0.5 * (t + np.swapaxes(t, -1, -2)) for t in tangents]


def ref_round(x, decimals=0):
    # np.round rounds half to even; away from the halves this is floor(x + 0.5)
    scale = 10.0 ** decimals
    return (np.floor(np.asarray(x, np.float64) * scale + 0.5) / scale).astype(np.asarray(x).dtype)


# --- the table ----------------------------------------------------------------
def _idx_cases(base, x_shape, items, dtypes=(F64,)):
    """Cases for getitem: ``items`` are (id, raw index)."""
    out = ()
    for cid, raw in items:
        out += variants(f"{base}{cid}", [real(x_shape)], {"idx": normalize_index(raw)[0]},
                        dtypes=dtypes, call_params={"idx": raw})
    return out


def _scatter_cases(items, dtypes=(F64,)):
    """Cases for index_add/index_set: (id, raw index, shape of v)."""
    out = ()
    for cid, raw, v_shape in items:
        out += variants(cid, [real((4, 3)), real(v_shape)], {"idx": normalize_index(raw)[0]},
                        dtypes=dtypes, call_params={"idx": raw})
    return out


MASK_4x3 = np.array([[True, False, True], [False, False, True], [True, True, False],
                     [False, True, False]])
ROWS_MASK = np.array([True, False, True, False])

GETITEM_CASES = (
    _idx_cases("", (4, 3), [
        ("int", (1,)),
        ("negint", (-1, 2)),
        ("slices", (slice(1, 3), slice(None, None, -1))),
        ("ellipsis", (Ellipsis, 0)),
        ("newaxis", (None, slice(None), 1)),
        ("intarray_dup", (np.array([0, 2, 2, 3]),)),
        ("two_intarrays", (np.array([0, 1]), np.array([2, 2]))),
        ("mask2d", MASK_4x3),
        ("rowmask_slice", (ROWS_MASK, slice(1, None))),
    ])
    + _idx_cases("", (4, 3), [("slices", (slice(None, 3), 1)),
                              ("intarray_dup", (np.array([1, 1, 0]),))], dtypes=(F32,))
    + _idx_cases("", (2, 3, 4), [("3d_mixed", (1, Ellipsis, np.array([3, 0])))])
)

INDEX_ADD_CASES = (
    _scatter_cases([
        ("row", (1,), (3,)),
        ("intarray_dup", (np.array([0, 2, 2]),), (3, 3)),
        ("column_scalar", (slice(None), 0), ()),
        ("rowmask", (ROWS_MASK,), (2, 3)),
        ("pairs_dup", (np.array([0, 1, 1]), np.array([2, 0, 0])), (3,)),
        ("broadcast_row", (slice(1, 3),), (1, 3)),
    ])
    + _scatter_cases([("intarray_dup", (np.array([3, 3]),), (2, 3))], dtypes=(F32,))
)

INDEX_SET_CASES = (
    _scatter_cases([
        ("row", (1,), (3,)),
        ("broadcast_rows", (slice(1, 3), slice(None)), (1, 3)),
        ("intarray", (np.array([3, 0]),), (2, 3)),
        ("rowmask_scalar", (ROWS_MASK,), ()),
        ("mask2d", MASK_4x3, (6,)),
    ])
    + _scatter_cases([("intarray", (np.array([2, 0]),), (2, 3))], dtypes=(F32,))
)

_DIFF_UNARY = {
    # name: (reference, domain generator)
    "sin": (np.sin, lambda s: real(s, -3.0, 3.0)),
    "cos": (np.cos, lambda s: real(s, -3.0, 3.0)),
    "tan": (np.tan, lambda s: real(s, -1.2, 1.2)),
    "exp": (np.exp, lambda s: real(s, -2.0, 2.0)),
    "log": (np.log, lambda s: pos(s, 0.3, 3.0)),
    "log1p": (np.log1p, lambda s: real(s, -0.6, 2.0)),
    "expm1": (np.expm1, lambda s: real(s, -2.0, 2.0)),
    "sqrt": (np.sqrt, lambda s: pos(s, 0.3, 3.0)),
    "arcsin": (np.arcsin, lambda s: real(s, -0.9, 0.9)),
    "arccos": (np.arccos, lambda s: real(s, -0.9, 0.9)),
    "arctan": (np.arctan, lambda s: real(s, -3.0, 3.0)),
    "sinh": (np.sinh, lambda s: real(s, -2.0, 2.0)),
    "cosh": (np.cosh, lambda s: real(s, -2.0, 2.0)),
    "tanh": (np.tanh, lambda s: real(s, -2.0, 2.0)),
    "abs": (np.abs, lambda s: away(s)),
    "erf": (ref_erf, lambda s: real(s, -2.0, 2.0)),
}

SPECS: dict[str, PrimSpec] = {}

for _name, (_ref, _gen) in _DIFF_UNARY.items():
    _family = next(m for m in (arith, ordering, transcendental) if hasattr(m, _name))
    SPECS[_name] = _unary_spec(_ref, getattr(_family, _name), _gen)

SPECS.update({
    "neg": _unary_spec(np.negative, arith.neg, real, linear_in=((0,),)),

    # --- zero derivative: domains keep finite differences off the jumps
    "sign": _unary_spec(np.sign, ordering.sign, away, mode=ZERO_DERIV),
    "floor": _unary_spec(np.floor, ordering.floor, lambda s: frac(s, 0.2, 0.8), mode=ZERO_DERIV),
    "ceil": _unary_spec(np.ceil, ordering.ceil, lambda s: frac(s, 0.2, 0.8), mode=ZERO_DERIV),
    "round": PrimSpec(
        ZERO_DERIV,
        unary_cases(lambda s: frac(s, -0.3, 0.3))
        + variants("decimals1_2x3", [frac((2, 3), -0.3, 0.3, unit=0.1)], {"decimals": 1})
        + variants("decimals0_3", [frac((3,), -0.3, 0.3)], {"decimals": 0}, dtypes=(F64,)),
        ref_round, ordering.round),

    # constants shaped like their operand
    "zeros_like": _unary_spec(np.zeros_like, shape.zeros_like, real, mode=ZERO_DERIV),
    "ones_like": _unary_spec(np.ones_like, shape.ones_like, real, mode=ZERO_DERIV),
    # the value itself, with a zero derivative (``wg.stop_gradient``)
    "stop_gradient": _unary_spec(lambda x: x, stop.stop_gradient, real, mode=STOPPED),

    # --- binary arithmetic, with broadcasting
    "add": PrimSpec(DIFF, binary_cases(real, real)
                    + variants("x_pyfloat", [real((3,)), const(2.5)]),
                    np.add, arith.add, linear_in=((0, 1), (0,), (1,))),
    "sub": PrimSpec(DIFF, binary_cases(real, real)
                    + variants("pyfloat_x", [const(2.5), real((2, 3))]),
                    np.subtract, arith.sub, linear_in=((0, 1), (0,), (1,))),
    "mul": PrimSpec(DIFF, binary_cases(real, real)
                    + variants("x_pyfloat", [real((3,)), const(2.5)])
                    + variants("pyint_x", [const(3), real((2, 3))]),
                    np.multiply, arith.mul, linear_in=EACH),
    "div": PrimSpec(DIFF, binary_cases(real, away)
                    + variants("pyfloat_x", [const(1.0), away((3,))]),
                    np.true_divide, arith.div, linear_in=((0,),)),
    # a derivative's products: the operators' values, 0 where the guard is 0
    # (``test_safe.py`` checks the zeros against inf and nan factors)
    "safe_mul": PrimSpec(DIFF, binary_cases(real, real), np.multiply, safe.safe_mul,
                         linear_in=EACH),
    "safe_div": PrimSpec(DIFF, binary_cases(real, away), np.true_divide, safe.safe_div,
                         linear_in=((0,),)),
    # the same products where the local derivative may be infinite (``test_unbounded.py``)
    "unbounded_mul": PrimSpec(DIFF, binary_cases(real, real), np.multiply,
                              unbounded.unbounded_mul, linear_in=EACH),
    "unbounded_div": PrimSpec(DIFF, binary_cases(real, away), np.true_divide,
                              unbounded.unbounded_div, linear_in=((0,),)),
    "pow": PrimSpec(
        DIFF,
        binary_cases(pos, lambda s: real(s, -1.5, 1.5))
        + variants("negbase_pyint3", [real((2, 3)), const(3)])
        + variants("negbase_pyint2", [real((3, 1)), const(2)])
        + variants("negbase_intarray", [real((2, 3)), ints([1, 2, 3])], dtypes=(F64,))
        + variants("pyfloat_half", [pos((3,)), const(0.5)])
        + variants("pyfloat_base", [const(2.0), real((3,))]),
        np.power, transcendental.pow),
    "logaddexp": PrimSpec(DIFF, binary_cases(real, real)
                          + variants("large_2x3_s", [real((2, 3), 700.0, 710.0), real((), -5.0, 5.0)],
                                     dtypes=(F64,)),
                          np.logaddexp, transcendental.logaddexp),
    "arctan2": PrimSpec(DIFF, binary_cases(real, pos) + binary_cases(away, real),
                        np.arctan2, transcendental.arctan2),
    "maximum": PrimSpec(DIFF, binary_cases(lambda s: cells(s, 0), lambda s: cells(s, 1))
                        + variants("relu", [away((2, 3)), const(0.0)]),
                        np.maximum, ordering.maximum),
    "minimum": PrimSpec(DIFF, binary_cases(lambda s: cells(s, 1), lambda s: cells(s, 0))
                        + variants("clip", [away((2, 3)), const(0.0)]),
                        np.minimum, ordering.minimum),
    "where": PrimSpec(DIFF,
                      variants("3x1_4_s", [bools((3, 1)), real((4,)), real(())])
                      + variants("2x3", [bools((2, 3)), real((2, 3)), real((2, 3))])
                      + variants("true_3_pyfloat", [const(np.bool_(True)), real((3,)), const(0.0)])
                      + variants("false_pyfloat_3", [const(False), const(1.0), real((3,))]),
                      np.where, selection.where, linear_in=((1, 2), (1,), (2,))),

    "convert": PrimSpec(
        DIFF,
        variants("to_f32", [real((2, 3))], {"dtype": F32}, dtypes=(F64,))
        + variants("to_f64", [real((3,))], {"dtype": F64}, dtypes=(F32,))
        + variants("to_same", [real(())], {"dtype": F64}, dtypes=(F64,))
        + variants("to_python_float", [real(())], {"dtype": F64, "weak": True},
                   dtypes=(F64, F32))
        + variants("to_int32", [frac((2, 3), 0.2, 0.8)], {"dtype": np.dtype(np.int32)},
                   dtypes=(F64,), mode=ZERO_DERIV, linear_in=()),
        lambda x, dtype, weak=False: (float if weak else np.asarray)(np.asarray(x).astype(dtype)),
        arith.convert, linear_in=((0,),)),

    # --- the linear helpers of the transforms
    "dup": PrimSpec(DIFF, variants("3", [real((3,))]) + variants("s", [real(())]),
                    lambda x: (x, x), fanout.dup, linear_in=((0,),)),
    "add_any": PrimSpec(DIFF, variants("2x3", [real((2, 3)), real((2, 3))])
                        + variants("s", [real(()), real(())]),
                        # add_any only ever sums two cotangents, both linear (its
                        # transpose rule returns both cotangents without looking)
                        np.add, fanout.add_any, linear_in=((0, 1),)),

    # --- shape
    "broadcast_to": PrimSpec(
        DIFF,
        variants("3_to_2x3", [real((3,))], {"shape": (2, 3)})
        + variants("3x1_to_3x4", [real((3, 1))], {"shape": (3, 4)})
        + variants("s_to_2x2", [real(())], {"shape": (2, 2)}, dtypes=(F64,))
        + variants("1x3_to_2x2x3", [real((1, 3))], {"shape": (2, 2, 3)}, dtypes=(F64,)),
        np.broadcast_to, shape.broadcast_to, linear_in=((0,),)),
    "reshape": PrimSpec(
        DIFF,
        variants("2x3_to_3x2", [real((2, 3))], {"shape": (3, 2)})
        + variants("6_to_2x3", [real((6,))], {"shape": (2, 3)}, dtypes=(F64,))
        + variants("s_to_1x1", [real(())], {"shape": (1, 1)}, dtypes=(F64,))
        + variants("2x3x2_to_12", [real((2, 3, 2))], {"shape": (12,)}, dtypes=(F64,)),
        np.reshape, shape.reshape, linear_in=((0,),)),
    "transpose": PrimSpec(
        DIFF,
        variants("2x3", [real((2, 3))], {"perm": (1, 0)})
        + variants("2x3x4_201", [real((2, 3, 4))], {"perm": (2, 0, 1)}, dtypes=(F64,))
        + variants("2x3x4_021", [real((2, 3, 4))], {"perm": (0, 2, 1)}, dtypes=(F64,)),
        lambda x, perm: np.transpose(x, perm), shape.transpose, linear_in=((0,),)),
    "concatenate": PrimSpec(
        DIFF,
        variants("axis0", [real((2, 3)), real((1, 3))], {"axis": 0})
        + variants("axis1_three", [real((2, 1)), real((2, 3)), real((2, 2))], {"axis": 1},
                   dtypes=(F64,))
        + variants("vectors", [real((3,)), real((2,))], {"axis": 0}, dtypes=(F64,))
        + variants("with_const", [real((2,)), const(np.array([1.0, 2.0]))], {"axis": 0},
                   dtypes=(F64,)),
        lambda *xs, axis: np.concatenate(xs, axis=axis), call_concatenate, linear_in=ALL),

    # --- reductions
    "reduce_sum": PrimSpec(
        DIFF,
        variants("3_axes0", [real((3,))], {"axes": (0,)})
        + variants("2x3_axes1", [real((2, 3))], {"axes": (1,)})
        + variants("2x3_all", [real((2, 3))], {"axes": (0, 1)}, dtypes=(F64,))
        + variants("2x3x4_axes02", [real((2, 3, 4))], {"axes": (0, 2)}, dtypes=(F64,)),
        lambda x, axes: np.sum(x, axis=axes), call_reduce_sum, linear_in=((0,),)),
    "reduce_max": PrimSpec(
        DIFF,
        variants("5_axes0", [real((5,))], {"axes": (0,)})
        + variants("3x4_axes1", [real((3, 4))], {"axes": (1,)})
        + variants("3x4_all", [real((3, 4))], {"axes": (0, 1)}, dtypes=(F64,))
        + variants("2x3x4_axes02", [real((2, 3, 4))], {"axes": (0, 2)}, dtypes=(F64,)),
        lambda x, axes: np.max(x, axis=axes), call_reduce_max),
    "reduce_min": PrimSpec(
        DIFF,
        variants("5_axes0", [real((5,))], {"axes": (0,)})
        + variants("3x4_axes0", [real((3, 4))], {"axes": (0,)})
        + variants("3x4_all", [real((3, 4))], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: np.min(x, axis=axes), call_reduce_min),
    "reduce_prod": PrimSpec(
        DIFF,
        variants("4_axes0", [away((4,), 0.5, 1.5)], {"axes": (0,)})
        + variants("3x4_axes1", [away((3, 4), 0.5, 1.5)], {"axes": (1,)})
        + variants("2x3_all", [away((2, 3), 0.5, 1.5)], {"axes": (0, 1)}, dtypes=(F64,)),
        lambda x, axes: np.prod(x, axis=axes), call_reduce_prod),
    "cumsum": PrimSpec(
        DIFF,
        variants("4_axis0", [real((4,))], {"axis": 0, "reverse": False})
        + variants("4_axis0_rev", [real((4,))], {"axis": 0, "reverse": True})
        + variants("2x3_axis1", [real((2, 3))], {"axis": 1, "reverse": False}, dtypes=(F64,))
        + variants("2x3_axis0_rev", [real((2, 3))], {"axis": 0, "reverse": True}, dtypes=(F64,)),
        ref_cumsum, call_cumsum, linear_in=((0,),)),
    "argmax": PrimSpec(
        NONDIFF,
        variants("5_none", [real((5,))], {"axis": None})
        + variants("3x4_axis0", [real((3, 4))], {"axis": 0})
        + variants("3x4_axis1", [real((3, 4))], {"axis": 1}, dtypes=(F64,))
        + variants("3x4_none", [real((3, 4))], {"axis": None}, dtypes=(F64,)),
        lambda x, axis: np.argmax(x, axis=axis), call_argmax),
    "argmin": PrimSpec(
        NONDIFF,
        variants("5_none", [real((5,))], {"axis": None})
        + variants("3x4_axis1", [real((3, 4))], {"axis": 1})
        + variants("3x4_none", [real((3, 4))], {"axis": None}, dtypes=(F64,)),
        lambda x, axis: np.argmin(x, axis=axis), call_argmin),

    # --- indexing
    "getitem": PrimSpec(DIFF, GETITEM_CASES, ref_getitem, index.getitem, linear_in=((0,),)),
    "index_add": PrimSpec(DIFF, INDEX_ADD_CASES, ref_index_add, scatter.index_add,
                          linear_in=((0, 1), (0,), (1,))),
    # no duplicate positions: which duplicate wins an assignment is not specified
    "index_set": PrimSpec(DIFF, INDEX_SET_CASES, ref_index_set, scatter.index_set,
                          linear_in=((0, 1), (0,), (1,))),

    # --- linear algebra
    "matmul": PrimSpec(
        DIFF,
        variants("2x3_3x4", [real((2, 3)), real((3, 4))])
        + variants("batch_2x2x3_3x4", [real((2, 2, 3)), real((3, 4))], dtypes=(F64,))
        + variants("bcast_2x1x2x3_3x3x2", [real((2, 1, 2, 3)), real((3, 3, 2))], dtypes=(F64,)),
        ref_matmul, linalg.matmul, linear_in=EACH),
    "einsum": PrimSpec(
        DIFF,
        variants("ij,jk->ik", [real((2, 3)), real((3, 4))], {"spec": "ij,jk->ik"})
        + variants("ii->i", [real((3, 3))], {"spec": "ii->i"}, dtypes=(F64,))
        + variants("ii->", [real((3, 3))], {"spec": "ii->"}, dtypes=(F64,))
        + variants("ij->", [real((2, 3))], {"spec": "ij->"}, dtypes=(F64,))
        + variants("ij->ji", [real((2, 3))], {"spec": "ij->ji"}, dtypes=(F64,))
        + variants("i,i->", [real((3,)), real((3,))], {"spec": "i,i->"}, dtypes=(F64,))
        + variants("bij,bjk->bik", [real((2, 2, 3)), real((2, 3, 2))], {"spec": "bij,bjk->bik"},
                   dtypes=(F64,))
        + variants("ij,jk,kl->il", [real((2, 3)), real((3, 2)), real((2, 2))],
                   {"spec": "ij,jk,kl->il"}, dtypes=(F64,))
        + variants("ij,j->ij", [real((2, 3)), real((3,))], {"spec": "ij,j->ij"}, dtypes=(F64,)),
        lambda *ops, spec: np.einsum(spec, *ops), call_einsum, linear_in=EACH),
    "solve": PrimSpec(
        DIFF,
        variants("3x3_3x2", [diagdom(3), real((3, 2))])
        + variants("batch_2x3x3_2x3x1", [diagdom(3, (2,)), real((2, 3, 1))], dtypes=(F64,))
        + variants("bcast_2x3x3_3x2", [diagdom(3, (2,)), real((3, 2))], dtypes=(F64,)),
        ref_solve, matrix.solve, linear_in=((1,),)),
    "inv": PrimSpec(DIFF, variants("3x3", [diagdom(3)])
                    + variants("batch_2x3x3", [diagdom(3, (2,))], dtypes=(F64,)),
                    ref_inv, matrix.inv),
    "det": PrimSpec(DIFF, variants("3x3", [diagdom(3)])
                    + variants("3x3_negative", [diagdom(3, negative=True)], dtypes=(F64,))
                    + variants("batch_2x3x3", [diagdom(3, (2,))], dtypes=(F64,)),
                    ref_det, matrix.det),
    "slogdet": PrimSpec(DIFF, variants("3x3", [diagdom(3)])
                        + variants("3x3_negative", [diagdom(3, negative=True)], dtypes=(F64,))
                        + variants("batch_2x3x3", [diagdom(3, (2,), negative=True)],
                                   dtypes=(F64,)),
                        ref_slogdet, matrix.slogdet),
    # NumPy reads the lower triangle only; the rule symmetrises the tangent,
    # so derivatives are compared along symmetric directions
    # (the wrapper symmetrises its input for the same reason)
    "cholesky": PrimSpec(DIFF, variants("3x3", [spd(3)], tangent=sym_tangents)
                         + variants("batch_2x3x3", [spd(3, (2,))], dtypes=(F64,),
                                    tangent=sym_tangents),
                         ref_cholesky_of_sym, call_cholesky_of_sym),
})

# comparisons on values with ties, logical operations on masks
for _name, _ref in [("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater),
                    ("greater_equal", np.greater_equal), ("equal", np.equal),
                    ("not_equal", np.not_equal)]:
    SPECS[_name] = PrimSpec(
        NONDIFF,
        variants("3x1_4", [grid((3, 1)), grid((4,))])
        + variants("2x3_s", [grid((2, 3)), grid(())], dtypes=(F64,))
        + variants("2x3_pyfloat", [grid((2, 3)), const(0.0)], dtypes=(F64,)),
        _ref, getattr(ordering, _name))

for _name, _ref in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                    ("logical_xor", np.logical_xor)]:
    SPECS[_name] = PrimSpec(NONDIFF, variants("3x1_4", [bools((3, 1)), bools((4,))], dtypes=(F64,))
                            + variants("2x3", [bools((2, 3)), bools((2, 3))], dtypes=(F64,)),
                            _ref, getattr(ordering, _name))

SPECS["logical_not"] = PrimSpec(NONDIFF, variants("2x3", [bools((2, 3))], dtypes=(F64,)),
                                np.logical_not, ordering.logical_not)
SPECS["isfinite"] = PrimSpec(NONDIFF, variants("2x3", [with_nonfinite((2, 3))]),
                             np.isfinite, ordering.isfinite)

_INLINE = ("an inline primitive: staging and evaluation run the user's function and only "
           "differentiation looks at the user's rule, so there is no fixed impl/jvp to check "
           "here; its behaviour is tested through wg.custom_jvp/wg.custom_vjp in "
           "control/test_custom.py")
SPECS["custom_jvp_call"] = PrimSpec(API, reason=_INLINE)
SPECS["custom_vjp_call"] = PrimSpec(API, reason=_INLINE)
SPECS["custom_lin"] = PrimSpec(
    API, reason="the linear map of a custom_vjp function: its transpose is the user's bwd "
                "and it has no impl of its own (forward mode differentiates the primal); "
                "tested through wg.custom_vjp in reverse mode in control/test_custom.py")


# --- the corpus -------------------------------------------------------------------
@dataclass(frozen=True)
class Prog:
    """A program of the corpus: ``fn(*args)``; every argument is differentiated."""
    fn: Callable
    args: tuple
    scalar: bool       # one scalar float output: grad and hessian apply


_R = np.random.default_rng(20240611)


def seed004(x, y):
    """Seed 004's running example: z = x y + sin x."""
    return x * y + np.sin(x)


_X = _R.standard_normal((5, 3))
_LABELS = np.array([1.0, -1.0, 1.0, 1.0, -1.0])


def logistic_loss(w, b):
    z = _X @ w + b
    return np.mean(np.log1p(np.exp(-_LABELS * z)))


_ONEHOT = np.eye(3)[[0, 2, 1, 2]]


def softmax_xent(logits):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(_ONEHOT * logp) / logits.shape[0]


def mlp_layer(w, b):
    return np.tanh(_X @ w + b)


_Y = _R.standard_normal((5, 2))


def mlp_loss(w1, b1, w2):
    h = np.tanh(_X @ w1 + b1)
    out = h @ w2
    return np.sum((out - _Y) ** 2) / 5.0


def broadcasting(x, y):
    return np.exp(0.3 * x * y) - x / (1.0 + y ** 2)


_MASK = MASK_4x3


def indexing(x):
    a = x[1:3, ::-1]
    b = x[np.array([0, 0, 2]), 1]
    c = x[_MASK]
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(c ** 3) + x[-1, 0] * x[0, -1]


def functional_update(x):
    y = wg.at(x)[1].set(np.sin(x[0]))
    y = wg.at(y)[np.array([0, 2, 2])].add(x[3])
    return y * x


def concat(x, y):
    return np.concatenate([np.sin(x), y ** 2, x[:1] * y[1:]])


def stacking(x):
    s = np.stack([x, x ** 2], axis=1)
    return np.cos(s).reshape(-1) * np.arange(1.0, 7.0)


def einsum_prog(a, b):
    c = np.einsum("ij,jk->ik", a, b)
    return np.einsum("ik,ik->i", c, c) + np.einsum("ii->", a[:, :2])


def linalg_prog(m, b):
    a = m @ m.T + 3.0 * np.eye(3)
    x = np.linalg.solve(a, b)
    _, logdet = np.linalg.slogdet(a)
    chol = np.linalg.cholesky(a)
    return (np.sum(x ** 2) + logdet + 0.01 * np.linalg.det(a) + np.sum(np.linalg.inv(a))
            + np.sum(chol) + np.trace(a @ a) * 0.1)


def reductions(x):
    return (np.max(x, axis=0).sum() + np.prod(x[0]) + np.cumsum(x, axis=1)[:, -1].mean()
            + np.min(x) + x.var() + x.std(axis=1).sum())


def composites(x):
    return (composite.logsumexp(x, axis=1).sum() + composite.softmax(x)[:, 0].sum()
            + np.linalg.norm(x) + composite.log_softmax(x, axis=0)[1].sum())


def piecewise(x, y):
    return np.where(x > 0, x, 0.1 * x) + np.maximum(x, y) * np.abs(y)


def float32_prog(x, w):
    return np.tanh(x * w).sum() + np.float32(0.5) * np.dot(x, w)


def pytree_loss(params, scale):
    pred = _X @ params["w"] + params["b"][0]
    return scale * np.sum((pred - _LABELS) ** 2) + params["b"][1] ** 2


def multi_output(x):
    return np.sin(x), (x ** 2).sum(), {"t": x[::-1] * 2.0}


def _cells(shape, offset):
    k = _R.integers(-2, 2, shape)
    return 2.0 * k + offset + _R.uniform(0.0, 0.8, shape)


CORPUS: dict[str, Prog] = {
    "seed004": Prog(seed004, (0.5, 4.2), True),
    "seed004_arrays": Prog(seed004, (_R.standard_normal(3), _R.standard_normal(3)), False),
    "seed000": Prog(seed000, (1.5, 0.7), True),
    "logistic_loss": Prog(logistic_loss, (_R.standard_normal(3), 0.3), True),
    "softmax_xent": Prog(softmax_xent, (_R.standard_normal((4, 3)),), True),
    "mlp_layer": Prog(mlp_layer, (_R.standard_normal((3, 4)) * 0.5, _R.standard_normal(4)), False),
    "mlp_loss": Prog(mlp_loss, (_R.standard_normal((3, 4)) * 0.5, _R.standard_normal(4),
                                _R.standard_normal((4, 2))), True),
    "broadcasting": Prog(broadcasting, (_R.standard_normal((3, 1)), _R.standard_normal(4)), False),
    "indexing": Prog(indexing, (_R.standard_normal((4, 3)),), True),
    "functional_update": Prog(functional_update, (_R.standard_normal((4, 3)),), False),
    "concat": Prog(concat, (_R.standard_normal(3), _R.standard_normal(2)), False),
    "stacking": Prog(stacking, (_R.standard_normal(3),), False),
    "einsum": Prog(einsum_prog, (_R.standard_normal((2, 3)), _R.standard_normal((3, 4))), False),
    "linalg": Prog(linalg_prog, (_R.standard_normal((3, 3)), _R.standard_normal(3)), True),
    "reductions": Prog(reductions, (_R.uniform(0.5, 1.5, (3, 4)) * _R.choice([-1, 1], (3, 4)),),
                       True),
    "composites": Prog(composites, (_R.standard_normal((2, 5)),), True),
    "piecewise": Prog(piecewise, (_cells(5, 0) + 0.1, _cells(5, 1)), False),
    "float32": Prog(float32_prog, (_R.standard_normal(3).astype(np.float32),
                                   _R.standard_normal(3).astype(np.float32)), True),
    "pytree": Prog(pytree_loss, ({"w": _R.standard_normal(3), "b": [0.2, np.float64(-0.4)]}, 1.5),
                   True),
    "multi_output": Prog(multi_output, (_R.standard_normal(3),), False),
}

_CONTROL = ("structured control flow: its params are sub-Programs, so its cases are programs "
            "(loops and branches checked against the same computation unrolled, in every "
            "mode and to second order) in control/test_for_loop.py, test_cond.py and "
            "test_while_loop.py")
SPECS["cond"] = PrimSpec(API, reason=_CONTROL)
SPECS["for_loop"] = PrimSpec(API, reason=_CONTROL)
SPECS["while_loop"] = PrimSpec(API, reason=_CONTROL)

_CHECKPOINTING = ("checkpointing: its params are sub-Programs and a schedule, so its cases are "
                  "programs (derivatives equal to the store-all ones in both engines, in every "
                  "mode and to second order; schedules against their formulas) in "
                  "control/test_checkpoint.py and control/test_schedules.py")
_OUTSIDE = ("what a Program reads and calls outside the function at run time (a global's "
            "array, a random draw): made by the source engine from a function's globals, "
            "tested through it in frontends/source/test_env.py")
SPECS["env_read"] = PrimSpec(API, reason=_OUTSIDE)
SPECS["host_call"] = PrimSpec(API, reason=_OUTSIDE)
SPECS["env_write"] = PrimSpec(API, reason=(
    "a write the function makes outside itself (self.nfev += 1, a nonlocal): made by the "
    "source engine from attribute and nonlocal/global assignments, tested through it in "
    "frontends/source/test_effects.py"))
for _name in ("checkpoint", "checkpoint_lin", "checkpointed_loop", "loop_forward", "loop_lin",
              "loop_reverse"):
    SPECS[_name] = PrimSpec(API, reason=_CHECKPOINTING)
for _name in ("checkpointed_while", "while_forward"):
    SPECS[_name] = PrimSpec(API, reason=_CHECKPOINTING.replace(
        "control/test_checkpoint.py", "control/test_checkpoint_while.py"))

# x = 2 (k + u), u in (0.2, 0.8), and y near 2: x / y stays away from the jumps
SPECS["remainder"] = PrimSpec(
    DIFF, variants("offgrid", [frac((3,), 0.2, 0.8, unit=2.0), pos((3,), 1.9, 2.1)]),
    np.remainder, ordering.remainder)
SPECS["floor_divide"] = PrimSpec(
    ZERO_DERIV, variants("offgrid", [frac((3,), 0.2, 0.8, unit=2.0), pos((3,), 1.9, 2.1)]),
    np.floor_divide, ordering.floor_divide)


# --- the primitive families added later: each ``tests/prim_cases_<family>.py``
# defines ``SPECS`` for its own primitives (one file per family, so families
# are written apart)
def _family_specs():
    import importlib
    import pathlib
    for path in sorted(pathlib.Path(__file__).parent.glob("prim_cases_*.py")):
        for name, spec in importlib.import_module(path.stem).SPECS.items():
            assert name not in SPECS, f"{path.name}: {name} already has a spec"
            SPECS[name] = spec


_family_specs()
