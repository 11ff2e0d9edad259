"""Reductions along axes: reduce_sum, reduce_max, reduce_min, reduce_prod,
cumsum; ``keepdims`` and ``mean`` are wrappers over them.

Primitive params hold ``axes`` as a sorted tuple of non-negative ints; the
primitive drops those axes (``keepdims`` is a reshape in the wrapper).

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dims as _dims
from ..core.primitive import ZERO_IF_ANY, NOT_LINEAR, PRIMITIVES, Primitive, register
from ..core.trace import bind
from ..core.rules import EmitRule
from ..core.pass_rules import NumpyAxisCall
from .arith import add, convert, div, mul, sub
from .selection import where
from .ordering import equal
from .index import concatenate, getitem
from .batched import shifted
from .runtime_shapes import length, sum_like
from .shape import (
    finish_reduction, kept_shape, normalize_axes, ones_like, reduce_aval, reduce_sum, reduce_sum_p_bind,
    reshape)
from ..core.ir import Aval, aval_of, is_duck_array
from ..core.primitive import REDUCTION
from ..core.deps import across, dense, reduce_targets, relate, running


def mean(x, axis=None, keepdims=False):
    shape = _dims.shape(x)
    axes = normalize_axes(axis, len(shape))
    total = reduce_sum(x, axes=axes, keepdims=keepdims)
    if aval_of(x).dtype.kind not in "fc":
        total = convert(total, dtype=np.float64)
    if any(shape[a] is None for a in axes):     # how many there are, read when the code runs
        return div(total, convert(length(x, axes), dtype=aval_of(total).dtype))
    count = math.prod([shape[a] for a in axes])
    # a symbolic count stays one: the code divides by ``x.shape[0]``
    return div(total, count if type(count) is _dims.Dim else float(count))


# --- reduce_max, reduce_min --------------------------------------------
def _extremum_tangent(x, out, x_dot, axes):
    """The tangent of a max or min ``out`` of ``x``: the mean of the tangents at the places
    that attain it, so ties share the derivative evenly. The tangents there are selected,
    not multiplied by a 0/1 mask: an inf or nan tangent at a place that does not attain
    the extremum (sqrt's at 0) is not read (``0 * inf`` would be nan)."""
    hit = equal(x, reshape(out, kept_shape(_dims.shape(x), axes)))
    count = convert(reduce_sum_p_bind(hit, axes), dtype=aval_of(x).dtype)
    picked = where(hit, x_dot, np.zeros((), aval_of(x_dot).dtype))
    if None in aval_of(x).shape:        # summed over a length known only at run time
        return div(sum_like(picked, x, axes), count)
    return div(reduce_sum_p_bind(picked, axes), count)


def reduce_max_jvp(primals, tangents, axes):
    out = _reduce_max_bind(primals[0], axes)
    return out, _extremum_tangent(primals[0], out, tangents[0], axes)


def reduce_min_jvp(primals, tangents, axes):
    out = _reduce_min_bind(primals[0], axes)
    return out, _extremum_tangent(primals[0], out, tangents[0], axes)


def reduce_max_impl(x, axes):
    return np.max(x, axis=axes)


def reduce_min_impl(x, axes):
    return np.min(x, axis=axes)


def reduce_max_sparsity(an, ops, outs, axes):
    """The reduction's elements; where the operand is known (a local analysis), only those
    that attain the extremum (every one at a tie: the jvp shares among them)."""
    return _extremum_sparsity(ops[0], axes, np.max)


def reduce_min_sparsity(an, ops, outs, axes):
    """See ``reduce_max_sparsity``."""
    return _extremum_sparsity(ops[0], axes, np.min)


def _extremum_sparsity(x, axes, extremum):
    if not x.known_shape:
        return dense(tuple(d for k, d in enumerate(x.shape) if k not in axes), x.deps)
    targets, shape = reduce_targets(x.shape, axes)
    if x.known:
        v = np.asarray(x.value)
        best = extremum(v, axis=axes, keepdims=True)
        hit = ((v == best) | np.isnan(best)).reshape(-1)      # a NaN extremum: nan everywhere
        targets = np.where(hit, targets, -1)
    keep = np.nonzero(targets >= 0)[0]
    return relate(shape, x.deps, targets[keep], keep)


reduce_max_p = register(Primitive("reduce_max", nargs=1, impl=reduce_max_impl,
                                  jvp=reduce_max_jvp, transpose=NOT_LINEAR,
                                  abstract_eval=reduce_aval, numpy_scalar=True,
                                  emit=NumpyAxisCall("max", "axes"),
                                  batch=shifted("reduce_max", "axes"),
                                  sparsity=reduce_max_sparsity))
reduce_min_p = register(Primitive("reduce_min", nargs=1, impl=reduce_min_impl,
                                  jvp=reduce_min_jvp, transpose=NOT_LINEAR,
                                  abstract_eval=reduce_aval, numpy_scalar=True,
                                  emit=NumpyAxisCall("min", "axes"),
                                  batch=shifted("reduce_min", "axes"),
                                  sparsity=reduce_min_sparsity))


def _reduce_max_bind(x, axes):
    return bind(reduce_max_p, x, axes=axes) if axes else x


def _reduce_min_bind(x, axes):
    return bind(reduce_min_p, x, axes=axes) if axes else x


def reduce_max(x, axis=None, keepdims=False):
    shape = _dims.shape(x)
    axes = normalize_axes(axis, len(shape))
    return finish_reduction(_reduce_max_bind(x, axes), shape, axes, keepdims)


def reduce_min(x, axis=None, keepdims=False):
    shape = _dims.shape(x)
    axes = normalize_axes(axis, len(shape))
    return finish_reduction(_reduce_min_bind(x, axes), shape, axes, keepdims)


# --- reduce_prod -------------------------------------------------------
def reduce_prod_impl(x, axes):
    return np.prod(x, axis=axes)


def reduce_prod_jvp(primals, tangents, axes):
    x, = primals
    out = _reduce_prod_bind(x, axes)
    # d prod = sum_i dx_i * prod_{j != i} x_j (exact where x has zeros,
    # where prod * sum(dx / x) is nan)
    return out, reduce_sum_p_bind(mul(tangents[0], prod_others(x, axes)), axes)


reduce_prod_p = register(Primitive("reduce_prod", nargs=1, impl=reduce_prod_impl,
                                   jvp=reduce_prod_jvp, transpose=NOT_LINEAR,
                                   abstract_eval=reduce_aval, numpy_scalar=True,
                                   emit=NumpyAxisCall("prod", "axes"), complex_ok=True,
                                   batch=shifted("reduce_prod", "axes"),
                                   sparsity=REDUCTION))


def _reduce_prod_bind(x, axes):
    return bind(reduce_prod_p, x, axes=axes) if axes else x


def reduce_prod(x, axis=None, keepdims=False):
    shape = _dims.shape(x)
    axes = normalize_axes(axis, len(shape))
    return finish_reduction(_reduce_prod_bind(x, axes), shape, axes, keepdims)


# --- prod_others -------------------------------------------------------
# ``prod_{j != i} x_j`` over ``axes`` for each entry ``i`` (the same shape as
# x): the derivative of reduce_prod, exact where entries are 0.
def prod_others_impl(x, axes):
    with np.errstate(all="ignore"):
        total = np.prod(x, axis=axes, keepdims=True)
        if (not is_duck_array(x) and np.all(x) and np.all(np.isfinite(total))
                and np.all(np.abs(total) >= np.finfo(x.dtype).tiny)):
            return total / x        # no zero, no overflow or underflow: the common case
    # else running products from both ends (no division), the reduced axes
    # moved last and flattened into one
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    if flat.shape[-1] == 0:
        return x.copy()
    # (of another library's arrays, Dask's or CuPy's: its own ones, no value tested above)
    ones = np.ones_like(flat[..., :1]) if is_duck_array(x) else np.ones(flat.shape[:-1] + (1,), x.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((left * right).reshape(moved.shape), last, axes)


def prod_others_jvp(primals, tangents, axes):
    """The others' product is (that of the nonzero others, ``rest``) times
    (that of the zero others, ``factor``): 1 when no other entry is 0, the
    zero other itself when one is, the pair's product when two are
    (``(s**2 - sum of squares) / 2``), 0 beyond. Each branch is the product
    itself as a function, so the tangent is exact; the last is exact in
    value and first derivative, so np.prod is exact to order 3 everywhere."""
    x, = primals
    x_dot, = tangents
    out = prod_others(x, axes)
    kept = kept_shape(_dims.shape(x), axes)

    def others_sum(v):       # the sum over the slice, less the entry itself
        return sub(reshape(reduce_sum_p_bind(v, axes), kept), v)

    zero = equal(x, 0.0)
    safe = where(zero, 1.0, x)
    safe_dot = where(zero, 0.0, x_dot)
    rest = prod_others(safe, axes)      # safe has no zeros: rest * (sum of the others' d/x)
    rest_dot = mul(rest, _exclusive_sum(div(safe_dot, safe), axes))
    zeros, zeros_dot = where(zero, x, 0.0), where(zero, x_dot, 0.0)   # values 0
    count = others_sum(convert(zero, dtype=aval_of(out).dtype))
    one, one_dot = others_sum(zeros), others_sum(zeros_dot)
    two = mul(sub(mul(one, one), others_sum(mul(zeros, zeros))), 0.5)
    two_dot = sub(mul(one, one_dot), others_sum(mul(zeros, zeros_dot)))
    is0, is1, is2 = equal(count, 0.0), equal(count, 1.0), equal(count, 2.0)
    factor = where(is0, 1.0, where(is1, one, where(is2, two, 0.0)))
    factor_dot = where(is1, one_dot, where(is2, two_dot, 0.0))
    return out, add(mul(rest_dot, factor), mul(rest, factor_dot))


def _exclusive_sum(t, axes):
    """``sum_{j != i} t_j`` over ``axes`` for each entry ``i``, without
    subtracting ``t_i`` from the total (near a zero of x, ``t = dx / x`` has
    one entry that dwarfs the others' sum): running sums from both ends,
    one axis at a time."""
    a = axes[0]
    before = (slice(None),) * a
    run = cumsum(t, a)
    back = cumsum(t, a, reverse=True)
    edge = mul(getitem(t, before + (slice(0, 1),)), 0.0)
    out = add(concatenate(edge, getitem(run, before + (slice(None, -1),)), axis=a),
              concatenate(getitem(back, before + (slice(1, None),)), edge, axis=a))
    if len(axes) > 1:       # the other slices along a, summed, then the same over the rest
        summed = reshape(reduce_sum_p_bind(t, (a,)),
                         tuple(1 if k == a else d for k, d in enumerate(_dims.shape(t))))
        out = add(out, _exclusive_sum(summed, axes[1:]))
    return out


def prod_others_lines(code, x, ndim, axes, out):
    """The statements of ``out = prod_others(x)`` as the impl computes it
    (``x``: an array's text, of ``ndim`` axes): the total over ``axes``
    divided by each entry where that is safe, else the running products
    from both ends, which divide nothing."""
    np_ = code.np
    total, ones, left, right = (code.fresh(n) for n in ("total", "ones", "left", "right"))
    k = ndim - len(axes)
    last = tuple(range(k, ndim))
    axes_text = code.param(tuple(axes))
    if tuple(axes) == last:
        moved = x
        other = []
    else:
        moved = code.fresh("moved")
        other = [f"{moved} = {np_}.moveaxis({x}, {axes_text}, {code.param(last)})"]
    if len(axes) == 1:
        flat = moved            # one axis, already last: x itself
    else:
        flat = code.fresh("flat")
        other.append(f"{flat} = {moved}.reshape({moved}.shape[:{k}] + (-1,))")
    both = (f"{left} * {right}" if len(axes) == 1
            else f"({left} * {right}).reshape({moved}.shape)")
    if tuple(axes) != last:
        both = f"{np_}.moveaxis({both}, {code.param(last)}, {axes_text})"
    other += [f"{ones} = {np_}.ones({flat}.shape[:-1] + (1,), {flat}.dtype)",
              f"{left} = {np_}.cumprod({np_}.concatenate([{ones}, {flat}[..., :-1]], axis=-1), "
              "axis=-1)",
              f"{right} = {np_}.cumprod({np_}.concatenate([{ones}, {flat}[..., :0:-1]], "
              "axis=-1), axis=-1)[..., ::-1]",
              f"{out} = {both}"]
    if code.foreign:    # another library's arrays: no value tested, its own ones
        other[-4] = f"{ones} = {np_}.ones_like({flat}[..., :1])"
        return other
    test = (f"{np_}.all({x}) and {np_}.all({np_}.isfinite({total})) "
            f"and {np_}.all({np_}.abs({total}) >= {np_}.finfo({x}.dtype).tiny)")
    return [f"with {np_}.errstate(all='ignore'):",
            *code.indent([f"{total} = {np_}.prod({x}, axis={axes_text}, keepdims=True)",
                          f"if {test}:",
                          *code.indent([f"{out} = {total} / {x}"]),
                          "else:",
                          "    # no division: the products of the entries before and after",
                          *code.indent(other)])]


class ProdOthersEmit(EmitRule):
    """``prod_others`` as the NumPy statements of its impl (``prod_others_lines``)."""

    def statements(self, code, eqn, ins, py, outs, subs):
        x = eqn.inputs[0]
        if set(eqn.params) != {"axes"} or py[0] or not x.aval.shape:
            return None
        ndim, axes = len(x.aval.shape), eqn.params["axes"]
        return (code.last_axes_map("prod_others", ins[0], ndim, axes, outs[0])
                or prod_others_lines(code, code.atom(ins[0]), ndim, axes, outs[0]))


def prod_others_sparsity(an, ops, outs, axes):
    """Each entry depends on every entry of its slice along ``axes``."""
    x = ops[0]
    return across(x.deps, x.shape, x.shape, axes)


prod_others_p = register(Primitive("prod_others", nargs=1, impl=prod_others_impl,
                                   jvp=prod_others_jvp, transpose=NOT_LINEAR,
                                   abstract_eval=lambda x, axes: x, emit=ProdOthersEmit(),
                                   complex_ok=True,
                                   batch=shifted("prod_others", "axes"),
                                   sparsity=prod_others_sparsity))


def prod_others(x, axes):
    """``prod_{j != i} x_j`` over ``axes`` (sorted non-negative ints) for each
    entry ``i``; ones where ``axes`` is empty (no others)."""
    if not axes:
        return ones_like(x)
    return bind(prod_others_p, x, axes=axes)


def pair_products(x):
    """P_ik = prod_(j not in {i, k}) x_j for i != k, 0 on the diagonal, over
    the last axis (..., n) -> (..., n, n): the products of the others of the
    rows ``x with x_i = 1`` (det's adjugate through singular values). O(n^2)
    for an n-vector, no division."""
    shape = tuple(_dims.shape(x))
    n = shape[-1]
    eye = np.eye(n, dtype=bool)
    rows = where(eye, 1.0, reshape(x, shape[:-1] + (1, n)))
    return where(eye, 0.0, prod_others(rows, (len(shape),)))


# --- cumsum ------------------------------------------------------------
def cumsum_impl(x, axis, reverse):
    if reverse:
        idx = (slice(None),) * axis + (slice(None, None, -1),)
        return np.cumsum(x[idx], axis=axis)[idx]
    return np.cumsum(x, axis=axis)


def cumsum_aval(x, axis, reverse):
    return x


def cumsum_jvp(primals, tangents, axis, reverse):
    return cumsum(primals[0], axis, reverse), cumsum(tangents[0], axis, reverse)


def cumsum_transpose(ct, x, axis, reverse):
    # the transpose of a running sum is the running sum from the other end
    return (cumsum(ct, axis, not reverse),)


def cumsum_batch(args, batched, axis, reverse):
    return cumsum(args[0], axis + 1, reverse)


class CumsumEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        params = eqn.params
        if set(params) != {"axis", "reverse"} or py[0]:
            return None
        axis = params["axis"]
        if params["reverse"] is False:
            return f"{code.np}.cumsum({ins[0]}, axis={code.param(axis)})"
        # the running sum from the end: reversed, summed, reversed back
        flip = ", ".join([":"] * axis + ["::-1"])
        return f"{code.np}.cumsum({code.atom(ins[0])}[{flip}], axis={code.param(axis)})[{flip}]"


def cumsum_sparsity(an, ops, outs, axis, reverse):
    """A running sum: each entry depends on those before it along ``axis`` (after it if
    ``reverse``), and on itself."""
    return running(ops[0], axis, reverse)


cumsum_p = register(Primitive("cumsum", nargs=1, impl=cumsum_impl, jvp=cumsum_jvp,
                              transpose=cumsum_transpose, abstract_eval=cumsum_aval,
                              batch=cumsum_batch, zero_rule=ZERO_IF_ANY, emit=CumsumEmit(),
                              complex_ok=True,
                              sparsity=cumsum_sparsity))


def cumsum(x, axis=None, reverse=False):
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    return bind(cumsum_p, x, axis=int(axis) % max(np.ndim(x), 1), reverse=bool(reverse))


# --- argmax, argmin (integer results, not differentiated) --------------
def argmax_impl(x, axis):
    return np.argmax(x, axis=axis)


def argmin_impl(x, axis):
    return np.argmin(x, axis=axis)


def arg_aval(x, axis):
    shape = () if axis is None else tuple(d for i, d in enumerate(x.shape) if i != axis)
    return Aval(shape, np.int64)


def _arg_batch(name):
    """The batch rule of argmax / argmin: over each example's axis, or over each example
    whole (``axis=None``: its axes flattened into one)."""
    def rule(args, batched, axis):
        x, = args
        if axis is None:
            shp = tuple(_dims.shape(x))
            x, axis = reshape(x, shp[:1] + (-1,)), 0
        return bind(PRIMITIVES[name], x, axis=axis + 1)
    rule.__name__ = f"{name}_batch"
    return rule


argmax_p = register(Primitive("argmax", nargs=1, impl=argmax_impl, jvp=None, transpose=NOT_LINEAR,
                              abstract_eval=arg_aval, differentiable=False, numpy_scalar=True,
                              emit=NumpyAxisCall("argmax", "axis"),
                              batch=_arg_batch("argmax")))
argmin_p = register(Primitive("argmin", nargs=1, impl=argmin_impl, jvp=None, transpose=NOT_LINEAR,
                              abstract_eval=arg_aval, differentiable=False, numpy_scalar=True,
                              emit=NumpyAxisCall("argmin", "axis"),
                              batch=_arg_batch("argmin")))


def argmax(x, axis=None):
    return bind(argmax_p, x, axis=None if axis is None else int(axis) % np.ndim(x))


def argmin(x, axis=None):
    return bind(argmin_p, x, axis=None if axis is None else int(axis) % np.ndim(x))
