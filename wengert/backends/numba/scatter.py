"""``np.add.at`` in numba's subset, which has no ``ufunc.at``: ``add_at_lines``.

Two spellings, both loops numba types:

* at one 1-D index array whose rows match the update's (the common gather
  transpose): a loop adding row ``k`` of the update at ``where[k]``;
* at any other position (index arrays of other shapes, several of them, mixed
  with slices and ints): the flat positions of the target that the index
  selects, read by indexing ``np.arange(size).reshape(shape)`` with the same
  index (numba's advanced indexing of reads), the update broadcast to their
  shape, and a loop adding each update at its flat position, so a repeated
  position is added as often as it occurs, as ``np.add.at`` does. A target
  that is not C-contiguous is worked on in a contiguous copy, written back.

Layer: backends.
"""
from __future__ import annotations

from ...core.dims import plain_numbers

__all__ = ["add_at_lines"]


def add_at_lines(code, target, where, value, rows):
    """The lines adding ``value`` into ``target`` at ``where`` (the text
    ``CodeWriter.add_at`` gets: an index, a tuple of them, or ``np.s_[...]``)
    for ``code``, a ``NumbaWriter``; ``rows`` as in ``CodeWriter.add_at``."""
    k = code.fresh("k")
    if rows is not None and list(plain_numbers(list(rows[0]))) == list(
            plain_numbers(list(rows[1]))):
        idx = code.fresh("where")
        return [f"{idx} = {where}", f"for {k} in range({idx}.shape[0]):",
                f"{code.INDENT}{target}[{idx}[{k}]] += {value}[{k}]"]
    slices = f"{code.np}.s_["
    sub = where[len(slices):-1] if where.startswith(slices) and where.endswith("]") else where
    buf, flat, pos, vals, at = (code.fresh(n) for n in ("buf", "flat", "pos", "vals", "at"))
    npn = code.np
    return [f"{buf} = {npn}.ascontiguousarray({target})",
            f"{flat} = {buf}.reshape(-1)",
            f"{pos} = {npn}.arange({flat}.shape[0]).reshape({buf}.shape)[{sub}]",
            f"{vals} = {npn}.ascontiguousarray({npn}.broadcast_to({value}, {pos}.shape)).ravel()",
            f"{at} = {pos}.ravel()",
            f"for {k} in range({at}.shape[0]):",
            f"{code.INDENT}{flat}[{at}[{k}]] += {vals}[{k}]",
            f"if not {target}.flags.c_contiguous:",
            f"{code.INDENT}{target}[...] = {buf}"]
