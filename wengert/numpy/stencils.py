"""NumPy's differences and padding on traced values (part of the
``numpy.shapes`` family, which lists them in its table): ``diff``,
``gradient`` (even spacing or coordinate arrays, edge orders 1 and 2) and
``pad`` (constant, edge, reflect, symmetric, wrap).

Composites of slices, ``concatenate`` and arithmetic; ``pad``'s copying
modes gather along each axis at the positions ``np.pad`` itself gives for
``arange(n)``, so the padded entries are NumPy's by construction and the
transpose adds each copy's cotangent back to its source.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import arith, index, ordering, shape
from .arrayargs import along, as_operand, axis_in, ndim, static
from ..core.primitive import TracerBase
from ..primitives.index import getitem
from .arrayargs import NO_VALUE, refuse
from ..core import dims as _dims
from ..core.ir import aval_of

__all__ = ["FUNCTIONS"]


# --- differences -------------------------------------------------------
def _diff(a, n=1, axis=-1, prepend=NO_VALUE, append=NO_VALUE):
    n = int(static(n, "n", "np.diff"))
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = as_operand(a)
    nd = ndim(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = axis_in(axis, nd, "diff")
    parts = []
    for extra in (prepend, a, append):
        if extra is NO_VALUE:
            continue
        extra = as_operand(extra)
        if ndim(extra) == 0:
            edge = tuple(_dims.shape(a))
            extra = shape.broadcast_to(extra, edge[:axis] + (1,) + edge[axis + 1:])
        parts.append(extra)
    if len(parts) > 1:
        a = index.concatenate(*parts, axis=axis)
    step = ordering.not_equal if aval_of(a).dtype == np.bool_ else arith.sub
    for _ in range(n):
        a = step(along(a, axis, slice(1, None)), along(a, axis, slice(None, -1)))
    return a


def _gradient_axis(f, axis, h, edge_order):
    """The gradient of ``f`` along one axis with uniform spacing ``h``:
    central differences inside, one-sided ones of ``edge_order`` at the ends."""
    n = _dims.shape(f)[axis]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")

    def at(part):
        return along(f, axis, part)

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
    out = index.concatenate(first, inner, last, axis=axis)
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
    if ndim(coords) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if _dims.shape(coords)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    nd = ndim(f)

    def lined_up(v):        # a 1-D weight along ``axis``
        return shape.reshape(v, tuple(-1 if i == axis else 1 for i in range(nd)))

    def at(part):
        return along(f, axis, part)

    dx = arith.sub(getitem(coords, slice(1, None)), getitem(coords, slice(None, -1)))
    h1, h2 = getitem(dx, slice(None, -1)), getitem(dx, slice(1, None))
    both = arith.add(h1, h2)
    inner = _weighted([
        (lined_up(arith.div(arith.neg(h2), arith.mul(h1, both))), at(slice(None, -2))),
        (lined_up(arith.div(arith.sub(h2, h1), arith.mul(h1, h2))), at(slice(1, -1))),
        (lined_up(arith.div(h1, arith.mul(h2, both))), at(slice(2, None)))])
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
    return index.concatenate(first, inner, last, axis=axis)


def _gradient(f, *varargs, axis=None, edge_order=1):
    f = as_operand(f)
    nd = ndim(f)
    axes = tuple(axis_in(a, nd, "gradient") for a in
                 (range(nd) if axis is None else (axis if np.ndim(axis) else (axis,))))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and ndim(as_operand(varargs[0])) == 0:
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
        h = as_operand(h)
        if aval_of(h).dtype.kind in "biu":
            h = arith.convert(h, dtype=np.dtype(np.float64))
        if ndim(h) == 0:
            g = _gradient_axis(f, ax, h if isinstance(h, TracerBase) else float(h), edge_order)
        elif not isinstance(h, TracerBase) and h.size and np.all(np.diff(h) == h[1] - h[0]):
            # evenly spaced coordinates are one spacing, as NumPy reads them
            g = _gradient_axis(f, ax, float(h[1] - h[0]), edge_order)
        else:
            g = _gradient_coords(f, ax, h, edge_order)
        outs.append(g if aval_of(g).dtype == dtype else arith.convert(g, dtype=dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


# --- padding -----------------------------------------------------------
# the modes that copy entries of the array: where each place of the padded
# axis reads from is np.pad of the positions themselves
_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pad_widths(pad_width, nd):
    if isinstance(pad_width, dict):
        widths = [(0, 0)] * nd
        for ax, w in pad_width.items():
            widths[axis_in(ax, nd, "pad")] = tuple(np.broadcast_to(np.asarray(w), (2,)))
        widths = np.asarray(widths)
    else:
        widths = np.asarray(static(pad_width, "pad_width", "np.pad"))
        if widths.dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")
        widths = np.broadcast_to(widths, (nd, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    return [(int(lo), int(hi)) for lo, hi in widths]


def _pad_constant(array, widths, values):
    nd = ndim(array)
    dtype = aval_of(array).dtype
    values = values if isinstance(values, TracerBase) else np.asarray(values)
    if isinstance(values, TracerBase) and ndim(values) not in (0,):
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
        array = index.concatenate(*[p for p, w in zip((parts[0], array, parts[1]),
                                                      (lo, 1, hi)) if w], axis=ax)
    return array


def _pad(array, pad_width, mode="constant", **kwargs):
    array = as_operand(array)
    nd = ndim(array)
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
    odd = kwargs.get("reflect_type", "even")
    if odd not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {odd!r}")
    for ax, (lo, hi) in enumerate(widths):
        if lo or hi:
            n = _dims.shape(array)[ax]
            if odd == "odd":
                array = _pad_odd(array, ax, int(n), lo, hi, mode)
            else:
                array = along(array, ax, np.pad(np.arange(n), (lo, hi), mode=mode))
    return array


def _pad_odd(array, ax, n, lo, hi, mode):
    """``reflect_type='odd'`` along ``ax``: each padded entry is ``2 * edge - mirrored``
    (again and again where the padding is wider than the array), a linear map of the axis
    which ``np.pad`` of the identity gives exactly (its entries are small integers). Each
    output entry is the sum of its few terms, gathered: an entry outside them (a NaN) never
    reaches it, as it would through a product with the whole map."""
    dtype = aval_of(array).dtype
    m = np.pad(np.eye(n), ((lo, hi), (0, 0)), mode=mode, reflect_type="odd")
    terms = int((m != 0).sum(axis=1).max())
    out = None
    for t in range(terms):
        # the t-th nonzero of each row (a row with fewer takes coefficient 0 of column 0)
        cols = np.array([np.flatnonzero(row)[t] if np.count_nonzero(row) > t else 0
                         for row in m])
        coef = m[np.arange(len(m)), cols] * np.array([np.count_nonzero(row) > t for row in m])
        shp = [1] * ndim(array)
        shp[ax] = len(m)
        term = arith.mul(along(array, ax, cols), coef.astype(dtype).reshape(shp))
        out = term if out is None else arith.add(out, term)
    return out


FUNCTIONS = {np.diff: _diff, np.gradient: _gradient, np.pad: _pad}
