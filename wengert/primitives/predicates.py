"""Predicates and counts of traced values: rows whose outputs carry no derivative.

``isnan``, ``isinf``, ``signbit`` and ``isclose`` (elementwise booleans), ``trunc`` (the
integer part, piecewise constant like ``floor``), ``reduce_any``, ``reduce_all`` and
``count_nonzero`` (over axes). Each is a ``constant_row``: every transform computes it on
the primal values and treats the result as a constant of the derivative, which is exact
(a boolean or an integer has no tangent; ``trunc``'s derivative is zero wherever it has
one). The comparisons, ``isfinite``, ``sign``, ``floor``, ``ceil`` and ``round`` are rows of
the same kind in ``ordering.py``.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval
from ..core.pass_rules import NumpyAxisCall
from ..core.rules import EmitRule, constant_row
from ..core.shapes import elementwise_aval
from ..core.primitive import BROADCASTING
from ..core.trace import bind, wrapper_of
from .batched import shifted

__all__ = ["isnan", "isinf", "signbit", "trunc", "isclose", "reduce_any", "reduce_all",
           "count_nonzero"]


# --- isnan, isinf, signbit: elementwise booleans ---------------------------
def _elementwise_predicate(name, ufunc, **fields):
    prim = constant_row(name, ufunc, elementwise_aval(name, out_dtype=np.bool_),
                        batch=BROADCASTING, **fields)
    return prim, wrapper_of(prim)


# NaN and infinity are defined for complex values too (either part)
isnan_p, isnan = _elementwise_predicate("isnan", np.isnan, complex_ok=True)
isinf_p, isinf = _elementwise_predicate("isinf", np.isinf, complex_ok=True)
signbit_p, signbit = _elementwise_predicate("signbit", np.signbit)


# --- trunc: the integer part (zero derivative wherever it has one) ---------
trunc_p = constant_row("trunc", np.trunc, elementwise_aval("trunc", float_out=True),
                       batch=BROADCASTING)
trunc = wrapper_of(trunc_p)


# --- isclose ------------------------------------------------------------------
def isclose_impl(a, b, rtol, atol, equal_nan):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


class IscloseEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        p = eqn.params
        return (f"{code.np}.isclose({ins[0]}, {ins[1]}, rtol={code.param(p['rtol'])}, "
                f"atol={code.param(p['atol'])}, equal_nan={code.param(p['equal_nan'])})")


_isclose_aval = elementwise_aval("isclose", out_dtype=np.bool_)


def isclose_aval(a, b, rtol, atol, equal_nan):
    return _isclose_aval(a, b)


isclose_p = constant_row("isclose", isclose_impl, isclose_aval, nargs=2, emit=IscloseEmit(),
                         numpy_scalar=True, complex_ok=True, batch=BROADCASTING)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bind(isclose_p, a, b, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


# --- any, all, count_nonzero over axes ------------------------------------
def _reduced(x, axes, dtype):
    return Aval(tuple(d for i, d in enumerate(x.shape) if i not in axes), dtype)


def any_aval(x, axes):
    return _reduced(x, axes, np.bool_)


def reduce_any_impl(x, axes):
    return np.any(x, axis=axes)


def reduce_all_impl(x, axes):
    return np.all(x, axis=axes)


reduce_any_p = constant_row("reduce_any", reduce_any_impl, any_aval, numpy_scalar=True,
                            emit=NumpyAxisCall("any", "axes"), complex_ok=True,
                            batch=shifted("reduce_any", "axes"))
reduce_all_p = constant_row("reduce_all", reduce_all_impl, any_aval, numpy_scalar=True,
                            emit=NumpyAxisCall("all", "axes"), complex_ok=True,
                            batch=shifted("reduce_all", "axes"))


def reduce_any(x, axes):
    """``np.any`` over ``axes`` (sorted, non-negative ints)."""
    return bind(reduce_any_p, x, axes=tuple(axes))


def reduce_all(x, axes):
    """``np.all`` over ``axes`` (sorted, non-negative ints)."""
    return bind(reduce_all_p, x, axes=tuple(axes))


def count_nonzero_impl(x, axes):
    out = np.count_nonzero(x, axis=axes)
    return np.intp(out) if np.ndim(out) == 0 else out


def count_aval(x, axes):
    return _reduced(x, axes, np.intp)


class CountEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        return f"{code.np}.intp({code.np}.count_nonzero({ins[0]}, axis={code.param(eqn.params['axes'])}))" \
            if len(eqn.params["axes"]) == eqn.inputs[0].aval.ndim else \
            f"{code.np}.count_nonzero({ins[0]}, axis={code.param(eqn.params['axes'])})"


count_nonzero_p = constant_row("count_nonzero", count_nonzero_impl, count_aval,
                               numpy_scalar=True, emit=CountEmit(), complex_ok=True,
                               batch=shifted("count_nonzero", "axes"))


def count_nonzero(x, axes):
    """``np.count_nonzero`` over ``axes`` (sorted, non-negative ints)."""
    return bind(count_nonzero_p, x, axes=tuple(axes))
