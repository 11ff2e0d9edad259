"""The shape and dtype rules rows are built with: NumPy's dtype promotion with Python scalars
weakly typed (NEP 50: ``result_dtype``), broadcasting (``broadcast_shapes``, symbolic lengths
included), the elementwise shape rule (``elementwise_aval``, memoised), and the shape errors
that name the user's line (``shape_error``).

Layer: core.
"""
from __future__ import annotations

import operator

import numpy as np

from .context import current as _current_context
from .dims import broadcast, has_dims
from .errors import RuntimeLengthError, ShapeMismatchError, user_location
from .ir import Aval

__all__ = ["promotes", "python_operator", "result_dtype", "shape_error", "broadcast_shapes",
           "elementwise_aval"]


_OPERATORS = frozenset(v for k, v in vars(operator).items()
                       if not k.startswith("_") and callable(v) and not isinstance(v, type))


def promotes(abstract_eval):
    """Mark a shape rule whose operands meet by ``result_dtype``."""
    abstract_eval.promotes = True
    return abstract_eval


def python_operator(impl):
    """Whether ``impl`` is one of Python's operators (``operator.add``): on
    Python numbers it gives Python numbers (weakly typed, ``2.0 * 3.0``),
    where a ufunc gives a NumPy scalar (``np.sin(2.0)``, an ``np.float64``,
    which promotes float32 operands to float64)."""
    return impl in _OPERATORS


def result_dtype(*avals):
    """NumPy's promotion with Python scalars weak (NEP 50). A shape rule
    whose operands meet by it says so (``promotes``): a compiler that types
    a Python scalar strongly (numba) is then given it at the dtype NumPy
    takes it at."""
    reps = []
    for a in avals:
        if a.weak:
            reps.append({"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}[a.dtype.kind])
        else:
            reps.append(a.dtype)
    return np.result_type(*reps)


def shape_error(message):
    """A ``ShapeMismatchError`` that names the line of user code that led to
    it (shape rules run deep inside wengert, the mistake is the caller's)."""
    return ShapeMismatchError(f"{user_location()}: {message}")


def broadcast_shapes(*shapes, name="operation"):
    if any(None in s for s in shapes):
        return _runtime_broadcast(shapes, name)
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeMismatchError(
            f"{user_location()}: {name}: operand shapes {' and '.join(map(str, shapes))} do not broadcast together; "
            "reshape or index the operands so that trailing dimensions agree or are 1") from None
    return broadcast(*shapes) if any(has_dims(s) for s in shapes) else out


def _runtime_broadcast(shapes, name):
    """Broadcasting with lengths known only at run time (``None``): such a length meets only
    itself or 1 (two values selected by one mask have one length, which NumPy checks when
    the code runs); against any other length which of the two broadcasts is not known."""
    nd = max(len(s) for s in shapes)
    runtime = set()
    for s in shapes:
        for j, d in enumerate(s):
            if d is None:
                runtime.add(nd - len(s) + j)
    known = [tuple(1 if d is None else d for d in s) for s in shapes]
    for s in known:
        for j, d in enumerate(s):
            if nd - len(s) + j in runtime and d != 1:
                raise RuntimeLengthError(f"{name}: broadcasting a length of {d} against one")
    out = broadcast_shapes(*known, name=name)
    return tuple(None if j in runtime else d for j, d in enumerate(out))


def elementwise_aval(name, float_out=False, out_dtype=None, python_scalars=False):
    """Shape rule of an elementwise op: broadcast shapes, promote dtypes.
    ``float_out``: integer operands give float64 (``sin(1) -> float``).
    ``python_scalars``: the impl is a ``python_operator``, so Python scalars
    in give a Python scalar (weakly typed) out."""
    cache = {}

    def abstract_eval(*avals, **params):
        # memoised on the operands' shapes and dtypes: the same few
        # combinations recur on every call of a traced function. Not while
        # symbolic lengths are staged: the comparisons broadcasting makes are
        # guards, recorded each time (``context``); outside a generation a
        # comparison records nothing, so a remembered answer skips nothing
        ctx = _current_context()
        if ctx is not None and ctx.symbolic:
            return _elementwise(*avals)
        if len(avals) == 2:
            a, b = avals
            key = (a.shape, a.dtype, a.weak, b.shape, b.dtype, b.weak)
        else:
            key = tuple((a.shape, a.dtype, a.weak) for a in avals)
        out = cache.get(key)
        if out is None:
            out = cache[key] = _elementwise(*avals)
        return out

    def _elementwise(*avals):
        shape = broadcast_shapes(*(a.shape for a in avals), name=name)
        weak = python_scalars and all(a.weak for a in avals)
        if out_dtype is not None:
            return Aval(shape, out_dtype, weak=weak)
        dtype = result_dtype(*avals)
        if float_out and dtype.kind not in "fc":
            dtype = np.dtype(np.float64)
        return Aval(shape, dtype, weak=weak)
    abstract_eval.__name__ = f"{name}_abstract_eval"
    abstract_eval.ufunc = True      # a 0-d result is a NumPy scalar (``Primitive.numpy_scalar``)
    abstract_eval.elementwise = True    # its rows' default ``sparsity`` is ``ELEMENTWISE``
    return promotes(abstract_eval)
