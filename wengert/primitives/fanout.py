"""Fan-out: ``dup`` and ``add_any``, each the other's transpose.

``dup`` gives its operand twice (``a, b = dup x``): a value read by two
equations, made explicit (``transforms/dup.py``), so the transpose sees where
the two cotangents meet. ``add_any`` sums two cotangents (or tangents) of one
value: the same shape on both sides, NumPy's promotion, never broadcasting
(a shape mismatch here is a bug in a rule, raised as such). Both are linear
in every operand; a symbolic zero passes through ``add_any`` untouched.
In generated code a ``dup`` is its operand (``DupEmit``); printed programs
keep their ``dup``s, which show the seeds' duality.

Layer: primitives.
"""
from __future__ import annotations

import operator

from ..core import dims as _dims
from ..core.primitive import PRIMITIVES, Linear, Primitive, Zero, register
from ..core.trace import wrapper_of
from ..core.rules import EmitRule, LowerRule
from ..core.shapes import promotes, result_dtype, shape_error
from ..core.pass_rules import Algebra, BinaryOperator, drops_identity
from .shape import broadcast_to
from ..core.ir import Aval, Eqn, Var
from ..core.primitive import ELEMENTWISE

__all__ = ["dup_p", "dup", "add_any_p", "add_any"]

_wrap = wrapper_of


# --- dup ---------------------------------------------------------------
def dup_impl(x):
    return x, x


def dup_aval(x):
    return x, x


def dup_jvp(primals, tangents):
    return dup(primals[0]), dup(tangents[0])


def dup_transpose(cts, x):
    ct1, ct2 = cts
    return (add_any(ct1, ct2),)


def dup_zero_rule(x):
    return x, x


def dup_simplify(eqn, ins, copies):
    """In generated code (``copies``) a ``dup``'s outputs are its operand;
    printed programs keep their ``dup``s: they show the seeds' duality."""
    if copies and not eqn.params:
        return [], [ins[0]] * len(eqn.outputs)
    return None


class DupEmit(EmitRule):
    """``(a, b) = (x, x)``: the operand itself, twice (a Python scalar stays one)."""

    def expression(self, code, eqn, ins, py):
        return "(" + ", ".join(ins * len(eqn.outputs)) + ")" if not eqn.params else None

    def python_scalars(self, eqn, py_ins, run):
        return [py_ins[0]] * len(eqn.outputs)


def dup_batch(args, batched):
    return dup(args[0])


def dup_sparsity(an, ops, outs):
    """Each copy depends on what the operand does."""
    return (ops[0].deps,) * len(outs)


dup_p = register(Primitive("dup", nargs=1, impl=dup_impl, jvp=dup_jvp, transpose=dup_transpose,
                           abstract_eval=dup_aval, multiple_results=True,
                           zero_rule=dup_zero_rule, simplify=dup_simplify, emit=DupEmit(),
                           batch=dup_batch, complex_ok=True,
                           sparsity=dup_sparsity))
dup = _wrap(dup_p)


# --- add_any -----------------------------------------------------------
def add_any_jvp(primals, tangents):
    return add_any(*primals), add_any(*tangents)


def add_any_transpose(ct, x, y):
    if isinstance(x, Linear) and isinstance(y, Linear):
        return dup(ct)
    return (ct if isinstance(x, Linear) else None), (ct if isinstance(y, Linear) else None)


@promotes
def add_any_aval(x, y):
    if x.shape != y.shape:
        raise shape_error(f"add_any: cotangents of shapes {x.shape} and {y.shape} differ")
    # operator.add: NumPy's promotion, Python numbers weakly typed (NEP 50)
    return Aval(x.shape, result_dtype(x, y), weak=x.weak and y.weak)


def add_any_zero_rule(x, y):
    if isinstance(x, Zero):
        return y
    return x


def add_any_move_sign(prim, ins, plain, negated, out):
    """``a + (-b)`` is ``a - b`` (``sub`` is built on this module: its row is looked up)."""
    a, b = ins
    return [Eqn(PRIMITIVES["sub"], (a, plain[1]) if negated[1] else (b, plain[0]), (out,), {})]


# its shape rule takes equal shapes: a scalar for an array is for the code only


def add_any_batch(args, batched):
    x, y = args
    if not batched[0]:
        x = broadcast_to(x, shape=_dims.shape(y))
    if not batched[1]:
        y = broadcast_to(y, shape=_dims.shape(x))
    return add_any(x, y)


class AddAnyLower(LowerRule):
    """A sum of cotangents: a new array, or ``a += b`` on an operand nothing
    reads afterwards; a sum into an accumulator moves into a summand that
    takes one (``acc + (c + d)`` is ``(acc + c) + d``, another order of
    adding: the same to rounding)."""

    def fresh(self, eqn):
        return True

    @staticmethod
    def _full(x, out):
        return x.aval.shape == out.aval.shape and x.aval.dtype == out.aval.dtype

    def update(self, eqn):
        out = eqn.outputs[0]
        return tuple(p for p, x in enumerate(eqn.inputs) if self._full(x, out))

    def inplace(self, code, eqn, ins, py, outs, p):
        if not ins[p].isidentifier():
            return None
        then = [f"{outs[0]} = {ins[p]}"] if outs[0] != ins[p] else []
        return [f"{ins[p]} += {ins[1 - p]}"] + then

    def accumulates(self, eqn):
        return (0, 1) if self.sums(eqn) else ()

    def sums(self, eqn):
        return all(self._full(x, eqn.outputs[0]) for x in eqn.inputs)

    def absorb(self, eqn, k, acc, out, sink):
        if not self.sums(eqn):
            return None
        c, d = eqn.inputs
        if not sink.absorbable(c):
            c, d = d, c
            if not sink.absorbable(c):
                return None
        if acc is None:
            return []
        t = Var(out.aval, out.name, out.role)
        return [Eqn(eqn.prim, [acc, c], [t], {}), Eqn(eqn.prim, [t, d], [out], {})]


add_any_p = register(Primitive("add_any", nargs=2, impl=operator.add, jvp=add_any_jvp,
                               transpose=add_any_transpose, abstract_eval=add_any_aval,
                               zero_rule=add_any_zero_rule,
                               simplify=drops_identity(left=0.0, right=0.0),
                               algebra=Algebra(move_sign=add_any_move_sign, scalar_literals="copies"),
                               emit=BinaryOperator("+"), batch=add_any_batch, lower=AddAnyLower(),
                               complex_ok=True,
                               sparsity=ELEMENTWISE))
add_any = _wrap(add_any_p)
