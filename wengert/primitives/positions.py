"""Positions and counts computed from traced values: ``unique_positions``,
``searchsorted``, ``digitize`` and ``bincount``, rows whose integer outputs
carry no derivative (``core.rules.constant_row``); and ``bincount_weights``, the sum of
weights per bin, linear in the weights.

How many positions ``unique_positions`` finds (and ``index.nonzero``), and how long ``bincount``'s
result is, depend on the values: where code is generated for every call (the source
engine), those lengths are ``None`` in the results' avals, lengths known only at run time.
The generated code reads them from the values it computes (``np.nonzero(m)`` makes arrays
of their own length), never from a number fixed when it was generated (``runtime_shapes``).

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core.ir import Aval, aval_of
from ..core.primitive import ZERO_IF_ANY, Primitive, register
from ..core.rules import EmitRule, constant_row
from ..core.trace import bind
from ..core.deps import dense, relate
from .arith import convert
from .index import DYN, getitem_p

__all__ = ["unique_positions", "searchsorted", "digitize", "bincount",
           "bincount_weights"]


# --- unique_positions ------------------------------------------------------------
def unique_positions_impl(x, axis, equal_nan, sorted):
    """(first, inverse, counts) of ``np.unique`` (of the flattened ``x`` where ``axis``
    is None): where each distinct value (or slice along ``axis``) first occurs, which
    distinct value each entry is, how many times each occurs."""
    flat = x.reshape(-1) if axis is None else x
    _, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis, equal_nan=equal_nan,
                                          sorted=sorted)
    return first, inverse.reshape(-1), counts


def unique_positions_aval(x, axis, equal_nan, sorted):
    n = (None if None in x.shape else x.size) if axis is None else x.shape[axis]
    return (Aval((None,), np.intp), Aval((n,), np.intp), Aval((None,), np.intp))


unique_positions_p = constant_row("unique_positions", unique_positions_impl,
                                  unique_positions_aval, multiple_results=True,
                                  complex_ok=True)


def unique_positions(x, axis=None, equal_nan=True, sorted=True):
    return bind(unique_positions_p, x, axis=axis, equal_nan=bool(equal_nan),
                sorted=bool(sorted))


# --- searchsorted, digitize ------------------------------------------------------
def searchsorted_impl(a, v, side):
    return np.searchsorted(a, v, side=side)


def _positions_like(v_aval):
    return Aval(v_aval.shape, np.intp)


def searchsorted_aval(a, v, side):
    return _positions_like(v)


searchsorted_p = constant_row("searchsorted", searchsorted_impl, searchsorted_aval, nargs=2,
                              numpy_scalar=True)


def searchsorted(a, v, side="left"):
    return bind(searchsorted_p, a, v, side=side)


def digitize_impl(x, bins, right):
    return np.digitize(x, bins, right=right)


def digitize_aval(x, bins, right):
    return _positions_like(x)


digitize_p = constant_row("digitize", digitize_impl, digitize_aval, nargs=2,
                          numpy_scalar=True)


def digitize(x, bins, right=False):
    return bind(digitize_p, x, bins, right=bool(right))


# --- bincount and the sum of weights per bin -------------------------------------
def bincount_impl(x, minlength, length):
    return np.bincount(x, minlength=minlength)


def bincount_aval(x, minlength, length):
    return Aval((length,), np.intp)


bincount_p = constant_row("bincount", bincount_impl, bincount_aval)


def bincount(x, minlength=0, length=None):
    """``np.bincount(x, minlength=minlength)``; ``length``: the result's length where
    it is known (``histogram``: every bin index is below ``minlength``, which is
    ``length``), else None (a length known only at run time)."""
    return bind(bincount_p, x, minlength=int(minlength), length=length)


def bincount_weights_impl(w, x, minlength, length):
    return np.bincount(x, weights=w, minlength=minlength)      # float64, as NumPy's


def bincount_weights_aval(w, x, minlength, length):
    return Aval((length,), np.float64)


def bincount_weights_jvp(primals, tangents, minlength, length):
    w, x = primals
    out = bincount_weights(w, x, minlength, length)
    # the tangent has the primal's length: known where the primal's value is (the trace
    # engine), else read when the code runs as the primal's is
    return out, bincount_weights(tangents[0], x, minlength, aval_of(out).shape[0])


def bincount_weights_transpose(ct, w, x, minlength, length):
    # each weight went to the bin it names: its cotangent is that bin's
    ct_w = bind(getitem_p, ct, x, idx=(DYN,))
    return (ct_w if w.aval.dtype == np.float64 else convert(ct_w, dtype=w.aval.dtype)), None


def bincount_weights_sparsity(an, ops, outs, minlength, length):
    """Bin ``b`` depends on the weights whose position names it (known bins), else on all."""
    w, x = ops
    shape = outs[0].shape
    if not x.known or None in shape:
        return dense(shape, w.deps)
    bins = np.asarray(x.value, np.int64).reshape(-1)
    return relate(shape, w.deps, bins, np.arange(len(bins)))


bincount_weights_p = register(Primitive(
    "bincount_weights", nargs=2, impl=bincount_weights_impl, jvp=bincount_weights_jvp,
    transpose=bincount_weights_transpose, abstract_eval=bincount_weights_aval,
    zero_rule=ZERO_IF_ANY, sparsity=bincount_weights_sparsity))


def bincount_weights(w, x, minlength=0, length=None):
    """``np.bincount(x, weights=w, minlength=minlength)``: linear in ``w``."""
    return bind(bincount_weights_p, w, x, minlength=int(minlength), length=length)
