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
* dead code: equations whose outputs nothing uses are dropped.

Transforms already avoid forming symbolic zeros; this pass cleans what a
Program built by hand or by composition still holds.
"""
from __future__ import annotations

import numpy as np

from ..ir import Eqn, Lit, Program

__all__ = ["simplify"]


def _is_scalar_lit(x, value=None):
    if not isinstance(x, Lit) or np.ndim(x.val) != 0 or hasattr(x.val, "_trace"):
        return False
    return value is None or float(np.asarray(x.val)) == value


def _key(x):
    if isinstance(x, Lit):
        if np.ndim(x.val) == 0 and not hasattr(x.val, "_trace"):
            return ("lit", repr(np.asarray(x.val).item()), np.asarray(x.val).dtype.str)
        return ("obj", id(x.val))
    return ("var", id(x))


def _param_key(params):
    try:
        items = tuple(sorted((k, repr(v)) for k, v in params.items()
                             if not isinstance(v, (np.ndarray, Program))))
        if any(isinstance(v, (np.ndarray, Program)) for v in params.values()):
            return None
        return items
    except TypeError:
        return None


def simplify(prog, copies=False):
    subst = {}          # id(var) -> replacement atom
    seen = {}
    negated = {}        # id(v) -> x where v = neg (x)
    eqns = []

    def sub(x):
        return x if isinstance(x, Lit) else subst.get(id(x), x)

    for eqn in prog.eqns:
        ins = [sub(x) for x in eqn.inputs]
        name, out = eqn.prim.name, eqn.outputs
        if name == "cond" and isinstance(ins[0], Lit) and not hasattr(ins[0].val, "_trace"):
            # a branch chosen by a literal: its equations replace the cond
            branch = eqn.params["branches"][int(ins[0].val)]
            body, results = _inline(simplify(branch, copies), ins[1:])
            eqns.extend(body)
            for v, w in zip(out, results):
                subst[id(v)] = w
            continue
        if copies and name == "dup" and not eqn.params:
            for v in out:
                subst[id(v)] = ins[0]
            continue
        if copies and name == "neg" and not isinstance(ins[0], Lit) and id(ins[0]) in negated:
            subst[id(out[0])] = negated[id(ins[0])]
            continue
        eqn = _simplify_params(eqn, copies)
        if not eqn.prim.multiple_results and len(out) == 1:
            shape = out[0].aval.shape
            repl = _algebraic(name, ins, shape)
            if repl is not None:
                subst[id(out[0])] = repl
                continue
            if ins and all(_is_scalar_lit(x) for x in ins) and not eqn.prim.inline:
                val = eqn.prim.impl(*[x.val for x in ins], **eqn.params)
                subst[id(out[0])] = Lit(val)
                continue
        pk = _param_key(eqn.params)
        if pk is not None:
            key = (name, tuple(_key(x) for x in ins), pk)
            if key in seen:
                for v, w in zip(out, seen[key]):
                    subst[id(v)] = w
                continue
            seen[key] = out
        if name == "neg":
            negated[id(out[0])] = ins[0]
        eqns.append(Eqn(eqn.prim, ins, out, eqn.params))

    outputs = [sub(x) for x in prog.outputs]
    return _dce(Program(prog.inputs, eqns, outputs, prog.name))


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
    env = {id(v): a for v, a in zip(prog.inputs, args)}

    def read(x):
        return x if isinstance(x, Lit) else env.get(id(x), x)

    eqns = []
    for e in prog.eqns:
        outs = []
        for v in e.outputs:
            w = Var(v.aval, v.hint)
            env[id(v)] = w
            outs.append(w)
        eqns.append(Eqn(e.prim, tuple(read(x) for x in e.inputs), tuple(outs), e.params))
    return eqns, [read(x) for x in prog.outputs]


def _algebraic(name, ins, shape):
    """A replacement atom for ``name(ins)`` by an identity, or None."""
    def same_shape(x):
        return tuple(x.aval.shape) == tuple(shape)
    if name == "mul":
        a, b = ins
        for z, other in ((a, b), (b, a)):
            if _is_scalar_lit(z, 0.0) and shape == ():
                # a Python zero stays a Python number (weakly typed), as the user's would
                weak = other.aval.weak and z.aval.weak
                return Lit(0.0 if weak and other.aval.dtype.kind == "f"
                           else np.zeros((), other.aval.dtype))
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


def _dce(prog):
    live = {id(x) for x in prog.outputs if not isinstance(x, Lit)}
    kept = []
    for eqn in reversed(prog.eqns):
        if any(id(v) in live for v in eqn.outputs):
            kept.append(eqn)
            live.update(id(x) for x in eqn.inputs if not isinstance(x, Lit))
    kept.reverse()
    return Program(prog.inputs, kept, prog.outputs, prog.name)
