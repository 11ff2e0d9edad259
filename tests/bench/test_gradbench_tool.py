"""wengert's GradBench tool (``python -m bench.gradbench``) speaking the
protocol with a scripted eval, one JSON message a line. The tests share one
tool process (each test's messages stand on their own), except the last."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def start_tool():
    return subprocess.Popen([sys.executable, "-m", "bench.gradbench"], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


@pytest.fixture(scope="module")
def tool():
    proc = start_tool()
    yield proc
    proc.kill()
    proc.wait()


def ask(tool, message):
    """Send one line, read the one line that answers it."""
    line = message if isinstance(message, str) else json.dumps(message)
    tool.stdin.write(line + "\n")
    tool.stdin.flush()
    answer = tool.stdout.readline()
    assert answer, f"the tool died on {line!r}"
    return json.loads(answer)


def test_a_session(tool):
    assert ask(tool, {"id": 0, "kind": "start", "eval": "lse"}) == {
        "id": 0, "tool": "wengert", "config": {"engine": "auto", "backend": "python"}}
    assert ask(tool, {"id": 1, "kind": "define", "module": "lse"}) == {"id": 1, "success": True}

    x = [0.5, -1.0, 2.0]
    r = ask(tool, {"id": 2, "kind": "evaluate", "module": "lse", "function": "gradient",
                   "input": {"x": x, "min_runs": 3, "min_seconds": 0}})
    assert r["id"] == 2 and r["success"] is True
    total = sum(math.exp(v) for v in x)
    assert r["output"] == pytest.approx([math.exp(v) / total for v in x], rel=1e-12)
    assert len(r["timings"]) == 3
    assert all(t["name"] == "evaluate" and isinstance(t["nanoseconds"], int)
               and t["nanoseconds"] > 0 for t in r["timings"])

    assert ask(tool, {"id": 3, "kind": "analysis", "of": 2, "valid": True}) == {"id": 3}


def test_min_seconds_repeats_until_the_time_is_reached(tool):
    r = ask(tool, {"id": 4, "kind": "evaluate", "module": "lse", "function": "primal",
                   "input": {"x": [1.0, 2.0], "min_runs": 1, "min_seconds": 0.02}})
    assert r["success"] is True
    assert r["output"] == pytest.approx(math.log(math.exp(1) + math.exp(2)), rel=1e-12)
    assert sum(t["nanoseconds"] for t in r["timings"]) >= 0.02e9
    assert len(r["timings"]) > 1


def test_hello_has_no_runs_fields_and_runs_once(tool):
    assert ask(tool, {"id": 5, "kind": "define", "module": "hello"})["success"] is True
    r = ask(tool, {"id": 6, "kind": "evaluate", "module": "hello", "function": "double",
                   "input": 3.5})
    assert r["output"] == 7.0 and len(r["timings"]) == 1


def test_define_fails_for_a_module_it_does_not_have(tool):
    r = ask(tool, {"id": 7, "kind": "define", "module": "no_such_eval"})
    assert r["id"] == 7 and r["success"] is False and "no_such_eval" in r["error"]


@pytest.mark.parametrize("message, error", [
    ("{not json", "not a JSON message"),
    ("[1, 2]", "JSON object"),
    ({"id": 8, "kind": "frobnicate"}, "unknown message kind 'frobnicate'"),
    ({"id": 9, "kind": "evaluate", "module": "lse"}, "function, input"),
    ({"id": 10, "kind": "evaluate", "module": "lse", "function": "hessian", "input": {}},
     "no function 'hessian'"),
    ({"id": 11, "kind": "evaluate", "module": "lse", "function": "primal", "input": {"y": 1}},
     "KeyError: 'x'"),
], ids=["bad-json", "not-an-object", "unknown-kind", "missing-fields", "unknown-function",
        "bad-input"])
def test_a_bad_message_gets_an_error_and_the_tool_goes_on(tool, message, error):
    r = ask(tool, message)
    assert r["success"] is False and error in r["error"]
    assert r["id"] == (message["id"] if isinstance(message, dict) else None)
    # still answering
    assert ask(tool, {"id": 12, "kind": "start"})["tool"] == "wengert"


def test_end_stops_the_tool_without_an_answer():
    tool = start_tool()
    assert ask(tool, {"id": 0, "kind": "start"})["tool"] == "wengert"
    tool.stdin.write(json.dumps({"id": 1, "kind": "end"}) + "\n")
    tool.stdin.flush()
    assert tool.stdout.readline() == ""
    assert tool.wait(timeout=30) == 0


@pytest.mark.parametrize("module, function, input, want", [
    ("lse", "gradient", {"x": [0.5, -1.0, 2.0]},
     [math.exp(v) / sum(math.exp(u) for u in (0.5, -1.0, 2.0)) for v in (0.5, -1.0, 2.0)]),
    ("lse", "primal", {"x": [1.0, 2.0]}, math.log(math.exp(1) + math.exp(2))),
    ("hello", "double", 3.5, 7.0),
], ids=["lse-gradient", "lse-primal", "hello-double"])
def test_backend_numba_answers_right_and_says_where_it_runs_python(module, function, input,
                                                                    want):
    """``--backend numba`` on every eval: the values are right whichever backend runs; where
    wengert cannot give the backend, the tool says why on its log and runs Python."""
    import io

    from bench.gradbench.tool import Tool
    from bench.numba_support import backend_problem

    log = io.StringIO()
    tool = Tool("source", backend="numba", log=log)
    assert tool.answer(json.dumps({"id": 0, "kind": "start"}))["config"] == {
        "engine": "source", "backend": "numba"}
    r = tool.answer(json.dumps({"id": 1, "kind": "evaluate", "module": module,
                                "function": function, "input": input}))
    assert r["success"] is True, r.get("error")
    assert r["output"] == pytest.approx(want, rel=1e-12)
    problem = backend_problem("numba")
    if problem is None:
        assert tool.python_instead == {} and log.getvalue() == ""
    else:
        assert tool.python_instead == {module: problem}
        assert f"{module} runs on the Python backend" in log.getvalue() and problem in \
            log.getvalue()
