"""Explicit duplication (seed 000): every variable is used exactly once.

    explicit_dup : Program -> Program

A variable used n > 1 times is split by n - 1 ``dup`` equations placed right
after its definition, and each use reads its own copy. In this form the
reverse program is the forward one read backwards line by line: a ``dup``
becomes an ``add_any`` of the two cotangents, an ``add`` a ``dup``.

    v = mul (p, x)              (x_1, x_2) = dup (x)
    w = add (v, x)      ==>     v = mul (p, x_1)
                                w = add (v, x_2)

Layer: transforms.
"""
from __future__ import annotations

from collections import Counter

from ..core.ir import Eqn, Lit, Program, Var
from ..primitives.fanout import dup_p

__all__ = ["explicit_dup"]


def explicit_dup(prog):
    uses = Counter(x for eqn in prog.eqns for x in eqn.inputs if not isinstance(x, Lit))
    uses.update(x for x in prog.outputs if not isinstance(x, Lit))
    copies = {}      # var -> list of the copies still to hand out
    eqns = []

    def split(v):
        n = uses.get(v, 0)
        if n < 2:
            return
        base = v.name
        pool, src = [], v
        for k in range(n - 1):
            a = Var(v.aval, f"{base}{k + 1}" if base else "", v.role)
            last = k == n - 2
            b = Var(v.aval, f"{base}{k + 2}" if base and last else "", v.role)
            eqns.append(Eqn(dup_p, [src], [a, b], {}))
            pool.append(a)
            src = b
        pool.append(src)
        copies[v] = pool

    def take(x):
        if isinstance(x, Lit) or x not in copies:
            return x
        return copies[x].pop(0)

    for v in prog.inputs:
        split(v)
    for eqn in prog.eqns:
        new_inputs = [take(x) for x in eqn.inputs]
        eqns.append(eqn.replace(new_inputs, eqn.outputs, eqn.params))
        for v in eqn.outputs:
            split(v)
    outputs = [take(x) for x in prog.outputs]
    return Program(prog.inputs, eqns, outputs, name=prog.name)
