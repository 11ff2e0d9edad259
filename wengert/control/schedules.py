"""Checkpointing schedules: which states of a loop to store, which to recompute.

A loop of ``n`` steps has states ``s_0 .. s_n`` with ``s_{k+1} = step_k(s_k)``.
Its reverse sweep needs ``s_{n-1}``, then ``s_{n-2}``, ... ``s_0``. Storing
all of them costs memory proportional to ``n`` (seed 000's last paragraphs);
a schedule stores a few and recomputes the rest from the nearest stored one
(seed 004's last section). A schedule is a plain object with two methods
that yield *actions*, ``(kind, k)`` pairs of ints:

    ADVANCE k   the current state is s_k: run step k, it becomes s_{k+1}
    STORE k     keep the current state s_k (a reference: states are never
                mutated, so a store copies nothing)
    RESTORE k   the current state becomes the stored s_k
    FREE k      drop the stored s_k
    REVERSE k   the reverse step of step k; the current state is s_k

* ``forward(n)``: from ``s_0`` to ``s_n`` (exactly ``n`` ADVANCEs, in order),
  storing what the reverse sweep will need. The runner keeps the state
  before the last ADVANCE, ``s_{n-1}``: the reverse sweep starts from it.
* ``reverse(n)``: REVERSE n-1, ..., REVERSE 0 in this order, starting from
  the states ``forward(n)`` left stored and the current state ``s_{n-1}``.

``count(schedule, n)`` runs both on positions instead of states, checks that
every action is valid, and counts stored states and recomputed steps. The
schedules:

* ``CTZ()`` (seed 004): the stored states are the *prefixes* of the position
  (the position with its lowest bits cleared: 0, 8, 12, 14 for 15), at most
  ``floor(log2 n) + 1`` held at once, counting the current one. Going from
  position ``k - 1`` to ``k`` drops ``ctz(k) - 1`` of them (count of trailing
  zeros), so the forward sweep never needs ``n``: ``online()`` is the
  infinite stream of its actions. Reversing step ``j - 1`` after step ``j``
  recomputes ``lowbit(j) - 1`` steps, ``sum(lowbit(j) - 1 for j < n)`` in all:
  ``O(n log n)``, each step ``O(log n)`` times.
* ``Binomial(s)`` (Griewank's Revolve): ``s`` stored states; the fewest
  recomputations possible with ``s``, the binomial optimum
  ``t(n, s) = r n - C(s + r, s + 1)`` advances (forward sweep included, the
  step of the output excluded) where ``r`` is the least integer with
  ``C(s + r, s) >= n``. ``n`` must be known before the forward sweep.

Layer: control.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
import math

__all__ = ["ADVANCE", "STORE", "RESTORE", "FREE", "REVERSE", "ACTION_NAMES", "CTZ", "Binomial",
           "schedule_of", "count", "Counts", "binomial_optimum", "ctz_recomputations",
           "ctz_online", "ctz_forward", "ctz_stored", "ctz_reverse", "binomial_actions", "binomial_forward",
           "binomial_stored", "binomial_reverse", "SWEEP_FUNCTIONS", "SWEEP_HELPERS"]

ADVANCE, STORE, RESTORE, FREE, REVERSE = range(5)
ACTION_NAMES = ("advance", "store", "restore", "free", "reverse")


# --- CTZ -----------------------------------------------------------------------
def _ctz(k):
    """Count of trailing zero bits of k > 0."""
    return (k & -k).bit_length() - 1


@dataclass(frozen=True)
class CTZ:
    """Seed 004's schedule: O(log n) states, n not needed in advance."""

    def __repr__(self):
        return "ctz"

    def online(self):
        """The forward sweep's actions for an unbounded loop (``ctz_online``)."""
        return ctz_online()

    def forward(self, n):
        return ctz_forward(n)

    def stored(self, n):
        return ctz_stored(n)

    def reverse(self, n):
        return ctz_reverse(n)


# The sweeps of CTZ written with nothing but Python (the actions as their numbers):
# generated code defines these functions and loops over them, so it runs without
# wengert (``control/checkpoint_emit.py``); the schedule objects call them too.
def ctz_online():
    """The forward sweep's actions for an unbounded loop: the actions of step k depend on
    k only. Even positions are stored (1); entering an even position k frees (3) the
    ``ctz(k) - 1`` latest stored states, which are not prefixes of k (they are evicted
    only once step k is known to run, so the last step's prefixes survive); each step
    is advanced (0)."""
    stored = []
    k = 0
    while True:
        if k and k % 2 == 0:
            for _ in range((k & -k).bit_length() - 2):
                yield 3, stored.pop()
        if k % 2 == 0:
            stored.append(k)
            yield 1, k
        yield 0, k
        k += 1


def ctz_forward(n):
    """``online()`` up to the advance of step n - 1: even positions stored (1), the
    ``ctz(k) - 1`` latest freed (3) on entering an even position k, each step
    advanced (0)."""
    stored = []
    for k in range(n):
        if k and k % 2 == 0:
            for _ in range((k & -k).bit_length() - 2):
                yield 3, stored.pop()
        if k % 2 == 0:
            stored.append(k)
            yield 1, k
        yield 0, k


def ctz_stored(n):
    """Positions stored after ``ctz_forward(n)``, ascending: the even prefixes of n - 1."""
    if n <= 1:
        return (0,) if n == 1 else ()
    k, out = n - 1, set()
    while True:
        if k % 2 == 0:
            out.add(k)
        if k == 0:
            break
        k &= k - 1
    return tuple(sorted(out))


def ctz_reverse(n):
    """The reverse sweep: for each step j from n - 1 down, restore (2) the latest stored
    state (j with its trailing ones cleared), recompute from it, storing (1) the prefixes
    of j passed on the way, reverse step j (4), free (3) j where it was stored."""
    stored = list(ctz_stored(n))
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
        if stored and stored[-1] == j:
            stored.pop()
            yield 3, j


def ctz_recomputations(n):
    """The steps CTZ recomputes in the reverse sweep, in closed form:
    ``sum(lowbit(j) - 1 for j in 1..n-1)``, where the number of ``j <= m``
    with lowbit ``2^t`` is ``floor(m / 2^t) - floor(m / 2^(t+1))``."""
    m = n - 1
    if m <= 0:
        return 0
    total, t = 0, 0
    while (1 << t) <= m:
        total += (1 << t) * ((m >> t) - (m >> (t + 1)))
        t += 1
    return total - m


# --- Binomial (Revolve) --------------------------------------------------------------
def _beta(c, r):
    """C(c + r, c): the most steps c stored states reverse with r repetitions."""
    return math.comb(c + r, c) if r >= 0 else 0


def _repetitions(n, s):
    r = 0
    while _beta(s, r) < n:
        r += 1
    return r


def binomial_optimum(n, s):
    """Griewank's t(n, s): the fewest advances that reverse n steps with s
    stored states (forward sweep included; 0 for n <= 1)."""
    if n <= 1:
        return 0
    r = _repetitions(n, s)
    return r * n - _beta(s + 1, r - 1)


def _split(length, c):
    """Where to store the next state when reversing ``length`` steps from a
    stored state with ``c >= 2`` states: an offset ``m`` with
    ``m + t(length - m, c - 1) + t(m, c) == t(length, c)`` (the optimal
    binomial partition: the right part may repeat each step once more than
    the left, which keeps one more state)."""
    r = _repetitions(length, c)
    return max(_beta(c, r - 2) + 1, length - _beta(c - 1, r))


def _reach(current, a, j):
    """From state ``current``, reach state ``j`` from the stored state ``a``:
    restore it (2, unless it is the current one), then advance (0)."""
    if current != a:
        yield 2, a
    for q in range(a, j):
        yield 0, q


def binomial_actions(n, s):
    """Revolve's whole sequence for ``s`` stored states (None: ``floor(log2 n) + 1``):
    the forward sweep up to s_{n-1}, then the reverse sweep. Tasks on an explicit stack
    (no recursion, so each action costs the same however deep the partition). The
    actions as their numbers: generated code defines this function (``ctz_forward``)."""
    if n <= 0:
        return
    current = 0
    if n > 1:
        yield 1, 0
    tasks = [("reverse", 0, n, max(1, n.bit_length()) if s is None else s)]
    while tasks:
        task = tasks.pop()
        if task[0] == "free":
            yield 3, task[1]
            continue
        _, a, b, c = task
        if b - a == 1 or c == 1:
            for j in range(b - 1, a - 1, -1):
                yield from _reach(current, a, j)
                yield 4, j
                current = j
            continue
        m = a + _split(b - a, c)
        yield from _reach(current, a, m)
        yield 1, m
        current = m
        # the right part first, with one state fewer; then the left part
        tasks += [("reverse", a, m, c), ("free", m), ("reverse", m, b, c - 1)]


def binomial_forward(n, s):
    """The forward sweep of ``binomial_actions``, ending with the advance of n - 1."""
    for kind, k in binomial_actions(n, s):
        if kind == 4:
            break
        yield kind, k
    if n > 0:
        yield 0, n - 1


def binomial_stored(n, s):
    """Positions stored after ``binomial_forward(n, s)``, ascending."""
    out = set()
    for kind, k in binomial_forward(n, s):
        if kind == 1:
            out.add(k)
        elif kind == 3:
            out.discard(k)
    return tuple(sorted(out))


def binomial_reverse(n, s):
    """The reverse sweep of ``binomial_actions``: from its first reverse step on."""
    started = False
    for action in binomial_actions(n, s):
        started = started or action[0] == 4
        if started:
            yield action


# what generated code defines to run each schedule (``control/checkpoint_emit.py``)
SWEEP_FUNCTIONS = {"ctz": (ctz_forward, ctz_stored, ctz_reverse),
                   "binomial": (binomial_forward, binomial_stored, binomial_reverse)}
SWEEP_HELPERS = {"ctz": (), "binomial": (_beta, _repetitions, _split, _reach, binomial_actions)}


@dataclass(frozen=True)
class Binomial:
    """Revolve: ``snapshots`` stored states, the fewest recomputations.
    ``snapshots=None`` takes CTZ's budget for the same n, ``floor(log2 n) + 1``."""

    snapshots: int | None = None

    def __post_init__(self):
        s = self.snapshots
        if s is not None and (not isinstance(s, int) or isinstance(s, bool) or s < 1):
            raise ValueError(f"snapshots must be a positive int, got {s!r}")

    def __repr__(self):
        return f"binomial({self.snapshots})" if self.snapshots is not None else "binomial"

    def budget(self, n):
        return self.snapshots if self.snapshots is not None else max(1, n.bit_length())

    def forward(self, n):
        return binomial_forward(n, self.snapshots)

    @functools.lru_cache(maxsize=16)
    def stored(self, n):
        """Positions stored after ``forward(n)``, ascending (found by running
        it: cached, as the runners ask for every sweep)."""
        out = set()
        for kind, k in self.forward(n):
            if kind == STORE:
                out.add(k)
            elif kind == FREE:
                out.discard(k)
        return tuple(sorted(out))

    def reverse(self, n):
        return binomial_reverse(n, self.snapshots)


def schedule_of(checkpoint, snapshots=None):
    """The schedule object for ``fori_loop(..., checkpoint=, snapshots=)``;
    None when the loop stores every state (no checkpointing)."""
    if checkpoint is None:
        if snapshots is not None:
            raise ValueError("snapshots= needs a schedule: checkpoint='binomial'")
        return None
    if checkpoint == "ctz":
        if snapshots is not None:
            raise ValueError("checkpoint='ctz' chooses its own stored states (at most "
                             "floor(log2 n) + 1); give snapshots= with checkpoint='binomial'")
        return CTZ()
    if checkpoint == "binomial":
        return Binomial(snapshots)
    if isinstance(checkpoint, (CTZ, Binomial)):
        return checkpoint
    raise ValueError(f"checkpoint must be None, 'ctz' or 'binomial', got {checkpoint!r}")


# --- counting ----------------------------------------------------------------------
@dataclass(frozen=True)
class Counts:
    """What a schedule costs for n steps. ``max_stored``: stored states at
    once; ``max_held``: the same with the current state (counted once when it
    is also stored); ``forward_advances`` is n; ``recomputed``: advances of
    the reverse sweep; ``max_repeats``: the most times one step is
    recomputed."""
    max_stored: int
    max_held: int
    forward_advances: int
    recomputed: int
    max_repeats: int


def count(schedule, n):
    """Run ``schedule`` for ``n`` steps on positions, checking every action
    (a store of the current state, a restore of a stored one, advances from
    the current position, reverse steps in order from n - 1 down to 0)."""
    stored, current = set(), 0
    max_stored = max_held = 0
    fwd = rec = 0
    repeats = {}

    def note():
        nonlocal max_stored, max_held
        max_stored = max(max_stored, len(stored))
        max_held = max(max_held, len(stored | {current}))

    def apply(kind, k, reverse):
        nonlocal current, rec
        if kind == ADVANCE:
            assert current == k, f"advance {k} from position {current}"
            current = k + 1
            if reverse:
                rec += 1
                repeats[k] = repeats.get(k, 0) + 1
        elif kind == STORE:
            assert current == k, f"store {k} at position {current}"
            stored.add(k)
        elif kind == RESTORE:
            assert k in stored, f"restore {k}, which is not stored"
            current = k
        elif kind == FREE:
            assert k in stored, f"free {k}, which is not stored"
            stored.discard(k)
        else:
            raise AssertionError(f"unknown action {kind}")
        note()

    if n > 0:
        note()
    for kind, k in schedule.forward(n):
        assert kind != REVERSE, "a reverse step in the forward sweep"
        if kind == ADVANCE:
            fwd += 1
            if k == n - 1:
                # the output step: the runner keeps s_{n-1} for the reverse sweep
                assert current == k, f"advance {k} from position {current}"
                continue
        apply(kind, k, False)
    assert fwd == n, f"the forward sweep advanced {fwd} steps, not {n}"
    assert tuple(sorted(stored)) == schedule.stored(n), "stored() disagrees with forward()"
    expected = n - 1
    for kind, k in schedule.reverse(n):
        if kind == REVERSE:
            assert k == expected, f"reverse step {k}, expected {expected}"
            assert current == k, f"reverse step {k} at position {current}"
            expected -= 1
        else:
            apply(kind, k, True)
    assert expected == -1, f"the reverse sweep stopped before step {expected}"
    return Counts(max_stored, max_held, fwd, rec, max(repeats.values(), default=0))
