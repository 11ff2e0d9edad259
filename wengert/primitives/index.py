"""Indexing: ``getitem`` (integers, slices, None, Ellipsis, integer arrays,
boolean masks) and its two linear companions, ``index_add`` (scatter-add, the
transpose of ``getitem``) and ``index_set`` (the functional ``x[i] = v``).

The index is a static param: a tuple of ints, slices, None, Ellipsis and
integer arrays. Boolean masks become integer arrays (``nonzero``) when the
index is normalised, so every index is a fixed gather/scatter pattern.
"""
from __future__ import annotations

import numpy as np

from .core import Linear, Primitive, TracerBase, Zero, bind, register, zero_if_any
from .shape import sum_to_shape
from ..errors import NonDifferentiableInputError
from ..ir import Aval, aval_of


def _concrete_index_part(p):
    if isinstance(p, TracerBase):
        val = getattr(p, "concrete_value", None)
        if val is None or aval_of(p).dtype.kind not in "iub":
            raise NonDifferentiableInputError(
                "an index computed from a differentiated value must be an integer or boolean "
                "array with a known value; index with integers, slices or masks derived from "
                "inputs you do not differentiate")
        p = val
    return p


def normalize_index(idx):
    """A canonical static index: a tuple, booleans turned into integer arrays."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for p in idx:
        p = _concrete_index_part(p)
        if isinstance(p, (list, np.ndarray)) or (isinstance(p, np.generic) and p.dtype.kind == "b"):
            arr = np.asarray(p)
            if arr.dtype.kind == "b":
                out.extend(np.nonzero(arr))
                continue
            if arr.dtype.kind not in "iu":
                raise IndexError(f"arrays used as indices must be integer or boolean, got {arr.dtype}")
            out.append(arr)
        elif isinstance(p, (np.integer,)):
            out.append(int(p))
        else:
            out.append(p)
    return tuple(out)


def _has_arrays(idx):
    return any(isinstance(p, np.ndarray) for p in idx)


def _dummy(aval):
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


# --- getitem -----------------------------------------------------------
def getitem_impl(x, idx):
    return np.asarray(x)[idx]


def getitem_aval(x, idx):
    return Aval(_dummy(x)[idx].shape, x.dtype)


def getitem_jvp(primals, tangents, idx):
    return getitem(primals[0], idx), getitem(tangents[0], idx)


def getitem_transpose(ct, x, idx):
    zeros = np.zeros(x.aval.shape, ct.dtype)
    return (index_add(zeros, ct, idx),)


def getitem_batch(args, batched, idx):
    if _has_arrays(idx) or Ellipsis in idx:
        return NotImplemented
    return getitem(args[0], (slice(None),) + idx)


getitem_p = register(Primitive("getitem", nargs=1, impl=getitem_impl, jvp=getitem_jvp,
                               transpose=getitem_transpose, abstract_eval=getitem_aval,
                               batch=getitem_batch))
getitem_p.zero_rule = zero_if_any(getitem_p)


def getitem(x, idx):
    return bind(getitem_p, x, idx=normalize_index(idx))


# --- index_add (scatter-add) -------------------------------------------
def index_add_impl(x, v, idx):
    out = np.array(x, dtype=np.result_type(x, v), copy=True)
    np.add.at(out, idx, v)
    return out


def index_add_aval(x, v, idx):
    return Aval(x.shape, np.result_type(x.dtype, v.dtype))


def index_add_jvp(primals, tangents, idx):
    return index_add(*primals, idx), index_add(*tangents, idx)


def index_add_transpose(ct, x, v, idx):
    return (ct if isinstance(x, Linear) else None,
            sum_to_shape(getitem(ct, idx), v.aval.shape) if isinstance(v, Linear) else None)


def _instantiate_pair(prim):
    def rule(x, v, idx):
        if isinstance(x, Zero) and isinstance(v, Zero):
            return Zero(prim.abstract_eval(x.aval, v.aval, idx=idx))
        x = np.zeros(x.aval.shape, x.aval.dtype) if isinstance(x, Zero) else x
        v = np.zeros(v.aval.shape, v.aval.dtype) if isinstance(v, Zero) else v
        return bind(prim, x, v, idx=idx)
    return rule


index_add_p = register(Primitive("index_add", nargs=2, impl=index_add_impl, jvp=index_add_jvp,
                                 transpose=index_add_transpose, abstract_eval=index_add_aval))
index_add_p.zero_rule = _instantiate_pair(index_add_p)


def index_add(x, v, idx):
    return bind(index_add_p, x, v, idx=normalize_index(idx))


# --- index_set (functional x[idx] = v) ---------------------------------
def index_set_impl(x, v, idx):
    out = np.array(x, dtype=np.result_type(x, v), copy=True)
    out[idx] = v
    return out


def index_set_jvp(primals, tangents, idx):
    return index_set(*primals, idx), index_set(*tangents, idx)


def index_set_transpose(ct, x, v, idx):
    # overwritten places send nothing back to x; v receives what they got
    return (index_set(ct, np.zeros((), ct.dtype), idx) if isinstance(x, Linear) else None,
            sum_to_shape(getitem(ct, idx), v.aval.shape) if isinstance(v, Linear) else None)


index_set_p = register(Primitive("index_set", nargs=2, impl=index_set_impl, jvp=index_set_jvp,
                                 transpose=index_set_transpose, abstract_eval=index_add_aval))
index_set_p.zero_rule = _instantiate_pair(index_set_p)


def index_set(x, v, idx):
    return bind(index_set_p, x, v, idx=normalize_index(idx))


class IndexUpdater:
    """``wg.at(x)[idx].set(v)`` / ``.add(v)``: functional updates, as JAX's
    ``x.at[idx].set(v)``; the caller's array is never written."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx=None):
        self.x, self.idx = x, idx

    def __getitem__(self, idx):
        return IndexUpdater(self.x, idx)

    def set(self, v):
        return index_set(self.x, v, self.idx)

    def add(self, v):
        return index_add(self.x, v, self.idx)
