"""The Jacobians: ``jacfwd``, ``jacrev`` and ``hessian``, and their blocks: the identity as a
batch of tangents (``identity_basis``), its evaluation batched or, where a loop's stored values
are ragged, one row at a time, and the batched results cut into one block per (output leaf,
input leaf) and rebuilt into the pytrees of the call.

Layer: api.
"""
from __future__ import annotations


import numpy as np

from ..core import context
from ..core.errors import RAGGED_BATCH, UnsupportedSyntax
from ..core.ir import aval_of
from ..core.trace import eval_program
from ..primitives.index import stack
from ..primitives.shape import reshape, transpose as transpose_axes
from ..core.pytree import unflatten
from ..transforms.batching import batch_eval
from ..transforms.partial_eval import linearize_flat
from ..transforms.transpose import transpose_program
from ..frontends.trace import flat_function
from ..core.pytree import flatten
from .checks import argnums_tuple, check_holomorphic_inputs, check_inputs, check_jacobian_dtypes
from .prepare import cast_like, options, prepare_call, source_transformed, transform_entry, vjp_core
from .transformed import TraceTransformed

__all__ = ["jacfwd", "jacrev", "hessian"]


def identity_basis(leaves):
    """The identity as a batch of flat tangents: one batch row per scalar."""
    sizes = [aval_of(x).size for x in leaves]
    total = sum(sizes)
    rows, start = [], 0
    for x, n in zip(leaves, sizes):
        av = aval_of(x)
        eye = np.zeros((total, n), av.dtype)
        eye[start:start + n] = np.eye(n, dtype=av.dtype)
        row = eye.reshape((total,) + av.shape)
        # of symbolic lengths (the source engine's), the code makes it
        context.remember(row, (total,) + av.shape, ("eye", total, n, -start))
        rows.append(row)
        start += n
    return rows, total


def batch_or_loop(prog, basis, total):
    """``batch_eval`` of the basis; where a loop in ``prog`` stores values whose
    length varies between iterations (they cannot take a batch axis), one
    evaluation per basis vector, stacked."""
    try:
        return batch_eval(prog, basis, total)
    except UnsupportedSyntax as err:
        if getattr(err, "construct", None) != RAGGED_BATCH or not total:
            raise
    rows = [eval_program(prog, [b[k] for b in basis]) for k in range(total)]
    return [stack([row[j] for row in rows]) for j in range(len(prog.outputs))]


def jacobian_blocks(batched_outs, out_leaves, in_leaves, rev):
    """Split batched results into one block per (output leaf, input leaf),
    each shaped out_shape + in_shape."""
    table = []
    if not rev:   # batch runs over inputs: batched_outs[o] is (N_in, *out_shape)
        for o, b in zip(out_leaves, batched_outs):
            row, start = [], 0
            o_shape = aval_of(o).shape
            for x in in_leaves:
                i_shape = aval_of(x).shape
                n = aval_of(x).size
                blk = reshape(b[start:start + n], i_shape + o_shape)
                perm = tuple(range(len(i_shape), len(i_shape) + len(o_shape))) + tuple(range(len(i_shape)))
                row.append(transpose_axes(blk, perm))
                start += n
            table.append(row)
    else:         # batch runs over outputs: batched_outs[i] is (N_out, *in_shape)
        table = [[None] * len(in_leaves) for _ in out_leaves]
        for i, (x, b) in enumerate(zip(in_leaves, batched_outs)):
            start = 0
            for k, o in enumerate(out_leaves):
                n = aval_of(o).size
                table[k][i] = reshape(b[start:start + n], aval_of(o).shape + aval_of(x).shape)
                start += n
    return table


def assemble_jacobian(table, out_tree, in_tree, single):
    rows = []
    for row in table:
        per_in = unflatten(in_tree, row)
        rows.append(per_in[0] if single else tuple(per_in))
    return unflatten(out_tree, rows)


# --- Jacobians ---------------------------------------------------------
def jacfwd(fun, argnums=0, *, holomorphic=False, engine="auto", backend="python", fallback=True):
    """The Jacobian of ``fun`` by forward mode: one linearization, one batched pass.

    Cheaper than ``jacrev`` when there are fewer inputs than outputs.

    Args:
        fun: the function; any output (an array, a pytree of them).
        argnums: the position of the argument to differentiate, or a tuple of them.
        holomorphic: ``fun`` is holomorphic: complex inputs, Jacobian ``f'(z)``.
            Complex inputs need it (a real basis would give ``df/dx`` only).
        engine: ``"auto"``, ``"source"`` or ``"trace"`` (see ``grad``).
        backend: ``"python"`` or ``"numba"`` (see ``grad``).
        fallback: see ``grad``.

    Returns:
        A function of ``fun``'s arguments returning the Jacobian, of shape
        ``out.shape + x.shape`` (nested as the output and ``argnums`` are).

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedDtypeError: complex inputs without ``holomorphic=True``.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.jacfwd(lambda x: np.array([x[0] * x[1], np.sin(x[0])]))(np.array([1.0, 2.0]))
        array([[2.        , 1.        ],
               [0.54030231, 0.        ]])
    """
    fun = transform_entry(fun, engine, "jacfwd", backend, fallback)
    recipe = ("jacfwd", fun, (argnums,), {"engine": engine,
                                          **options(holomorphic, backend, fallback)})
    by_source = source_transformed(fun, engine, lambda g: jacfwd(g, argnums, holomorphic=holomorphic,
                                                         engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, _, _ = prepare_call(fun, args, kwargs, argnums, "jacfwd")
        flat, leaves, in_tree, out_tree = flat_function(fn, dyn)
        check_jacobian_dtypes(leaves, "input", "jacfwd", fun, holomorphic)
        outs, lin = linearize_flat(flat, leaves, reverse=False)
        if holomorphic:
            check_jacobian_dtypes(outs, "output", "jacfwd", fun, holomorphic)
        basis, total = identity_basis(leaves)
        batched = batch_or_loop(lin, basis, total)
        table = jacobian_blocks(batched, outs, leaves, rev=False)
        return assemble_jacobian(table, out_tree[0], in_tree, single)
    return TraceTransformed(wrapper, fun, recipe)


def jacrev(fun, argnums=0, *, holomorphic=False, engine="auto", backend="python", fallback=True):
    """The Jacobian of ``fun`` by reverse mode: one linearization, one batched pass.

    Cheaper than ``jacfwd`` when there are fewer outputs than inputs.

    Args:
        fun: the function; any output (an array, a pytree of them).
        argnums: the position of the argument to differentiate, or a tuple of them.
        holomorphic: ``fun`` is holomorphic; complex outputs need it. A real
            output of a complex input gives rows ``df/dx - i df/dy``, as ``grad``.
        engine: ``"auto"``, ``"source"`` or ``"trace"`` (see ``grad``).
        backend: ``"python"`` or ``"numba"`` (see ``grad``).
        fallback: see ``grad``.

    Returns:
        A function of ``fun``'s arguments returning the Jacobian, of shape
        ``out.shape + x.shape`` (nested as the output and ``argnums`` are).

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedDtypeError: a complex output without ``holomorphic=True``.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.jacrev(lambda x: np.array([x[0] * x[1], np.sin(x[0])]))(np.array([1.0, 2.0]))
        array([[2.        , 1.        ],
               [0.54030231, 0.        ]])
    """
    fun = transform_entry(fun, engine, "jacrev", backend, fallback)
    recipe = ("jacrev", fun, (argnums,), {"engine": engine,
                                          **options(holomorphic, backend, fallback)})
    by_source = source_transformed(fun, engine, lambda g: jacrev(g, argnums, holomorphic=holomorphic,
                                                         engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, _, _ = prepare_call(fun, args, kwargs, argnums, "jacrev")
        if holomorphic:
            check_holomorphic_inputs(flatten(tuple(dyn))[0], "jacrev", fun)
        outs, lin, leaves, in_tree, out_tree = vjp_core(fn, dyn, "jacrev")
        check_jacobian_dtypes(outs, "output", "jacrev", fun, holomorphic)
        lin_t = transpose_program(lin)
        basis, total = identity_basis(outs)
        batched = batch_or_loop(lin_t, basis, total)
        batched = [cast_like(b, np.zeros((total,) + aval_of(x).shape, aval_of(x).dtype))
                   for b, x in zip(batched, leaves)]
        table = jacobian_blocks(batched, outs, leaves, rev=True)
        return assemble_jacobian(table, out_tree, in_tree, single)
    return TraceTransformed(wrapper, fun, recipe)


def hessian(fun, argnums=0, *, holomorphic=False, engine="auto", backend="python",
            fallback=True):
    """The Hessian of a scalar function: forward over reverse, ``jacfwd(jacrev(fun))``.

    Args:
        fun: a function with one scalar output.
        argnums: the position of the argument to differentiate, or a tuple of them.
        holomorphic: passed to both ``jacfwd`` and ``jacrev``.
        engine: ``"auto"``, ``"source"`` or ``"trace"`` (see ``grad``).
        backend: ``"python"`` or ``"numba"`` (see ``grad``).
        fallback: see ``grad``.

    Returns:
        A function of ``fun``'s arguments returning the matrix of second
        derivatives, of shape ``x.shape + x.shape``.

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
        array([[4., 2.],
               [2., 0.]])
    """
    fun = transform_entry(fun, engine, "hessian", backend, fallback)
    recipe = ("hessian", fun, (argnums,), {"engine": engine,
                                           **options(holomorphic, backend, fallback)})
    by_source = source_transformed(fun, engine, lambda g: hessian(g, argnums, holomorphic=holomorphic,
                                                          engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    hess = jacfwd(jacrev(fun, argnums, holomorphic=holomorphic, engine="trace"), argnums,
                  holomorphic=holomorphic, engine="trace")

    def wrapper(*args, **kwargs):
        nums = argnums_tuple(argnums, len(args), "hessian")
        check_inputs("hessian", fun, args, nums, "leave it out of argnums")
        check_jacobian_dtypes(flatten(tuple(args[i] for i in nums))[0], "input", "hessian", fun,
                              holomorphic)
        return hess(*args, **kwargs)
    return TraceTransformed(wrapper, fun, recipe)
