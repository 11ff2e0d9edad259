"""Typed errors. Each message says what happened and what to do instead.

Every class subclasses ``WengertError`` and the builtin a caller would catch
for the same mistake (``TypeError``, ``ValueError``...), so ``except TypeError``
written before the class existed still catches it.

Layer: core.
"""
import functools
import importlib.util
import os
import pickle
import sys

import numpy as np

__all__ = ["WengertError", "NonScalarOutputError", "NonDifferentiableInputError",
           "NoDerivativeRule", "ShapeMismatchError", "ConcretizationError",
           "LeakedTracerError", "UnsupportedSyntax", "BatchedConditionError", "UnsupportedFunctionError",
           "InPlaceUpdateError", "UnsupportedDtypeError", "InvalidFunctionError",
           "OutputStructureError", "PytreeDepthError", "UnpicklableError",
           "BackendError", "NumbaMissingError", "NumbaCompileError", "NumbaFallbackWarning",
           "LoopedBatchWarning"]


class WengertError(Exception):
    """The base class of every error wengert raises on purpose.

    Cause: never raised itself; each error below is a subclass, and also a
    subclass of the builtin you would catch for the same mistake.

    Fix: catch ``wg.WengertError`` to handle any of them at once; read the
    message, which names your file and line and says what to do.
    """


class NonScalarOutputError(WengertError, TypeError):
    """``grad`` or ``value_and_grad`` of a function whose output is not one real number.

    Cause: the function returned an array, a tuple, or a complex number (without
    ``holomorphic=True``); a gradient is the derivative of one real output.

    Fix: reduce the output (``np.sum``, ``np.mean``, a norm); take the whole
    Jacobian with ``jacrev`` or ``jacfwd``; or one vector-Jacobian product with
    ``vjp``. For a holomorphic complex function pass ``holomorphic=True``.
    """


class NonDifferentiableInputError(WengertError, TypeError):
    """A derivative taken with respect to a value that has none.

    Cause: an argument named by ``argnums`` (or a primal of ``jvp``, ``vjp``,
    ``linearize``) is an integer, a boolean, a string, ``None`` or another
    object that is not a float or a float array. The message names the argument's
    position, name and path inside its pytree.

    Fix: pass floats (``2.0``, ``x.astype(float)``), or leave the argument out
    of ``argnums``: integer arguments (sizes, counts) are fine when not
    differentiated.
    """


class InvalidFunctionError(WengertError, TypeError):
    """A transform was given something it cannot differentiate as a function.

    Cause: a generator or coroutine function (``yield``, ``async def``), or an
    object that is not callable; the message names where it was defined.

    Fix: pass a plain function that returns its result, e.g. collect a
    generator's values in a list and return ``np.stack`` of them.
    """


class OutputStructureError(WengertError, TypeError):
    """The function's output does not have the structure the transform expects.

    Cause: ``has_aux=True`` but the function did not return an ``(output, aux)``
    pair.

    Fix: return ``loss, aux`` (a 2-tuple), or drop ``has_aux=True``.
    """


class PytreeDepthError(WengertError, ValueError):
    """An argument nested deeper than ``wengert.core.pytree.MAX_DEPTH`` (256) levels.

    Cause: tuples, lists or dicts nested more than 256 deep, often a structure
    that contains itself. ``steps`` is the path (indices, keys) to the container
    that is too deep; the message names the argument.

    Fix: flatten the structure, or pass its leaves as an array.
    """

    def __init__(self, message, steps=()):
        super().__init__(message)
        self.steps = list(steps)


class UnpicklableError(WengertError, pickle.PicklingError):
    """A pullback or linear function was pickled.

    Cause: the functions returned by ``vjp`` and ``linearize`` hold the values of
    one evaluation, so they cannot travel to another process by reference.

    Fix: send the function and its primals instead, and call ``wg.vjp`` or
    ``wg.linearize`` where they arrive. Functions made by ``wg.grad``,
    ``jacfwd``... pickle fine.
    """


class BackendError(WengertError, ValueError):
    """A ``backend`` that does not exist, or one the chosen engine cannot use.

    Cause: ``backend=`` is neither ``"python"`` nor ``"numba"``; or
    ``backend="numba"`` with ``engine="trace"``, which generates no code to
    compile; or an invalid ``WENGERT_NUMBA_MAX_LINES``.

    Fix: use ``backend="python"`` or ``"numba"`` with ``engine="auto"`` or
    ``"source"``.
    """


class NumbaMissingError(WengertError, ImportError):
    """``backend="numba"`` without numba installed.

    Cause: numba is an optional dependency of wengert.

    Fix: ``pip install -e ".[numba]"`` from the checkout (or ``pip install
    numba``), or use ``backend="python"``.
    """


class NumbaCompileError(WengertError, NotImplementedError):
    """numba cannot compile the generated code, and ``fallback=False`` was given.

    Cause: the code holds a construct with no spelling in numba's subset (values
    whose length varies per iteration, SciPy calls, a NumPy function numba
    lacks), numba's typing refused it, or it is longer than
    ``WENGERT_NUMBA_MAX_LINES``. ``construct`` says which.

    Fix: leave ``fallback=True`` (the default: the Python backend runs it, with
    a ``NumbaFallbackWarning``), or rewrite the construct named.
    """

    def __init__(self, message, construct=None):
        super().__init__(message)
        self.construct = construct


class NumbaFallbackWarning(UserWarning):
    """A warning: ``backend="numba"`` ran the Python backend for one function.

    Cause: numba cannot compile a construct of its generated code (named in the
    message, with the function's file and line). Issued once per function.

    Fix: nothing, if the Python backend's speed is fine; else rewrite the
    construct, or pass ``fallback=False`` to get a ``NumbaCompileError``.
    """


class LoopedBatchWarning(UserWarning):
    """``wg.vmap`` ran a function once per example of the batch: right, but a loop.

    Cause: with the trace engine, a Python ``if``/``while``, ``int()``, ``bool()`` or a
    call that needs the value itself (``np.put``) met a value that differs between examples.

    Fix: the source engine (``engine="auto"``) batches an ``if`` or ``while`` as one code.
    """


class NoDerivativeRule(WengertError, NotImplementedError):
    """A function without a derivative rule was called on a value being differentiated.

    Cause: a NumPy, SciPy or Python function wengert has no rule for (see the
    supported functions) met a traced value.

    Fix: write it with supported functions, or wrap the call in a function of
    your own with ``wg.custom_jvp`` or ``wg.custom_vjp``: its body then runs on
    plain NumPy values and your rule gives the derivative. The message shows a
    three-line example.
    """


class UndefinedDerivativeError(NoDerivativeRule):
    """A derivative of a part of a result that is not a function of the input.

    Cause: the columns a complete QR or a full SVD of a non-square matrix adds (a basis
    LAPACK chooses), or eigenvectors of a repeated eigenvalue (any basis of their
    eigenspace), reached by a cotangent that depends on that choice (reverse mode checks
    it when the code runs).

    Fix: use the well-defined part (``mode="reduced"``, ``full_matrices=False``, the
    columns of distinct eigenvalues), or a function that does not depend on the choice
    (the projector ``B @ B.T``, ``U @ np.diag(s) @ Vh``).
    """


class UnsupportedFunctionError(NoDerivativeRule):
    """A ``math`` function without a NumPy twin met a traced value.

    Cause: ``math.sin`` and the like work on Python floats only; wengert maps
    most of them to NumPy, and this one has no twin with a rule.

    Fix: use the NumPy function (``np.sin``), or wrap the call in
    ``wg.custom_jvp`` / ``wg.custom_vjp``.
    """


class ShapeMismatchError(WengertError, ValueError):
    """Shapes that do not fit.

    Cause: operands that do not broadcast; a tangent or cotangent whose shape or
    structure differs from its primal's or output's; a loop carry that changes
    shape; an in-place ``y op= v`` whose result would be larger than ``y``; under
    ``wg.vmap``, ``np.nonzero``/``np.unique``/``x[mask]`` (examples differ in length).

    Fix: give each tangent its primal's shape, each cotangent its output's, and
    keep a loop carry's shape and dtype fixed (``np.where(mask, x, 0)``, not ``x[mask]``).
    """


class ConcretizationError(WengertError, TypeError):
    """A traced value was used where Python needs a concrete one.

    Cause: ``int(x)``, ``bool(x)``, ``x.item()`` or indexing with a traced value
    where the engine records a program (a ``fori_loop`` body, the trace engine
    meeting ``np.array([a, b])``, a function NumPy converts before wengert sees
    it).

    Fix: use ``engine="auto"`` (the default), which converts these calls in the
    source; write ``np.stack([a, b])`` instead of ``np.array([a, b])``; or use
    ``np.where`` instead of branching on a value inside a ``fori_loop`` body.
    """


class BatchedConditionError(ConcretizationError):
    """Python control flow on a batched value inside ``wg.vmap`` that cannot be batched.

    Cause: an ``if``, ``while``, ``int()`` or ``bool()`` of the trace engine met a value that
    differs between examples, where the batch's length is not known yet (so it cannot run
    one example at a time). ``trace``: the batching trace of the value.

    Fix: the source engine (``engine="auto"``) batches it; or write it with ``np.where``.
    """

    def __init__(self, message, trace=None):
        super().__init__(message)
        self.trace = trace


class UnsupportedDtypeError(WengertError, TypeError):
    """A value of a dtype an operation has no rule for.

    Cause: a complex value reached a primitive whose rules were not checked for
    complex numbers (``sign``, ordering, ``maximum``); or an in-place ``y op= v``
    that NumPy refuses (``int += float``).

    Fix: apply the operation to real values (``np.real``, ``np.imag``,
    ``np.abs`` of the complex ones), or give the array the dtype of its result.
    """

    @classmethod
    def complex_operand(cls, prim_name):
        """Complex values are refused on a primitive whose rules were not
        audited for them (a rule written for reals can be silently wrong on
        complex values: ``sign``, ordering, ``maximum``)."""
        return cls(f"{user_location()}: {prim_name} on a complex value: wengert has no "
                   f"rule of {prim_name} for complex values (it is undefined or not "
                   "holomorphic there); apply it to real values (np.real, np.imag, "
                   "np.abs of the complex ones)")


class InPlaceUpdateError(WengertError, TypeError):
    """A write into an array that wengert cannot follow.

    Cause: ``x[i] = v`` on a traced array in the trace engine; or, in the source
    engine, a write into an array that another live name may share (a view,
    ``z = y``) and that is read after the write. Then ``filename``, ``lineno``
    (of the write) and ``names`` (the written name and its alias) say where.

    Fix: copy before writing (``y = x.copy()``), or update functionally with
    ``wg.at(x)[i].set(v)``; in the trace engine use ``engine="auto"``, whose
    source engine turns ``x[i] = v`` into a functional update.
    """

    def __init__(self, message, filename=None, lineno=None, names=()):
        super().__init__(message)
        self.filename, self.lineno, self.names = filename, lineno, tuple(names)


class LeakedTracerError(WengertError, RuntimeError):
    """A traced value escaped the transformation that created it.

    Cause: a value being differentiated was stored outside the function (a
    global, a list, an attribute) and used after, or closed over by a custom
    rule.

    Fix: return the value from the function, or pass it in as an argument.
    """


class UnsupportedSyntax(WengertError, NotImplementedError):
    """The source engine met a construct it cannot transform.

    Cause: Python the source engine does not accept (``try``, ``with``,
    ``global``, assignment into a global array, a list changed in place under a
    branch on a traced value...). ``filename``, ``lineno``, ``col`` and
    ``construct`` say where and what.

    Fix: with ``engine="auto"`` (the default) wengert falls back to tracing, with
    one warning; else rewrite the construct as the message says, or pass
    ``engine="trace"``.
    """

    def __init__(self, message, filename=None, lineno=None, col=None, construct=None):
        super().__init__(message)
        self.filename, self.lineno, self.col, self.construct = filename, lineno, col, construct


class WriteThroughCallError(InPlaceUpdateError, UnsupportedSyntax):
    """A write into an argument that the source engine does not follow through a call.

    Cause: a NumPy function that writes into its argument (``np.put``, ``np.copyto``,
    ``np.fill_diagonal``, ``np.add.at``, ``out=``) on a value the source engine records
    symbolically. It is an ``InPlaceUpdateError`` (a write it cannot make) and an
    ``UnsupportedSyntax`` (a construct it does not take), so ``engine="auto"`` falls back
    on the trace engine, which follows the write.

    Fix: write the functional form the message names (``y[i] = v``,
    ``y = np.where(mask, v, y)``, ``y = wg.at(y)[i].add(v)``), or use ``engine="trace"``
    (``"auto"`` does so by itself).
    """

    def __init__(self, message, construct=None):
        Exception.__init__(self, message)
        self.filename = self.lineno = self.col = None
        self.names, self.construct = (), construct


class RuntimeLengthError(UnsupportedSyntax):
    """A length known only at run time, needed while the source engine generates code.

    Cause: a value selected by a mask computed from the data (``x[mask]``, ``np.nonzero``,
    ``np.unique``, ``np.bincount``: a ``None`` in its shape) broadcast against a length it
    may differ from, concatenated in reverse mode, or made into an array of that length.

    Fix: keep the shape fixed (``np.where(mask, x, 0)`` in place of ``x[mask]``), or use
    ``engine="trace"``, which knows every length (``engine="auto"`` falls back on it).
    """

    def __init__(self, what):
        super().__init__(
            f"{user_location()}: {what} of a value whose length is known only at run time "
            "(it comes from a boolean mask, np.nonzero, np.unique or np.bincount of traced "
            "values) is not supported by the source engine; use engine='trace' "
            "(engine='auto' does so by itself), or keep the shape fixed with "
            "np.where(mask, x, 0)", construct="run-time length")


# the construct of the UnsupportedSyntax raised for a Jacobian (a batch) or a
# higher derivative through loops whose stored values vary in length: the
# trace engine handles it, so engine="auto" falls back on it
RAGGED_BATCH = "Jacobian through nested dynamic loops"


def no_rule_message(where, name):
    """What a ``NoDerivativeRule`` for ``name`` (as the user writes it) says:
    where, and the way out, with a three-line example of giving it a rule."""
    return (f"{where}: {name} has no derivative rule in wengert. Write it with supported NumPy "
            "functions, or wrap the call in a function of your own that has a rule (its body "
            "then runs on plain NumPy values):\n"
            f"    @wg.custom_vjp\n"
            f"    def f(x): return {name}(x)\n"
            f"    f.defvjp(lambda x: (f(x), x), lambda x, ct: (ct * dfdx(x),))")


# the wengert package's folder: frames and code under it are wengert's own
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@functools.cache
def _library_dirs():
    """The folders of NumPy's and SciPy's own source (SciPy's found without importing it)."""
    dirs = [os.path.dirname(os.path.abspath(np.__file__)) + os.sep]
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        dirs.append(os.path.dirname(os.path.abspath(spec.origin)) + os.sep)
    return tuple(dirs)


def library_file(fname, library=None):
    """Whether ``fname`` is a source file of NumPy or SciPy (``library``: of that one only,
    ``"numpy"`` or ``"scipy"``), by where they are installed, not by the folders' names: a
    user's own folder called ``numpy`` holds the user's code."""
    path = os.path.abspath(fname)
    dirs = _library_dirs()
    if library is not None:
        dirs = [d for d in dirs if os.path.basename(d.rstrip(os.sep)) == library]
    return path.startswith(tuple(dirs))


def user_location():
    """``file:line`` of the innermost frame outside the wengert package: the
    line of user code that led to the error."""
    here = PACKAGE_DIR
    frame = sys._getframe(1)
    while frame is not None:
        fname = frame.f_code.co_filename
        if not os.path.abspath(fname).startswith(here) and "<frozen" not in fname \
                and not library_file(fname):
            return f"{fname}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def user_function(fun):
    """The user's Python function behind ``fun``: wengert's wrappers
    (transformed functions, custom rules, partials, its own closures marked
    with ``wg_origin``) are looked through. ``None`` when there is none."""
    here = PACKAGE_DIR
    for _ in range(100):        # a chain of wrappers, never a cycle
        code = getattr(fun, "__code__", None)
        if code is not None and not os.path.abspath(code.co_filename).startswith(here):
            return fun
        nxt = (getattr(fun, "wg_origin", None) or getattr(fun, "__wrapped__", None)
               or getattr(fun, "func", None) or getattr(fun, "fun", None))
        if nxt is None or nxt is fun:
            return None
        fun = nxt
    return None


def where_defined(fun):
    """``file:line`` of the definition of the user's function behind ``fun``
    (``user_function``), or ``None``."""
    user = user_function(fun)
    if user is None:
        return None
    return f"{user.__code__.co_filename}:{user.__code__.co_firstlineno}"


class NeedsReverse(Exception):
    """Raised where forward mode stands in for ``grad`` (``jvp_for_grad``)
    and would not give what ``grad`` means (a ``custom_vjp`` function, whose
    gradient is its ``bwd``): the caller takes reverse mode instead. Never
    reaches the user."""
