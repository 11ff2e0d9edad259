"""Sparsity: which inputs each element of a Program's outputs depends on, by abstract
interpretation of the Program over index sets (``core/deps.py``).

    sparsity: Program -> [Abstract] -> [Abstract]

An input is an ``Abstract``: a differentiated input's elements each depend on their own
column (``Deps.identity``), any other input on none; a value is *known* where the analysis
may rely on it (constants, integer arguments; every value in a ``local`` analysis). Each
equation asks its row's ``sparsity`` rule (``Primitive``) for its results' index sets; an
equation none of whose operands depends on a column depends on none, and is computed where
its operands are known (so an index, a mask or a trip count made from constants is known).
For example:

    program f(x: f64[4]):                    x[e]  -> {e}
      v0 = getitem[idx=[1:]] (x)             v0[e] -> {e + 1}
      v1 = getitem[idx=[:-1]] (x)            v1[e] -> {e}
      v2 = mul (v0, v1)                      v2[e] -> {e, e + 1}
      return (v2)

Control flow (the rules of ``control/``, which call back into this pass): a branch whose
index is known is the one taken, else every branch runs and their results are joined (the
union). A loop runs its body one iteration at a time while its trip count (or condition) and
its counter are known, up to ``max_unroll`` iterations (a loop that reads no counter and
whose state stops changing stops there); past that, or where the condition is not known, to
a fixed point: the state joined with the body's result until it stops growing, with the
counter unknown, which is the union over every trip count. So the result holds for every
value of the inputs that are not known and every path through the control flow: a superset
of the nonzeros of the Jacobian at every point, and exactly them where no value decides a
branch or an index. A value decides more in a ``local`` analysis (every input known): the
branch taken, ``where``'s side, the maximum's place; it then holds at that point only.

Layer: transforms.
"""
from __future__ import annotations

import numpy as np

from ..core import deps as D
from ..core.deps import UNKNOWN, Abstract, Deps
from ..core.ir import Aval, Lit, aval_of
from ..core.primitive import CONSTANT, DENSE, ELEMENTWISE, REDUCTION, ZERO_IF_ANY, Moves

__all__ = ["Analysis", "MAX_UNROLL", "sparsity"]

# iterations a loop is run one at a time before its fixed point
MAX_UNROLL = 1000


def sparsity(prog, ins, local=False, max_unroll=MAX_UNROLL):
    """The ``Abstract`` outputs of ``prog`` given its ``Abstract`` inputs."""
    return Analysis(local, max_unroll).run(prog, ins)


class Analysis:
    """One run of the analysis: ``run`` a Program, and the services the control-flow rules
    use (``iterate``, ``stacked``, ``join``, ``row``, ``constant``)."""

    def __init__(self, local=False, max_unroll=MAX_UNROLL):
        self.local = local
        self.max_unroll = max_unroll

    # --- Programs and equations ------------------------------------------------
    def run(self, prog, ins):
        env = dict(zip(prog.inputs, ins))

        def read(x):
            return self.constant(x.val) if isinstance(x, Lit) else env[x]

        for eqn in prog.eqns:
            outs = self.apply(eqn, [read(x) for x in eqn.inputs])
            env.update(zip(eqn.outputs, outs))
        return [read(x) for x in prog.outputs]

    def apply(self, eqn, ops):
        """The ``Abstract`` results of one equation."""
        prim, params = eqn.prim, eqn.params
        computable = all(op.known for op in ops) and not prim.runtime
        if not prim.differentiable or all(op.deps is None for op in ops):
            if computable:
                return self._computed(prim, ops, params)
            return [Abstract(a) for a in self._out_avals(eqn, ops)]
        avals = self._out_avals(eqn, ops)
        res = self._rule(prim, ops, avals, params)
        if not prim.multiple_results:
            res = (res,)
        if any(isinstance(r, Abstract) for r in res):
            return list(res)            # the rule computed the values too (control flow)
        values = (self._impl(prim, ops, params) if computable else [UNKNOWN] * len(avals))
        outs = []
        for aval, value, deps in zip(avals, values, res):
            if value is not UNKNOWN:
                aval = aval_of(value)
            if aval.dtype.kind not in "fc":
                deps = None             # integers and booleans have no derivative
            outs.append(Abstract(aval, value, deps))
        return outs

    def _rule(self, prim, ops, avals, params):
        rule = prim.sparsity
        if rule is ELEMENTWISE:
            return D.elementwise(avals[0].shape, ops, _products(prim, ops, avals[0].shape))
        if rule is DENSE:
            deps = [op.deps for op in ops]
            res = tuple(D.dense(a.shape, *deps) for a in avals)
            return res if prim.multiple_results else res[0]
        if rule is CONSTANT:
            return (None,) * len(avals) if prim.multiple_results else None
        if rule is REDUCTION:
            x = ops[0]
            if not x.known_shape:
                return D.dense(avals[0].shape, x.deps)
            targets, shape = D.reduce_targets(x.shape, params["axes"])
            return D.relate(shape, x.deps, targets, np.arange(len(targets)))
        if isinstance(rule, Moves):
            return self._moves(prim, rule.data, ops, avals, params)
        return rule(self, ops, avals, **params)

    def _moves(self, prim, data, ops, avals, params):
        """A row that moves elements: its impl on the operands' positions."""
        data = range(len(ops)) if data is None else data
        args, parts, offset = [], [], 0
        for k, op in enumerate(ops):
            if k in data and op.known_shape:
                args.append(D.ids(op.shape, offset))
                parts.append((op.deps, offset, offset + int(np.prod(op.shape))))
                offset = parts[-1][2]
            elif k not in data and op.known:
                args.append(op.value)
            else:               # an index known only at run time: any element may go anywhere
                return D.dense(avals[0].shape, *[op.deps for op in ops])
        out = np.asarray(prim.impl(*args, **params))
        moved = out.reshape(-1)
        return D.combine(out.shape, [(d, np.where((moved >= lo) & (moved < hi), moved - lo, -1))
                                 for d, lo, hi in parts if d is not None])

    def _out_avals(self, eqn, ops):
        out = eqn.prim.abstract_eval(*[op.aval for op in ops], **eqn.params)
        return list(out) if eqn.prim.multiple_results else [out]

    @staticmethod
    def _impl(prim, ops, params):
        with np.errstate(all="ignore"):
            out = prim.impl(*[op.value for op in ops], **params)
        return list(out) if prim.multiple_results else [out]

    def _computed(self, prim, ops, params):
        return [self.constant(v) for v in self._impl(prim, ops, params)]

    # --- what control flow uses ------------------------------------------------
    @staticmethod
    def constant(value):
        """A known value that depends on nothing."""
        return Abstract(aval_of(value), value)

    def join(self, a, b):
        """What holds for either of two values (a branch's or another iteration's)."""
        if a is b:
            return a
        value = a.value if _same_value(a, b) else UNKNOWN
        shape = a.shape if a.shape == b.shape else tuple(
            x if x == y else None for x, y in zip(a.shape, b.shape))
        deps = D.union(_reshaped(a.deps, shape), _reshaped(b.deps, shape))
        return Abstract(Aval(shape, a.dtype, a.aval.weak), value, deps)

    def same(self, a, b):
        """Whether two values hold the same: a fixed point is reached."""
        if a is b:
            return True
        if a.known != b.known or (a.known and not _same_value(a, b)) or a.shape != b.shape:
            return False
        if a.deps is None or b.deps is None:
            return a.deps is None and b.deps is None
        return a.deps.same(b.deps)

    def row(self, x, i):
        """``x[i]`` along the leading axis (a loop's per-iteration value), ``i`` an
        ``Abstract`` counter: the union over every row where it is not known."""
        shape = x.shape[1:]
        if i.known and x.known_shape:
            k = int(i.value)
            m = int(np.prod(shape))
            deps = None if x.deps is None else D.gather(shape, x.deps, np.arange(m) + k * m)
            if x.known:
                return Abstract(aval_of(x.value[k]), x.value[k], deps)
            return Abstract(Aval(shape, x.dtype, x.aval.weak), UNKNOWN, deps)
        if x.deps is None or not x.known_shape or x.deps.is_uniform:
            return Abstract(Aval(shape, x.dtype), UNKNOWN, D.dense(shape, x.deps))
        targets, _ = D.reduce_targets(x.shape, (0,))
        return Abstract(Aval(shape, x.dtype), UNKNOWN,
                        D.relate(shape, x.deps, targets, np.arange(len(targets))))

    def stacked(self, count, rows, tail, avals):
        """A loop's per-iteration outputs (of ``avals``) stacked along a new leading axis:
        ``rows`` the iterations run one by one (counter -> outputs), ``tail`` what any other
        iteration gives (``iterate``), ``count`` the number of iterations."""
        out = []
        for m, aval in enumerate(avals):
            if count.known:
                items = [rows[j][m] if j in rows else tail[m] for j in range(int(count.value))]
                out.append(self._stack(items, aval))
                continue
            every = self.join_all([r[m] for r in rows.values()] + [tail[m]])
            deps = None if every.deps is None else D.dense((None,) + every.shape, every.deps)
            out.append(Abstract(Aval((None,) + every.shape, every.dtype), UNKNOWN, deps))
        return out

    def _stack(self, items, aval):
        shape = (len(items),) + tuple(items[0].shape if items else aval.shape)
        deps = D.stack(shape[1:], [r.deps for r in items]) if items else None
        if items and all(r.known for r in items):
            value = np.stack([np.asarray(r.value) for r in items])
            return Abstract(aval_of(value), value, deps)
        return Abstract(Aval(shape, aval.dtype), UNKNOWN, deps)

    def iterate(self, step, carry, trips=None, more=None, reverse=False, steady=False):
        """Run a loop: ``step(i, carry) -> (carry, ys)`` one iteration (``i`` an ``Abstract``
        counter), ``trips`` the ``Abstract`` trip count of a ``for`` loop, ``more(carry)``
        the ``Abstract`` condition of a ``while`` loop; ``steady``: the body reads neither
        its counter nor per-iteration values, so a state that stops changing stays.

        Returns (carry, count, rows, tail): the state after the loop, the trip count (an
        ``Abstract``), the per-iteration outputs of the iterations run one by one (counter ->
        outputs) and, where others ran to a fixed point, what any of those gives (else
        None): ``stacked`` puts them together."""
        n = int(trips.value) if trips is not None and trips.known else None
        rows, k = {}, 0
        while n is None or k < n:
            if k >= self.max_unroll:
                break
            if more is not None:
                flag = more(carry)
                if not flag.known:
                    break
                if not flag.value:
                    return carry, self.constant(k), rows, None
            i = n - 1 - k if reverse else k
            new, ys = step(self.constant(i), carry)
            rows[i] = ys
            k += 1
            if steady and n is not None and all(self.same(a, b) for a, b in zip(new, carry)):
                rows.update((j, ys) for j in range(n))      # every later iteration is this one
                k = n
            carry = new
        if n is not None and k >= n:
            return carry, self.constant(n), rows, None
        carry, tail = self._fixed_point(step, carry, None if n is None else n - k)
        count = Abstract(Aval((), np.int64)) if n is None else self.constant(n)
        return carry, count, rows, tail

    def _fixed_point(self, step, carry, limit):
        """The state joined with the body's result until it stops growing (at most
        ``limit`` times), the counter unknown; and the join of the per-iteration outputs."""
        counter = Abstract(Aval((), np.int64))
        tail, count = None, 0
        while True:
            new, ys = step(counter, carry)
            tail = ys if tail is None else [self.join(a, b) for a, b in zip(tail, ys)]
            joined = [self.join(a, b) for a, b in zip(carry, new)]
            count += 1
            stable = all(self.same(a, b) for a, b in zip(joined, carry))
            carry = joined
            if stable or (limit is not None and count >= limit):
                return carry, tail

    def join_all(self, values):
        """What holds for any of ``values``."""
        out = values[0]
        for v in values[1:]:
            out = self.join(out, v)
        return out


def _products(prim, ops, shape):
    """Where an elementwise row linear in each operand separately (``ZERO_IF_ANY``: a
    product) counts each operand: not where another is a constant 0 (``d(c x) = c``)."""
    if prim.zero_rule is not ZERO_IF_ANY or len(ops) < 2 or not any(
            op.known and op.deps is None for op in ops) or None in shape:
        return None
    masks = [np.broadcast_to(D.nonzero_mask(op), shape) for op in ops]
    return [np.logical_and.reduce([m for j, m in enumerate(masks) if j != k])
            for k in range(len(ops))]


def _same_value(a, b):
    """Both known and equal (the same dtype and shape; NaN equal to itself)."""
    if not (a.known and b.known):
        return False
    if a.value is b.value:
        return True
    x, y = np.asarray(a.value), np.asarray(b.value)
    if x.shape != y.shape or x.dtype != y.dtype or type(a.value) is not type(b.value):
        return False
    return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))


def _reshaped(deps, shape):
    """``deps`` as the Deps of a value of ``shape`` (lengths made unknown: uniform)."""
    if deps is None or deps.shape == shape:
        return deps
    return D.dense(shape, deps)
