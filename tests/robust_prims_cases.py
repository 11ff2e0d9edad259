"""The cases of core/test_rules.py, numpy/test_library.py, test_ufuncs.py,
test_math_twins.py and core/test_inplace.py: small user functions, each one member
of a class of mistakes or a family of functions, at module level so the
source engine reads their source (and errors name their lines here).

* ``SHAPE_GUARDS``: every shape rule that checks its operands, with good and
  bad shapes;
* ``KEYWORD_CALLS``: NumPy calls by keyword, with positional twins;
  ``REFUSED``: keywords wengert does not implement;
* ``WRITES``: every way of storing a traced value into an array in place;
* ``dt_*`` and ``OPERANDS``: the families and operand kinds of the dtype table;
* ``in_user_code``: a math builtin called inside a user function;
* ``numpy_signature`` and ``assert_takes_parameters``: NumPy's signature of a
  function, and the check that a wrapper takes its parameters (the library
  table's entries, ``numpy/test_library.py``, and the shape family's,
  ``numpy/test_shapes.py``).
"""
from __future__ import annotations

import math

import numpy as np

import wengert as wg
from wengert.core import errors


# --- shape rules ----------------------------------------------------------------------
def sg_add(a, b):
    return np.sum(a + b)


def sg_mul_2d(a, b):
    return np.sum(a * b)


def sg_where(a, b):
    return np.sum(np.where(a > 0.0, a, b))


def sg_matmul(a, b):
    return np.sum(a @ b)


def sg_dot(a, b):
    return np.sum(np.dot(a, b))


def sg_einsum(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b))


def sg_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=([1], [0])))


def sg_concatenate(a, b):
    return np.sum(np.concatenate([a, b], axis=0) ** 2)


def sg_stack(a, b):
    return np.sum(np.stack([a, b]) ** 2)


def sg_reshape(a):
    return np.sum(np.sin(a.reshape(6)))


def sg_broadcast_to(a, b):
    return np.sum(np.broadcast_to(a, (3, 4)) * b)


def sg_transpose(a, b):
    return np.sum(np.transpose(a, (1, 0)) * b)


def sg_squeeze(a):
    return np.sum(np.squeeze(a, axis=0) ** 2)


def sg_solve(a, b):
    return np.sum(np.linalg.solve(a, b))


def sg_inv(a):
    return np.sum(np.linalg.inv(a))


def sg_det(a):
    return np.linalg.det(a)


SHAPE_GUARDS = [
    ("broadcast", sg_add, [(3,), (3,)], [(3,), (4,)]),
    ("broadcast-2d", sg_mul_2d, [(2, 3), (3,)], [(2, 3), (2,)]),
    ("where", sg_where, [(3,), (3,)], [(3,), (2,)]),
    ("matmul", sg_matmul, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("matmul-vector", sg_matmul, [(3,), (3, 4)], [(2,), (3, 4)]),
    ("matmul-batch", sg_matmul, [(2, 3, 4), (2, 4, 5)], [(3, 3, 4), (2, 4, 5)]),
    ("dot", sg_dot, [(2, 3), (3,)], [(2, 3), (4,)]),
    ("einsum", sg_einsum, [(2, 3), (3, 4)], [(2, 5), (3, 4)]),
    ("tensordot", sg_tensordot, [(2, 3), (3, 4)], [(2, 3), (2, 4)]),
    ("concatenate", sg_concatenate, [(2, 3), (1, 3)], [(2, 3), (1, 4)]),
    ("stack", sg_stack, [(3,), (3,)], [(3,), (4,)]),
    ("reshape", sg_reshape, [(2, 3)], [(2, 4)]),
    ("broadcast_to", sg_broadcast_to, [(4,), (3, 4)], [(5,), (3, 4)]),
    ("transpose", sg_transpose, [(2, 3), (3, 2)], [(2, 3, 1), (3, 2)]),
    ("squeeze", sg_squeeze, [(1, 3)], [(2, 3)]),
    ("solve", sg_solve, [(3, 3), (3,)], [(3, 3), (4,)]),
    ("solve-batch", sg_solve, [(2, 3, 3), (2, 3, 2)], [(2, 3, 3), (3, 3, 2)]),
    ("inv", sg_inv, [(3, 3)], [(3, 4)]),
    ("det", sg_det, [(3, 3)], [(3, 4)]),
]


# --- NumPy's keyword names: each keyword call, with its positional twin where NumPy
# has one
def kw_moveaxis(x):
    return np.moveaxis(x, source=0, destination=-1) * W342


def pos_moveaxis(x):
    return np.moveaxis(x, 0, -1) * W342


def kw_moveaxis_many(x):
    return np.moveaxis(x, source=[0, 1], destination=[-1, 0]) * W342


def pos_moveaxis_many(x):
    return np.transpose(x, (1, 2, 0)) * W342


def kw_swapaxes(x):
    return np.swapaxes(x, axis1=0, axis2=2) * W432


def pos_swapaxes(x):
    return np.swapaxes(x, 0, 2) * W432


def kw_trace_method(x):
    return x.trace(offset=1, axis1=1, axis2=2)


def kw_transpose(x):
    return np.transpose(x, axes=(2, 0, 1)) * W423


def pos_transpose(x):
    return np.transpose(x, (2, 0, 1)) * W423


def kw_reshape(x):
    return np.sin(np.reshape(x, shape=(6, 4)))


def pos_reshape(x):
    return np.sin(np.reshape(x, (6, 4)))


def kw_reshape_f(x):
    return np.sin(np.reshape(x, (6, 4), order="F")) * W64


def kw_ravel_f(x):
    return np.ravel(x, order="F") * np.arange(24.0)


def kw_sum(x):
    return np.sum(x, axis=1, keepdims=True) * W214


def pos_sum(x):
    return np.sum(x, 1, None, None, True) * W214


def kw_sum_method(x):
    return x.sum(axis=(0, 2), keepdims=True) ** 2


def kw_sum_where(x):
    return np.sum(x ** 2, axis=0, where=MASK34, initial=0.5)


def kw_prod_where(x):
    return np.prod(x, axis=2, where=MASK34, initial=2.0)


def kw_mean(x):
    return np.mean(x ** 2, axis=-1, keepdims=True, dtype=np.float32)


def pos_mean(x):
    return np.mean(x ** 2, -1, np.float32, None, True)


def kw_max(x):
    return np.max(x, axis=0, initial=0.25)


def kw_max_where(x):
    return np.max(x, axis=0, initial=-5.0, where=MASK34)


def kw_min(x):
    return np.min(x * W234, axis=(1, 2), keepdims=True)


def pos_min(x):
    return np.min(x * W234, (1, 2), None, True)


def kw_var(x):
    return np.var(x, axis=1, correction=1)


def pos_var(x):
    return np.var(x, 1, None, None, 1)


def kw_std(x):
    return np.std(x, axis=0, ddof=1, keepdims=True)


def pos_std(x):
    return np.std(x, 0, None, None, 1, True)


def kw_cumsum(x):
    return np.cumsum(x, axis=2) * W234


def pos_cumsum(x):
    return np.cumsum(x, 2) * W234


def kw_trace(x):
    return np.trace(x, offset=1, axis1=1, axis2=2)


def pos_trace(x):
    return np.trace(x, 1, 1, 2)


def kw_diagonal(x):
    return np.diagonal(x, offset=-1, axis1=0, axis2=2)


def pos_diagonal(x):
    return np.diagonal(x, -1, 0, 2)


def kw_tensordot(x):
    return np.tensordot(x, W234, axes=([0, 1], [0, 1]))


def pos_tensordot(x):
    return np.tensordot(x, W234, ([0, 1], [0, 1]))


def kw_squeeze(x):
    return np.squeeze(x[:1], axis=0) * W34


def pos_squeeze(x):
    return np.squeeze(x[:1], 0) * W34


def kw_expand_dims(x):
    return np.expand_dims(x, axis=(0, 2)) * 2.0


def pos_expand_dims(x):
    return np.expand_dims(x, (0, 2)) * 2.0


def kw_broadcast_to(x):
    return np.broadcast_to(x[0, :, 0], shape=(3, 4)) * W34[:, 0]


def pos_broadcast_to(x):
    return np.broadcast_to(x[0, :, 0], (3, 4)) * W34[:, 0]


def kw_concatenate(x):
    return np.concatenate([x, x ** 2], axis=1, dtype=np.float32)


def pos_concatenate(x):
    return np.concatenate([x, x ** 2], 1).astype(np.float32)


def kw_stack(x):
    return np.stack([x, np.sin(x)], axis=-1)


def pos_stack(x):
    return np.stack([x, np.sin(x)], -1)


def kw_clip(x):
    return np.clip(x, min=-0.5, max=0.5) * W234


def pos_clip(x):
    return np.clip(x, -0.5, 0.5) * W234


def kw_clip_method(x):
    return x.clip(min=-0.5, max=0.5) * W234


def kw_norm(x):
    return np.linalg.norm(x, ord=1, axis=2, keepdims=True)


def pos_norm(x):
    return np.linalg.norm(x, 1, 2, True)


def kw_cholesky(x):
    a = np.einsum("ijk,ljk->il", x, x, optimize=True) + 3.0 * np.eye(3)
    return np.linalg.cholesky(a, upper=True)


def pos_cholesky(x):
    a = np.einsum("ijk,ljk->il", x, x) + 3.0 * np.eye(3)
    return np.linalg.cholesky(a).T


def kw_zeros_like(x):
    return np.sin(x) + np.zeros_like(x, shape=(4, 2), dtype=np.float32)


def kw_full_like(x):
    return np.full_like(x, fill_value=x[0, 0, 0] ** 2) * W234


def kw_round(x):
    return np.round(x, decimals=1) + x


def pos_round(x):
    return np.round(x, 1) + x


def kw_astype(x):
    return np.sin(x).astype(dtype=np.float32, casting="same_kind")


def kw_ufunc_dtype(x):
    return np.multiply(x, W234, dtype=np.float32)


def pos_ufunc_dtype(x):
    return np.multiply(x.astype(np.float32), W234.astype(np.float32))


RNG = np.random.default_rng(7)
W234 = RNG.standard_normal((3, 4, 2))
W342, W432, W423 = (RNG.standard_normal(s) for s in ((4, 2, 3), (2, 4, 3), (2, 3, 4)))
W214, W64, W34 = (RNG.standard_normal(s) for s in ((3, 1, 2), (6, 4), (4, 2)))
MASK34 = RNG.standard_normal((4, 2)) > 0.0


KEYWORD_CALLS = [
    ("moveaxis", kw_moveaxis, pos_moveaxis), ("moveaxis-many", kw_moveaxis_many, pos_moveaxis_many),
    ("swapaxes", kw_swapaxes, pos_swapaxes), ("trace-method", kw_trace_method, pos_trace),
    ("transpose", kw_transpose, pos_transpose), ("reshape", kw_reshape, pos_reshape),
    ("reshape-F", kw_reshape_f, None), ("ravel-F", kw_ravel_f, None),
    ("sum", kw_sum, pos_sum), ("sum-method", kw_sum_method, None),
    ("sum-where-initial", kw_sum_where, None), ("prod-where-initial", kw_prod_where, None),
    ("mean-dtype", kw_mean, pos_mean), ("max-initial", kw_max, None),
    ("max-where", kw_max_where, None), ("min", kw_min, pos_min),
    ("var-correction", kw_var, pos_var),
    ("std", kw_std, pos_std), ("cumsum", kw_cumsum, pos_cumsum), ("trace", kw_trace, pos_trace),
    ("diagonal", kw_diagonal, pos_diagonal), ("tensordot", kw_tensordot, pos_tensordot),
    ("squeeze", kw_squeeze, pos_squeeze), ("expand_dims", kw_expand_dims, pos_expand_dims),
    ("broadcast_to", kw_broadcast_to, pos_broadcast_to),
    ("concatenate-dtype", kw_concatenate, pos_concatenate), ("stack", kw_stack, pos_stack),
    ("clip", kw_clip, pos_clip), ("clip-method", kw_clip_method, pos_clip),
    ("norm", kw_norm, pos_norm), ("cholesky-upper", kw_cholesky, pos_cholesky),
    ("zeros_like-shape", kw_zeros_like, None), ("full_like", kw_full_like, None),
    ("round", kw_round, pos_round), ("astype", kw_astype, None),
    ("ufunc-dtype", kw_ufunc_dtype, pos_ufunc_dtype),
]


def ufunc_functions(ufunc, **kwargs):
    """``ufunc(..., **kwargs)`` as a function of its operands (one to four:
    NumPy's ufuncs and SciPy's)."""
    def call1(x):
        return ufunc(x, **kwargs)

    def call2(x, y):
        return ufunc(x, y, **kwargs)

    def call3(x, y, z):
        return ufunc(x, y, z, **kwargs)

    def call4(x, y, z, w):
        return ufunc(x, y, z, w, **kwargs)
    return (call1, call2, call3, call4)[ufunc.nin - 1]


# keywords wengert does not implement
def rf_mean_where(x):
    return np.mean(x, where=x > 0.0)


def rf_var_mean(x):
    return np.var(x, mean=np.mean(x))


def rf_ravel_k(x):
    return np.ravel(x, order="K")


def rf_sum_out(x):
    return np.sum(x, axis=0, out=np.zeros(2))


def rf_clip_kwargs(x):
    return np.clip(x, 0.0, 1.0, dtype=np.float32)


def rf_method_out(x):
    return x.max(axis=0, out=np.zeros(2))


def rf_max_where_alone(x):
    return np.max(x, where=x > 0.0)


REFUSED = [("mean-where", rf_mean_where, errors.NoDerivativeRule, r"np\.mean\(\.\.\., where="),
           ("var-mean", rf_var_mean, errors.NoDerivativeRule, r"np\.var\(\.\.\., mean="),
           ("ravel-order-K", rf_ravel_k, errors.NoDerivativeRule, r"np\.ravel\(\.\.\., order="),
           ("sum-out", rf_sum_out, errors.InPlaceUpdateError, r"np\.sum\(\.\.\., out="),
           ("clip-ufunc-keyword", rf_clip_kwargs, errors.NoDerivativeRule,
            r"np\.clip\(\.\.\., dtype="),
           ("method-out", rf_method_out, errors.InPlaceUpdateError, r"np\.max\(\.\.\., out="),
           ("max-where-without-initial", rf_max_where_alone, ValueError,
            r"np\.max with where= needs initial=")]


# --- writes of traced values ------------------------------------------------------------
def wr_traced_item(x):
    y = x * 2.0
    y[1] = x[0] ** 2
    return np.sum(y * x)


def wr_plain_item(x):
    z = np.zeros(3)
    z[0] = x[0]
    return np.sum(z * x)


def wr_plain_item_f32(x):
    z = np.zeros(3, np.float32)
    z[2] = x[1] * 3.0
    return np.sum(z * np.float32(2.0))


def wr_plain_item_int(x):
    z = np.zeros(3, np.int64)
    z[2] = x[1]
    return np.sum(z * x)


def wr_plain_complex(x):
    z = np.zeros(3, np.complex128)
    z[0] = x[0]
    return np.sum(np.real(z) * x)


def wr_plain_slice(x):
    z = np.ones(3)
    z[0:2] = x[1:] ** 2
    return np.sum(z * x)


def wr_plain_fancy(x):
    z = np.ones(3)
    z[[2, 0]] = x[:2]
    return np.sum(z * x)


def wr_plain_mask(x):
    z = np.ones(3)
    z[z > 0.0] = x
    return np.sum(z * x)


def wr_plain_ellipsis(x):
    z = np.ones(3)
    z[...] = np.sin(x)
    return np.sum(z * x)


def wr_plain_augmented_item(x):
    z = np.ones(3)
    z[1] += x[2]
    return np.sum(z * x)


def wr_plain_augmented(x):
    z = np.ones(3)
    z += x
    return np.sum(z * x)


def wr_ufunc_out(x):
    z = np.ones(3)
    np.multiply(x, 2.0, out=z)
    return np.sum(z * x)


# the writes, and what the source engine does with them: the derivative
# (None), or a typed refusal of its own (an explicit out=)
WRITES = [("traced-item", wr_traced_item, None), ("plain-item", wr_plain_item, None),
          ("plain-item-float32", wr_plain_item_f32, None),
          ("plain-item-int", wr_plain_item_int, None),
          ("plain-item-complex", wr_plain_complex, None),
          ("plain-slice", wr_plain_slice, None), ("plain-fancy", wr_plain_fancy, None),
          ("plain-mask", wr_plain_mask, None), ("plain-ellipsis", wr_plain_ellipsis, None),
          ("plain-augmented-item", wr_plain_augmented_item, None),
          ("plain-augmented", wr_plain_augmented, None),
          ("ufunc-out", wr_ufunc_out, errors.InPlaceUpdateError)]


def wr_with_at(x):
    z = np.zeros(3)
    z = wg.at(z)[0].set(x[0])
    y = wg.at(x)[1].set(x[0] ** 2)
    return np.sum(z * y)


# --- math builtins ---------------------------------------------------------------------
# arguments inside every twin's domain; two-argument functions get two
MATH_ARGS = {math.atan2: (0.37, -0.81), math.pow: (1.3, 0.7), math.hypot: (0.37, -0.81),
             math.log: (1.7,)}


def in_user_code(fn, nargs):
    """``fn`` called inside a user function, its Python float result scaled
    by a float32 array (NumPy keeps float32: the result is weakly typed)."""
    if nargs == 1:
        def user1(x):
            return fn(x) * V32
        return user1

    def user2(x, y):
        return fn(x, y) * V32
    return user2


V32 = np.array([1.5, -0.5], np.float32)


# --- dtypes: the operand kinds and the families -------------------------------------------
OPERANDS = {
    "f32": lambda: np.array([0.3, 0.6, 0.2], np.float32),
    "f64": lambda: np.array([0.35, 0.65, 0.25]),
    "pyfloat": lambda: 0.45,
    "pyint": lambda: 2,
    "i64": lambda: np.array([1, 2, 3]),
    "f32scalar": lambda: np.float32(0.7),
}


FLOAT_KINDS = ("f32", "f64", "pyfloat", "f32scalar")


def dt_sin(x):
    return np.sin(x)


def dt_square_op(x):
    return x ** 2


def dt_sqrt_op(x):
    return x ** 0.5


def dt_neg(x):
    return -x


def dt_abs(x):
    return abs(x)


def dt_np_square(x):
    return np.square(x)


def dt_mod(x):
    return x % 0.25 + x


def dt_floordiv(x):
    return x // 0.25 + x


def dt_exp(x):
    return np.exp(x)


def dt_float(x):
    return float(x) * 2.0


def dt_mul(x, y):
    return x * y


def dt_add(x, y):
    return x + y


def dt_div(x, y):
    return x / y


def dt_sub(x, y):
    return x - y


def dt_pow(x, y):
    return x ** y


def dt_scaled_square(x, y):
    return np.sum(x ** 2 * y)


def dt_np_add(x, y):
    return np.add(x, y)


def dt_maximum(x, y):
    return np.maximum(x, y)


def dt_arctan2(x, y):
    return np.arctan2(x, y)


def dt_where(x, y):
    return np.where(np.array([True, False, True]), x, y)


def dt_sum(x):
    return np.sum(x)


def dt_mean(x):
    return np.mean(x)


def dt_max(x):
    return np.max(x)


def dt_prod(x):
    return np.prod(x)


def dt_builtin_max(x, y):
    return max(x, y) * V32 + min(x, y)


def dt_matmul(x, y):
    return x @ y


def dt_getitem(x):
    return x[1] * x


def dt_setitem(x, v):
    y = x * 1
    y[1:] = v[1:] if np.ndim(v) else v
    return y


def dt_at_set(x, v):
    return wg.at(x * 1)[1:].set(v[1:] if np.ndim(v) else v)


def setitem_reference(x, v):
    y = x * 1
    y[1:] = v[1:] if np.ndim(v) else v
    return y


# --- NumPy's signatures where an older NumPy does not expose them -----------------------
# NumPy 2.2 (the last for Python 3.10) gives no ``inspect.signature`` for these C
# functions and ndarray methods; these are NumPy 2.4's, as it reports them. The
# tests use the live signature wherever NumPy has one.
RECORDED_SIGNATURES = {
    "ndarray.round": "(self, /, decimals=0, out=None)",
    "ndarray.diagonal": "(self, /, offset=0, axis1=0, axis2=1)",
    "ndarray.clip": "(self, /, min=None, max=None, out=None, **kwargs)",
    "ndarray.mean": "(self, /, axis=None, dtype=None, out=None, **kwargs)",
    "ndarray.cumsum": "(self, /, axis=None, dtype=None, out=None)",
    "ndarray.reshape": "(self, /, *shape, order='C', copy=None)",
    "ndarray.sum": "(self, /, axis=None, dtype=None, out=None, **kwargs)",
    "ndarray.transpose": "(self, /, *axes)",
    "ndarray.flatten": "(self, /, order='C')",
    "ndarray.argmax": "(self, /, axis=None, out=None, *, keepdims=False)",
    "ndarray.ravel": "(self, /, order='C')",
    "ndarray.argmin": "(self, /, axis=None, out=None, *, keepdims=False)",
    "ndarray.trace": "(self, /, offset=0, axis1=0, axis2=1, dtype=None, out=None)",
    "ndarray.std": "(self, /, axis=None, dtype=None, out=None, ddof=0, **kwargs)",
    "ndarray.prod": "(self, /, axis=None, dtype=None, out=None, **kwargs)",
    "ndarray.tolist": "(self, /)",
    "ndarray.var": "(self, /, axis=None, dtype=None, out=None, ddof=0, **kwargs)",
    "ndarray.swapaxes": "(self, axis1, axis2, /)",
    "ndarray.squeeze": "(self, /, axis=None)",
    "ndarray.astype": "(self, /, dtype, order='K', casting='unsafe', subok=True, copy=True)",
    "ndarray.min": "(self, /, axis=None, out=None, **kwargs)",
    "ndarray.max": "(self, /, axis=None, out=None, **kwargs)",
    "ndarray.copy": "(self, /, order='C')",
    "ndarray.dot": "(self, other, /, out=None)",
    "ndarray.item": "(self, /, *args)",
    "numpy.concatenate": "(arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind')",
    "numpy.dot": "(a, b, out=None)",
    "numpy.inner": "(a, b, /)",
    "numpy.where": "(condition, x=None, y=None, /)",
}


def numpy_signature(f, key):
    """NumPy's signature of ``f``: the live one, else the recorded one under
    ``key`` (``numpy.name`` or ``ndarray.name``), else None."""
    import inspect
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):
        text = RECORDED_SIGNATURES.get(key)
        if text is None:
            return None
        ns = {}
        exec(f"def recorded{text}: pass", ns)       # the text is NumPy's own signature
        return inspect.signature(ns["recorded"])


def assert_takes_parameters(theirs, ours, what):
    """Every parameter of ``theirs`` is one of ``ours``, of the same kind, at
    the same position when it can be passed by position, with the same
    default; ``ours`` may add keyword-only parameters with defaults (names
    of other NumPy versions), and takes ``**kwargs`` only where NumPy does."""
    mine = list(ours.parameters.values())
    names = [p.name for p in mine]
    for k, p in enumerate(theirs.parameters.values()):
        assert p.name in names, f"{what}: parameter {p.name!r} missing from {ours}"
        q = ours.parameters[p.name]
        assert q.kind == p.kind, f"{what}: {p.name!r} is {q.kind}, NumPy's is {p.kind}"
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL):
            assert names.index(p.name) == k, f"{what}: {p.name!r} at another position"
        if p.default is not p.empty:
            assert q.default is p.default or q.default == p.default, \
                f"{what}: {p.name}={q.default!r}, NumPy's default is {p.default!r}"
    for q in mine:
        if q.name not in theirs.parameters:
            assert q.kind == q.KEYWORD_ONLY and q.default is not q.empty, \
                f"{what}: extra parameter {q.name!r} NumPy does not have"
