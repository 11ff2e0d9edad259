"""simplify: identities, constant folding, common subexpressions, dead code.

    simplify : Program -> Program    (same inputs, same outputs, same values)

The pass names no primitive: what it may rewrite is on the rows.

* identities (the row's ``simplify`` rule): ``x * 0`` is a literal 0 (a
  scalar), ``x + 0``, ``x - 0``, ``x * 1`` and ``x ** 1`` are ``x`` where
  ``x`` has the result's shape and dtype;
* constant folding: an equation whose operands are all scalar literals is
  evaluated;
* common subexpressions: an equation equal to an earlier one (same
  primitive, same operands, same params) reuses its outputs;
* other rewrites a row asks for (``Primitive.simplify``): a ``cond`` on a
  literal index is its branch; with ``copies`` (for generated code) the
  outputs of a ``dup`` are its operand. Printed programs keep their
  ``dup``s: they show the seeds' duality;
* repeated literals (the row's ``algebra.scalar_literals``): an array literal
  of one value repeated is that value, broadcasting making the rest;
* signs (with ``copies``; the row's ``algebra``, ``core/pass_rules.py``):
  ``-(-x)`` is ``x`` (what transposing ``sub`` twice leaves), and a negation
  moves out of the way until an ``add``, ``sub`` or ``neg`` absorbs it:
  ``a + (-b)`` is ``a - b``, ``a - (-b)`` is ``a + b``, and ``(-a) * b`` is
  ``-(a * b)`` (likewise ``/``); IEEE arithmetic is symmetric in the sign,
  so every value, signed zeros included, stays the same (``-a - b`` is not
  rewritten: ``-(a + b)`` differs at ``a = 0.0, b = -0.0``);
* int offsets (with ``copies``; the row's ``algebra.offset``): an int
  scalar offset by Python int literals is its root offset by their sum,
  ``(1 + k) - 1`` is ``k`` and ``(1 + k) + 1`` is ``k + 2`` (exact on
  integers, modular ones included): a loop over ``range(1, n)`` reads
  ``x[i - 1]`` without computing ``i`` first;
* int literals (with ``copies``, on a row with a sign rule): ``3 * y`` on a
  float ``y`` is ``3.0 * y`` (the same value and dtype; Python multiplies
  two floats twice as fast);
* broadcasts (with ``copies``; the rows' ``algebra.expands`` and
  ``broadcasts``): ``y * broadcast_to(s, shape)`` is ``y * s`` where ``y``
  has the result's shape and dtype, the operator broadcasting ``s`` (a
  reduction's transpose broadcasts its cotangent, which a product then
  reads);
* loops (their rows' rules): a carry that the body passes through unchanged
  is its initial value; a carry, per-iteration output or operand that
  nothing needs is dropped;
* dead code: equations whose outputs nothing uses are dropped, and the parts
  of an equation its row's ``dce`` rule drops.

Transforms already avoid forming symbolic zeros; this pass cleans what a
Program built by hand or by composition still holds.

Layer: transforms.
"""
from __future__ import annotations

import numpy as np

from ..core import context, dims
from ..core.dims import in_params
from ..core.ir import Eqn, Lit, Program, Var, dce, eqn_key
from ..core.pass_rules import is_scalar_lit as _is_scalar_lit
from ..core.constants import constant

__all__ = ["simplify"]


def simplify(prog, copies=False):
    subst = {}          # var -> replacement atom
    lost = []           # (var, the atom a rewrite replaced it with)
    seen = {}
    negated = {}        # v -> x where v = neg (x)
    offsets = {}        # v -> (k, c) where v = k + c, ints
    expanded = {}       # v -> x where v = broadcast_to (x)
    eqns = []

    def sub(x):
        return x if isinstance(x, Lit) else subst.get(x, x)

    pending = prog.eqns[::-1]       # a rewrite pushes its equations back here
    while pending:
        eqn = pending.pop()
        ins = [sub(x) for x in eqn.inputs]
        out, algebra = eqn.outputs, eqn.prim.algebra
        if algebra is not None and copies and algebra.broadcasts and expanded:
            ins = _unexpanded(ins, out[0].aval, expanded)
        if algebra is not None and copies:
            # the row's sign rules (``Algebra``)
            if algebra.negation and not isinstance(ins[0], Lit) and ins[0] in negated:
                subst[out[0]] = negated[ins[0]]
                continue
            if algebra.move_sign is not None and not eqn.params:
                ins = _float_literals(ins)
                rewritten = _move_negation(eqn.prim, algebra.move_sign, ins, out[0], negated) \
                    if negated else None
                if rewritten is not None:
                    pending.extend(reversed(_from(eqn, rewritten)))
                    continue
            if algebra.offset:
                found = _int_offset(algebra.offset, ins, out[0], offsets)
                if found is not None:
                    root, c, composed = found
                    offsets[out[0]] = (root, c)
                    if composed and c == 0:
                        subst[out[0]] = root
                        continue
                    if composed:
                        eqn = _from(eqn, [algebra.with_offset(root, c, out[0])])[0]
                        ins, algebra = list(eqn.inputs), eqn.prim.algebra
        eqn = _simplify_params(eqn, copies)
        if algebra is not None and algebra.scalar_literals is not None \
                and (copies or algebra.scalar_literals == "always"):
            ins = _uniform_as_scalar(ins, out[0].aval)
        rule = eqn.prim.simplify
        rewritten = rule(eqn, ins, copies) if rule is not None else None
        if rewritten is not None:
            # the row's rewrite (``x * 1`` is ``x``; a cond on a literal index
            # is its branch; a loop's unchanged carry is its initial value)
            new_eqns, results = rewritten
            # a rewrite that changed a sub-Program (a loop body reading a
            # literal for a carry that never changes) is simplified again
            eqns.extend(e if e.params is eqn.params else _simplify_params(e, copies)
                        for e in _from(eqn, new_eqns))
            subst.update((v, w) for v, w in zip(out, results) if w is not v)
            lost.extend((v, w) for v, w in zip(out, results) if w is not v)
            continue
        if not eqn.prim.multiple_results and len(out) == 1:
            shape = out[0].aval.shape
            if ins and all(_is_scalar_lit(x) for x in ins) and not eqn.prim.inline \
                    and not eqn.prim.runtime \
                    and not in_params(eqn.params):     # a symbolic shape is the code's to make
                vals = [x.val for x in ins]
                # of symbolic numbers (``dims``) a symbolic number
                ctx = context.symbolic_now()
                val = (constant(ctx, eqn.prim, vals, eqn.params) if ctx is not None
                       else eqn.prim.impl(*dims.plain_numbers(vals), **eqn.params))
                # only where the value has the result's shape: operands made
                # scalars by ``_uniform_as_scalar`` fold to a scalar where the
                # equation broadcast them to an array
                if np.shape(val) == tuple(shape):
                    if out[0].aval.weak and isinstance(val, np.generic):
                        # a Python scalar's (weakly typed) value stays one: an operand
                        # folded earlier may be NumPy's, and the code returns the literal
                        val = val.item()
                    subst[out[0]] = Lit(val)
                    continue
        key = eqn_key(eqn.prim, ins, eqn.params)
        if key is not None:
            if key in seen:
                for v, w in zip(out, seen[key]):
                    subst[v] = w
                continue
            seen[key] = out
        if algebra is not None and algebra.negation:
            negated[out[0]] = ins[0]
        if algebra is not None and algebra.expands:
            expanded[out[0]] = ins[0]
        eqns.append(eqn.replace(ins, out, eqn.params))

    outputs = [sub(x) for x in prog.outputs]
    return _names_kept(dce(Program(prog.inputs, eqns, outputs, prog.name)), lost, sub)


def _names_kept(prog, lost, sub):
    """``prog`` with a name a rewrite dropped given to the nameless value that took
    its variable's place (``ct_q = 1.0 * v2`` is ``v2``: ``v2`` is then ``ct_q``),
    where that value is computed here and read only as what the name says: in its
    role, or, for a cotangent, only by the reverse sweep (``grad``'s ``ct_q`` is
    ``2.0 * p``, a value the forward sweep made for it alone)."""
    defined = {v for e in prog.eqns for v in e.outputs}
    readers = {}
    for e in prog.eqns:
        for x in e.inputs:
            if isinstance(x, Var):
                readers.setdefault(x, []).append(e)
    new = {}
    for v, w in lost:
        w = sub(w)
        if not isinstance(w, Var) or w.name or w not in defined or w in new \
                or not (v.name and v.aval == w.aval):
            continue
        if v.role is not w.role and not all(
                all(o.role is v.role for o in e.outputs) for e in readers.get(w, ())):
            continue
        new[w] = Var(w.aval, v.name, v.role)
    if not new:
        return prog

    def read(x):
        return new.get(x, x) if isinstance(x, Var) else x
    eqns = [e.replace([read(x) for x in e.inputs], [read(x) for x in e.outputs])
            for e in prog.eqns]
    return Program(prog.inputs, eqns, [read(x) for x in prog.outputs], prog.name)


def _from(eqn, new):
    """``new``, the equations a rewrite of ``eqn`` made, from ``eqn``'s line of the
    user's code (``core.where``) where they name none."""
    for e in new:
        if e.where is None:
            e.where = eqn.where
    return new


def _simplify_params(eqn, copies):
    """Simplify the sub-Programs a control-flow equation holds."""
    if not any(isinstance(v, Program) or (isinstance(v, tuple) and v and
                                          isinstance(v[0], Program))
               for v in eqn.params.values()):
        return eqn
    params = {}
    for k, v in eqn.params.items():
        if isinstance(v, Program):
            v = simplify(v, copies)
        elif isinstance(v, tuple) and v and all(isinstance(p, Program) for p in v):
            v = tuple(simplify(p, copies) for p in v)
        params[k] = v
    return eqn.replace(eqn.inputs, eqn.outputs, params)


def _uniform_as_scalar(ins, out):
    """An array literal that is one value repeated (the ones a sum's
    transpose broadcasts), against an operand of the result's shape and its
    dtype, as that value: broadcasting makes the rest, at no cost."""
    if len(ins) != 2:
        return ins
    new = list(ins)
    for k in (0, 1):
        # against the other operand as it now is: of two such literals only
        # one becomes a scalar, or nothing would give the result its shape
        x, other = new[k], new[1 - k]
        val = x.val if isinstance(x, Lit) else None
        if not (isinstance(val, np.ndarray) and val.ndim and val.size and val.dtype.kind == "f"
                and other.aval.dtype == val.dtype == out.dtype
                and tuple(other.aval.shape) == tuple(out.shape)):
            continue
        first = val.flat[0]
        if np.isnan(first) or not (val == first).all():
            continue
        recipe = context.recipe_of(val)
        new[k] = Lit(recipe[1] if recipe is not None and recipe[0] == "full" else first)
    return new


def _unexpanded(ins, out, expanded):
    """A broadcasting row's operands with a broadcast one (``expanded[v] =
    x`` where ``v = broadcast_to (x)``) as the value before the broadcast,
    where the other operand has the result's shape and dtype, or is a
    boolean mask (whatever its type, a scalar times a mask has the scalar's
    dtype; the code may hold a 0-d float as a Python float, which against a
    float32 array would give float32): the row's broadcasting makes the same
    array. One operand at most, checked against
    the other as it now is, or nothing would give the result its shape."""
    if len(ins) not in (2, 3):
        return ins
    new = list(ins)
    for k in range(len(ins)):
        x = new[k]
        if isinstance(x, Lit) or x not in expanded:
            continue
        src = expanded[x]
        # another operand (a select's mask, for ``where``) gives the result its shape
        if src.aval.dtype == x.aval.dtype == out.dtype and any(
                other.aval.dtype in (out.dtype, np.dtype(bool))
                and tuple(other.aval.shape) == tuple(out.shape)
                for j, other in enumerate(new) if j != k):
            new[k] = src
            break
    return new


def _move_negation(prim, move_sign, ins, out, negated):
    """The row's ``move_sign`` equations computing ``out`` (see the module
    docstring), or None. ``negated[v] = x`` where ``v = neg (x)``. Real
    floats only."""
    neg_in = [not isinstance(x, Lit) and x in negated for x in ins]
    if not any(neg_in) or out.aval.dtype.kind != "f" \
            or any(x.aval.dtype.kind != "f" for x in ins):
        return None
    plain = tuple(negated[x] if n else x for x, n in zip(ins, neg_in))
    return move_sign(prim, ins, plain, neg_in, out)


def _int_offset(sign, ins, out, offsets):
    """(k, c, composed) where ``out = ins[0] + sign * ins[1]`` is the int Var
    ``k`` offset by the Python int ``c`` (``composed``: through an earlier
    offset, ``offsets``, where the summed offset fits the dtype), or None. ``k`` has the result's aval (weak
    included), so the offset may be dropped where ``c`` is 0."""
    def int_lit(x):
        return type(x) is Lit and type(x.val) is int

    a, b = ins
    if int_lit(b) and not isinstance(a, Lit):
        k, c = a, sign * b.val
    elif sign > 0 and int_lit(a) and not isinstance(b, Lit):
        k, c = b, a.val
    else:
        return None
    if out.aval.dtype.kind != "i" or out.aval.shape != () or k.aval != out.aval \
            or k.aval.weak != out.aval.weak:
        return None
    if k in offsets:
        root, c0 = offsets[k]
        info = None if k.aval.weak else np.iinfo(k.aval.dtype)
        if info is None or abs(c0 + c) <= info.max:
            # modular sums agree; a literal the dtype cannot hold would raise
            # (written with its sign: ``k - c``, ``with_offset``)
            return root, c0 + c, True
    return k, c, False


def _float_literals(ins):
    """A Python int literal against a float operand, as the equal float
    literal: the result's value and dtype are the same (a weak int and a weak
    float both take the other operand's float dtype), and the code skips
    Python's int-to-float conversion."""
    def exact_int(x):
        return type(x) is Lit and type(x.val) is int and abs(x.val) <= 2 ** 53

    if len(ins) == 2:
        a, b = ins
        if exact_int(a) and b.aval.dtype.kind == "f":
            return [Lit(float(a.val)), b]
        if exact_int(b) and a.aval.dtype.kind == "f":
            return [a, Lit(float(b.val))]
    return ins
