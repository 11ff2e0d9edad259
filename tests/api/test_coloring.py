"""Colorings and recovery (``api/coloring.py``) on random and structured patterns: a column
coloring never gives two columns of one color a shared row (a row coloring: two rows a shared
column); a star coloring keeps every off-diagonal nonzero alone of its color in its row or
its column; each ``recover_*`` reads every nonzero of a random matrix of the pattern back
from its compressed product exactly; the color counts on known patterns (3 for a
tridiagonal, 5 for the 2-D five-point stencil, at most 3 for an arrowhead's star coloring,
1 + 2 passes for an arrowhead split between the modes)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from wengert.api import coloring as C

SEEDS = range(12)


def _csr(mask):
    m = sp.csr_array(mask.astype(bool))
    m.sort_indices()
    return m.indptr.astype(np.int64), m.indices.astype(np.int64), m.shape


def _random(seed, m=None, n=None, density=None):
    rng = np.random.default_rng(seed)
    m = m or int(rng.integers(1, 40))
    n = n or int(rng.integers(1, 40))
    density = density or float(rng.uniform(0.02, 0.4))
    return rng.random((m, n)) < density


def _seeds(colors, size):
    k = int(colors.max(initial=-1)) + 1
    s = np.zeros((size, k))
    hit = colors >= 0
    s[np.nonzero(hit)[0], colors[hit]] = 1.0
    return s


@pytest.mark.parametrize("seed", SEEDS)
def test_column_and_row_colorings_are_valid_and_recover(seed):
    mask = _random(seed)
    p = _csr(mask)
    cols = C.column_coloring(*p)
    assert cols.shape == (mask.shape[1],) and (cols >= 0).all()
    for c in range(cols.max(initial=-1) + 1):
        assert (mask[:, cols == c].sum(axis=1) <= 1).all(), "two columns of a color share a row"
    rows = C.row_coloring(*p)
    for c in range(rows.max(initial=-1) + 1):
        assert (mask[rows == c].sum(axis=0) <= 1).all(), "two rows of a color share a column"
    rng = np.random.default_rng(seed + 100)
    j = np.where(mask, rng.normal(size=mask.shape), 0.0)
    want = j[mask]          # row-major, as CSR
    fwd = (j @ _seeds(cols, mask.shape[1])).T.reshape(-1)
    np.testing.assert_array_equal(fwd[C.recover_columns(*p, cols)], want)
    rev = (_seeds(rows, mask.shape[0]).T @ j).reshape(-1)
    np.testing.assert_array_equal(rev[C.recover_rows(*p, rows)], want)


@pytest.mark.parametrize("seed", SEEDS)
def test_star_coloring_is_valid_and_recovers(seed):
    mask = _random(seed, density=0.15)
    n = min(mask.shape)
    sym = mask[:n, :n] | mask[:n, :n].T | np.eye(n, dtype=bool)
    p = _csr(sym)
    colors = C.star_coloring(*p)
    assert C.valid_star(*p, colors)
    off = sym & ~np.eye(n, dtype=bool)
    r, c = np.nonzero(off)
    assert (colors[r] != colors[c]).all(), "a star coloring is a proper coloring"
    rng = np.random.default_rng(seed)
    h = np.where(sym, rng.normal(size=sym.shape), 0.0)
    h = np.triu(h) + np.triu(h, 1).T
    hs = (h @ _seeds(colors, n)).T.reshape(-1)
    np.testing.assert_allclose(hs[C.recover_star(*p, colors)], h[sym], rtol=0, atol=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_split_coloring_recovers(seed):
    mask = _random(seed)
    mask[0] = True              # a dense row: reverse mode reads it
    p = _csr(mask)
    cols, rows = C.split_coloring(*p)
    fwd_rows = rows < 0
    for c in range(cols.max(initial=-1) + 1):
        assert (mask[fwd_rows][:, cols == c].sum(axis=1) <= 1).all()
    rng = np.random.default_rng(seed)
    j = np.where(mask, rng.normal(size=mask.shape), 0.0)
    fwd = (j @ _seeds(cols, mask.shape[1])).T.reshape(-1)
    rev = (_seeds(rows, mask.shape[0]).T @ j).reshape(-1)
    kf = int(cols.max(initial=-1)) + 1
    both = np.concatenate([fwd, rev])
    np.testing.assert_array_equal(both[C.recover_split(*p, cols, rows, kf)], j[mask])


def _stencil2d(k):
    n = k * k
    mask = np.zeros((n, n), bool)
    for i in range(k):
        for j in range(k):
            r = i * k + j
            for di, dj in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= i + di < k and 0 <= j + dj < k:
                    mask[r, (i + di) * k + j + dj] = True
    return mask


def test_known_color_counts():
    tri = np.eye(30, dtype=bool) | np.eye(30, k=1, dtype=bool) | np.eye(30, k=-1, dtype=bool)
    assert C.column_coloring(*_csr(tri)).max() + 1 == 3
    assert C.column_coloring(*_csr(_stencil2d(12))).max() + 1 == 5
    arrow = np.eye(20, dtype=bool)
    arrow[0] = arrow[:, 0] = True
    assert C.column_coloring(*_csr(arrow)).max() + 1 == 20
    assert C.star_coloring(*_csr(arrow)).max() + 1 <= 3
    cols, rows = C.split_coloring(*_csr(arrow))
    assert (cols.max() + 1) + (rows.max() + 1) <= 3


def test_transpose_roundtrip():
    mask = _random(3)
    p = _csr(mask)
    t = C.transpose(*p)
    assert t[2] == mask.T.shape
    back = np.zeros(mask.T.shape, bool)
    back[np.repeat(np.arange(t[2][0]), np.diff(t[0])), t[1]] = True
    assert (back == mask.T).all()
