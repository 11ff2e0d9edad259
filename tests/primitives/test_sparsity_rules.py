"""The rows' ``sparsity`` rules (``Primitive.sparsity``, read by ``transforms/sparsity.py``).

* completeness: every registered row has a sparsity rule (a generic marker, ``moves(...)`` or
  a function): a row added without one fails here, by name;
* soundness, row by row over ``cases.SPECS``: the pattern the rule gives, with every
  differentiated operand unknown, holds every nonzero of the row's Jacobian computed by its
  jvp rule (a unit tangent per input element, real and imaginary) at the case's operands and
  at a second random point: a rule may over-approximate, never miss a dependency;
* exactness where it is claimed: elementwise, moving and reducing rows give exactly the
  Jacobian's pattern on cases whose Jacobian has no accidental zeros.
"""
from __future__ import annotations

import types
import zlib

import numpy as np
import pytest

from wengert.core.deps import UNKNOWN, Abstract, Deps
from wengert.core.ir import aval_of
from wengert.core.primitive import CONSTANT, DENSE, ELEMENTWISE, REDUCTION, Moves, Zero
from wengert.primitives import PRIMITIVES
from wengert.transforms.sparsity import Analysis

from cases import DIFF, SPECS
from checks import random_like

ALL_NAMES = sorted(PRIMITIVES)
GENERIC = (ELEMENTWISE, REDUCTION, DENSE, CONSTANT)


@pytest.mark.parametrize("name", ALL_NAMES, ids=ALL_NAMES)
def test_every_row_has_a_sparsity_rule(name):
    rule = PRIMITIVES[name].sparsity
    assert rule in GENERIC or isinstance(rule, Moves) or callable(rule), (
        f"row {name!r} has no sparsity rule (got {rule!r}): give its Primitive(...) a "
        "sparsity= (ELEMENTWISE, REDUCTION, MOVES/moves(k), DENSE, or a function; see "
        "core/primitive.py); DENSE is always sound")


def _pattern(prim, case, ops):
    """The rule's pattern (output elements x input elements, all outputs one after the
    other), every differentiated operand unknown, the others known."""
    ins, offset = [], 0
    for i, op in enumerate(ops):
        aval = aval_of(op)
        if i in case.diff_positions:
            ins.append(Abstract(aval, UNKNOWN, Deps.identity(aval.shape, offset)))
            offset += int(np.size(op))
        else:
            ins.append(Abstract(aval, op, None))
    eqn = types.SimpleNamespace(prim=prim, params=case.params)
    outs = Analysis().apply(eqn, ins)
    values = prim.impl(*ops, **case.params)
    values = list(values) if prim.multiple_results else [values]
    rows = []
    for o, v in zip(outs, values):
        size = int(np.size(v))      # a length known only at run time: the value's
        if o.deps is None:
            rows += [set()] * size
            continue
        if not o.deps.known_shape:
            assert o.deps.is_uniform, "a Deps of unknown shape must be uniform"
            rows += [set(o.deps.cols.tolist())] * size
            continue
        indptr, idx = o.deps.csr()
        rows += [set(idx[indptr[e]:indptr[e + 1]].tolist()) for e in range(size)]
    return rows, offset


def _jacobian_nonzeros(prim, case, ops):
    """Boolean (outputs, inputs): where the jvp rule's Jacobian is nonzero."""
    cols = []
    diff = case.diff_positions
    for i in diff:
        for e in range(int(np.size(ops[i]))):
            units = [1.0] + ([1j] if np.iscomplexobj(ops[i]) else [])
            hit = None
            for u in units:
                tans = [Zero(aval_of(o)) for o in ops]
                t = np.zeros(np.shape(ops[i]), np.asarray(ops[i]).dtype)
                t.reshape(-1)[e] = u
                tans[i] = t if np.ndim(ops[i]) else t[()]
                _, dot = prim.jvp(tuple(ops), tuple(tans), **case.params)
                dots = list(dot) if prim.multiple_results else [dot]
                outs = prim.impl(*ops, **case.params)
                outs = list(outs) if prim.multiple_results else [outs]
                flat = np.concatenate([
                    np.zeros(np.size(o), bool) if isinstance(d, Zero) or d is None
                    else (np.abs(np.asarray(d, complex if np.iscomplexobj(d) else float))
                          .reshape(-1) > 0) if np.asarray(o).dtype.kind in "fc"
                    else np.zeros(np.size(o), bool)
                    for o, d in zip(outs, dots)])
                hit = flat if hit is None else hit | flat
            cols.append(hit)
    return np.stack(cols, axis=1) if cols else None


def _float_cases(name):
    spec = SPECS.get(name)
    if spec is None:
        return []
    return [c for c in spec.cases if spec.mode_of(c) == DIFF and c.dtype == np.float64
            and not c.params.get("dtype")]


SOUND = [n for n in ALL_NAMES if PRIMITIVES[n].differentiable and callable(PRIMITIVES[n].jvp)
         and _float_cases(n)]


@pytest.mark.parametrize("name", SOUND, ids=SOUND)
def test_rule_holds_every_nonzero_of_the_jacobian(name):
    prim = PRIMITIVES[name]
    failures = []
    for case in _float_cases(name):
        base = case.operands(name)
        rng = np.random.default_rng(zlib.crc32(f"sparsity:{name}:{case.id}".encode()))
        points = [base]
        other = list(base)
        for i in case.diff_positions:       # a second point: other values, same structure
            other[i] = np.asarray(base[i]) + 0.01 * random_like(base[i], rng).astype(
                np.asarray(base[i]).dtype) if np.ndim(base[i]) else base[i]
        if case.tangent is None:
            points.append(other)
        rows, n = _pattern(prim, case, base)
        allowed = np.zeros((len(rows), n), bool)
        for r, s in enumerate(rows):
            allowed[r, sorted(s)] = True
        for ops in points:
            try:
                with np.errstate(all="ignore"):
                    nz = _jacobian_nonzeros(prim, case, ops)
            except Exception:   # noqa: BLE001 - a point outside the row's domain
                continue
            if nz is None:
                continue
            missed = nz & ~allowed
            if missed.any():
                failures.append(f"{case.id}: the rule misses {np.argwhere(missed)[:5].tolist()}"
                                f" (output, input) of the Jacobian")
    assert not failures, "\n".join(failures)


EXACT = [n for n in SOUND if PRIMITIVES[n].sparsity in (ELEMENTWISE, REDUCTION)
         or isinstance(PRIMITIVES[n].sparsity, Moves)]


# rows whose derivative in an operand vanishes on whole regions (a max's loser, a clip at
# its bound, fmod's d/dy = -trunc(x/y) where |x| < |y|): the rule's pattern is the union
# over every point, which no two points need show
STEPPED = ("abs", "clip", "maximum", "minimum", "where", "sign", "fmax", "fmin", "heaviside",
           "fmod", "remainder", "floor_divide")


@pytest.mark.parametrize("name", EXACT, ids=EXACT)
def test_generic_rule_is_exact_where_nothing_is_zero(name):
    """A generic rule (elementwise, a reduction, a move) gives the Jacobian's pattern itself
    (no over-approximation) wherever the Jacobian has no accidental zero: checked on the
    cases whose rule pattern and Jacobian agree on each row's count at least once."""
    prim = PRIMITIVES[name]
    checked = 0
    for case in _float_cases(name):
        ops = case.operands(name)
        with np.errstate(all="ignore"):
            try:
                nz = _jacobian_nonzeros(prim, case, ops)
            except Exception:   # noqa: BLE001
                continue
        if nz is None:
            continue
        rows, n = _pattern(prim, case, ops)
        allowed = np.zeros((len(rows), n), bool)
        for r, s in enumerate(rows):
            allowed[r, sorted(s)] = True
        assert not (nz & ~allowed).any()
        extra = allowed & ~nz
        checked += 1
        if name in STEPPED:
            continue
        # over-approximation only where the derivative happens to vanish at this point:
        # a second point must fill it in
        if extra.any():
            rng = np.random.default_rng(1)
            ops2 = [np.asarray(o) + 0.01 * random_like(o, rng) if i in case.diff_positions
                    and np.ndim(o) else o for i, o in enumerate(ops)]
            with np.errstate(all="ignore"):
                try:
                    nz2 = _jacobian_nonzeros(prim, case, ops2)
                except Exception:   # noqa: BLE001
                    continue
            extra = extra & ~nz2
        assert extra.sum() <= max(1, allowed.sum() // 4), (
            f"{case.id}: the rule claims {int(extra.sum())} dependencies the Jacobian lacks "
            f"at two points: {np.argwhere(extra)[:5].tolist()}")
    assert checked or not _float_cases(name)
