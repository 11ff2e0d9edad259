"""The functions tried on arrays of other libraries (Dask, CuPy) and through the Array API
namespace (``x.__array_namespace__()``): one table, by the Array API's names, which NumPy 2
binds too (``np.acos``, ``np.concat``, ``np.permute_dims``), so one call spells each for
both (``call(ns, name, x)``). ``tests/api/test_array_libraries.py`` tries each and checks
that the lists of ``docs/guide/dask-and-gpu.md`` are the ones that pass (``doc_list``).
"""
import re

import numpy as np

# a binary function is called on x and x + 2 (no zero, no equal operands)
BINARY = ("add", "subtract", "multiply", "divide", "pow", "atan2", "logaddexp", "maximum",
          "minimum", "hypot")
UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp",
         "expm1", "log", "log1p", "log2", "log10", "negative", "positive", "sin", "sinh",
         "sqrt", "square", "tan", "tanh")
REDUCTIONS = ("sum", "mean", "prod", "max", "min", "std", "var", "cumulative_sum")
OTHERS = ("matmul", "vecdot", "tensordot", "matrix_transpose", "permute_dims", "reshape",
          "concat", "stack", "flip", "roll", "squeeze", "expand_dims", "broadcast_to", "where",
          "clip", "sort", "astype", "take")
NAMES = UNARY + BINARY + REDUCTIONS + OTHERS
# NumPy's functions beyond the Array API's names, tried on Dask only (listed after the
# others): those whose derivative gathers and scatters at a sort's (or a partition's)
# positions, which Dask cannot index with as NumPy does (``core.libraries``), and one whose
# derivative is NumPy code of wengert's own (``cumprod``'s recurrence: one task of the graph)
NUMPY_ONLY = ("median", "nanmedian", "percentile", "quantile", "partition", "take_along_axis",
              "cumprod")


def call(ns, name, x):
    """``ns.<name>`` applied to ``x`` (a 3 x 4 array of entries in (0.1, 0.9)), with
    the other operands each needs."""
    f = getattr(ns, name)
    if name in BINARY:
        return f(x, x + 2.0)
    if name in ("acos", "asin", "atanh"):
        return f(x * 0.5)
    if name == "acosh":
        return f(x + 1.5)
    extra = {
        "matmul": lambda: f(x, ns.matrix_transpose(x)),
        "vecdot": lambda: f(x, x),
        "tensordot": lambda: f(x, x, axes=2),
        "permute_dims": lambda: f(x, (1, 0)),
        "reshape": lambda: f(x, (-1,)),
        "concat": lambda: f([x, x]),
        "stack": lambda: f([x, x]),
        "squeeze": lambda: f(ns.expand_dims(x, axis=0), axis=0),
        "expand_dims": lambda: f(x, axis=0),
        "broadcast_to": lambda: f(x, (2, 3, 4)),
        "where": lambda: f(x > 0.5, x, -x),
        "clip": lambda: f(x, 0.2, 0.6),
        "astype": lambda: f(x, ns.float32),
        "take": lambda: f(x, np.array([0, 2]), axis=1),
        "cumulative_sum": lambda: f(x, axis=1),
        "roll": lambda: f(x, 1),
        "median": lambda: f(x, axis=1),
        "nanmedian": lambda: f(x, axis=0),
        "percentile": lambda: f(x, 30.0, axis=0),
        "quantile": lambda: f(x, 0.7, axis=1),
        "partition": lambda: f(x, 1, axis=1),
        "cumprod": lambda: f(x, axis=1),
        "take_along_axis": lambda: f(x, np.array([[0, 2, 2, 1]] * 3), axis=1),
    }
    return extra[name]() if name in extra else f(x)


def doc_list(text, heading):
    """The names listed in the paragraph of a docs page that opens with ``heading``,
    after its ``): ``, backquoted, in order."""
    start = text.index("): `", text.index(heading)) + 3
    end = text.find("\n\n", start)
    return re.findall(r"`([a-z_0-9]+)`", text[start:end if end >= 0 else None])


class Probe:
    """A Dask array of ``a`` whose blocks are counted as they are computed
    (a test of laziness: the count stays 0 until ``.compute()``)."""

    def __init__(self, a, chunks):
        import dask.array as da     # only the Dask tests make one
        self.count = 0
        self.array = da.from_array(a, chunks=chunks).map_blocks(self._block, dtype=a.dtype)

    def _block(self, b):
        self.count += b.size > 0        # (Dask calls it on an empty block for its metadata)
        return b
