"""Architecture figures for the wengert package, from its source alone (stdlib `ast`).

Usage, from a checkout's root:  python tools/arch_metrics.py [PACKAGE_DIR]   (default: wengert)

It prints four sections:

(a) lines per module (physical lines, as `wc -l`), the largest five;
(b) the module import graph: every `import a.b` and `from X import y` of the package, relative
    ones resolved, and `from pkg import sub` counted as an import of the submodule `pkg.sub`
    when that is a module.  Only imports that run when the module is imported (module level,
    including under `if`/`try` and in class bodies) are edges.  Importing `pkg.sub` also runs
    `pkg/__init__.py`, but like most import-graph tools we do not add that implicit edge.
    Printed: the strongly connected components of more than one module (each is a set of
    modules that import one another, directly or not), the number of elementary cycles in the
    graph, and the edges that run between layers (see LAYERS below) in the wrong direction;
(c) imports inside function bodies: the count, per module, split into those of an optional
    dependency (OPTIONAL below: the module may be absent, so it is imported when needed) and
    the rest (most of which dodge an import cycle);
(d) the five functions with the highest cyclomatic complexity.  Like radon's `cc`, a function
    starts at 1 and gains one for each `if`/`elif`, conditional expression, `for`/`while` (one
    more when it has an `else`), `except` handler, `try ... else`, `with`, `assert`,
    comprehension (one more per `if` in it), `match` case, and each extra operand of an
    `and`/`or` chain.  A nested function or class is scored on its own, not in its parent;
    a lambda is part of the function that holds it.
"""
import ast
import fnmatch
import os
import sys
from collections import defaultdict

# Modules whose absence the package tolerates: importing them inside a function is allowed.
OPTIONAL = ("scipy", "numba", "matplotlib", "hypothesis", "graphviz")

# Layers, bottom to top (the rule tests/test_layers.py enforces).  A module may import its own
# layer or lower ones; frontends and backends share a rank but never import each other.
#   core        the data: errors, the staging context, symbolic dims, pytrees, the IR (atoms, programs) and its printing;
#   primitives  the rows of the one registry (primitives.core), the trace machinery
#               (primitives.trace: bind, the traces, eval_program), and the recorder that stages
#               a primitive application as an equation (primitives.staging, which the
#               transforms use to build Programs);
#   transforms  Program -> Program: jvp, linearize (partial_eval), transpose, vjp, simplify...;
#   control     the rows whose rules build sub-Programs with the transforms (control flow,
#               checkpointing, custom rules): above the transforms, which reach them only
#               through the registry's rows; the `primitives` package itself, which imports
#               every row to fill the table, sits here too;
#   frontends, backends   source/trace -> Program, Program -> values or code;
#   api         the public functions composed from the stages below, the CLI, the demo.
# Patterns are matched in order against the name inside the package ("" for its __init__).
LAYERS = [
    ("core", ("errors", "ident", "context", "dims", "pytree", "atoms", "ir", "printing")),
    ("control", ("primitives", "primitives.control", "primitives.control.*",
                 "primitives.control_*", "primitives.checkpoint", "primitives.checkpoint.*",
                 "primitives.checkpoint_*", "primitives.custom")),
    ("primitives", ("primitives.*",)),
    ("transforms", ("transforms", "transforms.*")),
    ("frontends|backends", ("frontends", "frontends.*", "backends", "backends.*")),
    ("api", ("api", "api_*", "cli", "demo", "testing", "transformed", "", "__main__")),
]
RANKS = {"core": 0, "primitives": 1, "transforms": 2, "control": 3, "frontends|backends": 4,
         "api": 5}
SIBLINGS = ("frontends", "backends")


def module_files(pkg_dir):
    """{dotted module name: path} for every .py file under `pkg_dir`."""
    root = os.path.dirname(os.path.abspath(pkg_dir))
    out = {}
    for dirpath, dirnames, filenames in os.walk(pkg_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join(rel)] = path
    return out


def resolve(mods, current, node):
    """The package modules one import statement names (a list of dotted names).

    `current` is the importing module's dotted name; packages are keys without `__init__`."""
    cur_is_pkg = mods[current].endswith("__init__.py")
    names = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            # `import a.b.c` imports a, a.b and a.b.c; the deepest is the one that matters
            for k in range(len(parts), 0, -1):
                cand = ".".join(parts[:k])
                if cand in mods:
                    names.append(cand)
                    break
        return names
    if node.level:
        base = current.split(".") if cur_is_pkg else current.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    for alias in node.names:
        sub = target + "." + alias.name
        if sub in mods:                       # `from pkg import submodule`
            names.append(sub)
        elif target in mods:
            names.append(target)
    return sorted(set(names))


def top_name(node):
    """The first dotted component an import names (for the optional-dependency test)."""
    if isinstance(node, ast.Import):
        return [a.name.split(".")[0] for a in node.names]
    if node.level:
        return [""]
    return [(node.module or "").split(".")[0]]


class _Imports(ast.NodeVisitor):
    """Import statements of one module, split into import-time ones and those in functions."""

    def __init__(self):
        self.depth = 0
        self.top = []
        self.inner = []

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def _record(self, node):
        (self.inner if self.depth else self.top).append(node)

    visit_Import = _record
    visit_ImportFrom = _record


def parse_all(mods):
    trees = {}
    for name, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
        trees[name] = (src, ast.parse(src, filename=path))
    return trees


def import_graph(mods, trees):
    """(graph, inner) where graph maps module -> set of modules imported at import time, and
    inner maps module -> list of (lineno, [targets], optional: bool) for in-function imports."""
    graph = {m: set() for m in mods}
    inner = defaultdict(list)
    for m, (_, tree) in trees.items():
        v = _Imports()
        v.visit(tree)
        for node in v.top:
            graph[m].update(t for t in resolve(mods, m, node) if t != m)
        for node in v.inner:
            optional = all(t in OPTIONAL for t in top_name(node))
            inner[m].append((node.lineno, resolve(mods, m, node), optional))
    return graph, inner


def sccs(graph):
    """Strongly connected components (Tarjan, iterative), each a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def count_cycles(graph, limit=100000):
    """Number of elementary cycles (simple search from each node over larger nodes only, so
    each cycle is counted once, from its smallest member); stops at `limit`."""
    order = {m: i for i, m in enumerate(sorted(graph))}
    total = 0
    for comp in sccs(graph):
        if len(comp) < 2:
            continue
        members = set(comp)
        for start in comp:
            allowed = {m for m in members if order[m] >= order[start]}
            path, on_path = [start], {start}
            stack = [iter(sorted(graph[start] & allowed))]
            while stack:
                for w in stack[-1]:
                    if w == start:
                        total += 1
                        if total >= limit:
                            return total
                    elif w not in on_path:
                        path.append(w)
                        on_path.add(w)
                        stack.append(iter(sorted(graph[w] & allowed)))
                        break
                else:
                    stack.pop()
                    on_path.discard(path.pop())
    return total


def layer_of(module):
    """(rank, family, layer name) of a dotted module name; family is its first component."""
    inner = module.split(".", 1)[1] if "." in module else ""
    for name, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(inner, p) for p in patterns):
            return RANKS[name], inner.split(".")[0], name
    return None, inner.split(".")[0], None


def upward_edges(graph):
    out = []
    for m in sorted(graph):
        rm, fm, _ = layer_of(m)
        for t in sorted(graph[m]):
            rt, ft, _ = layer_of(t)
            if rm is None or rt is None:
                continue
            if rt > rm or (rt == rm and fm != ft and fm in SIBLINGS and ft in SIBLINGS):
                out.append((m, t))
    return out


_DECISIONS_1 = (ast.If, ast.IfExp, ast.With, ast.AsyncWith, ast.Assert)


def _complexity(node):
    """Decision points under `node`, not entering nested functions or classes."""
    total = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(child, _DECISIONS_1):
            total += 1
        elif isinstance(child, (ast.For, ast.AsyncFor, ast.While)):
            total += 1 + bool(child.orelse)
        elif isinstance(child, ast.Try) or type(child).__name__ == "TryStar":
            total += len(child.handlers) + bool(child.orelse)
        elif isinstance(child, ast.BoolOp):
            total += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            total += 1 + len(child.ifs)
        elif type(child).__name__ == "Match":
            total += len(child.cases)
        total += _complexity(child)
    return total


def functions(tree, prefix=""):
    """(qualified name, lineno, complexity) of every function and method in `tree`."""
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            out.append((name, node.lineno, 1 + _complexity(node)))
            out.extend(functions(node, name + "."))
        elif isinstance(node, ast.ClassDef):
            out.extend(functions(node, prefix + node.name + "."))
        else:
            out.extend(functions(node, prefix))
    return out


def main(argv):
    pkg_dir = argv[1] if len(argv) > 1 else "wengert"
    mods = module_files(pkg_dir)
    trees = parse_all(mods)

    print("(a) lines per module: %d modules, %d lines" % (
        len(mods), sum(src.count("\n") for src, _ in trees.values())))
    sizes = sorted(((src.count("\n"), m) for m, (src, _) in trees.items()), reverse=True)
    for n, m in sizes[:5]:
        print("    %5d  %s" % (n, m))
    print("    modules over 400 lines: %d" % sum(1 for n, _ in sizes if n > 400))

    graph, inner = import_graph(mods, trees)
    full = {m: set(graph[m]) for m in graph}
    for m, rows in inner.items():
        for _, targets, _ in rows:
            full[m].update(t for t in targets if t != m)
    print("\n(b) import graph: %d import-time edges (%d with the imports inside functions)"
          % (sum(len(v) for v in graph.values()), sum(len(v) for v in full.values())))
    for label, g in (("import-time imports", graph), ("all imports, in functions too", full)):
        comps = [c for c in sccs(g) if len(c) > 1]
        print("    %s: %d import cycles (strongly connected components of size > 1), "
              "%d elementary cycles" % (label, len(comps), count_cycles(g)))
        for c in comps:
            print("      SCC (%d): %s" % (len(c), ", ".join(c)))
        up = upward_edges(g)
        layer_pairs = defaultdict(int)
        for m, t in up:
            layer_pairs[(layer_of(m)[2], layer_of(t)[2])] += 1
        print("      upward or sibling imports between layers: %d  (%s)" % (len(up), "; ".join(
            "%s -> %s: %d" % (a, b, n) for (a, b), n in sorted(layer_pairs.items()))))
        for m, t in up:
            print("        %s -> %s" % (m, t))

    n_opt = sum(1 for v in inner.values() for *_, opt in v if opt)
    n_int = sum(1 for v in inner.values() for _, t, opt in v if t and not opt)
    n_all = sum(len(v) for v in inner.values())
    print("\n(c) imports inside functions: %d statements: %d of optional dependencies (%s), "
          "%d of the package itself, %d of other modules" % (
              n_all, n_opt, "/".join(OPTIONAL), n_int, n_all - n_opt - n_int))
    for m in sorted(inner, key=lambda m: (-len(inner[m]), m)):
        opt = sum(1 for *_, o in inner[m] if o)
        print("    %3d  %s%s" % (len(inner[m]), m, "  (%d optional)" % opt if opt else ""))

    funcs = sorted(((cc, m, name, line) for m, (_, tree) in trees.items()
                    for name, line, cc in functions(tree)), key=lambda t: (-t[0], t[1], t[3]))
    print("\n(d) most complex functions (cyclomatic complexity, radon-style):")
    for cc, m, name, line in funcs[:5]:
        print("    %3d  %s:%d %s" % (cc, m, line, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
