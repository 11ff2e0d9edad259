"""``bench.gradbench_manual``: GradBench's C++ ``manual`` tool as wengert's benches read it.

Its parser reads recorded output of the real tool (``data/gradbench_manual_outputs.json``:
the stdout of ``tools/manual/<eval> input.json <function>`` at GradBench f26651a7, on
``make_input(**sizes)`` of wengert's eval modules, two timed runs each); each parsed output
must agree with wengert's own output for the same input, by the comparison
``gradbench_compare`` applies to its tools. Without a checkout the command prints "n/a" and
exits with 0; ``gradbench_compare --manual`` takes a figure only when it was measured at the
same input."""
import json
from pathlib import Path

import pytest

from bench import gradbench_manual
from bench.gradbench_compare import (EVALS, RTOL, describe, load_manual, manual_cell,
                                     max_relative_error)

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "gradbench_manual_outputs.json")
                      .read_text())["runs"]


def _module(name):
    import importlib
    return importlib.import_module(f"bench.gradbench.evals.{name}")


def test_every_function_of_the_manual_evals_is_recorded():
    # the manual tool implements every eval but particle and saddle
    assert set(RECORDED) == {f"{e}.{f}" for e in EVALS if e not in ("particle", "saddle")
                             for f in EVALS[e]}


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_parsed_output_agrees_with_wengert(key):
    name, function = key.split(".")
    run = RECORDED[key]
    output, timings = gradbench_manual.parse_run_output(run["stdout"])
    inp = _module(name).make_input(**run["sizes"])
    wengert = _module(name).functions(engine="source")[function](inp)
    err = max_relative_error(output, wengert)
    assert err <= RTOL, f"{key}: manual and wengert differ by {err:.3g} relative"
    # two timed runs were asked for (hello's bare-number input asks for none: one run)
    assert len(timings["evaluate"]) == (1 if name == "hello" else 2)
    assert all(isinstance(ns, int) and ns >= 0 for ns in timings["evaluate"])
    assert len(timings["prepare"]) == 1


@pytest.mark.parametrize("text, message", [
    ("", "printed nothing"),
    ('{"x": 1}\n{"name": "prepare", "nanoseconds": 5}\n', "no 'evaluate' timing"),
    ("Segmentation fault\n", "Expecting value"),
])
def test_parser_rejects_incomplete_output(text, message):
    with pytest.raises(ValueError, match=message):
        gradbench_manual.parse_run_output(text)


@pytest.mark.parametrize("argv, why", [
    ([], "no GradBench checkout given"),
    (["{tmp}"], "is not a GradBench checkout"),
])
def test_without_a_checkout_it_prints_na_and_exits_0(argv, why, tmp_path, capsys,
                                                    monkeypatch):
    monkeypatch.delenv("GRADBENCH_CHECKOUT", raising=False)
    argv = [a.format(tmp=tmp_path) for a in argv] + ["--evals", "lse,ode",
                                                     "--cache", str(tmp_path / "cache")]
    assert gradbench_manual.main(argv) == 0
    out = capsys.readouterr().out
    assert why in out
    na_rows = [line.split() for line in out.splitlines() if line.split()[2:3] == ["n/a"]]
    assert [r[:2] for r in na_rows] == [["lse", "primal"], ["lse", "gradient"],
                                        ["ode", "primal"], ["ode", "gradient"]]


def test_compare_takes_manual_figures_only_at_the_same_input(tmp_path):
    small, other = (describe(_module("lse").make_input(n=n)) for n in (7, 9))
    path = tmp_path / "manual.json"
    path.write_text(json.dumps({"rows": [
        {"eval": "lse", "function": "gradient", "input": small, "time_ns": 1234, "runs": 3,
         "mismatch": None, "error": None},
        {"eval": "lse", "function": "primal", "input": small, "time_ns": None, "runs": 0,
         "mismatch": None, "error": "RuntimeError: lse primal exited with -11"}]}))
    rows = load_manual(path)
    same = manual_cell(rows, "lse", "gradient", small)
    assert (same.time_ns, same.runs, same.na, same.error) == (1234, 3, False, None)
    elsewhere = manual_cell(rows, "lse", "gradient", other)
    assert elsewhere.na and elsewhere.time_ns is None and "another input" in elsewhere.error
    failed = manual_cell(rows, "lse", "primal", small)
    assert failed.time_ns is None and "exited with -11" in failed.error
    assert manual_cell(rows, "ode", "gradient", small).na
    assert manual_cell(None, "lse", "gradient", small).na
