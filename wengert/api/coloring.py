"""Graph colorings of sparsity patterns, and the seeds and recovery they give a sparse
Jacobian or Hessian (``api/sparse.py``).

A pattern is CSR: ``(indptr, indices, shape)``, each row's columns sorted and distinct.

* ``column_coloring``: columns of one color share no row, so ``J @ S`` (``S[j, c] = 1`` where
  column ``j`` has color ``c``) holds every nonzero once: ``J[i, j] = (J S)[i, color[j]]``.
  A distance-2 coloring of the columns (Gebremedhin, Manne, Pothen, "What color is your
  Jacobian?", SIAM Review 2005): the best of a greedy coloring in natural order and one by
  saturation (DSATUR, Brelaz 1979), which colors the 2-D five-point stencil with 5.
* ``row_coloring``: the same of the rows, for ``S^T J`` (reverse mode).
* ``star_coloring``: of a symmetric pattern's graph (an edge per off-diagonal nonzero), a
  proper coloring in which every path on four vertices has three colors: each pair of colors
  spans a forest of stars, so each nonzero ``H[i, j]`` is alone of its color in row ``i`` or
  in row ``j`` (the star's centre) and is read from ``H S`` directly. An arrowhead needs 2
  or 3 colors where a column coloring needs ``n``.
* ``split_coloring``: both modes (``bidirectional=True``): the longest rows are read by
  reverse mode (``S^T J``, a row coloring of theirs), the others by forward mode (a column
  coloring of the rest); as many rows go to reverse mode as minimises the passes' lower
  bound (rows taken + the longest row left). An arrowhead (a dense row and a dense column)
  takes 1 + 2 passes where either mode alone takes ``n``.

``recover_*`` give, for each nonzero of the pattern (CSR order), its place in the flattened
compressed product(s): the decompression is one fancy index.

Layer: api.
"""
from __future__ import annotations

import heapq

import numpy as np

from ..core.deps import sorted_unique

__all__ = ["column_coloring", "row_coloring", "star_coloring", "split_coloring", "transpose",
           "recover_columns", "recover_rows", "recover_star", "recover_split", "valid_star",
           "MAX_PAIRS"]

# a column graph with more edges than this is not built: its columns get a color each
# (a pattern with a dense row needs as many forward colors as the row has nonzeros)
MAX_PAIRS = 2 ** 26


def transpose(indptr, indices, shape):
    """The CSR pattern of the transpose."""
    m, n = shape
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((rows, indices))
    counts = np.bincount(indices, minlength=n)
    t_indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=t_indptr[1:])
    return t_indptr, rows[order], (n, m)


def _expand(indptr, indices, sel):
    """For each k, the entries of row ``sel[k]``: (k repeated, their columns)."""
    lengths = indptr[sel + 1] - indptr[sel]
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    pos = np.arange(total, dtype=np.int64) + np.repeat(indptr[sel] - (ends - lengths), lengths)
    return np.repeat(np.arange(len(sel), dtype=np.int64), lengths), indices[pos]


def _adjacency(edges_a, edges_b, n):
    """Adjacency lists (Python lists) of an undirected graph on ``n`` vertices."""
    keep = edges_a != edges_b
    keys = sorted_unique(np.concatenate([edges_a[keep] * n + edges_b[keep],
                                     edges_b[keep] * n + edges_a[keep]]))
    a, b = np.divmod(keys, n)
    bounds = np.searchsorted(a, np.arange(n + 1))
    flat = b.tolist()
    return [flat[bounds[v]:bounds[v + 1]] for v in range(n)]


def _orders(adj):
    """Vertex orders to try: natural, largest degree first, smallest last."""
    n = len(adj)
    degree = np.array([len(a) for a in adj])
    natural = list(range(n))
    largest = np.argsort(-degree, kind="stable").tolist()
    return [natural, largest, _smallest_last(adj, degree)]


def _smallest_last(adj, degree):
    """Repeatedly take out a vertex of least degree in what remains; the reverse order."""
    n = len(adj)
    deg = degree.tolist()
    buckets = [set() for _ in range(max(deg, default=0) + 1)]
    for v in range(n):
        buckets[deg[v]].add(v)
    gone, order, low = [False] * n, [], 0
    for _ in range(n):
        low = max(low - 1, 0)
        while not buckets[low]:
            low += 1
        v = buckets[low].pop()
        gone[v] = True
        order.append(v)
        for w in adj[v]:
            if not gone[w]:
                buckets[deg[w]].discard(w)
                deg[w] -= 1
                buckets[deg[w]].add(w)
    return order[::-1]


def _greedy(adj, order):
    """Each vertex in turn takes the least color no neighbor has."""
    color = [-1] * len(adj)
    for v in order:
        taken = {color[w] for w in adj[v]}
        c = 0
        while c in taken:
            c += 1
        color[v] = c
    return color


def _best(colorings):
    return np.asarray(min(colorings, key=lambda c: (max(c, default=-1), c)), np.int64)


def column_coloring(indptr, indices, shape):
    """Colors of the columns (one int each, from 0) such that no two columns of one color
    have a nonzero in the same row."""
    m, n = shape
    lengths = np.diff(indptr)
    if int((lengths.astype(np.int64) ** 2).sum()) > MAX_PAIRS:
        return np.arange(n, dtype=np.int64)
    rows = np.repeat(np.arange(m, dtype=np.int64), lengths)
    first, second = _expand(indptr, indices, rows)
    adj = _adjacency(indices[first], second, n)
    return _best([_greedy(adj, range(n)), _saturation(adj)])


def _saturation(adj):
    """DSATUR: next, the uncolored vertex with the most distinct colors among its
    neighbors (the most degree among those), given the least color none of them has."""
    n = len(adj)
    color = [-1] * n
    near = [set() for _ in range(n)]
    heap = [(0, -len(adj[v]), v) for v in range(n)]
    heapq.heapify(heap)
    while heap:
        sat, _, v = heapq.heappop(heap)
        if color[v] >= 0 or -sat != len(near[v]):
            continue                # colored, or an entry made before it gained a color
        c = 0
        while c in near[v]:
            c += 1
        color[v] = c
        for w in adj[v]:
            if color[w] < 0 and c not in near[w]:
                near[w].add(c)
                heapq.heappush(heap, (-len(near[w]), -len(adj[w]), w))
    return color


def row_coloring(indptr, indices, shape):
    """Colors of the rows such that no two rows of one color share a column."""
    return column_coloring(*transpose(indptr, indices, shape))


def _star(adj, order):
    """A greedy star coloring of the graph ``adj`` in ``order``: a proper coloring where no
    path on four vertices has two colors. Coloring ``v``, a color is refused where it would
    close such a path: a neighbor's (proper); that of ``x`` on ``v - w - x - y`` where
    ``y`` has ``w``'s color (``bad[w]``); that of any neighbor ``x`` of ``w`` on
    ``u - v - w - x`` where ``u`` and ``w`` have one color (two neighbors of ``v`` alike)."""
    n = len(adj)
    color = [-1] * n
    seen = [dict() for _ in range(n)]       # v -> {color: colored neighbors of that color}
    bad = [set() for _ in range(n)]
    for v in order:
        refused, alike = set(), {}
        for w in adj[v]:
            c = color[w]
            if c >= 0:
                refused.add(c)
                refused |= bad[w]
                alike[c] = alike.get(c, 0) + 1
        for w in adj[v]:
            if color[w] >= 0 and alike[color[w]] > 1:
                refused.update(seen[w])
        c = 0
        while c in refused:
            c += 1
        color[v] = c
        for x in adj[v]:                    # v now closes paths through its neighbors
            counts = seen[x]
            counts[c] = counts.get(c, 0) + 1
            if color[x] >= 0 and counts[c] == 2:
                for w in adj[x]:
                    if color[w] == c:
                        bad[w].add(color[x])
            elif color[x] >= 0 and counts[c] > 2:
                bad[v].add(color[x])
        for c2, k in seen[v].items():       # and v is an x of its neighbors' paths
            if k >= 2:
                for w in adj[v]:
                    if color[w] == c2:
                        bad[w].add(c)
    return color


def star_coloring(indptr, indices, shape):
    """Colors (one per vertex) of a star coloring of the symmetric pattern's graph."""
    n = shape[0]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    adj = _adjacency(rows, indices.astype(np.int64), n)
    return _best([_star(adj, order) for order in _orders(adj)])


def split_coloring(indptr, indices, shape):
    """(column colors, row colors): the rows with a color (>= 0) are read by reverse mode,
    the columns' colors read the other rows by forward mode (``split_coloring`` above)."""
    m, n = shape
    lengths = np.diff(indptr)
    order = np.argsort(-lengths, kind="stable")
    bound = np.arange(m + 1) + np.append(lengths[order], 0)     # rows taken + longest left
    taken = order[:int(np.argmin(bound))]
    reverse = np.zeros(m, bool)
    reverse[taken] = True
    row_colors = np.full(m, -1, np.int64)
    if len(taken):
        sub = _rows(indptr, indices, taken)
        row_colors[taken] = row_coloring(*sub, (len(taken), n))
    rest = _rows(indptr, indices, np.nonzero(~reverse)[0])
    col_colors = column_coloring(*rest, (m - len(taken), n))
    return col_colors, row_colors


def _rows(indptr, indices, which):
    """(indptr, indices) of the rows ``which`` of a CSR pattern."""
    lengths = indptr[which + 1] - indptr[which]
    sub_indptr = np.zeros(len(which) + 1, np.int64)
    np.cumsum(lengths, out=sub_indptr[1:])
    return sub_indptr, _expand(indptr, indices, which)[1]


# --- recovery: each nonzero's place in the compressed products -------------------
def _rows_of(indptr):
    return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))


def recover_columns(indptr, indices, shape, colors):
    """Where ``J[i, j]`` is in ``(J S)^T`` flattened (``colors`` x rows)."""
    return colors[indices] * shape[0] + _rows_of(indptr)


def recover_rows(indptr, indices, shape, colors):
    """Where ``J[i, j]`` is in ``S^T J`` flattened (``colors`` x columns)."""
    return colors[_rows_of(indptr)] * shape[1] + indices


def _alone(rows, cols_colors, n_rows, n_colors):
    """Whether each entry is the only one of its color in its row."""
    key = rows * n_colors + cols_colors
    return np.bincount(key, minlength=n_rows * n_colors)[key] == 1


def recover_star(indptr, indices, shape, colors):
    """Where ``H[i, j]`` is in ``(H S)^T`` flattened: row ``i`` at ``j``'s color where ``j``
    is alone of it in row ``i``, else row ``j`` at ``i``'s color."""
    n = shape[0]
    k = int(colors.max(initial=-1)) + 1
    rows = _rows_of(indptr)
    alone = _alone(rows, colors[indices], n, k)
    return np.where(alone, colors[indices] * n + rows, colors[rows] * n + indices)


def recover_split(indptr, indices, shape, col_colors, row_colors, kf):
    """Where ``J[i, j]`` is in the ``kf`` rows of ``(J S)^T`` flattened followed by ``S^T J``
    flattened (``split_coloring``: the rows with a color are read from ``S^T J``)."""
    m, n = shape
    rows = _rows_of(indptr)
    by_row = row_colors[rows]
    return np.where(by_row >= 0, kf * m + by_row * n + indices, col_colors[indices] * m + rows)


def valid_star(indptr, indices, shape, colors):
    """Whether every off-diagonal nonzero is alone of its color in its row or its column
    (the star coloring's promise, which ``recover_star`` relies on)."""
    n = shape[0]
    k = int(colors.max(initial=-1)) + 1
    rows = _rows_of(indptr)
    off = rows != indices
    alone = _alone(rows, colors[indices], n, k)
    t_alone = np.zeros_like(alone)
    order = np.lexsort((rows, indices))          # the transpose's entries, mapped back
    t_indptr, t_rows, _ = transpose(indptr, indices, shape)
    t_alone[order] = _alone(_rows_of(t_indptr), colors[t_rows], n, k)
    return bool(np.all(~off | alone | t_alone)) and bool(
        np.all(colors[rows[off]] != colors[indices[off]]))
