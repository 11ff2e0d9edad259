"""The values a block carries (``blocks``), and their specs: an *operand* (a number or an
array, traced or not, or a tuple, list or dict, nested, of them holding at least one array)
has a spec, its aval or for a container a ``TupleSpec`` (tree and leaf avals; a dict's keys
are part of its tree, so both branches must give the same keys), whose leaves are inputs and
outputs
of the staged Program; specs join (a branch's and the other's), widen (a loop's carry from one
step to the next) and coerce a value to them.

Layer: frontends.
"""
from __future__ import annotations

import numpy as np

from ...core.errors import UnsupportedSyntax
from ...core.ir import Aval, aval_of
from ...core.primitive import TracerBase, zeros
from ...core.pytree import flatten, registered, unflatten
from ...core.shapes import broadcast_shapes, result_dtype
from ...primitives import arith
from ...primitives.shape import broadcast_to

__all__ = ["rebuild", "is_operand", "operand_leaves", "TupleSpec", "spec_of", "n_leaves", "same_spec",
           "join_spec", "widens", "zeros_of", "coerce_to"]


def _traced(x):
    return isinstance(x, TracerBase)


def is_operand(v):
    """Numbers and arrays (traced or not) are a block's operands."""
    return _traced(v) or isinstance(v, (np.ndarray, np.generic, float, int, complex, bool))


# the containers a block carries as operands: tuples, named tuples and the classes
# registered as pytree nodes (``wg.tree``), nested; lists and dicts too where a branch
# carries them (``containers``), else they stay Python values
_CARRIED = ("tuple", "namedtuple", "custom")


def _tuple_tree(tree, kinds=_CARRIED):
    return tree.kind in ("leaf", "none") or (
        tree.kind in kinds and all(_tuple_tree(c, kinds) for c in tree.children))


def operand_leaves(v, containers=False):
    """The operand leaves of ``v`` (``[v]``, or the leaves of a tuple, a named tuple or
    an instance of a registered class, nested; of lists and dicts too where
    ``containers``: a branch's, whose two sides must give the same structure; a loop
    builds its lists as Python), or None for a Python value. One of Python numbers only
    (a shape) stays Python."""
    if is_operand(v):
        return [v]
    kinds = _CARRIED + ("list", "dict") if containers else _CARRIED
    if type(v) in (list, dict) and containers or isinstance(v, tuple) or (
            registered(type(v)) is not None):
        leaves, tree = flatten(v)
        if (leaves and _tuple_tree(tree, kinds) and all(is_operand(x) for x in leaves)
                and not all(type(x) in (int, float, complex, bool) for x in leaves)):
            return leaves
    return None


class TupleSpec:
    """A tuple operand's spec: its tree and its leaves' avals."""
    __slots__ = ("tree", "avals")

    def __init__(self, tree, avals):
        self.tree, self.avals = tree, tuple(avals)

    def __eq__(self, other):
        return (isinstance(other, TupleSpec) and self.tree == other.tree
                and len(self.avals) == len(other.avals)
                and all(same_spec(a, b) for a, b in zip(self.avals, other.avals)))

    __hash__ = None

    def __repr__(self):
        return f"TupleSpec({self.tree!r}, {list(self.avals)!r})"


def spec_of(v):
    if is_operand(v):
        return aval_of(v)
    leaves, tree = flatten(v)
    return TupleSpec(tree, [aval_of(x) for x in leaves])


def n_leaves(spec):
    return len(spec.avals) if isinstance(spec, TupleSpec) else 1


def same_spec(a, b):
    if isinstance(a, Aval) and isinstance(b, Aval):
        return a == b and a.weak == b.weak
    return a == b


def _join(a, b):
    return Aval(broadcast_shapes(a.shape, b.shape), result_dtype(a, b))


def join_spec(a, b, what):
    """The spec both ``a`` and ``b`` convert to (NumPy's promotion, shapes
    broadcast); ``what`` names the variable for the error."""
    if isinstance(a, Aval) and isinstance(b, Aval):
        return a if same_spec(a, b) else _join(a, b)
    if isinstance(a, TupleSpec) and isinstance(b, TupleSpec) and a.tree == b.tree:
        return TupleSpec(a.tree, [join_spec(x, y, what) for x, y in zip(a.avals, b.avals)])
    raise UnsupportedSyntax(
        f"{what} is a tuple, list or dict of another structure on one path than on the "
        f"other ({a!r} against {b!r}) in a branch or loop that depends on a traced value "
        "(its length or keys differ); give it the same structure on every path")


def widens(a, b):
    """Whether a carry of spec ``a`` must change for a step that gives ``b``:
    to their join's shape or dtype, or a Python number that a step makes a
    NumPy one. (A step giving a value that converts to ``a`` without loss,
    a Python float for a float32 carry, leaves it as it is.)"""
    if isinstance(a, Aval) and isinstance(b, Aval):
        if a.shape == b.shape and a.dtype == b.dtype:
            return a.weak and not b.weak
        j = _join(a, b)
        return j.shape != a.shape or j.dtype != a.dtype or (a.weak and not b.weak)
    if isinstance(a, TupleSpec) and isinstance(b, TupleSpec) and a.tree == b.tree:
        return any(widens(x, y) for x, y in zip(a.avals, b.avals))
    return True


def zeros_of(spec):
    """Zeros of ``spec`` (a Python float's is 0.0), the value of a variable
    on a path that never reads it (assigned first inside a loop, returned on
    the other branch): a 0-d one is a NumPy scalar, so that its kind leaves
    the real value's alone (``assemble``'s scalars)."""
    if isinstance(spec, TupleSpec):
        return unflatten(spec.tree, [_zero(a) for a in spec.avals])
    return _zero(spec)


def _zero(aval):
    z = zeros(aval)
    return z[()] if type(z) is np.ndarray and z.ndim == 0 else z


def _coerce(v, aval):
    a = aval_of(v)
    if a.dtype != aval.dtype or (a.weak and not aval.weak):
        # a Python number joined with a NumPy one is the NumPy one (NEP 50)
        v = arith.convert(v, dtype=aval.dtype)
    if aval_of(v).shape != aval.shape:
        v = broadcast_to(v, aval.shape)
    return v


def coerce_to(v, spec, what="a value"):
    if isinstance(spec, Aval):
        return _coerce(v, spec)
    leaves, tree = flatten(v)
    if tree != spec.tree:
        raise UnsupportedSyntax(f"{what} is a tuple, list or dict of another structure on one "
                                "path than on the other; give it the same structure on every "
                                "path")
    return unflatten(tree, [_coerce(x, a) for x, a in zip(leaves, spec.avals)])


def rebuild(spec, leaves):
    return unflatten(spec.tree, leaves) if isinstance(spec, TupleSpec) else leaves[0]
