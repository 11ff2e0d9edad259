"""``stop_gradient``: a value through which no derivative flows.

``stop_gradient(x)`` is ``x``; its tangent is zero, whatever ``x``'s, so forward and
reverse mode treat it as a constant (JAX's ``lax.stop_gradient``). It is what a
numerically stable formula uses for a shift that cancels analytically (``logsumexp``'s
maximum, ``numpy/composite.py``): the shift's own derivative, which is zero only up to
rounding, is never computed. Public as ``wg.stop_gradient``.

In generated code it is its operand (``StopEmit``): ``v = x``, which the code writer's
coalescing turns into no statement. No ``simplify`` rule removes it: a Program
simplified before it is differentiated must still stop the derivative there.

Layer: primitives.
"""
from __future__ import annotations

from ..core.ir import aval_of
from ..core.primitive import CONSTANT, NOT_LINEAR, OPERAND_KIND, Primitive, Zero, register
from ..core.rules import EmitRule
from ..core.trace import bind

__all__ = ["stop_gradient_p", "stop_gradient"]


# --- stop_gradient -------------------------------------------------------------
def stop_gradient_impl(x):
    return x


def stop_gradient_aval(x):
    return x


def stop_gradient_jvp(primals, tangents):
    out = stop_gradient(primals[0])
    return out, Zero(aval_of(out))


def stop_gradient_batch(args, batched):
    return stop_gradient(args[0])


class StopEmit(EmitRule):
    """The operand itself (a Python scalar stays one, a stand-in float too)."""

    def expression(self, code, eqn, ins, py):
        return ins[0] if not eqn.params else None

    def python_scalars(self, eqn, py_ins, run):
        return [py_ins[0]]

    def python_floats(self, eqn, kinds):
        return (True,), (kinds[0] == "float",)


stop_gradient_p = register(Primitive(
    "stop_gradient", nargs=1, impl=stop_gradient_impl, jvp=stop_gradient_jvp,
    transpose=NOT_LINEAR, abstract_eval=stop_gradient_aval, batch=stop_gradient_batch,
    emit=StopEmit(), numpy_scalar=OPERAND_KIND, complex_ok=True, sparsity=CONSTANT))


def stop_gradient(x):
    """``x``, held constant: no derivative flows through it.

    Its value is ``x``'s; its tangent is zero and it passes no cotangent back, in
    forward and reverse mode, at every order (JAX's ``lax.stop_gradient``). Use it for
    a shift that cancels analytically, as a stable ``logsumexp`` subtracts its maximum.

    Args:
        x: an array or a number (a pytree leaf), real or complex.

    Returns:
        ``x`` itself, with no derivative. In generated code it costs nothing: the
        value is read where ``x`` is.

    Raises:
        Nothing of its own: ``x`` is returned as it is.

    Example:
        >>> import numpy as np, wengert as wg
        >>> def lse(x):
        ...     shift = wg.stop_gradient(np.max(x))
        ...     return shift + np.log(np.sum(np.exp(x - shift)))
        >>> wg.grad(lse)(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])
    """
    return bind(stop_gradient_p, x)
