"""Symbolic lengths: what makes one generated derivative valid for every
input shape.

A ``Dim`` is an ``int`` (its value at the shapes a Program is staged at)
that remembers where it comes from: axis ``a`` of input ``k`` of the
function being generated, or arithmetic on such lengths. Shapes built from
Dims keep them (``Aval``, params like ``shape=`` or a loop's trip count), and
the code generator writes a Dim as its expression, ``x.shape[0] - 1``, not
as the number it was when staged.

Every comparison of a Dim made while staging (``n == 1`` when broadcasting,
``n >= 1`` for a slice's length) is recorded as a *guard*: the generated code
is reused for new shapes where every guard gives the same answer, and
generated again where one does not. A length that lost its expression (went
through NumPy's C code, or ``int()``) would be written as a number; the
source engine finds those by staging twice (``api.source``), so such code is
only ever used at the shapes it was made for.

This module keeps no state: the guards and the constants of symbolic shape
belong to the generation that stages them (``context.StagingContext``);
``shape`` and ``zeros`` read the current one.

Layer: core.
"""
from __future__ import annotations

import operator

import numpy as np

from . import context as _context
from .context import current as _current_context
from .ir import Aval
from .errors import RuntimeLengthError

__all__ = ["Dim", "Scalar", "symbolic", "plain_numbers", "plain_params", "symbolic_avals",
           "has_dims", "as_int", "in_params", "broadcast", "slice_length", "shape", "zeros",
           "int_input", "sizes_of", "pin"]

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod, "/": operator.truediv}
_CMPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
         ">": operator.gt, ">=": operator.ge}


class _Symbolic:
    """Arithmetic that keeps its expression, comparisons that are guards:
    what ``Dim`` (a length) and ``Scalar`` (a number computed from lengths,
    ``1.0 / n``) share. ``expr`` is ``("in", k, axis)`` or ``(op, a, b)``
    with ``a``, ``b`` symbolic values or plain Python numbers."""

    __slots__ = ()

    def __repr__(self):
        return self._base.__repr__(self)

    __str__ = __repr__

    # never the same dictionary key as a plain number: a cache keyed by shapes
    # must not answer a symbolic shape with a concrete one's entry
    def __hash__(self):
        return hash(("dim", self._base(self), self.expr))

    def __reduce__(self):
        return (self._base, (self._base(self),))

    # --- arithmetic keeps the expression ---
    def _arith(self, op, other, flip=False):
        if type(other) not in (int, float) and not isinstance(other, _Symbolic):
            return NotImplemented
        a, b = (other, self) if flip else (self, other)
        if op in ("/", "//", "%") and isinstance(b, _Symbolic):
            b != 0      # noqa: B015 -- recorded: the code divides by it (Python raises at 0)
        value = _OPS[op](plain_number(a), plain_number(b))
        if op in "+-" and type(b) in (int, float) and b == 0:
            return a
        if op == "+" and type(a) in (int, float) and a == 0:
            return b
        if op in ("*", "//", "/") and type(b) is int and b == 1:
            return a
        if op == "*" and type(a) is int and a == 1:
            return b
        return symbolic(value, (op, a, b))

    def __add__(self, o):
        return self._arith("+", o)

    def __radd__(self, o):
        return self._arith("+", o, True)

    def __sub__(self, o):
        return self._arith("-", o)

    def __rsub__(self, o):
        return self._arith("-", o, True)

    def __mul__(self, o):
        return self._arith("*", o)

    def __rmul__(self, o):
        return self._arith("*", o, True)

    def __truediv__(self, o):
        return self._arith("/", o)

    def __rtruediv__(self, o):
        return self._arith("/", o, True)

    def __floordiv__(self, o):
        return self._arith("//", o)

    def __rfloordiv__(self, o):
        return self._arith("//", o, True)

    def __mod__(self, o):
        return self._arith("%", o)

    def __rmod__(self, o):
        return self._arith("%", o, True)

    def __neg__(self):
        return self._arith("-", 0, True)

    def __pos__(self):
        return self

    # --- comparisons are guards ---
    def _cmp(self, op, other):
        if isinstance(other, (bool, np.bool_)) or not isinstance(
                other, (int, float, np.integer, np.floating)):
            return NotImplemented
        result = bool(_CMPS[op](plain_number(self), plain_number(other)))
        ctx = _current_context()    # the generation in progress records it
        guards = None if ctx is None else ctx.guards
        if guards is not None and not (isinstance(other, _Symbolic) and other.expr == self.expr):
            guards.add((self.expr, op, other.expr if isinstance(other, _Symbolic) else
                         other.item() if isinstance(other, np.generic) else other, result))
        return result

    def __eq__(self, o):
        return self._cmp("==", o)

    def __ne__(self, o):
        return self._cmp("!=", o)

    def __lt__(self, o):
        return self._cmp("<", o)

    def __le__(self, o):
        return self._cmp("<=", o)

    def __gt__(self, o):
        return self._cmp(">", o)

    def __ge__(self, o):
        return self._cmp(">=", o)

    def __bool__(self):
        return self._cmp("!=", 0)


class Dim(_Symbolic, int):
    """A length staged from an input's shape: ``int(d)`` is its value there,
    ``d.expr`` the expression it was computed by."""

    _base = int

    def __new__(cls, value, expr):
        self = int.__new__(cls, value)
        self.expr = expr
        return self


class Scalar(_Symbolic, float):
    """A float computed from lengths (``1.0 / n``, a mean's weight): its value
    at the staged lengths, and its expression. ``aval`` is the one the
    computation that made it gives (a NumPy float64 unless both operands were
    Python numbers)."""

    _base = float

    def __new__(cls, value, expr, aval=None):
        self = float.__new__(cls, value)
        self.expr = expr
        if aval is not None:
            self.aval = aval
        return self


def plain_number(x):
    return x._base(x) if isinstance(x, _Symbolic) else x


def plain_numbers(args):
    """``args`` with symbolic numbers as the Python numbers they stand for:
    what NumPy must see when it computes (it takes an ``int`` subclass for a
    64-bit integer, not a weakly typed Python int, and would promote float32
    to float64 where the generated code, reading ``x.shape[0]``, does not)."""
    for a in args:
        if isinstance(a, _Symbolic):
            return [plain_number(b) for b in args]
    return args


def symbolic(value, expr, aval=None):
    """The symbolic number of ``value`` computed by ``expr``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return Dim(int(value), expr)
    return Scalar(float(value), expr, aval)


def symbolic_avals(avals, sizes=None):
    """The avals with every length a Dim of its input and axis; ``sizes``
    (one shape per aval) gives them other values than the avals' own. An
    int input's size is its value (``sizes_of``): its aval stays as it is."""
    out = []
    for k, a in enumerate(avals):
        shape = a.shape if sizes is None else sizes[k]
        if type(shape) is int:
            out.append(a)
            continue
        out.append(Aval(tuple(Dim(d, ("in", k, i)) for i, d in enumerate(shape)), a.dtype,
                        a.weak))
    return out


def int_input(k, value):
    """Input ``k``, a Python int argument staged symbolically (a trip count,
    a length): a Dim of expression ``("in", k, None)``, which the code
    generator writes as the input's own name."""
    return Dim(value, ("in", k, None))


def sizes_of(values):
    """What guards are checked at, one per input: an array's shape, an int
    input's value."""
    return tuple(x if type(x) is int else np.shape(x) for x in values)


def pin(*values):
    """Record that the symbolic numbers among ``values`` (in tuples, lists,
    slices) were used where their expression is not kept (a Python list
    indexed by one, a function that is called, not converted): a guard that
    each equals its staged value, so the code is used at those values only."""
    ctx = _current_context()
    if ctx is None or ctx.guards is None:
        return
    for v in values:
        if isinstance(v, _Symbolic):
            v == plain_number(v)       # noqa: B015 -- recorded as a guard
        elif type(v) in (tuple, list):
            pin(*v)
        elif type(v) is slice:
            pin(v.start, v.stop, v.step)
        elif type(v) is dict:
            pin(*v.values())


def has_dims(shape):
    return any(type(d) is Dim for d in shape)


def as_int(d):
    """``int(d)``, keeping a Dim a Dim."""
    return d if type(d) is Dim else int(d)


def in_params(params):
    """Whether a primitive's params hold a symbolic length (a shape param)."""
    for v in params.values():
        if type(v) is Dim or (type(v) is tuple and any(type(d) is Dim for d in v)):
            return True
    return False


def slice_length(n, s):
    """``len(range(n)[s])`` for a length ``n`` that may be a Dim: for a step
    of 1 (or a full reversal) an expression in ``n``, the comparisons that
    choose it recorded as guards; otherwise a plain int."""
    start, stop, step = s.start, s.stop, s.step
    full = len(range(*s.indices(int(n))))
    if type(n) is not Dim and type(start) is not Dim and type(stop) is not Dim:
        return full
    if step == -1 and start is None and stop is None:
        return n
    if step not in (None, 1) or not all(e is None or isinstance(e, int) for e in (start, stop)):
        return full

    def bound(e, default):
        if e is None:
            return default
        if e < 0:
            e = n + e
            return e if e >= 0 else 0
        return e if e <= n else n

    lo, hi = bound(start, 0), bound(stop, n)
    return hi - lo if hi >= lo else 0


def broadcast(*shapes):
    """NumPy's broadcast of shapes that hold Dims (already known to
    broadcast): each axis is the first length that is not 1, and the others
    that are not 1 equal it (both recorded as guards)."""
    nd = max(len(s) for s in shapes)
    out = []
    for j in range(nd, 0, -1):
        found = 1
        for s in shapes:
            if len(s) >= j and s[-j] != 1:
                if found == 1:
                    found = s[-j]
                else:
                    found == s[-j]      # noqa: B015 -- recorded: they must stay equal
        if found == 1:
            found = next((s[-j] for s in shapes if len(s) >= j and type(s[-j]) is Dim), 1)
        out.append(found)
    return tuple(out)


def plain_params(params):
    """A primitive's params with their symbolic lengths as plain ints: what
    its impl must see (comparing a Dim there would record a guard)."""
    return {k: _plain(v) for k, v in params.items()}


def _plain(v):
    if type(v) is Dim:
        return int(v)
    if type(v) is tuple:
        return tuple(_plain(e) for e in v)
    return v


def zeros(shape, dtype):
    """``np.zeros``, remembered with its shape when that is symbolic."""
    if None in shape:
        raise RuntimeLengthError("an array of zeros")
    out = np.zeros(shape, dtype)
    if has_dims(shape):
        _context.remember(out, shape)
    return out


def shape(x):
    """``np.shape(x)``, symbolic for a constant of symbolic shape."""
    ctx = _current_context()
    if ctx is not None and ctx.shaped:
        s = ctx.shape_of(x)
        if s is not None:
            return s
    # arrays, NumPy scalars and traced values carry their shape: reading it
    # skips np.shape's dispatch (``__array_function__`` for a tracer)
    s = getattr(x, "shape", None)
    return s if type(s) is tuple else np.shape(x)


