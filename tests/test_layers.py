"""The package's import graph runs one way, without cycles (STYLE.md section 1).

The graph is read from the source with ``ast`` (tools/arch_metrics.py builds it: relative
imports resolved, ``from pkg import sub`` counted as an import of the submodule). Layers,
bottom to top, as ``arch_metrics.LAYERS`` gives them:

    core         errors, ident, context, dims, pytree, atoms, ir, printing
    primitives   primitives.*: the rows (core), the trace machinery (trace: bind, the traces,
                 eval_program) and the recorder (staging: a primitive application becomes an
                 equation; the transforms build Programs with it)
    transforms   transforms.*
    control      primitives.control (and control.*, control_*), primitives.checkpoint (and
                 checkpoint_*), primitives.custom, and the primitives package itself
    frontends | backends   (siblings: neither imports the other)
    api          api, api_*, cli, demo, testing, transformed, the package's __init__

The control-flow, checkpoint and custom-rule rows are the one place where a primitive's rules
need the transforms (a loop's jvp is the loop of its body's jvp, its transpose runs the
transposed body backwards), so they form their own layer above ``transforms``; the transforms
never import them and reach them only through the rows of the registry (``PRIMITIVES``),
which the ``primitives`` package fills by importing every family (so it sits in that layer).

The recorder (``primitives.staging``: StagingTrace, stage) and the replay of a Program
through ``bind`` (``primitives.trace.eval_program``) sit in the primitives layer, not in ``frontends`` and
``backends``: every transform builds its Programs with the one and replays Programs with the
other, and the control rows evaluate their bodies with ``eval_program``, so putting them above
would make the transforms import a frontend or a backend. The trace frontend proper (a user's
function -> Program) is ``frontends/tracing.py``; the NumPy backend (checked evaluation) is
``backends/interpret.py``.

A module may import its own layer and the ones below. Imports inside functions are allowed only
of an optional dependency (``arch_metrics.OPTIONAL``: a module wengert runs without); any other
is an import-time edge hidden from the reader, and most such imports dodged a cycle.
"""
import importlib.util
import os

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "arch_metrics", os.path.join(_ROOT, "tools", "arch_metrics.py"))
arch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arch)


def graph_of(pkg_dir):
    """(modules, import-time graph, in-function imports) of the package at ``pkg_dir``."""
    mods = arch.module_files(pkg_dir)
    graph, inner = arch.import_graph(mods, arch.parse_all(mods))
    return mods, graph, inner


def cycles(graph):
    return ["import cycle: " + " -> ".join(c) for c in arch.sccs(graph) if len(c) > 1]


def module_violations(graph, inner, module):
    """What ``module`` breaks: upward or sibling imports, imports inside functions of a
    non-optional module, no layer."""
    out = []
    if arch.layer_of(module)[0] is None:
        out.append(f"module in no layer: {module} (add it to arch_metrics.LAYERS)")
    for m, t in arch.upward_edges({module: graph[module]}):
        out.append(f"upward import: {m} ({arch.layer_of(m)[2]}) imports "
                   f"{t} ({arch.layer_of(t)[2]})")
    for line, targets, optional in inner.get(module, []):
        if not optional:
            out.append(f"import inside a function: {module}:{line} "
                       f"({', '.join(targets) or 'not of the package'})")
    return out


def violations(graph, inner):
    """Every breach of the rule, as sorted lines."""
    return sorted(cycles(graph) + [v for m in graph for v in module_violations(graph, inner, m)])


_MODS, _GRAPH, _INNER = graph_of(os.path.join(_ROOT, "wengert"))


@pytest.mark.parametrize("module", sorted(_MODS))
def test_module_follows_the_layers(module):
    """No upward or sibling import, no hidden import, a layer for every module."""
    assert module_violations(_GRAPH, _INNER, module) == []


def test_no_import_cycles():
    assert cycles(_GRAPH) == []
    assert arch.count_cycles(_GRAPH) == 0


def test_the_graph_is_the_package():
    """The graph holds every module and the imports that tie them (a sanity check that the
    rules above are not passing on an empty or disconnected graph)."""
    assert "wengert.primitives.core" in _GRAPH and "wengert.api" in _GRAPH
    assert "wengert.primitives.core" in _GRAPH["wengert.primitives.shape"]
    assert "wengert.ir" in _GRAPH["wengert.primitives.core"]
    assert sum(len(v) for v in _GRAPH.values()) > 3 * len(_GRAPH)


_PLANTED = {
    "cycle": ({"ir.py": "from . import dims\n", "dims.py": "from .ir import Aval\n"},
              ["import cycle: pkg.dims -> pkg.ir"]),
    "upward": ({"ir.py": "from .transforms import jvp\n", "transforms/__init__.py": "",
                "transforms/jvp.py": "import numpy\n"},
               ["upward import: pkg.ir (core) imports pkg.transforms.jvp (transforms)"]),
    "sibling": ({"frontends/__init__.py": "", "backends/__init__.py": "",
                 "frontends/src.py": "from ..backends import gen\n",
                 "backends/gen.py": "import os\n"},
                ["upward import: pkg.frontends.src (frontends|backends) imports "
                 "pkg.backends.gen (frontends|backends)"]),
    "hidden": ({"api.py": "def f():\n    from . import ir\n    return ir\n", "ir.py": ""},
               ["import inside a function: pkg.api:2 (pkg.ir)"]),
    "optional_ok": ({"primitives/__init__.py": "", "primitives/fft.py":
                     "def f():\n    import scipy.fft\n    return scipy.fft\n"}, []),
    "stdlib_hidden": ({"errors.py": "def f():\n    import os\n    return os.sep\n"},
                      ["import inside a function: pkg.errors:2 (not of the package)"]),
    "no_layer": ({"misc.py": ""}, ["module in no layer: pkg.misc (add it to arch_metrics.LAYERS)"]),
    "clean": ({"ir.py": "from .errors import E\n", "errors.py": "E = 1\n",
               "primitives/__init__.py": "from . import core\n",
               "primitives/core.py": "from ..ir import E\n",
               "api.py": "from .primitives import core\n"}, []),
}


@pytest.mark.parametrize("case", sorted(_PLANTED))
def test_the_check_finds_what_is_planted(case, tmp_path):
    """The checker on a small package with one planted breach reports exactly that one."""
    files, expected = _PLANTED[case]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    _, graph, inner = graph_of(str(pkg))
    assert violations(graph, inner) == expected
