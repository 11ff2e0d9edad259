"""Finding where a nan is born (``wg.debug_nans``): the switch, the user's
line each recorded equation came from, and the check of each value computed.

While the switch is on (``NANS.on``, set by ``api/debug.py``):

* every equation a recorder appends (``staging.StagingTrace``) keeps the
  user's line it came from (``Eqn.where``, ``(filename, lineno)``: the
  source engine records it always, ``core.where``): the line being staged
  (``where.locate``), or, where a transform derives equations from one
  equation of a Program (its jvp, its transpose), that equation's line
  (``at``), so the reverse sweep's work is blamed on the line it
  differentiates;
* every value the root computes (``trace.EvalTrace``: the primal, the
  tangents, the cotangents) is checked (``check``); the first nan raises
  ``FloatingPointError`` naming that line, the primitive, and whether it was
  the value or its derivative that went nan.

Off, it costs one attribute read per applied primitive.

Each setting has a process-wide value (an option: ``wg.debug_nans()``
called alone) and, inside a ``with`` block, a value of the block's context
only (``contextvars``: its thread, its asyncio task), so a block in one
thread never changes what another thread computes.

The same switch object holds ``NANS.safe`` (``wg.nan_safe``, on by default):
whether the derivative rules of singular functions write their products
with ``primitives.safe``'s guarded ``safe_mul``/``safe_div`` (an exact zero
tangent or cotangent gives zero, never nan) or with plain ``*`` and ``/``. The generated code
of the source engine has no checks: while the switch is on, the source
engine runs its Programs through the interpreter instead (``api/source.py``).

Layer: core.
"""
from __future__ import annotations

import contextvars
import threading

import numpy as np

from .atoms import Role
from .errors import user_location

__all__ = ["NANS", "WHERE", "at", "check", "located", "has_nan"]


class _Switch:
    """The settings: ``on`` (``wg.debug_nans``) and ``safe`` (``wg.nan_safe``:
    derivatives keep exact zeros, ``primitives.safe``). Each reads the value
    of the current context (``local[field]``, set by a ``with`` block) if it
    has one, else the process-wide one (``process[field]``, an option)."""

    def __init__(self):
        self.process = {"on": False, "safe": True}
        self.local = {field: contextvars.ContextVar(f"wengert_{field}", default=None)
                      for field in self.process}
        self.lock = threading.Lock()

    @property
    def on(self):
        value = self.local["on"].get()
        return self.process["on"] if value is None else value

    @property
    def safe(self):
        value = self.local["safe"].get()
        return self.process["safe"] if value is None else value


NANS = _Switch()


class _Where(threading.local):
    """The equation whose work is being done in this thread: its user line
    and the role of what it computes (None: the user's code itself)."""

    def __init__(self):
        self.where = None
        self.role = None


WHERE = _Where()


def located():
    """The user's ``file:line`` the work being done now belongs to."""
    where = WHERE.where
    return f"{where[0]}:{where[1]}" if where else user_location()


class at:
    """``with at(eqn):`` the work done meanwhile is ``eqn``'s (its line, its
    outputs' role, or ``role``: its transpose's are cotangents), unless ``eqn`` knows no line (a Program built before
    the switch was on): then the line in force stays."""

    __slots__ = ("eqn", "role", "prev")

    def __init__(self, eqn, role=None):
        self.eqn, self.role = eqn, role

    def __enter__(self):
        self.prev = (WHERE.where, WHERE.role)
        where = getattr(self.eqn, "where", None)
        if where is not None:
            WHERE.where = where
            WHERE.role = self.role or (self.eqn.outputs[0].role if self.eqn.outputs else None)

    def __exit__(self, *exc):
        WHERE.where, WHERE.role = self.prev
        return False


def has_nan(x):
    """Whether a number or an array holds a nan (integers never do)."""
    if type(x) is float or type(x) is complex:
        return x != x
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "fc" and bool(np.isnan(x).any())
    return False


# a value's equation computes its tangent too, where forward mode runs its rule
_WHAT = {Role.VALUE: "the value of this line (or its tangent)",
         Role.RESIDUAL: "the value of this line (or its tangent)",
         Role.TANGENT: "the tangent (forward mode) of this line",
         Role.COTANGENT: "the cotangent (reverse mode) of this line"}


def check(prim, out):
    """Raise ``FloatingPointError`` if ``out`` (one result, or a tuple of
    them) of ``prim`` holds a nan."""
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        if has_nan(o):
            what = _WHAT.get(WHERE.role, "the value of this line or its derivative")
            raise FloatingPointError(
                f"{located()}: the first nan: {prim.name} gave nan in {what} (wg.debug_nans "
                "is on; often 0 * inf, inf - inf or 0 / 0). A nan in a branch np.where does "
                "not select: compute that branch on safe inputs (np.where(ok, x, 1.0)); a "
                "nan in the derivative only: the line is singular at this point")
