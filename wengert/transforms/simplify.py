"""simplify: zero propagation, dead-code elimination, common subexpressions.

    simplify : Program -> Program    (same inputs, same outputs, same values)

* zero propagation: ``mul`` by a literal 0 gives a literal 0 (of the output's
  shape); ``add``/``sub``/``add_any`` of a literal 0 of the output's shape is the
  other operand; ``mul`` by a literal 1 is the other operand;
* constant folding: an equation whose operands are all scalar literals is
  evaluated;
* common subexpressions: an equation equal to an earlier one (same
  primitive, same operands, same params) reuses its outputs;
* copies (``copies=True``, for generated code): the outputs of a ``dup`` are
  its operand, and ``neg (neg x)`` is ``x`` (what transposing ``sub`` twice
  leaves). Printed programs keep their ``dup``s: they show the seeds' duality;
* signs (with ``copies``): a negation moves out of the way until an ``add``,
  ``sub`` or ``neg`` absorbs it: ``a + (-b)`` is ``a - b``, ``a - (-b)`` is
  ``a + b``, and ``(-a) * b`` is ``-(a * b)`` (likewise ``/``); IEEE
  arithmetic is symmetric in the sign, so every value, signed zeros
  included, stays the same (``-a - b`` is not rewritten: ``-(a + b)`` differs
  at ``a = 0.0, b = -0.0``);
* int literals (with ``copies``): ``3 * y`` on a float ``y`` is ``3.0 * y``
  (the same value and dtype; Python multiplies two floats twice as fast);
* loops: a carry that the body passes through unchanged is its initial
  value; a carry, per-iteration output or operand that nothing needs is
  dropped (``_prune_loop``);
* dead code: equations whose outputs nothing uses are dropped.

Transforms already avoid forming symbolic zeros; this pass cleans what a
Program built by hand or by composition still holds.
"""
from __future__ import annotations

import numpy as np

from .. import context, dims
from ..dims import in_params
from ..ir import Eqn, Ident, Lit, Program, Var, acts, has_effect, programs_in
from ..primitives.core import rule_error
from ..primitives.symbolic_constants import constant

__all__ = ["simplify", "dce", "atom_key", "eqn_key"]


def _is_scalar_lit(x, value=None):
    if not isinstance(x, Lit) or np.ndim(x.val) != 0 or hasattr(x.val, "_trace"):
        return False
    # a complex literal compares as a complex number (1j is not 0.0 or 1.0)
    return value is None or complex(np.asarray(x.val)) == value


def atom_key(x):
    """A key equal for the same variable and for equal scalar literals."""
    if isinstance(x, Lit):
        if np.ndim(x.val) == 0 and not hasattr(x.val, "_trace"):
            return ("lit", repr(np.asarray(x.val).item()), np.asarray(x.val).dtype.str)
        return ("obj", Ident(x.val))
    return ("var", x)


def _param_key(params):
    try:
        # a place outside the function (host.EnvRef) compares by where it is
        items = tuple(sorted((k, getattr(v, "param_key", None) or repr(v))
                             for k, v in params.items()
                             if not isinstance(v, (np.ndarray, Program))))
        if any(isinstance(v, (np.ndarray, Program)) for v in params.values()):
            return None
        return items
    except TypeError:
        return None


def eqn_key(prim, ins, params, key=atom_key):
    """What makes two equations compute the same values (common
    subexpressions), or None (control flow, params that do not compare, and
    calls with an effect: two random draws are two draws)."""
    if prim.effect or any(has_effect(p) for p in programs_in(params)):
        return None         # a loop or branch that draws: each one draws
    pk = _param_key(params)
    return None if pk is None else (prim.name, tuple(key(x) for x in ins), pk)


def simplify(prog, copies=False):
    subst = {}          # var -> replacement atom
    seen = {}
    negated = {}        # v -> x where v = neg (x)
    eqns = []

    def sub(x):
        return x if isinstance(x, Lit) else subst.get(x, x)

    pending = prog.eqns[::-1]       # a rewrite pushes its equations back here
    while pending:
        eqn = pending.pop()
        ins = [sub(x) for x in eqn.inputs]
        name, out = eqn.prim.name, eqn.outputs
        if name == "cond" and isinstance(ins[0], Lit) and not hasattr(ins[0].val, "_trace"):
            # a branch chosen by a literal: its equations replace the cond
            branch = eqn.params["branches"][int(ins[0].val)]
            body, results = _inline(simplify(branch, copies), ins[1:])
            eqns.extend(body)
            for v, w in zip(out, results):
                subst[v] = w
            continue
        if copies and name == "dup" and not eqn.params:
            for v in out:
                subst[v] = ins[0]
            continue
        if copies and name == "neg" and not isinstance(ins[0], Lit) and ins[0] in negated:
            subst[out[0]] = negated[ins[0]]
            continue
        if copies and name in _SIGN_RULES and not eqn.params:
            ins = _float_literals(ins)
            rewritten = _move_negation(name, ins, out[0], negated) if negated else None
            if rewritten is not None:
                pending.extend(reversed(rewritten))
                continue
        eqn = _simplify_params(eqn, copies)
        if name in _LOOPS:
            _pass_through(eqn, ins, subst)
        if not eqn.prim.multiple_results and len(out) == 1:
            shape = out[0].aval.shape
            if name in _SIGN_RULES and (copies or name != "add_any"):
                # add_any's rule takes equal shapes: a scalar for an array is
                # for the generated code only, whose ``+`` broadcasts
                ins = _uniform_as_scalar(ins, out[0].aval)
            repl = _algebraic(name, ins, out[0].aval)
            if repl is not None:
                subst[out[0]] = repl
                continue
            if ins and all(_is_scalar_lit(x) for x in ins) and not eqn.prim.inline \
                    and not eqn.prim.runtime \
                    and not in_params(eqn.params):     # a symbolic shape is the code's to make
                vals = [x.val for x in ins]
                # of symbolic numbers (``dims``) a symbolic number
                ctx = context.symbolic_now()
                val = (constant(ctx, eqn.prim, vals, eqn.params, rule_error) if ctx is not None
                       else eqn.prim.impl(*dims.plain_numbers(vals), **eqn.params))
                # only where the value has the result's shape: operands made
                # scalars by ``_uniform_as_scalar`` fold to a scalar where the
                # equation broadcast them to an array
                if np.shape(val) == tuple(shape):
                    subst[out[0]] = Lit(val)
                    continue
        key = eqn_key(eqn.prim, ins, eqn.params)
        if key is not None:
            if key in seen:
                for v, w in zip(out, seen[key]):
                    subst[v] = w
                continue
            seen[key] = out
        if name == "neg":
            negated[out[0]] = ins[0]
        eqns.append(Eqn(eqn.prim, ins, out, eqn.params))

    outputs = [sub(x) for x in prog.outputs]
    return dce(Program(prog.inputs, eqns, outputs, prog.name))


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
    return Eqn(eqn.prim, eqn.inputs, eqn.outputs, params)


def _inline(prog, args):
    """(equations, outputs) of ``prog`` with its inputs replaced by ``args`` and
    fresh variables for everything it defines (a Program may be inlined twice)."""
    from ..ir import Var
    env = {v: a for v, a in zip(prog.inputs, args)}

    def read(x):
        return x if isinstance(x, Lit) else env.get(x, x)

    eqns = []
    for e in prog.eqns:
        outs = []
        for v in e.outputs:
            w = Var(v.aval, v.name, v.role)
            env[v] = w
            outs.append(w)
        eqns.append(Eqn(e.prim, tuple(read(x) for x in e.inputs), tuple(outs), e.params))
    return eqns, [read(x) for x in prog.outputs]


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


def _algebraic(name, ins, out):
    """A replacement atom for ``name(ins)`` (result ``out``, an aval) by an
    identity, or None: only where the replacement has the result's dtype."""
    shape = out.shape

    def same_shape(x):
        return tuple(x.aval.shape) == tuple(shape) and x.aval.dtype == out.dtype
    if name == "mul":
        a, b = ins
        for z, other in ((a, b), (b, a)):
            if _is_scalar_lit(z, 0.0) and shape == () and out.dtype.kind in "fc":
                # zero of the product's type (a float32 zero times a Python
                # float is float32); a Python zero stays a Python number
                weak = other.aval.weak and z.aval.weak
                return Lit(0.0 if weak and out.dtype == np.float64 else np.zeros((), out.dtype))
            if _is_scalar_lit(z, 1.0) and same_shape(other) and not isinstance(other, Lit):
                return other
    if name in ("add", "add_any"):
        a, b = ins
        if _is_scalar_lit(a, 0.0) and same_shape(b) and not isinstance(b, Lit):
            return b
        if _is_scalar_lit(b, 0.0) and same_shape(a) and not isinstance(a, Lit):
            return a
    if name == "pow":
        a, b = ins
        if _is_scalar_lit(b, 1.0) and same_shape(a) and not isinstance(a, Lit):
            return a                        # x ** 1, left by the derivative of x ** 2
    if name == "sub":
        a, b = ins
        if _is_scalar_lit(b, 0.0) and same_shape(a) and not isinstance(a, Lit):
            return a
    return None


# --- signs ------------------------------------------------------------------------
_SIGN_RULES = frozenset({"add", "add_any", "sub", "mul", "div"})


def _move_negation(name, ins, out, negated):
    """Equations computing ``out`` with a negated operand's sign moved (see
    the module docstring), or None. ``negated[v] = x`` where ``v = neg (x)``.
    Real floats only; a sign moves onto the result only if that is no larger
    than the negated operand (so it never grows with broadcasting)."""
    from ..primitives import PRIMITIVES
    neg_in = [not isinstance(x, Lit) and x in negated for x in ins]
    if not any(neg_in) or out.aval.dtype.kind != "f" \
            or any(x.aval.dtype.kind != "f" for x in ins):
        return None
    a, b = ins
    if name in ("add", "add_any"):
        plus = (a, negated[b]) if neg_in[1] else (b, negated[a])
        return [Eqn(PRIMITIVES["sub"], plus, (out,), {})]
    if name == "sub":
        return [Eqn(PRIMITIVES["add"], (a, negated[b]), (out,), {})] if neg_in[1] else None
    if any(n and x.aval.shape != out.aval.shape for x, n in zip(ins, neg_in)):
        return None
    prim = PRIMITIVES[name]
    plain = tuple(negated[x] if n else x for x, n in zip(ins, neg_in))
    if all(neg_in):
        return [Eqn(prim, plain, (out,), {})]            # (-a) * (-b) is a * b
    w = Var(out.aval, "", out.role)         # a temporary: ``out`` keeps the name
    return [Eqn(prim, plain, (w,), {}), Eqn(PRIMITIVES["neg"], (w,), (out,), {})]


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


# --- loops --------------------------------------------------------------------------
_LOOPS = {"for_loop": 1, "while_loop": 0}      # operands before the consts (the trip count)


def _pass_through(eqn, ins, subst):
    """A carry whose new value is the body's carry input itself never changes:
    the loop's output is the initial value (also after no iteration)."""
    body, first = eqn.params["body"], _LOOPS[eqn.prim.name]
    nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
    for k in range(nk):
        if body.outputs[k] is body.inputs[first + nc + k]:
            subst[eqn.outputs[k]] = ins[first + nc + k]


def _needed_inputs(prog, outputs):
    """Positions of ``prog``'s inputs that computing ``outputs``, and the
    effects ``prog`` has, read."""
    live = {x for x in outputs if not isinstance(x, Lit)}
    for eqn in reversed(prog.eqns):
        if any(v in live for v in eqn.outputs) or acts(eqn):
            live.update(x for x in eqn.inputs if not isinstance(x, Lit))
    return {k for k, v in enumerate(prog.inputs) if v in live}


def _prune_loop(eqn, live):
    """``eqn`` (a loop) without the carries, per-iteration outputs and
    operands that no live output needs. A carry stays while the body needs
    its value for something kept (a kept carry, a kept output, the condition)."""
    p, first = eqn.params, _LOOPS[eqn.prim.name]
    nc, nk, body = p["num_consts"], p["num_carry"], p["body"]
    cond = p.get("cond")
    ys_at = nk + (eqn.prim.name == "while_loop")          # a while loop's count before ys
    keep_ys = [v in live for v in eqn.outputs[ys_at:]]
    keep_carry = [v in live for v in eqn.outputs[:nk]]
    cond_needs = _needed_inputs(cond, cond.outputs) if cond is not None else set()
    while True:
        outs = [o for o, k in zip(body.outputs, keep_carry + keep_ys) if k]
        needs = _needed_inputs(body, outs) | cond_needs
        more = [k or first + nc + j in needs for j, k in enumerate(keep_carry)]
        if more == keep_carry:
            break
        keep_carry = more
    keep_in = [True] * first + [k in needs for k in range(first, first + nc)] + keep_carry \
        + [k in needs for k in range(first + nc + nk, len(body.inputs))]
    keep_out = keep_carry + keep_ys
    if all(keep_in) and all(keep_out):
        return eqn

    def pick(items, flags):
        return [x for x, f in zip(items, flags) if f]

    params = dict(p, num_consts=sum(keep_in[first:first + nc]), num_carry=sum(keep_carry))
    params["body"] = dce(Program(pick(body.inputs, keep_in), body.eqns,
                                  pick(body.outputs, keep_out), body.name))
    if cond is not None:
        params["cond"] = Program(pick(cond.inputs, keep_in), cond.eqns, cond.outputs, cond.name)
    outs = pick(eqn.outputs[:nk], keep_carry) + list(eqn.outputs[nk:ys_at]) \
        + pick(eqn.outputs[ys_at:], keep_ys)
    return Eqn(eqn.prim, pick(eqn.inputs, keep_in), outs, params)


def dce(prog):
    """``prog`` without the equations (and loop parts) no output needs."""
    live = {x for x in prog.outputs if not isinstance(x, Lit)}
    kept = []
    for eqn in reversed(prog.eqns):
        if any(v in live for v in eqn.outputs) or acts(eqn):
            if eqn.prim.name in _LOOPS:
                eqn = _prune_loop(eqn, live)
            kept.append(eqn)
            live.update(x for x in eqn.inputs if not isinstance(x, Lit))
    kept.reverse()
    return Program(prog.inputs, kept, prog.outputs, prog.name)
