"""The checks ``source.alias`` marks, made on the values while the converted
function is staged (they leave nothing in the generated code). The values
decide what the static analysis could not: a scalar (``y[i]`` of a 1-D array,
a float in ``s += 1``) shares no memory, an array or a list may; a 0-d
traced value counts as a scalar only where it is one for certain
(``inplace.is_scalar``): ``x.copy()`` of a 0-d array is a 0-d array, which
``y += v`` writes in place.

* ``alias_check``: before ``y[i] = v`` / ``y += v``, no name read afterwards
  may share ``y``'s value;
* ``check_param_writes``: a user's function that writes into the value of a
  parameter (``def apply_bc(u): u[0] = 0.0``) must not be given a value its
  caller reads afterwards: the caller would see the write in Python, not in
  the functional update.

Layer: frontends.
"""
from __future__ import annotations

import inspect
import numbers

import numpy as np

from ...core.errors import InPlaceUpdateError, user_location
from ...core.primitive import TracerBase
from ...core.inplace import is_scalar

__all__ = ["alias_check", "param_writes", "check_param_writes"]


class _Outside:
    """The value of a name the function reads from outside (a global, a
    closure variable): converted code reads it through the runtime, so the
    check cannot; it may be an array."""


def _value(get):
    try:
        v = get()
    except UnboundLocalError:       # a local not bound on this path
        return None
    except NameError:
        return _Outside()
    return None if type(v).__name__ == "Undefined" else v


def _in_place(v):
    """Whether ``v += ...`` writes into ``v`` (an array, a 0-d one too, or a
    list), rather than binding a new value (a number, a NumPy scalar)."""
    if isinstance(v, TracerBase):
        return not is_scalar(v)
    return isinstance(v, (np.ndarray, list, dict))


def _may_share(v):
    """Whether ``v`` can share memory with an array: not a scalar, a number,
    a string, a function (a closure reads its variables when called), one of
    wengert's own objects (a range, an unassigned marker)."""
    if v is None or isinstance(v, (numbers.Number, np.generic, str, bytes, range)):
        return False
    if isinstance(v, TracerBase):
        return not is_scalar(v)
    if isinstance(v, tuple):
        return any(_may_share(x) for x in v)
    if isinstance(v, (np.ndarray, list, dict, _Outside)):
        return True
    return not callable(v) and type(v).__module__.split(".")[0] != "wengert"


def _written(kind, v):
    return _in_place(v) if kind == "augmented" else _may_share(v)


def _write_text(kind, name):
    return f"{name}[...] = ..." if kind == "subscript" else f"{name} += ..."


def alias_check(info, get_written, get_aliases):
    """Raise ``InPlaceUpdateError`` when a marked write would change a value
    that a live alias may share (``source.alias.mark_aliased_writes``)."""
    kind, name, filename, line, aliases = info
    if kind == "augmented" and not _in_place(_value(get_written)):
        return                  # y += 1 on a number binds a new number
    bad = [(m, lines) for (m, lines), get in zip(aliases, get_aliases) if _may_share(_value(get))]
    if not bad:
        return
    m, lines = bad[0]
    bound = ", ".join(str(ln) for ln in lines)
    extra = f", or write {name} = {name} + ... (a new array)" if kind == "augmented" else ""
    raise InPlaceUpdateError(
        f"{filename}:{line}: `{_write_text(kind, name)}` changes {name!r} in place, but {m!r} "
        f"(bound at line {bound}) may be the same array as {name!r} or a view of it, and {m!r} "
        f"is read afterwards: Python would show the change through {m!r}, and wengert's "
        f"functional update does not, so the derivative would be wrong. Copy where {m!r} is "
        f"bound ({m} = ....copy()), or copy before writing ({name} = {name}.copy()){extra}",
        filename=filename, lineno=line, names=(name, m))


def param_writes(fn, writes):
    """Record on a nested def, when it is made, which parameters' values its
    body writes into (``((name, (kind, file, line)), ...)``)."""
    fn.__wg_param_writes__ = dict(writes)


def check_param_writes(fn, args, kw, unseen=()):
    """``fn`` (converted) is called from converted code with ``args`` and
    ``kw``, which its caller may read afterwards (but for the positions and
    keywords ``unseen``): refuse a write into one of them."""
    writes = getattr(fn, "__wg_param_writes__", None)
    if not writes:
        return
    args = [None if k in unseen else a for k, a in enumerate(args)]
    kw = {k: None if k in unseen else a for k, a in kw.items()}
    try:
        bound = inspect.signature(fn).bind(*args, **kw).arguments
    except TypeError:
        return                  # the call itself fails, with Python's message
    for p, (kind, filename, line) in writes.items():
        if p in bound and _written(kind, bound[p]):
            name = getattr(fn, "__qualname__", p)
            raise InPlaceUpdateError(
                f"{filename}:{line}: `{_write_text(kind, p)}` in {name} writes into the value "
                f"its caller passed as {p!r} (called at {user_location()}), which the caller "
                "reads afterwards: Python would change the caller's array, and wengert's "
                "functional update does not, so the derivative would be wrong. Copy it in "
                f"{name} ({p} = {p}.copy()) and return the new value for the caller to use",
                filename=filename, lineno=line, names=(p,))
