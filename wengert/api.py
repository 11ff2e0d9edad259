"""The public API (DESIGN.md), composed from the stages.

Every entry point checks the function and its differentiated arguments
(``api_checks``, before any of the user's code runs), flattens pytrees, runs
a transform from ``transforms`` on the flat function and rebuilds the output
trees. Names and meanings follow JAX. The functions returned by ``grad``,
``jacfwd``... are ``transformed.Transformed`` objects: they pickle as the
transform's recipe (see there).
"""
from __future__ import annotations

import functools

import numpy as np

from . import context
from .api_checks import (argnums_tuple, check_aux_pair, check_function, check_holomorphic_inputs,
                         check_inputs, check_jacobian_dtypes, check_scalar_output)
from .errors import ConcretizationError, ShapeMismatchError, UnpicklableError, UnsupportedSyntax
from .frontends.tracing import flat_function, make_program as trace_program
from .ir import Ident, Lit, aval_of, sub_programs
from .primitives.core import TracerBase, Zero, eval_program, new_trace, zeros
from .primitives.math_twins import twin_of
from .primitives.arith import cast_exact, convert
from .primitives.control import RAGGED_BATCH
from .primitives.shape import reshape, stack, transpose as transpose_axes
from .pytree import flatten, unflatten
from .staging import StagingTrace, closure_convert
from .transforms.batching import batch_eval
from .transforms.jvp import NeedsReverse, jvp_flat
from .transforms.partial_eval import linearize_flat
from .transforms.transpose import backward_pass, transpose_program
from .transformed import TraceTransformed

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose",
           "jacfwd", "jacrev", "hessian", "make_program"]

ENGINES = ("auto", "trace", "source")


def _check_engine(engine):
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")


def _by_source(fun, engine, transform, recipe, argnums):
    """The source engine's version of ``transform`` (a trace-engine transform
    of a function), or None for ``engine="trace"``. ``recipe`` is the public
    call that made it (how it pickles); its arguments at ``argnums`` are
    checked before any code is generated."""
    if engine == "trace":
        return None
    from .api_source import SourceTransformed
    name = recipe[0]

    def check(args):
        nums = argnums_tuple(argnums, len(args), name)
        check_inputs(name, fun, args, nums, "leave it out of argnums")

    if isinstance(fun, SourceTransformed) and fun.fallback is None:
        # grad(grad(f)): one source Program of f, the transforms composed
        inner, inner_check = fun.transform, fun.check

        def both(args):
            inner_check(args)
            check(args)
        return SourceTransformed(fun.fun, lambda g: transform(inner(g)), engine,
                                 f"{name}_{fun.name}", recipe, both)
    from .api_source import has_source
    if engine == "auto" and not has_source(fun):
        return None
    return SourceTransformed(fun, transform, engine, name, recipe, check)


class _Partial:
    """``fun`` as a function of the arguments in ``argnums`` only."""

    def __init__(self, fun, args, kwargs, argnums):
        self.fun, self.args, self.kwargs, self.argnums = fun, list(args), kwargs, argnums

    def __call__(self, *dyn):
        args = list(self.args)
        for i, d in zip(self.argnums, dyn):
            args[i] = d
        return self.fun(*args, **self.kwargs)


def _prepare(fun, args, kwargs, argnums, fname, has_aux=False,
             where_else="leave it out of argnums"):
    """(function of the differentiated arguments, those arguments, their
    positions, the box aux lands in); the arguments are checked first."""
    nums = argnums_tuple(argnums, len(args), fname)
    check_inputs(fname, fun, args, nums, where_else)
    dyn = tuple(args[i] for i in nums)
    part = _Partial(fun, args, kwargs, nums)
    if has_aux:
        aux_box = [None]

        def main(*xs):
            out = part(*xs)
            check_aux_pair(out, fname, fun)
            aux_box[0] = out[1]
            return out[0]
        main.wg_origin = fun
        return main, dyn, nums, aux_box
    return part, dyn, nums, None


def _unwrap_aux(aux_box):
    """aux values leave the trace as plain values (their primal part)."""
    leaves, tree = flatten(aux_box[0])
    plain = []
    for x in leaves:
        while hasattr(x, "primal"):
            x = x.primal
        plain.append(x)
    return unflatten(tree, plain)


def _cast_like(ct, x):
    """A cotangent with the dtype and type of its primal (float32 stays
    float32, a Python float's is a Python float: ``cast_exact``); staged (the
    source engine), the cast is an equation of the code."""
    av = aval_of(x)
    if isinstance(ct, Zero):
        return zeros(av)            # 0.0 for a Python float
    dt = getattr(ct, "dtype", None)
    if dt is not None and dt != av.dtype and dt.kind not in "fc":
        ct = convert(ct, dtype=av.dtype)
    return cast_exact(ct, av)


# --- reverse mode ------------------------------------------------------
# the advice for a value that is not to be differentiated, where every
# argument is (jvp, vjp, linearize)
_CLOSE_OVER = "pass a function of the differentiated values only (a lambda closing over the rest)"

def _vjp_core(fn, dyn, fname):
    flat, leaves, in_tree, out_tree = flat_function(fn, dyn)
    outs, lin = linearize_flat(flat, leaves, reverse=True, name=getattr(fn, "__name__", "f"))
    return outs, lin, leaves, in_tree, out_tree[0]


def _unshared(outs, lin):
    """The outputs handed to the caller, copied where the linear Program
    keeps the same array (``exp``'s output is its own derivative): the
    caller may write to what it is given before using the pullback."""
    kept = set()

    def collect(prog):
        for e in prog.eqns:
            kept.update(Ident(x.val) for x in e.inputs if isinstance(x, Lit))
            for sub in sub_programs(e):
                collect(sub)
    collect(lin)
    return [o.copy() if type(o) is np.ndarray and Ident(o) in kept else o for o in outs]


def _unit(aval):
    """The seed 1 of a scalar: a Python 1.0 for a Python float (weakly typed, cheap)."""
    return 1.0 if aval.weak and aval.dtype == np.float64 else np.ones((), aval.dtype)


def _transform_entry(fun, engine, fname):
    _check_engine(engine)
    check_function(fun, fname)
    return twin_of(fun)          # a math builtin: its NumPy twin (math_twins)


def value_and_grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto"):
    return _value_and_grad(fun, argnums, has_aux, engine, "value_and_grad", holomorphic)


def _holo(holomorphic):
    """The ``holomorphic`` keyword as a recipe keeps it (only when given, so
    the recipes of real functions read as before)."""
    return {"holomorphic": True} if holomorphic else {}


def _value_and_grad(fun, argnums, has_aux, engine, fname, holomorphic=False):
    fun = _transform_entry(fun, engine, fname)
    recipe = (fname, fun, (argnums,), {"has_aux": has_aux, "engine": engine,
                                       **_holo(holomorphic)})
    if fname == "value_and_grad":
        by_source = _by_source(fun, engine, lambda g: value_and_grad(
            g, argnums, has_aux=has_aux, holomorphic=holomorphic, engine="trace"), recipe,
            argnums)
        if by_source is not None:
            return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, nums, aux_box = _prepare(fun, args, kwargs, argnums, fname, has_aux)
        flat, leaves, in_tree, out_tree = flat_function(fn, dyn)
        if holomorphic:
            check_holomorphic_inputs(leaves, fname, fun)
        # one float in: forward mode gives the derivative in one pass and
        # stores nothing for a reverse sweep (the cheaper mode here), unless a
        # custom_vjp function needs its bwd rule: then the function runs again
        # in reverse mode, which only a replayed Program (the source engine's)
        # may do: the user's own code would draw its random numbers twice
        forward = len(leaves) == 1 and aval_of(leaves[0]).shape == () \
            and aval_of(leaves[0]).dtype.kind == "f" and getattr(fun, "wg_replay", False)
        if forward:
            try:
                outs, cts = jvp_flat(flat, leaves, [_unit(aval_of(leaves[0]))], for_grad=True)
            except NeedsReverse:
                forward = False
        if not forward:
            outs, lin = linearize_flat(flat, leaves, reverse=True,
                                       name=getattr(fn, "__name__", "f"))
        check_scalar_output(outs, fname, fun, holomorphic)
        out = outs[0]
        if not forward:
            cts = backward_pass(lin, [_unit(aval_of(out))])
        out_tree = out_tree[0]
        grads = unflatten(in_tree, [_cast_like(c, x) for c, x in zip(cts, leaves)])
        g = grads[0] if single else tuple(grads)
        value = unflatten(out_tree, outs)
        if has_aux:
            return (value, _unwrap_aux(aux_box)), g
        return value, g
    return TraceTransformed(wrapper, fun, recipe)


def grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto"):
    """The gradient of a real scalar function; of a complex input ``z = x +
    iy`` it is ``df/dx - i df/dy`` (JAX's convention, ``complex_parts``).
    With ``holomorphic=True`` the function is complex and holomorphic, its
    inputs complex, and the result is ``f'(z)``."""
    fun = _transform_entry(fun, engine, "grad")
    recipe = ("grad", fun, (argnums,), {"has_aux": has_aux, "engine": engine,
                                        **_holo(holomorphic)})
    by_source = _by_source(fun, engine, lambda g: grad(g, argnums, has_aux=has_aux,
                                                         holomorphic=holomorphic,
                                                         engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    vg = _value_and_grad(fun, argnums, has_aux, "trace", "grad", holomorphic)

    def wrapper(*args, **kwargs):
        (value_aux, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value_aux[1]
        return g
    return TraceTransformed(wrapper, fun, recipe)


def vjp(fun, *primals, has_aux=False, engine="auto"):
    """(out, pullback); ``pullback(ct)`` returns a tuple, one per primal."""
    fun = _transform_entry(fun, engine, "vjp")
    check_inputs("vjp", fun, primals, range(len(primals)), _CLOSE_OVER)
    if engine != "trace":
        from .api_source import source_inner
        inner = source_inner(fun, primals, engine, "vjp")
        if inner is not None:
            fun = functools.wraps(fun)(inner)
    fn, dyn, _, aux_box = _prepare(fun, primals, {}, tuple(range(len(primals))), "vjp", has_aux,
                                   _CLOSE_OVER)
    outs, lin, leaves, in_tree, out_tree = _vjp_core(fn, dyn, "vjp")
    out = unflatten(out_tree, _unshared(outs, lin))

    def pullback(ct):
        ct_leaves, ct_tree = flatten(ct)
        if ct_tree != out_tree:
            raise ShapeMismatchError(f"vjp pullback: cotangent structure {ct_tree} does not match "
                                     f"the output's {out_tree}")
        for c, o in zip(ct_leaves, outs):
            if tuple(np.shape(c)) != aval_of(o).shape:
                raise ShapeMismatchError(
                    f"vjp pullback: cotangent of shape {np.shape(c)} for an output of shape "
                    f"{aval_of(o).shape}; pass a cotangent shaped like the output")
        # a Python number or list is taken as an array of the output's dtype
        ct_leaves = [c if isinstance(c, (np.ndarray, TracerBase)) else
                     np.asarray(c, dtype=aval_of(o).dtype) for c, o in zip(ct_leaves, outs)]
        cts = backward_pass(lin, ct_leaves)
        return tuple(unflatten(in_tree, [_cast_like(c, x) for c, x in zip(cts, leaves)]))

    pullback = _WithSource(pullback, lambda: transpose_program(lin))
    if has_aux:
        return out, pullback, _unwrap_aux(aux_box)
    return out, pullback


# --- forward mode ------------------------------------------------------
def jvp(fun, primals, tangents, *, engine="auto"):
    """(out, tangent_out) for tuples ``primals`` and ``tangents``."""
    fun = _transform_entry(fun, engine, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(fun, primals, tangents): primals and tangents must be tuples "
                        "(one entry per argument), e.g. jvp(f, (x,), (v,))")
    check_inputs("jvp", fun, primals, range(len(primals)), _CLOSE_OVER)
    _, in_tree = flatten(tuple(primals))
    t_leaves, t_tree = flatten(tuple(tangents))
    if t_tree != in_tree:
        raise ShapeMismatchError(f"jvp: tangents structure {t_tree} differs from primals {in_tree}")
    if engine != "trace":
        from .api_source import source_inner
        inner = source_inner(fun, tuple(primals), engine, "jvp")
        if inner is not None:
            fun = inner
    flat, leaves, in_tree, out_tree = flat_function(fun, primals)
    for p, t in zip(leaves, t_leaves):
        if tuple(np.shape(t)) != aval_of(p).shape:
            raise ShapeMismatchError(f"jvp: tangent of shape {np.shape(t)} for a primal of shape "
                                     f"{aval_of(p).shape}; each tangent has its primal's shape")
    outs, dots = jvp_flat(flat, leaves, t_leaves)
    dots = [_cast_like(d, o) if isinstance(d, Zero) else d for d, o in zip(dots, outs)]
    return unflatten(out_tree[0], outs), unflatten(out_tree[0], dots)


def linearize(fun, *primals, engine="auto"):
    """(out, linear_fun): ``linear_fun(*tangents)`` evaluates the linear Program."""
    fun = _transform_entry(fun, engine, "linearize")
    check_inputs("linearize", fun, primals, range(len(primals)), _CLOSE_OVER)
    if engine != "trace":
        from .api_source import source_inner
        inner = source_inner(fun, primals, engine, "linearize")
        if inner is not None:
            fun = inner
    flat, leaves, in_tree, out_tree = flat_function(fun, primals)
    outs, lin = linearize_flat(flat, leaves, reverse=False)

    def linear_fun(*tangents):
        t_leaves, t_tree = flatten(tuple(tangents))
        if t_tree != in_tree:
            raise ShapeMismatchError(f"linear function: tangents {t_tree} differ from primals "
                                     f"{in_tree}")
        res = eval_program(lin, t_leaves)
        return unflatten(out_tree[0], res)

    return unflatten(out_tree[0], _unshared(outs, lin)), _WithSource(linear_fun, lambda: lin)


class _WithSource:
    """A returned function (pullback, linear function) with ``.source``: the
    generated code of its Program, made on first read."""

    def __init__(self, fn, make_program):
        self._fn, self._make_program, self._generated = fn, make_program, None
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def program(self):
        return self._make_program()

    @property
    def source(self):
        if self._generated is None:
            from .api_source import generated
            self._generated = generated(self._make_program())
        return self._generated.source

    def __reduce__(self):
        raise UnpicklableError(
            f"{self.__name__} holds the values of one evaluation (its residuals), so it "
            "cannot be pickled by reference; pickle the function and its primals instead and "
            "call wg.vjp / wg.linearize where they arrive")


def linear_transpose(linear_fun, *primals):
    """The transpose of a linear function, traced at the shapes of ``primals``."""
    flat, leaves, in_tree, out_tree = flat_function(linear_fun, primals)
    avals = [aval_of(x) for x in leaves]
    trace = StagingTrace(concrete=False)
    with new_trace(trace):
        ins = [trace.new_input(a) for a in avals]
        outs = flat(*ins)
        from .ir import Program
        prog = Program([t.atom for t in ins], trace.eqns, [trace.atom(o) for o in outs],
                       name=getattr(linear_fun, "__name__", "f"))

    def transposed(ct):
        ct_leaves, _ = flatten(ct)
        cts = backward_pass(prog, ct_leaves)
        return tuple(unflatten(in_tree, [_cast_like(c, x) for c, x in zip(cts, leaves)]))

    return _WithSource(transposed, lambda: prog)


# --- Jacobians ---------------------------------------------------------
def _basis(leaves):
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


def _batch_or_loop(prog, basis, total):
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


def _jac_blocks(batched_outs, out_leaves, in_leaves, rev):
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


def _assemble(table, out_tree, in_tree, single):
    rows = []
    for row in table:
        per_in = unflatten(in_tree, row)
        rows.append(per_in[0] if single else tuple(per_in))
    return unflatten(out_tree, rows)


def jacfwd(fun, argnums=0, *, holomorphic=False, engine="auto"):
    """Jacobian by forward mode: one linearize, one batched pass of tangents.
    Complex inputs need ``holomorphic=True`` (the Jacobian is then f'(z));
    without it, a real basis would give df/dx only (JAX's rule)."""
    fun = _transform_entry(fun, engine, "jacfwd")
    recipe = ("jacfwd", fun, (argnums,), {"engine": engine, **_holo(holomorphic)})
    by_source = _by_source(fun, engine, lambda g: jacfwd(g, argnums, holomorphic=holomorphic,
                                                         engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, _, _ = _prepare(fun, args, kwargs, argnums, "jacfwd")
        flat, leaves, in_tree, out_tree = flat_function(fn, dyn)
        check_jacobian_dtypes(leaves, "input", "jacfwd", fun, holomorphic)
        outs, lin = linearize_flat(flat, leaves, reverse=False)
        if holomorphic:
            check_jacobian_dtypes(outs, "output", "jacfwd", fun, holomorphic)
        basis, total = _basis(leaves)
        batched = _batch_or_loop(lin, basis, total)
        table = _jac_blocks(batched, outs, leaves, rev=False)
        return _assemble(table, out_tree[0], in_tree, single)
    return TraceTransformed(wrapper, fun, recipe)


def jacrev(fun, argnums=0, *, holomorphic=False, engine="auto"):
    """Jacobian by reverse mode: one linearize, one batched pass of cotangents.
    Complex outputs need ``holomorphic=True`` (JAX's rule); a real output of
    a complex input gives rows ``df/dx - i df/dy`` as ``grad`` does."""
    fun = _transform_entry(fun, engine, "jacrev")
    recipe = ("jacrev", fun, (argnums,), {"engine": engine, **_holo(holomorphic)})
    by_source = _by_source(fun, engine, lambda g: jacrev(g, argnums, holomorphic=holomorphic,
                                                         engine="trace"), recipe, argnums)
    if by_source is not None:
        return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, _, _ = _prepare(fun, args, kwargs, argnums, "jacrev")
        if holomorphic:
            check_holomorphic_inputs(flatten(tuple(dyn))[0], "jacrev", fun)
        outs, lin, leaves, in_tree, out_tree = _vjp_core(fn, dyn, "jacrev")
        check_jacobian_dtypes(outs, "output", "jacrev", fun, holomorphic)
        lin_t = transpose_program(lin)
        basis, total = _basis(outs)
        batched = _batch_or_loop(lin_t, basis, total)
        batched = [_cast_like(b, np.zeros((total,) + aval_of(x).shape, aval_of(x).dtype))
                   for b, x in zip(batched, leaves)]
        table = _jac_blocks(batched, outs, leaves, rev=True)
        return _assemble(table, out_tree, in_tree, single)
    return TraceTransformed(wrapper, fun, recipe)


def hessian(fun, argnums=0, *, holomorphic=False, engine="auto"):
    """Forward over reverse: ``jacfwd(jacrev(fun))``, both ``holomorphic``."""
    fun = _transform_entry(fun, engine, "hessian")
    recipe = ("hessian", fun, (argnums,), {"engine": engine, **_holo(holomorphic)})
    by_source = _by_source(fun, engine, lambda g: hessian(g, argnums, holomorphic=holomorphic,
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


def make_program(fun, *example_args, engine="auto"):
    """The Program of ``fun`` at ``example_args``; ``print()`` shows it. With
    the source engine it keeps the function's control flow and names."""
    fun = _transform_entry(fun, engine, "make_program")
    from .api_source import has_source
    if engine == "source" or (engine == "auto" and has_source(fun)):
        from .api_source import _warn_fallback, source_program
        try:
            return source_program(fun, example_args)[0]
        except (UnsupportedSyntax, ConcretizationError) as err:
            if engine == "source":
                raise
            _warn_fallback(fun, err)
    return trace_program(fun, *example_args)


# --- structured loops ----------------------------------------------------
def fori_loop(n, body, init, *, checkpoint=None, snapshots=None):
    """``carry = body(i, carry)`` for ``i in range(n)``, as one structured loop:
    differentiated without unrolling, in both modes. ``body`` runs on symbolic
    values once to record it, so Python control flow inside it cannot depend
    on the carry (use ``np.where``).

    ``checkpoint``: how reverse mode gets the states it needs. ``None`` stores
    every step's residuals; ``"ctz"`` stores at most ``floor(log2 n) + 1``
    states and recomputes each step O(log n) times; ``"binomial"`` stores
    ``snapshots`` states (default ``floor(log2 n) + 1``) with the fewest
    recomputations (Revolve)."""
    from .transforms.checkpoint_schedules import schedule_of
    schedule = schedule_of(checkpoint, snapshots)
    from .primitives.control import for_loop
    from .primitives.core import TracerBase
    from .staging import stage
    from .ir import Aval
    leaves, tree = flatten(init)
    avals = [aval_of(x) for x in leaves]

    def flat_body(i, *carry):
        out = body(i, unflatten(tree, carry))
        out_leaves, out_tree = flatten(out)
        if out_tree != tree:
            raise ShapeMismatchError(f"fori_loop: body returned a carry of structure {out_tree}, "
                                     f"but the initial carry is {tree}; return the same structure")
        for k, (o, a) in enumerate(zip(out_leaves, avals)):
            oa = aval_of(o)
            if oa.shape != a.shape or oa.dtype != a.dtype:
                raise ShapeMismatchError(
                    f"fori_loop: carry leaf {k} enters the body as {a.short()} and leaves it as "
                    f"{oa.short()}; a loop carry keeps its shape and dtype")
        return out_leaves

    def python_loop():
        carry = init
        for i in range(int(n)):
            carry = body(i, carry)
        return carry

    try:
        prog = stage(flat_body, [Aval((), np.int64)] + avals,
                     name=getattr(body, "__name__", "body"), dynamic=True)
    except ConcretizationError:
        if isinstance(n, TracerBase):
            raise
        # the body needs a concrete counter (it indexes a NumPy array with it,
        # or branches on it): run it as a Python loop, traced step by step
        return python_loop()
    prog, consts = closure_convert(prog)
    traced = any(isinstance(x, TracerBase) for x in leaves) or consts or isinstance(n, TracerBase)
    if not traced:
        return python_loop()    # nothing to differentiate: a Python loop is the fastest
    # the body Program takes (consts, i, carry); the loop wants (i, consts, carry)
    k = len(consts)
    from .ir import Program
    prog = Program([prog.inputs[k]] + prog.inputs[:k] + prog.inputs[k + 1:], prog.eqns,
                   prog.outputs, prog.name)
    if schedule is None:
        out = for_loop(n, prog, consts, leaves)
    else:
        from .primitives.checkpoint import checkpointed_loop
        out = checkpointed_loop(n, prog, consts, leaves, schedule)
    return unflatten(tree, list(out))
