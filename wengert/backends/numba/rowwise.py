"""The numba helpers that apply a function to each row of an array (its last axis), for
what numba's NumPy lacks over some axes: a function of a row's entries, one value per
entry (``ROW_TEXTS``: ``cumprod``, ``prod_others``; ``others_helper``), and a reduction
over the last axis (``LAST_AXIS``: ``min``, ``max``, ``prod``, ``argmin``, ``argmax``;
``last_axis_helper``). Each is numba text compiled once a process (``numba_helper``) and
written into a generated file's text where the code calls it (``standalone``).

Layer: backends.
"""
from __future__ import annotations

from .compiled import numba_helper
from .standalone import njit_text

__all__ = ["ROW_TEXTS", "others_helper", "LAST_AXIS", "LAST_AXIS_TEXT", "last_axis_helper"]


def others_helper(fn):
    """A numba function: ``fn`` (``ROW_TEXTS``) over the last axis of a
    C-contiguous 2-D array, each row apart (same shape out)."""
    return numba_helper(f"others {fn}", lambda: njit_text(ROW_TEXTS[fn], f"{fn}_last_axis"))


# functions of the entries of a row, one value per entry (the rows of a 2-D
# array), as numba text; what NumPy's statements compute, without
# ``np.errstate`` (numba neither warns nor raises on floating-point errors)
ROW_TEXTS = {"cumprod": """
def cumprod_last_axis(x):
    # each row's running product
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.cumprod(x[i])
    return out
""", "prod_others": """
def prod_others_last_axis(x):
    # each entry's product of the others in its row: the row's product
    # divided by it where nothing in x is 0, inf or nan and no product is
    # subnormal (as ``prod_others_impl`` decides: over the whole of x), else
    # the running products from both ends multiplied (no division)
    rows, n = x.shape
    out = np.empty_like(x)
    total = np.empty(rows, x.dtype)
    tiny = np.finfo(x.dtype).tiny
    divide = True
    for i in range(rows):
        total[i] = x[i].prod()
        if not (np.all(x[i] != 0) and np.isfinite(total[i]) and np.abs(total[i]) >= tiny):
            divide = False
    for i in range(rows):
        if divide:
            for j in range(n):
                out[i, j] = total[i] / x[i, j]
        else:
            left = x.dtype.type(1)
            for j in range(n):
                out[i, j] = left
                left = left * x[i, j]
            right = x.dtype.type(1)
            for j in range(n - 1, -1, -1):
                out[i, j] = out[i, j] * right
                right = right * x[i, j]
    return out
"""}


# reductions numba has over every axis only, spelled over some axes by a helper
# (``LAST_AXIS``, below: fn -> its result dtype in the helper's text)
def last_axis_helper(fn):
    """A numba function: NumPy's ``fn`` over the last axis of a C-contiguous
    array (``x.fn(axis=-1)``), a loop over the other items."""
    return numba_helper(f"last axis {fn}", lambda: njit_text(
        LAST_AXIS_TEXT.format(fn=fn, dtype=LAST_AXIS[fn]), f"{fn}_last_axis"))


# the helpers' text, and each reduction's result dtype
LAST_AXIS_TEXT = """
def {fn}_last_axis(x):
    rows = x.reshape((-1, x.shape[-1]))
    out = np.empty(rows.shape[0], {dtype})
    for i in range(rows.shape[0]):
        out[i] = rows[i].{fn}()
    return out.reshape(x.shape[:-1])
"""
LAST_AXIS = {"min": "x.dtype", "max": "x.dtype", "prod": "x.dtype",
              "argmin": "np.int64", "argmax": "np.int64"}
