"""The transforms a row with sub-Programs applies to its bodies.

A loop's jvp is the loop of its body's jvp; its linearize splits the body into a known and a
linear part; its transpose runs the transposed body backwards; a checkpoint's reverse sweep
runs its body's vjp. So the rules of the rows in ``control`` call the transforms on their
sub-Programs. The rows sit below the transforms (``transforms`` walks them through the table,
asking each row for its rule), so they reach the transforms through this interface, which
``transforms`` gives once, when it is imported (``provide``; importing ``wengert`` imports it
before any rule can run). This is dependency inversion: the interface is declared here with
its contract, the implementations are the transforms' own functions, and
``tests/core/test_subprograms.py`` checks that each entry is the transform it names.

* ``jvp_program(prog, mask=None) -> Program``: (primals..., tangents...) -> (outputs...,
  output tangents...); ``mask[k]`` False: input k has no tangent input;
* ``linearize_program(prog, mask) -> (known, lin, nres)``: the primal work with its
  ``nres`` residuals, and the linear Program reading them;
* ``transpose_program(prog, mask=None) -> Program``: output cotangents in, cotangents of the
  linear inputs (``mask``) out;
* ``batch_eval(prog, args, size, batched=None) -> list``: ``prog`` on operands carrying a
  leading batch axis;
* ``batch_program(prog, flags, size, force=None) -> (Program, out_flags)``: ``prog``'s
  batched version, its inputs marked by ``flags`` carrying a leading batch axis of length
  ``size``, its outputs batched where ``out_flags`` says (those ``force`` marks always);
* ``batch_flat(fn, vals, flags, size) -> (outs, out_flags)``: a function of a flat list of
  values run on a batch (the custom rules' functions, batched);
* ``jvp_flat(fn, primals, tangents, for_grad=False) -> (outs, out_tangents)`` and
  ``vjp_flat(fn, primals, mask=None) -> (outs, lin, pullback)``: the same of a function of a
  flat list of values.

Layer: core.
"""
from __future__ import annotations

__all__ = ["provide", "jvp_program", "linearize_program", "transpose_program", "batch_eval",
           "batch_program", "batch_flat", "jvp_flat", "vjp_flat", "NAMES"]

NAMES = ("jvp_program", "linearize_program", "transpose_program", "batch_eval",
         "batch_program", "batch_flat", "jvp_flat", "vjp_flat")
_GIVEN: dict = {}


def provide(**transforms):
    """Give the interface its implementations: every name of ``NAMES``, once."""
    if _GIVEN:
        raise RuntimeError("the sub-Program transforms are provided once")
    if set(transforms) != set(NAMES):
        raise TypeError(f"provide takes exactly {', '.join(NAMES)}")
    _GIVEN.update(transforms)


def given(name):
    """The implementation ``provide`` gave for ``name``."""
    return _GIVEN[name]


def jvp_program(prog, mask=None):
    return _GIVEN["jvp_program"](prog, mask)


def linearize_program(prog, mask):
    return _GIVEN["linearize_program"](prog, mask)


def transpose_program(prog, mask=None):
    return _GIVEN["transpose_program"](prog, mask)


def batch_eval(prog, args, size, batched=None):
    return _GIVEN["batch_eval"](prog, args, size, batched)


def batch_program(prog, flags, size, force=None):
    return _GIVEN["batch_program"](prog, flags, size, force)


def batch_flat(fn, vals, flags, size):
    return _GIVEN["batch_flat"](fn, vals, flags, size)


def jvp_flat(fn, primals, tangents, for_grad=False):
    return _GIVEN["jvp_flat"](fn, primals, tangents, for_grad)


def vjp_flat(fn, primals, mask=None):
    return _GIVEN["vjp_flat"](fn, primals, mask)
