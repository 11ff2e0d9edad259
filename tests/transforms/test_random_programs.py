"""The transforms (``wengert/transforms/``) on random straight-line programs
drawn from the primitive table.

A program starts from three inputs, ``a`` (2, 3), ``b`` (3,) and ``c`` (),
and applies one to six operations, each to earlier values: smooth unary
functions (bounded, so any input is in their domain), binary arithmetic with
broadcasting, reductions, reshapes and transposes, indexing (ints, slices,
integer arrays, masks), concatenation and dot products. A magnitude bound is
tracked per value, and operations that could overflow it are not drawn, so
finite differences stay meaningful.

Each program is checked with ``wengert.testing.check_grads`` (order 1 or 2,
both modes), jacfwd against jacrev, and ``verify`` on its staged jvp/vjp.
Deterministic: ``derandomize=True`` and seeded inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import wengert as wg
from wengert.core.ir import aval_of, verify
from wengert.core.pytree import flatten
from wengert.testing import check_grads
from wengert.transforms.jvp import jvp_program
from wengert.transforms.vjp import vjp_program

from checks import assert_close, jacobian_matrix, rtol

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)

INPUT_SHAPES = ((2, 3), (3,), ())
MAX_BOUND = 8.0      # largest magnitude an intermediate value may reach


# --- the operations ------------------------------------------------------------
def _rational(x):
    return x / (1.0 + x * x)


def _exp_tanh(x):
    return np.exp(np.tanh(x))


def _log1p_sq(x):
    return np.log1p(x * x)


def _sqrt_1p_sq(x):
    return np.sqrt(1.0 + x * x)


def _half(x):
    return 0.5 * x


def _neg(x):
    return -x


# name: (function, bound of the output given the operand's bound)
UNARY = {
    "sin": (np.sin, lambda b: 1.0),
    "cos": (np.cos, lambda b: 1.0),
    "tanh": (np.tanh, lambda b: 1.0),
    "arctan": (np.arctan, lambda b: math.pi / 2),
    "exp_tanh": (_exp_tanh, lambda b: math.e),
    "rational": (_rational, lambda b: 0.5),
    "log1p_sq": (_log1p_sq, lambda b: math.log1p(b * b)),
    "sqrt_1p_sq": (_sqrt_1p_sq, lambda b: math.sqrt(1.0 + b * b)),
    "half": (_half, lambda b: b / 2),
    "neg": (_neg, lambda b: b),
}


def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _mul(x, y):
    return x * y


def _div_safe(x, y):
    return x / (1.0 + y * y)


BINARY = {
    "add": (_add, lambda bx, by: bx + by),
    "sub": (_sub, lambda bx, by: bx + by),
    "mul": (_mul, lambda bx, by: bx * by),
    "div_safe": (_div_safe, lambda bx, by: bx),
}


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _every_other(n):
    return np.arange(n) % 2 == 0


# name: (applicable(shape), function(x), out shape, out bound)
RESHAPING = {
    "sum_all": (lambda s: True, lambda x: np.sum(x), lambda s: (), lambda s, b: b * _size(s)),
    "mean_axis0": (lambda s: len(s) >= 1, lambda x: np.mean(x, axis=0), lambda s: s[1:],
                   lambda s, b: b),
    "sum_last_keepdims": (lambda s: len(s) >= 1, lambda x: x.sum(axis=-1, keepdims=True),
                          lambda s: s[:-1] + (1,), lambda s, b: b * s[-1]),
    "max_axis0": (lambda s: len(s) >= 1, lambda x: np.max(x, axis=0), lambda s: s[1:],
                  lambda s, b: b),
    "T": (lambda s: len(s) == 2, lambda x: x.T, lambda s: s[::-1], lambda s, b: b),
    "ravel": (lambda s: len(s) >= 2, lambda x: x.reshape(-1), lambda s: (_size(s),),
              lambda s, b: b),
    "reshape_3x2": (lambda s: _size(s) == 6 and s != (3, 2), lambda x: np.reshape(x, (3, 2)),
                    lambda s: (3, 2), lambda s, b: b),
    "expand": (lambda s: len(s) == 1, lambda x: x[:, None], lambda s: s + (1,), lambda s, b: b),
    "reverse": (lambda s: len(s) >= 1, lambda x: x[::-1], lambda s: s, lambda s, b: b),
    "first": (lambda s: len(s) >= 1, lambda x: x[0], lambda s: s[1:], lambda s, b: b),
    "gather": (lambda s: len(s) >= 1 and s[0] >= 2,
               lambda x: x[np.array([0, x.shape[0] - 1, 0])], lambda s: (3,) + s[1:],
               lambda s, b: b),
    "tail": (lambda s: len(s) >= 1 and s[-1] >= 2, lambda x: x[..., 1:],
             lambda s: s[:-1] + (s[-1] - 1,), lambda s, b: b),
    "mask": (lambda s: len(s) >= 1, lambda x: x[_every_other(x.shape[0])],
             lambda s: ((s[0] + 1) // 2,) + s[1:], lambda s, b: b),
}


def _concat(x, y):
    return np.concatenate([x, y], axis=0)


def np_dot(x, y):
    return np.dot(x, y)


# --- drawing programs --------------------------------------------------------------
@dataclass(frozen=True)
class RandomProgram:
    steps: tuple          # (op name, operand indices)
    seed: int
    order: int
    dtype: type

    def __call__(self, *inputs):
        vals = list(inputs)
        for op, idx in self.steps:
            vals.append(apply(op, [vals[i] for i in idx]))
        return vals[-1]

    def inputs(self):
        rng = np.random.default_rng(self.seed)
        return tuple(np.asarray(rng.uniform(-1.0, 1.0, s), self.dtype) for s in INPUT_SHAPES)

    def __repr__(self):
        body = "; ".join(f"v{k + 3} = {op}({', '.join(f'v{i}' for i in idx)})"
                         for k, (op, idx) in enumerate(self.steps))
        return f"RandomProgram({body}; seed={self.seed}, order={self.order}, {self.dtype.__name__})"


def apply(op, args):
    if op in UNARY:
        return UNARY[op][0](*args)
    if op in BINARY:
        return BINARY[op][0](*args)
    if op in RESHAPING:
        return RESHAPING[op][1](*args)
    return {"concat": _concat, "dot": np_dot}[op](*args)


def _broadcast(s1, s2):
    try:
        return tuple(np.broadcast_shapes(s1, s2))
    except ValueError:
        return None


KINDS = ("unary", "binary", "binary", "reshaping", "reshaping", "concat", "dot")


def _options(kind, op, shapes, bounds):
    """Every way to apply ``op`` with the newest value as its first operand
    (so the output depends on every step): (operands, out shape, out bound)."""
    last = len(shapes) - 1
    s, b = shapes[last], bounds[last]
    out = []
    if kind == "unary":
        out.append(((last,), s, UNARY[op][1](b)))
    elif kind == "binary":
        for j in range(len(shapes)):
            shape = _broadcast(s, shapes[j])
            bound = BINARY[op][1](b, bounds[j])
            if shape is not None and bound <= MAX_BOUND:
                out.append(((last, j), shape, bound))
    elif kind == "reshaping":
        ok, _, shape_rule, bound_rule = RESHAPING[op]
        if ok(s) and bound_rule(s, b) <= MAX_BOUND:
            out.append(((last,), shape_rule(s), bound_rule(s, b)))
    elif kind == "concat":
        for j in range(len(shapes)):
            if len(s) >= 1 and len(s) == len(shapes[j]) and s[1:] == shapes[j][1:]:
                out.append(((last, j), (s[0] + shapes[j][0],) + s[1:], max(b, bounds[j])))
    elif kind == "dot":
        for j in range(len(shapes)):
            sj = shapes[j]
            if len(s) == 2 and len(sj) == 1 and s[1] == sj[0]:
                bound = b * bounds[j] * s[1]
                if bound <= MAX_BOUND:
                    out.append(((last, j), s[:1], bound))
            elif len(s) == 1 and len(sj) == 2 and sj[0] == s[0]:   # vector @ matrix
                bound = b * bounds[j] * s[0]
                if bound <= MAX_BOUND:
                    out.append(((last, j), sj[1:], bound))
    return out


_OPS_OF = {"unary": sorted(UNARY), "binary": sorted(BINARY), "reshaping": sorted(RESHAPING),
           "concat": ["concat"], "dot": ["dot"]}


@st.composite
def programs(draw):
    """Each step draws two integers and uses them modulo the choices at hand
    (more varied than nested ``sampled_from``, which favours first entries)."""
    shapes = list(INPUT_SHAPES)
    bounds = [1.0] * len(shapes)
    # start from one input, so that every program is a chain from it
    first = draw(st.integers(0, len(shapes) - 1))
    shapes.append(shapes[first])
    bounds.append(bounds[first])
    steps = [("half", (first,))]
    for _ in range(draw(st.integers(1, 6))):
        r1, r2 = draw(st.integers(0, 2**20)), draw(st.integers(0, 2**20))
        kind = KINDS[r1 % len(KINDS)]
        ops = _OPS_OF[kind]
        op = ops[(r1 // len(KINDS)) % len(ops)]
        options = _options(kind, op, shapes, bounds)
        if not options:   # a unary function of the newest value always applies
            kind, op = "unary", sorted(UNARY)[r1 % len(UNARY)]
            options = _options(kind, op, shapes, bounds)
        idx, out_shape, bound = options[r2 % len(options)]
        steps.append((op, idx))
        shapes.append(tuple(out_shape))
        bounds.append(bound)
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32]))
    order = 1 if dtype is np.float32 else draw(st.sampled_from([1, 2]))
    return RandomProgram(tuple(steps), draw(st.integers(0, 2**16)), order, dtype)


def _avals(tree):
    return [aval_of(x) for x in flatten(tree)[0]]


# --- properties ---------------------------------------------------------------------
@SETTINGS
@given(programs())
def test_random_program_check_grads(prog):
    args = prog.inputs()
    out = prog(*args)
    assert np.all(np.isfinite(out))
    check_grads(prog, args, order=prog.order, modes=("fwd", "rev"), seed=prog.seed)


@SETTINGS
@given(programs())
def test_random_program_jacfwd_equals_jacrev(prog):
    args = prog.inputs()
    out = prog(*args)
    nums = (0, 1, 2)
    j_fwd = jacobian_matrix(wg.jacfwd(prog, nums)(*args), _avals(out), _avals(args))
    j_rev = jacobian_matrix(wg.jacrev(prog, nums)(*args), _avals(out), _avals(args))
    assert j_fwd.shape == (np.size(out), sum(np.size(a) for a in args))
    assert_close(j_fwd, j_rev, rtol("ad", args), what=f"jacfwd vs jacrev for {prog!r}")


@SETTINGS
@given(programs())
def test_random_program_staged_transforms_verify(prog):
    args = prog.inputs()
    staged = verify(wg.make_program(prog, *args))
    assert len(staged.eqns) >= 1
    jp = verify(jvp_program(staged))
    vp = verify(vjp_program(staged))
    assert len(jp.outputs) == 2 * len(staged.outputs)
    assert len(vp.outputs) == len(staged.outputs) + len(staged.inputs)
