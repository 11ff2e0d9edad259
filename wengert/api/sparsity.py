"""``jacobian_sparsity`` and ``hessian_sparsity``: the pattern of a derivative, read from the
function's Program by the sparsity analysis (``transforms/sparsity.py``), and ``pattern_of``,
which the sparse derivatives (``api/sparse.py``) share.

Rows are the output's elements and columns the differentiated inputs' elements, each
flattened in C order, pytree leaves one after the other (``argnums`` in the order given):
the Jacobian of ``jacfwd`` reshaped to a matrix. The Program is the source engine's (control
flow kept: the pattern holds for every path and trip count, every value of the arguments'
floats and arrays; integer arguments and shapes are those given) or, for ``engine="trace"``
or where the source cannot be read, the trace engine's: straight-line code along the path the
given values take, so the pattern holds for the values that take that path. A global array
the function reads is read again at each call, so its values do not count either.
``hessian_sparsity`` is the pattern of the gradient's Jacobian (the gradient's Program is
analysed), made symmetric.

Layer: api.
"""
from __future__ import annotations

import numpy as np

from ..core.context import StagingContext
from ..core.deps import UNKNOWN, Abstract, Deps, sorted_unique
from ..core.errors import ConcretizationError, UnsupportedSyntax
from ..core.ir import aval_of
from ..core.pytree import flatten, unflatten
from ..core.staging import stage
from ..core.trace import eval_program
from ..frontends import source as source_frontend
from ..frontends.source.guards import guard_function
from ..transforms.sparsity import MAX_UNROLL, sparsity
from .checks import argnums_tuple, check_inputs
from .fallback import has_source, warn_fallback
from .prepare import transform_entry
from .source import SourceTransformed, source_program
from .transforms import grad

__all__ = ["jacobian_sparsity", "hessian_sparsity", "Pattern", "pattern_of", "scipy_sparse"]


def scipy_sparse():
    """``scipy.sparse``, or None where SciPy is not installed."""
    try:
        import scipy.sparse
    except ImportError:
        return None
    return scipy.sparse


class Pattern:
    """A pattern in CSR form: ``indptr``, ``indices`` (each row's columns sorted), ``shape``;
    ``engine``: the engine whose Program it was read from."""

    __slots__ = ("indptr", "indices", "shape", "engine")

    def __init__(self, indptr, indices, shape, engine):
        self.indptr, self.indices, self.shape, self.engine = indptr, indices, shape, engine

    @property
    def nnz(self):
        return len(self.indices)

    def rows(self):
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def symmetric(self):
        """The union with its transpose."""
        rows, cols = self.rows(), self.indices
        n = self.shape[0]
        keys = sorted_unique(np.concatenate([rows * n + cols, cols * n + rows]))
        r, c = np.divmod(keys, n)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        return Pattern(indptr, c, self.shape, self.engine)

    def same(self, other):
        return (self.shape == other.shape and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.indices, other.indices))

    def public(self):
        """As ``jacobian_sparsity`` returns it: a SciPy CSR array of booleans, or
        ``(rows, cols, shape)``."""
        sparse = scipy_sparse()
        if sparse is None:
            return self.rows(), self.indices.copy(), self.shape
        return sparse.csr_array((np.ones(self.nnz, bool), self.indices.copy(),
                                 self.indptr.copy()), shape=self.shape)


def _leaves(args, nums):
    """The leaves of ``args``, which are static (ints, strings, objects: part of the
    Program), and the column offset of each differentiated one (else None), columns in the
    order of ``nums``."""
    leaves, tree = flatten(tuple(args))
    static = [source_frontend.is_static(x) for x in leaves]
    owner, offsets = [], {}
    for i, a in enumerate(args):
        owner += [i] * len(flatten(a)[0])
    total = 0
    for i in nums:
        for k, (x, o) in enumerate(zip(leaves, owner)):
            if o == i:
                offsets[k] = total
                total += int(np.size(x))
    return leaves, tree, static, [offsets.get(k) for k in range(len(leaves))], total


def _staged(fn, leaves, tree, static):
    """The trace engine's Program of ``fn`` on the non-static leaves."""
    dyn = [x for x, s in zip(leaves, static) if not s]

    def flat(*xs):
        it = iter(xs)
        out = fn(*unflatten(tree, [x if s else next(it) for x, s in zip(leaves, static)]))
        return flatten(out)[0]
    return stage(flat, [aval_of(x) for x in dyn], name=getattr(fn, "__name__", "f"),
                 concrete_vals=dyn)


def _program(fun, args, leaves, tree, static, engine, hessian, argnums):
    """(Program of ``fun`` or of its gradient, the engine it came from, the check that it
    still holds: None where it is for this call only)."""
    if hessian:
        target = grad(fun, argnums, engine=engine)
        with StagingContext() as ctx:
            prog = _staged(target, leaves, tree, static)
        if isinstance(target, SourceTransformed) and target.fallback is None:
            return prog, "source", guard_function(list(ctx.outside.values())) or _ALWAYS
        return prog, "trace", None
    if engine == "source" or (engine == "auto" and has_source(fun)):
        try:
            with StagingContext() as ctx:
                prog = source_program(fun, args)[0]
            return prog, "source", guard_function(list(ctx.outside.values())) or _ALWAYS
        except (UnsupportedSyntax, ConcretizationError) as err:
            if engine == "source":
                raise
            warn_fallback(fun, err)
    return _staged(fun, leaves, tree, static), "trace", None


def _ALWAYS():
    return True


def pattern_of(fun, args, argnums, fname, local=False, engine="auto", max_unroll=MAX_UNROLL,
               hessian=False):
    """(``Pattern``, check): the pattern of ``fun``'s Jacobian (of its gradient's, for
    ``hessian``) at ``args``, and ``check() -> bool``, whether it still holds at another
    call with arguments of the same kind (the function's outside reads unchanged), or None
    where it is for these values only (``local``, the trace engine)."""
    nums = argnums_tuple(argnums, len(args), fname)
    check_inputs(fname, fun, args, nums, "leave it out of argnums")
    leaves, tree, static, offsets, total = _leaves(args, nums)
    prog, engine_used, check = _program(fun, args, leaves, tree, static, engine, hessian,
                                        argnums)
    ins = []
    for x, s, off in zip(leaves, static, offsets):
        if s:
            continue
        aval = aval_of(x)
        deps = None if off is None else Deps.identity(aval.shape, off)
        # a float or array argument is unknown: the pattern holds for all its values
        ins.append(Abstract(aval, x if local else UNKNOWN, deps))
    outs = sparsity(prog, ins, local=local, max_unroll=max_unroll)
    if any(not o.known_shape for o in outs):        # a length known only at run time
        values = eval_program(prog, [x for x, s in zip(leaves, static) if not s])
        outs = [o if o.known_shape else Abstract(aval_of(v), UNKNOWN, None if o.deps is None
                                                 else Deps.uniform(np.shape(v), o.deps.cols))
                for o, v in zip(outs, values)]
    pattern = _stacked([o for o in outs], total, engine_used)
    if hessian:
        pattern = pattern.symmetric()
    return pattern, (None if local else check)


def _stacked(outs, n, engine):
    """The Pattern of the outputs' elements one after the other, over ``n`` columns."""
    indptrs, indices, base = [], [], 0
    for o in outs:
        size = int(np.prod(o.shape))
        if o.deps is None or o.dtype.kind not in "fc":
            indptrs.append(np.full(size, base, np.int64))
            continue
        indptr, idx = o.deps.csr()
        indptrs.append(indptr[:-1] + base)
        indices.append(idx)
        base += len(idx)
    rows = sum(int(np.prod(o.shape)) for o in outs)
    indptr = np.concatenate(indptrs + [np.array([base], np.int64)])
    return Pattern(indptr, np.concatenate(indices) if indices else np.zeros(0, np.int64),
                   (rows, n), engine)


def jacobian_sparsity(fun, *args, argnums=0, local=False, engine="auto",
                      max_unroll=MAX_UNROLL):
    """The sparsity pattern of ``fun``'s Jacobian: which outputs depend on which inputs.

    Read from the function's Program by abstract interpretation, never by evaluating
    derivatives: each primitive says which input elements each output element depends on,
    branches take the union of their paths, loops run to a fixed point. The pattern holds
    for every value of the arguments' floats and arrays (not only ``args``' values) and,
    with the source engine, every path through the control flow: it contains every nonzero
    of the Jacobian at any point.

    Args:
        fun: the function.
        *args: its arguments (their shapes and dtypes, and the values of ints, count).
        argnums: the position of the argument to differentiate, or a tuple of them.
        local: the pattern at ``args`` only: branches, ``where``, ``maximum`` and indices
            follow these values.
        engine: ``"auto"``, ``"source"`` (control flow kept) or ``"trace"`` (the path
            ``args`` take; see ``grad``).
        max_unroll: loops run this many iterations one by one (exact), then to a fixed
            point (the union over the remaining iterations).

    Returns:
        A ``scipy.sparse.csr_array`` of booleans, of shape (output size, input size): rows
        are the flattened output's elements, columns the flattened differentiated
        arguments'. Without SciPy, ``(rows, cols, shape)``: the nonzeros' index arrays.

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedSyntax: ``engine="source"`` met code it cannot transform.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     return x[1:] * x[:-1]
        >>> wg.jacobian_sparsity(f, np.ones(4)).toarray().astype(int)
        array([[1, 1, 0, 0],
               [0, 1, 1, 0],
               [0, 0, 1, 1]])
    """
    fun = transform_entry(fun, engine, "jacobian_sparsity")
    return pattern_of(fun, args, argnums, "jacobian_sparsity", local, engine,
                      max_unroll)[0].public()


def hessian_sparsity(fun, *args, argnums=0, local=False, engine="auto",
                     max_unroll=MAX_UNROLL):
    """The sparsity pattern of the Hessian of a scalar function: the Jacobian pattern of its
    gradient (read from the gradient's Program), made symmetric.

    Args:
        fun: a function with one real scalar output.
        *args: its arguments.
        argnums: the position of the argument to differentiate, or a tuple of them.
        local: the pattern at ``args`` only (see ``jacobian_sparsity``).
        engine: ``"auto"``, ``"source"`` or ``"trace"``.
        max_unroll: see ``jacobian_sparsity``.

    Returns:
        A symmetric ``scipy.sparse.csr_array`` of booleans (n by n, n the differentiated
        arguments' size); without SciPy, ``(rows, cols, shape)``.

    Raises:
        NonScalarOutputError: the output is not one real number.
        NonDifferentiableInputError: a differentiated argument is not a float.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     return np.sum(x[1:] * x[:-1] ** 2)
        >>> wg.hessian_sparsity(f, np.ones(4)).toarray().astype(int)
        array([[1, 1, 0, 0],
               [1, 1, 1, 0],
               [0, 1, 1, 1],
               [0, 0, 1, 0]])
    """
    fun = transform_entry(fun, engine, "hessian_sparsity")
    return pattern_of(fun, args, argnums, "hessian_sparsity", local, engine, max_unroll,
                      hessian=True)[0].public()
