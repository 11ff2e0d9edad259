"""What NumPy answers, for the tracers' ``__array_function__`` (``array_methods``): which
functions give Python values (shapes), which give a NumPy scalar or a 0-d array at a 0-d
result (``y += v`` rebinds the one and writes into the other, which every name of it sees),
and which may hand back their operand or a view of it.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..core import inplace
from ..core.primitive import TracerBase

__all__ = ["PYTHON_RESULTS", "SCALAR_RESULTS", "OPERAND_RESULTS", "scalar_answer", "array_answer",
           "ARRAY_RESULTS", "SHARING"]


# the functions that answer with Python values (shapes), not arrays
PYTHON_RESULTS = frozenset({np.shape, np.ndim, np.size})


# What NumPy answers at a 0-d result, which ``y += v`` rebinds (a scalar) or
# writes into (an array: every name of it sees the change). SCALAR_RESULTS:
# a scalar (the reductions, products, ``clip`` and ``round`` go through
# ufuncs); ARRAY_RESULTS: an array, whatever the operand; any other function
# may answer either (``np.reshape``, ``np.squeeze``, ``np.real`` give their
# operand's kind), so a staged result of it is not taken for a scalar
# (``inplace.array_result``)
SCALAR_RESULTS = frozenset(f for f in (
    np.sum, np.mean, np.prod, np.max, np.amax, np.min, np.amin, np.var, np.std, np.argmax,
    np.argmin, np.dot, np.vdot, np.inner, np.trace, np.einsum, np.clip, np.round, np.around,
    np.linalg.norm, np.linalg.det, np.flip, np.nan_to_num, np.interp, np.sinc, np.average,
    np.ptp, np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanstd, np.nanvar,
    getattr(np, "trapezoid", None), getattr(np.linalg, "vector_norm", None)) if f is not None)


# a 0-d result of its first operand's kind (a NumPy scalar's own method answers)
OPERAND_RESULTS = frozenset(f for f in (
    np.reshape, np.squeeze, np.transpose, np.real, np.imag, np.astype,
    getattr(np, "permute_dims", None)) if f is not None)


def scalar_answer(func, args, kwargs):
    """Whether NumPy answers ``func(*args, **kwargs)`` at a 0-d result with
    a scalar for certain: a SCALAR_RESULTS function, not writing into
    ``out=`` nor contracting by ``einsum(optimize=...)`` (which answer
    arrays), or an OPERAND_RESULTS one of a scalar."""
    if func in OPERAND_RESULTS:
        return bool(args) and inplace.is_scalar(args[0])
    return func in SCALAR_RESULTS and not kwargs.get("out") and not kwargs.get("optimize")


def array_answer(func, args):
    """Whether NumPy answers ``func(*args)`` at a 0-d result with an array
    for certain (ARRAY_RESULTS, or OPERAND_RESULTS of a 0-d array)."""
    if func in OPERAND_RESULTS:
        return bool(args) and (type(args[0]) is np.ndarray or (
            isinstance(args[0], TracerBase) and not inplace.is_scalar(args[0])))
    return func in ARRAY_RESULTS


ARRAY_RESULTS = frozenset({
    np.copy, np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
    np.require, np.where, np.select, np.piecewise, np.broadcast_to, np.full_like,
    np.zeros_like, np.ones_like, np.tensordot})


# functions whose NumPy result may be the operand itself or a view of it: a
# rule may hand the operand back unchanged (any other function's result is
# made a tracer of its own: ``inplace.distinct``)
SHARING = frozenset(f for f in (
    np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require,
    np.reshape, np.ravel, np.squeeze, np.transpose, np.swapaxes, np.moveaxis, np.rollaxis,
    np.real, np.imag, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.expand_dims,
    np.broadcast_to, np.flip, np.fliplr, np.flipud, np.diagonal,
    getattr(np, "permute_dims", None), getattr(np, "matrix_transpose", None))
    if f is not None)
