"""Generated ``.source`` run in a fresh interpreter with NumPy (and SciPy) alone (issue 27):
the corpus of derivative programs and the runner, shared by the Python backend's test
(``backends/python/test_fresh_interpreter.py``) and numba's
(``backends/numba/test_fresh_interpreter.py``).

``functions`` lists every function of the test suite's derivative cases -- the corpus
(``cases.CORPUS``, through both engines), the source engine's functions
(``source_corpus.CASES``), the demo's seeds, every library function of ``fn_cases*.py``
(the source engine, float64 operands) and the programs of ``docs/generated-code.md``;
``payload`` stages each, differentiates it (the primal, its jvp and its vjp, simplified
as the API simplifies them) and has a backend write it. ``run_fresh`` sends each text,
its inputs and the values the Python backend gives here (pickled) to a new ``python -I``
process, in which importing ``wengert`` (or a test module) raises. It binds only what the
header lists -- ``numpy``, ``scipy``, ``math``, constants, and for a user module whose
globals the code reads (or a closure cell, or an object argument) a stand-in holding
those values -- execs the text and calls the function: the results must be the ones
computed here, and the process must end with no ``wengert`` module loaded.
"""
from __future__ import annotations

import importlib
import os
import pickle
import re
import subprocess
import sys
import types
import warnings

import numpy as np

import wengert as wg
from wengert import demo
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.core.ir import Aval
from wengert.core.pytree import flatten
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

import golden_listings as GL
import source_cases as C
from cases import CORPUS, F64
from codegen_checks import random_inputs, rng_for
from fn_cases import ALL_CASES
from source_corpus import CASES

VARIANTS = {
    "primal": lambda p: p,
    "jvp": lambda p: simplify(jvp_program(p), copies=True),
    "vjp": lambda p: simplify(vjp_program(p), copies=True),
}

# what a header may bind, and how the new process gets it
_HEADER = re.compile(r"^#   (\w+) = (.*)$")
_MODULES = ("numpy", "scipy", "math", "sys")


def functions(model):
    """(id, function, arguments, engine) of every derivative case."""
    out = []
    for name in sorted(CORPUS):
        case = CORPUS[name]
        for engine in ("trace", "source"):
            out.append((f"corpus-{name}-{engine}", case.fn, tuple(case.args), engine))
    for case in CASES:
        static = case.args[len(case.nums):]
        fn = C.with_static(case.fn, *static) if static else case.fn
        out.append((f"source-{case.id}", fn, case.dyn(case.fresh()), "source"))
    out += [("demo-seed000", demo.seed000, (2.0, 3.0), "source"),
            ("demo-damped", demo.damped, (0.7, 4), "source")]
    for c in ALL_CASES:
        if "source" in c.engines:
            rng = np.random.default_rng(1000 + c.seed)
            args = [a.draw(rng, F64) for a in c.args]
            diff = [k for k, a in enumerate(c.args) if a.diff]
            out.append((f"fn-{c.test_id}", _of_differentiated(c.fun, args, diff),
                        tuple(args[k] for k in diff), "source"))
    for name in sorted(GL.CALLS):
        out.append((f"golden-{name}", getattr(model, name), GL.arguments(name), "source"))
    return out


def _of_differentiated(fun, args, diff):
    """``fun`` as a function of the operands at ``diff``, the others fixed (as
    ``numpy/test_functions.py`` calls it)."""
    def g(*xs):
        full = list(args)
        for k, x in zip(diff, xs):
            full[k] = x
        return fun(*full)
    return g


def binding(name, what, source, namespace):
    """How the new process gets a name the header lists: ("module", name) or
    ("value", object); anything else is a failure of the code's promise."""
    module = re.fullmatch(r"(numpy|module ([\w.]+))", what)
    if module:
        path = "numpy" if module.group(1) == "numpy" else module.group(2)
        if path.split(".")[0] in _MODULES:
            return ("module", path)
        # a user module whose globals the code reads: a stand-in with their values
        real = importlib.import_module(path)
        code = re.sub(r"#.*", "", source)        # (a heading names a file: cases.py:12)
        attrs = set(re.findall(rf"\b{name}\.(\w+)", code))
        return ("value", types.SimpleNamespace(**{a: getattr(real, a) for a in attrs}))
    if what.startswith("constant ") or what.startswith("argument "):
        return ("value", namespace[name])        # an array, a user's object (its value)
    if what.startswith("closure cell of "):
        # the user's closure variable, read at each call: a stand-in cell
        return ("value", types.SimpleNamespace(cell_contents=namespace[name].cell_contents))
    raise AssertionError(f"the header binds {name} = {what}: neither a module nor a constant")


def payload(model, write, keep=None):
    """(items, refused): each derivative program (``functions``, ``VARIANTS``) of
    the corpus, written by ``write(prog)`` -> ``(source, namespace, extra, kept)``
    (``extra``: the arguments after the Program's inputs, or None: the writer refuses the
    program; ``kept``: the code returns its results and the buffers it keeps, numba's),
    with its inputs and the values ``python_function`` gives here; ``refused``: the ids
    ``write`` refused; ``keep(id)``: the functions to take (default all)."""
    items, refused = [], []
    for pid, fn, args, engine in functions(model):
        if keep is not None and not keep(pid):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                base = wg.make_program(fn, *args, engine=engine)
            except wg.WengertError:
                continue            # a case that checks a refusal: no program to write
        leaves = [x for x in flatten(tuple(args))[0]
                  if not (engine == "source" and type(x) in (int, bool))]
        leaves = [x for x in leaves if not isinstance(x, (str, type(None)))]
        for variant, make in VARIANTS.items():
            try:
                prog = make(base)
            except wg.WengertError:
                continue            # no derivative of this kind (an integer output...)
            if len(leaves) > len(prog.in_avals):
                continue
            inputs = list(leaves) + random_inputs(known(base, variant, leaves, prog),
                                                  rng_for(pid, variant, "fresh"))
            got = python_function(prog)(*inputs)
            source, namespace, extra, kept = write(prog)
            if extra is None:
                refused.append(f"{pid}-{variant}")
                continue
            bindings = {}
            for line in source.splitlines()[1:]:
                m = _HEADER.match(line)
                if m and not m.group(2).endswith("passed at each call"):
                    bindings[m.group(1)] = binding(m.group(1), m.group(2), source, namespace)
            items.append({"id": f"{pid}-{variant}", "source": source, "bindings": bindings,
                          "inputs": inputs + list(extra), "want": list(got),
                          "scratch": kept})
    return items, refused


def python_text(prog):
    """``payload``'s writer of the Python backend: its text, run as given."""
    gen = python_function(prog)
    return gen.source, gen.namespace, (), False


def known(base, variant, leaves, prog):
    """The avals of ``prog``'s inputs after ``leaves`` (tangents, cotangents), each
    length known only at run time (``None``: ``x[mask]``, ``np.unique``) taken from the
    value it stands beside: the input's (a tangent) or the primal output's (a cotangent)."""
    extra = prog.in_avals[len(leaves):]
    if not any(None in a.shape for a in extra):
        return extra
    like = list(interpret(base, *leaves)) if variant == "vjp" else list(leaves)
    return [Aval(np.shape(v), a.dtype, a.weak) if None in a.shape else a
            for a, v in zip(extra, like)]


RUNNER = r'''
import importlib, importlib.abc, pickle, re, sys
import numpy as np

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"the generated code imported {name}")
        return None

BLOCKED = set(sys.argv[2].split(","))
sys.meta_path.insert(0, Refuse())
for name in list(sys.modules):
    assert name.split(".")[0] not in BLOCKED, name
with open(sys.argv[1], "rb") as f:
    items = pickle.load(f)
failures = []
for item in items:
    ns = {}
    for name, (kind, what) in item["bindings"].items():
        ns[name] = importlib.import_module(what) if kind == "module" else what
    try:
        exec(compile(item["source"], "<" + item["id"] + ">", "exec"), ns)
        if item["jit"]:         # numba's text: every function it defines compiled
            import numba
            for name in re.findall(r"^def (\w+)\(", item["source"], re.M):
                ns[name] = numba.njit(ns[name])
        fname = re.findall(r"^def (\w+)\(", item["source"], re.M)[-1]
        inputs = item["inputs"]
        if item["jit"]:         # as wengert calls numba's code: 0-d arrays as scalars
            inputs = [a[()] if type(a) is np.ndarray and a.ndim == 0 else a for a in inputs]
        got = ns[fname](*inputs)
        if item["scratch"]:
            got = got[0]            # numba's code: (results, the buffers it keeps)
        assert len(got) == len(item["want"]), "number of results"
        for g, w in zip(got, item["want"]):
            assert np.shape(g) == np.shape(w), ("shape", np.shape(g), np.shape(w))
            assert np.asarray(g).dtype == np.asarray(w).dtype, ("dtype", np.asarray(g).dtype)
            if item["rtol"]:
                np.testing.assert_allclose(g, w, rtol=item["rtol"], atol=item["rtol"])
            else:
                np.testing.assert_array_equal(g, w)
    except Exception as err:
        failures.append(item["id"] + ": " + type(err).__name__ + ": " + str(err)[:300])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(len(items), "ran;", len(failures), "failed;", "loaded:", loaded)
for line in failures:
    print(line)
sys.exit(1 if failures or loaded else 0)
'''


BLOCKED = ["wengert", "model", "cases", "source_cases", "fn_cases", "golden_listings"]


def run_fresh(items, folder, rtol=0.0, jit=False):
    """Run ``items`` (``payload``'s) in a new ``python -I`` process where wengert cannot be
    imported; each result equal to the one computed here (``rtol`` 0), or close to it;
    ``jit``: each function the text defines is ``numba.njit``-ed there first."""
    for item in items:
        item["rtol"], item["jit"] = rtol, jit
    data = folder / "programs.pickle"
    data.write_bytes(pickle.dumps(items))     # loaded there with wengert's import refused
    script = folder / "runner.py"
    script.write_text(RUNNER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run([sys.executable, "-I", str(script), str(data), ",".join(BLOCKED)],
                          capture_output=True, text=True, env=env, cwd=str(folder),
                          timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert done.stdout.startswith(f"{len(items)} ran; 0 failed; loaded: []"), done.stdout
