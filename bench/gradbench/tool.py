"""wengert's GradBench tool: it answers an eval's messages, one JSON object a
line on stdin, with one JSON object a line on stdout (GradBench's protocol).

    start     ->  {"id", "tool": "wengert", "config": {"engine": ..., "backend": ...}}
    define    ->  {"id", "success"}: true when bench/gradbench/evals/<module>.py exists
    evaluate  ->  {"id", "success", "output", "timings"}: one "evaluate" timing per run,
                  in nanoseconds, of the computation only (JSON conversion untimed),
                  repeated until min_runs runs and min_seconds of run time are reached
    analysis  ->  {"id"}
    end       ->  no answer; the tool exits

Whatever goes wrong with one message (bad JSON, a missing field, an unknown
kind, module or function, an exception while computing) is answered with
``"success": false`` and an ``"error"`` text, and the tool reads on.

The backend (``--backend numba``) applies to every eval. Where wengert cannot give it (no
such backend, numba not installed), the tool says why on stderr and runs the eval on the
Python backend; where numba cannot compile one function, wengert itself warns (on stderr,
naming the construct and the line) and runs that function on the Python backend.
"""
import importlib
import json
import pkgutil
import sys
import time
import traceback

from .. import numba_support
from . import evals

KINDS = {"start": (), "define": ("module",), "evaluate": ("module", "function", "input"),
         "analysis": ()}                      # each kind of message, and the fields it needs


def implemented():
    """The eval modules in bench/gradbench/evals/, found afresh each time."""
    return sorted(m.name for m in pkgutil.iter_modules(evals.__path__))


class Tool:
    def __init__(self, engine="auto", backend="python", log=sys.stderr):
        self.engine, self.backend, self.log = engine, backend, log
        self.functions = {}          # module name -> {function name: Function}
        self.python_instead = {}     # module name -> why it runs on the Python backend

    def start(self, message):
        return {"tool": "wengert", "config": {"engine": self.engine, "backend": self.backend}}

    def _functions(self, name, module):
        """The module's functions on the tool's backend, or on Python with the reason told."""
        if self.backend == "python":
            return module.functions(engine=self.engine)
        why = numba_support.backend_problem(self.backend)
        if why is None:
            try:
                return module.functions(engine=self.engine, backend=self.backend)
            except Exception as exc:     # the backend refused this eval's functions
                why = numba_support.short_reason(exc)
        self.python_instead[name] = why
        print(f"wengert tool: {name} runs on the Python backend: backend {self.backend!r} "
              f"unavailable ({why})", file=self.log, flush=True)
        return module.functions(engine=self.engine)

    def define(self, message):
        name = message["module"]
        if name not in implemented():
            return {"success": False, "error": f"wengert has no module {name!r}; "
                                               f"it has {', '.join(implemented())}"}
        module = importlib.import_module(f"{evals.__name__}.{name}")
        self.functions[name] = self._functions(name, module)
        return {"success": True}

    def evaluate(self, message):
        module, name, input = message["module"], message["function"], message["input"]
        if module not in self.functions:
            defined = self.define({"module": module})
            if not defined["success"]:
                return defined
        function = self.functions[module].get(name)
        if function is None:
            return {"success": False, "error": f"module {module!r} has no function {name!r}; "
                                               f"it has {', '.join(self.functions[module])}"}
        runs = input if isinstance(input, dict) else {}
        min_runs, min_ns = runs.get("min_runs", 1), runs.get("min_seconds", 0) * 1e9
        args = function.prepare(input)
        timings, total = [], 0
        while len(timings) < min_runs or total < min_ns or not timings:
            begin = time.perf_counter_ns()
            result = function.run(*args)
            ns = time.perf_counter_ns() - begin
            timings.append({"name": "evaluate", "nanoseconds": ns})
            total += ns
        return {"success": True, "output": function.output(result), "timings": timings}

    def analysis(self, message):
        return {}

    def answer(self, line):
        """The response to one line; None for "end"."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError as e:
            return {"id": None, "success": False, "error": f"not a JSON message: {e}"}
        if not isinstance(message, dict):
            return {"id": None, "success": False, "error": "a message must be a JSON object"}
        id, kind = message.get("id"), message.get("kind")
        if kind == "end":
            return None
        if kind not in KINDS:
            return {"id": id, "success": False, "error": f"unknown message kind {kind!r}"}
        missing = [field for field in KINDS[kind] if field not in message]
        if missing:
            return {"id": id, "success": False,
                    "error": f"a {kind} message needs the field(s) {', '.join(missing)}"}
        try:
            return {"id": id} | getattr(self, kind)(message)
        except Exception as e:
            return {"id": id, "success": False, "error": "".join(traceback.format_exception(e))}


def serve(engine="auto", stdin=sys.stdin, stdout=sys.stdout, backend="python"):
    tool = Tool(engine, backend)
    for line in stdin:
        if not line.strip():
            continue
        response = tool.answer(line)
        if response is None:
            return
        stdout.write(json.dumps(response) + "\n")
        stdout.flush()
