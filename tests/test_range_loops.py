"""Loops over ``range(start, stop, step)``: the source engine's derivative
carries no index arithmetic that cancels.

The source frontend runs ``for i in range(start, stop, step)`` as a loop
over a counter ``k`` with ``i = start + k * step``; the user's ``x[i - 1]``
then reads ``(1 + k) - 1``. ``simplify`` (for generated code) composes int
offsets by literals (``Algebra.offset``): ``(1 + k) - 1`` is ``k``, ``(1 +
k) + 1`` is ``k + 2``. Checked here for the whole family (positive,
negative and odd starts and steps, empty ranges, nested loops, a loop that
writes in place):

* the derivative's Program (simplified as the code generator sees it)
  holds no int offset of an int offset;
* gradients against finite differences, and the source engine against the
  trace engine where the program has no in-place write (which the trace
  engine does not accept) and against the same mathematics written with
  lists where it has.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.core.ir import Lit, sub_programs
from wengert.transforms.simplify import simplify

from checks import assert_close, fd_jvp

N = 11

# (start, stop - n, step): stop is n plus the second number, so the ranges
# scale with the array; the index i reads x[i], x[i - 1] and x[-i - 1]
# (NumPy's negative indices wrap, the same in every engine)
RANGES = {
    "from_1": (1, 0, 1),
    "from_2_to_n_minus_1": (2, -1, 1),
    "odd_step_3": (1, 0, 3),
    "step_2_from_0": (0, 0, 2),
    "negative_start": (-4, -2, 1),
    "negative_start_odd_step": (-9, -1, 3),
    "backwards": (N - 1, -N, -1),           # range(n - 1, 0, -1)
    "backwards_by_2": (N - 2, -N - 1, -2),  # range(n - 2, -1, -2)
    "empty": (5, -N + 2, 1),                # range(5, 2)
    "empty_backwards": (1, -N + 4, -1),     # range(1, 4, -1)
}


def _range(x, spec):
    start, stop, step = spec
    return range(start, len(x) + stop, step)


def make_scan(spec):
    """A scalar carry through the range: no in-place write."""
    def scan(x):
        s = 0.5
        for i in _range(x, spec):
            s = s * x[i - 1] + np.sin(x[i]) * x[-i - 1]
        return s
    return scan


def make_prefix(spec):
    """Products written in place, ``out[i] = out[i - 1] * x[i] + ...``."""
    def prefix(x):
        out = x * 1.0
        for i in _range(x, spec):
            out[i] = out[i - 1] * x[i] + 0.25 * out[-i - 1]
        return np.sum(out * out)
    return prefix


def make_prefix_list(spec):
    """``make_prefix``'s mathematics without in-place writes: each write is a
    new array (what the trace engine accepts)."""
    def prefix_list(x):
        out = x * 1.0
        n = len(x)
        for i in _range(x, spec):
            v = out[i - 1] * x[i] + 0.25 * out[-i - 1]
            j = i % n
            out = np.concatenate([out[:j], np.stack([v]), out[j + 1:]])
        return np.sum(out * out)
    return prefix_list


def make_nested(spec):
    """Two loops over offset ranges, the inner writing a row in place."""
    def nested(x):
        m = N
        u = np.reshape(x, (m, m)) * 1.0
        for i in range(1, m - 1):
            for j in _range(np.zeros(m), spec):
                u[i, j] = u[i - 1, j] * u[i + 1, j - 1] + np.cos(u[i, -j - 1])
        return np.sum(u ** 2)
    return nested


def _args(size=N):
    rng = np.random.default_rng(3)
    return (0.5 + 0.5 * rng.uniform(size=size),)


def _check_fd(f, g, args):
    rng = np.random.default_rng(7)
    t = rng.standard_normal(np.shape(args[0]))
    d = fd_jvp(f, args, (t,))
    assert np.isclose(np.sum(np.asarray(g) * t), d, rtol=1e-6, atol=1e-9), (np.sum(g * t), d)


def _offset_of_offset(prog):
    """The int equations ``k + c`` / ``k - c`` whose ``k`` is itself such an
    offset in the same (sub-)program: what ``simplify`` composes."""
    found, offsets = [], set()
    for e in prog.eqns:
        if e.prim.name in ("add", "sub") and e.outputs[0].aval.dtype.kind == "i" \
                and any(type(x) is Lit and type(x.val) is int for x in e.inputs):
            if any(not isinstance(x, Lit) and x in offsets for x in e.inputs):
                found.append(str(e))
            offsets.add(e.outputs[0])
        for sub in sub_programs(e):
            found += _offset_of_offset(sub)
    return found


MAKERS = {"scan": make_scan, "prefix": make_prefix, "nested": make_nested}


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
@pytest.mark.parametrize("kind", list(MAKERS))
def test_no_index_arithmetic_that_cancels(kind, spec):
    api_codes.clear()
    g = wg.grad(MAKERS[kind](spec), engine="source")
    g(*_args(N * N if kind == "nested" else N))
    prog = simplify(g.last.program, copies=True)
    assert not _offset_of_offset(prog), str(prog)


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
def test_scan_gradients(spec):
    args = _args()
    f = make_scan(spec)
    got = wg.grad(f, engine="source")(*args)
    want = wg.grad(f, engine="trace")(*args)
    assert_close(got, want, rtol=1e-11)
    _check_fd(f, got, args)


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
def test_prefix_gradients(spec):
    args = _args()
    f = make_prefix(spec)
    got = wg.grad(f, engine="source")(*args)
    want = wg.grad(make_prefix_list(spec), engine="trace")(*args)
    assert_close(got, want, rtol=1e-11)
    _check_fd(f, got, args)


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
def test_nested_gradients(spec):
    args = _args(N * N)
    f = make_nested(spec)
    got = wg.grad(f, engine="source")(*args)
    _check_fd(f, got, args)
    # forward mode against reverse: the jvp along t is <grad, t>
    t = np.random.default_rng(5).standard_normal(args[0].shape)
    _, tangent = wg.jvp(f, args, (t,), engine="source")
    assert np.isclose(tangent, np.sum(got * t), rtol=1e-11, atol=1e-12)


def _round_trips(source):
    """Pairs of plain copies ``a = b`` ... ``b = a`` in generated code (an
    in-place update's result named apart from its dead target, then handed
    back to the target's name as a loop carry)."""
    copies = set()
    for line in source.splitlines():
        parts = [p.strip() for p in line.split(" = ")]
        if len(parts) == 2 and all(p.isidentifier() for p in parts):
            copies.add(tuple(parts))
    return sorted((a, b) for a, b in copies if (b, a) in copies)


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
@pytest.mark.parametrize("kind", ["prefix", "nested"])
def test_updates_in_place_keep_their_target_name(kind, spec):
    """``ct_out[i] += v`` in a loop: the result is ``ct_out`` again, not
    ``ct_out_1 = ct_out`` and ``ct_out = ct_out_1`` in every step."""
    api_codes.clear()
    g = wg.grad(MAKERS[kind](spec), engine="source")
    g(*_args(N * N if kind == "nested" else N))
    assert not _round_trips(g.source), g.source


@pytest.mark.parametrize("spec", list(RANGES.values()), ids=list(RANGES))
def test_the_loop_variable_keeps_its_name(spec):
    """``for i in range(start, stop, step)``: the index ``start + k * step``
    is ``i`` in the Program and in the generated code (the counter ``k`` has
    no name of the user's)."""
    f = make_scan(spec)
    prog = wg.make_program(f, *_args(), engine="source")
    text = str(prog)
    assert any(line.strip().startswith("i = ") for line in text.splitlines()), text
    api_codes.clear()
    g = wg.grad(f, engine="source")
    g(*_args())
    assert any(line.strip().startswith("i = ") for line in g.source.splitlines()), g.source


@pytest.mark.parametrize("dtype, step", [(np.int32, 2 ** 30), (np.int64, 2 ** 62),
                                         (np.int32, -2 ** 30), (np.int8, 100)])
def test_offsets_that_overflow_the_dtype_are_not_composed(dtype, step):
    # (m + c) + c wraps in the dtype; k + 2c as one literal would not fit it
    # (NumPy raises OverflowError): the composed offset must fit, or stay apart
    from wengert.backends.interpret import interpret
    from wengert.api.backend import python_function

    def f(n, x):
        m = n[0] + step
        m = m + step
        return x[m % 3]
    args = (np.array([1], dtype), np.arange(3.0))
    prog = wg.make_program(f, *args, engine="source")
    want = interpret(prog, *args)
    got = python_function(simplify(prog, copies=True))(*args)
    assert_close(got, want, 0.0)
