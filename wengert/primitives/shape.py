"""Shape primitives and the linear helpers the transforms need.

broadcast_to and reduce_sum (each other's transpose; ``sum_to_shape`` undoes
broadcasting), reshape, transpose, squeeze, expand_dims; the batch rule of an
elementwise primitive; ``zeros_like``/``ones_like``. (``dup``/``add_any``, a
value used twice and the sum of its cotangents, are in ``fanout``.)

This module is the bottom of the primitive families: it imports no other
(``arith``, ``index`` and ``reduce`` build on it; the other reductions live
in ``reduce``, ``concatenate`` with ``getitem`` in ``index``).

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dims as _dims
from ..core.primitive import (
    BROADCASTING, PRIMITIVES, ZERO_IF_ANY, NOT_LINEAR, Primitive, Zero, register)
from ..core.trace import bind, wrapper_of
from ..core.dims import as_int
from ..core.ir import Aval, aval_of, is_duck_array
from ..core.rules import FRESH, EmitRule
from ..core.shapes import shape_error
from ..core.errors import RuntimeLengthError
from ..core.pass_rules import Algebra, NumpyAxisCall, NumpyLike
from ..core.primitive import CONSTANT, MOVES, REDUCTION


_wrap = wrapper_of


# --- broadcast_to ------------------------------------------------------
_SMALL_FILL = 4096      # up to this size a scalar is broadcast by filling a new array


def broadcast_to_impl(x, shape):
    if np.ndim(x) == 0 and math.prod(shape) <= _SMALL_FILL and not is_duck_array(x):
        # a small fill is cheaper than np.broadcast_to's Python-level checks
        return np.full(shape, x, dtype=np.result_type(x))
    return np.broadcast_to(x, shape)


def broadcast_to_aval(x, shape):
    # each of x's axes is 1 or the target's length: compared one by one, so
    # symbolic lengths record the comparisons as guards (``dims``)
    lead = len(shape) - len(x.shape)
    if lead < 0 or any(d != 1 and d != n for d, n in zip(x.shape, shape[lead:])):
        raise shape_error(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return Aval(shape, x.dtype)


def broadcast_to_jvp(primals, tangents, shape):
    return broadcast_to(primals[0], shape=shape), broadcast_to(tangents[0], shape=shape)


def broadcast_to_transpose(ct, x, shape):
    return (sum_to_shape(ct, x.aval.shape),)


def broadcast_to_batch(args, batched, shape):
    x, = args
    xs = _dims.shape(x)
    x = reshape(x, xs[:1] + (1,) * (len(shape) - len(xs) + 1) + xs[1:])
    return broadcast_to(x, shape=xs[:1] + tuple(shape))


class BroadcastToEmit(EmitRule):
    """``np.full(shape, x)`` for a scalar and a small known shape (a filled
    array, as the impl makes it), else ``np.broadcast_to(x, shape)``: the
    same values, shape and dtype either way."""

    def expression(self, code, eqn, ins, py):
        if set(eqn.params) != {"shape"}:
            return None
        shape = eqn.params["shape"]
        text = code.shape(shape)
        if code.foreign and not eqn.inputs[0].aval.shape:
            # on another library's arrays (``Emitter.like``): a number fills an array of
            # that library; its 0-d array is broadcast (a fill reads no value of it)
            if py[0]:
                return f"{code.np}.full({text}, {ins[0]}{code.made()})"
            return f"{code.np}.broadcast_to({ins[0]}, {text}).copy()"
        if not eqn.inputs[0].aval.shape and not _dims.has_dims(shape) \
                and math.prod(shape) <= _SMALL_FILL:
            return f"{code.np}.full({text}, {ins[0]})"
        return f"{code.np}.broadcast_to({ins[0]}, {text})"


broadcast_to_p = register(Primitive("broadcast_to", nargs=1, impl=broadcast_to_impl,
                                    jvp=broadcast_to_jvp, transpose=broadcast_to_transpose,
                                    abstract_eval=broadcast_to_aval, batch=broadcast_to_batch,
                                    zero_rule=ZERO_IF_ANY, algebra=Algebra(expands=True),
                                    emit=BroadcastToEmit(), complex_ok=True,
                                    sparsity=MOVES))


def broadcast_to(x, shape):
    if None in tuple(shape):
        return _broadcast_runtime(x, tuple(shape))
    shape = tuple(as_int(d) for d in shape)
    if tuple(_dims.shape(x)) == shape:
        return x
    return bind(broadcast_to_p, x, shape=shape)


def _broadcast_runtime(x, shape):
    """To a shape holding a run-time length (None): ``x`` with the leading length-1
    axes the shape adds and every other axis its own (a batch's lane axis given to a
    masked value); any other broadcast needs a length only the run knows."""
    have = tuple(_dims.shape(x))
    k = len(shape) - len(have)
    if k >= 0 and all(d == 1 for d in shape[:k]) and shape[k:] == have:
        return expand_dims(x, tuple(range(k))) if k else x
    raise RuntimeLengthError(f"a broadcast from {have} to {shape}")


# --- reshape -----------------------------------------------------------
def reshape_impl(x, shape):
    return np.reshape(x, _runtime_as_minus_one(shape))


def _runtime_as_minus_one(shape):
    """A shape with its length known only at run time (None) as NumPy's -1."""
    return tuple(-1 if d is None else d for d in shape) if None in shape else shape


def reshape_aval(x, shape):
    if None in x.shape or None in shape:
        # a length known only at run time goes to one axis, the others keep their count
        known = [math.prod(d for d in s if d is not None) for s in (x.shape, shape)]
        if x.shape.count(None) != 1 or shape.count(None) != 1 or known[0] != known[1]:
            raise RuntimeLengthError(f"a reshape from {x.shape} to {shape}")
        return Aval(shape, x.dtype)
    if math.prod(shape) != x.size:
        raise shape_error(f"reshape: cannot reshape {x.shape} ({x.size} elements) to {shape}")
    return Aval(shape, x.dtype)


def reshape_jvp(primals, tangents, shape):
    return reshape(primals[0], shape), reshape(tangents[0], shape)


def reshape_transpose(ct, x, shape):
    return (reshape(ct, x.aval.shape),)


def reshape_batch(args, batched, shape):
    x, = args
    return reshape(x, _dims.shape(x)[:1] + tuple(shape))


class ReshapeEmit(EmitRule):
    """``x.reshape(shape)``: the array method is C, where ``np.reshape`` is a
    Python wrapper that costs about 0.5 us more a call (most of a reshape of
    a small array); ``np.reshape(x, shape)`` where ``x`` may be a Python
    scalar, which has no methods."""

    def expression(self, code, eqn, ins, py):
        if set(eqn.params) == {"shape"}:
            shape = _runtime_as_minus_one(eqn.params["shape"])
            return code.reshape_call(ins[0], code.param(shape),
                                     eqn.inputs[0].aval.shape == (), py[0])


reshape_p = register(Primitive("reshape", nargs=1, impl=reshape_impl, jvp=reshape_jvp,
                               transpose=reshape_transpose, abstract_eval=reshape_aval,
                               batch=reshape_batch, zero_rule=ZERO_IF_ANY, emit=ReshapeEmit(),
                               complex_ok=True,
                               sparsity=MOVES))


def reshape(x, shape):
    """``np.reshape`` with ``-1`` resolved at trace time."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(None if d is None else as_int(d) for d in shape)
    old = tuple(_dims.shape(x))
    if None in old and -1 in shape:     # -1 stands for the length known only at run time
        shape = tuple(None if d == -1 else d for d in shape)
    elif -1 in shape:
        known = math.prod([d for d in shape if d != -1])
        size = math.prod(old)
        shape = tuple(size // known if d == -1 else d for d in shape)
    if shape == old:
        return x
    return bind(reshape_p, x, shape=shape)


# --- transpose ---------------------------------------------------------
def transpose_impl(x, perm):
    return np.transpose(x, perm)


def transpose_aval(x, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise shape_error(f"transpose: {perm} is not a permutation of the {x.ndim} axes")
    return Aval(tuple(x.shape[p] for p in perm), x.dtype)


def transpose_jvp(primals, tangents, perm):
    return transpose(primals[0], perm), transpose(tangents[0], perm)


def transpose_transpose(ct, x, perm):
    return (transpose(ct, tuple(np.argsort(perm).tolist())),)


def transpose_batch(args, batched, perm):
    return transpose(args[0], (0,) + tuple(p + 1 for p in perm))


class TransposeEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        if set(eqn.params) == {"perm"}:
            return f"{code.np}.transpose({ins[0]}, {code.param(eqn.params['perm'])})"


transpose_p = register(Primitive("transpose", nargs=1, impl=transpose_impl, jvp=transpose_jvp,
                                 transpose=transpose_transpose, abstract_eval=transpose_aval,
                                 batch=transpose_batch, zero_rule=ZERO_IF_ANY,
                                 emit=TransposeEmit(), complex_ok=True,
                                 sparsity=MOVES))


def transpose(x, perm=None):
    nd = np.ndim(x)
    perm = tuple(reversed(range(nd))) if perm is None else tuple(int(p) % nd for p in perm)
    if perm == tuple(range(nd)):
        return x
    return bind(transpose_p, x, perm=perm)


def swapaxes(x, a, b):
    perm = list(range(np.ndim(x)))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, src, dst):
    nd = np.ndim(x)
    perm = [i for i in range(nd) if i != src % nd]
    perm.insert(dst % nd, src % nd)
    return transpose(x, perm)


def squeeze(x, axis=None):
    shape = _dims.shape(x)
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {a % len(shape) for a in ((axis,) if np.ndim(axis) == 0 else axis)}
        bad = [a for a in axes if shape[a] != 1]
        if bad:
            raise shape_error(f"squeeze: axis {bad[0]} of shape {shape} is not of length 1")
    return reshape(x, tuple(d for i, d in enumerate(shape) if i not in axes))


def expand_dims(x, axis):
    shape = list(_dims.shape(x))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    nd = len(shape) + len(axes)
    for a in sorted(a % nd for a in axes):
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


# --- sum_to_shape: the transpose of broadcasting -----------------------
def sum_to_shape(x, shape):
    """Sum ``x`` over the axes that broadcasting added to reach its shape."""
    xshape = tuple(_dims.shape(x))
    shape = tuple(shape)
    if xshape == shape:
        return x
    lead = len(xshape) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                      if d == 1 and xshape[i + lead] != 1)
    out = reduce_sum(x, axes=axes)
    return reshape(out, shape)


def normalize_axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % nd if nd else 0 for a in axis))


def kept_shape(shape, axes):
    """The input shape with reduced axes set to 1, for broadcasting back."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def reduce_aval(x, axes):
    return Aval(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _reduce_batch(wrapper):
    def batch(args, batched, axes):
        return wrapper(args[0], axes=tuple(a + 1 for a in axes))
    return batch


def finish_reduction(out, shape, axes, keepdims):
    return reshape(out, kept_shape(shape, axes)) if keepdims else out


# --- reduce_sum (the transpose of broadcast_to) ---------------------------------------------------
def reduce_sum_impl(x, axes):
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "fc":
        return np.add.reduce(x, axis=axes)      # skips np.sum's Python-level dispatch
    if getattr(x, "dtype", None) == np.bool_ and len(axes) == x.ndim and not is_duck_array(x):
        return np.int64(np.count_nonzero(x))    # the same count, without int64 adds
    return np.sum(x, axis=axes)


def reduce_sum_jvp(primals, tangents, axes):
    x = primals[0]
    if None in aval_of(x).shape and axes:
        # a length known only at run time: the tangent's sum keeps x, whose shape its
        # transpose broadcasts back to (``runtime_shapes``, found in the table: it builds
        # on this module)
        return (reduce_sum_p_bind(x, axes),
                bind(PRIMITIVES["sum_like"], tangents[0], x, axes=axes, keep=()))
    return reduce_sum_p_bind(x, axes), reduce_sum_p_bind(tangents[0], axes)


def reduce_sum_transpose(ct, x, axes):
    shape = x.aval.shape
    if None in shape:
        raise RuntimeLengthError("a sum over an axis, in reverse mode,")
    if axes == tuple(range(len(axes))):      # leading axes: broadcasting restores them
        return (broadcast_to(ct, shape),)
    return (broadcast_to(reshape(ct, kept_shape(shape, axes)), shape),)


def reduce_sum_p_bind(x, axes):
    return bind(reduce_sum_p, x, axes=axes) if axes else x


def reduce_sum_aval(x, axes):
    out = reduce_aval(x, axes)
    if x.dtype.kind == "b":      # np.sum of booleans counts them
        return Aval(out.shape, np.int64)
    return out


class ReduceSumEmit(NumpyAxisCall):
    """``np.sum(x, axis=...)``; of booleans over every axis (a count),
    ``np.int64(np.count_nonzero(x))``: the same number, ten times faster
    than NumPy's sum, which adds the booleans as int64s."""

    def expression(self, code, eqn, ins, py):
        x = eqn.inputs[0].aval
        if x.dtype == np.bool_ and set(eqn.params) == {"axes"} \
                and len(eqn.params["axes"]) == len(x.shape):
            if code.foreign:    # another library's count: its 0-d array
                return f"{code.np}.count_nonzero({ins[0]})"
            return f"{code.np}.int64({code.np}.count_nonzero({ins[0]}))"
        return super().expression(code, eqn, ins, py)


reduce_sum_p = register(Primitive("reduce_sum", nargs=1, impl=reduce_sum_impl, jvp=reduce_sum_jvp,
                                  transpose=reduce_sum_transpose, abstract_eval=reduce_sum_aval,
                                  numpy_scalar=True, zero_rule=ZERO_IF_ANY,
                                  emit=ReduceSumEmit("sum", "axes"),
                                  batch=_reduce_batch(reduce_sum_p_bind), complex_ok=True,
                                  sparsity=REDUCTION))


def reduce_sum(x, axes=None, axis=None, keepdims=False):
    shape = _dims.shape(x)
    axes = normalize_axes(axis if axes is None else axes, len(shape))
    return finish_reduction(reduce_sum_p_bind(x, axes), shape, axes, keepdims)


# --- zeros_like, ones_like (constants shaped like their operand) -------
def zeros_like_impl(x):
    return np.zeros_like(x)


def ones_like_impl(x):
    return np.ones_like(x)


def like_aval(x):
    return Aval(x.shape, x.dtype)


def zeros_like_jvp(primals, tangents):
    out = zeros_like(primals[0])
    return out, Zero(aval_of(out))


def ones_like_jvp(primals, tangents):
    out = ones_like(primals[0])
    return out, Zero(aval_of(out))


zeros_like_p = register(Primitive("zeros_like", nargs=1, impl=zeros_like_impl, jvp=zeros_like_jvp,
                                  transpose=NOT_LINEAR, abstract_eval=like_aval,
                                  emit=NumpyLike("zeros_like"), lower=FRESH, complex_ok=True,
                                  sparsity=CONSTANT, batch=BROADCASTING))
zeros_like = _wrap(zeros_like_p)
ones_like_p = register(Primitive("ones_like", nargs=1, impl=ones_like_impl, jvp=ones_like_jvp,
                                 transpose=NOT_LINEAR, abstract_eval=like_aval,
                                 emit=NumpyLike("ones_like"), lower=FRESH, complex_ok=True,
                                 sparsity=CONSTANT, batch=BROADCASTING))
ones_like = _wrap(ones_like_p)
