"""Shape primitives and the linear helpers the transforms need.

broadcast_to, reshape, transpose, squeeze, expand_dims, concatenate; and
``dup`` / ``add_any`` (each other's transpose: a value used twice receives the
sum of its cotangents), ``sum_to_shape`` (undo broadcasting).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dims as _dims
from .core import NOT_LINEAR, Linear, Primitive, Zero, bind, register, wrapper_of, zero_if_any
from ..dims import as_int
from ..ir import Aval, aval_of
from .rules import EmitRule, result_dtype, shape_error


_wrap = wrapper_of


# --- dup ---------------------------------------------------------------
def dup_impl(x):
    return x, x


def dup_aval(x):
    return x, x


def dup_jvp(primals, tangents):
    return dup(primals[0]), dup(tangents[0])


def dup_transpose(cts, x):
    ct1, ct2 = cts
    return (add_any(ct1, ct2),)


def dup_zero_rule(x):
    return x, x


def dup_simplify(eqn, ins, copies):
    """In generated code (``copies``) a ``dup``'s outputs are its operand;
    printed programs keep their ``dup``s: they show the seeds' duality."""
    if copies and not eqn.params:
        return [], [ins[0]] * len(eqn.outputs)
    return None


class DupEmit(EmitRule):
    """``(a, b) = (x, x)``: the operand itself, twice (a Python scalar stays one)."""

    def expression(self, code, eqn, ins, py):
        return "(" + ", ".join(ins * len(eqn.outputs)) + ")" if not eqn.params else None

    def python_scalars(self, eqn, py_ins, run):
        return [py_ins[0]] * len(eqn.outputs)


dup_p = register(Primitive("dup", nargs=1, impl=dup_impl, jvp=dup_jvp, transpose=dup_transpose,
                           abstract_eval=dup_aval, multiple_results=True,
                           zero_rule=dup_zero_rule, simplify=dup_simplify, emit=DupEmit()))
dup = _wrap(dup_p)


def dup_batch(args, batched):
    return dup(args[0])


dup_p.batch = dup_batch


# --- add_any -----------------------------------------------------------
def add_any_jvp(primals, tangents):
    return add_any(*primals), add_any(*tangents)


def add_any_transpose(ct, x, y):
    if isinstance(x, Linear) and isinstance(y, Linear):
        return dup(ct)
    return (ct if isinstance(x, Linear) else None), (ct if isinstance(y, Linear) else None)


def add_any_aval(x, y):
    if x.shape != y.shape:
        raise shape_error(f"add_any: cotangents of shapes {x.shape} and {y.shape} differ")
    # operator.add: NumPy's promotion, Python numbers weakly typed (NEP 50)
    return Aval(x.shape, result_dtype(x, y), weak=x.weak and y.weak)


def add_any_zero_rule(x, y):
    if isinstance(x, Zero):
        return y
    return x


add_any_p = register(Primitive("add_any", nargs=2, impl=operator.add, jvp=add_any_jvp,
                               transpose=add_any_transpose, abstract_eval=add_any_aval,
                               zero_rule=add_any_zero_rule))
add_any = _wrap(add_any_p)


def add_any_batch(args, batched):
    x, y = args
    if not batched[0]:
        x = broadcast_to(x, shape=_dims.shape(y))
    if not batched[1]:
        y = broadcast_to(y, shape=_dims.shape(x))
    return add_any(x, y)


add_any_p.batch = add_any_batch


# --- broadcast_to ------------------------------------------------------
def broadcast_to_impl(x, shape):
    if np.ndim(x) == 0 and math.prod(shape) <= 4096:
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


broadcast_to_p = register(Primitive("broadcast_to", nargs=1, impl=broadcast_to_impl,
                                    jvp=broadcast_to_jvp, transpose=broadcast_to_transpose,
                                    abstract_eval=broadcast_to_aval, batch=broadcast_to_batch))
broadcast_to_p.zero_rule = zero_if_any(broadcast_to_p)


def broadcast_to(x, shape):
    shape = tuple(as_int(d) for d in shape)
    if tuple(_dims.shape(x)) == shape:
        return x
    return bind(broadcast_to_p, x, shape=shape)


# --- reshape -----------------------------------------------------------
def reshape_impl(x, shape):
    return np.reshape(x, shape)


def reshape_aval(x, shape):
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


reshape_p = register(Primitive("reshape", nargs=1, impl=reshape_impl, jvp=reshape_jvp,
                               transpose=reshape_transpose, abstract_eval=reshape_aval,
                               batch=reshape_batch))
reshape_p.zero_rule = zero_if_any(reshape_p)


def reshape(x, shape):
    """``np.reshape`` with ``-1`` resolved at trace time."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(as_int(d) for d in shape)
    old = tuple(_dims.shape(x))
    if -1 in shape:
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


transpose_p = register(Primitive("transpose", nargs=1, impl=transpose_impl, jvp=transpose_jvp,
                                 transpose=transpose_transpose, abstract_eval=transpose_aval,
                                 batch=transpose_batch))
transpose_p.zero_rule = zero_if_any(transpose_p)


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


# --- concatenate -------------------------------------------------------
def concatenate_impl(*xs, axis):
    return np.concatenate(xs, axis=axis)


def concatenate_aval(*xs, axis):
    first = xs[0].shape
    for x in xs[1:]:
        if len(x.shape) != len(first) or any(a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != axis):
            raise shape_error(f"concatenate: shapes {first} and {x.shape} differ off axis {axis}")
    size = sum(x.shape[axis] for x in xs)
    return Aval(first[:axis] + (size,) + first[axis + 1:], result_dtype(*xs))


def concatenate_jvp(primals, tangents, axis):
    out = concatenate(*primals, axis=axis)
    tans = [_dims.zeros(t.aval.shape, out.dtype) if isinstance(t, Zero) else t for t in tangents]
    return out, concatenate(*tans, axis=axis)


def concatenate_transpose(ct, *xs, axis):
    from .index import getitem
    cts, start = [], 0
    for x in xs:
        n = _dims.shape(x)[axis]
        if isinstance(x, Linear):
            idx = (slice(None),) * axis + (slice(start, start + n),)
            cts.append(getitem(ct, idx))
        else:
            cts.append(None)
        start += n
    return tuple(cts)


def concatenate_batch(args, batched, axis):
    b = next(_dims.shape(a)[0] for a, f in zip(args, batched) if f)
    fixed = [a if f else broadcast_to(a, (b,) + tuple(_dims.shape(a))) for a, f in zip(args, batched)]
    return concatenate(*fixed, axis=axis + 1)


concatenate_p = register(Primitive("concatenate", nargs=None, impl=concatenate_impl,
                                   jvp=concatenate_jvp, transpose=concatenate_transpose,
                                   abstract_eval=concatenate_aval, batch=concatenate_batch))


def concatenate(*xs, axis=0):
    nd = np.ndim(xs[0])
    if nd == 0:
        raise shape_error("concatenate: zero-dimensional arrays cannot be concatenated; "
                                 "use stack")
    return bind(concatenate_p, *xs, axis=axis % nd)


def stack(xs, axis=0):
    nd = np.ndim(xs[0]) + 1
    return concatenate(*[expand_dims(x, axis % nd) for x in xs], axis=axis % nd)


# --- sum_to_shape: the transpose of broadcasting -----------------------
def sum_to_shape(x, shape):
    """Sum ``x`` over the axes that broadcasting added to reach its shape."""
    from .reduce import reduce_sum
    xshape = tuple(_dims.shape(x))
    shape = tuple(shape)
    if xshape == shape:
        return x
    lead = len(xshape) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape)
                                      if d == 1 and xshape[i + lead] != 1)
    out = reduce_sum(x, axes=axes)
    return reshape(out, shape)


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
                                  transpose=NOT_LINEAR, abstract_eval=like_aval))
zeros_like = _wrap(zeros_like_p)
ones_like_p = register(Primitive("ones_like", nargs=1, impl=ones_like_impl, jvp=ones_like_jvp,
                                 transpose=NOT_LINEAR, abstract_eval=like_aval))
ones_like = _wrap(ones_like_p)
