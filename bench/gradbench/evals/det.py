"""GradBench ``det``: the determinant by expansion by minors, and its gradient.

The expansion goes along the first row, recursively:

    det M = sum_j (-1)^j M[0, j] det(M without row 0 and column j).

Written as the recursion, it computes the same minor again for every order in
which its columns were removed: ell! products, minutes in Python at ell = 11.
Here every minor is computed once, bottom-up: the minors of the last k rows
are indexed by their set of k columns, and each is the expansion along its
first row over minors of the last k - 1 rows. That is the same expansion, the
same terms, with ell * 2^(ell-1) products. ``make_input()`` gives the largest
size the eval sends by default (ell = 11).
"""
import functools
import itertools

import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled


@functools.lru_cache
def minor_tables(ell):
    """For k = 2..ell, two integer arrays over the column sets of size k (in
    ``itertools.combinations`` order): ``cols[s, p]``, the p-th column of set
    s, and ``sub[s, p]``, the position of set s without that column among the
    sets of size k - 1. Plain integers: they depend on ell only."""
    tables = []
    previous = {(j,): j for j in range(ell)}
    for k in range(2, ell + 1):
        sets = list(itertools.combinations(range(ell), k))
        cols = np.array(sets)
        sub = np.array([[previous[s[:p] + s[p + 1:]] for p in range(k)] for s in sets])
        tables.append((cols, sub))
        previous = {s: i for i, s in enumerate(sets)}
    return tables


def det(A):
    ell = A.shape[0]
    minors = A[ell - 1]                  # the 1x1 minors of the last row
    for cols, sub in minor_tables(ell):
        k = cols.shape[1]
        signs = (-1.0) ** np.arange(k)
        minors = np.sum(signs * A[ell - k][cols] * minors[sub], axis=1)
    return minors[0]


def _prepare(input):
    ell = int(input["ell"])
    return (np.array(input["A"], dtype=np.float64).reshape(ell, ell),)


def _flat(gradient):
    return gradient.ravel().tolist()


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    return {
        "primal": Function(_prepare, compiled(det, backend), float),
        "gradient": Function(_prepare, wg.grad(det, **ad), _flat),
    }


def make_input(ell=11, seed=0):
    A = np.random.default_rng(seed).random(ell * ell)
    return {"A": A.tolist(), "ell": ell, "min_runs": 1, "min_seconds": 0.0}
