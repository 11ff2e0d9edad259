"""einsum: the one primitive of tensor contraction over named indices, and the
wrapper that brings NumPy's forms to it.

* ``einsum_p`` takes an explicit spec ``"ij,jk->ik"`` over letters only, and
  every index has one size across operands (no size-1 broadcasting). It is
  multilinear: its jvp has one term per operand carrying a tangent, and its
  transpose in one operand is another einsum (repeated indices within an
  operand, ``"ii->i"``, go through a constant delta tensor). Its batch rule
  gives the batch axis a fresh letter.
* The wrapper ``einsum`` normalises NumPy's forms into that: implicit output,
  ``...`` (expanded into fresh letters) and size-1 broadcast axes (squeezed
  away). It takes the subscripts-string form; ``np.einsum``'s interleaved
  (sublist) form is turned into it by ``numpy.functions``.

Layer: primitives.
"""
from __future__ import annotations

import string

import numpy as np

from ..core.primitive import ZERO_IF_ANY, Linear, Primitive, Zero, register
from ..core.trace import bind
from ..core.rules import EmitRule
from ..core.shapes import result_dtype, shape_error
from .arith import add
from .shape import broadcast_to, reshape
from .linalg import refuse_out, shape_tuple
from ..core.errors import NoDerivativeRule
from ..core.ir import Aval, aval_of
from ..core.contraction import contract

__all__ = ["einsum_p", "einsum"]

_LETTERS = string.ascii_letters


# --- einsum ------------------------------------------------------------
def _parse(spec):
    lhs, out = spec.split("->")
    return lhs.split(","), out


def einsum_impl(*operands, spec):
    return np.einsum(spec, *operands, optimize=len(operands) > 2)


def einsum_aval(*avals, spec):
    ins, out = _parse(spec)
    if len(ins) != len(avals):
        raise shape_error(f"einsum {spec!r}: {len(ins)} subscripts for {len(avals)} operands")
    sizes = {}
    for k, (sub_k, a) in enumerate(zip(ins, avals)):
        if len(sub_k) != a.ndim:
            raise shape_error(f"einsum {spec!r}: operand {k} has {a.ndim} axes (shape "
                                     f"{a.shape}) but subscripts {sub_k!r} name {len(sub_k)}")
        for c, d in zip(sub_k, a.shape):
            if sizes.setdefault(c, d) != d:
                raise shape_error(f"einsum {spec!r}: index {c!r} has length {sizes[c]} in one "
                                         f"place and {d} in another (operand {k}, shape {a.shape})")
    for c in out:
        if c not in sizes or out.count(c) > 1:
            raise shape_error(f"einsum {spec!r}: output index {c!r} must appear in an "
                                     "operand and only once in the output")
    return Aval(tuple(sizes[c] for c in out), result_dtype(*avals))


def einsum_jvp(primals, tangents, spec):
    out = bind(einsum_p, *primals, spec=spec)
    # multilinear: one term per operand carrying a tangent
    total = Zero(aval_of(out))
    for i, t in enumerate(tangents):
        if not isinstance(t, Zero):
            ops = list(primals)
            ops[i] = t
            total = add(total, bind(einsum_p, *ops, spec=spec))
    return out, total


def einsum_transpose(ct, *operands, spec):
    ins, out = _parse(spec)
    lin = [i for i, o in enumerate(operands) if isinstance(o, Linear)]
    assert len(lin) == 1, "einsum is linear in one operand at a time"
    i = lin[0]
    sub_i, shape_i = ins[i], operands[i].shape
    sizes = dict(zip(sub_i, shape_i))
    others = [(s, o) for k, (s, o) in enumerate(zip(ins, operands)) if k != i]
    elsewhere = set(out).union(*(set(s) for s, _ in others))
    uniq = "".join(dict.fromkeys(sub_i))
    keep = "".join(c for c in uniq if c in elsewhere)
    if others or keep != out:
        ct = bind(einsum_p, ct, *(o for _, o in others),
                  spec=",".join([out] + [s for s, _ in others]) + "->" + keep)
    if keep != uniq:
        # indices summed only out of operand i: its cotangent is constant along them
        ct = reshape(ct, tuple(sizes[c] if c in keep else 1 for c in uniq))
        ct = broadcast_to(ct, tuple(sizes[c] for c in uniq))
    if uniq != sub_i:
        # repeated index ("ii"): place the cotangent on the diagonal with a
        # constant delta tensor, in an einsum of its own (fresh letters)
        letters = _LETTERS[:len(sub_i)]
        dtype = aval_of(ct).dtype
        subs, deltas = ["".join(letters[sub_i.index(c)] for c in uniq)], []
        for c in uniq:
            pos = [p for p, d in enumerate(sub_i) if d == c]
            if len(pos) > 1:
                delta = np.zeros((sizes[c],) * len(pos), dtype)
                delta[(np.arange(sizes[c]),) * len(pos)] = 1
                deltas.append(delta)
                subs.append("".join(letters[p] for p in pos))
        ct = bind(einsum_p, ct, *deltas, spec=",".join(subs) + "->" + letters)
    return tuple(ct if k == i else None for k in range(len(operands)))


def einsum_batch(args, batched, spec):
    ins, out = _parse(spec)
    free = [c for c in _LETTERS if c not in spec]
    if not free:
        return NotImplemented
    b = free[0]
    new = [b + s if f else s for s, f in zip(ins, batched)]
    return bind(einsum_p, *args, spec=",".join(new) + "->" + b + out)


class EinsumEmit(EmitRule):
    def expression(self, code, eqn, ins, py):
        spec = eqn.params.get("spec")
        if set(eqn.params) == {"spec"} and isinstance(spec, str):
            extra = [f"optimize={len(ins) > 2}"] if len(ins) > 2 else []
            return f"{code.np}.einsum({', '.join([repr(spec)] + ins + extra)})"


def einsum_sparsity(an, ops, outs, spec):
    """An output element reads the operand elements of its terms, where the other factors
    may be nonzero (``contraction.contract``)."""
    return contract(spec, ops, outs[0].shape)


einsum_p = register(Primitive("einsum", nargs=None, impl=einsum_impl, jvp=einsum_jvp,
                              transpose=einsum_transpose, abstract_eval=einsum_aval,
                              batch=einsum_batch, zero_rule=ZERO_IF_ANY, emit=EinsumEmit(),
                              complex_ok=True,
                              sparsity=einsum_sparsity))


def einsum(*operands, out=None, optimize=False):
    """``np.einsum(subscripts, *operands)`` normalised to an explicit spec."""
    refuse_out(out, "einsum")
    spec, ops = operands[0], list(operands[1:])
    if not isinstance(spec, str):
        raise NoDerivativeRule("einsum: only the subscripts-string form is supported, "
                               "e.g. einsum('ij,jk->ik', a, b)")
    spec = spec.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ops):
        raise shape_error(f"einsum {spec!r}: {len(ins)} subscripts for {len(ops)} operands")
    bad = set(spec) - set(_LETTERS) - set(",->.")
    if bad:
        raise shape_error(f"einsum {spec!r}: subscripts must be letters, got {sorted(bad)}")
    shapes = [shape_tuple(o) for o in ops]
    named = [c for c in lhs if c in _LETTERS]
    ell = ""
    if "..." in spec:
        # the broadcast axes get fresh letters, right-aligned as NumPy lines them up
        fresh = [c for c in _LETTERS if c not in spec]
        counts = [len(sh) - (len(s) - 3) for s, sh in zip(ins, shapes) if "..." in s]
        if any(k < 0 for k in counts):
            raise shape_error(f"einsum {spec!r}: an operand has fewer axes than subscripts")
        ell = "".join(fresh[:max(counts, default=0)])
        ins = [s.replace("...", ell[len(ell) - (len(sh) - len(s) + 3):]) if "..." in s else s
               for s, sh in zip(ins, shapes)]
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        rhs = ell + "".join(sorted(c for c in set(named) if named.count(c) == 1))
    # size-1 axes broadcast against longer ones: squeeze them out of that operand
    longest = {}
    for s, sh in zip(ins, shapes):
        for c, d in zip(s, sh):
            longest[c] = max(longest.get(c, d), d)
    for k, (s, sh) in enumerate(zip(ins, shapes)):
        if len(s) != len(sh):
            break                    # einsum_aval names the mismatch
        drop = [p for p, (c, d) in enumerate(zip(s, sh)) if d == 1 < longest[c] and s.count(c) == 1]
        if drop:
            ops[k] = reshape(ops[k], tuple(d for p, d in enumerate(sh) if p not in drop))
            ins[k] = "".join(c for p, c in enumerate(s) if p not in drop)
    return bind(einsum_p, *ops, spec=",".join(ins) + "->" + rhs)
