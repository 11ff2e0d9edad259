"""NumPy's own kernels for the transcendental ufuncs of numba code, on large arrays.

    simd_calls : (source, namespace) -> source     ``np.exp(a)`` -> ``simd_exp(a)``

Why: NumPy computes ``exp``, ``log``, ``tanh``... of a float array with vector
instructions (its SIMD loops), numba one element at a time through the C
library: on 1e6 float64s (AVX-512 machine, one thread) ``np.exp`` takes 0.9 ms
in NumPy and 16 ms in numba, ``log`` 0.9 and 16, ``tanh`` 1.7 and 49
(``sin``, ``cos`` and ``sqrt`` are as fast in numba, and keep its spelling).
GradBench's lse gradient, two of these over 1.28 million floats, ran 2.4x slower
under numba than under the Python backend.

``simd_calls`` rewrites each call ``np.f(a)`` or ``np.f(a, out)`` of such a ufunc
(``SIMD_UFUNCS``) in the code into ``simd_f(a)`` / ``simd_f(a, out)``, and binds
``simd_f``: a plain function (its text is the one written into the standalone code:
``np.f`` itself), given a numba implementation (``numba.extending.overload``) that,
for a float array of at least ``SIMD_MIN_SIZE`` items, calls NumPy's kernel in object
mode, under ``np.errstate(all="ignore")`` as numba's own loops never warn (entering both
costs about 3 us: NumPy's ``exp`` then wins from about 1,000 float64s or 2,000
float32s); a smaller array, a scalar, or a complex or integer operand stays numba's
``np.f``. The result is NumPy's to the last bit (the Python backend's
value), where numba's own loop could differ from it by an ulp.

``np.where(c, a, b)`` likewise becomes ``simd_where(c, a, b)``: numba's ``where`` of
broadcast operands walks them an item at a time (60 ms against NumPy's 16 ms for a
10,000 x 1,000 selection: kmeans' gradient), and its new array's pages are faulted in
4 kB at a time where NumPy asks for huge ones. Where an operand has ``SIMD_MIN_SIZE``
items or more, NumPy's ``where`` makes the array in object mode, returned C-ordered at
the dtype numba's own ``where`` gives (so both paths give one type).

Layer: backends.
"""
from __future__ import annotations

import ast
import textwrap

import numpy as np

from ...core.where import parse
from .compiled import load_numba, numba_helper

__all__ = ["simd_calls", "SIMD_UFUNCS", "SIMD_MIN_SIZE"]

# those measured many times faster in NumPy than in numba (module docstring)
SIMD_UFUNCS = frozenset({
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.tan, np.tanh, np.sinh,
    np.cosh, np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arctanh, np.cbrt})
_TAKEN = SIMD_UFUNCS | {np.where}
SIMD_MIN_SIZE = 2048

_PLAIN = '''
def simd_{name}(x, out=None):
    """np.{name}: on a large float array, NumPy's own kernel (wengert's numba helper)."""
    if out is None:
        return np.{name}(x)
    return np.{name}(x, out)
'''
_PLAIN_WHERE = '''
def simd_where(c, a, b):
    """np.where: on large arrays, NumPy's own (wengert's numba helper)."""
    return np.where(c, a, b)
'''


def simd_calls(source, namespace):
    """``source`` with its calls of ``SIMD_UFUNCS`` through the helpers
    (module docstring), each helper bound in ``namespace``."""
    np_name = next((k for k, v in namespace.items() if v is np), None)
    if np_name is None or not any(f"{np_name}.{f.__name__}(" in source for f in _TAKEN):
        return source
    tree = parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if not (isinstance(node, ast.Call) and isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name) and func.value.id == np_name
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
            continue
        called = getattr(np, func.attr, None)
        if (any(called is f for f in SIMD_UFUNCS) and 1 <= len(node.args) <= 2
                or called is np.where and len(node.args) == 3):
            edits.append((func.lineno, func.col_offset, func.end_col_offset, called.__name__))
    if not edits:
        return source
    for line, start, stop, name in sorted(edits, reverse=True):
        text = lines[line - 1]
        lines[line - 1] = text[:start] + f"simd_{name}" + text[stop:]
        namespace[f"simd_{name}"] = numba_helper(f"simd_{name}", lambda n=name: _helper(n))
    return "".join(lines)


def _helper(name):
    """The plain function ``simd_<name>`` with its numba implementation."""
    numba = load_numba()
    text = _PLAIN_WHERE if getattr(np, name) is np.where else _PLAIN.format(name=name)
    scope = {"np": np}
    exec(text, scope)
    plain = scope[f"simd_{name}"]
    plain.helper_text = textwrap.dedent(text).strip("\n") + "\n"
    if getattr(np, name) is np.where:
        _overload_where(numba, plain)
    else:
        _overload(numba, plain, getattr(np, name))
    return plain


def _overload(numba, plain, ufunc):
    """Give ``plain`` numba's implementation: NumPy's kernel in object mode on a
    large float array, numba's own ``ufunc`` otherwise."""
    types = numba.core.types
    least = SIMD_MIN_SIZE

    def kernel(x, out):         # in object mode: NumPy, no warnings (numba gives none)
        with np.errstate(all="ignore"):
            ufunc(x, out)

    @numba.extending.overload(plain)
    def implement(x, out=None):
        array = isinstance(x, types.Array) and isinstance(x.dtype, types.Float)
        fresh = out is None or isinstance(out, (types.NoneType, types.Omitted))
        if not array:
            if fresh:
                return lambda x, out=None: ufunc(x)
            return lambda x, out=None: ufunc(x, out)

        if fresh:
            def new(x, out=None):
                made = np.empty(x.shape, x.dtype)
                if x.size >= least:
                    with numba.objmode():
                        kernel(x, made)
                else:
                    ufunc(x, made)
                return made
            return new

        def into(x, out=None):
            if x.size >= least:
                with numba.objmode():
                    kernel(x, out)
            else:
                ufunc(x, out)
            return out
        return into


def _overload_where(numba, plain):
    """Give ``plain`` numba's implementation: NumPy's ``where`` in object mode where
    an operand is large, numba's own otherwise (one result type for both)."""
    types = numba.core.types
    least = SIMD_MIN_SIZE

    @numba.extending.overload(plain)
    def implement(c, a, b):
        ndim = max(t.ndim if isinstance(t, types.Array) else 0 for t in (c, a, b))
        if ndim == 0:
            return lambda c, a, b: np.where(c, a, b)
        kinds = [t.dtype if isinstance(t, types.Array) else t for t in (a, b)]
        dtype = np.result_type(*(numba.np.numpy_support.as_dtype(k) for k in kinds))
        result = types.Array(numba.from_dtype(dtype), ndim, "C")

        def select(c, a, b):
            if max(np.size(c), np.size(a), np.size(b)) >= least:
                with numba.objmode(made=result):
                    made = np.ascontiguousarray(np.where(c, a, b), dtype=dtype)
                return made
            return np.where(c, a, b)
        return select
