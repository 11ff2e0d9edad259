"""Whole-array arithmetic for the numba backend, as loops compiled once.

    binary(op)     : the function the code calls for ``a op b``, a new array
    augmented(op)  : ... for ``t op= v``, ``t`` written in place
    reflected(op)  : ... for ``t = v op t``, ``t`` written in place
    KERNELS        : name -> function, every one made so far

``op`` is one of ``+ - * /``. numba compiles a statement like ``a * b``
on arrays as a broadcasting loop nest of its own, inlined into the
function, for each statement; LLVM then optimises one function holding
hundreds of loop nests, and its time grows faster than their number
(GradBench's ba jacobian: 248 such lines, 84 s to compile). Here each
operation is a call. The function called is a numba ``overload``: numba
compiles it once per signature of its operands (their number of
dimensions, layout, dtype), not once per line, and it only views its
operands as flat C-contiguous arrays and calls a loop compiled once per
operation and dtype (``_core``), which walks the broadcast shape with its
axes merged where they are contiguous in every operand (``(2, 3, n) * (3,
n)`` is one loop over ``3 n`` elements, twice). A strided operand is copied
to a contiguous one first (NumPy's own loops copy too, in blocks); a
target that is not contiguous (``x[:, 7:9] += v``) is written row by row,
each row's call contiguous again where only its leading axes are strided.

The functions are plain Python stubs that raise; only numba's typing of
the generated code calls their overloads. Operands other than arrays of one
float or complex dtype, and numbers, go to numba's own operator.
"""
from __future__ import annotations

import threading

import numpy as np

__all__ = ["binary", "augmented", "reflected", "KERNELS", "VERSION", "OPS"]

# bump when a text below changes: generated files hash it (``numbagen._digest``)
VERSION = "3"

OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}

# numba's options for every loop here: NumPy's float errors (inf, nan; no
# ZeroDivisionError), and indices that the loops compute in range
_OPTIONS = {"error_model": "numpy", "boundscheck": False}

_LOCK = threading.Lock()
KERNELS = {}            # name -> stub (``binary``, ``augmented``, ``reflected``)
_CORES = {}             # op -> the njit loop


# the loop: ``fo = fa op fb``, each a flat C array; ``sizes`` the broadcast
# shape, ``asz`` and ``bsz`` the operands' shapes padded with ones in front
_CORE_TEXT = """
def core(fa, fb, fo, sizes, asz, bsz):
    n = sizes.shape[0]
    work = np.ones(4 * (n + 1), np.int64)     # one allocation: small arrays pay it each call
    glen = work[:n + 1]
    gsa = work[n + 1:2 * n + 2]
    gsb = work[2 * n + 2:3 * n + 3]
    g = 0
    acc_a = 1
    acc_b = 1
    for k in range(n - 1, -1, -1):
        if sizes[k] == 1:
            continue
        sa = acc_a if asz[k] != 1 else 0
        sb = acc_b if bsz[k] != 1 else 0
        if g > 0 and gsa[g - 1] * glen[g - 1] == sa and gsb[g - 1] * glen[g - 1] == sb:
            glen[g - 1] *= sizes[k]
        else:
            glen[g] = sizes[k]
            gsa[g] = sa
            gsb[g] = sb
            g += 1
        acc_a *= asz[k]
        acc_b *= bsz[k]
    total = fo.shape[0]
    g = max(g, 1)
    inner, ia, ib = glen[0], gsa[0], gsb[0]
    idx = work[3 * n + 3:]
    idx[:] = 0
    pa = 0
    pb = 0
    po = 0
    while po < total:
        ro = fo[po:po + inner]
        if ia == 1 and ib == 1:
            ra = fa[pa:pa + inner]
            rb = fb[pb:pb + inner]
            for k in range(inner):
                ro[k] = ra[k] {op} rb[k]
        else:
            for k in range(inner):
                ro[k] = fa[pa + k * ia] {op} fb[pb + k * ib]
        po += inner
        j = 1
        while j < g:
            idx[j] += 1
            pa += gsa[j]
            pb += gsb[j]
            if idx[j] < glen[j]:
                break
            pa -= gsa[j] * glen[j]
            pb -= gsb[j] * glen[j]
            idx[j] = 0
            j += 1
"""

# the padded shapes of arrays ``x`` and ``y`` of ``na`` and ``nb`` dimensions,
# and their broadcast shape ``sizes``
_SHAPES_TEXT = """
    shp = np.ones(3 * {n}, np.int64)
    sizes = shp[:{n}]
    asz = shp[{n}:2 * {n}]
    bsz = shp[2 * {n}:]{pad_x}{pad_y}
    for k in range({n}):
        sizes[k] = asz[k] if bsz[k] == 1 else bsz[k]
        if asz[k] != sizes[k] and asz[k] != 1:
            raise ValueError("operands could not be broadcast together")
"""

_BINARY_TEXT = """
def impl(a, b):{same}{shapes}
    out = np.empty({sizes}, {dtype})
    core(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1),
         out.reshape(-1), sizes, asz, bsz)
    return out
"""

# operands of one shape: one loop, nothing else allocated (small arrays in
# a loop pay the broadcasting's bookkeeping at each step)
_SAME_TEXT = """
    if a.shape == b.shape:
        out = np.empty(a.shape, a.dtype)
        fa = np.ascontiguousarray(a).reshape(-1)
        fb = np.ascontiguousarray(b).reshape(-1)
        fo = out.reshape(-1)
        for k in range(fo.shape[0]):
            fo[k] = fa[k] {op} fb[k]
        return out"""

_SCALAR_TEXT = """
def impl(a, b):
    x = {array}
    out = np.empty(x.shape, x.dtype)
    fx = np.ascontiguousarray(x).reshape(-1)
    fo = out.reshape(-1)
    for k in range(fo.shape[0]):
        fo[k] = {expr}
    return out
"""

_PAD_TEXT = """
    for k in range({m}):
        {sz}[{n} - {m} + k] = {x}.shape[k]"""

# in place: ``a`` is the target ``t``, ``b`` the value ``v`` (``t op= v``, or
# ``reflected``: ``t = v op t``); a value sharing the target's memory is read
# from a copy. A target that is not contiguous (a slice ``x[:, 2:4]``) is
# written row by row (``again``: this function, on ``t[i]``), a strided
# vector element by element
_INPLACE_TEXT = """
def impl(a, b):
    t = a
    v = b
    if not t.flags.c_contiguous:{rows}
        return
    ft = np.ascontiguousarray(t).reshape(-1)
    {body}
"""

_INPLACE_ARRAY = """fv = np.ascontiguousarray(v).reshape(-1)
    lo, hi = fv.ctypes.data, fv.ctypes.data + fv.nbytes
    if lo < ft.ctypes.data + ft.nbytes and ft.ctypes.data < hi:
        fv = fv.copy(){shapes}
    if {target_axes}:
        raise ValueError("the value does not broadcast to the target's shape")
    core({first}, {second}, ft, sizes, {sizes_first}, {sizes_second})"""

_TOO_WIDE_TEXT = """
def impl(a, b):
    raise ValueError("the value does not broadcast to the target's shape")
"""

_INPLACE_SCALAR = """for k in range(ft.shape[0]):
        ft[k] = {expr}"""


def _shapes(n, na, nb, x, y):
    """``_SHAPES_TEXT`` for arrays ``x``, ``y`` of ``na``, ``nb`` dimensions."""
    pad_x = _PAD_TEXT.format(m=na, n=n, sz="asz", x=x) if na else ""
    pad_y = _PAD_TEXT.format(m=nb, n=n, sz="bsz", x=y) if nb else ""
    return _SHAPES_TEXT.format(n=n, pad_x=pad_x, pad_y=pad_y)


def _rows(op, target, value, kv, reflected):
    """The statements writing a target that is not contiguous: ``again`` on
    each row, or each element of a vector."""
    if target.ndim == 1:
        # (the value read from a copy: it may be the target's elements in another order)
        v = "v" if kv == "number" or value.ndim == 0 else "w[k if w.shape[0] != 1 else 0]"
        expr = f"{v} {op} t[k]" if reflected else f"t[k] {op} {v}"
        return f"""
        w = np.asarray(v).copy()
        for k in range(t.shape[0]):
            t[k] = {expr}"""
    v = "v" if kv == "number" or value.ndim < target.ndim else "v[i if v.shape[0] != 1 else 0]"
    return f"""
        for i in range(t.shape[0]):
            again(t[i], {v})"""


def _numba():
    import numba        # an optional extra: ``numbagen.load_numba`` has said it is there
    return numba


def _core(op):
    """The njit loop of ``op`` (``_CORE_TEXT``), made once."""
    core = _CORES.get(op)
    if core is None:
        namespace = {"np": np}
        exec(_CORE_TEXT.format(op=op), namespace)
        core = _CORES[op] = _numba().njit(**_OPTIONS)(namespace["core"])
    return core


def _impl(text, op, again=None):
    namespace = {"np": np, "core": _core(op), "again": again}
    exec(text, namespace)
    return namespace["impl"]


# the NumPy ufunc of each operation (numba's, with an output, for ``reflected``)
_UFUNCS = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide"}


def _native_text(op, kind):
    return {"binary": f"return a {op} b", "augmented": f"a {op}= b",
            "reflected": f"np.{_UFUNCS[op]}(b, a, a)"}[kind]


def _native(op, kind):
    """numba's own operator: where the loops here do not apply."""
    namespace = {"np": np}
    exec(f"def impl(a, b):\n    {_native_text(op, kind)}\n", namespace)
    return namespace["impl"]


def _kind(ty, types):
    """'array' (of a float or complex dtype), 'number', or None."""
    if isinstance(ty, types.Array) and isinstance(ty.dtype, (types.Float, types.Complex)):
        return "array"
    if isinstance(ty, (types.Float, types.Integer, types.Complex)) and not \
            isinstance(ty, types.Boolean):
        return "number"
    return None


def _binary_impl(op, a, b, types):
    ka, kb = _kind(a, types), _kind(b, types)
    if ka == kb == "array" and a.dtype == b.dtype and max(a.ndim, b.ndim) > 0:
        n = max(a.ndim, b.ndim)
        shapes = _shapes(n, a.ndim, b.ndim, "a", "b")
        sizes = "(" + "".join(f"sizes[{k}], " for k in range(n)) + ")"
        same = _SAME_TEXT.format(op=op) if a.ndim == b.ndim else ""
        return _impl(_BINARY_TEXT.format(same=same, shapes=shapes, sizes=sizes,
                                         dtype="a.dtype"), op)
    if ka == "array" and kb == "number" and a.ndim > 0:
        return _impl(_SCALAR_TEXT.format(array="a", expr=f"fx[k] {op} b"), op)
    if ka == "number" and kb == "array" and b.ndim > 0:
        return _impl(_SCALAR_TEXT.format(array="b", expr=f"a {op} fx[k]"), op)
    return _native(op, "binary")


def _inplace_impl(op, a, b, types, reflected, again):
    """``a op= b`` (``reflected``: ``a = b op a``), written into ``a``."""
    target, value = a, b
    kt, kv = _kind(target, types), _kind(value, types)
    if kt == kv == "array" and value.ndim > target.ndim:
        return _impl(_TOO_WIDE_TEXT, op)
    if kt != "array" or target.ndim == 0 or kv is None or (
            kv == "array" and value.dtype != target.dtype):
        return _native(op, "reflected" if reflected else "augmented")
    rows = _rows(op, target, value, kv, reflected)
    if kv == "number":
        body = _INPLACE_SCALAR.format(expr=f"v {op} ft[k]" if reflected else f"ft[k] {op} v")
    else:
        n = target.ndim
        shapes = _shapes(n, n, value.ndim, "t", "v")
        first, second = ("fv", "ft") if reflected else ("ft", "fv")
        body = _INPLACE_ARRAY.format(
            shapes=shapes.rstrip(), first=first, second=second,
            target_axes=" or ".join(f"sizes[{k}] != t.shape[{k}]" for k in range(n)),
            sizes_first="bsz" if reflected else "asz", sizes_second="asz" if reflected else "bsz")
    return _impl(_INPLACE_TEXT.format(rows=rows, body=body), op, again)


def _make(kind, op):
    """The stub ``kind`` of ``op``, its numba overload registered once."""
    name = {"binary": OPS[op], "augmented": f"i{OPS[op]}", "reflected": f"r{OPS[op]}"}[kind]
    with _LOCK:
        stub = KERNELS.get(name)
        if stub is None:
            stub = KERNELS[name] = _register(kind, op, name)
        return stub


def _register(kind, op, name):
    _numba()
    from numba import types
    from numba.extending import overload

    def stub(a, b):
        raise TypeError(f"wengert's numba kernel {name} runs in numba-compiled code only")
    stub.__name__ = stub.__qualname__ = name
    stub.__module__ = __name__

    def typer(a, b):
        if kind == "binary":
            return _binary_impl(op, a, b, types)
        return _inplace_impl(op, a, b, types, kind == "reflected", stub)

    overload(stub, jit_options=dict(_OPTIONS))(typer)
    return stub


def binary(op):
    """``a op b``: a new array (``op`` in ``OPS``)."""
    return _make("binary", op)


def augmented(op):
    """``t op= v``: ``t`` an array, written in place."""
    return _make("augmented", op)


def reflected(op):
    """``t = v op t`` written into ``t``."""
    return _make("reflected", op)
