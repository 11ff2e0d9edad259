"""NumPy's ufuncs on traced values: the map from each ufunc to the
primitive wrapper it becomes, and its keywords (``numpy.array_methods`` dispatches
``__array_ufunc__`` here).

Contract: the keywords every ufunc takes are implemented (``dtype``: NumPy
resolves the loop, the operands are cast to it first) or refused with
``NoDerivativeRule`` naming the user's line (``out``, ``where``, a gufunc's
``axes``); ``order`` and ``subok`` change nothing wengert computes. A
ufunc's result is a NumPy value, never a Python scalar (NEP 50).

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import arith, host, linalg, ordering, reduce, shape, transcendental
from .arrayargs import as_dtype, no_out, numpy_result, refuse
from ..core.errors import NoDerivativeRule, no_rule_message, user_location
from ..core.atoms import TracerBase
from ..core.ir import Aval, aval_of
from ..core.shapes import broadcast_shapes

__all__ = ["UFUNCS", "ufunc_call"]


def _identity(x):
    return x


def _float_power(x, y):
    """``x ** y`` computed in float64 at least (complex128 for complex
    operands): NumPy's float_power has no float32 loop, so float32 operands
    give a float64 result."""
    stand_ins = []
    for v in (x, y):
        av = aval_of(v)
        stand_ins.append(av.python_type(1) if av.weak else np.ones(0, av.dtype))
    dtype = np.asarray(np.float_power(*stand_ins)).dtype
    return transcendental.pow(*[as_dtype(v, dtype) for v in (x, y)])


def _degrees(x):
    return arith.mul(x, 180.0 / np.pi)


def _radians(x):
    return arith.mul(x, np.pi / 180.0)


# --- NumPy 2's vector gufuncs: over the last axis (or the last two of the matrix) ----
def _conj(x):
    return arith.conj(x) if aval_of(x).dtype.kind == "c" else x


def _vecdot(x1, x2):
    return reduce.reduce_sum(arith.mul(_conj(x1), x2), axis=-1)


def _matvec(x1, x2):
    return reduce.reduce_sum(arith.mul(x1, shape.expand_dims(x2, -2)), axis=-1)


def _vecmat(x1, x2):
    return reduce.reduce_sum(arith.mul(shape.expand_dims(_conj(x1), -1), x2), axis=-2)


UFUNCS = {
    np.vecdot: _vecdot, np.matvec: _matvec, np.vecmat: _vecmat,
    np.add: arith.add, np.subtract: arith.sub, np.multiply: arith.mul,
    np.true_divide: arith.div, np.negative: arith.neg, np.positive: _identity,
    np.power: transcendental.pow, np.float_power: _float_power, np.exp: transcendental.exp, np.log: transcendental.log,
    np.log1p: transcendental.log1p, np.expm1: transcendental.expm1, np.sqrt: transcendental.sqrt, np.square: transcendental.square,
    np.sin: transcendental.sin, np.cos: transcendental.cos, np.tan: transcendental.tan,
    np.arcsin: transcendental.arcsin, np.arccos: transcendental.arccos, np.arctan: transcendental.arctan,
    np.arctan2: transcendental.arctan2, np.sinh: transcendental.sinh, np.cosh: transcendental.cosh, np.tanh: transcendental.tanh,
    np.absolute: ordering.abs, np.fabs: ordering.abs, np.sign: ordering.sign,
    np.maximum: ordering.maximum, np.minimum: ordering.minimum, np.floor: ordering.floor,
    np.ceil: ordering.ceil, np.rint: ordering.round,
    np.less: ordering.less, np.less_equal: ordering.less_equal, np.greater: ordering.greater,
    np.greater_equal: ordering.greater_equal, np.equal: ordering.equal, np.not_equal: ordering.not_equal,
    np.logical_and: ordering.logical_and, np.logical_or: ordering.logical_or,
    np.logical_xor: ordering.logical_xor, np.logical_not: ordering.logical_not,
    np.isfinite: ordering.isfinite, np.matmul: linalg.matmul, np.logaddexp: transcendental.logaddexp,
    np.remainder: ordering.remainder, np.floor_divide: ordering.floor_divide,
    np.degrees: _degrees, np.rad2deg: _degrees, np.radians: _radians, np.deg2rad: _radians,
}

# the ufuncs whose wrappers are written with Python's operators (``+``, ``**``,
# ``abs``...), which give Python numbers for Python numbers where the ufunc
# gives NumPy's: only their results are checked (``numpy_result``)
_OPERATOR_WRAPPED = frozenset({
    np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive, np.power,
    np.float_power, np.square, np.absolute, np.fabs, np.remainder,
    np.floor_divide, np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
    np.not_equal, np.degrees, np.rad2deg, np.radians, np.deg2rad})

# keywords every ufunc call takes that change nothing wengert computes
_NO_EFFECT = {"order": "K", "subok": True}


def ufunc_call(ufunc, fn, inputs, kwargs, fname=None):
    """``ufunc(*inputs, **kwargs)`` on traced values, where ``fn`` is the
    ufunc's wrapper from the library table (None: no rule); NumPy's keywords
    implemented (``dtype``: the operands are cast first, as NumPy computes
    in it) or refused (``out``, ``where``, a gufunc's ``axes``)."""
    fname = fname or f"np.{ufunc.__name__}"
    if fn is None:
        return _without_rule(ufunc, inputs, kwargs, fname)
    if not kwargs:
        out = fn(*inputs)
        return numpy_result(out) if ufunc in _OPERATOR_WRAPPED else out
    kwargs = dict(kwargs)
    no_out(kwargs.pop("out", None), fname)
    where = kwargs.pop("where", True)
    if where is not True:
        refuse(fname, "where", f"entries outside the mask would be left unset: write "
                               f"np.where(mask, {fname}(...), fill)")
    dtype, casting = kwargs.pop("dtype", None), kwargs.pop("casting", "same_kind")
    for key in [k for k in kwargs if k in _NO_EFFECT]:
        kwargs.pop(key)
    for key in ("signature", "axes", "axis", "keepdims"):
        if kwargs.get(key, None) not in (None, False):
            refuse(fname, key, "call it without this keyword")
        kwargs.pop(key, None)
    if kwargs:
        raise TypeError(f"{fname}() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
    if dtype is None:
        out = fn(*inputs)
        return numpy_result(out) if ufunc in _OPERATOR_WRAPPED else out
    out_dtypes = _loop_dtype(ufunc, inputs, dtype, casting)
    if out_dtypes[0].kind in "fc":  # NumPy computes in the dtype: the operands are cast first
        inputs = [as_dtype(x, out_dtypes[0], "unsafe", fname) for x in inputs]
    out = numpy_result(fn(*inputs))
    outs = [o if aval_of(o).dtype == dt else arith.convert(o, dtype=dt)
            for o, dt in zip(out if type(out) is tuple else (out,), out_dtypes)]
    return tuple(outs) if type(out) is tuple else outs[0]


def _without_rule(ufunc, inputs, kwargs, fname):
    """``ufunc(*inputs)`` for a ufunc without a derivative rule
    (``scipy.special.struve``): a call the code makes when it runs, on values
    nothing may differentiate (a ``custom_vjp``'s backward rule, a weight
    computed from data). A derivative through it, if one is ever asked for,
    raises ``NoDerivativeRule`` naming this line (``host_call``'s jvp)."""
    where = user_location()
    if kwargs or ufunc.nout != 1:
        raise NoDerivativeRule(no_rule_message(where, fname))
    stand_ins, operands, spec = [], [], []
    for x in inputs:
        if isinstance(x, TracerBase):
            spec.append(("op", len(operands)))
            operands.append(x)
        else:
            spec.append(("const", x))
        av = aval_of(x)
        stand_ins.append(av.python_type(1) if av.weak else np.ones(1, av.dtype))
    with np.errstate(all="ignore"):
        dtype = np.asarray(ufunc(*stand_ins)).dtype
    if dtype.kind not in "biufc":
        raise NoDerivativeRule(no_rule_message(where, fname))
    shape = broadcast_shapes(*[aval_of(x).shape for x in inputs], name=fname)
    return host.host_call(ufunc, operands, spec, (), Aval(shape, dtype, False),
                          checked=False, where=(where, fname))


def _loop_dtype(ufunc, inputs, dtype, casting):
    """The result dtypes (one per output) of ``ufunc(*inputs, dtype=dtype,
    casting=casting)``, as NumPy resolves them (on empty stand-ins of the operands): NumPy's
    own TypeError where it has no such loop or may not cast."""
    stand_ins = []
    for x in inputs:
        av = aval_of(x)
        stand_ins.append(av.python_type(0) if av.weak else np.empty(0, av.dtype))
    out = ufunc(*stand_ins, dtype=dtype, casting=casting)
    return [np.asarray(o).dtype for o in (out if type(out) is tuple else (out,))]
