"""``np.piecewise`` on traced values (a NumPy family of its own: it runs the
user's functions, so it stages them, and sits above the recorder).

``piecewise`` gives each function just the entries of its piece where the
conditions' values are known while staging (the trace engine, or masks
that are not traced), as NumPy does. Where they are known only when the
code runs (the source engine, conditions computed from the inputs), each
function is applied to the whole array with the entries off its piece
replaced by one on it, and the results selected: this is NumPy's result for
elementwise functions, which NumPy's documentation asks for, but not for a
function that mixes entries (``lambda v: v - v.mean()``), which is refused.

Layer: numpy.
"""
from __future__ import annotations

import numpy as np

from ..primitives import ordering, shape
from ..primitives import selection
from .arrayargs import as_operand, ndim
from ..core.primitive import TracerBase
from ..primitives.gather import piece_point
from ..primitives.index import getitem
from ..primitives.scatter import index_set
from .select import cast_to
from ..core import dims as _dims
from ..core.errors import NoDerivativeRule, user_location
from ..core.ir import Aval, Var, aval_of
from ..core.staging import stage

__all__ = ["FUNCTIONS"]


# primitives that act entry by entry: a function of them alone gives on all
# entries what it gives on a subset (NumPy's piecewise calls it on x[cond])
_ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "neg", "pow", "abs", "convert", "where", "remainder",
    "floor_divide", "round", "erf", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "real", "imag", "conj", "zeros_like", "ones_like"})


def _is_elementwise(prim):
    # a ufunc without a core signature is elementwise; a gufunc (matmul,
    # vecdot) is not, whatever its name
    impl = prim.impl
    return (prim.name in _ELEMENTWISE
            or isinstance(impl, np.ufunc) and impl.signature is None
            or getattr(impl, "__module__", "").endswith("primitives.special"))


def _check_elementwise(func, av, args, kw):
    """``func`` of piecewise, where the pieces are known only at run time,
    is applied to every entry: right only if it acts entry by entry (NumPy
    applies it to ``x[cond]``: ``lambda v: v - v.mean()`` differs). Staged
    once on an abstract ``x``, its equations must all be elementwise, and
    whatever it combines with x a scalar; else a typed refusal."""
    refusal = NoDerivativeRule(
        f"{user_location()}: np.piecewise with conditions computed from traced values calls "
        f"{getattr(func, '__name__', 'a function')} on every entry, which gives NumPy's value "
        "only for a function that acts entry by entry (arithmetic and elementwise NumPy "
        "functions of its argument and scalars); write the pieces with np.where, or use "
        "engine='trace', where the conditions are known")
    if any(isinstance(a, TracerBase) for a in (*args, *kw.values())):
        raise refusal
    try:
        prog = stage(lambda v: [func(v, *args, **kw)], [Aval(tuple(av.shape), av.dtype)])
    except Exception:           # noqa: BLE001 (any failure to stage it: not provably elementwise)
        raise refusal from None
    for eqn in prog.eqns:
        if not _is_elementwise(eqn.prim) or any(
                not isinstance(a, Var) and np.size(getattr(a, "val", 0)) != 1
                for a in eqn.inputs):
            raise refusal


def _piecewise(x, condlist, funclist, *args, **kw):
    x = as_operand(x)
    n_funcs = len(funclist)
    if isinstance(condlist, (list, tuple)):
        # a list of Python booleans is one condition (NumPy's reading)
        many = isinstance(condlist[0], (list, np.ndarray, TracerBase)) or ndim(x) == 0
    else:
        condlist = as_operand(condlist)
        many = ndim(condlist) >= 2 or (ndim(condlist) == 1 and ndim(x) == 0)
    conds = [as_operand(c) for c in condlist] if many else [as_operand(condlist)]
    conds = [c if aval_of(c).dtype == np.bool_ else ordering.not_equal(c, 0) for c in conds]
    if len(conds) == n_funcs - 1:
        # the last function holds where no condition does
        anyc = conds[0]
        for c in conds[1:]:
            anyc = ordering.logical_or(anyc, c)
        conds.append(ordering.logical_not(anyc))
    elif len(conds) != n_funcs:
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    dtype = aval_of(x).dtype
    xs = tuple(_dims.shape(x))
    conds = [shape.broadcast_to(c, xs) if tuple(_dims.shape(c)) != xs else c for c in conds]
    known = [c if not isinstance(c, TracerBase) else c.concrete_value for c in conds]
    out = shape.zeros_like(x)
    if all(k is not None for k in known):
        # masks known now: each function sees just its entries, as in NumPy
        flat = shape.reshape(out, (-1,))
        xf = shape.reshape(x, (-1,))
        for mask, func in zip(known, funclist):
            where = np.nonzero(np.ravel(np.asarray(mask, bool)))
            if not callable(func):
                flat = index_set(flat, cast_to(func, dtype), where)
            elif where[0].size:
                flat = index_set(flat, cast_to(func(getitem(xf, where), *args, **kw), dtype),
                                 where)
        return shape.reshape(flat, xs)
    # masks known only when the program runs: each function is applied to
    # every entry (so it must be elementwise: checked), the entries outside
    # its piece replaced by one inside it, so it is never evaluated off its
    # domain
    for cond, func in zip(conds, funclist):
        if callable(func):
            _check_elementwise(func, aval_of(x), args, kw)
            val = func(selection.where(cond, x, piece_point(x, cond)), *args, **kw)
        else:
            val = func
        out = selection.where(cond, cast_to(val, dtype), out)
    return out


FUNCTIONS = {np.piecewise: _piecewise}
