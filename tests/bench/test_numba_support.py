"""The benches' numba columns: each bench program's plain function under ``numba.njit`` gives
the plain call's value, through the bench's own code where it is cheap to run
(``scaling_bench.measure`` at a tiny n); where numba cannot compile a program, numba raises
and the reason the bench prints names the construct. The ``numba-grad`` column is "n/a" with
the reason while wengert takes no ``backend="numba"``, and, once it does, its gradient must
agree with finite differences (the bench's own check, which marks the row)."""
from types import SimpleNamespace

import numba
import numpy as np
import pytest

from bench import scaling_bench
from bench.numba_support import backend_problem, njit, short_reason
from bench.scalar_programs import PROGRAMS as SCALAR_PROGRAMS
from bench.scaling_programs import PROGRAMS as LOOP_PROGRAMS
from checks import COMPILED_RTOL_F64, assert_close

N = 25                                     # heat: a 5 x 5 grid
# the bench programs numba cannot compile, and the name its reason must give
NOT_COMPILED = {"horner deg 50, list": "HORNER_COEFFS"}


@pytest.mark.parametrize("prog", LOOP_PROGRAMS, ids=[p.name for p in LOOP_PROGRAMS])
def test_scaling_bench_numba_primal_equals_the_plain_call(prog):
    opts = SimpleNamespace(budget=0.01, max_seconds=20.0, numba_problem=backend_problem())
    row = scaling_bench.measure(prog, N, ("numba", "numba-grad"), {}, opts)
    args = prog.inputs(N, np.random.default_rng(N))     # the arguments measure used
    assert isinstance(row["time"]["numba"], float), row["notes"]
    assert row["cc"]["numba"] >= 0.0
    assert_close(row["numba_value"], prog.make(np)(*args), COMPILED_RTOL_F64,
                 what=f"{prog.name}: numba primal")
    assert not row["mismatch"], row["notes"]
    if opts.numba_problem is None:
        assert isinstance(row["time"]["numba-grad"], float), row["notes"]
        assert row["checked"]
    else:
        assert row["time"]["numba-grad"] == f"n/a ({opts.numba_problem})"


@pytest.mark.parametrize("name, make, args", [p[:3] for p in SCALAR_PROGRAMS],
                         ids=[p[0] for p in SCALAR_PROGRAMS])
def test_source_bench_numba_primal_equals_the_plain_call(name, make, args):
    compiled = njit(make(np))               # what source_bench.numba_primal times
    if name in NOT_COMPILED:
        with pytest.raises(numba.core.errors.TypingError) as info:
            compiled(*args)
        assert NOT_COMPILED[name] in short_reason(info.value)
        return
    assert_close(compiled(*args), make(np)(*args), COMPILED_RTOL_F64,
                 what=f"{name}: numba primal")


@pytest.mark.parametrize("messages, fallback", [
    (["NumbaFallbackWarning: numba cannot compile 'xs.append' (f.py:3): the Python backend "
      "runs f"], True),
    (["WengertWarning: f falls back to the Python backend at f.py:3"], True),
    (["EngineWarning: the source engine cannot convert f; tracing it"], False),
    ([], False),
])
def test_which_warnings_mark_a_python_fallback(messages, fallback):
    from bench.numba_support import fell_back
    assert fell_back(messages) is fallback
