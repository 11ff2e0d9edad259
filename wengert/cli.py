"""``wengert show FILE.py:FUNC``: print a function's program or its derivative.

    wengert show FILE.py:FUNC --mode {program,dup,jvp,vjp} [--argnums 0,1]
                              [--args "np.ones(3), 2.0"] [--graph OUT.dot|OUT.svg]

``program`` prints the ANF Program (the source engine's, with the function's
control flow and names), ``dup`` its explicit-duplication form, ``jvp`` and
``vjp`` the generated derivative code. The program is specialised to example
arguments: ``--args`` (a Python expression, with ``np`` available; a tuple is
the argument list; default: the float 1.0 for every parameter without a
default). ``--argnums`` picks the differentiated positional arguments (default:
all of them; integers are never differentiated). ``--graph`` also draws the
program and its derivative as a graph (DOT always; SVG through Graphviz's
``dot``, which must be on PATH).

``python -m wengert show ...`` is the same command. Bad input (a target
without a colon, a missing file or function, an ``--args`` expression that
fails, an ``--argnums`` out of range) and errors raised by the user's code
are reported in one message that says what was wrong and what to do, with a
nonzero exit status: 2 for bad input, 1 when the function itself could not
be shown (or an SVG was asked for without Graphviz). ``--traceback``
re-raises instead, for debugging.

Layer: root.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import traceback

import numpy as np

from .core.errors import WengertError
from .core.pytree import flatten
from .transforms.jvp import jvp_program
from .transforms.simplify import simplify
from .transforms.vjp import vjp_program
from .api.source import source_program
from .api.backend import python_function
from .transforms.dup import explicit_dup
from .backends.dot import to_dot

__all__ = ["main", "show", "CLIError"]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_EXAMPLE = '--args "np.ones(3), 2.0"'


class CLIError(WengertError, ValueError):
    """Bad input to ``wengert show``.

    Cause: a target not of the form ``FILE.py:FUNC``, a missing file or
    function, bad ``--args`` or ``--argnums``, or Graphviz's ``dot`` missing for
    an SVG graph. ``main`` prints the message and exits with ``status``: 2
    (argparse's, for usage), or 1 where a tool it needs is missing or failed.

    Fix: what the message says (it shows an example of the right form).
    """

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class UserCodeError(WengertError, RuntimeError):
    """Your file or function raised while ``wengert show`` loaded or ran it.

    Cause: an exception in your code; ``main`` prints it with your file and
    line and exits with 1.

    Fix: fix your code, or run again with ``--traceback`` for the whole
    traceback.
    """


# --- the target: FILE.py:FUNC ------------------------------------------------
def _split_target(target):
    path, colon, name = target.rpartition(":")
    if not colon or not path or not name:
        raise CLIError(f"expected FILE.py:FUNC, got {target!r}: name the function after a "
                       "colon, e.g. wengert show wengert/demo.py:seed000")
    return path, name


def _module_name(path):
    """A name for the loaded file that shadows no other module: its stem
    where that is free (the generated code reads its globals as ``stem.W``).
    A module loaded from the same file before is replaced (shown again)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    base = stem if stem.isidentifier() else "user_module"
    name, k = base, 0
    while name in sys.stdlib_module_names or _other_module(name, path):
        k += 1
        name = f"{base}_{k}"
    return name


def _other_module(name, path):
    """Whether ``name`` is taken by, or ``import name`` would find, a module
    other than the file."""
    held = sys.modules.get(name)
    if held is not None:
        origin = getattr(getattr(held, "__spec__", None), "origin", None)
        return origin is None or os.path.abspath(origin) != os.path.abspath(path)
    spec = importlib.util.find_spec(name)
    return spec is not None and (spec.origin is None or
                                 os.path.abspath(spec.origin) != os.path.abspath(path))


def _load_module(path):
    if not os.path.exists(path):
        raise CLIError(f"no file {path!r} (from {os.getcwd()}): give the path of a Python "
                       "file, relative to the current directory or absolute")
    if os.path.isdir(path) or not path.endswith(".py"):
        raise CLIError(f"{path!r} is not a Python file: give a FILE.py")
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # kept in sys.modules: generated code reads the file's globals through it
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        del sys.modules[name]
        raise UserCodeError(f"{err.filename}:{err.lineno}: {path} does not compile: "
                            f"SyntaxError: {err.msg}; fix the file") from err
    except Exception as err:
        del sys.modules[name]
        raise UserCodeError(f"importing {path} raised {_describe(err, path)}") from err
    return module


def _functions_of(module):
    return sorted(k for k, v in vars(module).items()
                  if inspect.isfunction(v) and v.__module__ == module.__name__)


def _load(target):
    """The function named by ``FILE.py:FUNC`` (``FUNC`` may be ``Class.method``)."""
    path, name = _split_target(target)
    module = _load_module(path)
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise CLIError(f"{path} has no function {name!r}; its functions: "
                           f"{', '.join(_functions_of(module)) or '(none)'}")
    if not inspect.isfunction(fn) and not inspect.ismethod(fn):
        raise CLIError(f"{name!r} in {path} is a {type(fn).__name__}, not a function: name a "
                       f"function written in Python (in {path}: "
                       f"{', '.join(_functions_of(module)) or 'none'})")
    return fn, path


# --- the example arguments ----------------------------------------------------
def _signature_text(fn):
    return f"{fn.__name__}{inspect.signature(fn)}"


def _example_args(fn, text):
    sig = inspect.signature(fn)
    if text is None:
        params = [p for p in sig.parameters.values()
                  if p.default is inspect.Parameter.empty
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        args = tuple(1.0 for _ in params)
    else:
        try:
            value = eval(text, {"np": np, "numpy": np})       # the user's own expression
        except SyntaxError as err:
            raise CLIError(f"--args {text!r} is not a Python expression ({err.msg}): write "
                           f"the example arguments as one, e.g. {_EXAMPLE}") from err
        except Exception as err:
            raise CLIError(f"--args {text!r} raised {type(err).__name__}: {err}; write the "
                           f"example arguments with literals and np (NumPy), e.g. "
                           f"{_EXAMPLE}") from err
        args = value if isinstance(value, tuple) else (value,)
    try:
        sig.bind(*args)
    except TypeError as err:
        how = "--args" if text is not None else "the default (1.0 for each parameter)"
        raise CLIError(f"{how} gives {len(args)} argument(s) to {_signature_text(fn)}: {err}; "
                       "give one value per parameter with --args (a tuple is the argument "
                       "list: write ((1.0, 2.0),) for one tuple argument)") from err
    return args


def _parse_argnums(text):
    if text is None:
        return None
    try:
        argnums = tuple(int(a) for a in text.split(","))
    except ValueError:
        raise CLIError(f"--argnums {text!r}: expected comma-separated positions of "
                       "arguments, counting from 0, e.g. --argnums 0,1") from None
    return tuple(sorted(set(argnums)))


def _input_mask(fn, args, static, argnums):
    """One bool per Program input (a float or array leaf of the arguments):
    whether it is differentiated. ``argnums`` counts positional arguments."""
    if argnums is None:
        return None
    names = list(inspect.signature(fn).parameters)
    for k in argnums:
        if not 0 <= k < len(args):
            raise CLIError(f"--argnums {k} is out of range: {_signature_text(fn)} is called "
                           f"with {len(args)} positional argument(s), so give positions "
                           f"0 to {len(args) - 1}")
    mask, leaf = [], 0
    for k, arg in enumerate(args):
        arg_static = static[leaf:leaf + len(flatten(arg)[0])]
        leaf += len(arg_static)
        if k in argnums and all(arg_static):
            raise CLIError(f"--argnums {k}: argument {k} ({names[k] if k < len(names) else k}"
                           f" = {arg!r}) holds no float or array, and integers have no "
                           "derivative; pass it as a float (e.g. 5.0) or leave it out of "
                           "--argnums")
        mask += [k in argnums] * arg_static.count(False)
    return mask


# --- what is shown -----------------------------------------------------------------
def _derivative(prog, mode, mask):
    if mode == "jvp":
        return simplify(jvp_program(prog, mask))
    return simplify(vjp_program(prog, mask))


def show(target, mode="program", argnums=None, args=None, graph=None, out=None):
    """Print what ``wengert show`` prints to ``out`` (default stdout); return
    the Programs shown (the program, and its derivative in jvp/vjp modes).
    Raises ``CLIError`` for bad input, ``UserCodeError`` when the user's code
    raised, and wengert's own errors (``UnsupportedSyntax``...) as they are."""
    out = sys.stdout if out is None else out
    if argnums is not None and mode not in ("jvp", "vjp"):
        raise CLIError(f"--argnums applies to --mode jvp and vjp, not to --mode {mode}")
    if graph is not None and not graph.endswith((".dot", ".svg")):
        raise CLIError(f"--graph {graph!r}: give a file name ending in .dot or .svg")
    path, _ = _split_target(target)
    # as ``python FILE.py`` would: the file's folder first on the path, so its
    # own imports work (kept while the function runs, which may import lazily)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        fn, path = _load(target)
        example = _example_args(fn, args)
        try:
            prog, static, _, _ = source_program(fn, example)
        except WengertError:
            raise
        except Exception as err:
            raise UserCodeError(f"{fn.__name__}{_brief(example)} raised "
                                f"{_describe(err, path)}") from err
        mask = _input_mask(fn, example, static, argnums)
        if mode == "program":
            shown = [prog]
            print(prog, file=out)
        elif mode == "dup":
            shown = [explicit_dup(prog)]
            print(shown[0], file=out)
        else:
            der = _derivative(prog, mode, mask)
            shown = [prog, der]
            print(python_function(der).source, file=out, end="")
    finally:
        sys.path.remove(folder)
    if graph:
        _write_graph(shown, graph, out)
    return shown


def _write_text(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as err:
        raise CLIError(f"cannot write {path!r}: {err.strerror}; give --graph a path in an "
                       "existing, writable folder") from err


def _write_graph(programs, path, out):
    text = to_dot(programs)
    if not path.endswith(".svg"):
        _write_text(path, text)
        print(f"# wrote {path}", file=out)
        return
    dot_path = path[:-4] + ".dot"
    _write_text(dot_path, text)
    dot = shutil.which("dot")
    if dot is None:
        raise CLIError(f"wrote {dot_path} but not {path}: Graphviz's dot is not on PATH; "
                       f"install Graphviz (e.g. apt-get install graphviz) and run "
                       f"dot -Tsvg {dot_path} -o {path}, or ask for --graph {dot_path}",
                       status=1)
    done = subprocess.run([dot, "-Tsvg", dot_path, "-o", path], capture_output=True, text=True)
    if done.returncode != 0:
        raise CLIError(f"wrote {dot_path}, but {dot} -Tsvg failed (exit {done.returncode}): "
                       f"{done.stderr.strip()}; ask for --graph {dot_path} instead", status=1)
    print(f"# wrote {path} and {dot_path}", file=out)


# --- reporting the user's errors --------------------------------------------------
def _brief(args):
    text = repr(args if len(args) != 1 else args[0])
    text = text if len(args) != 1 else f"({text})"
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(err, path):
    """``Type: message at file:line`` and what to do: the line is the
    innermost frame of the traceback outside wengert (the user's code). When
    the error arose inside wengert itself, the message says so: either the
    code does something wengert mishandles, or wengert has a bug."""
    frames = traceback.extract_tb(err.__traceback__)

    def ours(f):
        return os.path.abspath(f.filename).startswith(_PKG_DIR)
    where = next((f for f in reversed(frames)
                  if not ours(f) and not f.filename.startswith("<frozen")), None)
    at = f" at {where.filename}:{where.lineno}" if where is not None else ""
    if frames and ours(frames[-1]):
        return (f"{type(err).__name__}: {err}, inside wengert while converting the code"
                f"{at}; if that code runs as plain Python, this is a bug in wengert: report "
                "it with the output of --traceback")
    return f"{type(err).__name__}: {err}{at}; fix the code there (--traceback shows the rest)"


def _parser():
    parser = argparse.ArgumentParser(prog="wengert", description="wengert: read the programs "
                                     "and derivative code wengert generates")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("show", help="print a function's program or derivative code")
    p.add_argument("target", help="FILE.py:FUNC (FUNC may be Class.method)")
    p.add_argument("--mode", choices=("program", "dup", "jvp", "vjp"), default="program")
    p.add_argument("--argnums", default=None,
                   help="comma-separated positions (from 0) of the differentiated arguments "
                        "(jvp and vjp; default: all)")
    p.add_argument("--args", default=None,
                   help='example arguments, a Python expression (np available), e.g. '
                        '"np.ones(3), 2.0"; default 1.0 for each parameter')
    p.add_argument("--graph", default=None, help="also write the graph: OUT.dot or OUT.svg")
    p.add_argument("--traceback", action="store_true",
                   help="on an error, raise it with its full traceback")
    return parser


def main(argv=None):
    """The ``wengert`` command (and ``python -m wengert``); returns the exit
    status: 0; 2 for bad input; 1 when the function could not be shown, or
    Graphviz could not draw the SVG."""
    try:
        ns = _parser().parse_args(argv)
    except SystemExit as exit_:             # --help, or argparse's usage message
        return exit_.code
    try:
        show(ns.target, ns.mode, _parse_argnums(ns.argnums), ns.args, ns.graph)
    except WengertError as err:
        if ns.traceback:
            raise
        if isinstance(err, CLIError):
            print(f"wengert show: {err}", file=sys.stderr)
            return err.status
        # wengert's own errors (UnsupportedSyntax...) name the user's line
        kind = "" if isinstance(err, UserCodeError) else f"{type(err).__name__}: "
        print(f"wengert show: {kind}{err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
