"""``convolve``: the discrete convolution of two 1-D arrays, in NumPy's
``full`` mode or its ``valid`` mode (the first operand at least as long as
the second), the one primitive under ``np.convolve`` and ``np.correlate``
(``same`` is a slice of ``full``, taken by the wrappers in ``numpy.elementary``).

It is bilinear, so its jvp is two convolutions and its transpose in either
operand is a correlation with the other: a convolution with the other
reversed, in the mode that computes only the entries needed (a ``full``
convolution of the long cotangent with the long operand would cost the
product of their lengths):

    full:   c[k] = sum_j a[j] v[k - j]           (n + m - 1 entries)
            ct_a = convolve(ct, v[::-1], "valid")      ct_v = convolve(ct, a[::-1], "valid")
    valid:  c[k] = sum_j a[k + m - 1 - j] v[j]   (n - m + 1 entries, n >= m)
            ct_a = convolve(ct, v[::-1], "full")       ct_v = convolve(a, ct[::-1], "valid")[::-1]

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from .arith import add
from ..core.pass_rules import NumpyCall
from ..core.primitive import ZERO_IF_ANY, Linear, Primitive, Zero, register
from ..core.trace import wrapper_of
from .index import getitem
from .correlation import correlate
from .linalg import shape_tuple
from .shape import reshape
from ..core.shapes import result_dtype, shape_error
from ..core.ir import Aval
from ..core.deps import MAX_POINTS, dense, nonzero_mask, relate_all

__all__ = ["convolve"]

_REVERSED = (slice(None, None, -1),)


# --- convolve ----------------------------------------------------------
def convolve_aval(a, v, mode="full"):
    if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
        raise shape_error(f"convolve: operands must be non-empty 1-D arrays, got shapes "
                          f"{a.shape} and {v.shape}")
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return Aval((n + m - 1,), result_dtype(a, v))
    if mode != "valid" or n < m:
        raise shape_error(f"convolve[mode={mode!r}]: the primitive takes mode 'full', or "
                          f"'valid' with the first operand the longer (got lengths {n}, {m})")
    return Aval((n - m + 1,), result_dtype(a, v))


def convolve_jvp(primals, tangents, mode="full"):
    a, v = primals
    a_dot, v_dot = tangents
    out = convolve(a, v, mode=mode)
    if type(a_dot) is Zero:
        return out, convolve(a, v_dot, mode=mode)
    if type(v_dot) is Zero:
        return out, convolve(a_dot, v, mode=mode)
    return out, add(convolve(a_dot, v, mode=mode), convolve(a, v_dot, mode=mode))


def convolve_transpose(ct, a, v, mode="full"):
    assert isinstance(a, Linear) != isinstance(v, Linear), "convolve is linear in one operand"
    if mode == "full":
        other = v if isinstance(a, Linear) else a
        back = convolve(ct, getitem(other, _REVERSED), mode="valid")
    elif isinstance(a, Linear):
        back = convolve(ct, getitem(v, _REVERSED), mode="full")
    else:
        back = getitem(convolve(a, getitem(ct, _REVERSED), mode="valid"), _REVERSED)
    return (back, None) if isinstance(a, Linear) else (None, back)


def convolve_batch(args, batched, mode="full"):
    """A batch of signals against one kernel (or, in full mode, which commutes, one signal
    against a batch of kernels): one correlation with the kernel reversed, along the
    batch's own axes (``correlation.correlate``, whose kernel has length 1 along the batch
    axis). Two batches: NumPy has no batched convolution, so once per example."""
    a, v = args
    ba, bv = batched
    if ba and bv or (bv and mode != "full"):
        return NotImplemented
    x, k = (a, v) if ba else (v, a)
    m = shape_tuple(k)[0]
    pad = ((0, 0), (m - 1, m - 1) if mode == "full" else (0, 0))
    return correlate(x, reshape(getitem(k, _REVERSED), (1, m)), pad)
def convolve_sparsity(an, ops, outs, mode="full"):
    """``c[k]`` reads ``a[j]`` and ``v[t]`` where ``k = j + t`` (less ``m - 1`` in ``valid``
    mode): a band as wide as the kernel's nonzeros, when it is a constant."""
    a, v = ops
    n, m = a.shape[0], v.shape[0]
    length = outs[0].shape[0]
    shift = 0 if mode == "full" else m - 1
    relations = []
    for op, j, t, mine in ((a, np.arange(n), np.nonzero(nonzero_mask(v))[0], 0),
                           (v, np.nonzero(nonzero_mask(a))[0], np.arange(m), 1)):
        if op.deps is None:
            continue
        if len(j) * len(t) > MAX_POINTS:
            return dense((length,), a.deps, v.deps)
        jj, tt = np.meshgrid(j, t, indexing="ij")
        k = jj + tt - shift
        ok = (k >= 0) & (k < length)
        relations.append((op.deps, k[ok], (tt if mine else jj)[ok]))
    return relate_all((length,), relations)


# impl: NumPy's own function (Dask has none: a Dask operand runs as one task, core.libraries)
convolve_p = register(Primitive("convolve", nargs=2, impl=np.convolve, jvp=convolve_jvp,
                                transpose=convolve_transpose, abstract_eval=convolve_aval,
                                zero_rule=ZERO_IF_ANY, sparsity=convolve_sparsity,
                                emit=NumpyCall("convolve"), batch=convolve_batch))
convolve = wrapper_of(convolve_p)
