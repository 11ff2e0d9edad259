"""Which expressions may return their operands' memory (the same array, a
view of it, or a container holding it), for the aliasing analysis
(``source.alias``): ``sources(e)`` names the variables the value of ``e`` may
share memory with.

Known to make new values: arithmetic, comparisons, ``.copy()`` and the
reductions, NumPy's ufuncs and array makers (``np.array`` copies unless
``copy=False``), ``math`` and the numeric builtins. Everything else may share:
subscripts (basic indexing views; a scalar result is told apart when staged),
``.T``/``.real``/``.reshape``/``.ravel``..., ``np.asarray``/``np.reshape``/
``np.broadcast_to``..., tuples, lists and dicts (they hold their items), and
any call the analysis cannot see into (a helper may return its argument).

Layer: frontends.
"""
from __future__ import annotations

import ast

import numpy as np

__all__ = ["sources", "target_sources", "names_in"]


# --- which expressions may return their operands' memory ---------------------

# attributes that are not views of the array (``y.T``, ``y.real`` are)
_PLAIN_ATTRS = frozenset(("shape", "size", "ndim", "dtype", "itemsize", "nbytes", "strides"))
# array methods that return a new array (or a scalar)
_FRESH_METHODS = frozenset((
    "copy", "sum", "mean", "prod", "std", "var", "min", "max", "argmin", "argmax", "ptp",
    "dot", "astype", "tolist", "item", "cumsum", "cumprod", "round", "clip", "all", "any",
    "trace", "conj", "conjugate", "flatten", "repeat", "nonzero", "argsort", "searchsorted",
    "__len__"))
# numpy functions (besides ufuncs) that return a new array
_FRESH_NUMPY = frozenset((
    "array", "copy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
    "full_like", "arange", "linspace", "logspace", "eye", "identity", "sum", "mean", "prod",
    "std", "var", "min", "max", "amin", "amax", "argmin", "argmax", "nansum", "nanmean",
    "cumsum", "cumprod", "dot", "vdot", "inner", "outer", "matmul", "tensordot", "kron", "cross",
    "trace", "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack", "append",
    "tile", "repeat", "where", "select", "sort", "argsort", "diff", "gradient", "interp",
    "convolve", "correlate", "clip", "round", "around", "polyval", "tril", "triu", "pad",
    "roll", "meshgrid", "allclose", "isclose", "all", "any", "linalg", "random", "fft",
    "count_nonzero", "median", "percentile", "quantile", "average", "histogram", "unique",
    "cov", "corrcoef", "trapz", "trapezoid", "logsumexp", "sinc", "i0", "nan_to_num"))
# NumPy's array makers: no array has a method of these names
_MAKERS = frozenset(("array", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                     "empty_like", "full_like", "arange", "linspace", "logspace", "eye",
                     "identity"))
_FRESH_BUILTINS = frozenset(("float", "int", "abs", "len", "sum", "range", "isinstance", "round",
                             "bool", "complex", "pow", "str", "repr", "print", "divmod", "hash"))
_NUMPY = ("np", "numpy")


def _dotted(node):
    """``np.linalg.inv`` -> ["np", "linalg", "inv"]; None when not a dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id] + parts[::-1]


def _keyword_false(call, name):
    return any(k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in call.keywords)


def _is_fresh_call(call):
    """Whether ``call`` certainly returns values that share no memory with
    its arguments (a copy, a reduction, arithmetic)."""
    f = call.func
    if any(k.arg == "out" for k in call.keywords):
        return False
    if isinstance(f, ast.Name):
        return f.id in _FRESH_BUILTINS
    path = _dotted(f)
    if path and path[0] in _NUMPY and len(path) >= 2:
        if path[1] == "array" and _keyword_false(call, "copy"):
            return False
        return path[1] in _FRESH_NUMPY or isinstance(getattr(np, path[1], None), np.ufunc)
    if path and path[0] == "math":
        return True
    if isinstance(f, ast.Attribute) and f.attr in _FRESH_METHODS:
        return not (f.attr == "astype" and _keyword_false(call, "copy"))
    if isinstance(f, ast.Attribute) and f.attr in _MAKERS:
        # ``xp.zeros(n)`` with NumPy under another name (an argument, a
        # closure variable): no array has these methods, so the base is a
        # module, whose maker returns a new array
        return not (f.attr == "array" and _keyword_false(call, "copy"))
    return False


def names_in(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def sources(e):
    """The names whose values the value of ``e`` may share memory with (be,
    view, or hold)."""
    if e is None or isinstance(e, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.Compare,
                                   ast.UnaryOp)):
        return set()
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.Subscript):
        # basic indexing is a view; a scalar result is told apart when staged
        return sources(e.value)
    if isinstance(e, ast.Attribute):
        return set() if e.attr in _PLAIN_ATTRS else sources(e.value)
    if isinstance(e, ast.Starred):
        return sources(e.value)
    if isinstance(e, ast.BinOp):
        # arithmetic makes a new array; ``[y] + rest`` makes a list holding y
        if any(isinstance(s, (ast.List, ast.Tuple, ast.ListComp)) for s in (e.left, e.right)):
            return sources(e.left) | sources(e.right)
        return set()
    if isinstance(e, ast.Call):
        if _is_fresh_call(e):
            return set()
        out = set()
        path = _dotted(e.func)
        if isinstance(e.func, ast.Attribute) and (path is None or path[0] not in _NUMPY):
            out |= sources(e.func.value)       # a method: y.reshape(...) views y
        for a in e.args + [k.value for k in e.keywords]:
            out |= sources(a)
        return out
    if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp)):
        return names_in(e)
    out = set()     # tuples, lists, dicts hold their items; a or b, x if c else y
    for c in ast.iter_child_nodes(e):
        if isinstance(c, ast.expr):
            out |= sources(c)
    return out


def target_sources(target, value):
    """[(name, sources)] for an assignment of ``value`` to ``target``; a tuple
    of values unpacked into as many names pairs them item by item."""
    if isinstance(target, ast.Name):
        return [(target.id, sources(value))]
    if isinstance(target, ast.Starred):
        return target_sources(target.value, value)
    if isinstance(target, (ast.Tuple, ast.List)):
        if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                and not any(isinstance(v, ast.Starred) for v in value.elts + target.elts)):
            return [p for t, v in zip(target.elts, value.elts) for p in target_sources(t, v)]
        srcs = sources(value)
        return [(n, srcs) for t in target.elts for n, _ in target_sources(t, None)]
    return []                   # a subscript: a write, not a binding
