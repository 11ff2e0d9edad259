"""A converted function: the rewritten code compiled once per code object
(``source.rewrite``), run in a namespace that holds the runtime it is given
(``__wg``), the function's globals dict and its closure cells.

Layer: frontends.
"""
from __future__ import annotations

import ast
import builtins
import functools

from ...core.errors import PACKAGE_DIR, UnsupportedSyntax
from ...core.where import AST_LOCK, parse
from .alias import mark_aliased_writes
from .check import check
from ...primitives.host import EnvRef
from .env import default_value
from .guards import guard
from .names import CELL as _CELL, GLOBALS as _GLOBALS, read_outside_at_run
from .rewrite import CONVERTED, RT, Converter
from .text import Source, find_lambda, fix_locations


# one AST conversion at a time (``core.where.AST_LOCK``: CPython's is not thread-safe);
# a conversion is done once per code object
_AST_LOCK = AST_LOCK


@functools.lru_cache(maxsize=1024)
def _converted_code(code, filename, qualname):
    with _AST_LOCK:
        return _convert(code, filename, qualname)


def _convert(code, filename, qualname):
    """The compiled conversion of a function's code: one per code object (the
    closures a factory makes share it; a reassigned ``__code__`` gets its own),
    for the 1024 used last (code made at run time, in a loop, stays bounded).
    ``filename`` is part of the key: code objects compare equal without it,
    and two files' equal functions each report their own lines."""
    src = Source(code, qualname)
    try:
        module = parse(src.text)
    except SyntaxError:
        # inspect gives a lambda's lines from its own line, which may continue
        # an expression begun above (a lambda passed on a call's second line):
        # the lambda is found in the whole file, by its line and parameters
        module = src.whole_file() if code.co_name == "<lambda>" else None
        if module is None:
            raise src.error(ast.Pass(lineno=1, col_offset=0), "a function whose lines do not "
                            "parse alone", "define the function with def") from None
    tree = module.body[0]
    if isinstance(tree, ast.Expr) and isinstance(tree.value, ast.Lambda):
        raise src.error(tree, "a lambda defined on the same line as other code",
                        "define the function with def")
    name = code.co_name                 # not __name__, which functools.wraps rewrites
    if isinstance(tree, ast.FunctionDef) and name != "<lambda>" and tree.name != name:
        raise src.error(tree, f"a function whose source is not its own def (found {tree.name!r})",
                        "define it with def")
    if not isinstance(tree, ast.FunctionDef) or name == "<lambda>":
        lam = find_lambda(module, code, src)
        tree = ast.FunctionDef(name="__wg_lambda", args=lam.args,
                               body=[ast.Return(value=lam.body)], decorator_list=[],
                               returns=None, type_params=[], lineno=lam.lineno,
                               col_offset=lam.col_offset)
    check(tree, src)
    mark_aliased_writes(tree, src)
    tree = read_outside_at_run(tree, code.co_freevars, src)
    conv = Converter(src)
    new = conv.visit(tree)
    mod = ast.Module(body=[new], type_ignores=[])
    fix_locations(mod)
    ast.increment_lineno(mod, src.first - 1)
    return compile(mod, src.filename, "exec"), new.name, src, tree.wg_param_writes


def convert_with(fn, runtime):
    """The converted version of a plain Python function (its compiled code
    cached per code object: ``_converted_code``). Its namespace holds only
    what the rewrite reads through: ``runtime`` (the module converted code
    calls as ``__wg``), ``fn``'s globals dict itself
    (read at each staging, never copied) and its closure cells."""
    if getattr(fn, "__wg_source__", None) is not None or is_converted(fn):
        return fn           # converted already (handed on by converted code)
    if not hasattr(fn, "__code__"):
        raise UnsupportedSyntax(
            f"the source of {getattr(fn, '__qualname__', repr(fn))} is not available (not a "
            "Python function); the source engine reads a function's source. Use engine='trace'",
            construct="unavailable source")
    code, name, src, writes = _converted_code(fn.__code__, fn.__code__.co_filename,
                                              fn.__qualname__)
    # the code generated from it holds while ``fn`` runs this code (a
    # reassigned ``__code__`` is another function under the same object)
    guard(EnvRef("object", fn, getattr(fn, "__name__", "function"), (("attr", "__code__"),)),
           "is", fn.__code__)
    glb = {RT: runtime, _GLOBALS: fn.__globals__, CONVERTED: True,
           "__builtins__": fn.__globals__.get("__builtins__", builtins)}
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        glb[_CELL + var] = cell
    ns = {}
    exec(code, glb, ns)
    out = ns[name]
    # a default is a value outside the function, kept on it: read where it
    # lives like a global (an array default changed in place is seen)
    if fn.__defaults__:
        out.__defaults__ = tuple(default_value(fn, "__defaults__", k, d)
                                 for k, d in enumerate(fn.__defaults__))
    if fn.__kwdefaults__:
        out.__kwdefaults__ = {k: default_value(fn, "__kwdefaults__", k, d)
                              for k, d in fn.__kwdefaults__.items()}
    out.__wrapped__ = fn
    out.__wg_source__ = src
    out.__wg_param_writes__ = writes        # checked where converted code calls it
    return out




def is_converted(fn):
    """Whether ``fn`` is converted code already (a def nested in a converted
    function is converted with it, and reads what it closes over from there)."""
    return getattr(fn, "__globals__", {}).get(CONVERTED, False)


def is_wengert_code(fn):
    """Whether ``fn`` is wengert's own (a trace-engine derivative's wrapper):
    judged by its code's file, since ``functools.wraps`` gives a wrapper the
    user's ``__module__`` and ``__wrapped__``. Such functions are called, not
    converted."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(PACKAGE_DIR)


