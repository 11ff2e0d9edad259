"""The numba code's helpers written into its text: ``.source`` of ``backend="numba"``
runs where wengert is absent (issue 27).

    finish       : (source, namespace, fname) -> (source, scratch)
    njit_text    : (text, name) -> a numba function made from Python text

The code numba compiles calls a few functions of wengert's (``numba_helper``: each
compiled once a process and shared by every generated code): the buffers kept between
calls (``reuse_empty``, ``reuse_zeros``, ``reuse_full``, ``reuse_rows``:
``scratch.py``), ``batched_matmul`` (``matmul.py``) and the reductions over some axes
(``min_last_axis``...: ``codegen.py``). ``finish`` writes the Python text of each one
the code calls above the code, under the name the code calls it by, and takes its line
out of the header: the text runs with NumPy alone (as Python, each helper a plain
function), or under numba once the helpers and the function are ``numba.njit``-ed. Only
the helpers the code calls are written.

Where wengert compiles the text (``compiled._module``) the names stay bound to the
helpers compiled once a process: the definitions in the text are the same functions'
source, and numba compiles none of them again.

Layer: backends.
"""
from __future__ import annotations

import inspect
import re
import textwrap

import numpy as np

from .compiled import HELPERS, load_numba, numba_helper
from .hoist import loop_buffers
from .scratch import REUSE_HELPERS, reusable, with_scratch
from .simd import simd_calls

__all__ = ["finish", "njit_text", "helper_text"]

_BOUND = re.compile(r"^#   (\w+) = ")


def njit_text(text, name):
    """The function ``name`` that ``text`` (Python that reads ``np``) defines, under
    ``numba.njit``; its text kept (``helper_text`` writes it into the code)."""
    namespace = {"np": np}
    exec(text, namespace)
    fn = namespace[name]
    fn.helper_text = textwrap.dedent(text).strip("\n") + "\n"
    return load_numba().njit(fn)


def helper_text(helper, name, np_name="np"):
    """The Python text of ``helper`` (a numba function of ``HELPERS``) defining it as
    ``name``, reading NumPy as ``np_name``."""
    fn = getattr(helper, "py_func", helper)
    text = getattr(fn, "helper_text", None) or textwrap.dedent(inspect.getsource(fn))
    text = re.sub(rf"^def {re.escape(fn.__name__)}\(", f"def {name}(", text, count=1, flags=re.M)
    if np_name != "np":
        text = re.sub(r"\bnp\.", f"{np_name}.", text)
    return text


def _is_helper(value):
    return any(value is h for h in tuple(HELPERS.values()))


def finish(source, namespace, fname):
    """(source, scratch) of the numba code ``source`` of function ``fname``: the
    buffers it never returns reused (``scratch.with_scratch``; ``scratch``: the (dtype,
    ndim) of each), and every helper it calls written above it (module docstring); its
    loop temporaries in buffers made before the loop first (``hoist``), its large
    transcendental ufuncs NumPy's kernels (``simd``)."""
    np_name = next((k for k, v in namespace.items() if v is np), None)
    source = loop_buffers(source, fname, np_name)
    source, scratch = _reuse_scratch(source, namespace, fname)
    return _written_out(simd_calls(source, namespace), namespace), scratch


def _written_out(source, namespace):
    """``source`` with the helpers it calls defined in it, their header lines dropped."""
    helpers = {name: value for name, value in namespace.items() if _is_helper(value)}
    if not helpers:
        return source
    np_name = next((k for k, v in namespace.items() if v is np), "np")
    lines = source.splitlines()
    at = next(k for k, line in enumerate(lines) if not line.startswith("#"))
    header = [line for line in lines[:at]
              if not (_BOUND.match(line) and _BOUND.match(line).group(1) in helpers)]
    if not any(_BOUND.match(line) for line in header):
        header[0] = header[0].replace("; names bound outside it:", "")
    defined, written = [], set()
    for name in sorted(helpers):
        # the functions a twin calls (``twins.compiled_twin``), each written once
        for dep, text in getattr(getattr(helpers[name], "py_func", None), "helper_deps", ()):
            if dep not in written and dep not in helpers:
                written.add(dep)
                if np_name != "np":
                    text = re.sub(r"\bnp\.", f"{np_name}.", text)
                defined += text.rstrip("\n").splitlines() + ["", ""]
        defined += helper_text(helpers[name], name, np_name).rstrip("\n").splitlines() + ["", ""]
    return "\n".join(header + defined + lines[at:]) + "\n"


def _reuse_scratch(source, namespace, fname):
    """(source, scratch) of the code reusing the buffers it never returns
    (``scratch``): the text, its helpers bound in ``namespace`` and named in
    its header, and the (dtype, ndim) of each buffer."""
    np_name = next((k for k, v in namespace.items() if v is np), None)
    allocs = reusable(source, fname, np_name) if np_name else []
    if not allocs:
        return source, ()
    source, helpers, param = with_scratch(source, fname, allocs, namespace, np_name)
    notes = []
    for name, kind in helpers.items():
        namespace[name] = numba_helper(f"reuse_{kind}",
                                       lambda kind=kind: load_numba().njit(REUSE_HELPERS[kind]))
        what = "np.empty of a buffer that doubles" if kind == "rows" else f"np.{kind}"
        notes.append(f"#   {name} = wengert's {what}, reusing a buffer of an earlier call")
    notes.append(f"#   {param} = the buffers of an earlier call, reused where their shapes "
                 "match, passed at each call")
    lines = source.splitlines()
    if not lines[0].endswith(":"):
        lines[0] += "; names bound outside it:"
    at = next(k for k, line in enumerate(lines) if line.startswith("def "))
    return "\n".join(lines[:at] + notes + lines[at:]) + "\n", \
        tuple((a.dtype, a.ndim) for a in allocs)
