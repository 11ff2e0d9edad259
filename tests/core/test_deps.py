"""Index sets (``core/deps.py``, ``core/contraction.py``): each operation against the same
relation computed with Python sets, on random relations: ``gather`` (a move, -1 for none),
``combine`` (a union per element), ``relate`` (a relation's union), ``union``, ``stack``,
``dense``; a contraction leaves out the terms a constant operand's zeros remove."""
from __future__ import annotations

import numpy as np
import pytest

from wengert.core import deps as D
from wengert.core.contraction import contract
from wengert.core.ir import Aval


def _sets(d):
    if d is None:
        return None
    indptr, idx = d.csr()
    return [set(idx[indptr[e]:indptr[e + 1]].tolist()) for e in range(d.size)]


def _random_deps(rng, n, cols=20):
    rows = [sorted(set(rng.integers(0, cols, size=rng.integers(0, 4)).tolist()))
            for _ in range(n)]
    pairs_r = np.array([r for r, s in enumerate(rows) for _ in s], np.int64)
    pairs_c = np.array([c for s in rows for c in s], np.int64)
    d = D.relate((n,), D.Deps.identity((cols,)), pairs_r, pairs_c)
    return d, [set(s) for s in rows]


@pytest.mark.parametrize("seed", range(8))
def test_operations_match_sets(seed):
    rng = np.random.default_rng(seed)
    a, sa = _random_deps(rng, 7)
    b, sb = _random_deps(rng, 7)
    sel = rng.integers(-1, 7, size=5)
    assert _sets(D.gather((5,), a, sel)) == [sa[k] if k >= 0 else set() for k in sel]
    sel2 = rng.integers(-1, 7, size=5)
    want = [(sa[i] if i >= 0 else set()) | (sb[j] if j >= 0 else set())
            for i, j in zip(sel, sel2)]
    assert _sets(D.combine((5,), [(a, sel), (b, sel2)])) == want
    assert _sets(D.union(a, b)) == [x | y for x, y in zip(sa, sb)]
    out, ins = rng.integers(0, 3, size=9), rng.integers(0, 7, size=9)
    want = [set() for _ in range(3)]
    for o, i in zip(out, ins):
        want[o] |= sa[i]
    assert _sets(D.relate((3,), a, out, ins)) == want
    assert _sets(D.stack((7,), [a, None, b])) == sa + [set()] * 7 + sb
    every = set().union(*sa, *sb)
    assert _sets(D.dense((2,), a, b)) == [every, every]
    assert D.dense((2,), None) is None and D.union(None, a) is a


def test_sorted_unique():
    x = np.array([5, 1, 5, 3, 1, 9], np.int64)
    assert D.sorted_unique(x).tolist() == [1, 3, 5, 9]
    assert D.sorted_unique(np.zeros(0, np.int64)).tolist() == []


def test_contraction_leaves_out_constant_zeros():
    """``out[i] = sum_j a[i, j] x[j]`` with ``a`` a known band: ``out[i]`` reads only the
    ``x[j]`` where ``a[i, j] != 0``."""
    a = np.eye(4) + np.eye(4, k=1)
    x = D.Abstract(Aval((4,), np.float64), D.UNKNOWN, D.Deps.identity((4,)))
    known = D.Abstract(Aval((4, 4), np.float64), a, None)
    got = _sets(contract("ij,j->i", [known, x], (4,)))
    assert got == [{0, 1}, {1, 2}, {2, 3}, {3}]
    unknown = D.Abstract(Aval((4, 4), np.float64), D.UNKNOWN, D.Deps.identity((4, 4), 4))
    got = _sets(contract("ij,j->i", [unknown, x], (4,)))
    assert got == [set(range(4)) | {4 + 4 * i + j for j in range(4)} for i in range(4)]
