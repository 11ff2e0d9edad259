"""Whole programs through every layer: the differential fuzzer
(``fuzz_programs``) at a size that fits the suite: random programs with
control flow, drawn by hypothesis, each checked in every engine and mode
against finite differences, against each other and for the dtypes of its
derivatives. ``make fuzz`` runs thousands.

``WENGERT_FUZZ_EXAMPLES`` sets the programs per shard (default 50; 4 shards).
The draws are derandomized: the suite checks the same programs every run. A
failure is reported unshrunk, with its program (shrinking one takes minutes:
reduce it by hand, or with ``python tests/fuzz_programs.py --seed S``).

The rest checks the fuzzer's own verdicts: a wrong derivative, a crash, a
dtype mismatch and a refusal are each seen and classified.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from fuzz_programs import (Gen, Report, WrongValue, _check_x_type, _kind, check, outcome,
                           refusal_group)
from wengert.core.errors import ConcretizationError, InPlaceUpdateError, UnsupportedSyntax

EXAMPLES = int(os.environ.get("WENGERT_FUZZ_EXAMPLES", "50"))


@pytest.mark.parametrize("shard", range(4))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate), report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_programs_agree_with_finite_differences(shard, data):
    # each shard shifts every choice, so the four see different programs
    source = Gen(lambda n: (data.draw(st.integers(0, n - 1)) + shard) % n).program()
    seed = data.draw(st.integers(0, 2 ** 16), label="seed")
    check(source, seed)     # raises WrongValue or DtypeMismatch; a crash propagates


HEAD = """import numpy as np
import wengert as wg

G = np.ones(4)
C = 1.0
RS = np.random.RandomState(0)

"""

WRONG_RULE = HEAD + """
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

FAILING_RULE = HEAD + """
@wg.custom_jvp
def h(a):
    return np.sin(a)


@h.defjvp
def h_jvp(primals, tangents):
    raise KeyError("a rule that fails")


def f(x, v):
    return h(x) + np.sum(v)
"""


def test_the_fuzzer_catches_a_wrong_derivative():
    """The checks can fail: a derivative off by 0.1% is reported, and
    classified by the check that saw it."""
    with pytest.raises(WrongValue, match="finite differences"):
        check(WRONG_RULE, seed=1, orders=1)
    got = outcome(WRONG_RULE, seed=1)
    assert got["wrong"] is not None and "finite differences" in got["wrong"]
    assert got["crash"] is None


def test_a_raw_crash_is_grouped_by_its_type_and_wengert_frame():
    """An exception that is not a typed wengert error is a crash, named by
    its type and the innermost frame of wengert's code that it went through."""
    got = outcome(FAILING_RULE, seed=2)
    assert got["wrong"] is None
    assert got["crash"].startswith("KeyError at wengert/"), got["crash"]
    assert "a rule that fails" in got["detail"]


@pytest.mark.parametrize("kinds, groups", [
    ({"source": 1.0, "trace": 1.0}, 0),
    ({"source": np.float64(1.0), "trace": np.float64(1.0)}, 0),
    ({"source": 1.0, "trace": np.float64(1.0)}, 1),            # the engines differ
    ({"source": np.asarray(1.0), "trace": 1.0}, 1),            # a 0-d array
    ({"source": np.float32(1.0), "trace": np.float32(1.0)}, 2),    # float32, both engines
    ({"source": np.asarray([1.0]), "trace": np.asarray(1.0)}, 2),
], ids=["floats", "float64s", "float-and-float64", "0d-array", "float32", "shape-1"])
def test_a_derivative_in_a_python_float_is_a_float_or_float64(kinds, groups):
    """Each engine's derivative in a Python float that is neither a Python
    float nor a float64 scalar is a dtype mismatch, and so are two valid
    types that differ between the engines."""
    report = Report()
    _check_x_type(report, "d/dx", {e: _kind(d) for e, d in kinds.items()})
    assert len(report.dtypes) == groups, report.dtypes


@pytest.mark.parametrize("make, a, b", [
    (UnsupportedSyntax, "/tmp/w-1/fuzzprog_1_2.py:11:5: 'w12' takes a value that is not an "
     "array or a number (<unassigned w12>) in a branch",
     "/tmp/w-7/fuzzprog_3_9.py:40:9: 'lst3' takes a value that is not an array or a number "
     "(<unassigned lst3>) in a branch"),
    (UnsupportedSyntax, "/tmp/p_1.py:7: 'd1' takes a value that is not an array or a number "
     "({'a': <wengert.primitives.staging.StagingTracer object at 0x7f4c6527b380>})",
     "/tmp/p_2.py:70: 'd14' takes a value that is not an array or a number "
     "({'a': <wengert.primitives.staging.StagingTracer object at 0x7f4c6529b380>, 'b': "
     "<wengert.primitives.staging.StagingTracer object at 0x7f4c6527b3c0>})"),
    (InPlaceUpdateError, "/tmp/a.py:3: a traced array cannot be assigned to in place "
     "(x[i] = v); or use engine='source'",
     "/tmp/b.py:33: a traced array cannot be assigned to in place (x[i] = v); or use "
     "engine='source'"),
    (ConcretizationError, "/work/wengert/x.py:298: a traced value was converted in line 4",
     "/work/wengert/x.py:301: a traced value was converted in line 12"),
], ids=["unassigned-name", "object-reprs", "keyword-kept", "line-numbers"])
def test_refusals_of_one_construct_share_a_group(make, a, b):
    """Refusals whose messages differ only in file, line, the program's
    names and object addresses are one group; the group keeps the
    construct's words and the error's class."""
    group = refusal_group(make(a))
    assert group == refusal_group(make(b))
    assert group.startswith(make.__name__ + ": ")
    for gone in ("fuzzprog", ":11", "w12", "0x7f", "/tmp", "line 4", ":298"):
        assert gone not in group, group
    assert refusal_group(make(a + " (another construct)")) != group


def test_a_refusal_is_reported_not_failed():
    """A construct the source engine refuses (with) is noted with its group;
    the trace engine still checks the program."""
    source = HEAD + "\ndef f(x, v):\n    with np.errstate(all='ignore'):\n" \
        "        s = x * 2.0\n    return s * np.sum(v)\n"
    got = outcome(source, seed=4, hessians=False)
    assert got["wrong"] is None and got["crash"] is None
    assert got["checks"] > 0
    assert any(g.startswith("UnsupportedSyntax: <file>: with") for g in got["refused"]), \
        got["refused"]
