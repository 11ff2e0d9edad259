"""The public API (DESIGN.md), composed from the stages.

Every entry point checks the function and its differentiated arguments
(``api_checks``, before any of the user's code runs), flattens pytrees, runs
a transform from ``transforms`` on the flat function and rebuilds the output
trees. Names and meanings follow JAX. The functions returned by ``grad``,
``jacfwd``... are ``transformed.Transformed`` objects: they pickle as the
transform's recipe (see there).

Layer: api.
"""
from __future__ import annotations

import functools

import numpy as np

from .checks import check_holomorphic_inputs, check_inputs, check_scalar_output
from ..core.errors import (
    ConcretizationError, ShapeMismatchError, UnpicklableError, UnsupportedSyntax)
from ..frontends.trace import flat_function, make_program as trace_program
from ..core.ir import Aval, Lit, Program, aval_of
from ..core.primitive import TracerBase, Zero
from ..core.trace import eval_program, set_current
from ..control import for_loop
from ..control.params import ForParams
from ..control.stage import stage_loop
from ..core.pytree import flatten, unflatten
from ..core.staging import StagingTrace
from ..core.errors import NeedsReverse
from ..transforms.jvp import jvp_flat
from ..transforms.partial_eval import linearize_flat
from ..transforms.transpose import backward_pass, transpose_program
from .transformed import TraceTransformed
from .jacobians import hessian, jacfwd, jacrev  # noqa: F401  (public: wengert/__init__)
from .prepare import (
    CLOSE_OVER, source_transformed, cast_like, kept_by, options, prepare_call, transform_entry,
    unit, unshared, unwrap_aux, vjp_core)
from .fresh import fresh, held_by
from .fallback import has_source, naming_refusal, traced_after_refusal, warn_fallback
from .source import generated, source_inner, source_program
from .jit import jit
from .points import compiled_jvp, compiled_vjp
from ..control.schedules import schedule_of
from ..control.checkpoint_loop import checkpointed_loop

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose",
           "jacfwd", "jacrev", "hessian", "make_program", "jit"]


def value_and_grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto",
                   backend="python", fallback=True):
    return _value_and_grad(fun, argnums, has_aux, engine, "value_and_grad", holomorphic,
                           backend, fallback)


def _value_and_grad(fun, argnums, has_aux, engine, fname, holomorphic=False, backend="python",
                    fallback=True):
    fun = transform_entry(fun, engine, fname, backend, fallback)
    recipe = (fname, fun, (argnums,), {"has_aux": has_aux, "engine": engine,
                                       **options(holomorphic, backend, fallback)})
    if fname == "value_and_grad":
        by_source = source_transformed(fun, engine, lambda g: value_and_grad(
            g, argnums, has_aux=has_aux, holomorphic=holomorphic, engine="trace"), recipe,
            argnums)
        if by_source is not None:
            return by_source
    single = isinstance(argnums, int)

    def wrapper(*args, **kwargs):
        fn, dyn, nums, aux_box = prepare_call(fun, args, kwargs, argnums, fname, has_aux)
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
                outs, cts = jvp_flat(flat, leaves, [unit(aval_of(leaves[0]))], for_grad=True)
            except NeedsReverse:
                forward = False
        if not forward:
            outs, lin = linearize_flat(flat, leaves, reverse=True,
                                       name=getattr(fn, "__name__", "f"))
        check_scalar_output(outs, fname, fun, holomorphic)
        out = outs[0]
        if not forward:
            cts = backward_pass(lin, [unit(aval_of(out))])
        out_tree = out_tree[0]
        grads = unflatten(in_tree, [cast_like(c, x) for c, x in zip(cts, leaves)])
        g = grads[0] if single else tuple(grads)
        # a value the function did not compute (a global it returned): a copy
        value = unflatten(out_tree, fresh(outs, constant=set() if forward else {
            k for k, x in enumerate(lin.outputs) if isinstance(x, Lit)}))
        if has_aux:
            return (value, unwrap_aux(aux_box)), g
        return value, g
    return TraceTransformed(wrapper, fun, recipe)


def grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto", backend="python",
         fallback=True):
    """The gradient of a real scalar function; of a complex input ``z = x +
    iy`` it is ``df/dx - i df/dy`` (JAX's convention, ``complex_parts``).
    With ``holomorphic=True`` the function is complex and holomorphic, its
    inputs complex, and the result is ``f'(z)``. ``backend="numba"``
    compiles the source engine's code with numba (``api_backend``)."""
    fun = transform_entry(fun, engine, "grad", backend, fallback)
    recipe = ("grad", fun, (argnums,), {"has_aux": has_aux, "engine": engine,
                                        **options(holomorphic, backend, fallback)})
    by_source = source_transformed(fun, engine, lambda g: grad(g, argnums, has_aux=has_aux,
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


def vjp(fun, *primals, has_aux=False, engine="auto", backend="python", fallback=True):
    """(out, pullback); ``pullback(ct)`` returns a tuple, one per primal.
    With ``backend="numba"`` both are compiled code (``api_points``)."""
    fun = transform_entry(fun, engine, "vjp", backend, fallback)
    check_inputs("vjp", fun, primals, range(len(primals)), CLOSE_OVER)
    if backend != "python":
        done = compiled_vjp(fun, primals, engine, options(False, backend, fallback), has_aux,
                            vjp)
        if done is not None:
            return done
    if engine != "trace":
        inner = source_inner(fun, primals, engine, "vjp")
        if inner is not None:
            fun = functools.wraps(fun)(inner)
    fn, dyn, _, aux_box = prepare_call(fun, primals, {}, tuple(range(len(primals))), "vjp", has_aux,
                                   CLOSE_OVER)
    with naming_refusal(fun):
        outs, lin, leaves, in_tree, out_tree = vjp_core(fn, dyn, "vjp")
    held = held_by(primals)
    kept = kept_by(lin)
    out = unflatten(out_tree, unshared(outs, lin, held))

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
        cts = [cast_like(c, x) for c, x in zip(cts, leaves)]
        # never the cotangent given, a residual, or an argument (``fresh``)
        return tuple(unflatten(in_tree, fresh(cts, held | kept | held_by(ct_leaves))))

    pullback = _WithSource(pullback, lambda: transpose_program(lin))
    if has_aux:
        return out, pullback, unwrap_aux(aux_box)
    return out, pullback


# --- forward mode ------------------------------------------------------
def jvp(fun, primals, tangents, *, engine="auto", backend="python", fallback=True):
    """(out, tangent_out) for tuples ``primals`` and ``tangents``; with
    ``backend="numba"`` one compiled call (``api_points``)."""
    fun = transform_entry(fun, engine, "jvp", backend, fallback)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(fun, primals, tangents): primals and tangents must be tuples "
                        "(one entry per argument), e.g. jvp(f, (x,), (v,))")
    check_inputs("jvp", fun, primals, range(len(primals)), CLOSE_OVER)
    _, in_tree = flatten(tuple(primals))
    t_leaves, t_tree = flatten(tuple(tangents))
    if t_tree != in_tree:
        raise ShapeMismatchError(f"jvp: tangents structure {t_tree} differs from primals {in_tree}")
    _check_tangents(flatten(tuple(primals))[0], t_leaves)
    if backend != "python":
        done = compiled_jvp(fun, tuple(primals), tuple(tangents), engine,
                            options(False, backend, fallback), jvp)
        if done is not None:
            return done
    if engine != "trace":
        inner = source_inner(fun, tuple(primals), engine, "jvp")
        if inner is not None:
            fun = inner
    flat, leaves, in_tree, out_tree = flat_function(fun, primals)
    with naming_refusal(fun):
        outs, dots = jvp_flat(flat, leaves, t_leaves)
    # outputs that are new arrays: not an argument, a tangent given, or a
    # constant the function returned (a zero tangent: a global) (``fresh``)
    held = held_by(primals, tangents)
    outs = fresh(outs, held, {k for k, d in enumerate(dots)
                              if isinstance(d, Zero) and not isinstance(outs[k], TracerBase)})
    dots = [cast_like(d, o) if isinstance(d, Zero) else d for d, o in zip(dots, outs)]
    dots = fresh(dots, held | held_by(outs))
    return unflatten(out_tree[0], outs), unflatten(out_tree[0], dots)


def _check_tangents(leaves, t_leaves):
    for p, t in zip(leaves, t_leaves):
        if tuple(np.shape(t)) != aval_of(p).shape:
            raise ShapeMismatchError(f"jvp: tangent of shape {np.shape(t)} for a primal of shape "
                                     f"{aval_of(p).shape}; each tangent has its primal's shape")


def linearize(fun, *primals, engine="auto"):
    """(out, linear_fun): ``linear_fun(*tangents)`` evaluates the linear Program."""
    fun = transform_entry(fun, engine, "linearize")
    check_inputs("linearize", fun, primals, range(len(primals)), CLOSE_OVER)
    if engine != "trace":
        inner = source_inner(fun, primals, engine, "linearize")
        if inner is not None:
            fun = inner
    flat, leaves, in_tree, out_tree = flat_function(fun, primals)
    with naming_refusal(fun):
        outs, lin = linearize_flat(flat, leaves, reverse=False)

    def linear_fun(*tangents):
        t_leaves, t_tree = flatten(tuple(tangents))
        if t_tree != in_tree:
            raise ShapeMismatchError(f"linear function: tangents {t_tree} differ from primals "
                                     f"{in_tree}")
        res = eval_program(lin, t_leaves)
        return unflatten(out_tree[0], fresh(res, held | kept | held_by(t_leaves)))

    held, kept = held_by(primals), kept_by(lin)
    return (unflatten(out_tree[0], unshared(outs, lin, held)),
            _WithSource(linear_fun, lambda: lin))


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
    with set_current(trace):
        ins = [trace.new_input(a) for a in avals]
        outs = flat(*ins)
        prog = Program([t.atom for t in ins], trace.eqns, [trace.atom(o) for o in outs],
                       name=getattr(linear_fun, "__name__", "f"))

    def transposed(ct):
        ct_leaves, _ = flatten(ct)
        cts = backward_pass(prog, ct_leaves)
        return tuple(unflatten(in_tree, [cast_like(c, x) for c, x in zip(cts, leaves)]))

    return _WithSource(transposed, lambda: prog)


def make_program(fun, *example_args, engine="auto"):
    """The Program of ``fun`` at ``example_args``; ``print()`` shows it. With
    the source engine it keeps the function's control flow and names."""
    fun = transform_entry(fun, engine, "make_program")
    if engine == "source" or (engine == "auto" and has_source(fun)):
        try:
            return source_program(fun, example_args)[0]
        except (UnsupportedSyntax, ConcretizationError) as err:
            if engine == "source":
                raise
            warn_fallback(fun, err)
            fun = traced_after_refusal(fun, err)
            with naming_refusal(fun):
                return trace_program(fun, *example_args)
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
    schedule = schedule_of(checkpoint, snapshots)
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
        prog, consts = stage_loop(flat_body, ForParams, lead=[Aval((), np.int64)], carry=avals,
                                  name=getattr(body, "__name__", "body"), closure=True)
    except ConcretizationError:
        if isinstance(n, TracerBase):
            raise
        # the body needs a concrete counter (it indexes a NumPy array with it,
        # or branches on it): run it as a Python loop, traced step by step
        return python_loop()
    traced = any(isinstance(x, TracerBase) for x in leaves) or consts or isinstance(n, TracerBase)
    if not traced:
        return python_loop()    # nothing to differentiate: a Python loop is the fastest
    if schedule is None:
        out = for_loop(n, prog, consts, leaves)
    else:
        out = checkpointed_loop(n, prog, consts, leaves, schedule)
    return unflatten(tree, list(out))
