"""Index arrays computed from values: ``argsort`` and ``partition_index``.

Both give integer arrays and are not differentiated; ``np.sort`` and
``np.partition`` gather their operand with them (``getitem`` with the index
array as a run-time operand), so the derivative of a sort is the same
gather of the tangent, and its transpose a scatter-add. As primitives they
are computed when the program runs: a generated derivative sorts the values
it is called with, never the ones it was staged at.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core import libraries
from ..core.atoms import is_duck_array
from ..core.pass_rules import DefinedCall, NumpyCall
from ..core.primitive import NOT_LINEAR, Primitive, register
from ..core.trace import bind
from .batched import batch_size, lane_index, lined_up, shifted
from .index import getitem
from .reduce import argmax
from .shape import broadcast_to, reshape
from ..core import dims as _dims
from ..core.shapes import broadcast_shapes
from ..core.ir import Aval


def _index_aval(x, **params):
    return Aval(x.shape, np.dtype(np.intp))


# --- argsort -------------------------------------------------------------
def argsort_impl(x, axis, kind):
    if is_duck_array(x):                # Dask has no argsort: ``core.libraries``
        return libraries.argsort(x, axis, kind)
    return np.argsort(x, axis=axis, kind=kind)


class ArgsortEmit(NumpyCall):
    """``np.argsort(x, axis=0, kind='stable')``; on another library's arrays (the code's
    ``foreign``), ``core.libraries.argsort``, which runs on Dask's too."""

    def expression(self, code, eqn, ins, py):
        if not code.foreign:
            return super().expression(code, eqn, ins, py)
        helper = code.bind("library_argsort", libraries.argsort, "core.libraries.argsort")
        return f"{helper}({ins[0]}, {eqn.params['axis']!r}, {eqn.params['kind']!r})"


argsort_p = register(Primitive("argsort", nargs=1, impl=argsort_impl, jvp=None,
                               transpose=NOT_LINEAR, abstract_eval=_index_aval,
                               emit=ArgsortEmit("argsort"), differentiable=False,
                               batch=shifted("argsort", "axis")))


def argsort(x, axis, kind=None):
    """``np.argsort`` along ``axis`` (an int in range)."""
    return bind(argsort_p, x, axis=int(axis), kind=kind)


# --- partition_index -----------------------------------------------------
def partition_index(x, kth, axis):
    """The gather positions that give ``np.partition(x, kth, axis)``."""
    kth = int(kth) if np.ndim(kth) == 0 else tuple(int(k) for k in np.ravel(kth))
    return bind(partition_index_p, x, kth=kth, axis=int(axis))


def partition_index_run(x, kth, axis):
    """The row's impl: ``partition_index_impl``, which on Dask runs per block."""
    if is_duck_array(x):            # Dask has no partition: ``core.libraries.along``
        return libraries.along(partition_index_impl, x, axis, kth=kth)
    return partition_index_impl(x, kth, axis)


class PartitionEmit(DefinedCall):
    """``partition_index_impl(x, axis=1, kth=2)`` (defined in the generated file); on another
    library's arrays (``foreign``), through ``core.libraries.along``."""

    own_numpy = False   # runs per block on Dask's (``along``), not as one task

    def expression(self, code, eqn, ins, py):
        if not code.foreign:
            return super().expression(code, eqn, ins, py)
        helper = code.bind("library_along", libraries.along, "core.libraries.along")
        fn = code.bind("partition_index_impl", partition_index_impl,
                       "primitives.gather.partition_index_impl")
        return f"{helper}({fn}, {ins[0]}, {eqn.params['axis']!r}, kth={eqn.params['kth']!r})"


def partition_index_impl(x, kth, axis):
    # where each entry of np.partition's own result comes from. np.argpartition
    # may arrange the entries differently (NumPy's SIMD paths differ), so the
    # positions are matched instead: the j-th smallest of the partitioned
    # array comes from the j-th smallest of x (stable sorts pair ties in order)
    part = np.partition(x, kth, axis=axis)
    src = np.argsort(x, axis=axis, kind="stable")
    dst = np.argsort(part, axis=axis, kind="stable")
    out = np.empty_like(src)
    np.put_along_axis(out, dst, src, axis=axis)
    return out


partition_index_p = register(Primitive("partition_index", nargs=1, impl=partition_index_run,
                                       jvp=None, transpose=NOT_LINEAR,
                                       abstract_eval=_index_aval,
                                       emit=PartitionEmit(partition_index_impl),
                                       differentiable=False,
                                       batch=shifted("partition_index", "axis")))


# --- piece_point -----------------------------------------------------------
def piece_point_impl(x, cond):
    # (another library's arrays, CuPy's, kept: ``DefinedCall.any_library``)
    x, cond = np.broadcast_arrays(*(v if hasattr(v, "shape") else np.asarray(v) for v in (x, cond)))
    return x.reshape(-1)[np.argmax(cond.reshape(-1))]


def piece_point_aval(x, cond):
    return Aval((), x.dtype)


# the first entry of x where cond holds (the first entry if none does): the
# stand-in np.piecewise gives a function at the places outside its piece, so
# that it is evaluated on its piece only. The result does not depend on the
# stand-in (those places are discarded), so it carries no derivative: exactly
# zero, and no 0 * inf from a function's derivative at a discarded place
def piece_point_batch(args, batched):
    """Each example's first entry where its ``cond`` holds: the operands broadcast to one
    shape per example, flattened, and each example's entry gathered at its own position."""
    x, cond = lined_up(args, batched)
    size = batch_size(args, batched)
    shape = (size,) + tuple(broadcast_shapes(*[_dims.shape(a)[1:] if b else _dims.shape(a)
                                                for a, b in zip((x, cond), batched)]))
    x, cond = (reshape(broadcast_to(a, shape), (size, -1)) for a in (x, cond))
    at = argmax(cond, axis=1)
    return getitem(x, (lane_index(size), at))


piece_point_p = register(Primitive("piece_point", nargs=2, impl=piece_point_impl, jvp=None,
                                   transpose=NOT_LINEAR, abstract_eval=piece_point_aval,
                                   emit=DefinedCall(piece_point_impl, any_library=True), differentiable=False,
                                   batch=piece_point_batch))


def piece_point(x, cond):
    return bind(piece_point_p, x, cond)
