"""``wg.vmap``: a function of one example, run on a batch of them at once (JAX's meanings).

    vmap(f, in_axes=0, out_axes=0, axis_size=None)(*args) ==
        stack([f(*[a[b] for a in args]) for b in range(B)], axis=out_axes)

``in_axes`` says, per positional argument (an int or None for all of them, else a tuple or
list with one entry per argument, each a pytree prefix of its argument), which axis of each
array is the batch axis, or None: the argument is the same for every example (a weight
matrix, a closure's constant). Keyword arguments are batched along their axis 0.
``out_axes`` places the batch axis in each output (a prefix of the output's tree); None
says an output does not depend on the batch. Negative axes count from the end.
``axis_size`` gives the batch's length where no argument is batched.

The batch runs as one: every primitive is applied once to the whole batch by its row's
``batch`` rule (``transforms/batching.py``), so ``vmap(grad(loss), in_axes=(None, 0, 0))``
computes per-example gradients with matrix products of the batch, and composes with every
transform in any order. The source engine (``engine="auto"``, the default) stages the
function per example (``SourceTransformed``'s ``lanes``) and batches its Program once, so
``.source`` is one vectorised code (``if`` on a batched value: both branches and a
``np.where``; a batched ``while`` runs until every example is done) and ``backend="numba"``
compiles it. The trace engine runs a Python ``if`` on a batched value one example at a time,
with one warning.

Layer: api.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..core.errors import (
    BatchedConditionError, ConcretizationError, LoopedBatchWarning, WriteThroughCallError,
    user_location)
from ..core.primitive import TracerBase
from ..core.pytree import flatten, unflatten, is_node, node_children, node_key
from ..primitives.index import getitem, stack
from ..transforms.batching import BatchTrace, batch_flat, moved, spread
from .prepare import options, source_transformed, transform_entry
from .transformed import TraceTransformed
from .fallback import Seen, fallback_key

__all__ = ["vmap", "example_axes"]

_LOOPED = Seen(4096)        # the functions whose batched `if` was reported


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, *, engine="auto", backend="python",
         fallback=True):
    """``fun`` vectorised over a batch axis of its arguments: one call for a batch of examples.

    ``vmap(f)(xs)`` is ``stack([f(x) for x in xs])``, computed as one program of the whole
    batch (a batched ``matmul`` is one ``matmul``). It composes with every transform in
    any order: ``vmap(grad(loss), in_axes=(None, 0, 0))`` gives per-example gradients.

    Args:
        fun: a Python function of NumPy code, written for one example.
        in_axes: the batch axis of each positional argument: an int (every argument),
            None (not batched: the same for every example), or a tuple or list with one
            entry per argument, each an int, None or a pytree prefix of its argument.
            Negative axes count from the end. Keyword arguments are batched on axis 0.
        out_axes: where the batch axis goes in each output (a prefix of the output's
            pytree); None for an output that does not depend on the batch.
        axis_size: the batch's length; needed only where no argument is batched.
        engine: ``"auto"`` (the source engine: one vectorised code, ``.source``; an
            ``if`` on a batched value runs both branches and joins them with ``where``),
            ``"source"`` or ``"trace"`` (a Python ``if`` on a batched value then runs
            the function once per example, with one ``LoopedBatchWarning``).
        backend: ``"python"``, or ``"numba"`` to compile the batched code.
        fallback: with ``backend="numba"``, run the Python code where numba cannot
            compile it (one ``NumbaFallbackWarning``); ``False`` raises instead.

    Returns:
        A function of ``fun``'s arguments returning ``fun``'s outputs with a batch axis.

    Raises:
        ValueError: the batched axes differ in length, an axis is out of range, a
            batched argument has no axis, ``in_axes`` does not match the arguments, or
            ``out_axes`` is None for an output that depends on the batch.
        TypeError: ``in_axes`` or ``out_axes`` holds something other than ints and None.
        BatchedConditionError: the trace engine met Python control flow on a batched
            value where the batch's length is not known when the code is generated.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def loss(w, x, y):
        ...     return (x @ w - y) ** 2
        >>> w, X, y = np.array([1.0, -1.0]), np.array([[1.0, 2.0], [1.0, 1.0]]), np.ones(2)
        >>> wg.vmap(wg.grad(loss), in_axes=(None, 0, 0))(w, X, y)
        array([[-4., -8.],
               [-2., -2.]])
    """
    fun = transform_entry(fun, engine, "vmap", backend, fallback)
    _check_spec(in_axes, "in_axes", top=True)
    _check_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or isinstance(axis_size, bool) or axis_size < 0):
        raise ValueError(f"vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    # the recipe keeps the axes as given (it rebuilds the object when unpickled); one with
    # a dict or a registered class in it shares no code with other objects (``api.codes``)
    recipe = ("vmap", fun, (in_axes, out_axes, axis_size),
              {"engine": engine, **options(False, backend, fallback)})
    by_source = source_transformed(
        fun, engine, lambda g: vmap(g, in_axes, out_axes, axis_size, engine="trace"), recipe,
        (), lanes=lambda args, kwargs: example_axes(in_axes, args, kwargs))
    if by_source is not None:
        return by_source

    def wrapper(*args, **kwargs):
        axes = example_axes(in_axes, args, kwargs)
        leaves, in_tree = flatten((args, kwargs))
        size = _batch_size(leaves, axes, axis_size, args, kwargs)
        vals = [x if a is None else moved(x, a, 0) for x, a in zip(leaves, axes)]
        flags = [a is not None for a in axes]
        out_tree = [None]

        def flat(*xs):
            a, kw = unflatten(in_tree, xs)
            out_leaves, out_tree[0] = flatten(fun(*a, **kw))
            return out_leaves

        trace = BatchTrace(size)
        try:
            outs, out_flags = batch_flat(flat, vals, flags, size, trace=trace)
        except (ConcretizationError, WriteThroughCallError) as err:
            # a value the batch cannot be one value of: a Python `if` on it (this batch's
            # own), or a library call that needs it concrete (np.put, scimath's dtype); once
            # per example instead (an error that is not the batch's comes back from there)
            if (isinstance(err, BatchedConditionError) and err.trace is not trace
                    or type(size) is not int):                  # a symbolic Dim: no loop
                raise
            return _one_at_a_time(fun, args, kwargs, leaves, in_tree, axes, size, out_axes, err)
        o_axes = _out_axes(out_axes, out_tree[0], outs, out_flags)
        res = []
        for o, batched, a in zip(outs, out_flags, o_axes):
            if a is None:
                if batched:
                    raise ValueError(
                        f"{user_location()}: vmap: out_axes is None for an output that depends "
                        "on the batch; give it an axis (out_axes=0) or return a value that is "
                        "the same for every example")
                res.append(o)
                continue
            if not batched:
                o = spread(o, size)
            res.append(moved(o, 0, a))
        return unflatten(out_tree[0], res)
    return TraceTransformed(wrapper, fun, recipe)


def _is_axis(a):
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, bool))


def _check_spec(spec, name, top=False):
    """An axes spec is an int, None, or a pytree of them."""
    stack_ = [spec]
    while stack_:
        s = stack_.pop()
        if _is_axis(s):
            continue
        if is_node(s):
            stack_.extend(node_children(s))
            continue
        raise TypeError(f"vmap: {name} holds {s!r}; each entry is an int (the batch axis), "
                        "None (not batched), or a tuple, list or dict of them")
    if top and not _is_axis(spec) and not isinstance(spec, (tuple, list)):
        raise TypeError(f"vmap: in_axes must be an int, None, or a tuple (or list) with one "
                        f"entry per positional argument, got {type(spec).__name__}")


def example_axes(in_axes, args, kwargs=None):
    """The batch axis (or None) of each leaf of ``(args, kwargs)``, in ``flatten``'s order:
    ``in_axes`` spread over the arguments' trees (keyword arguments: axis 0)."""
    if _is_axis(in_axes):
        prefix = (in_axes,) * len(args)
    else:
        prefix = tuple(in_axes)
        if len(prefix) != len(args):
            raise ValueError(
                f"{user_location()}: vmap: in_axes has {len(prefix)} entries for "
                f"{len(args)} positional arguments; give one per argument (None for one that "
                "is not batched)")
    axes = _spread_prefix(prefix, tuple(args), "in_axes")
    if kwargs:
        axes += _spread_prefix(0, kwargs, "in_axes")
    leaves = flatten((tuple(args), kwargs or {}))[0]
    for k, (x, a) in enumerate(zip(leaves, axes)):
        if a is None:
            continue
        nd = np.ndim(x) if isinstance(x, (np.ndarray, np.generic, TracerBase)) else -1
        if nd < 1:
            what = (f"a {type(x).__name__}" if nd < 0 else "a 0-d value")
            raise ValueError(
                f"{user_location()}: vmap: in_axes gives {what} the batch axis {a}; only an "
                "array with at least one axis is batched. Pass None in in_axes for it (it is "
                "then the same for every example), or an array")
        if not -nd <= a < nd:
            raise ValueError(f"{user_location()}: vmap: in_axes {a} is out of range for an "
                             f"argument of {nd} axes (shape {np.shape(x)})")
        axes[k] = int(a) % nd
    return axes


def _spread_prefix(prefix, tree, name):
    """One entry per leaf of ``tree``: ``prefix``'s int or None where it has one, its
    subtrees matched to ``tree``'s otherwise (a pytree prefix, JAX's)."""
    out = []
    stack_ = [(prefix, tree)]
    while stack_:
        p, t = stack_.pop()
        if _is_axis(p):
            out.extend([p] * len(flatten(t)[0]))
            continue
        if t is None or node_key(p) != node_key(t):
            raise ValueError(
                f"{user_location()}: vmap: {name} {p!r} does not match the structure of the "
                f"value it describes ({type(t).__name__}); give an int or None for the whole "
                "value, or a container of the same structure")
        stack_.extend(reversed(list(zip(node_children(p), node_children(t)))))
    return out


def _out_axes(out_axes, out_tree, outs, flags):
    """The batch axis of each output leaf as an axis of the batched output (None: the
    output is not batched)."""
    axes = _spread_prefix(out_axes, unflatten(out_tree, outs), "out_axes")
    res = []
    for o, batched, a in zip(outs, flags, axes):
        nd = np.ndim(o) + (0 if batched else 1)
        if a is not None and not -nd <= a < nd:
            raise ValueError(f"{user_location()}: vmap: out_axes {a} is out of range for an "
                             f"output of {nd - 1} axes (and the batch axis)")
        res.append(None if a is None else int(a) % nd)
    return res


def _batch_size(leaves, axes, axis_size, args, kwargs):
    """The batch's length, the same along every batched axis (compared one by one: where
    the lengths are symbolic, each comparison is a guard of the generated code)."""
    sizes = [x.aval.shape[a] if isinstance(x, TracerBase) else np.shape(x)[a]
             for x, a in zip(leaves, axes) if a is not None]
    if axis_size is not None:
        sizes.append(int(axis_size))
    if not sizes:
        raise ValueError(f"{user_location()}: vmap: no argument is batched (in_axes is None "
                         "for every one) and axis_size is not given; give axis_size, the "
                         "batch's length")
    if any(not (n == sizes[0]) for n in sizes[1:]):
        found = [f"argument leaf {k} axis {a}: {np.shape(x)[a]}" for k, (x, a)
                 in enumerate(zip(leaves, axes)) if a is not None]
        raise ValueError(f"{user_location()}: vmap: the batched axes have different lengths "
                         f"({'; '.join(found)}" + (f"; axis_size {axis_size}" if axis_size
                                                  is not None else "") + "); a batch has one "
                         "length")
    return sizes[0]


def _one_at_a_time(fun, args, kwargs, leaves, in_tree, axes, size, out_axes, err):
    """``fun`` once per example, the results stacked: the trace engine's answer to a Python
    ``if``/``while`` on a batched value (``err``), after one warning per function."""
    if _LOOPED.add(fallback_key(fun)):
        warnings.warn(
            f"wengert: vmap of {getattr(fun, '__qualname__', fun)!r} (trace engine) needs "
            f"a batched value as one concrete value ({err}); running it once per example of "
            "the batch instead. engine='source' (or 'auto') batches an `if` or `while` on a "
            "batched value as one vectorised code", LoopedBatchWarning, stacklevel=3)
    rows, out_tree = [], None
    for b in range(size):
        lane = [x if a is None else getitem(x, (slice(None),) * a + (b,))
                for x, a in zip(leaves, axes)]
        a, kw = unflatten(in_tree, lane)
        out_leaves, out_tree = flatten(fun(*a, **kw))
        rows.append(out_leaves)
    example = unflatten(out_tree, rows[0]) if rows else None
    o_axes = _spread_prefix(out_axes, example, "out_axes") if rows else []
    res = []
    for j, a in enumerate(o_axes):
        col = [r[j] for r in rows]
        if a is None:
            res.append(col[0])
            continue
        nd = np.ndim(col[0]) + 1
        res.append(stack(col, axis=int(a) % nd))
    return unflatten(out_tree, res)
