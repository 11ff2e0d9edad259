"""``wg.debug_nans``: raise at the first nan, naming the user's line;
``wg.nan_safe``: whether an exact zero derivative stays zero through a
singular function's rule (on by default).

    with wg.debug_nans():          # a context: on inside, as before after
        g = wg.grad(loss)(w)

    wg.debug_nans()                # an option: on from here on
    wg.debug_nans(False)           # and off again

While it is on, every value wengert computes (the function's values, the
tangents of forward mode, the cotangents of the reverse sweep) is checked
as it is computed, and the first nan raises ``FloatingPointError`` naming
the ``file:line`` of the user's code whose value or derivative produced it
(``core.debug``). The source engine then runs its Programs through the
interpreter instead of its generated code, which has no checks: slower, and
meant for finding a nan, not for production runs.

    with wg.nan_safe(False):       # plain products in the derivative rules
        g = wg.grad(loss)(w)

``wg.nan_safe`` is on by default: the rules of singular functions (``sqrt``
and ``log`` at 0, ``/`` by 0, ...) guard their products so that an exactly
zero tangent or cotangent gives exactly zero, not ``0 * inf = nan``
(``primitives.safe``). Off, they multiply plainly: a few per cent faster on
code made of many small operations, and nan where a masked branch is
singular. Each setting has its own generated code (``api.codes``).

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.debug import NANS

__all__ = ["debug_nans", "nan_safe"]


class _Setting:
    """A setting of ``NANS`` (its field ``field``) given as an option, for the
    process, or, in a ``with`` statement, for the block only, in the block's
    context (its thread): entering the block gives the process its value
    back and sets the context's (``core.debug``)."""

    __slots__ = ("_before", "_enable", "_token")
    field = ""

    def __init__(self, enable=True):
        if not isinstance(enable, (bool, np.bool_)):
            raise TypeError(f"wg.{type(self).__name__} takes True or False, not {enable!r}")
        self._enable, self._token = bool(enable), None
        with NANS.lock:
            self._before = NANS.process[self.field]
            NANS.process[self.field] = self._enable

    def __enter__(self):
        with NANS.lock:
            if NANS.process[self.field] == self._enable:
                NANS.process[self.field] = self._before
        self._token = NANS.local[self.field].set(self._enable)
        return self

    def __exit__(self, *exc):
        NANS.local[self.field].reset(self._token)
        return False


class debug_nans(_Setting):
    """Turn nan checking on (``enable=True``) or off. Called alone it is an
    option that holds until changed, in every thread; used in a ``with``
    statement, it holds in the block's thread (its context) only, and the
    setting before it comes back at the end of the block.

    While it is on, every value wengert computes (the function's values,
    the tangents of forward mode, the cotangents of the reverse sweep) is
    checked as it is computed; the source engine runs its Programs through
    the interpreter instead of its generated code (slower: for finding a
    nan, not for production runs).

    Args:
        enable: True to check for nans, False to stop checking.

    Returns:
        The setting, usable as a context manager; ``debug_nans.enabled()``
        says whether the checks are on now.

    Raises:
        FloatingPointError: (from a transform run while it is on) at the
            first nan computed, naming the user's ``file:line`` whose value or
            derivative produced it.
        TypeError: ``enable`` is not a bool.

    Example:
        >>> import numpy as np
        >>> import wengert as wg
        >>> def f(x):
        ...     return np.sum(np.sqrt(x) * x)
        >>> with wg.debug_nans():
        ...     try:
        ...         wg.grad(f)(np.array([1.0, -1.0]))
        ...     except FloatingPointError as err:
        ...         print("the first nan:" in str(err))
        True
        >>> wg.debug_nans.enabled()
        False
    """

    __slots__ = ()
    field = "on"

    @staticmethod
    def enabled():
        """Whether the checks are on now."""
        return NANS.on


class nan_safe(_Setting):
    """Keep exact zeros exact in derivatives (``enable=True``, the
    default) or multiply plainly (False). Called alone it is an option
    that holds until changed, in every thread; used in a ``with``
    statement, it holds in the block's thread (its context) only, and the
    setting before it comes back at the end of the block.

    On, the derivative rules of singular functions (``sqrt``, ``log``,
    ``x ** p``, ``/``, ``arcsin``, ``arctanh``, ...) give exactly 0 where
    the tangent or cotangent is exactly 0, even where their local
    derivative is infinite: a branch ``np.where`` did not select, or an
    element ``np.tril`` masked out, contributes 0 instead of nan. Each such
    product costs a check of its result for nan. Off, the products are
    plain ``*`` and ``/`` (NumPy's arithmetic: ``0 * inf`` is nan, as in
    JAX and PyTorch). The setting is read when a derivative is generated
    or traced; each setting keeps its own generated code.

    Args:
        enable: True (the default) to keep exact zeros, False for plain
            products.

    Returns:
        The setting, usable as a context manager; ``nan_safe.enabled()``
        says whether it is on now.

    Raises:
        TypeError: ``enable`` is not a bool (``wg.nan_safe("off")`` would
            otherwise read as on). Derivatives taken while it is off may
            hold nan where the guarded ones are finite.

    Example:
        >>> import numpy as np
        >>> import wengert as wg
        >>> def f(x):
        ...     return np.sum(np.where(x > 0, np.sqrt(x), 0.0))
        >>> print(wg.grad(f)(np.array([0.0, 4.0])))
        [0.   0.25]
        >>> with wg.nan_safe(False):
        ...     print(wg.grad(f)(np.array([0.0, 4.0])))
        [ nan 0.25]
        >>> wg.nan_safe.enabled()
        True
    """

    __slots__ = ()
    field = "safe"

    @staticmethod
    def enabled():
        """Whether exact zeros are kept now."""
        return NANS.safe
