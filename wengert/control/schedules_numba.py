"""The checkpointing schedules' sweeps in the Python that numba compiles: the twins of
``schedules.py``'s sweep functions, which a writer for numba calls instead
(``checkpoint_emit.py``, ``checkpoint_while.py``: ``code.define(fn, deps, twin)``).

Each twin yields (or returns) the same actions, as pairs of ints, as the function it
stands for (``tests/control/test_schedules_numba.py`` runs both, as plain Python),
spelled without what numba's subset lacks: no ``yield from`` (``_reach`` written
out), no set, no tuple of varying length (the stored positions are an int64 array),
no ``int.bit_length`` and no ``math.comb`` (``bit_length_nb``, ``comb_nb``: loops over
ints), and the binomial schedule's task stack a list of 4-tuples of ints
``(kind, a, b, c)`` (kind 0: reverse ``a..b`` with ``c`` states; 1: free ``a``).
A twin calls the other functions of this module only: the numba backend compiles
a twin together with those it calls (``backends/numba/twins.py``) and writes their
text into the generated code, which therefore still runs as Python alone.

Layer: control.
"""
from __future__ import annotations

import numpy as np

__all__ = ["TWINS", "bit_length_nb", "comb_nb", "positions_nb", "ctz_online_nb", "ctz_forward_nb",
           "ctz_stored_nb", "ctz_reverse_nb", "binomial_actions_nb", "binomial_forward_nb",
           "binomial_stored_nb", "binomial_reverse_nb"]


def bit_length_nb(k):
    """``k.bit_length()`` of an int ``k >= 0``."""
    n = 0
    while k > 0:
        k >>= 1
        n += 1
    return n


def comb_nb(c, r):
    """``C(c + r, c)`` (0 for ``r < 0``): the most steps ``c`` stored states reverse with
    ``r`` repetitions, as ``schedules._beta``; each partial product is a binomial
    coefficient, so the integer division is exact."""
    if r < 0:
        return 0
    out = 1
    for i in range(1, r + 1):
        out = out * (c + i) // i
    return out


def positions_nb(values):
    """The ints ``values`` (a list, a dict's keys: a few) as an int64 array, ascending
    (sorted by insertion: numba compiles ``sorted`` for seconds)."""
    n = 0
    for _ in values:
        n += 1
    out = np.empty(n, np.int64)
    m = 0
    for v in values:
        i = m
        while i > 0 and out[i - 1] > v:
            out[i] = out[i - 1]
            i -= 1
        out[i] = v
        m += 1
    return out


# --- CTZ -----------------------------------------------------------------------------
def ctz_online_nb():
    """``schedules.ctz_online``: the forward sweep's actions for an unbounded loop."""
    stored = [0]
    stored.pop()        # (an empty list of ints)
    k = 0
    while True:
        if k > 0 and k % 2 == 0:
            for _ in range(bit_length_nb(k & -k) - 2):
                yield 3, stored.pop()
        if k % 2 == 0:
            stored.append(k)
            yield 1, k
        yield 0, k
        k += 1


def ctz_forward_nb(n):
    """``schedules.ctz_forward``: ``ctz_online_nb`` up to the advance of step n - 1."""
    stored = [0]
    stored.pop()
    for k in range(n):
        if k > 0 and k % 2 == 0:
            for _ in range(bit_length_nb(k & -k) - 2):
                yield 3, stored.pop()
        if k % 2 == 0:
            stored.append(k)
            yield 1, k
        yield 0, k


def ctz_stored_nb(n):
    """``schedules.ctz_stored``: the even prefixes of n - 1, ascending (an array)."""
    out = [0]
    out.pop()
    if n == 1:
        out.append(0)
    if n > 1:
        k = n - 1
        while True:
            if k % 2 == 0:
                out.append(k)
            if k == 0:
                break
            k &= k - 1
    return positions_nb(out)


def ctz_reverse_nb(n):
    """``schedules.ctz_reverse``: for each step j from n - 1 down, restore the latest
    stored state, recompute from it storing the prefixes of j, reverse step j, free j."""
    first = ctz_stored_nb(n)
    stored = [0]
    stored.pop()
    for p in first:
        stored.append(p)
    for j in range(n - 1, -1, -1):
        if j != n - 1:
            p = stored[-1]
            yield 2, p
            for q in range(p, j):
                if q > p and (j & ~((q & -q) - 1)) == q:
                    stored.append(q)
                    yield 1, q
                yield 0, q
        yield 4, j
        if len(stored) > 0 and stored[-1] == j:
            stored.pop()
            yield 3, j


# --- Binomial (Revolve) ----------------------------------------------------------------
def _repetitions_nb(n, s):
    r = 0
    while comb_nb(s, r) < n:
        r += 1
    return r


def _split_nb(length, c):
    """``schedules._split``: where to store the next state."""
    r = _repetitions_nb(length, c)
    return max(comb_nb(c, r - 2) + 1, length - comb_nb(c - 1, r))


def binomial_actions_nb(n, s):
    """``schedules.binomial_actions``: Revolve's whole sequence (``s`` None: the budget
    ``floor(log2 n) + 1``), its task stack a list of ``(kind, a, b, c)``."""
    if n > 0:
        current = 0
        if n > 1:
            yield 1, 0
        budget = max(1, bit_length_nb(n)) if s is None else s
        tasks = [(0, 0, n, budget)]
        while len(tasks) > 0:
            kind, a, b, c = tasks.pop()
            if kind == 1:
                yield 3, a
                continue
            if b - a == 1 or c == 1:
                for j in range(b - 1, a - 1, -1):
                    if current != a:
                        yield 2, a
                    for q in range(a, j):
                        yield 0, q
                    yield 4, j
                    current = j
                continue
            m = a + _split_nb(b - a, c)
            if current != a:
                yield 2, a
            for q in range(a, m):
                yield 0, q
            yield 1, m
            current = m
            # the right part first, with one state fewer; then the left part
            tasks.append((0, a, m, c))
            tasks.append((1, m, 0, 0))
            tasks.append((0, m, b, c - 1))


def binomial_forward_nb(n, s):
    """``schedules.binomial_forward``: the actions up to the first reverse step, then
    the advance of n - 1."""
    for kind, k in binomial_actions_nb(n, s):
        if kind == 4:
            break
        yield kind, k
    if n > 0:
        yield 0, n - 1


def binomial_stored_nb(n, s):
    """``schedules.binomial_stored``: positions stored after the forward sweep (an array)."""
    out = [0]
    out.pop()
    for kind, k in binomial_forward_nb(n, s):
        if kind == 1:
            out.append(k)
        elif kind == 3:
            out.remove(k)
    return positions_nb(out)


def binomial_reverse_nb(n, s):
    """``schedules.binomial_reverse``: the actions from the first reverse step on."""
    started = False
    for kind, k in binomial_actions_nb(n, s):
        started = started or kind == 4
        if started:
            yield kind, k


# each sweep function of ``schedules`` -> its twin (by name: ``checkpoint_emit``)
TWINS = {"ctz_online": ctz_online_nb, "ctz_forward": ctz_forward_nb,
         "ctz_stored": ctz_stored_nb, "ctz_reverse": ctz_reverse_nb,
         "binomial_forward": binomial_forward_nb, "binomial_stored": binomial_stored_nb,
         "binomial_reverse": binomial_reverse_nb}
