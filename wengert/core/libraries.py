"""The array operations NumPy's protocols do not carry to every array library, done in a
form each library runs: a gather at index arrays (``getitem``), a scatter-add (``add_at``,
``np.add.at``), a store (``set_at``) and an ``argsort``, on arrays of another library
(``atoms.is_duck_array``); and which rows would compute a Dask array (``own_numpy``), run as
one task of its graph instead (``task``).

NumPy's arrays never come here (the callers keep NumPy's own code). A library that takes
NumPy's index arrays as its own (CuPy, through ``like=``) gets them as its arrays and runs
the NumPy function itself. Dask, whose arrays are task graphs, runs none of the three as
NumPy spells them: no ``argsort``, no index of two index arrays or more ("nd fancy
indexing"), no ``np.add.at``. For Dask, then:

- ``argsort`` (and ``np.partition``'s positions: ``along``) along an axis is NumPy's on each
  block, the axis rechunked into one chunk first (a block then holds whole rows along it);
- a gather or a scatter-add in the pattern of ``take_along_axis`` (what a sort's derivative
  and its transpose are: one index array on ``axis``, the other axes indexed by their
  positions) is NumPy's on each block, likewise;
- a gather Dask indexes itself (at most one index array, of one dimension) is Dask's;
- a scatter-add at rows (``np.add.at(out, rows, v)``, the transpose of ``x[rows]``) is one
  task per chunk of ``out``'s rows, adding the rows of ``v`` that fall in it;
- any other gather or scatter-add is one task of the graph (``dask.delayed``): still lazy,
  computed only at ``.compute()``, but on the whole array at once, in one worker's memory;
  so is a row whose impl is NumPy code of wengert's own (``pass_rules.DefinedCall``: a
  linear recurrence, ``erf``, a matrix function), which would compute a Dask array (``task``).

On a library that computes at once (CuPy), such NumPy code runs as it is where it was written
for any library (``DefinedCall.any_library``: only functions that hand the arrays to their
own library, no ``np.asarray``); code that would copy the arrays to NumPy (``numpy_only``: the
rest of wengert's own, SciPy's functions other than ufuncs) is refused with a typed error
naming the user's line (``refuse_numpy_only``), never run on a copy.

Layer: core.
"""
from __future__ import annotations

import functools

import numpy as np

from .atoms import aval_of, is_duck_array
from .errors import ConcretizationError, NoDerivativeRule, user_location

__all__ = ["library_index", "foreign", "getitem", "add_at", "set_at", "along", "argsort", "task",
           "row_task", "own_numpy", "numpy_only", "refuse_numpy_only", "dask_lacks", "lazy"]


def _is_dask(x):
    return type(x).__module__.split(".")[0] == "dask"


def library_index(idx, like):
    """``idx`` (a tuple of ints, slices, None, Ellipsis and index arrays) with its NumPy index
    arrays as arrays of the library of ``like`` (CuPy refuses NumPy's as operands); Dask's
    takes NumPy's as they are."""
    if _is_dask(like):
        return idx
    return tuple(np.asarray(p, like=like) if type(p) is np.ndarray and p.ndim else p
                 for p in idx)


def _arrays(idx):
    """The index arrays of ``idx``: NumPy's of one axis or more, another library's of any."""
    return [p for p in idx if type(p) is np.ndarray and p.ndim or is_duck_array(p)]


def _along_axis(idx, shape):
    """The axis of ``idx`` when it is ``take_along_axis``'s pattern on an array of ``shape``
    (``numpy.select``'s ``along_axis``): one index array of its lengths but on that axis, every
    other axis ``d`` indexed by ``arange(n).reshape(1, .., n, .., 1)``; else None (an index
    array that broadcasts along another axis too: the general path)."""
    axis = _pattern_axis(idx, len(shape))
    if axis is None or any(n != shape[d] for d, n in enumerate(idx[axis].shape) if d != axis):
        return None
    return axis


def _pattern_axis(idx, ndim):
    if len(idx) != ndim or ndim == 0:
        return None
    axis = None
    for d, p in enumerate(idx):
        shape = getattr(p, "shape", None)
        if shape is None or len(shape) != ndim:
            return None
        positions = type(p) is np.ndarray and all(n == 1 for k, n in enumerate(shape) if k != d) \
            and np.array_equal(p.reshape(-1), np.arange(shape[d]))
        if not positions:
            if axis is not None:
                return None
            axis = d
    return axis


def _along_blocks(x, others, axis):
    """``x`` and the arrays ``others`` (Dask or NumPy, ``x``'s lengths but on ``axis``) as Dask
    arrays chunked alike, ``axis`` in one chunk, the other axes as the first Dask array of
    ``others`` has them (a sort's positions: a scatter-add's fresh zeros are one chunk), else
    as ``x`` has them."""
    import dask.array as da
    like = next((o for o in others if _is_dask(o)), x)
    chunks = tuple(-1 if d == axis else c for d, c in enumerate(like.chunks))
    return x.rechunk(chunks), [(o if _is_dask(o) else da.from_array(np.asarray(o))).rechunk(
        chunks) for o in others]


def _positions(shape, index, axis):
    return tuple(index if d == axis else
                 np.arange(n).reshape([-1 if k == d else 1 for k in range(len(shape))])
                 for d, n in enumerate(shape))


def _gathered(block, index, axis):
    return block[_positions(index.shape, index, axis)]


def _added(block, index, v, axis):
    out = block.copy()
    np.add.at(out, _positions(index.shape, index, axis), v)
    return out


def _getitem_numpy(x, idx):
    return np.asarray(x)[idx]


def _add_at_numpy(out, idx, v):
    out = np.array(out, copy=True)
    np.add.at(out, idx, v)
    return out


def _one_task(fn, like, shape, dtype, *args):
    """``fn(*args)`` as one task of a Dask graph (Dask arrays among ``args`` computed as its
    inputs, when the graph is), a Dask array of ``shape`` chunked as ``like`` where it has
    that shape."""
    import dask
    import dask.array as da
    out = da.from_delayed(dask.delayed(fn, pure=True)(*args), shape, dtype)
    return out.rechunk(like.chunks) if tuple(like.shape) == tuple(shape) else out


def _shape_of(x, idx):
    dummy = np.broadcast_to(np.zeros((), x.dtype), tuple(x.shape))
    return dummy[tuple(np.zeros(p.shape, np.intp) if is_duck_array(p) else p for p in idx)].shape


def foreign(x, idx):
    """Whether ``x`` or a part of the index ``idx`` is an array of another library (an index
    array from ``argsort`` of a Dask array gathers a NumPy constant)."""
    return is_duck_array(x) or any(is_duck_array(p) for p in
                                   (idx if type(idx) is tuple else (idx,)))


def _library_of(arrays):
    return next(a for a in arrays if is_duck_array(a))


def getitem(x, idx):
    """``x[idx]`` where ``x`` or an index array of ``idx`` is an array of another library:
    an array of that library."""
    idx = idx if type(idx) is tuple else (idx,)
    like = _library_of((x,) + idx)
    if not _is_dask(like):
        return np.asarray(x, like=like)[library_index(idx, like)]
    x = _as_dask(x)
    arrays = _arrays(idx)
    if len(arrays) <= 1 and all(np.ndim(p) <= 1 for p in arrays):
        return x[idx]                                   # Dask's own indexing
    axis = _along_axis(idx, tuple(x.shape))
    if axis is not None:
        x, (index,) = _along_blocks(x, [idx[axis]], axis)
        return x.map_blocks(_gathered, index, axis=axis, dtype=x.dtype, chunks=index.chunks)
    return _one_task(_getitem_numpy, x, _shape_of(x, idx), x.dtype, x, idx)


def add_at(out, idx, v):
    """``np.add.at(out, idx, v)`` where ``out``, ``v`` or an index array of ``idx`` is an
    array of another library: ``out`` itself, added to, or a new array of that library (Dask's:
    a new one always, NumPy's ``out`` made one first)."""
    idx = idx if type(idx) is tuple else (idx,)
    like = _library_of((out, v) + idx)
    if not _is_dask(like):
        out, v = (a if is_duck_array(a) or not np.ndim(a) else np.asarray(a, like=like)
                  for a in (out, v))
        np.add.at(out, library_index(idx, like), v)
        return out
    if not _arrays(idx):                                # Dask's own: x[1:3, i] += v
        out = _as_dask(out)
        out[idx] += v
        return out
    rows = idx[0]
    if type(rows) is np.ndarray and rows.ndim == 1 and rows.dtype.kind in "iu" \
            and all(p == slice(None) for p in idx[1:]) \
            and np.shape(v) == rows.shape + tuple(np.shape(out))[1:]:
        return _add_rows(_as_dask(out), rows, v)
    axis = _along_axis(idx, tuple(np.shape(out)))
    if axis is not None and np.shape(v) == tuple(idx[axis].shape):
        base, (index, value) = _along_blocks(_as_dask(out), [idx[axis], v], axis)
        return base.map_blocks(_added, index, value, axis=axis, dtype=base.dtype)
    return _one_task(_add_at_numpy, _as_dask(out), tuple(np.shape(out)), out.dtype, out, idx, v)


def _set_at_numpy(out, idx, v):
    out = np.array(out, copy=True)
    out[idx] = v
    return out


def set_at(out, idx, v):
    """``out[idx] = v`` where ``out``, ``v`` or an index of ``idx`` is an array of another
    library: ``out`` itself, set, or a new array of that library (at a Dask array's position,
    an ``argmax``, where Dask stores at none: one task)."""
    idx = idx if type(idx) is tuple else (idx,)
    like = _library_of((out, v) + idx)
    if not _is_dask(like):
        out = out if is_duck_array(out) else np.asarray(out, like=like)
        out[library_index(idx, like)] = v
        return out
    if not any(is_duck_array(p) for p in idx):
        stored = _as_dask(out).copy()
        try:
            stored[idx] = v                             # Dask's own: x[i] = v, x[rows] = v
            return stored
        except NotImplementedError:                     # (two index arrays: not Dask's)
            pass
    return _one_task(_set_at_numpy, _as_dask(out), tuple(np.shape(out)), out.dtype, out, idx, v)


def _add_rows(out, rows, v):
    """``np.add.at(out, rows, v)`` for ``rows`` a NumPy index of ``out``'s first axis (the
    transpose of ``x[rows]``): each chunk of ``out``'s rows, one task, adds the rows of ``v``
    whose position falls in it (picked by Dask's own indexing); a chunk none falls in is
    ``out``'s as it is. An ``out`` of one chunk (the zeros a transpose adds into) is chunked
    as ``v``'s rows first."""
    import dask
    import dask.array as da
    rows = np.where(rows < 0, rows + out.shape[0], rows)
    if out.numblocks[0] == 1 and _is_dask(v):       # fresh zeros, one chunk: as v's rows
        out = out.rechunk({0: max(v.chunks[0])})
    parts, start = [], 0
    for n in out.chunks[0]:
        block = out[start:start + n]
        hit = np.nonzero((rows >= start) & (rows < start + n))[0]
        if hit.size:
            task = dask.delayed(_add_at_numpy, pure=True)(block, (rows[hit] - start,), v[hit])
            block = da.from_delayed(task, block.shape, out.dtype)
        parts.append(block)
        start += n
    return da.concatenate(parts, axis=0).rechunk(out.chunks)


def _as_dask(x):
    import dask.array as da
    return x if _is_dask(x) else da.from_array(np.asarray(x))


def along(fn, x, axis, **params):
    """``fn(x, axis=axis, **params)``, an integer array of ``x``'s shape computed along
    ``axis`` alone (``np.argsort``, ``primitives.gather.partition_index_impl``),
    for ``x`` an array of
    another library: on Dask, ``fn`` of each block, ``axis`` rechunked into one chunk."""
    if not _is_dask(x):
        return fn(x, axis=axis, **params)
    return x.rechunk({axis: -1}).map_blocks(fn, axis=axis, **params, dtype=np.intp)


def argsort(x, axis, kind=None):
    """``np.argsort(x, axis, kind)`` for ``x`` an array of another library (``axis`` in
    range)."""
    return along(np.argsort, x, axis, kind=kind)


def task(fn, avals, multiple, *args, **params):
    """``fn(*args, **params)``, NumPy code of wengert's own (a ``DefinedCall`` row's impl,
    which would compute a Dask array it is given), as one task of a Dask graph: Dask arrays
    of ``avals`` (``(shape, dtype)`` pairs, one per result; ``multiple``: a tuple of them)."""
    import dask
    import dask.array as da
    out = dask.delayed(fn, pure=True, nout=len(avals) if multiple else None)(*args, **params)
    if not multiple:
        return da.from_delayed(out, *avals[0])
    return tuple(da.from_delayed(o, shape, dtype) for o, (shape, dtype) in zip(out, avals))


def row_task(prim, args, params):
    """The row ``prim`` of the operands ``args`` (a Dask array among them), its impl NumPy
    code of its own (``DefinedCall.own_numpy``), as one task (``task``): the trace engine's
    path, as the generated code's."""
    avals = prim.abstract_eval(*[aval_of(a) for a in args], **params)
    avals = avals if prim.multiple_results else (avals,)
    if any(d is None for a in avals for d in a.shape):
        raise ConcretizationError(
            f"{user_location()}: the length of {prim.name}'s result is known only from the "
            "values of a Dask array (computed only at .compute()); the derivative cannot stay "
            "lazy. Compute the input first and differentiate on its NumPy array")
    return task(prim.impl, [(a.shape, a.dtype) for a in avals], prim.multiple_results,
                *args, **params)


def own_numpy(prim):
    """Whether the row ``prim`` computes a Dask array it is given (so runs as one task on one,
    ``row_task``): its emit rule says its impl is NumPy code of wengert's own
    (``pass_rules.DefinedCall``), or its impl is a function of NumPy's that Dask lacks
    (``np.linalg.det``: Dask computes the array and calls NumPy's) or of SciPy's (not a ufunc)."""
    return getattr(prim.emit, "own_numpy", False) or dask_lacks(prim.impl)


def numpy_only(prim):
    """Whether the row ``prim``'s impl would copy an array of another library (CuPy's) to
    NumPy: NumPy code of wengert's own not written for any library (its emit rule's
    ``any_library`` false), or a SciPy function that is not a ufunc (SciPy converts its
    operands with ``np.asarray``)."""
    rule = prim.emit
    if getattr(rule, "own_numpy", False):
        return not getattr(rule, "any_library", False)
    module = getattr(prim.impl, "__module__", None) or ""
    return module.split(".")[0] == "scipy" and not isinstance(prim.impl, np.ufunc)


def refuse_numpy_only(prim, x, where):
    """Raise for the row ``prim`` (``numpy_only``) on an array of another library that
    computes at once (CuPy): ``x``, or None where only its code is at hand; at the user's
    line ``where``."""
    what = ("an array of another library" if x is None
            else f"the {type(x).__module__.split('.')[0]} array")
    raise NoDerivativeRule(
        f"{where}: the derivative needs {prim.name}, which wengert computes with NumPy "
        f"(or SciPy) code that would copy {what} to NumPy; the derivative "
        "never converts another library's arrays. Differentiate on NumPy arrays here "
        "(the array's .get() on CuPy), or write this step with NumPy functions your "
        "library implements")


@functools.lru_cache(maxsize=None)
def dask_lacks(fn):
    """Whether ``fn``, a function of NumPy's or SciPy's, has no Dask counterpart of its name
    in ``dask.array`` (where Dask's ``__array_function__`` looks for one) that takes any
    chunks; False for anything else, and for ufuncs, which Dask applies per block. A matrix
    function of ``np.linalg`` counts as lacking: Dask's need chunks of their own."""
    module = getattr(fn, "__module__", None) or ""
    top = module.split(".")[0]
    if top not in ("numpy", "scipy") or isinstance(fn, np.ufunc):
        return False
    if top == "scipy" or module == "numpy.linalg":
        return True     # (Dask's linalg needs its own chunks: square blocks, tall-and-skinny)
    import dask.array
    place = dask.array
    for part in module.split(".")[1:] + [getattr(fn, "__name__", "")]:
        place = getattr(place, part, None)
        if place is None:
            return True
    return False


def lazy(args):
    """Whether an array of ``args`` is Dask's (computed only when asked)."""
    return any(_is_dask(a) for a in args)
