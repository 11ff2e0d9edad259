"""NumPy's face for traced values: operators, ``__array_ufunc__``,
``__array_function__``, array methods and attributes.

This is the registry's map from Python and NumPy callables to primitive
wrappers: ``np.sin`` on a tracer becomes ``sin``, ``x.sum(axis=0)`` becomes
``reduce_sum``. Plain ``import numpy as np`` code therefore runs unchanged on
tracers. A NumPy function with no entry raises ``NoDerivativeRule`` naming it.
"""
from __future__ import annotations

import linecache
import re
import sys

import math

import numpy as np

from . import arith, composite, index, linalg, matrix, reduce, shape
from .core import TracerBase
from ..errors import (ConcretizationError, InPlaceUpdateError, NoDerivativeRule,
                      UnsupportedFunctionError, user_location)
from ..ir import aval_of


def _identity(x):
    return x


def _log2(x):
    return arith.div(arith.log(x), float(np.log(2.0)))


def _log10(x):
    return arith.div(arith.log(x), float(np.log(10.0)))


def _exp2(x):
    return arith.pow(2.0, x)


def _hypot(x, y):
    return arith.sqrt(arith.add(arith.mul(x, x), arith.mul(y, y)))


UFUNCS = {
    np.add: arith.add, np.subtract: arith.sub, np.multiply: arith.mul,
    np.true_divide: arith.div, np.negative: arith.neg, np.positive: _identity,
    np.power: arith.pow, np.float_power: arith.pow, np.exp: arith.exp, np.log: arith.log,
    np.log1p: arith.log1p, np.expm1: arith.expm1, np.sqrt: arith.sqrt, np.square: arith.square,
    np.reciprocal: arith.reciprocal, np.sin: arith.sin, np.cos: arith.cos, np.tan: arith.tan,
    np.arcsin: arith.arcsin, np.arccos: arith.arccos, np.arctan: arith.arctan,
    np.arctan2: arith.arctan2, np.sinh: arith.sinh, np.cosh: arith.cosh, np.tanh: arith.tanh,
    np.absolute: arith.abs, np.fabs: arith.abs, np.sign: arith.sign,
    np.maximum: arith.maximum, np.minimum: arith.minimum, np.fmax: arith.maximum,
    np.fmin: arith.minimum, np.floor: arith.floor, np.ceil: arith.ceil, np.rint: arith.round,
    np.less: arith.less, np.less_equal: arith.less_equal, np.greater: arith.greater,
    np.greater_equal: arith.greater_equal, np.equal: arith.equal, np.not_equal: arith.not_equal,
    np.logical_and: arith.logical_and, np.logical_or: arith.logical_or,
    np.logical_xor: arith.logical_xor, np.logical_not: arith.logical_not,
    np.isfinite: arith.isfinite, np.matmul: linalg.matmul, np.log2: _log2, np.log10: _log10,
    np.exp2: _exp2, np.logaddexp: arith.logaddexp, np.hypot: _hypot,
    np.remainder: arith.remainder, np.floor_divide: arith.floor_divide,
}


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    _no_out(out, "sum")
    r = reduce.reduce_sum(a, axis=axis, keepdims=keepdims)
    return arith.convert(r, dtype=dtype) if dtype is not None else r


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    _no_out(out, "mean")
    return reduce.mean(a, axis=axis, keepdims=keepdims)


def _prod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    _no_out(out, "prod")
    return reduce.reduce_prod(a, axis=axis, keepdims=keepdims)


def _max(a, axis=None, out=None, keepdims=False, **kw):
    _no_out(out, "max")
    return reduce.reduce_max(a, axis=axis, keepdims=keepdims)


def _min(a, axis=None, out=None, keepdims=False, **kw):
    _no_out(out, "min")
    return reduce.reduce_min(a, axis=axis, keepdims=keepdims)


def _no_out(out, name):
    if out is not None:
        raise NoDerivativeRule(f"np.{name}(..., out=...) writes into an array in place; "
                               "drop out= and use the returned value")


def _cumsum(a, axis=None, dtype=None, out=None):
    _no_out(out, "cumsum")
    return reduce.cumsum(a, axis=axis)


def _reshape(a, shape_=None, order="C", *, newshape=None, shape=None):
    return shape_mod_reshape(a, shape if shape is not None else (shape_ if shape_ is not None else newshape))


shape_mod_reshape = shape.reshape


def _transpose(a, axes=None):
    return shape.transpose(a, axes)


def _where(cond, x=None, y=None):
    if x is None and y is None:
        raise NoDerivativeRule("np.where(cond) with one argument returns indices; "
                               "use np.nonzero on a concrete mask instead")
    return arith.where(cond, x, y)


def _clip(a, a_min=None, a_max=None, out=None, **kw):
    _no_out(out, "clip")
    return arith.clip(a, kw.get("min", a_min), kw.get("max", a_max))


def _zeros_like(a, dtype=None, **kw):
    out = shape.zeros_like(a)
    return out if dtype is None else arith.convert(out, dtype=np.dtype(dtype))


def _ones_like(a, dtype=None, **kw):
    out = shape.ones_like(a)
    return out if dtype is None else arith.convert(out, dtype=np.dtype(dtype))


def _full_like(a, fill_value, dtype=None, **kw):
    av = aval_of(a)
    return arith.add(np.zeros(av.shape, dtype or av.dtype), fill_value)


def _concatenate(arrays, axis=0, **kw):
    if axis is None:
        arrays = [shape.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return shape.concatenate(*arrays, axis=axis)


def _stack(arrays, axis=0, **kw):
    return shape.stack(list(arrays), axis=axis)


def _hstack(arrays, **kw):
    arrays = [shape.reshape(a, (1,)) if np.ndim(a) == 0 else a for a in arrays]
    return shape.concatenate(*arrays, axis=0 if np.ndim(arrays[0]) == 1 else 1)


def _vstack(arrays, **kw):
    arrays = [shape.reshape(a, (1, -1)) if np.ndim(a) < 2 else a for a in arrays]
    return shape.concatenate(*arrays, axis=0)


def _ravel(a, order="C"):
    return shape.reshape(a, (-1,))


def _round(a, decimals=0, out=None):
    _no_out(out, "round")
    return arith.round(a, decimals=decimals)


def _shape(a):
    return aval_of(a).shape


def _ndim(a):
    return aval_of(a).ndim


def _size(a, axis=None):
    s = aval_of(a).shape
    return math.prod(s) if axis is None else s[axis]


def _atleast_1d(*arys):
    out = [shape.reshape(a, (1,)) if np.ndim(a) == 0 else a for a in arys]
    return out[0] if len(out) == 1 else out


def _squeeze(a, axis=None):
    return shape.squeeze(a, axis)


def _expand_dims(a, axis):
    return shape.expand_dims(a, axis)


def _broadcast_to(a, shape_, subok=False):
    return shape.broadcast_to(a, tuple(np.atleast_1d(shape_)) if np.ndim(shape_) else (int(shape_),))


def _argmax(a, axis=None, out=None, **kw):
    return reduce.argmax(a, axis)


def _argmin(a, axis=None, out=None, **kw):
    return reduce.argmin(a, axis)


def _astype(x, dtype, **kw):
    return arith.convert(x, dtype=np.dtype(dtype))


def _copy(a, *args, **kw):
    return a


FUNCTIONS = {
    np.sum: _sum, np.mean: _mean, np.prod: _prod, np.max: _max, np.amax: _max, np.min: _min,
    np.amin: _min, np.cumsum: _cumsum, np.dot: linalg.dot, np.matmul: linalg.matmul,
    np.outer: linalg.outer, np.inner: linalg.inner, np.trace: linalg.trace, np.diag: linalg.diag,
    np.einsum: linalg.einsum, np.concatenate: _concatenate, np.stack: _stack, np.hstack: _hstack,
    np.vstack: _vstack, np.reshape: _reshape, np.transpose: _transpose, np.swapaxes: shape.swapaxes,
    np.moveaxis: shape.moveaxis, np.squeeze: _squeeze, np.expand_dims: _expand_dims,
    np.broadcast_to: _broadcast_to, np.where: _where, np.clip: _clip, np.zeros_like: _zeros_like,
    np.ones_like: _ones_like, np.full_like: _full_like, np.ravel: _ravel, np.round: _round,
    np.around: _round, np.shape: _shape, np.ndim: _ndim, np.size: _size,
    np.atleast_1d: _atleast_1d, np.argmax: _argmax, np.argmin: _argmin, np.copy: _copy,
    np.linalg.solve: matrix.solve, np.linalg.inv: matrix.inv, np.linalg.det: matrix.det,
    np.linalg.slogdet: matrix.slogdet, np.linalg.cholesky: matrix.cholesky,
    np.linalg.norm: composite.norm, np.var: composite.var, np.std: composite.std,
    np.astype: _astype, np.tensordot: linalg.tensordot,
}


def _caller_math_function(depth=2):
    """``math.sin(x)`` calls ``x.__float__``: name the math function from the
    caller's source line, so the error can say what to use instead."""
    frame = sys._getframe(depth)
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = re.search(r"\bmath\.(\w+)\s*\(", line)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return (m.group(1) if m else None), where


class Tracer(TracerBase):
    """Base of every traced value: NumPy arrays' operators, methods, attributes."""

    __slots__ = ()
    __array_priority__ = 1000

    # --- abstract attributes (shape, ndim, size, dtype come from HasAval)
    @property
    def T(self):
        return shape.transpose(self)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (index.getitem(self, i) for i in range(self.aval.shape[0]))

    # --- operators
    def __add__(self, o): return arith.add(self, o)
    def __radd__(self, o): return arith.add(o, self)
    def __sub__(self, o): return arith.sub(self, o)
    def __rsub__(self, o): return arith.sub(o, self)
    def __mul__(self, o): return arith.mul(self, o)
    def __rmul__(self, o): return arith.mul(o, self)
    def __truediv__(self, o): return arith.div(self, o)
    def __rtruediv__(self, o): return arith.div(o, self)
    def __pow__(self, o): return arith.pow(self, o)
    def __rpow__(self, o): return arith.pow(o, self)
    def __matmul__(self, o): return linalg.matmul(self, o)
    def __rmatmul__(self, o): return linalg.matmul(o, self)
    def __mod__(self, o): return arith.remainder(self, o)
    def __rmod__(self, o): return arith.remainder(o, self)
    def __floordiv__(self, o): return arith.floor_divide(self, o)
    def __rfloordiv__(self, o): return arith.floor_divide(o, self)
    def __neg__(self): return arith.neg(self)
    def __pos__(self): return self
    def __abs__(self): return arith.abs(self)
    def __lt__(self, o): return arith.less(self, o)
    def __le__(self, o): return arith.less_equal(self, o)
    def __gt__(self, o): return arith.greater(self, o)
    def __ge__(self, o): return arith.greater_equal(self, o)
    def __eq__(self, o): return arith.equal(self, o)
    def __ne__(self, o): return arith.not_equal(self, o)
    def __and__(self, o): return arith.logical_and(self, o)
    def __or__(self, o): return arith.logical_or(self, o)
    def __invert__(self): return arith.logical_not(self)
    __hash__ = object.__hash__

    def __getitem__(self, idx):
        return index.getitem(self, idx)

    def __setitem__(self, idx, v):
        raise InPlaceUpdateError(
            f"{user_location()}: a traced array cannot be assigned to in place (x[i] = v); "
            "write x = wg.at(x)[i].set(v), or use engine='source', which turns subscripted "
            "assignment into a functional update")

    # --- conversion to Python values: control flow is taken at the concrete
    # value; a float/array conversion would drop the derivative, so it raises
    def _concrete(self, what):
        val = self.concrete_value
        if val is None:
            raise ConcretizationError(
                f"{what} needs a concrete value, but this traced value is symbolic here "
                "(inside a linear function being transposed); avoid Python control flow on it")
        return val

    def __bool__(self):
        return bool(self._concrete("bool() / if / while on a traced value"))

    def __index__(self):
        if self.aval.dtype.kind not in "iub":
            raise TypeError(f"a traced {self.aval.short()} value cannot be used as an index")
        return int(self._concrete("using a traced integer as an index"))

    def __int__(self):
        if self.aval.dtype.kind in "iub":
            return int(self._concrete("int() of a traced value"))
        return self._float_error("int")

    def __float__(self):
        return self._float_error("float")

    def __complex__(self):
        return self._float_error("complex")

    def _float_error(self, kind):
        name, where = _caller_math_function(depth=3)
        if name is not None:
            raise UnsupportedFunctionError(
                f"{where}: math.{name} was called on a traced value; math functions work on "
                f"Python floats only and would drop the derivative. Use np.{name} instead "
                "(engine='source' maps math functions automatically)")
        raise ConcretizationError(
            f"{where}: {kind}() of a traced value would drop its derivative; keep it an "
            "array (use np functions), or convert only values you do not differentiate")

    def __array__(self, dtype=None, copy=None):
        name, where = _caller_math_function(depth=2)
        raise ConcretizationError(
            f"{where}: a traced value was converted to a NumPy array (np.asarray, np.array, "
            "or a NumPy function without a rule); this would drop its derivative. Pass the "
            "value on as it is: NumPy functions called on it are traced")

    # --- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__":
            raise NoDerivativeRule(f"np.{ufunc.__name__}.{method} has no derivative rule; "
                                   f"write it with np.{ufunc.__name__} and reductions")
        fn = UFUNCS.get(ufunc)
        if fn is None:
            raise NoDerivativeRule(f"{user_location()}: np.{ufunc.__name__} has no derivative "
                                   "rule in wengert; "
                                   "write it with supported NumPy functions or wrap it in "
                                   "wg.custom_jvp / wg.custom_vjp")
        if kwargs.get("out") is not None:
            raise NoDerivativeRule(f"np.{ufunc.__name__}(..., out=...) writes in place; "
                                   "drop out= and use the returned value")
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        fn = FUNCTIONS.get(func)
        if fn is None:
            mod = getattr(func, "__module__", "numpy") or "numpy"
            raise NoDerivativeRule(f"{user_location()}: {mod}.{func.__name__} has no derivative "
                                   "rule in wengert; "
                                   "write it with supported NumPy functions or wrap it in "
                                   "wg.custom_jvp / wg.custom_vjp")
        return fn(*args, **kwargs)

    # --- array methods
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _sum(self, axis, dtype, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _mean(self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _prod(self, axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return _max(self, axis, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _min(self, axis, out, keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        return composite.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        return composite.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def cumsum(self, axis=None):
        return reduce.cumsum(self, axis)

    def argmax(self, axis=None):
        return reduce.argmax(self, axis)

    def argmin(self, axis=None):
        return reduce.argmin(self, axis)

    def dot(self, o):
        return linalg.dot(self, o)

    def reshape(self, *shape_, order="C"):
        return shape.reshape(self, shape_[0] if len(shape_) == 1 else shape_)

    def transpose(self, *axes):
        return shape.transpose(self, None if not axes else (axes[0] if len(axes) == 1 else axes))

    def swapaxes(self, a, b):
        return shape.swapaxes(self, a, b)

    def ravel(self, order="C"):
        return shape.reshape(self, (-1,))

    flatten = ravel

    def squeeze(self, axis=None):
        return shape.squeeze(self, axis)

    def astype(self, dtype, **kw):
        return arith.convert(self, dtype=np.dtype(dtype))

    def clip(self, min=None, max=None):
        return arith.clip(self, min, max)

    def copy(self):
        return self

    def trace(self):
        return linalg.trace(self)

    def item(self):
        return self._float_error("item")

    def tolist(self):
        return self._float_error("tolist")
