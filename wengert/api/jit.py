"""``wg.jit(f)``: the plain function compiled through the derivatives' path.

    f --source frontend--> Program --simplify, lower--> code --numba.njit--> callable

The source engine's primal Program is generated and compiled the way a
derivative's is (``SourceTransformed`` with the identity as its transform):
the same lowering, the same backend (``api.backend``), the same code
reuse, so a user can time a derivative against its own function compiled
alike. ``.source`` is the code of the latest call.

Layer: api.
"""
from __future__ import annotations

from .prepare import source_transformed, transform_entry, backend_options
from ..core.errors import BackendError

__all__ = ["jit"]


def _identity(inner):
    return inner


def jit(fun, *, backend="numba", fallback=True, engine="auto"):
    """``fun`` itself, compiled: its source Program written as code, no derivative.

    Args:
        fun: the function.
        backend: ``"numba"`` compiles the code; ``"python"`` runs the generated Python.
        fallback: where numba cannot compile the code, run the Python code with one
            ``NumbaFallbackWarning``; ``False`` raises ``NumbaCompileError``.
        engine: ``"auto"`` runs ``fun`` itself, with one warning, where its source
            cannot be converted; ``"source"`` raises there.

    Returns:
        A function with ``fun``'s signature and values; ``.source`` is its code.

    Raises:
        BackendError: ``engine="trace"``, which generates no code.
        NumbaMissingError: ``backend="numba"`` without numba installed.

    Example:
        >>> import numpy as np, wengert as wg
        >>> wg.jit(lambda x: np.sum(np.sin(x)), backend="python")(np.zeros(3))
        np.float64(0.0)
    """
    if engine == "trace":
        raise BackendError("jit compiles the source engine's code of the function; "
                           "engine='trace' generates none (use 'source' or 'auto')")
    fun = transform_entry(fun, engine, "jit", backend, fallback)
    recipe = ("jit", fun, (), {"engine": engine, **backend_options(backend, fallback)})
    out = source_transformed(fun, engine, _identity, recipe, ())
    # a callable that is no Python function (a builtin, a NumPy ufunc): itself
    return fun if out is None else out
