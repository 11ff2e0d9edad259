"""The numba compile-time bench (``bench/numba_compile_bench.py``) and the compile column of
``bench/gradbench_compare.py``: the bench prints, for each function of an eval, a cold
compile (an empty cache), a warm load (the disk cache the cold child filled: nothing compiled),
no fallback where numba compiles, and the numba and Python backends' times; the comparison
prints a numba cell's compile time (its first call less its best) in its own column."""
import re

import pytest

from bench import numba_compile_bench
from bench.gradbench_compare import COLUMNS, NUMBA_TOOL, Cell, compile_text


@pytest.mark.numba
def test_the_bench_prints_cold_warm_and_speed_per_function(capsys):
    numba_compile_bench.main(["--evals", "hello", "--timeout", "600"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["eval", "function", "cold", "cpu"]
    rows = {line.split()[1]: line for line in lines[1:] if line.startswith("hello")}
    assert set(rows) == {"square", "double"}
    for line in rows.values():
        times = re.findall(r"([\d.]+) (ms|s)\b", line)
        assert len(times) == 5, line                   # cold cpu, cold, warm, numba, python
        assert " n " in line, line                     # no fallback


@pytest.mark.numba
def test_the_warm_child_loads_what_the_cold_one_compiled(tmp_path):
    """Counted on numba's dispatchers (not timed: on a loaded machine a small
    function's warm load can take longer than its compile): the cold child
    compiles, the warm one, over the same folder, compiles nothing and loads
    from the disk cache."""
    cold = numba_compile_bench.run_child("hello", "double", str(tmp_path), 600, False)
    warm = numba_compile_bench.run_child("hello", "double", str(tmp_path), 600, False)
    assert cold["error"] is None and warm["error"] is None, (cold, warm)
    assert cold["cache"][0] > 0, cold
    assert warm["cache"][0] == 0 and warm["cache"][1] > 0, warm


def test_the_comparison_prints_the_compile_time_in_its_own_column():
    names = [name for name, _, _ in COLUMNS]
    assert names[names.index(NUMBA_TOOL) + 1] == "nb compile"
    assert compile_text(Cell(time_ns=2_000_000, first_ns=1_502_000_000)) == "1.5 s"
    assert compile_text(Cell(error="numba: no")) == "-"
