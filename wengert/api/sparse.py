"""The sparse derivatives: ``sparse_jacfwd``, ``sparse_jacrev``, ``sparse_hessian``.

A sparse Jacobian is three steps (Curtis, Powell and Reid's, with the pattern read from the
Program instead of given):

1. the pattern (``api/sparsity.pattern_of``) and a coloring of it (``api/coloring``): the
   columns (forward), the rows (reverse), a star coloring of the Hessian's graph, or the
   long rows by reverse mode and the rest by forward mode (``bidirectional``);
2. the compressed product, one batched pass over the linearized Program (``batch_eval``, as
   ``jacfwd``'s identity): ``J S`` with a seed column per color (``compressed_jvp``),
   ``S^T J`` (``compressed_vjp``), or ``H S``, forward over the gradient;
3. the decompression: each nonzero is one entry of the product (``coloring.recover_*``),
   read with one fancy index into a CSR matrix.

The product is a transform like the others: the source engine generates its code once per
function and kind of arguments (the seeds are an argument of that code), shared through
``api.codes`` like ``jacfwd``'s; the pattern and its coloring (a ``Plan``) are kept in the
same ``Codes`` entry (``Codes.plans``), by the call's kind of arguments, while the checks of
what the function read from outside still pass. With the trace engine the pattern is read
from the path each call takes (its plan kept by the pattern, which is compared).

Layer: api.
"""
from __future__ import annotations

import collections

import numpy as np

from ..core import dims
from ..core.ident import Ident
from ..core.ir import aval_of
from ..core.pytree import flatten
from ..frontends import source as source_frontend
from ..frontends.trace import flat_function
from ..primitives.arith import convert
from ..primitives.index import concatenate, getitem
from ..primitives.shape import reshape
from ..transforms.partial_eval import linearize_flat
from ..transforms.sparsity import MAX_UNROLL
from ..transforms.transpose import transpose_program
from . import coloring
from .checks import check_jacobian_dtypes
from .jacobians import batch_or_loop
from .prepare import cast_like, options, prepare_call, source_transformed, transform_entry, vjp_core
from .sparsity import pattern_of, scipy_sparse
from .transformed import Transformed
from .transforms import grad

__all__ = ["sparse_jacfwd", "sparse_jacrev", "sparse_hessian", "SparseDerivative", "Plan",
           "compressed_jvp", "compressed_vjp"]


# --- the compressed products (trace engine; the source engine stages them) -----------
def _split(seeds, leaves, k):
    """The seed rows ``(k, total)`` cut into one batch of tangents per leaf."""
    parts, start = [], 0
    single = len(leaves) == 1
    for x in leaves:
        av = aval_of(x)
        part = seeds if single else getitem(seeds, (slice(None), slice(start, start + av.size)))
        part = reshape(part, (k,) + tuple(av.shape))
        if av.dtype != aval_of(seeds).dtype:
            part = convert(part, dtype=av.dtype)
        parts.append(part)
        start += av.size
    return parts


def _joined(batched, k):
    """Batched results ``(k, *shape)`` as one ``(k, total)`` array."""
    flat = [reshape(b, (k, int(np.prod(dims.shape(b)[1:], dtype=np.int64))))
            if all(type(d) is int for d in dims.shape(b)) else reshape(b, (k, -1))
            for b in batched]
    return flat[0] if len(flat) == 1 else concatenate(*flat, axis=1)


def compressed_jvp(fun, argnums, fname):
    """``(*args, seeds) -> J S^T``-rows: ``(k, outputs)``, the Jacobian of ``fun`` times
    each row of ``seeds`` (``(k, inputs)``), in one batched forward pass."""
    def compressed(*call):
        args, seeds = call[:-1], call[-1]
        fn, dyn, _, _ = prepare_call(fun, args, {}, argnums, fname)
        flat, leaves, _, _ = flat_function(fn, dyn)
        check_jacobian_dtypes(leaves, "input", fname, fun, False)
        _, lin = linearize_flat(flat, leaves, reverse=False)
        k = dims.shape(seeds)[0]
        return _joined(batch_or_loop(lin, _split(seeds, leaves, k), k), k)
    return compressed


def compressed_vjp(fun, argnums, fname):
    """``(*args, seeds) -> S J``: ``(k, inputs)``, each row of ``seeds`` (``(k, outputs)``)
    times the Jacobian of ``fun``, in one batched reverse pass."""
    def compressed(*call):
        args, seeds = call[:-1], call[-1]
        fn, dyn, _, _ = prepare_call(fun, args, {}, argnums, fname)
        outs, lin, leaves, _, _ = vjp_core(fn, dyn, fname)
        check_jacobian_dtypes(outs, "output", fname, fun, False)
        k = dims.shape(seeds)[0]
        batched = batch_or_loop(transpose_program(lin), _split(seeds, outs, k), k)
        batched = [cast_like(b, np.zeros((k,) + aval_of(x).shape, aval_of(x).dtype))
                   for b, x in zip(batched, leaves)]
        return _joined(batched, k)
    return compressed


# --- plans: pattern, coloring, seeds, where each nonzero is -------------------------------
class Plan:
    """How one kind of call is computed: its ``pattern``, the seed rows of the forward
    (``forward``: ``(k, inputs)``) and reverse (``reverse``: ``(k, outputs)``) products (None
    where unused), and ``take``: each nonzero's place in the products, flattened one after
    the other."""

    __slots__ = ("pattern", "forward", "reverse", "take")

    def __init__(self, pattern, forward, reverse, take):
        self.pattern, self.forward, self.reverse, self.take = pattern, forward, reverse, take

    @property
    def colors(self):
        """The passes: rows of ``forward`` and of ``reverse`` together."""
        return sum(len(s) for s in (self.forward, self.reverse) if s is not None)


def _seeds(colors, size):
    """One row per color, with ones at the positions of that color (-1: none)."""
    k = int(colors.max(initial=-1)) + 1
    seeds = np.zeros((k, size))
    hit = np.nonzero(colors >= 0)[0]
    seeds[colors[hit], hit] = 1.0
    return seeds


def make_plan(pattern, kind, bidirectional):
    """The Plan of ``pattern`` for ``kind`` (``"jacfwd"``, ``"jacrev"``, ``"hessian"``)."""
    p = (pattern.indptr, pattern.indices, pattern.shape)
    m, n = pattern.shape
    if kind == "hessian":
        colors = coloring.star_coloring(*p)
        return Plan(pattern, _seeds(colors, n), None, coloring.recover_star(*p, colors))
    if bidirectional:
        cols, rows = coloring.split_coloring(*p)
        forward = _seeds(cols, n) if (rows < 0).any() else None
        reverse = _seeds(rows, m) if (rows >= 0).any() else None
        kf = 0 if forward is None else len(forward)
        return Plan(pattern, forward, reverse, coloring.recover_split(*p, cols, rows, kf))
    if kind == "jacfwd":
        colors = coloring.column_coloring(*p)
        return Plan(pattern, _seeds(colors, n), None, coloring.recover_columns(*p, colors))
    colors = coloring.row_coloring(*p)
    return Plan(pattern, None, _seeds(colors, m), coloring.recover_rows(*p, colors))


def call_key(args):
    """What a Plan is kept by: the arguments' structure, the avals of their floats and
    arrays, the values of the rest (ints by value, other objects by identity)."""
    leaves, tree = flatten(tuple(args))
    parts = []
    for x in leaves:
        if source_frontend.is_static(x):
            plain = type(x) in (int, bool, str, bytes, type(None))
            parts.append(("static", type(x), x if plain else Ident(x)))
        else:
            a = aval_of(x)
            parts.append((a.shape, a.dtype.str, a.weak))
    return tree, tuple(parts)


# --- the derivative objects -----------------------------------------------------------
class SparseDerivative(Transformed):
    """A sparse Jacobian or Hessian of ``fun`` (see the module): callable on ``fun``'s
    arguments; ``plan(*args)`` is the Plan a call uses (its pattern and colors)."""

    def __init__(self, fun, kind, argnums, engine, backend, fallback, bidirectional,
                 max_unroll, recipe):
        self._wrap(fun, recipe)
        self.fun, self.kind, self.argnums, self.engine = fun, kind, argnums, engine
        self.bidirectional, self.max_unroll = bidirectional, max_unroll
        opts = options(False, backend, fallback)
        fname = recipe[0]
        self.forward = self.reverse = None
        if kind == "hessian":
            self.forward = self._product("compressed_hvp", lambda g: compressed_jvp(
                grad(g, argnums, engine="trace"), argnums, fname), opts)
        if kind == "jacfwd" or (kind == "jacrev" and bidirectional):
            self.forward = self._product("compressed_jvp", lambda g: compressed_jvp(
                g, argnums, fname), opts)
        if kind == "jacrev" or (kind == "jacfwd" and bidirectional):
            self.reverse = self._product("compressed_vjp", lambda g: compressed_vjp(
                g, argnums, fname), opts)
        # plans of the trace engine, by pattern (compared on a hit); the source engine's
        # live in their code's ``Codes`` entry
        self._by_pattern = collections.OrderedDict()

    def _product(self, name, transform, opts):
        recipe = (name, self.fun, (self.argnums,), {"engine": self.engine, **opts})
        st = source_transformed(self.fun, self.engine, transform, recipe, self.argnums,
                                extra=1)
        return st if st is not None else transform(self.fun)

    def plan(self, *args):
        """The Plan of a call with ``args``: made at the first call of their kind (the
        source engine) or at each call (the trace engine, its coloring kept by pattern)."""
        product = self.forward if self.forward is not None else self.reverse
        table = getattr(getattr(product, "codes", None), "plans", None)
        key = (self.kind, self.bidirectional, self.max_unroll, call_key(args))
        if table is not None:
            entry = table.get(key)
            if entry is not None and entry[1]():
                return entry[0]
        pattern, check = pattern_of(self.fun, args, self.argnums, self._wg_recipe[0],
                                    engine=self.engine, max_unroll=self.max_unroll,
                                    hessian=self.kind == "hessian")
        if check is not None and table is not None:
            plan = make_plan(pattern, self.kind, self.bidirectional)
            table[key] = (plan, check)
            return plan
        return self._planned(pattern)

    def _planned(self, pattern):
        key = (pattern.shape, pattern.nnz, hash(pattern.indices[:64].tobytes()))
        for plan in self._by_pattern.get(key, ()):
            if plan.pattern.same(pattern):
                return plan
        plan = make_plan(pattern, self.kind, self.bidirectional)
        self._by_pattern.setdefault(key, []).append(plan)
        while len(self._by_pattern) > 8:
            self._by_pattern.popitem(last=False)
        return plan

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self._wg_recipe[0]}: keyword arguments are not supported; pass "
                            "them by position, or close over them")
        plan = self.plan(*args)
        parts = []
        if plan.forward is not None:
            parts.append(np.asarray(self.forward(*args, plan.forward)).reshape(-1))
        if plan.reverse is not None:
            parts.append(np.asarray(self.reverse(*args, plan.reverse)).reshape(-1))
        products = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else \
            np.zeros(0)
        values = products[plan.take]
        p = plan.pattern
        sparse = scipy_sparse()
        if sparse is None:
            return values, p.rows(), p.indices.copy(), p.shape
        return sparse.csr_array((values, p.indices.copy(), p.indptr.copy()), shape=p.shape)


def _sparse(kind, fname, fun, argnums, engine, backend, fallback, bidirectional, max_unroll):
    fun = transform_entry(fun, engine, fname, backend, fallback)
    kw = {"engine": engine, **options(False, backend, fallback)}
    if bidirectional:
        kw["bidirectional"] = True
    if max_unroll != MAX_UNROLL:
        kw["max_unroll"] = max_unroll
    return SparseDerivative(fun, kind, argnums, engine, backend, fallback, bidirectional,
                            max_unroll, (fname, fun, (argnums,), kw))


def sparse_jacfwd(fun, argnums=0, *, bidirectional=False, engine="auto", backend="python",
                  fallback=True, max_unroll=MAX_UNROLL):
    """The Jacobian of ``fun`` as a sparse matrix, by forward mode on a column coloring.

    The pattern is read from the function's Program (``jacobian_sparsity``) at the first
    call with arguments of a kind, and its columns colored so that no two of a color share
    a row; one batched forward pass then gives ``J S`` (a tangent per color) and each
    nonzero is read from it. The cost is about the number of colors times the function's,
    not the number of inputs: 5 for a 2-D five-point stencil, 3 for a tridiagonal.

    Args:
        fun: the function; any output (its elements are the rows).
        argnums: the position of the argument to differentiate, or a tuple of them.
        bidirectional: also use reverse mode: the longest rows by reverse passes, the rest by
            a coloring of theirs (a matrix with a dense row and a dense column).
        engine: ``"auto"``, ``"source"`` or ``"trace"`` (see ``grad``). The source engine
            reads the pattern once per kind of arguments, valid for every value; the trace
            engine reads it from the path each call takes.
        backend: ``"python"`` or ``"numba"`` (see ``grad``).
        fallback: see ``grad``.
        max_unroll: see ``jacobian_sparsity``.

    Returns:
        A function of ``fun``'s arguments returning the Jacobian as a
        ``scipy.sparse.csr_array`` of shape (output size, input size), rows and columns
        flattened as ``jacobian_sparsity``'s. Without SciPy, ``(values, rows, cols,
        shape)``: the nonzeros and their index arrays.

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedDtypeError: a complex input.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     return x[1:] ** 2 - x[:-1]
        >>> wg.sparse_jacfwd(f)(np.array([1.0, 2.0, 3.0])).toarray()
        array([[-1.,  4.,  0.],
               [ 0., -1.,  6.]])
    """
    return _sparse("jacfwd", "sparse_jacfwd", fun, argnums, engine, backend, fallback,
                   bidirectional, max_unroll)


def sparse_jacrev(fun, argnums=0, *, bidirectional=False, engine="auto", backend="python",
                  fallback=True, max_unroll=MAX_UNROLL):
    """The Jacobian of ``fun`` as a sparse matrix, by reverse mode on a row coloring.

    As ``sparse_jacfwd``, with the rows colored (no two of a color share a column) and one
    batched reverse pass giving ``S^T J``: cheaper where rows are fewer or their coloring
    is (a dense column).

    Args:
        fun: the function; any output.
        argnums: the position of the argument to differentiate, or a tuple of them.
        bidirectional: also use forward mode (see ``sparse_jacfwd``).
        engine: ``"auto"``, ``"source"`` or ``"trace"``.
        backend: ``"python"`` or ``"numba"``.
        fallback: see ``grad``.
        max_unroll: see ``jacobian_sparsity``.

    Returns:
        A function returning the Jacobian as a ``scipy.sparse.csr_array``; without SciPy,
        ``(values, rows, cols, shape)``.

    Raises:
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedDtypeError: a complex output.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     return x[1:] ** 2 - x[:-1]
        >>> wg.sparse_jacrev(f)(np.array([1.0, 2.0, 3.0])).toarray()
        array([[-1.,  4.,  0.],
               [ 0., -1.,  6.]])
    """
    return _sparse("jacrev", "sparse_jacrev", fun, argnums, engine, backend, fallback,
                   bidirectional, max_unroll)


def sparse_hessian(fun, argnums=0, *, engine="auto", backend="python", fallback=True,
                   max_unroll=MAX_UNROLL):
    """The Hessian of a scalar function as a sparse matrix, by a star coloring.

    The pattern is the gradient's Jacobian pattern (``hessian_sparsity``); a star coloring
    of its graph (every path of four vertices has three colors) lets each nonzero be read
    from ``H S``, one batched forward pass over the gradient (forward over reverse), and
    uses the symmetry: an arrowhead takes 2 colors, where a column coloring takes ``n``.

    Args:
        fun: a function with one real scalar output.
        argnums: the position of the argument to differentiate, or a tuple of them.
        engine: ``"auto"``, ``"source"`` or ``"trace"``.
        backend: ``"python"`` or ``"numba"``.
        fallback: see ``grad``.
        max_unroll: see ``jacobian_sparsity``.

    Returns:
        A function returning the Hessian as a symmetric ``scipy.sparse.csr_array`` (n by n,
        the differentiated arguments flattened); without SciPy, ``(values, rows, cols,
        shape)``.

    Raises:
        NonScalarOutputError: the output is not one real number.
        NonDifferentiableInputError: a differentiated argument is not a float.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def f(x):
        ...     return np.sum(x[1:] * x[:-1] ** 2)
        >>> wg.sparse_hessian(f)(np.array([1.0, 2.0, 3.0])).toarray()
        array([[4., 2., 0.],
               [2., 6., 4.],
               [0., 4., 0.]])
    """
    return _sparse("hessian", "sparse_hessian", fun, argnums, engine, backend, fallback,
                   False, max_unroll)
