"""Where a traced value met a conversion (``__array__``, ``__float__``):
the user's source line and the call on it, so the error can name what the
user called (``np.array(...)`` of a list, ``scipy.integrate.quad``) and say
what to do instead.

A conversion runs inside NumPy's or another library's code, often from C
with no frame of its own: the user's frame is the innermost one outside
wengert and NumPy; the call is the one its current instruction makes
(``co_positions``), else found among the dotted names called on its line,
resolved through the frame's scopes (modules only: reading an attribute of
another object could run code).

Layer: numpy.
"""
from __future__ import annotations

import builtins
import linecache
import re
import sys
import types

from . import library
from .lists import CONCATENATORS
from ..core.errors import PACKAGE_DIR, ConcretizationError, library_file, NoDerivativeRule, no_rule_message

__all__ = ["resolve", "user_frame", "public_name", "raise_for_called_function",
           "current_call"]



def resolve(dotted, frame):
    """The object a dotted name on ``frame``'s line stands for, looking into
    modules only (reading an attribute of another object could run code)."""
    head, *rest = dotted.split(".")
    # converted code (the source engine) reads the user's globals through __wg_G
    user_globals = frame.f_globals.get("__wg_G")
    scopes = (frame.f_locals, frame.f_globals,
              user_globals if isinstance(user_globals, dict) else {}, vars(builtins))
    obj = next((sc[head] for sc in scopes if head in sc), None)
    for attr in rest:
        if not isinstance(obj, types.ModuleType):
            return None
        obj = getattr(obj, attr, None)
    return obj


def user_frame():
    """The innermost frame outside wengert and NumPy, and whether a frame of
    another installed package (SciPy...) lies between it and the conversion."""
    frame, inside_library = sys._getframe(1), False
    while frame is not None:
        fname = frame.f_code.co_filename
        if fname.startswith(PACKAGE_DIR) or library_file(fname, "numpy") or "<frozen" in fname:
            frame = frame.f_back
        elif "site-packages" in fname or "dist-packages" in fname:
            inside_library, frame = True, frame.f_back
        else:
            break
    return frame, inside_library


def public_name(f, written):
    """``f`` as a user imports it: the shortest module path whose attribute
    of that name is ``f`` (``scipy.integrate.solve_ivp``, not the private
    module it is defined in); else the name as written."""
    name = getattr(f, "__name__", None)
    mod = getattr(f, "__module__", None) or ""
    if name is None or not mod:
        return written
    parts = mod.split(".")
    for k in range(1, len(parts) + 1):
        owner = sys.modules.get(".".join(parts[:k]))
        if owner is not None and getattr(owner, name, None) is f:
            return library.display_name(f) if parts[0] == "numpy" else \
                f"{'.'.join(parts[:k])}.{name}"
    return written


def raise_for_called_function(lists=True):
    """A traced value reached ``__array__`` from a call on the user's line:
    a call NumPy converts its list arguments for (``np.array([a, b])``,
    ``np.sum([a, b])``, ``np.r_[a, b]``: the source engine supports them, the
    trace engine never sees them), or a function of another library without
    a rule (``scipy.integrate.solve_ivp``), named as the user calls it."""
    frame, inside_library = user_frame()
    if frame is None:
        return
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    calls = re.findall(r"([A-Za-z_][\w.]*)\s*([(\[])\s*([(\[]?)", line)
    found = [(name, resolve(name, frame)) for name, _, _ in calls]
    if not inside_library and lists:
        # the call being made: the expression of the frame's current instruction;
        # else the call given a list literal first, then the innermost
        made = current_call(frame, line)
        literal = [k for k, (_, _, arg) in enumerate(calls) if arg]
        order = [k for k, (name, _, _) in enumerate(calls) if name == made] + literal + [
            k for k in reversed(range(len(calls))) if k not in literal]
        for name, fn in (found[k] for k in order):
            if isinstance(fn, CONCATENATORS) or callable(fn) and library.call_rule(fn):
                call = f"{name}[...]" if isinstance(fn, CONCATENATORS) else f"{name}(...)"
                raise ConcretizationError(
                    f"{where}: {call} of traced values (a traced array, or a list or tuple "
                    "holding them): NumPy converts them with __array__ before any rule can "
                    "see the call, so the trace engine cannot differentiate it. Use "
                    "engine='auto' (the default) or engine='source', which supports it, or "
                    "write np.stack([...]) of the traced values (pass a traced array on as "
                    "it is: it needs no np.array)")
    if not inside_library:
        return
    for name, fn in found:
        if (callable(fn) and not isinstance(fn, type) and not is_user_code(fn)
                and (getattr(fn, "__module__", None) or "numpy").split(".")[0] != "numpy"):
            if library.call_rule(fn) is not None:
                # a function with a rule the trace engine never reaches
                # (scipy.special.logsumexp, scipy.stats.norm.logpdf)
                raise ConcretizationError(
                    f"{where}: {public_name(fn, name)}(...) converts its traced argument "
                    "with np.asarray before any rule can see the call, so the trace engine "
                    "cannot differentiate it; a SciPy function with a rule is called by "
                    "engine='source' or engine='auto' (the default), which supports it")
            raise NoDerivativeRule(no_rule_message(where, public_name(fn, name)))


def current_call(frame, line):
    """The dotted name called (or subscripted) by the instruction ``frame``
    is executing, from its source position (``co_positions``), or None."""
    try:
        pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):
        return None
    start, end, col, end_col = pos
    if start != frame.f_lineno or end != start or col is None or end_col is None:
        return None
    m = re.match(r"([A-Za-z_][\w.]*)\s*[(\[]", line[col:end_col])
    return m.group(1) if m else None


def is_user_code(fn):
    code = getattr(fn, "__code__", None)
    fname = getattr(code, "co_filename", "") or ""
    return code is not None and not ("site-packages" in fname or "dist-packages" in fname)
