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
    """Base class of every error wengert raises on purpose."""


class NonScalarOutputError(WengertError, TypeError):
    """grad/value_and_grad of a function whose output is not a scalar."""


class NonDifferentiableInputError(WengertError, TypeError):
    """Differentiating with respect to a value that has no derivative: an
    integer or boolean, a string, None, any other non-array object."""


class InvalidFunctionError(WengertError, TypeError):
    """A transform was given something it cannot differentiate as a function:
    a generator or coroutine function, or an object that is not callable."""


class OutputStructureError(WengertError, TypeError):
    """The function's output does not have the structure the transform was
    told to expect (``has_aux=True`` without an ``(output, aux)`` pair)."""


class PytreeDepthError(WengertError, ValueError):
    """A pytree (tuples, lists, dicts) nested deeper than ``pytree.MAX_DEPTH``.
    ``steps`` is the path to the container that is too deep (indices, keys)."""

    def __init__(self, message, steps=()):
        super().__init__(message)
        self.steps = list(steps)


class UnpicklableError(WengertError, pickle.PicklingError):
    """An object bound to the values of one evaluation (a pullback, a linear
    function) cannot travel by reference; the message says what to send."""


class BackendError(WengertError, ValueError):
    """A ``backend`` that does not exist, or one the chosen engine cannot use
    (``backend="numba"`` compiles generated code: the trace engine has none)."""


class NumbaMissingError(WengertError, ImportError):
    """``backend="numba"`` without numba installed."""


class NumbaCompileError(WengertError, NotImplementedError):
    """``backend="numba", fallback=False`` on code numba cannot compile: a
    construct with no spelling in numba's subset, or numba's typing refused
    it. ``construct`` says which."""

    def __init__(self, message, construct=None):
        super().__init__(message)
        self.construct = construct


class NumbaFallbackWarning(UserWarning):
    """``backend="numba"`` ran the Python backend instead, for one function:
    numba cannot compile a construct of its code (named in the message)."""


class LoopedBatchWarning(UserWarning):
    """``wg.vmap`` of the trace engine ran a function once per example of the batch: it
    takes Python control flow on a batched value (the source engine batches it)."""


class NoDerivativeRule(WengertError, NotImplementedError):
    """A NumPy (or Python) function without a registered rule was called on a
    traced value."""


class UnsupportedFunctionError(NoDerivativeRule):
    """``math.sin`` and friends called on a traced value."""


class ShapeMismatchError(WengertError, ValueError):
    """Operands or cotangents whose shapes do not fit."""


class ConcretizationError(WengertError, TypeError):
    """A symbolic value was used where Python needs a concrete one."""


class BatchedConditionError(ConcretizationError):
    """A Python ``if``/``while``/``int()`` on a batched value inside ``wg.vmap`` (each
    example may answer differently). ``trace`` is the batching trace the value belongs to:
    ``vmap`` of the trace engine runs such a function one example at a time."""

    def __init__(self, message, trace=None):
        super().__init__(message)
        self.trace = trace


class UnsupportedDtypeError(WengertError, TypeError):
    """A value of a dtype an operation has no rule for (complex)."""

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
    """``x[i] = v`` on a traced array in the trace engine (arrays being
    differentiated are values: update them functionally); in the source
    engine, a write into an array that another live name may share (a view,
    ``z = y``), where the functional update would differ from Python. The
    latter sets ``filename``, ``lineno`` (of the write) and ``names`` (the
    written name and its alias)."""

    def __init__(self, message, filename=None, lineno=None, names=()):
        super().__init__(message)
        self.filename, self.lineno, self.names = filename, lineno, tuple(names)


class LeakedTracerError(WengertError, RuntimeError):
    """A traced value escaped the transformation that created it."""


class UnsupportedSyntax(WengertError, NotImplementedError):
    """The source engine met a construct it cannot transform. ``filename``,
    ``lineno``, ``col`` and ``construct`` say where and what."""

    def __init__(self, message, filename=None, lineno=None, col=None, construct=None):
        super().__init__(message)
        self.filename, self.lineno, self.col, self.construct = filename, lineno, col, construct


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
