"""NumPy's shape and arrangement functions on traced values (the library
table's ``FUNCTIONS``, see ``library``): running products, repeating,
tiling, rolling, flipping, triangles, cross products, splitting, grids.
The family's table also takes in ``numpy.stencils`` (diff, gradient, pad)
and ``numpy.select`` (sorting, gathering, selecting).

Each is a composite of the shape and index primitives (``getitem`` with
slices or index arrays, ``concatenate``, ``reshape``, ``broadcast_to``,
``transpose``, ``where``), so its derivatives of every order are theirs. The
exceptions are primitives of their own: ``cumprod`` (``scan``: a running
product whose derivative never divides by the operand), and the index arrays
computed from values (``gather``: ``argsort``, ``partition_index``), which
run when the program runs.

Contract, as ``numpy.functions``: every wrapper takes NumPy's exact
signature; what shapes an output (repeat counts, shifts, split points, pad
widths) must be a Python value, never a traced one, and a parameter value
that is not implemented raises ``NoDerivativeRule``.

Layer: numpy.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..primitives import arith, index, shape
from . import select as numpy_select, stencils as numpy_stencils
from ..primitives import selection
from .arrayargs import along, as_operand, axes_in, axis_in, flat, ndim, static
from ..primitives.index import getitem
from .arrayargs import as_dtype, no_out
from ..primitives.scan import cumprod
from ..core import dims as _dims
from ..core.ir import aval_of

__all__ = ["FUNCTIONS"]


# --- running product ---------------------------------------------------
def _cumprod(a, axis=None, dtype=None, out=None):
    no_out(out, "np.cumprod")
    a = as_dtype(as_operand(a), dtype)
    if axis is None:
        a, axis = flat(a), 0
    return cumprod(a, axis_in(axis, max(ndim(a), 1), "cumprod"))


# --- repeating and tiling ----------------------------------------------
def _repeat(a, repeats, axis=None):
    a = as_operand(a)
    repeats = np.asarray(static(repeats, "repeats", "np.repeat"))
    if axis is None:
        a, axis = flat(a), 0
    axis = axis_in(axis, ndim(a), "repeat")
    size = tuple(_dims.shape(a))
    if repeats.ndim == 0 and repeats >= 0:
        # each entry r times: (.., n, ..) -> (.., n, r, ..) -> (.., n r, ..), whose
        # transpose is a sum over the copies
        r = int(repeats)
        grown = shape.broadcast_to(shape.expand_dims(a, axis + 1),
                                   size[:axis + 1] + (r,) + size[axis + 1:])
        return shape.reshape(grown, size[:axis] + (size[axis] * r,) + size[axis + 1:])
    # which entry each place of the result copies (NumPy checks the counts)
    return along(a, axis, np.repeat(np.arange(size[axis]), repeats))


def _tile(A, reps):
    A = as_operand(A)
    reps = tuple(int(r) for r in np.ravel(static(reps, "reps", "np.tile")))
    nd = max(len(reps), ndim(A))
    size = (1,) * (nd - ndim(A)) + tuple(_dims.shape(A))
    reps = (1,) * (nd - len(reps)) + reps
    # (s0, s1) -> (1, s0, 1, s1) -> (r0, s0, r1, s1) -> (r0 s0, r1 s1)
    pairs = [d for s in size for d in (1, s)]
    grown = shape.broadcast_to(shape.reshape(A, pairs), [d for r, s in zip(reps, size)
                                                         for d in (r, s)])
    return shape.reshape(grown, tuple(r * s for r, s in zip(reps, size)))


def _kron(a, b):
    a, b = as_operand(a), as_operand(b)
    nd = max(ndim(a), ndim(b))
    sa = (1,) * (nd - ndim(a)) + tuple(_dims.shape(a))
    sb = (1,) * (nd - ndim(b)) + tuple(_dims.shape(b))
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
    return index.concatenate(along(x, axis, slice(n - k, None)),
                             along(x, axis, slice(0, n - k)), axis=axis)


def _roll(a, shift, axis=None):
    a = as_operand(a)
    shift = static(shift, "shift", "np.roll")
    if axis is None:
        return shape.reshape(_roll(flat(a), shift, 0), _dims.shape(a))
    pairs = np.broadcast(shift, axis)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    nd = ndim(a)
    total = {}
    for k, ax in pairs:
        ax = axis_in(ax, nd, "roll")
        total[ax] = total.get(ax, 0) + int(k)
    for ax, k in sorted(total.items()):
        a = _roll_axis(a, ax, k)
    return a


def _rollaxis(a, axis, start=0):
    a = as_operand(a)
    nd = ndim(a)
    axis = axis_in(axis, nd, "rollaxis")
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
    m = as_operand(m)
    axes = axes_in(axis, ndim(m), "flip")
    if not axes:
        return m
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(max(axes) + 1)))


def _fliplr(m):
    if ndim(as_operand(m)) < 2:
        raise ValueError("Input must be >= 2-d.")
    return _flip(m, 1)


def _flipud(m):
    if ndim(as_operand(m)) < 1:
        raise ValueError("Input must be >= 1-d.")
    return _flip(m, 0)


def _rot90(m, k=1, axes=(0, 1)):
    m = as_operand(m)
    nd = ndim(m)
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
        m = as_operand(m)
        size = tuple(_dims.shape(m)[-2:])
        keep = np.tri(*size, k=k if lower else k - 1, dtype=bool)
        if not lower:
            keep = ~keep
        return selection.where(keep, m, np.zeros(1, aval_of(m).dtype))
    tri.__name__ = fname
    return tri


_tril = _triangle("tril", True)
_triu = _triangle("triu", False)

# --- cross product -----------------------------------------------------
def _cross_takes_2d():
    """Whether the installed NumPy still takes 2-vectors in np.cross
    (deprecated in 2.0, removed in 2.5)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.cross(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    except ValueError:
        return False
    return True


_CROSS_2D = _cross_takes_2d()


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = shape.moveaxis(as_operand(a), axis_in(axisa, ndim(as_operand(a)), "cross"), -1)
    b = shape.moveaxis(as_operand(b), axis_in(axisb, ndim(as_operand(b)), "cross"), -1)
    la, lb = _dims.shape(a)[-1], _dims.shape(b)[-1]
    if la not in (2, 3) or lb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 "
                         "or 3)")
    if (la == 2 or lb == 2) and not _CROSS_2D:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {la} and {lb} dimensional instead.")
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
    out = index.stack(parts, axis=-1)
    return shape.moveaxis(out, -1, axis_in(axisc, ndim(out), "cross"))


# --- splitting ---------------------------------------------------------
def _split_at(ary, bounds, axis):
    return [along(ary, axis, slice(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _array_split(ary, indices_or_sections, axis=0):
    ary = as_operand(ary)
    axis = axis_in(axis, ndim(ary), "array_split")
    n = _dims.shape(ary)[axis]
    points = static(indices_or_sections, "indices_or_sections", "np.array_split")
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
    ary = as_operand(ary)
    points = static(indices_or_sections, "indices_or_sections", "np.split")
    if np.ndim(points) == 0:
        n = _dims.shape(ary)[axis_in(axis, ndim(ary), "split")]
        if int(points) and n % int(points):
            raise ValueError("array split does not result in an equal division")
    return _array_split(ary, points, axis)


def _hsplit(ary, indices_or_sections):
    nd = ndim(as_operand(ary))
    if nd == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if nd > 1 else 0)


def _vsplit(ary, indices_or_sections):
    if ndim(as_operand(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0)


def _dsplit(ary, indices_or_sections):
    if ndim(as_operand(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2)


# --- at least n dimensions ---------------------------------------------
def _at_least(nd, place):
    """``np.atleast_<nd>d``: ``place(shape)`` is where the new axes of 1 go."""
    def fn(*arys):
        out = []
        for a in arys:
            a = as_operand(a)
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
        out.append(shape.reshape(as_operand(x), tuple(place)))
    if not sparse:
        full = _dims.broadcast(*[tuple(_dims.shape(o)) for o in out])
        out = [shape.broadcast_to(o, full) for o in out]
    return tuple(out)

FUNCTIONS = {
    np.cumprod: _cumprod, np.repeat: _repeat, np.tile: _tile, np.kron: _kron,
    np.roll: _roll, np.rollaxis: _rollaxis, np.flip: _flip, np.fliplr: _fliplr,
    np.flipud: _flipud, np.rot90: _rot90, np.tril: _tril, np.triu: _triu, np.cross: _cross,
    np.split: _split, np.array_split: _array_split, np.hsplit: _hsplit, np.vsplit: _vsplit,
    np.dsplit: _dsplit, np.atleast_2d: _atleast_2d, np.atleast_3d: _atleast_3d,
    np.meshgrid: _meshgrid,
    # the family's other modules
    **numpy_stencils.FUNCTIONS, **numpy_select.FUNCTIONS,
}
