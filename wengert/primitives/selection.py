"""``where``, the select of entries by a condition: the one primitive that
picks between its operands, entry by entry. Its derivative selects the
tangents the same way; its transpose sends the cotangent to the chosen
side (summed back to that side's shape where it was broadcast).

Layer: primitives.
"""
from __future__ import annotations

import numpy as np

from .arith import sum_to
from ..core.primitive import BROADCASTING, Linear, Primitive, Zero, instantiate, register
from ..core.trace import wrapper_of
from ..core.pass_rules import Algebra
from ..core.shapes import broadcast_shapes, promotes, result_dtype

from ..core.ir import Aval, aval_of
from ..core.deps import elementwise

__all__ = ["where", "where_p"]


# --- where (select) ----------------------------------------------------
def where_jvp(primals, tangents, ):
    c, x, y = primals
    _, x_dot, y_dot = tangents
    return where(c, x, y), where(c, x_dot, y_dot)


def where_transpose(ct, c, x, y):
    zero = np.zeros((), aval_of(ct).dtype)
    return (None,
            sum_to(where(c, ct, zero), x) if isinstance(x, Linear) else None,
            sum_to(where(c, zero, ct), y) if isinstance(y, Linear) else None)


@promotes
def where_aval(c, x, y):
    return Aval(broadcast_shapes(c.shape, x.shape, y.shape, name="where"), result_dtype(x, y))


def where_zero_rule(c, x, y):
    if isinstance(x, Zero) and isinstance(y, Zero):
        return Zero(where_aval(aval_of(c), x.aval, y.aval))
    # the zero side as concrete zeros of its own aval (a Python float's is 0.0)
    return where(c, instantiate(x), instantiate(y))


def where_sparsity(an, ops, outs):
    """Elementwise in both sides; where the condition is known, the side it picks."""
    c, x, y = ops
    keep = None
    if c.known:
        cond = np.asarray(c.value, bool)
        keep = [None, cond, ~cond]
    return elementwise(outs[0].shape, ops, keep)


where_p = register(Primitive("where", nargs=3, impl=np.where, jvp=where_jvp,
                             transpose=where_transpose, abstract_eval=where_aval,
                             zero_rule=where_zero_rule, batch=BROADCASTING, complex_ok=True,
                             algebra=Algebra(broadcasts=True),
                             sparsity=where_sparsity))
where = wrapper_of(where_p)
