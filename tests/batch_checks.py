"""``wg.vmap`` against a Python loop over the batch: what the table-driven harnesses
(``primitives/test_rules.py``, ``numpy/test_functions.py``) and the transforms' tests check
a batched function by.

* ``example``: one example of batched arguments (``in_axes``: each argument's batch axis,
  or None for one the batch shares);
* ``assert_batched``: ``vmap(fn)`` gives the loop's values, stacked: the same structure,
  shapes and dtypes (float32 stays float32), values within ``rtol``;
* ``assert_batched_jvp``: the jvp of ``vmap(fn)`` (a tangent per example) is the loop of
  the examples' jvps.
"""
from __future__ import annotations

import numpy as np

import wengert as wg

from checks import assert_close, flatten, unflatten


def example(args, in_axes, b):
    """Example ``b`` of the batched ``args``."""
    return [a if ax is None else np.take(np.asarray(a), b, axis=ax)[()]
            for a, ax in zip(args, in_axes)]


def size_of(args, in_axes):
    return next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)


def stacked(rows):
    """Per-example outputs (pytrees of one structure) stacked leaf by leaf on a new
    leading axis, each leaf of its examples' dtype."""
    leaves = [flatten(r)[0] for r in rows]
    tree = flatten(rows[0])[1]
    return unflatten(tree, [np.stack([np.asarray(l[k]) for l in leaves])
                            for k in range(len(leaves[0]))])


def assert_batched(fn, args, in_axes, rtol, engine="trace", what="vmap"):
    """``vmap(fn, in_axes)(*args)`` equals the loop over the batch, leaf by leaf."""
    got = wg.vmap(fn, in_axes=tuple(in_axes), engine=engine)(*args)
    size = size_of(args, in_axes)
    want = stacked([fn(*example(args, in_axes, b)) for b in range(size)])
    _same(got, want, rtol, what)
    return got


def assert_batched_jvp(fn, args, in_axes, diff, tangents, rtol, engine="trace", what="jvp"):
    """The jvp of ``vmap(fn)`` in the arguments at ``diff`` (``tangents``: batched as
    their arguments are) equals the loop of the examples' jvps."""
    def merged(base, vals):
        full = list(base)
        for i, v in zip(diff, vals):
            full[i] = v
        return full

    batched = wg.vmap(fn, in_axes=tuple(in_axes), engine=engine)
    got = wg.jvp(lambda *d: batched(*merged(args, d)), tuple(args[i] for i in diff),
                 tuple(tangents), engine=engine)
    size = size_of(args, in_axes)
    rows = []
    for b in range(size):
        lane = example(args, in_axes, b)
        t_lane = example(tangents, [in_axes[i] for i in diff], b)
        rows.append(wg.jvp(lambda *d: fn(*merged(lane, d)), tuple(lane[i] for i in diff),
                           tuple(t_lane), engine=engine))
    want = stacked(rows)
    _same(got, want, rtol, what)


def _same(got, want, rtol, what):
    lg, tg = flatten(got)
    lw, tw = flatten(want)
    assert tg == tw, f"{what}: structure {tg}, the loop's {tw}"
    for k, (g, w) in enumerate(zip(lg, lw)):
        assert np.shape(g) == np.shape(w), f"{what} (leaf {k}): shape {np.shape(g)}, the " \
                                           f"loop's {np.shape(w)}"
        assert np.asarray(g).dtype == np.asarray(w).dtype, \
            f"{what} (leaf {k}): dtype {np.asarray(g).dtype}, the loop's {np.asarray(w).dtype}"
    assert_close(got, want, rtol, what=what)
