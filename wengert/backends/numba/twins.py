"""numba twins of wengert's functions, compiled with the functions of their module they call.

    compiled_twin : fn -> a numba function                 (``codegen.NumbaWriter.define``)

A row's NumPy code written into the generated file (``code.define``) may have a twin in
numba's subset (cumprod's recurrence, ``primitives/scan.py``; the checkpointing
schedules' sweeps, ``control/schedules_numba.py``). A twin may call other functions of
its own module (the schedules' generators share ``comb_nb``, ``bit_length_nb`` and Revolve's
whole sequence): each one it reaches is compiled beside it, from its source, in a
namespace of their own where every name is the compiled function, and their text is
kept on the twin (``helper_deps``) so that ``standalone`` writes them above the code,
which then still runs as Python with NumPy alone.

Layer: backends.
"""
from __future__ import annotations

import inspect
import sys
import textwrap
import threading
import types

import numpy as np

from .compiled import load_numba

__all__ = ["compiled_twin", "callees"]


def callees(fn):
    """The functions of ``fn``'s module that ``fn`` calls, directly or not, each after
    those it calls, ``fn`` last."""
    order, seen = [], set()

    def names(code):
        out = list(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                out += names(const)
        return out

    def visit(f):
        if f.__name__ in seen:
            return
        seen.add(f.__name__)
        for name in names(f.__code__):
            g = f.__globals__.get(name)
            if isinstance(g, types.FunctionType) and g.__module__ == fn.__module__:
                visit(g)
        order.append(f)

    visit(fn)
    return order


def compiled_twin(twin):
    """``twin`` under ``numba.njit``, with every function of its module it calls
    (``callees``) compiled from its source in the module's one namespace (which reads
    ``np``: the functions two twins share are compiled once a process); its text
    (``helper_text``) and its callees' (``helper_deps``: (name, text) pairs) kept on the
    Python function for ``standalone.helper_text``."""
    numba = load_numba()
    with _LOCK:
        namespace = _namespace(twin.__module__)
        texts = []
        for f in callees(twin):
            text = textwrap.dedent(inspect.getsource(f))
            texts.append((f.__name__, text))
            if f.__name__ not in namespace:
                where = f"<wengert twin {f.__module__}.{f.__name__}>"
                exec(compile(text, where, "exec"), namespace)
                namespace[f.__name__].helper_text = text
                namespace[f.__name__] = numba.njit(namespace[f.__name__])
        found = namespace[twin.__name__]
    found.py_func.helper_deps = tuple(texts[:-1])
    return found


def _namespace(name):
    """The namespace the twins of module ``name`` are compiled in: a module's, registered
    in ``sys.modules`` (numba's disk cache finds the globals of a compiled generator by
    its module's name when it loads code calling one: an unknown name fails there)."""
    key = "wengert_twins_" + name.replace(".", "_")
    module = sys.modules.get(key)
    if module is None:
        module = types.ModuleType(key)
        module.np = np
        sys.modules[key] = module
    return module.__dict__


_LOCK = threading.Lock()      # (the twins of a module compiled once a process)
