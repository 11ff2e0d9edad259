"""The numba twins of the checkpointing schedules' sweeps (``wengert/control/schedules_numba.py``),
run as plain Python: each yields (or returns) the actions of the function of
``schedules.py`` it stands for, at trip counts 0 to 33, powers of two and others, and
every snapshot budget, so the code numba compiles follows the schedule the Python
backend follows (``tests/backends/numba/test_checkpoint.py`` checks the compiled
derivatives). Also: every sweep function generated code defines has a twin.
"""
import itertools

from wengert.control import schedules as S
from wengert.control import schedules_numba as N


def test_the_twins_yield_the_schedules_actions():
    for n in list(range(0, 34)) + [50, 64, 100, 257]:
        assert list(N.ctz_forward_nb(n)) == list(S.ctz_forward(n)), n
        assert list(N.ctz_reverse_nb(n)) == list(S.ctz_reverse(n)), n
        assert tuple(N.ctz_stored_nb(n)) == S.ctz_stored(n), n
        for s in (None, 1, 2, 3, 4, 7, 60):
            assert list(N.binomial_forward_nb(n, s)) == list(S.binomial_forward(n, s)), (n, s)
            assert list(N.binomial_reverse_nb(n, s)) == list(S.binomial_reverse(n, s)), (n, s)
            assert tuple(N.binomial_stored_nb(n, s)) == S.binomial_stored(n, s), (n, s)
    online = itertools.islice(N.ctz_online_nb(), 2000)
    assert list(online) == list(itertools.islice(S.ctz_online(), 2000))
    assert N.comb_nb(4, 3) == 35 and N.comb_nb(4, -1) == 0
    assert [N.bit_length_nb(k) for k in (0, 1, 2, 7, 8, 1 << 40)] == [0, 1, 2, 3, 4, 41]
    assert list(N.positions_nb({8: 0, 0: 0, 12: 0})) == [0, 8, 12]
    assert S.SWEEP_FUNCTIONS.keys() == {"ctz", "binomial"}
    for fns in S.SWEEP_FUNCTIONS.values():
        assert all(f.__name__ in N.TWINS for f in fns)
