"""NumPy's ``matmul`` in numba's subset, whose ``@`` takes 1-D and 2-D arrays only.

    matmul_text(code, ins, eqn, helper) -> str    the expression (``NumbaWriter.numpy_call``)

NumPy's semantics: the last two axes are the matrices, the leading ones a
batch broadcast between the operands; a 1-D operand is a row (on the left)
or a column (on the right) whose axis the result drops.

* Both operands of at most 2 dimensions: numba's ``@`` (BLAS).
* Else each operand is made C-contiguous and of three axes (its batch
  flattened; a 1-D one a single row or column), and ``batched_matmul``
  loops over the broadcast batch, each product ``np.dot`` of two 2-D slices
  written into the result's (no array per product); the result is reshaped
  to the Program's shape (the row's or column's axis dropped). The batch
  lengths are given as the operands' lengths, so code reused at other
  lengths reads them where it runs.

``batched_matmul`` is one numba function, compiled per dtype and batch rank
and cached on disk (its module is a file), so a program's compile holds no
BLAS call of its own per shape. Operands of two dtypes meet at NumPy's
result dtype (a copy of the other). Batch lengths that do not broadcast, or
matrices that do not fit, raise ValueError as NumPy does.

Layer: backends.
"""
from __future__ import annotations

import numpy as np

__all__ = ["matmul_text", "batched_matmul"]


def matmul_text(code, ins, eqn, helper):
    """``ins[0] @ ins[1]`` (the operands' text) in numba's subset; ``eqn``:
    the equation (its avals); ``helper``: a function of the text, giving
    the name ``batched_matmul`` is bound to."""
    (a, b), (av, bv) = ins, [x.aval for x in eqn.inputs]
    out = eqn.outputs[0].aval
    nda, ndb = len(av.shape), len(bv.shape)
    casts = [f".astype({code.dtype(out.dtype)})" if x.dtype != out.dtype else ""
             for x in (av, bv)]
    if nda <= 2 and ndb <= 2:
        return " @ ".join(f"{code.atom(x)}{c}" for x, c in zip((a, b), casts))
    # the operands as (batch, rows, columns): a 1-D a is one row, a 1-D b one column
    a_mat = [1, av.shape[0]] if nda == 1 else list(av.shape[-2:])
    b_mat = [bv.shape[0], 1] if ndb == 1 else list(bv.shape[-2:])
    a_batch, b_batch = list(av.shape[:-2]), list(bv.shape[:-2])
    r = max(len(a_batch), len(b_batch))
    a_batch = [1] * (r - len(a_batch)) + a_batch
    b_batch = [1] * (r - len(b_batch)) + b_batch

    def dims(ds):
        return [code.dim(d) for d in ds]

    def product(ds):
        ds = [d for d in dims(ds) if d != "1"]
        return " * ".join(f"({d})" if not d.isidentifier() and not d.isdigit() else d
                          for d in ds) or "1"

    def as3(x, cast, batch, mat):
        return (f"{code.np}.ascontiguousarray({code.atom(x)}{cast})"
                f".reshape(({product(batch)}, {', '.join(dims(mat))}))")

    def tup(ds):
        # a literal length as an int64 (numba would type each literal apart:
        # one compile of the helper per pattern of them)
        items = [f"{code.np}.int64({d})" if d.isdigit() else d for d in dims(ds)]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    return (f"{helper()}({as3(a, casts[0], a_batch, a_mat)}, {as3(b, casts[1], b_batch, b_mat)}, "
            f"{tup(a_batch)}, {tup(b_batch)}).reshape({code.shape(out.shape)})")


def batched_matmul(a, b, batch_a, batch_b):
    """``a[i] @ b[j]`` over the broadcast batch (C order): ``a`` of shape
    (prod(batch_a), n, k), ``b`` of (prod(batch_b), k, m), both C-contiguous;
    ``batch_a``, ``batch_b``: the batch lengths (tuples of one rank). The
    result: (prod of the broadcast lengths, n, m)."""
    r = len(batch_a)
    n, k, m = a.shape[1], a.shape[2], b.shape[2]
    if b.shape[1] != k:
        raise ValueError("matmul: the operands' matrices do not fit")
    total = 1
    for q in range(r):
        d = batch_b[q] if batch_a[q] == 1 else batch_a[q]
        if (batch_a[q] != d and batch_a[q] != 1) or (batch_b[q] != d and batch_b[q] != 1):
            raise ValueError("matmul: the operands' batch axes do not broadcast")
        total *= d
    out = np.empty((total, n, m), a.dtype)
    for t in range(total):
        rest, i, j, step_a, step_b = t, 0, 0, 1, 1
        for q in range(r - 1, -1, -1):
            d = batch_b[q] if batch_a[q] == 1 else batch_a[q]
            digit = rest % d
            rest //= d
            if batch_a[q] != 1:         # a length-1 axis is read at 0 (broadcast)
                i += digit * step_a
            if batch_b[q] != 1:
                j += digit * step_b
            step_a *= batch_a[q]
            step_b *= batch_b[q]
        np.dot(a[i], b[j], out[t])
    return out


def kernel():
    """``batched_matmul`` under ``numba.njit`` (cached on disk; the writer
    makes it once per process, ``numba.codegen._helper``)."""
    import numba
    return numba.njit(cache=True)(batched_matmul)
