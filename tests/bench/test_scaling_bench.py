"""The programs of ``bench.scaling_bench`` stay correct, and its verdicts follow its rules.

Each program (``bench/scaling_programs.py``) at tiny n: the source engine's gradient against a
central difference of the plain function, and against the trace engine's gradient of the
program's twin (the same mathematics without in-place writes, which the trace engine and
autograd differentiate in the bench), whose value must equal the program's. The bench's
target and skip rules are checked on made-up times. Nothing here is timed.
"""
import numpy as np
import pytest

import wengert as wg
from bench.scaling_bench import GROWTH_TARGET, RATIO_TARGET, skip_reason, targets
from bench.scaling_programs import PROGRAMS
from checks import AD_VS_AD_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jvp, inner

SIZES = (7, 25)                # heat: 3 x 3 and 5 x 5 grids


def _args_tangents(prog, n, seed):
    args = prog.inputs(n, np.random.default_rng(seed))
    nums = (prog.argnums,) if isinstance(prog.argnums, int) else prog.argnums
    rng = np.random.default_rng(seed + 1)
    tangents = tuple(rng.standard_normal(np.shape(a)) if i in nums else np.zeros(np.shape(a))
                     for i, a in enumerate(args))
    return args, nums, tangents


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_source_gradient_matches_finite_differences(prog, n):
    args, nums, tangents = _args_tangents(prog, n, seed=n)
    grad = wg.grad(prog.make(np), argnums=prog.argnums)(*args)
    grads = grad if isinstance(prog.argnums, tuple) else (grad,)
    directional = sum(inner(g, tangents[i]) for g, i in zip(grads, nums))
    want = fd_jvp(prog.make(np), args, tangents)
    assert_close(directional, want, PROGRAM_RTOL_F64, what=f"{prog.name} <grad, t>")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_source_gradient_matches_trace_engine(prog, n):
    args, _, _ = _args_tangents(prog, n, seed=n)
    functional = prog.twin or prog.make
    assert_close(functional(np)(*args), prog.make(np)(*args), AD_VS_AD_RTOL_F64,
                 what=f"{prog.name}: the twin's value")
    source = wg.grad(prog.make(np), argnums=prog.argnums)(*args)
    trace = wg.grad(functional(np), argnums=prog.argnums, engine="trace")(*args)
    assert_close(source, trace, AD_VS_AD_RTOL_F64, what=f"{prog.name} source vs trace")


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_programs_leave_their_arguments_alone(prog):
    args, _, _ = _args_tangents(prog, 25, seed=3)
    before = [np.copy(a) for a in args]
    prog.make(np)(*args)
    wg.grad(prog.make(np), argnums=prog.argnums)(*args)
    for a, b in zip(args, before):
        assert np.array_equal(a, b), f"{prog.name} wrote into its argument"


# --- the bench's rules, on made-up times ---------------------------------------------
def _rows(source_over_plain):
    return [dict(name="p", n=10 ** (3 + k), time={"plain": 1.0, "source": r})
            for k, r in enumerate(source_over_plain)]


@pytest.mark.parametrize("ratios, passed", [
    ((2.0, 2.2, 2.4), True),                                  # flat and cheap
    ((RATIO_TARGET, RATIO_TARGET, RATIO_TARGET), True),       # on the bounds
    ((1.0, 1.5, 3.0), False),                                 # cheap but growing
    ((5.0, 5.0, 5.0), False),                                 # flat but too dear
    ((2.0, 8.0, 2.0 * GROWTH_TARGET), False),                 # too dear in the middle
    ((2.0, "skipped", 2.0), False),                           # not measured
    ((2.0, 2.0, "error"), False),
])
def test_targets_judge_every_size_and_the_growth(ratios, passed):
    (ok, why), = targets(_rows(ratios)).values()
    assert ok is passed, why


@pytest.mark.parametrize("history, n, max_seconds, skipped", [
    ([], 1000, 1.0, False),
    ([(1000, 0.5)], 10000, 1.0, True),             # linear: 5 s predicted, over 3 x 1 s
    ([(1000, 0.05)], 10000, 1.0, False),           # 0.5 s predicted
    ([(1000, 2.0)], 10000, 100.0, False),          # 20 s predicted, under 300 s
    ([(1000, 0.01), (10000, 1.0)], 100000, 20.0, True),    # quadratic: 100 s predicted
    ([(1000, 0.1), (10000, 1.0)], 100000, 20.0, False),    # linear: 10 s predicted
    ([(1000, 0.1), (10000, 25.0)], 100000, 20.0, True),    # over S at a smaller n
])
def test_skip_rule(history, n, max_seconds, skipped):
    why = skip_reason(history, n, max_seconds)
    assert (why is not None) is skipped, why
