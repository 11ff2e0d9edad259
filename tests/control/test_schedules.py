"""The checkpointing schedules alone (``wengert/control/schedules.py``): their
actions are valid (``count`` replays them on positions), and the states they
store and the steps they recompute match the closed forms: CTZ's
``floor(log2 n) + 1`` states and ``sum(lowbit(j) - 1)`` recomputations;
Revolve's binomial optimum, checked against a dynamic program over every way
of splitting the steps.
"""
import functools
import inspect
import math

import pytest

from wengert.control.schedules import (
    ADVANCE, REVERSE, STORE, CTZ, SWEEP_FUNCTIONS, SWEEP_HELPERS, Binomial, binomial_optimum,
    count, ctz_recomputations, schedule_of)

CTZ_NS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 1000, 1024]


def _lowbit(j):
    return j & -j


@pytest.mark.parametrize("n", CTZ_NS, ids=lambda n: f"n={n}")
def test_ctz_stores_log_n_states_and_recomputes_the_lowbit_sum(n):
    c = count(CTZ(), n)
    bound = math.floor(math.log2(n)) + 1 if n else 0
    assert c.max_held <= bound and c.max_stored <= bound
    if n and n & (n - 1) == 0:
        assert c.max_held == bound                      # tight at powers of two
    assert c.forward_advances == n
    # from the latest stored state, reaching s_{j-1} after reversing step j
    # takes lowbit(j) - 1 steps
    assert c.recomputed == sum(_lowbit(j) - 1 for j in range(1, n))
    assert c.recomputed == ctz_recomputations(n)
    assert c.max_repeats <= max(bound - 1, 0)           # each step O(log n) times


@pytest.mark.parametrize("k", range(1, 12), ids=lambda k: f"n=2^{k}")
def test_ctz_recomputations_at_powers_of_two(k):
    # half the steps once, a quarter twice...: k 2^(k-1) - (2^k - 1)
    assert count(CTZ(), 2 ** k).recomputed == k * 2 ** (k - 1) - (2 ** k - 1)


def test_ctz_forward_sweep_does_not_need_n():
    # the forward sweep of n steps is the start of the one of m > n steps
    long = list(CTZ().forward(300))
    for n in (1, 2, 7, 8, 100, 257):
        short = list(CTZ().forward(n))
        assert long[:len(short)] == short
    # the seed's example: after 16 steps, 0, 8, 12 and 14 are stored (15 is current)
    assert CTZ().stored(16) == (0, 8, 12, 14)


def _optimum_by_search(n, s):
    """The fewest advances to reverse n steps with s states, over every split
    (Griewank's recursion: advance m steps, store, reverse the right part
    with one state fewer, then the left part)."""
    @functools.lru_cache(None)
    def t(length, c):
        if length <= 1:
            return 0
        if c == 1:
            return length * (length - 1) // 2
        return min(m + t(length - m, c - 1) + t(m, c) for m in range(1, length))
    return t(n, s)


def _optimum_closed_form(n, s):
    """r n - C(s + r, s + 1), with r the least integer such that C(s + r, s) >= n."""
    if n <= 1:
        return 0
    r = 0
    while math.comb(s + r, s) < n:
        r += 1
    return r * n - math.comb(s + r, s + 1)


@pytest.mark.parametrize("s", [1, 2, 3, 5, 8], ids=lambda s: f"s={s}")
def test_binomial_matches_the_optimum_found_by_search(s):
    for n in [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 40, 64]:
        c = count(Binomial(s), n)
        assert c.max_stored <= s
        # advances, the output step aside (Revolve does it in its first turn)
        assert c.forward_advances - 1 + c.recomputed == _optimum_by_search(n, s) or n == 0
        assert _optimum_by_search(n, s) == _optimum_closed_form(n, s)


@pytest.mark.parametrize("n,s", [(100, 3), (1000, 5), (1000, 20), (4096, 10), (5000, 2)],
                         ids=lambda v: str(v))
def test_binomial_matches_the_closed_form(n, s):
    c = count(Binomial(s), n)
    assert c.max_stored <= s
    assert c.forward_advances == n
    assert c.recomputed == _optimum_closed_form(n, s) - (n - 1)
    assert binomial_optimum(n, s) == _optimum_closed_form(n, s)


def test_binomial_default_budget_is_ctz_memory_with_fewer_recomputations():
    for n in (5, 16, 100, 1000):
        b, c = count(Binomial(), n), count(CTZ(), n)
        assert b.max_stored <= n.bit_length()
        assert b.recomputed <= c.recomputed


def test_count_rejects_invalid_schedules():
    class Skips(CTZ):
        def reverse(self, n):
            for kind, k in super().reverse(n):
                if (kind, k) != (REVERSE, 1):
                    yield kind, k

    class StoresLate(CTZ):
        def forward(self, n):
            yield ADVANCE, 0
            yield STORE, 0

    with pytest.raises(AssertionError, match="reverse step 0, expected 1"):
        count(Skips(), 4)
    with pytest.raises(AssertionError, match="store 0 at position 1"):
        count(StoresLate(), 2)


def test_schedule_arguments_are_checked():
    assert schedule_of(None) is None
    assert schedule_of("ctz") == CTZ() and schedule_of("binomial", 4) == Binomial(4)
    with pytest.raises(ValueError, match="chooses its own"):
        schedule_of("ctz", 5)
    with pytest.raises(ValueError, match="needs a schedule"):
        schedule_of(None, 5)
    with pytest.raises(ValueError, match="must be None, 'ctz' or 'binomial'"):
        schedule_of("revolve")
    with pytest.raises(ValueError, match="positive int"):
        Binomial(0)


# --- the sweeps generated code defines (issue 27) ----------------------------------------
@pytest.mark.parametrize("kind", ["ctz", "binomial"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16, 33])
def test_the_sweep_functions_run_alone_and_are_the_schedules(kind, n):
    """Generated code defines the schedule's sweeps from their text (``SWEEP_FUNCTIONS``,
    ``SWEEP_HELPERS``: plain Python reading only ``math``): exec'd in a namespace with
    nothing of wengert's, they give the schedule objects' actions."""
    ns = {"math": math}
    for f in SWEEP_HELPERS[kind] + SWEEP_FUNCTIONS[kind]:
        exec(inspect.getsource(f), ns)
    obj = CTZ() if kind == "ctz" else Binomial(3)
    extra = () if kind == "ctz" else (3,)
    fwd, stored, rev = (ns[f.__name__] for f in SWEEP_FUNCTIONS[kind])
    assert list(fwd(n, *extra)) == list(obj.forward(n))
    assert tuple(stored(n, *extra)) == tuple(obj.stored(n))
    assert list(rev(n, *extra)) == list(obj.reverse(n))
    if n:
        count(obj, n)               # the actions are valid
