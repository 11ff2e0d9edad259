"""``wg.debug_nans``: raise at the first nan, naming the user's line.

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

Layer: api.
"""
from __future__ import annotations

from ..core.debug import NANS

__all__ = ["debug_nans"]


class debug_nans:
    """Turn nan checking on (``enable=True``) or off. Called alone it is an
    option that holds until changed; used in a ``with`` statement, the
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

    __slots__ = ("_before",)

    def __init__(self, enable=True):
        with NANS.lock:
            self._before = NANS.on
            NANS.on = bool(enable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with NANS.lock:
            NANS.on = self._before
        return False

    @staticmethod
    def enabled():
        """Whether the checks are on now."""
        return NANS.on
