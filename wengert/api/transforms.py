"""The public transforms (DESIGN.md): ``grad``, ``value_and_grad``, ``jvp``, ``vjp``,
``linearize``, ``linear_transpose``, ``make_program``; the Jacobians are ``jacobians``',
``fori_loop`` is ``loops``', ``jit`` is ``jit``'s.

Every entry point checks the function and its differentiated arguments
(``api.checks``, before any of the user's code runs), flattens pytrees, runs
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
from ..core.ir import Program, aval_of
from ..core.primitive import TracerBase, Zero
from ..core.trace import eval_program, set_current
from ..core.pytree import flatten, unflatten
from ..core.staging import StagingTrace
from ..core.errors import NeedsReverse
from ..transforms.jvp import jvp_flat
from ..transforms.partial_eval import linearize_flat
from ..transforms.transpose import backward_pass, transpose_program
from .transformed import TraceTransformed
from .prepare import (
    CLOSE_OVER, source_transformed, cast_like, options, prepare_call, transform_entry, unit, unshared,
    unwrap_aux, vjp_core)
from .fallback import has_source, warn_fallback
from .source import generated, source_inner, source_program
from .points import compiled_jvp, compiled_vjp

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose",
           "make_program"]


def value_and_grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto",
                   backend="python", fallback=True):
    """``fun``'s value and gradient, in one call; the keywords are ``grad``'s.

    Args:
        fun: a function with one real scalar output (as for ``grad``).
        argnums: the position of the argument to differentiate, or a tuple of them.
        has_aux: ``fun`` returns ``(output, aux)``; the value is then ``(output, aux)``.

    Returns:
        A function of ``fun``'s arguments returning ``(value, gradient)``.

    Raises:
        NonScalarOutputError: the output is not one real number.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        (np.float64(5.0), array([2., 4.]))
    """
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
        value = unflatten(out_tree, outs)
        if has_aux:
            return (value, unwrap_aux(aux_box)), g
        return value, g
    return TraceTransformed(wrapper, fun, recipe)


def grad(fun, argnums=0, *, has_aux=False, holomorphic=False, engine="auto", backend="python",
         fallback=True):
    """The gradient of ``fun``, a function with one real scalar output.

    Args:
        fun: a Python function of NumPy code; ``if``, ``for``, ``while`` and calls
            to your own functions are fine.
        argnums: the position of the argument to differentiate, or a tuple of them.
        has_aux: ``fun`` returns ``(output, aux)``; the result is ``(gradient, aux)``.
        holomorphic: ``fun`` is complex and holomorphic: the result is ``f'(z)``.
            Otherwise a complex input ``z = x + iy`` gets ``df/dx - i df/dy`` (JAX's).
        engine: ``"auto"`` (the source engine; tracing, with one warning, where the
            source cannot be transformed), ``"source"`` or ``"trace"``.
        backend: ``"python"``, or ``"numba"`` to compile the generated code.
        fallback: with ``backend="numba"``, run the Python code where numba cannot
            compile it (one ``NumbaFallbackWarning``); ``False`` raises instead.

    Returns:
        A function of ``fun``'s arguments returning the gradient, shaped like the
        argument (a tuple for a tuple ``argnums``). ``.source`` is its code.

    Raises:
        NonScalarOutputError: the output is not one real number.
        NonDifferentiableInputError: a differentiated argument is not a float.
        UnsupportedSyntax: ``engine="source"`` met code it cannot transform.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        array([2., 4.])
    """
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
    """``fun``'s output at ``primals`` and its pullback (reverse mode).

    ``engine``, ``backend`` and ``fallback`` are ``grad``'s.

    Args:
        fun: the function; any output (arrays, tuples, dicts of them).
        *primals: the arguments, all differentiated.
        has_aux: ``fun`` returns ``(output, aux)``; ``aux`` is returned third.

    Returns:
        ``(out, pullback)``: ``pullback(ct)``, ``ct`` shaped like ``out``, returns a
        tuple of cotangents, one per primal. ``pullback.source`` is its code.

    Raises:
        ShapeMismatchError: a cotangent not shaped like the output.

    Example:
        >>> import numpy as np, wengert as wg
        >>> out, pullback = wg.vjp(np.sin, np.array([0.0, 1.0]))
        >>> pullback(np.array([1.0, 2.0]))
        (array([1.        , 1.08060461]),)
    """
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
    outs, lin, leaves, in_tree, out_tree = vjp_core(fn, dyn, "vjp")
    out = unflatten(out_tree, unshared(outs, lin))

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
        return tuple(unflatten(in_tree, [cast_like(c, x) for c, x in zip(cts, leaves)]))

    pullback = _WithSource(pullback, lambda: transpose_program(lin))
    if has_aux:
        return out, pullback, unwrap_aux(aux_box)
    return out, pullback


# --- forward mode ------------------------------------------------------
def jvp(fun, primals, tangents, *, engine="auto", backend="python", fallback=True):
    """``fun``'s output and its derivative along ``tangents`` (forward mode).

    ``engine``, ``backend`` and ``fallback`` are ``grad``'s.

    Args:
        fun: the function.
        primals: a tuple (or list) of the arguments.
        tangents: a tuple of the directions, one per argument, each shaped like it.

    Returns:
        ``(out, tangent_out)``: the output, and its derivative along the tangents.

    Raises:
        ShapeMismatchError: a tangent not shaped like its primal.

    Example:
        >>> import numpy as np, wengert as wg
        >>> print(*wg.jvp(lambda x: x * np.sin(x), (1.0,), (1.0,)))
        0.8414709848078965 1.3817732906760363
    """
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
    outs, dots = jvp_flat(flat, leaves, t_leaves)
    dots = [cast_like(d, o) if isinstance(d, Zero) else d for d, o in zip(dots, outs)]
    return unflatten(out_tree[0], outs), unflatten(out_tree[0], dots)


def _check_tangents(leaves, t_leaves):
    for p, t in zip(leaves, t_leaves):
        if tuple(np.shape(t)) != aval_of(p).shape:
            raise ShapeMismatchError(f"jvp: tangent of shape {np.shape(t)} for a primal of shape "
                                     f"{aval_of(p).shape}; each tangent has its primal's shape")


def linearize(fun, *primals, engine="auto"):
    """``fun``'s output at ``primals``, and its derivative there as a linear function.

    What depends only on the primals is computed now; the linear function
    evaluates the rest, a linear Program (``.program``; ``.source``), at each call.

    Args:
        fun: the function.
        *primals: the arguments, all differentiated.
        engine: ``"auto"``, ``"source"`` or ``"trace"`` (see ``grad``).

    Returns:
        ``(out, linear_fun)``: ``linear_fun(*tangents)`` is ``jvp``'s tangent output.

    Raises:
        ShapeMismatchError: tangents of another structure than the primals.

    Example:
        >>> import numpy as np, wengert as wg
        >>> out, df = wg.linearize(np.sin, 0.0)
        >>> print(out, df(2.0))
        0.0 2.0
    """
    fun = transform_entry(fun, engine, "linearize")
    check_inputs("linearize", fun, primals, range(len(primals)), CLOSE_OVER)
    if engine != "trace":
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

    return unflatten(out_tree[0], unshared(outs, lin)), _WithSource(linear_fun, lambda: lin)


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
    """The transpose of a linear function: from ``v -> A v`` to ``u -> A^T u``.

    Args:
        linear_fun: a function linear in its arguments (``linearize``'s, or yours).
        *primals: example arguments: their shapes and dtypes.

    Returns:
        A function of a cotangent shaped like the output: a tuple, one per argument.

    Raises:
        ShapeMismatchError: shapes that do not fit the traced ones.

    Example:
        >>> import numpy as np, wengert as wg
        >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> wg.linear_transpose(lambda v: A @ v, np.zeros(2))(np.array([1.0, 0.0]))
        (array([1., 2.]),)
    """
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
    """The Program (the Wengert list) of ``fun`` at ``example_args``.

    Args:
        fun: the function.
        *example_args: arguments of the shapes and dtypes to record it at.
        engine: ``"source"`` keeps control flow and names; ``"trace"``, ``"auto"``.

    Returns:
        A ``Program``: ``print(program)`` shows one primitive per line.

    Raises:
        UnsupportedSyntax: ``engine="source"`` met code it cannot transform.

    Example:
        >>> import numpy as np, wengert as wg
        >>> print(wg.make_program(lambda x: x * np.sin(x), 1.0))
        program <lambda>(x: f64[]):
          v0 = sin (x)
          v1 = mul (x, v0)
          return (v1)
    """
    fun = transform_entry(fun, engine, "make_program")
    if engine == "source" or (engine == "auto" and has_source(fun)):
        try:
            return source_program(fun, example_args)[0]
        except (UnsupportedSyntax, ConcretizationError) as err:
            if engine == "source":
                raise
            warn_fallback(fun, err)
    return trace_program(fun, *example_args)
