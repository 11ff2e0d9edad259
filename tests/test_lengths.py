"""Symbolic lengths in the generated code (``pyemit.Emitter.dim``): each
input length is read once, at the function's entry (``x_shape0 =
x.shape[0]``), a sum of multiples of lengths is named there too, in its
simplest form (``3 * n - 2 * n`` is ``n``), and a loop reads the names
rather than doing the attribute lookups and arithmetic at every step. A
length with a division stays where it is used, over the named lengths.

For programs whose lengths take each form: the text (each ``.shape[k]``
read once, none inside a loop), one code for several lengths, and the
gradients against the trace engine and finite differences at each length.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg

from checks import check_two_argument_grad


def offsets(x, w):
    """``n - 1`` and ``n - 2``: a loop over neighbours."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + np.sin(x[i + 1] - x[i]) * w[i]
    return s + np.sum(x[:-2] * w[2:])


def multiples(x, w):
    """``2 * n``, ``3 * n - 2 * n``: slices of a concatenation."""
    n = x.shape[0]
    total = 0.0
    for k in range(3):
        y = np.concatenate([x, w * k, x * w])
        total = total + np.sum(np.tanh(y[2 * n:3 * n]) * y[0:n]) + np.sum(y[n:2 * n] ** 2)
    return total


def two_inputs(x, w):
    """``n + m`` over two arrays' lengths, and a division (``n // 2``)."""
    z = np.concatenate([x, w[: x.shape[0] // 2]])
    s = 0.0
    for i in range(z.shape[0]):
        s = s + z[i] * z[i - 1]
    return s


PROGRAMS = [offsets, multiples, two_inputs]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_lengths_are_read_once_at_entry(fn):
    g = wg.grad(fn, argnums=(0, 1), engine="source")
    check_two_argument_grad(fn, g, (4, 6, 9), 0)
    src = g.source
    reads = re.findall(r"\w+\.shape\[\d+\]", src)
    assert reads and len(reads) == len(set(reads)), src        # each length read once
    body = src.split("\n")
    for line in body:
        if ".shape[" in line:
            # at the function's entry: one level of indentation, a name given
            assert re.fullmatch(r"    (\w+) = \w+\.shape\[\d+\]", line), (line, src)
    assert " 3 * " not in src or "- 2 *" not in src, src        # 3n - 2n is n
    assert g.generations == 1, src                               # one code for every n


def test_a_length_with_a_division_stays_where_it_is_used():
    g = wg.grad(two_inputs, argnums=(0, 1), engine="source")
    x = np.arange(6.0)
    g(x, x + 1.0)
    assert "x_shape0 // 2" in g.source, g.source
    lines = g.source.split("\n")
    start = next(k for k, line in enumerate(lines) if line.startswith("def ")) + 1
    end = next(k for k in range(start, len(lines)) if lines[k].lstrip().startswith("#"))
    prologue = lines[start:end]
    assert prologue and all("//" not in line for line in prologue), g.source
