"""The early-exit flags of the converter (``rewrite``): ``return``, ``break``
and ``continue`` inside a block become assignments of flags, and the
statements after a block that may set one are guarded by it.

Layer: frontends.
"""
from __future__ import annotations

import ast

from .names import DONE as _DONE

__all__ = ["Flags"]


class Flags:
    """The early-exit flags in force where a block is converted: ``done``
    (the function returns early: ``__wg_done``/``__wg_ret``), the innermost
    loop's own ``brk`` and ``cont`` flag names (None where it has no
    ``break``/``continue``), and ``outer_brks``, the break flags of the loops
    around it, which a ``return`` sets too."""

    def __init__(self, done=False, brk=None, cont=None, outer_brks=()):
        self.done, self.brk, self.cont, self.outer_brks = done, brk, cont, outer_brks

    def any(self):
        return bool(self.done or self.brk or self.cont)

    @property
    def loops_left_by_return(self):
        return ((self.brk,) if self.brk else ()) + self.outer_brks

    def set_by(self, node):
        """The flags ``node`` (a converted statement) may set."""
        found = []
        for flag, stmt in ((_DONE if self.done else None, ast.Return), (self.brk, ast.Break),
                           (self.cont, ast.Continue)):
            if flag and _may_set(node, flag, stmt):
                found.append(flag)
        return found


def _may_set(node, flag, stmt):
    """Whether ``node`` assigns ``flag`` or holds a ``stmt`` (Return, Break,
    Continue) that will; an over-approximation (a nested loop's own break
    counts), which only adds a guard that is always true."""
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flag
                                             for t in n.targets):
            return True
        if isinstance(n, stmt):
            return True
    return False
