"""``Ident``: an object's identity as a dictionary key (kept at the bottom of
the layers: the Program (``ir``) and the staging context (``context``) both
key tables by it).

Layer: core.
"""
from __future__ import annotations

__all__ = ["Ident"]


class Ident:
    """A dictionary key that is an object's identity and holds the object:
    unlike ``id(obj)``, it cannot be mistaken for a later object that reuses
    a freed object's id. (``Var`` and ``Lit`` are their own identity keys.)"""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return type(other) is Ident and other.obj is self.obj
