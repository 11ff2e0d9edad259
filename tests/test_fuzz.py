"""The differential fuzzer (``fuzz_programs``) at a size that fits the
suite: random programs with control flow, drawn by hypothesis (so a failure
shrinks to a small program), each checked in every engine and mode against
finite differences and against each other. ``make fuzz`` runs thousands.

``WENGERT_FUZZ_EXAMPLES`` sets the programs per shard (default 50; 4 shards).
The draws are derandomized: the suite checks the same programs every run."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fuzz_programs import Gen, check

EXAMPLES = int(os.environ.get("WENGERT_FUZZ_EXAMPLES", "50"))


@pytest.mark.parametrize("shard", range(4))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_programs_agree_with_finite_differences(shard, data):
    # each shard shifts every choice, so the four see different programs
    source = Gen(lambda n: (data.draw(st.integers(0, n - 1)) + shard) % n).program()
    seed = data.draw(st.integers(0, 2 ** 16), label="seed")
    check(source, seed)             # raises WrongValue at the first wrong value


WRONG_RULE = """import numpy as np
import wengert as wg

G = np.ones(4)
C = 1.0
RS = np.random.RandomState(0)


@wg.custom_jvp
def h(a, b):
    return np.sin(a) * b


@h.defjvp
def h_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    return h(a, b), 1.001 * (np.cos(a) * b * da + np.sin(a) * db)     # off by 0.1%


def f(x, v):
    return h(x, np.sum(v))
"""


def test_the_fuzzer_catches_a_wrong_derivative():
    """The checks can fail: a derivative off by 0.1% is reported."""
    from fuzz_programs import WrongValue
    with pytest.raises(WrongValue, match="finite differences"):
        check(WRONG_RULE, seed=1, orders=1)
