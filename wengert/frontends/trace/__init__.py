"""The trace frontend: run a Python function on tracer values and record
every primitive it meets into a Program (the tape).

Python control flow is taken at the concrete values of this call, so the
Program is straight-line and valid for this path only. Pytrees of inputs and
outputs are flattened: the Program's inputs are the leaves.

Layer: frontends.
"""
from __future__ import annotations

import inspect

from ...core.errors import WengertError
from ...core.ir import aval_of
from ...core.pytree import flatten, unflatten
from ...core.staging import stage

__all__ = ["make_program", "flat_function"]


def flat_function(fun, args, kwargs=None):
    """``fun`` as a function of the flat leaves of ``args``; the output's
    tree is stored in ``out_tree[0]`` when it runs."""
    leaves, in_tree = flatten(tuple(args))
    out_tree = [None]
    kwargs = kwargs or {}

    def flat(*xs):
        try:
            out = fun(*unflatten(in_tree, xs), **kwargs)
        except ValueError as err:
            _raise_typed_cause(err)
            raise
        out_leaves, out_tree[0] = flatten(out)
        return out_leaves

    return flat, leaves, in_tree, out_tree


def _raise_typed_cause(err):
    """NumPy's own ValueError whose cause is wengert's typed error: NumPy
    storing a traced value into a plain array (``z[0] = x[0]``) replaces
    what the conversion raised by "setting an array element with a
    sequence", keeping it as the cause. The typed error is the one to show."""
    cause = err.__cause__
    if type(err) is ValueError and isinstance(cause, WengertError):
        raise cause.with_traceback(cause.__traceback__) from None


def make_program(fun, *args, name=None):
    """Trace ``fun`` at ``args``; return the straight-line Program."""
    flat, leaves, _, _ = flat_function(fun, args)
    avals = [aval_of(x) for x in leaves]
    return stage(flat, avals, name=name or getattr(fun, "__name__", "f"),
                 in_names=input_names(fun, args, len(leaves)), concrete_vals=leaves)


def input_names(fun, args, n_leaves):
    """The parameter names of ``fun`` as input names, when every argument is
    one array (a pytree argument's leaves get print-time names)."""
    if len(args) != n_leaves:
        return None
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < n_leaves:
        return None
    return names[:n_leaves]
