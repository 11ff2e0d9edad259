"""NumPy's shape and arrangement functions on traced values (the library
table's ``FUNCTIONS``, see ``library``): repeating, tiling, rolling,
flipping, padding, splitting, sorting, gathering, selecting.

Each is a composite of the shape and index primitives (``getitem`` with
slices or index arrays, ``concatenate``, ``reshape``, ``broadcast_to``,
``transpose``, ``where``), so its derivatives of every order are theirs. The
exceptions are primitives of their own: ``cumprod`` (``scan``: a running
product whose derivative never divides by the operand), and the index arrays
computed from values (``gather``: ``argsort``, ``partition_index``), which
run when the program runs.

Contract, as ``numpy_functions``: every wrapper takes NumPy's exact
signature; what shapes an output (repeat counts, shifts, split points, pad
widths) must be a Python value, never a traced one, and a parameter value
that is not implemented raises ``NoDerivativeRule``.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import arith, numpy_select, shape
from .core import TracerBase
from .index import getitem
from .numpy_functions import NO_VALUE, as_dtype, no_out, refuse
from .scan import cumprod
from .. import dims as _dims
from ..errors import NonDifferentiableInputError, user_location
from ..ir import aval_of

__all__ = ["FUNCTIONS"]


def _arr(x):
    """A traced value as it is; anything else as NumPy sees it."""
    return x if isinstance(x, TracerBase) else np.asarray(x)


def _ndim(x):
    return len(_dims.shape(x))


def _axis(axis, nd, fname):
    axis = int(axis)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd, fname)
    return axis % nd


def _axes(axis, nd, fname):
    """A sorted tuple of distinct axes in range: ``None`` is every axis."""
    if axis is None:
        return tuple(range(nd))
    axes = [_axis(a, nd, fname) for a in (axis if np.ndim(axis) else (axis,))]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis")
    return tuple(sorted(axes))


def _along(x, axis, part):
    """``x[..., part]`` with ``part`` (a slice or an index array) on ``axis``."""
    return getitem(x, (slice(None),) * axis + (part,))


def _static(value, what, fname):
    """A value that decides the output's shape, as a Python/NumPy value: a
    traced one is accepted only where its value is known for this call (the
    trace engine); where code is generated for every call it is refused."""
    if not isinstance(value, TracerBase):
        return value
    val = value.concrete_value
    if val is None or aval_of(value).dtype.kind not in "iub":
        raise NonDifferentiableInputError(
            f"{user_location()}: {fname}: {what} decides the shape of the result, so it must be "
            "a Python value (or computed from values you do not differentiate); it is traced "
            "here")
    return val


def _flat(a):
    return shape.reshape(a, (-1,))


# --- running product ---------------------------------------------------
def _cumprod(a, axis=None, dtype=None, out=None):
    no_out(out, "np.cumprod")
    a = as_dtype(_arr(a), dtype)
    if axis is None:
        a, axis = _flat(a), 0
    return cumprod(a, _axis(axis, max(_ndim(a), 1), "cumprod"))


# --- repeating and tiling ----------------------------------------------
def _repeat(a, repeats, axis=None):
    a = _arr(a)
    repeats = np.asarray(_static(repeats, "repeats", "np.repeat"))
    if axis is None:
        a, axis = _flat(a), 0
    axis = _axis(axis, _ndim(a), "repeat")
    # which entry each place of the result copies (NumPy checks the counts)
    return _along(a, axis, np.repeat(np.arange(_dims.shape(a)[axis]), repeats))


def _tile(A, reps):
    A = _arr(A)
    reps = tuple(int(r) for r in np.ravel(_static(reps, "reps", "np.tile")))
    nd = max(len(reps), _ndim(A))
    size = (1,) * (nd - _ndim(A)) + tuple(_dims.shape(A))
    reps = (1,) * (nd - len(reps)) + reps
    # (s0, s1) -> (1, s0, 1, s1) -> (r0, s0, r1, s1) -> (r0 s0, r1 s1)
    pairs = [d for s in size for d in (1, s)]
    grown = shape.broadcast_to(shape.reshape(A, pairs), [d for r, s in zip(reps, size)
                                                         for d in (r, s)])
    return shape.reshape(grown, tuple(r * s for r, s in zip(reps, size)))


def _kron(a, b):
    a, b = _arr(a), _arr(b)
    nd = max(_ndim(a), _ndim(b))
    sa = (1,) * (nd - _ndim(a)) + tuple(_dims.shape(a))
    sb = (1,) * (nd - _ndim(b)) + tuple(_dims.shape(b))
    # the outer product with each axis of a just before the same axis of b
    prod = arith.mul(shape.reshape(a, [d for s in sa for d in (s, 1)]),
                     shape.reshape(b, [d for s in sb for d in (1, s)]))
    return shape.reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


# --- rolling, flipping, rotating ---------------------------------------
def _roll_axis(x, axis, k):
    n = _dims.shape(x)[axis]
    k = k % n if n else 0
    if k == 0:
        return x
    return shape.concatenate(_along(x, axis, slice(n - k, None)),
                             _along(x, axis, slice(0, n - k)), axis=axis)


def _roll(a, shift, axis=None):
    a = _arr(a)
    shift = _static(shift, "shift", "np.roll")
    if axis is None:
        return shape.reshape(_roll(_flat(a), shift, 0), _dims.shape(a))
    pairs = np.broadcast(shift, axis)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    nd = _ndim(a)
    total = {}
    for k, ax in pairs:
        ax = _axis(ax, nd, "roll")
        total[ax] = total.get(ax, 0) + int(k)
    for ax, k in sorted(total.items()):
        a = _roll_axis(a, ax, k)
    return a


def _rollaxis(a, axis, start=0):
    a = _arr(a)
    nd = _ndim(a)
    axis = _axis(axis, nd, "rollaxis")
    start = int(start)
    if start < 0:
        start += nd
    if not 0 <= start < nd + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-nd} <= start < {nd + 1}, "
                                      f"but {start} was passed in")
    if axis < start:
        start -= 1          # the axis leaves its place before it is put back
    perm = [i for i in range(nd) if i != axis]
    perm.insert(start, axis)
    return shape.transpose(a, perm)


def _flip(m, axis=None):
    m = _arr(m)
    axes = _axes(axis, _ndim(m), "flip")
    if not axes:
        return m
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(max(axes) + 1)))


def _fliplr(m):
    if _ndim(_arr(m)) < 2:
        raise ValueError("Input must be >= 2-d.")
    return _flip(m, 1)


def _flipud(m):
    if _ndim(_arr(m)) < 1:
        raise ValueError("Input must be >= 1-d.")
    return _flip(m, 0)


def _rot90(m, k=1, axes=(0, 1)):
    m = _arr(m)
    nd = _ndim(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if not all(-nd <= ax < nd for ax in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return _flip(_flip(m, axes[0]), axes[1])
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    # a quarter turn is a flip of one axis and a swap of the two
    if k == 1:
        return shape.transpose(_flip(m, axes[1]), perm)
    return _flip(shape.transpose(m, perm), axes[1])


# --- triangles ---------------------------------------------------------
def _triangle(fname, lower):
    def tri(m, k=0):
        m = _arr(m)
        size = tuple(_dims.shape(m)[-2:])
        keep = np.tri(*size, k=k if lower else k - 1, dtype=bool)
        if not lower:
            keep = ~keep
        return arith.where(keep, m, np.zeros(1, aval_of(m).dtype))
    tri.__name__ = fname
    return tri


_tril = _triangle("tril", True)
_triu = _triangle("triu", False)


# --- differences -------------------------------------------------------
def _diff(a, n=1, axis=-1, prepend=NO_VALUE, append=NO_VALUE):
    n = int(_static(n, "n", "np.diff"))
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = _arr(a)
    nd = _ndim(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _axis(axis, nd, "diff")
    parts = []
    for extra in (prepend, a, append):
        if extra is NO_VALUE:
            continue
        extra = _arr(extra)
        if _ndim(extra) == 0:
            edge = tuple(_dims.shape(a))
            extra = shape.broadcast_to(extra, edge[:axis] + (1,) + edge[axis + 1:])
        parts.append(extra)
    if len(parts) > 1:
        a = shape.concatenate(*parts, axis=axis)
    step = arith.not_equal if aval_of(a).dtype == np.bool_ else arith.sub
    for _ in range(n):
        a = step(_along(a, axis, slice(1, None)), _along(a, axis, slice(None, -1)))
    return a


def _gradient_axis(f, axis, h, edge_order):
    """The gradient of ``f`` along one axis with uniform spacing ``h``:
    central differences inside, one-sided ones of ``edge_order`` at the ends."""
    n = _dims.shape(f)[axis]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")

    def at(part):
        return _along(f, axis, part)

    inner = arith.mul(arith.sub(at(slice(2, None)), at(slice(None, -2))), 0.5)
    if edge_order == 1:
        first = arith.sub(at(slice(1, 2)), at(slice(0, 1)))
        last = arith.sub(at(slice(-1, None)), at(slice(-2, -1)))
    else:
        first = arith.add(arith.add(arith.mul(at(slice(0, 1)), -1.5),
                                    arith.mul(at(slice(1, 2)), 2.0)),
                          arith.mul(at(slice(2, 3)), -0.5))
        last = arith.add(arith.add(arith.mul(at(slice(-3, -2)), 0.5),
                                   arith.mul(at(slice(-2, -1)), -2.0)),
                         arith.mul(at(slice(-1, None)), 1.5))
    out = shape.concatenate(first, inner, last, axis=axis)
    return out if isinstance(h, (int, float)) and h == 1 else arith.div(out, h)


def _weighted(terms):
    """sum of w * v over the (w, v) pairs."""
    out = None
    for w, v in terms:
        t = arith.mul(w, v)
        out = t if out is None else arith.add(out, t)
    return out


def _gradient_coords(f, axis, coords, edge_order):
    """The gradient along one axis at the points ``coords`` (1-D, uneven
    spacing): second-order differences inside, weighted by the two spacings
    around each point, and one-sided ones of ``edge_order`` at the ends. The
    weights are computed from ``coords`` with primitives, so traced
    coordinates are differentiated too."""
    n = _dims.shape(f)[axis]
    if _ndim(coords) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if _dims.shape(coords)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    nd = _ndim(f)

    def along(v):           # a 1-D weight lined up with ``axis``
        return shape.reshape(v, tuple(-1 if i == axis else 1 for i in range(nd)))

    def at(part):
        return _along(f, axis, part)

    dx = arith.sub(getitem(coords, slice(1, None)), getitem(coords, slice(None, -1)))
    h1, h2 = getitem(dx, slice(None, -1)), getitem(dx, slice(1, None))
    both = arith.add(h1, h2)
    inner = _weighted([
        (along(arith.div(arith.neg(h2), arith.mul(h1, both))), at(slice(None, -2))),
        (along(arith.div(arith.sub(h2, h1), arith.mul(h1, h2))), at(slice(1, -1))),
        (along(arith.div(h1, arith.mul(h2, both))), at(slice(2, None)))])
    if edge_order == 1:
        first = arith.div(arith.sub(at(slice(1, 2)), at(slice(0, 1))), getitem(dx, 0))
        last = arith.div(arith.sub(at(slice(-1, None)), at(slice(-2, -1))), getitem(dx, -1))
    else:
        d1, d2 = getitem(dx, 0), getitem(dx, 1)
        s = arith.add(d1, d2)
        first = _weighted([
            (arith.neg(arith.div(arith.add(arith.mul(d1, 2.0), d2), arith.mul(d1, s))),
             at(slice(0, 1))),
            (arith.div(s, arith.mul(d1, d2)), at(slice(1, 2))),
            (arith.neg(arith.div(d1, arith.mul(d2, s))), at(slice(2, 3)))])
        d1, d2 = getitem(dx, -2), getitem(dx, -1)
        s = arith.add(d1, d2)
        last = _weighted([
            (arith.div(d2, arith.mul(d1, s)), at(slice(-3, -2))),
            (arith.neg(arith.div(s, arith.mul(d1, d2))), at(slice(-2, -1))),
            (arith.div(arith.add(arith.mul(d2, 2.0), d1), arith.mul(d2, s)),
             at(slice(-1, None)))])
    return shape.concatenate(first, inner, last, axis=axis)


def _gradient(f, *varargs, axis=None, edge_order=1):
    f = _arr(f)
    nd = _ndim(f)
    axes = tuple(_axis(a, nd, "gradient") for a in
                 (range(nd) if axis is None else (axis if np.ndim(axis) else (axis,))))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and _ndim(_arr(varargs[0])) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    dtype = aval_of(f).dtype
    if dtype.kind in "biu":            # NumPy differentiates integers in float64
        f, dtype = arith.convert(f, dtype=np.dtype(np.float64)), np.dtype(np.float64)
    outs = []
    for ax, h in zip(axes, spacing):
        h = _arr(h)
        if aval_of(h).dtype.kind in "biu":
            h = arith.convert(h, dtype=np.dtype(np.float64))
        if _ndim(h) == 0:
            g = _gradient_axis(f, ax, h if isinstance(h, TracerBase) else float(h), edge_order)
        elif not isinstance(h, TracerBase) and h.size and np.all(np.diff(h) == h[1] - h[0]):
            # evenly spaced coordinates are one spacing, as NumPy reads them
            g = _gradient_axis(f, ax, float(h[1] - h[0]), edge_order)
        else:
            g = _gradient_coords(f, ax, h, edge_order)
        outs.append(g if aval_of(g).dtype == dtype else arith.convert(g, dtype=dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


# --- cross product -----------------------------------------------------
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = shape.moveaxis(_arr(a), _axis(axisa, _ndim(_arr(a)), "cross"), -1)
    b = shape.moveaxis(_arr(b), _axis(axisb, _ndim(_arr(b)), "cross"), -1)
    la, lb = _dims.shape(a)[-1], _dims.shape(b)[-1]
    if la not in (2, 3) or lb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 "
                         "or 3)")
    if la == 2 or lb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=4)
    ca = [getitem(a, (Ellipsis, i)) for i in range(la)]
    cb = [getitem(b, (Ellipsis, i)) for i in range(lb)]
    z = arith.sub(arith.mul(ca[0], cb[1]), arith.mul(ca[1], cb[0]))
    if la == 2 and lb == 2:
        return z
    if la == 2:         # the missing third component is zero
        x = arith.mul(ca[1], cb[2])
        y = arith.neg(arith.mul(ca[0], cb[2]))
    elif lb == 2:
        x = arith.neg(arith.mul(ca[2], cb[1]))
        y = arith.mul(ca[2], cb[0])
    else:
        x = arith.sub(arith.mul(ca[1], cb[2]), arith.mul(ca[2], cb[1]))
        y = arith.sub(arith.mul(ca[2], cb[0]), arith.mul(ca[0], cb[2]))
    parts = [shape.broadcast_to(p, _dims.broadcast(*map(_dims.shape, (x, y, z))))
             for p in (x, y, z)]
    out = shape.stack(parts, axis=-1)
    return shape.moveaxis(out, -1, _axis(axisc, _ndim(out), "cross"))


# --- splitting ---------------------------------------------------------
def _split_at(ary, bounds, axis):
    return [_along(ary, axis, slice(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _array_split(ary, indices_or_sections, axis=0):
    ary = _arr(ary)
    axis = _axis(axis, _ndim(ary), "array_split")
    n = _dims.shape(ary)[axis]
    points = _static(indices_or_sections, "indices_or_sections", "np.array_split")
    if np.ndim(points):
        return _split_at(ary, [0] + [int(p) for p in points] + [n], axis)
    sections = int(points)
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    each, extra = n // sections, n % sections
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + each + (1 if i < extra else 0))
    return _split_at(ary, bounds, axis)


def _split(ary, indices_or_sections, axis=0):
    ary = _arr(ary)
    points = _static(indices_or_sections, "indices_or_sections", "np.split")
    if np.ndim(points) == 0:
        n = _dims.shape(ary)[_axis(axis, _ndim(ary), "split")]
        if int(points) and n % int(points):
            raise ValueError("array split does not result in an equal division")
    return _array_split(ary, points, axis)


def _hsplit(ary, indices_or_sections):
    nd = _ndim(_arr(ary))
    if nd == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if nd > 1 else 0)


def _vsplit(ary, indices_or_sections):
    if _ndim(_arr(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0)


def _dsplit(ary, indices_or_sections):
    if _ndim(_arr(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2)


# --- at least n dimensions ---------------------------------------------
def _at_least(nd, place):
    """``np.atleast_<nd>d``: ``place(shape)`` is where the new axes of 1 go."""
    def fn(*arys):
        out = []
        for a in arys:
            a = _arr(a)
            s = tuple(_dims.shape(a))
            out.append(a if len(s) >= nd else shape.reshape(a, place(s)))
        return out[0] if len(out) == 1 else tuple(out)
    fn.__name__ = f"atleast_{nd}d"
    return fn


_atleast_2d = _at_least(2, lambda s: (1,) + s + (1,) * (1 - len(s)))
_atleast_3d = _at_least(3, lambda s: (1,) + s + (1,) if len(s) == 1 else s + (1,) * (3 - len(s)))


# --- grids -------------------------------------------------------------
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = []
    for i, x in enumerate(xi):
        place = [1] * nd
        place[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            place[0], place[1] = place[1], place[0]
        out.append(shape.reshape(_arr(x), tuple(place)))
    if not sparse:
        full = _dims.broadcast(*[tuple(_dims.shape(o)) for o in out])
        out = [shape.broadcast_to(o, full) for o in out]
    return tuple(out)


# --- padding -----------------------------------------------------------
# the modes that copy entries of the array: where each place of the padded
# axis reads from is np.pad of the positions themselves
_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pad_widths(pad_width, nd):
    if isinstance(pad_width, dict):
        widths = [(0, 0)] * nd
        for ax, w in pad_width.items():
            widths[_axis(ax, nd, "pad")] = tuple(np.broadcast_to(np.asarray(w), (2,)))
        widths = np.asarray(widths)
    else:
        widths = np.asarray(_static(pad_width, "pad_width", "np.pad"))
        if widths.dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")
        widths = np.broadcast_to(widths, (nd, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    return [(int(lo), int(hi)) for lo, hi in widths]


def _pad_constant(array, widths, values):
    nd = _ndim(array)
    dtype = aval_of(array).dtype
    values = values if isinstance(values, TracerBase) else np.asarray(values)
    if isinstance(values, TracerBase) and _ndim(values) not in (0,):
        refuse("np.pad", "constant_values", "a traced fill must be one scalar")
    pairs = (np.broadcast_to(values, (nd, 2)) if not isinstance(values, TracerBase)
             else [(values, values)] * nd)
    for ax, ((lo, hi), (v_lo, v_hi)) in enumerate(zip(widths, pairs)):
        if not lo and not hi:
            continue
        size = list(_dims.shape(array))
        parts = []
        for width, v in ((lo, v_lo), (hi, v_hi)):
            size[ax] = width
            v = arith.convert(v, dtype=dtype) if aval_of(v).dtype != dtype or \
                aval_of(v).weak else v
            parts.append(shape.broadcast_to(v, tuple(size)))
        # each axis pads the array as the earlier axes left it, so its
        # values fill the corners they share (NumPy's order)
        array = shape.concatenate(*[p for p, w in zip((parts[0], array, parts[1]),
                                                      (lo, 1, hi)) if w], axis=ax)
    return array


def _pad(array, pad_width, mode="constant", **kwargs):
    array = _arr(array)
    nd = _ndim(array)
    widths = _pad_widths(pad_width, nd)
    if mode == "constant":
        extra = set(kwargs) - {"constant_values"}
        if extra:
            raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if mode not in _COPY_MODES:
        refuse("np.pad", "mode", f"mode={mode!r} is not implemented; use one of 'constant', "
               + ", ".join(repr(m) for m in _COPY_MODES))
    allowed = {"reflect_type"} if mode in ("reflect", "symmetric") else set()
    extra = set(kwargs) - allowed
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
    if kwargs.get("reflect_type", "even") != "even":
        refuse("np.pad", "reflect_type", "only reflect_type='even' is implemented")
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            n = _dims.shape(array)[ax]
            array = _along(array, ax, np.pad(np.arange(n), (lo, hi), mode=mode))
    return array


FUNCTIONS = {
    np.cumprod: _cumprod, np.repeat: _repeat, np.tile: _tile, np.kron: _kron,
    np.roll: _roll, np.rollaxis: _rollaxis, np.flip: _flip, np.fliplr: _fliplr,
    np.flipud: _flipud, np.rot90: _rot90, np.tril: _tril, np.triu: _triu, np.diff: _diff,
    np.gradient: _gradient, np.cross: _cross, np.split: _split, np.array_split: _array_split,
    np.hsplit: _hsplit, np.vsplit: _vsplit, np.dsplit: _dsplit,
    np.atleast_2d: _atleast_2d, np.atleast_3d: _atleast_3d, np.meshgrid: _meshgrid,
    np.pad: _pad, **numpy_select.FUNCTIONS,
}
