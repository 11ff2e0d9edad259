"""NumPy's functions of a number's parts and signs on traced values: ``np.fmod``,
``np.divmod``, ``np.modf``, ``np.frexp``, ``np.ldexp``, ``np.copysign``,
``np.heaviside``; and ``np.lib.scimath``'s functions, which answer with complex values
outside the real domain.

``copysign(x, y)`` is ``x`` times the product of the two signs (a sign bit is a constant of
the derivative); ``heaviside(x, h0)`` is piecewise constant in ``x`` and ``h0`` where
``x == 0``. A ``scimath`` function is NumPy's own function of a complex operand where any
entry is outside the real domain, which depends on the values: the trace engine knows them;
where code is generated for every call the result's dtype cannot depend on them, and the
call is refused (``ConcretizationError``: ``engine="auto"`` falls back on the trace engine).

Layer: numpy.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..core.errors import ConcretizationError, user_location
from ..core.ir import aval_of
from ..primitives import arith, elementwise, ordering, parts, predicates, transcendental
from ..primitives.selection import where

__all__ = ["UFUNCS", "FUNCTIONS", "COMPLEX_OK"]


def _divmod(x, y):
    return ordering.floor_divide(x, y), ordering.remainder(x, y)


def _sign_of(v):
    """+1 or -1 by the sign bit (of -0.0 and NaNs too), no derivative."""
    return where(predicates.signbit(v), -1.0, 1.0)


def _in_dtype(out, ufunc, *operands):
    """``out`` in the dtype NumPy's ``ufunc`` gives ``operands`` (found on stand-ins: a
    Python number stays weakly typed)."""
    stand_ins = [aval_of(v).python_type(1) if aval_of(v).weak else
                 np.ones(0, aval_of(v).dtype) for v in operands]
    dt = np.asarray(ufunc(*stand_ins)).dtype
    return out if aval_of(out).dtype == dt else arith.convert(out, dtype=dt)


def _copysign(x, y):
    return _in_dtype(arith.mul(x, arith.mul(_sign_of(x), _sign_of(y))), np.copysign, x, y)


def _heaviside(x, h0):
    out = where(ordering.greater(x, 0), 1.0, where(ordering.equal(x, 0), h0, 0.0))
    return _in_dtype(where(predicates.isnan(x), np.nan, out), np.heaviside, x, h0)


# --- np.lib.scimath ------------------------------------------------------------------
def _scimath(fname, fn, outside, two=None):
    """``np.lib.scimath.<fname>``: ``fn`` of the operand made complex where ``outside``
    holds for any entry (which the values decide); ``two``: the names of a two-operand
    function's parameters (NumPy's: ``logn(n, x)``, ``power(x, p)``)."""
    def wrapper(*args):
        complex_args = any(aval_of(a).dtype.kind == "c" for a in args)
        if not complex_args:
            concrete = [getattr(a, "concrete_value", a) for a in args]
            if any(c is None for c in concrete):
                raise ConcretizationError(
                    f"{user_location()}: np.lib.scimath.{fname} gives complex values where an "
                    "entry is outside the real domain, so its dtype depends on the values, "
                    "which are not known while code is generated for every call; use "
                    f"np.{fname} of a complex value (x.astype(complex)), or engine='trace'")
            if np.any(outside(*[np.asarray(c) for c in concrete])):
                args = tuple(arith.convert(a, dtype=np.dtype(np.complex128)) if
                             aval_of(a).dtype.kind != "c" else a for a in args)
        return fn(*args)
    wrapper.__name__ = fname
    if two is None:
        def one(x):
            return wrapper(x)
        one.__name__ = fname
        return one
    first, second = two

    def pair(*args, **kwargs):
        if kwargs:
            args = args + tuple(kwargs[k] for k in (first, second)[len(args):])
        return wrapper(*args)
    pair.__name__ = fname
    pair.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in two])
    return pair


def _logn(n, x):
    return arith.div(transcendental.log(x), transcendental.log(n))


def _ln(x):
    return transcendental.log(x)


def _log10(x):
    return arith.div(transcendental.log(x), np.log(10.0))


def _log2(x):
    return arith.div(transcendental.log(x), np.log(2.0))


_sm = np.lib.scimath
SCIMATH = {
    _sm.sqrt: _scimath("sqrt", transcendental.sqrt, lambda x: x < 0),
    _sm.log: _scimath("log", _ln, lambda x: x < 0),
    _sm.log10: _scimath("log10", _log10, lambda x: x < 0),
    _sm.log2: _scimath("log2", _log2, lambda x: x < 0),
    _sm.logn: _scimath("logn", _logn, lambda n, x: (x < 0) | (n < 0), ("n", "x")),
    _sm.power: _scimath("power", transcendental.pow, lambda x, p: x < 0, ("x", "p")),
    _sm.arccos: _scimath("arccos", transcendental.arccos, lambda x: abs(x) > 1),
    _sm.arcsin: _scimath("arcsin", transcendental.arcsin, lambda x: abs(x) > 1),
    _sm.arctanh: _scimath("arctanh", elementwise.arctanh, lambda x: abs(x) > 1),
}

UFUNCS = {
    np.fmod: parts.fmod, np.divmod: _divmod, np.modf: parts.modf, np.frexp: parts.frexp,
    np.ldexp: parts.ldexp, np.copysign: _copysign, np.heaviside: _heaviside,
}

FUNCTIONS = dict(SCIMATH)

NAMES = {f: f"np.lib.scimath.{f.__name__}" for f in SCIMATH}

COMPLEX_OK = {_sm.sqrt, _sm.log, _sm.log10, _sm.log2, _sm.logn, _sm.power}
