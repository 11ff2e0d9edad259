"""Symbolic lengths (``dims``) as code: the Python text of a length (``render``), its
linear form (``linear_form``: two lengths of one form are equal at every size, so comparing
them records no guard), and the function that checks a generation's guards at new sizes
(``guard_function``).

Layer: core.
"""
from __future__ import annotations

import math

import numpy as np

from .dims import Dim, Scalar, plain_number

__all__ = ["linear_form", "render", "guard_function"]


_PREC = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2, "/": 2}


def linear_form(d):
    """A length as ``({(input, axis): multiple}, constant)`` when it is a sum
    of integer multiples of input lengths (``3 * n - 2 * n`` is ``({n: 1},
    0)``; a plain int ``k`` is ``({}, k)``), else None (a division, a
    remainder). Two lengths of one form are equal at every size: compared
    this way, no guard is recorded."""
    if type(d) is not Dim:
        return ({}, int(d)) if isinstance(d, (int, np.integer)) and not isinstance(d, bool) \
            else None
    e = d.expr
    if e[0] == "in":
        return {(e[1], e[2]): 1}, 0
    op, a, b = e
    la, lb = linear_form(a), linear_form(b)
    if la is None or lb is None:
        return None
    if op in ("+", "-"):
        sign = 1 if op == "+" else -1
        terms = dict(la[0])
        for key, c in lb[0].items():
            terms[key] = terms.get(key, 0) + sign * c
        return {k: c for k, c in terms.items() if c}, la[1] + sign * lb[1]
    if op == "*" and (not la[0] or not lb[0]):
        (terms, c), scale = (lb, la[1]) if not la[0] else (la, lb[1])
        return {k: v * scale for k, v in terms.items() if v * scale}, c * scale
    return None


def render(d, leaf):
    """The Python text of a length: ``leaf(k, axis)`` writes an input's axis."""
    text, _ = _render(d, leaf)
    return text


def _render(d, leaf):
    if not isinstance(d, (Dim, Scalar)):
        if isinstance(d, float) and not math.isfinite(d):
            return f"float({repr(d)!r})", 9
        return repr(plain_number(d)), (9 if d >= 0 else 0)
    if d.expr[0] == "in":
        return leaf(d.expr[1], d.expr[2]), 9
    op, a, b = d.expr
    ta, pa = _render(a, leaf)
    tb, pb = _render(b, leaf)
    p = _PREC[op]
    if pa < p:
        ta = f"({ta})"
    if pb <= p:
        tb = f"({tb})"
    return f"{ta} {op} {tb}", p


def _render_expr(e, leaf):
    return _render(Dim(0, e), leaf)[0] if isinstance(e, tuple) else _render(e, leaf)[0]


def guard_function(guards, n_inputs):
    """``check(*sizes) -> bool``: whether every guard gives its recorded
    answer at the inputs' sizes (``sizes_of``: shapes, an int input's value)."""
    def leaf(k, axis):
        return f"s{k}" if axis is None else f"s{k}[{axis}]"
    terms = sorted(f"({_render_expr(a, leaf)} {op} {_render_expr(b, leaf)}) is {result}"
                   for a, op, b, result in guards)
    if not terms:
        return lambda *shapes: True
    args = ", ".join(f"s{k}" for k in range(n_inputs))
    test = eval(compile(f"lambda {args}: " + " and ".join(terms), "<wengert-guards>", "eval"), {})

    def check(*shapes):
        try:
            return test(*shapes)
        except ArithmeticError:     # a guard divides by a length that is 0 here
            return False
    return check
