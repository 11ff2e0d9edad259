"""The package's folders are its layers, and its imports run one way (docs/architecture.md).

The graph is read from the source with ``ast`` (tools/arch_metrics.py builds it: relative
imports resolved, ``from pkg import sub`` counted as an import of the submodule). A module's
layer is the first folder of its path inside the package; the layers, top to bottom, are
``arch_metrics.LAYERS``:

    root         the public face: __init__, cli, __main__, demo, testing
    api          the public functions, one module per family
    frontends    source/ and trace/: a Python function -> a Program
    transforms   Program -> Program: jvp, linearize, transpose, vjp, batching, simplify
    lower        the imperative lowering (imports no backend)
    backends     python/, numba/, the interpreter: a lowered Program -> a callable
    control      the rows with sub-Programs: cond, loops, checkpoints, custom rules
    scipy numpy  the face users call: the library table, its families, the tracer's protocols
    primitives   the rows, one module per family
    core         IR, atoms, printing, avals and symbolic lengths, the Primitive type, the trace
                 and staging contexts, pytrees, errors

A module may import its own layer and the ones below, with no table of exceptions. Imports
inside functions are allowed only of an optional dependency (``arch_metrics.OPTIONAL``: a module
wengert runs without); any other is an import-time edge hidden from the reader. No module takes
another's underscore-private name; no row's field is assigned outside its constructor; no module
is over ``arch_metrics.MAX_LINES`` lines.
"""
import ast
import re
import importlib.util
import os

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "arch_metrics", os.path.join(_ROOT, "tools", "arch_metrics.py"))
arch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arch)


def graph_of(pkg_dir):
    """(modules, parsed trees, import-time graph, in-function imports) of the package."""
    mods = arch.module_files(pkg_dir)
    trees = arch.parse_all(mods)
    graph, inner = arch.import_graph(mods, trees)
    return mods, trees, graph, inner


def cycles(graph):
    return ["import cycle: " + " -> ".join(c) for c in arch.sccs(graph) if len(c) > 1]


def module_violations(graph, inner, module):
    """What ``module`` breaks: upward imports, imports inside functions of a non-optional
    module, no layer."""
    out = []
    if arch.layer_of(module)[0] is None:
        out.append(f"module in no layer: {module} (its folder is not in arch_metrics.LAYERS)")
    for m, t in arch.upward_edges({module: graph[module]}):
        out.append(f"upward import: {m} ({arch.layer_of(m)[2]}) imports "
                   f"{t} ({arch.layer_of(t)[2]})")
    for line, targets, optional in inner.get(module, []):
        if not optional:
            out.append(f"import inside a function: {module}:{line} "
                       f"({', '.join(targets) or 'not of the package'})")
    return out


def violations(mods, trees, graph, inner):
    """Every breach of the rules, as sorted lines."""
    out = cycles(graph) + [v for m in graph for v in module_violations(graph, inner, m)]
    out += [f"private name: {m}:{line} takes {name} from {src}"
            for m, line, src, name in arch.private_crossings(mods, trees)]
    out += [f"row patched: {m}:{line} {target}" for m, line, target in arch.row_patches(trees)]
    return sorted(out)


_MODS, _TREES, _GRAPH, _INNER = graph_of(os.path.join(_ROOT, "wengert"))


@pytest.mark.parametrize("module", sorted(_MODS))
def test_module_follows_the_layers(module):
    """No upward import, no hidden import, a layer for every module."""
    assert module_violations(_GRAPH, _INNER, module) == []


@pytest.mark.parametrize("module", sorted(_MODS))
def test_module_is_small_and_says_what_it_holds(module):
    """At most ``MAX_LINES`` lines, and a docstring that says what the module holds and,
    on its last line, its layer (``Layer: core.``)."""
    src, tree = _TREES[module]
    assert src.count("\n") <= arch.MAX_LINES
    doc = ast.get_docstring(tree)
    assert doc, f"{module} has no docstring"
    layer = arch.layer_of(module)[2]
    assert doc.rstrip().splitlines()[-1].startswith(f"Layer: {layer}"), (
        f"{module}: the docstring's last line should name its layer ({layer})")


def test_no_import_cycles():
    assert cycles(_GRAPH) == []
    assert arch.count_cycles(_GRAPH) == 0


def test_no_private_name_crosses_a_module():
    """What two modules share is public in the lower one."""
    assert arch.private_crossings(_MODS, _TREES) == []


def test_no_row_is_patched():
    """Every field of a row is given in its constructor call (``register`` then freezes it:
    tests/core/test_primitive.py assigns to one and expects an error)."""
    assert arch.row_patches(_TREES) == []


def test_lower_imports_no_backend():
    """Lowering is a stage of its own: the backends take what it makes, it knows none of them."""
    assert [(m, t) for m in _GRAPH if arch.layer_of(m)[2] == "lower"
            for t in _GRAPH[m] if arch.layer_of(t)[2] == "backends"] == []


def test_the_folder_listing_is_the_layer_list():
    """Every folder of the package is a layer, and every layer a folder."""
    pkg = os.path.join(_ROOT, "wengert")
    folders = {d for d in os.listdir(pkg) if os.path.isdir(os.path.join(pkg, d))
               and not d.startswith(("_", "."))}
    assert folders == set(arch.LAYERS)


def test_the_graph_is_the_package():
    """The graph holds every module and the imports that tie them (a sanity check that the
    rules above are not passing on an empty or disconnected graph)."""
    assert "wengert.core.primitive" in _GRAPH and "wengert.api.transforms" in _GRAPH
    assert "wengert.core.primitive" in _GRAPH["wengert.primitives.shape"]
    assert "wengert.core.ir" in _GRAPH["wengert.core.primitive"]
    assert sum(len(v) for v in _GRAPH.values()) > 3 * len(_GRAPH)
    assert len(arch.row_fields(_TREES)) > 15


_PLANTED = {
    "cycle": ({"core/__init__.py": "", "core/ir.py": "from . import dims\n",
               "core/dims.py": "from .ir import Aval\n"},
              ["import cycle: pkg.core.dims -> pkg.core.ir"]),
    "upward": ({"core/__init__.py": "", "core/ir.py": "from ..transforms import jvp\n",
                "transforms/__init__.py": "", "transforms/jvp.py": "import numpy\n"},
               ["upward import: pkg.core.ir (core) imports pkg.transforms.jvp (transforms)"]),
    "backend_under_lower": ({"backends/__init__.py": "", "lower/__init__.py": "",
                             "backends/gen.py": "from ..lower import sums\n",
                             "lower/sums.py": "import os\n"},
                            ["upward import: pkg.backends.gen (backends) imports "
                             "pkg.lower.sums (lower)"]),
    "hidden": ({"api/__init__.py": "", "core/__init__.py": "",
                "api/grad.py": "def f():\n    from ..core import ir\n    return ir\n",
                "core/ir.py": ""},
               ["import inside a function: pkg.api.grad:2 (pkg.core.ir)"]),
    "optional_ok": ({"primitives/__init__.py": "", "primitives/fft.py":
                     "def f():\n    import scipy.fft\n    return scipy.fft\n"}, []),
    "stdlib_hidden": ({"core/__init__.py": "",
                       "core/errors.py": "def f():\n    import os\n    return os.sep\n"},
                      ["import inside a function: pkg.core.errors:2 (not of the package)"]),
    "no_layer": ({"misc/__init__.py": "", "misc/x.py": ""},
                 ["module in no layer: pkg.misc.x (its folder is not in arch_metrics.LAYERS)"]),
    "private": ({"core/__init__.py": "", "core/a.py": "_x = 1\n",
                 "core/b.py": "from .a import _x\nfrom . import a\ny = a._x\n"},
                ["private name: pkg.core.b:1 takes _x from pkg.core.a",
                 "private name: pkg.core.b:3 takes _x from pkg.core.a"]),
    "patched": ({"core/__init__.py": "",
                 "core/primitive.py": "class Primitive:\n    def __init__(self, name, *, jvp):\n"
                                      "        self.jvp = jvp\n",
                 "core/rows.py": "from .primitive import Primitive\n"
                                 "sin_p = Primitive('sin', jvp=None)\nsin_p.jvp = 1\n"},
                ["row patched: pkg.core.rows:3 sin_p.jvp"]),
    "clean": ({"core/__init__.py": "", "core/ir.py": "from .errors import E\n",
               "core/errors.py": "E = 1\n",
               "primitives/__init__.py": "from . import arith\n",
               "primitives/arith.py": "from ..core.ir import E\n",
               "api/__init__.py": "from ..primitives import arith\n"}, []),
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
    assert violations(*graph_of(str(pkg))) == expected


def test_the_architecture_doc_is_true():
    """docs/architecture.md lists the layers in ``LAYERS``'s order, and every file it names
    exists (the doc is kept true as the package changes)."""
    with open(os.path.join(_ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        doc = fh.read()
    listing = doc.split("```")[3]           # the folder listing, the second code block
    folders = [line.split()[0].rstrip("/") for line in listing.splitlines()
               if line.startswith("  ") and line.split()[0].endswith("/")]
    assert folders == list(arch.LAYERS)
    named = set(re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)", doc))
    assert len(named) > 20
    missing = [p for p in sorted(named) if not os.path.exists(os.path.join(_ROOT, "wengert", p))
               and not os.path.exists(os.path.join(_ROOT, p))]
    assert missing == []


def test_every_parse_holds_the_ast_lock():
    """CPython 3.11's conversion of a parse tree into ``ast`` objects is not thread-safe
    (``core.where.AST_LOCK``): derivatives generated in two threads at once once failed
    with ``SystemError: AST constructor recursion depth mismatch`` (numba's rewrites parsed
    the code unguarded). Every parse of wengert's is ``core.where.parse``."""
    root = os.path.join(_ROOT, "wengert")
    found = []
    for folder, _, files in os.walk(root):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path) as fh:
                found += [f"{rel}:{k}" for k, line in enumerate(fh, 1)
                          if "ast.parse(" in line and rel != "core/where.py"]
    assert not found, found
