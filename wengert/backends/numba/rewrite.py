"""Statements of the Python backend's code that numba's subset lacks, rewritten
in the generated text: ``rewrite_text``.

* ``with np.errstate(...):`` blocks: the block's body, dedented. numba neither
  warns nor raises on floating-point errors (it computes what NumPy computes
  under ``errstate(all='ignore')``), so the body's values are the same;
* ``except np.linalg.LinAlgError:``: ``except Exception:`` (numba catches no
  exception class but ``Exception``); in the code an emit rule writes, the
  ``try`` body is one NumPy call whose only error is that one.

Layer: backends.
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["rewrite_text", "rewritten"]


def rewritten(source, namespace):
    """``rewrite_text`` of the generated ``source``, whose names are bound in
    ``namespace`` (NumPy's among them, or nothing to rewrite)."""
    np_name = next((k for k, v in namespace.items() if v is np), None)
    return source if np_name is None else rewrite_text(source, np_name)


def rewrite_text(source, np_name, indent="    "):
    """``source`` with the statements above rewritten (``np_name``: the name
    NumPy has in it)."""
    np_ = re.escape(np_name)
    errstate = re.compile(rf"^(\s*)with {np_}\.errstate\([^()]*\):\s*$")
    except_ = re.compile(rf"^(\s*)except {np_}\.linalg\.LinAlgError:(.*)$")
    out, blocks = [], []           # the (original) indents of the errstate blocks open here
    for line in source.splitlines():
        if line.strip():
            depth = len(line) - len(line.lstrip())
            while blocks and depth <= blocks[-1]:
                blocks.pop()
            found = errstate.match(line)
            if found:
                blocks.append(depth)
                continue
            line = line[len(indent) * len(blocks):]
            found = except_.match(line)
            if found:
                line = f"{found.group(1)}except Exception:{found.group(2)}"
        out.append(line)
    return "\n".join(out) + ("\n" if source.endswith("\n") else "")
