"""Rematerialization of a loop body's cheap scalar residuals (``recompute_residuals``):
what the loops' linearize rules (``loops.py``) do to the known and linear bodies that
``linearize_program`` split a loop's body into, before they become loops of their own.

Layer: control.
"""
from __future__ import annotations

from ..core.ir import Lit, Program, Var, dce

__all__ = ["recompute_residuals", "CHEAP_SCALAR_PRIMS", "RECOMPUTE_PER_STORED"]


# primitives cheap enough on scalars to recompute rather than store: on a
# Python float each costs about what appending it to a list costs (and the
# stored value must be read back too), unlike a NumPy call such as np.sin
CHEAP_SCALAR_PRIMS = frozenset({"add", "add_any", "sub", "mul", "div", "neg"})
RECOMPUTE_PER_STORED = 2        # equations recomputed for each stored value saved


def recompute_residuals(known, lin, nres, n_out, free=()):
    """Rematerialization of a loop body's cheap scalar residuals.

    A loop's known body emits its residuals every iteration (``n_out``
    outputs, then ``nres`` residuals) and the linear body reads them back;
    for scalars, storing and reading a value costs about as much as an
    arithmetic operation. A residual computed from the body's inputs by
    cheap scalar arithmetic alone (``CHEAP_SCALAR_PRIMS``) is instead
    recomputed at the top of the linear body from those inputs, which become
    residuals in its place; inputs in ``free`` (the loop index and consts,
    which the linear loop has anyway) cost nothing to keep. Done when it
    stores fewer values and recomputes at most ``RECOMPUTE_PER_STORED``
    equations per value saved. The values are the same (the same operations
    on the same operands), so the derivative is too. Newton's step
    ``y - (y*y*y - a) / (3*y*y)`` (``a`` a const) stores ``y`` alone instead
    of six values::

        known: ... return (y2, v8, y, v7, v11, v12, v14)    ==>   return (y2, y, a)
        lin(v8, y, v7, v11, v12, v14, t_a, t_y)             ==>   lin(y, a, t_a, t_y):
                                                                    v7 = mul (y, y)
                                                                    v8 = add (y, y)
                                                                    ...

    Returns (known, lin, nres) in the same form; the linear body now holds
    primal equations too (transpose evaluates them forward)."""
    inputs = {v for v in known.inputs}
    free = {v for v in free}
    defs = {v: e for e in known.eqns for v in e.outputs}
    res, res_in = known.outputs[n_out:], lin.inputs[:nres]
    memo = {}

    def cone(x):
        """The equations that recompute ``x`` from the inputs (ids), or None."""
        if isinstance(x, Lit) or x in inputs:
            return set()
        if x not in memo:
            memo[x] = None
            e = defs.get(x)
            if e is not None and e.prim.name in CHEAP_SCALAR_PRIMS and all(
                    a.aval.shape == () for a in (*e.inputs, *e.outputs)):
                parts = [cone(a) for a in e.inputs]
                if all(p is not None for p in parts):
                    memo[x] = set().union({e}, *parts)
        return memo[x]

    redo = {r: cone(r) for r in res if r not in inputs}
    redo = {k: c for k, c in redo.items() if c is not None}
    if not redo:
        return known, lin, nres
    eqn_ids = set().union(*redo.values())
    eqns = [e for e in known.eqns if e in eqn_ids]
    kept = [(r, w) for r, w in zip(res, res_in) if r not in redo]
    have = {r for r, _ in kept}
    leaves = []
    for e in eqns:
        for x in e.inputs:
            if isinstance(x, Var) and x in inputs and x not in have:
                have.add(x)
                leaves.append((x, Var(x.aval, x.name, x.role)))
    new = kept + leaves
    saved = (sum(r not in free for r in res) - sum(r not in free for r, _ in new))
    if saved <= 0 or len(eqns) > RECOMPUTE_PER_STORED * saved:
        return known, lin, nres
    # the recomputed equations, on the linear body's variables: a residual's
    # copy is the linear input that read it, so lin's own equations stay
    env = {r: w for r, w in new}
    env.update((r, w) for r, w in zip(res, res_in) if r in redo)

    def read(x):
        return x if isinstance(x, Lit) else env[x]

    copies = []
    for e in eqns:
        ins = [read(x) for x in e.inputs]
        outs = [env.setdefault(v, Var(v.aval, v.name, v.role)) for v in e.outputs]
        copies.append(e.replace(ins, outs, e.params))
    # the known body no longer computes what only the residuals needed
    known = dce(Program(known.inputs, known.eqns, known.outputs[:n_out] + [r for r, _ in new],
                        known.name))
    lin = Program([w for _, w in new] + lin.inputs[nres:], copies + lin.eqns, lin.outputs,
                  lin.name)
    return known, lin, len(new)
