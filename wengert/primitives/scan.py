"""Running products: ``cumprod`` and the linear recurrence its derivative is.

``linrec(a, b)`` along an axis is ``h[i] = a[i] * h[i-1] + b[i]`` with
``h[-1] = 0`` (``reverse``: from the far end, ``h[i] = a[i] * h[i+1] + b[i]``).
It is linear in ``b``, and its own derivative in ``a`` is another linrec,
so every order follows from this one block.

Why a primitive and not ``cumprod * cumsum(dx / x)``: that form divides by
``x`` and is nan wherever an entry is 0, where the running product is
perfectly smooth. The recurrence ``dy[i] = x[i] * dy[i-1] + y[i-1] * dx[i]``
(the product rule on ``y[i] = y[i-1] * x[i]``) never divides.

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from ..core import dims as _dims
from .arith import add, mul
from ..core.pass_rules import DefinedCall, NumpyCall
from ..core.primitive import NOT_LINEAR, Primitive, Zero, instantiate, register
from ..core.trace import bind
from .batched import shifted
from .index import getitem
from ..core.shapes import result_dtype, shape_error
from .index import concatenate
from .shape import broadcast_to, ones_like, zeros_like
from ..core.ir import Aval, aval_of
from ..core.deps import running, union


def _take(x, axis, part):
    """``x[..., part]`` along ``axis`` (a slice)."""
    return getitem(x, (slice(None),) * axis + (part,))


def _shift_in(x, axis, fill, reverse=False):
    """``x`` moved one place along ``axis`` (towards the end, or towards the
    start if ``reverse``), the freed place filled with ``fill(x[..., :1])``:
    position ``i`` holds ``x[i-1]`` (``x[i+1]``)."""
    if reverse:
        return concatenate(_take(x, axis, slice(1, None)), fill(_take(x, axis, slice(-1, None))),
                           axis=axis)
    return concatenate(fill(_take(x, axis, slice(0, 1))), _take(x, axis, slice(None, -1)),
                       axis=axis)


# --- linrec --------------------------------------------------------------
_BLOCK = 32     # places a block scans one by one; longer axes go by blocks


def _scan_steps(a, b):
    """The recurrence along axis 0, one vectorised step per place."""
    h = b.astype(np.result_type(a, b))      # (a copy; CuPy's array stays one)
    for i in range(1, h.shape[0]):
        h[i] += a[i] * h[i - 1]
    return h


def _scan_blocks(a, b, block=_BLOCK):
    """The recurrence along axis 0 in blocks of ``_BLOCK`` places: every
    block is scanned from 0 at once (one step per place of a block), then
    the value each block starts from (a recurrence over blocks, scanned the
    same way) is carried in through the running product of the block's
    coefficients. O(n) work in about 32 log_32(n) vectorised steps, where
    one step per place costs n of them. (``block`` a parameter: generated code
    defines this function, ``DefinedCall``, without the module's constant.)"""
    n = a.shape[0]
    if n <= 4 * block:        # short: the blocks' bookkeeping costs more than it saves
        return _scan_steps(a, b)
    m = -(-n // block)
    rest = a.shape[1:]

    def blocks(x, fill):
        # (n, ...) -> (block, m, ...): place within the block first, so
        # each step reads contiguous memory; padding after the end
        # (coefficient 1, input 0) changes nothing before it
        full = np.full((m * block,) + rest, fill, x.dtype, like=x)
        full[:n] = x
        return np.ascontiguousarray(np.swapaxes(full.reshape((m, block) + rest), 0, 1), like=x)

    blocks_a = blocks(a, 1)
    h = _scan_steps(blocks_a, blocks(b, 0))
    runs = np.cumprod(blocks_a, axis=0)
    start = _scan_blocks(runs[-1], h[-1], block)       # the value at each block's end
    h[:, 1:] += start[:-1] * runs[:, 1:]
    return np.swapaxes(h, 0, 1).reshape((m * block,) + rest)[:n]


def linrec_impl(a, b, axis, reverse):
    # (another library's arrays, CuPy's, kept: ``DefinedCall.any_library``)
    a, b = np.broadcast_arrays(*(v if hasattr(v, "shape") else np.asarray(v) for v in (a, b)))
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    if reverse:
        a, b = a[::-1], b[::-1]
    with np.errstate(over="ignore", invalid="ignore"):
        h = _scan_blocks(a, b)
    if not np.isfinite(h).all() and np.isfinite(a).all() and np.isfinite(b).all():
        # a running product of a block's coefficients overflowed (and met a
        # zero): the place-by-place order computes only the recurrence's own terms
        h = _scan_steps(a, b)
    if reverse:
        h = h[::-1]
    return np.ascontiguousarray(np.moveaxis(h, 0, axis), like=h)


def linrec_loops(a, b, axis, reverse):
    """``linrec_impl`` in numba's subset (``DefinedCall``'s twin, compiled by the numba
    backend): the recurrence place by place, the other axes innermost (contiguous)."""
    shape = b.shape
    n = shape[axis]
    pre, post = 1, 1
    for k in range(len(shape)):
        if k < axis:
            pre *= shape[k]
        elif k > axis:
            post *= shape[k]
    a3 = np.ascontiguousarray(a).reshape((pre, n, post))
    # a copy of b in the result's dtype (b's promoted by a's)
    h = np.ascontiguousarray(b).reshape((pre, n, post)) * np.ones(1, a3.dtype)
    for i in range(pre):
        if reverse:
            for j in range(n - 2, -1, -1):
                for m in range(post):
                    h[i, j, m] += a3[i, j, m] * h[i, j + 1, m]
        else:
            for j in range(1, n):
                for m in range(post):
                    h[i, j, m] += a3[i, j, m] * h[i, j - 1, m]
    return h.reshape(shape)


def linrec_aval(a, b, axis, reverse):
    if a.shape != b.shape:
        raise shape_error(f"linrec: coefficient shape {a.shape} differs from {b.shape}")
    return Aval(b.shape, result_dtype(a, b))


def linrec_jvp(primals, tangents, axis, reverse):
    a, b = primals
    a_dot, b_dot = tangents
    h = linrec(a, b, axis, reverse)
    # h[i] = a[i] h[i-1] + b[i]  =>  dh[i] = a[i] dh[i-1] + (da[i] h[i-1] + db[i])
    drive = b_dot
    if not isinstance(a_dot, Zero):
        drive = add(mul(a_dot, _shift_in(h, axis, zeros_like, reverse)), b_dot)
    return h, linrec(a, drive, axis, reverse)


def linrec_transpose(ct, a, b, axis, reverse):
    # h = L b with L lower triangular (L[i, j] = a[j+1] ... a[i]); its
    # transpose runs the recurrence from the other end with a moved by one
    a_next = _shift_in(a, axis, zeros_like, not reverse)
    return None, linrec(a_next, instantiate(ct), axis, not reverse)


def linrec_zero_rule(a, b, axis, reverse):
    if isinstance(b, Zero):
        return Zero(linrec_aval(aval_of(a), b.aval, axis, reverse))
    return bind(linrec_p, instantiate(a), b, axis=axis, reverse=reverse)


def linrec_batch(args, batched, axis, reverse):
    size = _dims.shape(args[0] if batched[0] else args[1])[0]
    a, b = (x if f else broadcast_to(x, (size,) + tuple(_dims.shape(x)))
            for x, f in zip(args, batched))
    return linrec(a, b, axis + 1, reverse)


def linrec_sparsity(an, ops, outs, axis, reverse):
    """``h[i]`` depends on ``a`` and ``b`` up to ``i`` (from ``i`` on if ``reverse``)."""
    a, b = ops
    return union(running(a, axis, reverse), running(b, axis, reverse))


linrec_p = register(Primitive("linrec", nargs=2, impl=linrec_impl, jvp=linrec_jvp,
                              transpose=linrec_transpose, abstract_eval=linrec_aval,
                              zero_rule=linrec_zero_rule, batch=linrec_batch,
                              sparsity=linrec_sparsity,
                              emit=DefinedCall(linrec_impl, (("_BLOCK", _BLOCK), _scan_steps, _scan_blocks),
                                               any_library=True, numba=linrec_loops)))


def linrec(a, b, axis, reverse=False):
    return bind(linrec_p, a, b, axis=int(axis), reverse=bool(reverse))


# --- cumprod -------------------------------------------------------------
def cumprod_impl(x, axis):
    return np.cumprod(x, axis=axis)


def cumprod_aval(x, axis):
    if x.dtype.kind in "biu":      # NumPy's running product of integers is int64
        return Aval(x.shape, np.result_type(x.dtype, np.int_))
    return Aval(x.shape, x.dtype)


def cumprod_jvp(primals, tangents, axis):
    x, = primals
    y = cumprod(x, axis)
    # y[i] = y[i-1] x[i]  =>  dy[i] = x[i] dy[i-1] + y[i-1] dx[i]   (y[-1] = 1)
    return y, linrec(x, mul(tangents[0], _shift_in(y, axis, ones_like)), axis)


def cumprod_sparsity(an, ops, outs, axis):
    """A running product: each entry depends on those before it and itself."""
    return running(ops[0], axis)


class CumprodEmit(NumpyCall):
    """``np.cumprod(x, axis=1)``, as the writer spells a running function
    (``running_call``: numba's cumprod takes no axis)."""

    def expression(self, code, eqn, ins, py):
        aval = eqn.inputs[0].aval
        if py[0] or not aval.shape or set(eqn.params) != {"axis"}:
            return super().expression(code, eqn, ins, py)
        return code.running_call("cumprod", ins[0], eqn.params["axis"], aval)


cumprod_p = register(Primitive("cumprod", nargs=1, impl=cumprod_impl, jvp=cumprod_jvp,
                               transpose=NOT_LINEAR, abstract_eval=cumprod_aval,
                               sparsity=cumprod_sparsity, emit=CumprodEmit("cumprod"),
                               batch=shifted("cumprod", "axis")))


def cumprod(x, axis):
    """The running product along ``axis`` (an int in range)."""
    return bind(cumprod_p, x, axis=int(axis))
