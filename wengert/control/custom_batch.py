"""The custom rules' functions on a batch: what the batch rules of ``custom_jvp_call``,
``custom_vjp_call`` and ``custom_lin`` (``custom.py``, ``custom_lin.py``) bind in place of
the user's functions.

A batch of calls of a ``custom_jvp`` function is one call of the function *batched*, whose
rule is the rule batched: differentiated later (``grad(vmap(f))``), the batched rule gives
the derivative, as the rule gives it for one example. Likewise ``fwd`` and ``bwd`` of a
``custom_vjp`` function, ``bwd`` summing the cotangents of an argument the batch shares
(its cotangent is the sum of the examples'). Each is a function of one example run on the
batch's values by the batching transform (``core.subprograms.batch_flat``); its outputs
all batched. On plain values a body wengert cannot trace (``scipy.integrate.quad``) runs
once per example, as the user's function.

Layer: control.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import TracerBase
from ..core.pytree import flatten, unflatten
from ..core.subprograms import batch_flat
from ..primitives.batched import spread
from ..primitives.shape import reduce_sum

__all__ = ["BatchedCall", "BatchedRule", "BatchedFwd", "BatchedBwd", "BatchedLinBwd",
           "batched_leaf"]


def _name(fun):
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", repr(fun))


def batched_leaf(x):
    """Whether a value a function hands on (a residual) is batched by forcing: arrays,
    traced values and Python floats; integers and other objects (a shape, a flag) stay."""
    return isinstance(x, (TracerBase, np.ndarray, np.inexact, float, complex))


def _run(fn, args, flags, size):
    """``fn(*args)`` on a batch (``flags``: which leaves of ``args`` are batched), every
    output leaf batched; the output's structure kept."""
    leaves, tree = flatten(tuple(args))
    out_tree = [None]

    def flat(*xs):
        out_leaves, out_tree[0] = flatten(fn(*unflatten(tree, xs)))
        return out_leaves
    outs, got = batch_flat(flat, leaves, flags, size)
    outs = [o if g or not batched_leaf(o) else spread(o, size) for o, g in zip(outs, got)]
    return unflatten(out_tree[0], outs)


class _Batched:
    """A user's function of one example, called on a batch (``flags``: which argument
    leaves are batched; ``size``: the batch's length)."""

    def __init__(self, fun, flags, size):
        self.fun, self.flags, self.size = fun, list(flags), size
        self.__qualname__ = self.__name__ = f"vmap({_name(fun)})"


class BatchedCall(_Batched):
    """A custom rule's function on a batch: batched where it traces; on plain values a
    body that does not trace runs once per example."""

    def __init__(self, fun, flags, size):
        super().__init__(fun, flags, size)
        plain = getattr(fun, "_wg_plain", None)
        if plain is not None:
            self._wg_plain = BatchedCall(plain, flags, size)

    def __call__(self, *args):
        if any(isinstance(a, TracerBase) for a in args):
            return _run(self.fun, args, self.flags, self.size)
        try:
            return _run(self.fun, args, self.flags, self.size)
        except Exception:       # noqa: BLE001 -- an opaque body: the user's function per example
            return self._per_example(args)

    def _per_example(self, args):
        rows = [self.fun(*[a[b] if f else a for a, f in zip(args, self.flags)])
                for b in range(int(self.size))]
        first = rows[0]
        if isinstance(first, (tuple, list)):
            return tuple(np.stack([r[k] for r in rows]) for k in range(len(first)))
        return np.stack(rows)


class BatchedRule(_Batched):
    """A ``custom_jvp`` rule on a batch: ``rule(primals, tangents)``, a tangent batched
    where its primal is (it has the primal's shape)."""

    def __call__(self, primals, tangents):
        n = len(primals)
        return _run(lambda *xs: self.fun(tuple(xs[:n]), tuple(xs[n:])),
                    list(primals) + list(tangents), self.flags + self.flags, self.size)


class BatchedFwd(_Batched):
    """A ``custom_vjp`` fwd on a batch: ``(out, residuals)``, each batched."""

    def __call__(self, *primals):
        return _run(self.fun, primals, self.flags, self.size)


class BatchedBwd(_Batched):
    """A ``custom_vjp`` bwd on a batch: the residuals (batched by ``BatchedFwd``) and the
    output cotangent batched; an argument's cotangent summed over the batch where the
    argument is shared by it (``flags``: the arguments')."""

    def __call__(self, res, ct):
        res_leaves, _ = flatten(res)
        ct_leaves, _ = flatten(ct)
        flags = [batched_leaf(x) for x in res_leaves] + [True] * len(ct_leaves)
        cts = _run(lambda r, c: self.fun(r, c), (res, ct), flags, self.size)
        cts = cts if isinstance(cts, (tuple, list)) else (cts,)
        return tuple(c if c is None or f else reduce_sum(c, axes=(0,))
                     for c, f in zip(cts, self.flags))


class BatchedLinBwd(_Batched):
    """The bwd of a batch of ``custom_lin`` equations (a linear Program of a ``custom_vjp``
    function, batched): the residual operands batched as ``flags`` says (``res``: their
    ``Residuals``, whose other leaves are static), the cotangent batched, every argument's
    cotangent batched."""

    def __init__(self, fun, res, flags, size):
        super().__init__(fun, flags, size)
        self.res = res

    def __call__(self, res, ct):
        static = dict(getattr(self.res, "static", ()))
        ops = iter(self.flags)
        res_leaves, _ = flatten(res)
        flags = [False if k in static else next(ops, True) for k in range(len(res_leaves))]
        flags += [True] * len(flatten(ct)[0])
        return _run(lambda r, c: self.fun(r, c), (res, ct), flags, self.size)
