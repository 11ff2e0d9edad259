"""What the function wrote outside itself, as later reads in it see it
(``effects`` records; ``env.classify`` asks before it reads a place).

A read of a place the function wrote earlier gives what it wrote: the staged
value, or for ``x += v`` what the place held before (read, and checked at
each call, as any read) combined with ``v``. A write made inside a branch or
loop that depends on a traced value happens at run time only on the path
taken: reading the place after that block is refused (the value depends on
the path), reading it inside the block is not.

The table belongs to one staging of one function (``writes``: a context
variable ``make_program`` sets), never to a module or a thread.

Layer: frontends.
"""
from __future__ import annotations

import contextlib
import contextvars
import operator

from ...core.errors import UnsupportedSyntax, user_location
from ...core.trace import TRACE_STATE

__all__ = ["writes", "enter", "top_trace", "record", "written", "MISSING", "OPERATORS"]

# the operator of ``x op= v`` on staged values (a new value: the staged one
# is never written in place; the generated code applies Python's in-place one)
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
             "@": operator.matmul, "&": operator.and_, "|": operator.or_, "^": operator.xor,
             "<<": operator.lshift, ">>": operator.rshift}

_WRITES = contextvars.ContextVar("wengert_outside_writes", default=None)
MISSING = object()


class _Staging:
    """One staging of a function: its writes (place key -> ``_Write``) and
    the trace its own body records into (``top``: a block's is another)."""

    __slots__ = ("table", "top")

    def __init__(self):
        self.table, self.top = {}, None


@contextlib.contextmanager
def writes():
    """``with writes():`` a staging with its own table of outside writes;
    ``enter()`` at the start of the function's body names its trace."""
    token = _WRITES.set(_Staging())
    try:
        yield
    finally:
        _WRITES.reset(token)


def enter():
    """The function's body starts recording here (``top_trace``)."""
    staging = _WRITES.get()
    if staging is not None:
        staging.top = TRACE_STATE.current


def top_trace():
    """The trace the function's own body records into, or None outside a
    staging."""
    staging = _WRITES.get()
    return None if staging is None else staging.top


class _Write:
    """One write of a place: ``value`` (or, with ``op``, ``value`` combined
    with what the place held before: ``before``, the previous write or
    None), made while ``trace`` recorded, at ``where``."""

    __slots__ = ("ref", "op", "value", "before", "trace", "where")

    def __init__(self, ref, op, value, before, trace, where):
        self.ref, self.op, self.value, self.before = ref, op, value, before
        self.trace, self.where = trace, where


def record(ref, op, value):
    """The function wrote ``value`` at ``ref`` (``op``: with ``op=``)."""
    staging = _WRITES.get()
    if staging is None:
        return
    table = staging.table
    key = ref.param_key
    before = table.get(key) if op is not None else None
    table[key] = _Write(ref, op, value, before, TRACE_STATE.current, user_location())


def _visible(trace):
    """Whether values recorded by ``trace`` may be read now: it is the
    current trace or one the current one is nested in."""
    t = TRACE_STATE.current
    while t is not None:
        if t is trace:
            return True
        t = t.parent
    return False


def written(ref, read):
    """What the function reads at ``ref`` after writing it (``read()``: what
    the place held before, read and checked as usual), or ``MISSING`` where
    it wrote nothing there."""
    staging = _WRITES.get()
    if staging is None or not staging.table:
        return MISSING
    w = staging.table.get(ref.param_key)
    return MISSING if w is None else _value_of(w, read)


def _value_of(w, read):
    if not _visible(w.trace):
        raise UnsupportedSyntax(
            f"{user_location()}: {w.ref!r} is read after a branch or loop that depends on a "
            f"traced value wrote it ({w.where}): what it holds depends on the path taken at "
            "run time, which the generated code does not know here; read it inside that "
            "block, or keep the value in a variable",
            construct="outside value written in a traced block")
    if w.op is None:
        return w.value
    before = read() if w.before is None else _value_of(w.before, read)
    return OPERATORS[w.op](before, w.value)
