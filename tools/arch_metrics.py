"""Architecture figures for the wengert package, from its source alone (stdlib `ast`).

Usage, from a checkout's root:  python tools/arch_metrics.py [PACKAGE_DIR]   (default: wengert)

It prints:

(a) lines per module (physical lines, as `wc -l`), the largest five, and those over MAX_LINES;
(b) the module import graph: every `import a.b` and `from X import y` of the package, relative
    ones resolved, and `from pkg import sub` counted as an import of the submodule `pkg.sub`
    when that is a module.  Only imports that run when the module is imported (module level,
    including under `if`/`try` and in class bodies) are edges.  Importing `pkg.sub` also runs
    `pkg/__init__.py`, but like most import-graph tools we do not add that implicit edge.
    Printed: the strongly connected components of more than one module (each is a set of
    modules that import one another, directly or not), the number of elementary cycles in the
    graph, and the edges that run up the layers (a module's layer is its folder: LAYERS);
(c) imports inside function bodies: the count, per module, split into those of an optional
    dependency (OPTIONAL below: the module may be absent, so it is imported when needed) and
    the rest (most of which dodge an import cycle);
(e) underscore-private names one module takes from another (``from m import _x``, ``m._x``);
(f) assignments to a row's field outside its constructor call (``sin_p.jvp = ...``,
    ``PRIMITIVES[name].complex_ok = ...``, ``setattr(row, ...)``);
(h) which layers each layer imports;
(i) the five functions with the highest cyclomatic complexity.  Like radon's `cc`, a function
    starts at 1 and gains one for each `if`/`elif`, conditional expression, `for`/`while` (one
    more when it has an `else`), `except` handler, `try ... else`, `with`, `assert`,
    comprehension (one more per `if` in it), `match` case, and each extra operand of an
    `and`/`or` chain.  A nested function or class is scored on its own, not in its parent;
    a lambda is part of the function that holds it.

docs/architecture.md describes the layers; tests/test_layers.py enforces them.
"""
import ast
import os
import sys
from collections import defaultdict

# Modules whose absence the package tolerates: importing them inside a function is allowed.
OPTIONAL = ("scipy", "numba", "matplotlib", "hypothesis", "graphviz", "dask")

# The layers, top to bottom: a module's layer is the first folder of its path inside the package
# (docs/architecture.md says what each holds). A module may import its own layer and the ones
# below it, never one above. The modules at the package's root (its __init__, the CLI, the demo,
# ``testing``) are the public face, above every folder.
LAYERS = ("api", "frontends", "transforms", "lower", "backends", "control", "scipy", "numpy",
          "primitives", "core")
ROOT_LAYER = "root"
RANKS = {name: len(LAYERS) - k for k, name in enumerate(LAYERS)}
RANKS[ROOT_LAYER] = len(LAYERS) + 1

# Past this many lines a module is reported (the package's rule is ~400: STYLE.md section 1).
MAX_LINES = 450


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
    """(rank, folder, layer name) of a dotted module name: its first folder inside the package,
    or the root layer for the modules beside the package's __init__."""
    parts = module.split(".")[1:]
    if len(parts) <= 1 and (not parts or parts[0] not in LAYERS):
        return RANKS[ROOT_LAYER], ROOT_LAYER, ROOT_LAYER
    name = parts[0]
    if name not in RANKS:
        return None, name, None
    return RANKS[name], name, name


def upward_edges(graph):
    """(importer, imported) pairs where the imported module's layer is above the importer's."""
    out = []
    for m in sorted(graph):
        rm = layer_of(m)[0]
        for t in sorted(graph[m]):
            rt = layer_of(t)[0]
            if rm is not None and rt is not None and rt > rm:
                out.append((m, t))
    return out


def _aliases(mods, current, tree):
    """{local name: package module} of the module objects ``tree`` binds by import."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for al in node.names:
                if al.asname and al.name in mods:
                    out[al.asname] = al.name
        elif isinstance(node, ast.ImportFrom):
            for al in node.names:
                one = ast.ImportFrom(module=node.module, names=[al], level=node.level)
                for t in resolve(mods, current, one):
                    if t.rsplit(".", 1)[-1] == al.name:
                        out[al.asname or al.name] = t
    return out


def private_crossings(mods, trees):
    """(module, line, source module, name) for each underscore-private name one module takes
    from another: ``from m import _x`` or ``m._x`` of an imported package module."""
    out = []
    for m, (_, tree) in sorted(trees.items()):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for al in node.names:
                    if al.name.startswith("_") and not al.name.startswith("__"):
                        one = ast.ImportFrom(module=node.module, names=[al], level=node.level)
                        src = resolve(mods, m, one)
                        out.append((m, node.lineno, src[0] if src else node.module, al.name))
        aliases = _aliases(mods, m, tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__") and aliases[node.value.id] != m):
                out.append((m, node.lineno, aliases[node.value.id], node.attr))
    return sorted(set(out))


def row_fields(trees):
    """The fields of a row: the keyword parameters of ``Primitive.__init__`` (core.primitive)."""
    for m, (_, tree) in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "Primitive":
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                        return {a.arg for a in f.args.args[1:] + f.args.kwonlyargs}
    return set()


def _row_names(tree):
    """Names that hold a row in ``tree``: bound to a ``Primitive(...)`` or ``register(...)``
    call, or spelled as rows are (``sin_p``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            fn = node.value.func
            called = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", "")
            if called in ("Primitive", "register"):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.Name) and node.id.endswith("_p"):
            names.add(node.id)
    return names


def _is_row(node, rows):
    """Whether the expression ``node`` denotes a row: a row's name, or ``PRIMITIVES[...]``."""
    if isinstance(node, ast.Name):
        return node.id in rows
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "PRIMITIVES")


def row_patches(trees):
    """(module, line, target) for each assignment to a row's field outside the row's
    constructor: ``sin_p.jvp = ...``, ``PRIMITIVES[name].complex_ok = ...``,
    ``setattr(sin_p, "emit", ...)``, before ``register`` or after it."""
    fields = row_fields(trees)
    out = []
    for m, (_, tree) in sorted(trees.items()):
        rows = _row_names(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            flat = []
            for t in targets:
                flat += t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            for t in flat:
                if isinstance(t, ast.Attribute) and t.attr in fields and _is_row(t.value, rows):
                    out.append((m, node.lineno, ast.unparse(t)))
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "setattr" and len(node.args) >= 2
                    and _is_row(node.args[0], rows)):
                out.append((m, node.lineno, ast.unparse(node)))
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
    print("    modules over 400 lines: %d; over %d: %d" % (
        sum(1 for n, _ in sizes if n > 400), MAX_LINES, sum(1 for n, _ in sizes if n > MAX_LINES)))
    for n, m in sizes:
        if n > MAX_LINES:
            print("      %5d  %s" % (n, m))

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
        print("      upward imports between layers: %d  (%s)" % (len(up), "; ".join(
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

    crossings = private_crossings(mods, trees)
    print("\n(e) private names taken across modules: %d" % len(crossings))
    for m, line, src, name in crossings:
        print("    %s:%d %s from %s" % (m, line, name, src))
    patches = row_patches(trees)
    print("\n(f) row fields assigned outside a row's constructor: %d" % len(patches))
    for m, line, target in patches:
        print("    %s:%d %s" % (m, line, target))

    print("\n(h) the layers each layer imports (top to bottom):")
    uses = defaultdict(set)
    for m, targets in graph.items():
        for t in targets:
            if layer_of(m)[2] != layer_of(t)[2]:
                uses[layer_of(m)[2]].add(layer_of(t)[2])
    for name in (ROOT_LAYER,) + LAYERS:
        print("    %-11s -> %s" % (name, ", ".join(sorted(uses[name], key=lambda x: -RANKS[x]))
                                   or "(nothing of the package)"))

    funcs = sorted(((cc, m, name, line) for m, (_, tree) in trees.items()
                    for name, line, cc in functions(tree)), key=lambda t: (-t[0], t[1], t[3]))
    print("\n(i) most complex functions (cyclomatic complexity, radon-style):")
    for cc, m, name, line in funcs[:5]:
        print("    %3d  %s:%d %s" % (cc, m, line, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
