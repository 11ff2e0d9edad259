"""N-d correlation: the one primitive ``scipy.signal``'s ``convolve`` and
``correlate`` (every mode) are made of.

Contract: ``correlate_p(x, k, pad)`` is the valid cross-correlation of a
zero-padded ``x`` with the kernel ``k``::

    out[n] = sum_j xp[n + j] k[j],    xp = x padded by pad[i] = (lo, hi) on axis i

(a negative ``lo``/``hi`` crops instead), so ``out.shape[i] = x.shape[i] +
lo + hi - k.shape[i] + 1``. ``x`` and ``k`` have the same number of axes.
Full, same and valid correlations are choices of ``pad``; a convolution is
a correlation with the kernel flipped on every axis.

It is bilinear, and both transposes are correlations again (which is why
``pad`` may be negative): with K the kernel's lengths,

* in ``x``: ``ct_x = correlate(ct, flip(k), pad=(K-1-lo, K-1-hi))``;
* in ``k``: ``ct_k = correlate(x, ct, pad=(lo, hi))``.

The impl is ``np.correlate`` in 1-d and ``scipy.signal.correlate``
(direct or FFT, chosen by its cost model) in n-d; without SciPy, sums of
shifted slices, O(output size * kernel size), looping in Python over the
smaller of the kernel's and the output's positions. Real operands only
(SciPy conjugates a complex kernel).

Layer: primitives.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.primitive import ZERO_IF_ANY, Linear, Primitive, Zero, instantiate, register
from ..core.trace import bind
from ..core.shapes import result_dtype, shape_error
from .arith import add, convert
from .shape import reshape
from .index import getitem
from .linalg import shape_tuple
from .triangular import real_only
from ..core.ir import Aval, aval_of
from ..core.deps import MAX_POINTS, dense, ids, nonzero_mask, relate_all


def _padded(x, pad):
    """``x`` zero-padded by ``pad`` (negative entries crop)."""
    crop = tuple(slice(max(0, -lo), n - max(0, -hi)) for n, (lo, hi) in zip(x.shape, pad))
    return np.pad(x[crop], [(max(0, lo), max(0, hi)) for lo, hi in pad])


def correlate_impl(x, k, pad):
    x, k = np.asarray(x), np.asarray(k)
    dtype = np.result_type(x, k)
    xp = _padded(x, pad)
    shape = tuple(n - m + 1 for n, m in zip(xp.shape, k.shape))
    if math.prod(shape) == 0 or k.size == 0:
        return np.zeros(shape, dtype)
    if k.ndim == 1:
        return np.correlate(xp, k, "valid").astype(dtype, copy=False)
    signal = _scipy_signal()
    if signal is not None and not (k.size > math.prod(shape) <= _FEW):
        # SciPy picks direct summation or FFT by cost, as its own call does
        return np.asarray(signal.correlate(xp, k, mode="valid"), dtype)
    return _shifted_sums(xp, k, shape, dtype)


# a transpose in the kernel correlates with a kernel as large as the
# output: when few outputs remain, one dot product each beats an FFT
_FEW = 1024


def _scipy_signal():
    try:
        import scipy.signal
    except ImportError:         # reached from SciPy calls only, but the impl needs no SciPy
        return None
    return scipy.signal


def _shifted_sums(xp, k, shape, dtype):
    """The valid correlation in NumPy alone, O(output size * kernel size)."""
    out = np.zeros(shape, dtype)
    if k.size <= out.size:
        # one shifted slice of x per kernel entry
        for j in np.ndindex(k.shape):
            out += k[j] * xp[tuple(slice(a, a + n) for a, n in zip(j, shape))]
    else:
        # one window of x per output entry (the kernel is the larger)
        flat_k = k.reshape(-1).astype(dtype)
        for i in np.ndindex(shape):
            window = xp[tuple(slice(a, a + m) for a, m in zip(i, k.shape))]
            out[i] = np.dot(window.reshape(-1).astype(dtype), flat_k)
    return out


def correlate_aval(x, k, pad):
    if x.ndim != k.ndim or len(pad) != x.ndim:
        raise shape_error(f"correlate: operands of shapes {x.shape} and {k.shape} need the same "
                          f"number of axes (and padding {pad} one pair per axis)")
    real_only("correlate", x, k)
    shape = tuple(n + lo + hi - m + 1 for n, m, (lo, hi) in zip(x.shape, k.shape, pad))
    if any(d < 0 for d in shape):
        raise shape_error(f"correlate: kernel of shape {k.shape} is longer than the padded "
                          f"operand of shape {x.shape} (padding {pad})")
    return Aval(shape, result_dtype(x, k))


def correlate_jvp(primals, tangents, pad):
    x, k = primals
    x_dot, k_dot = tangents
    out = correlate(x, k, pad)
    out_dot = Zero(aval_of(out))
    if not isinstance(x_dot, Zero):
        out_dot = add(out_dot, correlate(x_dot, k, pad))
    if not isinstance(k_dot, Zero):
        out_dot = add(out_dot, correlate(x, k_dot, pad))
    return out, out_dot


def _as(ct, operand):
    """A cotangent in its operand's dtype (float32 stays float32)."""
    dtype = operand.aval.dtype
    return ct if aval_of(ct).dtype == dtype else convert(ct, dtype=dtype)


def correlate_transpose(ct, x, k, pad):
    assert isinstance(x, Linear) != isinstance(k, Linear), "correlate is linear in one operand"
    ct = instantiate(ct)
    if isinstance(x, Linear):
        back = tuple((m - 1 - lo, m - 1 - hi) for m, (lo, hi) in zip(shape_tuple(k), pad))
        return _as(correlate(ct, flip(k), back), x), None
    return None, _as(correlate(x, ct, pad), k)


def correlate_batch(args, batched, pad):
    x, k = args
    bx, bk = batched
    if bk:
        return NotImplemented
    # a batch axis of x against a kernel of length 1 there
    k = reshape(k, (1,) + tuple(shape_tuple(k)))
    return correlate(x, k, ((0, 0),) + tuple(pad))


def correlate_sparsity(an, ops, outs, pad):
    """``out[n]`` reads ``xp[n + j]`` and ``k[j]`` for each kernel position ``j`` (a constant
    kernel's nonzeros only; none in the padding)."""
    x, k = ops
    shape = outs[0].shape
    if math.prod(k.shape) * math.prod(shape) > MAX_POINTS:
        return dense(shape, x.deps, k.deps)
    index = ids(x.shape)
    crop = tuple(slice(max(0, -lo), n - max(0, -hi)) for n, (lo, hi) in zip(x.shape, pad))
    xp = np.pad(index[crop], [(max(0, lo), max(0, hi)) for lo, hi in pad], constant_values=-1)
    x_nz, k_nz = nonzero_mask(x).reshape(-1), nonzero_mask(k)
    out, relations = ids(shape), []
    for j in np.ndindex(k.shape):
        window = xp[tuple(slice(a, a + n) for a, n in zip(j, shape))]
        inside = window >= 0
        if x.deps is not None and k_nz[j]:
            relations.append((x.deps, out[inside], window[inside]))
        if k.deps is not None:
            hit = inside & x_nz[np.where(inside, window, 0)]
            at = np.ravel_multi_index(j, k.shape)
            relations.append((k.deps, out[hit], np.full(int(hit.sum()), at)))
    return relate_all(shape, relations)


correlate_p = register(Primitive("correlate", nargs=2, impl=correlate_impl, jvp=correlate_jvp,
                                 transpose=correlate_transpose, abstract_eval=correlate_aval,
                                 batch=correlate_batch, zero_rule=ZERO_IF_ANY,
                                 sparsity=correlate_sparsity))


def correlate(x, k, pad):
    return bind(correlate_p, x, k, pad=tuple((int(lo), int(hi)) for lo, hi in pad))


def flip(x):
    """``x`` reversed along every axis."""
    nd = len(shape_tuple(x))
    return getitem(x, (slice(None, None, -1),) * nd) if nd else x


def _no_padding(nd):
    return ((0, 0),) * nd


def correlate_mode(x, k, mode):
    """SciPy's ``correlate(x, k, mode)`` of real operands with the same
    number of axes (at least one): full, same (centred on x) or valid."""
    xs, ks = shape_tuple(x), shape_tuple(k)
    if mode == "full":
        return correlate(x, k, tuple((m - 1, m - 1) for m in ks))
    if mode == "same":
        # the centred len(x) entries of the full correlation
        return correlate(x, k, tuple((m - 1 - (m - 1) // 2, (m - 1) // 2) for m in ks))
    if all(n >= m for n, m in zip(xs, ks)):
        return correlate(x, k, _no_padding(len(xs)))
    if all(m >= n for n, m in zip(xs, ks)):
        # SciPy swaps the operands; correlation then runs backwards
        return flip(correlate(k, x, _no_padding(len(xs))))
    raise shape_error(f"correlate/convolve: in 'valid' mode one operand must be at least as "
                      f"large as the other along every axis, got shapes {xs} and {ks}")
