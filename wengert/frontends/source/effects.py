"""Writes the function makes outside itself, made by the generated code at
each call, as often as the plain function makes them:

    self.nfev += 1          ->  __wg.aug_attr(self, "nfev", "+", 1)
    self.cache = x          ->  __wg.set_attr(self, "cache", x)
    nonlocal count; count += 1   ->  __wg.aug_outside(__wg_cell_count, "count", "+", 1)
    global calls; calls = calls + 1

The converter (``rewrite``, ``names``) turns each write of an attribute, and
each assignment of a name the function declares ``nonlocal`` or ``global``,
into a call of these helpers. Where the place is outside the function (an
object found outside: ``self`` of a method, an argument, a global's
attributes; a closure cell; a module global), the write is an ``env_write``
equation (``primitives/host``): an effect, made when the code runs, of the
value the plain function writes (never its derivative), with the operator of
an augmented assignment applied to what the place holds then. An object the
function made itself is written while staging, as Python would.

A read of a place the function wrote earlier gives what it wrote
(``written.py``, consulted by ``env.classify``).

Layer: frontends.
"""
from __future__ import annotations

import sys

from ...core.errors import UnsupportedSyntax, user_location
from ...core.trace import TRACE_STATE
from ...primitives.host import EnvRef, env_write
from .env import EnvObject, concrete
from .written import OPERATORS, record

__all__ = ["set_attr", "aug_attr", "set_outside", "aug_outside", "nonlocal_def",
           "check_nonlocal_call"]


def _write(ref, op, value):
    """Record the write of ``value`` at the outside place ``ref``."""
    if type(value).__name__ == "Undefined":
        value.fail()
    if isinstance(value, EnvObject):
        value = concrete(value)     # an object found outside: that object is written
    env_write(ref, value, op)
    record(ref, op, value)


def _check_op(op):
    if op not in OPERATORS:
        raise UnsupportedSyntax(f"{user_location()}: the augmented assignment {op}= of an "
                                "outside value is not supported; write it out (x = x op v)")


def set_attr(obj, name, value):
    """``obj.name = value``."""
    if isinstance(obj, EnvObject):
        _write(obj._ref.attr(name), None, value)
    else:
        setattr(obj, name, value)           # an object the function made


def aug_attr(obj, name, op, value):
    """``obj.name op= value``."""
    _check_op(op)
    if isinstance(obj, EnvObject):
        _write(obj._ref.attr(name), op, value)
    else:
        setattr(obj, name, OPERATORS[op](getattr(obj, name), value))


def _place(where, name):
    """The ``EnvRef`` of a name declared ``nonlocal`` (``where``: its cell) or
    ``global`` (``where``: the function's globals dict)."""
    if isinstance(where, dict):
        module = sys.modules.get(where.get("__name__"))
        label = where["__name__"] if getattr(module, "__dict__", None) is where else ""
        return EnvRef("globals", where, label, (("item", name),))
    return EnvRef("cell", where, name)


def set_outside(where, name, value):
    """``name = value`` of a ``nonlocal`` or ``global`` name."""
    _write(_place(where, name), None, value)


def aug_outside(where, name, op, value):
    """``name op= value`` of a ``nonlocal`` or ``global`` name."""
    _check_op(op)
    _write(_place(where, name), op, value)


# --- nested defs that assign their enclosing function's variables ------------------
def nonlocal_def(fn, names, where):
    """Mark a nested def that assigns ``names`` of the function around it
    (``nonlocal``) with the trace it was made under: a call from a branch or
    loop staged on a traced value would assign them there, out of that
    block's reach (``check_nonlocal_call``)."""
    fn.__wg_nonlocal__ = (names, TRACE_STATE.current, where)


def check_nonlocal_call(fn):
    """Refuse a call of a ``nonlocal_def`` function from another trace than
    the one it was made under."""
    mark = getattr(fn, "__wg_nonlocal__", None)
    if mark is None or TRACE_STATE.current is mark[1]:
        return
    names, _, where = mark
    raise UnsupportedSyntax(
        f"{user_location()}: {getattr(fn, '__qualname__', 'a nested function')} (defined at "
        f"{where}) assigns {', '.join(names)} of the function around it (nonlocal), and is "
        "called inside a branch or loop that depends on a traced value, or by a function "
        "that stages it (wg.fori_loop): the assignment would be lost. Call it outside such "
        "blocks, or return the value instead", construct="nonlocal assigned in a traced block")
