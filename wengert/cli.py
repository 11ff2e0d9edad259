"""``wengert show FILE.py:FUNC``: print a function's program or its derivative.

    wengert show FILE.py:FUNC --mode {program,dup,jvp,vjp} [--argnums 0,1]
                              [--args "np.ones(3), 2.0"] [--graph OUT.dot|OUT.svg]

``program`` prints the ANF Program (the source engine's, with the function's
control flow and names), ``dup`` its explicit-duplication form, ``jvp`` and
``vjp`` the generated derivative code. The program is specialised to example
arguments: ``--args`` (a Python expression, with ``np`` available; default:
the float 1.0 for every parameter without a default). ``--graph`` also draws
the program and its derivative as a graph (DOT always; SVG through
Graphviz's ``dot`` where it is installed).
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import shutil
import subprocess
import sys

import numpy as np

__all__ = ["main"]


def _load(target):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"wengert show: expected FILE.py:FUNC, got {target!r}")
    spec = importlib.util.spec_from_file_location("_wengert_show_module", path)
    if spec is None:
        raise SystemExit(f"wengert show: cannot read {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise SystemExit(f"wengert show: {path} has no function {name!r}")
    return fn


def _example_args(fn, text):
    if text:
        value = eval(text, {"np": np, "numpy": np})       # the user's own expression
        return value if isinstance(value, tuple) else (value,)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.default is inspect.Parameter.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return tuple(1.0 for _ in params)


def _derivative(prog, mode, argnums):
    from .transforms.jvp import jvp_program
    from .transforms.simplify import simplify
    from .transforms.vjp import vjp_program
    mask = [k in argnums for k in range(len(prog.inputs))] if argnums is not None else None
    if mode == "jvp":
        return simplify(jvp_program(prog, mask))
    return simplify(vjp_program(prog, mask))


def show(target, mode="program", argnums=None, args=None, graph=None, out=sys.stdout):
    import wengert as wg
    from .backends.pycodegen import codegen
    from .transforms.dup import explicit_dup
    fn = _load(target)
    example = _example_args(fn, args)
    prog = wg.make_program(fn, *example, engine="source")
    shown = [prog]
    if mode == "program":
        print(prog, file=out)
    elif mode == "dup":
        prog = explicit_dup(prog)
        shown = [prog]
        print(prog, file=out)
    else:
        der = _derivative(prog, mode, argnums)
        shown = [prog, der]
        print(codegen(der).source, file=out, end="")
    if graph:
        _write_graph(shown, graph, out)
    return shown


def _write_graph(programs, path, out):
    from .backends.dot import to_dot
    text = to_dot(programs)
    if path.endswith(".svg"):
        dot = shutil.which("dot")
        dot_path = path[:-4] + ".dot"
        with open(dot_path, "w") as f:
            f.write(text)
        if dot is None:
            print(f"# wrote {dot_path}; Graphviz's dot is not installed, so no SVG "
                  "(apt-get install graphviz)", file=out)
            return
        subprocess.run([dot, "-Tsvg", dot_path, "-o", path], check=True)
        print(f"# wrote {path} and {dot_path}", file=out)
    else:
        with open(path, "w") as f:
            f.write(text)
        print(f"# wrote {path}", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wengert", description="wengert: read the programs "
                                     "and derivative code wengert generates")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("show", help="print a function's program or derivative code")
    p.add_argument("target", help="FILE.py:FUNC")
    p.add_argument("--mode", choices=("program", "dup", "jvp", "vjp"), default="program")
    p.add_argument("--argnums", default=None,
                   help="comma-separated positions of the differentiated arguments")
    p.add_argument("--args", default=None,
                   help='example arguments, a Python expression (np available), e.g. '
                        '"np.ones(3), 2.0"; default 1.0 for each parameter')
    p.add_argument("--graph", default=None, help="also write the graph: OUT.dot or OUT.svg")
    ns = parser.parse_args(argv)
    argnums = None if ns.argnums is None else [int(a) for a in ns.argnums.split(",") if a]
    show(ns.target, ns.mode, argnums, ns.args, ns.graph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
