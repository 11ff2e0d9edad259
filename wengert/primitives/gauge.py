"""``gauge_check``: the guard on the part of a decomposition that is not a function of its
input.

A complete QR or a full SVD of a non-square matrix adds columns (rows of ``Vh``) that are an
orthonormal basis of a complement, which LAPACK chooses: any rotation ``B K`` of that basis
``B`` is as good. Eigenvectors of a repeated eigenvalue are any orthonormal basis of their
eigenspace. A function of such a basis has a derivative only where it does not depend on
the choice: where it is unchanged by the rotations ``B -> B exp(K)``. Its cotangent ``C``
then satisfies ``skew(B^T C) = 0`` on the pairs of columns that may turn into each other
(every pair of a complement; the pairs of equal eigenvalues).

The decompositions' jvp rules give those columns the tangent that does not turn them
among themselves, wrapped in ``gauge_check(t, B[, w])``: the identity in forward mode, and
in reverse mode (its transpose) a check, when the code runs, that the cotangent turns
nothing, else ``UndefinedDerivativeError`` naming the user's call. So a function of the
well-defined part, or one invariant under the choice (``Q Q^T``, ``U diag(s) Vh``), is
differentiated; one that reads the arbitrary basis itself is refused. (Forward mode cannot
see how its tangents are used later: it gives the non-turning gauge's derivative, right for
the invariant functions.)

Layer: primitives.
"""
from __future__ import annotations

import sys

import numpy as np

from ..core.errors import NeedsReverse, UndefinedDerivativeError
from ..core.ir import aval_of
from ..core.primitive import ZERO_IF_ANY, Primitive, register
from ..core.rules import EmitRule
from ..core.trace import bind
from .arith import add, div, mul, sub
from .batched import all_batched
from .ordering import abs, less_equal
from .reduce import reduce_max
from .selection import where
from .shape import expand_dims

__all__ = ["gauge_check", "reverse_only", "untied_gap_inverse", "basis_turning", "basis_turned",
           "undefined_derivative"]


def basis_turning(ct, basis, w):
    """The largest entry of ``skew(B^T C)`` on the pairs that may turn, and the scale to
    compare it with."""
    g = np.swapaxes(basis, -1, -2).conj() @ ct
    skew = g - np.swapaxes(g, -1, -2)
    if w is not None:
        scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None] + np.finfo(w.dtype).tiny
        tie = np.abs(w[..., :, None] - w[..., None, :]) <= 100 * np.finfo(w.dtype).eps * scale
        skew = np.where(tie, skew, 0)
    return np.max(np.abs(skew), initial=0.0), np.max(np.abs(ct), initial=0.0)


def basis_turned(ct, basis, w=None):
    """Whether the cotangent ``ct`` turns the columns ``basis`` among themselves (those
    of tied eigenvalues ``w``) by more than rounding: its derivative is not defined."""
    ct = np.asarray(ct)
    turning, scale = basis_turning(ct, np.asarray(basis), None if w is None else np.asarray(w))
    return turning > np.sqrt(np.finfo(ct.dtype).eps) * max(scale, 1e-300)


def undefined_derivative(message):
    """The error of a derivative that depends on a chosen basis: wengert's
    ``UndefinedDerivativeError`` where wengert runs the code, else (the generated text run
    without wengert) ``NotImplementedError``, its base."""
    errors = sys.modules.get("wengert.core.errors")
    return (errors.UndefinedDerivativeError if errors else NotImplementedError)(message)


def _message(what, where):
    return (f"{where}: the derivative of {what} is not defined: those columns are a basis "
            "that the decomposition chooses (any rotation of them is as good), and the "
            "function differentiated depends on that choice. Use only the well-defined "
            "part (mode='reduced', full_matrices=False), or a function that does not "
            "depend on the choice (a projector B @ B.T)")


def gauge_check_impl(t, basis, *w, check, what, where):
    if check and basis_turned(t, basis, *w):
        raise UndefinedDerivativeError(_message(what, where))
    return t


def gauge_check_aval(t, basis, *w, check, what, where):
    return t


def gauge_check_jvp(primals, tangents, check, what, where):
    t, basis, *w = primals
    return (gauge_check(t, basis, *w, check=check, what=what, where=where),
            gauge_check(tangents[0], basis, *w, check=check, what=what, where=where))


def gauge_check_transpose(ct, t, basis, *w, check, what, where):
    # forward, the identity; backward, the identity that checks the cotangent
    return (gauge_check(ct, basis, *w, check=not check, what=what, where=where),
            None) + (None,) * len(w)


def gauge_check_batch(args, batched, **params):
    # stacks of matrices (and of eigenvalues): the batch is one more stack axis of each
    return bind(gauge_check_p, *all_batched(args, batched), **params)
def gauge_check_sparsity(an, ops, outs, check, what, where):
    """``t`` itself (the check reads the others, the value is ``t``'s)."""
    return ops[0].deps


class GaugeEmit(EmitRule):
    """Forward (``check=False``) the operand itself: no statement once coalesced. The
    check of a reverse sweep: ``basis_turned`` and ``undefined_derivative``, defined in
    the generated text (NumPy alone), raise the error naming the user's call."""

    def expression(self, code, eqn, ins, py):
        return None if eqn.params["check"] else ins[0]

    def statements(self, code, eqn, ins, py, outs, subs):
        if not eqn.params["check"]:
            return None
        turned, error = code.define(basis_turned, (basis_turning,)), \
            code.define(undefined_derivative)
        message = _message(eqn.params["what"], eqn.params["where"])
        return [f"if {turned}({', '.join(ins)}):",
                f"{code.INDENT}raise {error}({message!r})",
                f"{outs[0]} = {ins[0]}"]

    def python_scalars(self, eqn, py_ins, run):
        return [py_ins[0]]


gauge_check_p = register(Primitive(
    "gauge_check", nargs=None, impl=gauge_check_impl, jvp=gauge_check_jvp,
    transpose=gauge_check_transpose, abstract_eval=gauge_check_aval, zero_rule=ZERO_IF_ANY,
    sparsity=gauge_check_sparsity, emit=GaugeEmit(), batch=gauge_check_batch))


def gauge_check(t, basis, *w, check=False, what, where):
    """``t`` (the tangent of the columns ``basis`` of a decomposition, or its cotangent
    when ``check``); ``w``: the eigenvalues, where only the pairs of equal ones may turn."""
    return bind(gauge_check_p, t, basis, *w, check=bool(check), what=what, where=where)


def reverse_only(jvp, arbitrary):
    """The ``jvp_for_grad`` rule of a decomposition whose result may hold a chosen basis
    (``arbitrary(primals, **params)``): forward mode standing in for ``grad`` cannot check
    how the basis is used, so ``grad`` takes reverse mode there (``NeedsReverse``)."""
    def jvp_for_grad(primals, tangents, **params):
        if arbitrary(primals, **params):
            raise NeedsReverse(None)
        return jvp(primals, tangents, **params)
    jvp_for_grad.__name__ = f"{jvp.__name__}_for_grad"
    return jvp_for_grad


def untied_gap_inverse(w, eye):
    """``F_ij = 1 / (w_j - w_i)`` off the diagonal (``eye``: the identity), 0 on it and
    where the two are equal to rounding: an eigenspace's basis does not turn in itself."""
    gap = sub(expand_dims(w, -2), expand_dims(w, -1))
    scale = expand_dims(reduce_max(abs(w), axis=-1, keepdims=True), -1)
    tied = less_equal(abs(gap), mul(scale, 100 * float(np.finfo(aval_of(w).dtype).eps)))
    return div(where(tied, 0.0, 1.0 - eye), add(gap, where(tied, 1.0, eye)))
