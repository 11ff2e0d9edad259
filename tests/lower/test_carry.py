"""Lowering step 1b (``wengert/lower/carry.py``): loop-carried elements held
in scalars, dead stores of zeros dropped, two additions to one element merged.

* a generated family of loop Programs (offsets ``a, b``, steps +1 and -1,
  a store of zeros or none, a second reader of the array, an alias of it,
  a 2-D array, trip counts known or not, 0 included, and what reads the
  array after the loop): the lowered Program against the Program, in the
  interpreter, bit for bit; the generated code with the step against the
  code without it (``lower(loops=False)``), Python and numba; and whether the
  carry was promoted, and the store dropped, exactly where the proof holds;
* gradients of user loops whose reverse sweeps carry an element (prefix
  products at several offsets, a stencil's two additions to one element):
  against finite differences and against the code without the step, both
  backends, and the promotion seen in the generated text.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.core.atoms import Aval
from wengert.lower import lower
from wengert.backends.python.codegen import CodeWriter, generate_source
from wengert.core.ir import Program, sub_programs
from wengert.control.for_loop import for_loop
from wengert.control.params import ForParams
from wengert.control.stage import stage_loop
from wengert.primitives.index import getitem
from wengert.primitives.scatter import index_add, index_set
from wengert.primitives.shape import reshape
from wengert.core.staging import stage
from wengert.core.trace import eval_program
from wengert.transforms.simplify import simplify

from checks import eqns_named, fd_jvp

I64 = Aval((), np.int64)


class Unpromoted(CodeWriter):
    LOWERING = {**CodeWriter.LOWERING, "loops": False}


# --- a family of loops ----------------------------------------------------------
class Case:
    """One loop: ``for k`` (up, or down: ``step``) over ``n`` steps of ``r =
    A[k + a]; (A[k + a] = 0.0); A[k + b] += r * w[k]`` (plus a second
    reader ``A[k + b]`` or an alias of ``A`` read, if asked); ``after``:
    what reads ``A`` after the loop ("sum": all of it; "low": ``A[p]`` for
    ``p < a``; "high": ``A[a]``); ``dynamic``: the trip count an input."""

    def __init__(self, a, b, step, store, n, dynamic, after, extra=None, two_d=False):
        self.a, self.b, self.step, self.store, self.n = a, b, step, store, n
        self.dynamic, self.after, self.extra, self.two_d = dynamic, after, extra, two_d
        self.length = max(n + max(a, b) + 1, 3)

    def __repr__(self):
        return (f"a{self.a}-b{self.b}-s{self.step:+d}-{'store' if self.store else 'nostore'}"
                f"-n{self.n}{'dyn' if self.dynamic else ''}-{self.after}"
                + (f"-{self.extra}" if self.extra else "") + ("-2d" if self.two_d else ""))

    @property
    def promotable(self):
        return (self.extra is None and not self.two_d and self.b == self.a + self.step
                and (self.step < 0 or not self.dynamic) and (self.dynamic or self.n > 0))

    @property
    def dead(self):
        return self.promotable and self.after == "low" and self.a > 0

    def _at(self, pos):
        return (pos, 1) if self.two_d else (pos,)

    def program(self):
        shape = (self.length, 3) if self.two_d else (self.length,)
        arr, vec = Aval(shape, np.float64), Aval((self.length,), np.float64)
        case = self

        def body(k, w, A):
            pa, pb = k + case.a if case.a else k, k + case.b if case.b else k
            r = getitem(A, case._at(pa))
            A1 = index_set(A, 0.0, case._at(pa)) if case.store else A
            v = r * getitem(w, (k,))
            if case.extra == "second":
                v = v + getitem(A, case._at(pb))
            elif case.extra == "alias":
                v = v + getitem(reshape(A, (int(np.prod(shape)),)), (pa,))
            return [index_add(A1, v, case._at(pb))]

        loop_body, _ = stage_loop(body, ForParams, lead=[I64], consts=[vec], carry=[arr],
                                  name="body")

        def outer(w, A0, m):
            n = m if case.dynamic else case.n
            (A,) = for_loop(n, loop_body, [w], [A0 * 1.0], reverse=case.step < 0)
            if case.after == "sum":
                return [A * 2.0]
            if case.after == "low":
                return [getitem(A, case._at(0)) * 3.0]
            return [getitem(A, case._at(case.a))]

        return stage(outer, [vec, arr, I64], name="loop")

    def args(self, rng):
        shape = (self.length, 3) if self.two_d else (self.length,)
        return [rng.standard_normal(self.length), rng.standard_normal(shape), self.n]


def _cases():
    found = []
    for a, b, step, store in itertools.product((0, 1, 2), (0, 1, 2, 3), (1, -1), (True, False)):
        for n, dynamic in ((4, False), (4, True), (0, True)):
            found.append(Case(a, b, step, store, n, dynamic, ("low", "sum", "high")[(a + b + n) % 3]))
    for after in ("low", "sum", "high"):
        found.append(Case(1, 0, -1, True, 5, True, after))
        found.append(Case(2, 3, 1, True, 5, False, after))
    for extra in ("second", "alias"):
        found += [Case(1, 0, -1, True, 5, True, "low", extra),
                  Case(1, 2, 1, False, 5, False, "low", extra)]
    found += [Case(1, 0, -1, True, 5, True, "low", two_d=True),
              Case(0, 1, 1, False, 5, False, "sum", two_d=True)]
    return found


CASES = _cases()


def _loops(prog):
    return eqns_named(prog, "for_loop")


def _stores(prog):
    return sum(1 for e in prog.eqns if e.prim.name == "index_set") + sum(
        _stores(s) for e in prog.eqns for s in sub_programs(e))


def _run_source(prog, args, writer, jit=False):
    src, ns, fname, passed = generate_source(lower(prog, **writer.LOWERING), None, writer=writer)
    assert not passed
    ns = dict(ns)
    exec(compile(src, "<test>", "exec"), ns)
    fn = ns[fname]
    if jit:
        import numba
        fn = numba.njit(fn, boundscheck=True)
    return src, fn(*[np.array(a, copy=True) if np.ndim(a) else a for a in args])


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_lowered_loop_equals_the_program(case):
    """The lowered Program computes the Program's values bit for bit (the
    promotion is exact: ``c`` starts at -0.0), and promotes the carry (one
    scalar carry more) and drops the store exactly where the proof holds."""
    prog = case.program()
    low = lower(prog).program
    (before,), (after,) = list(_loops(prog)), list(_loops(low))
    grew = ForParams.of(after.params).num_carry - ForParams.of(before.params).num_carry
    assert grew == (1 if case.promotable else 0), str(low)
    # a dead store is dropped; without a store, a live one is added (``A[k + a] = r``)
    dropped = case.promotable and case.store and case.dead
    added = case.promotable and not case.store and not case.dead
    assert _stores(low) == _stores(prog) - dropped + added, str(low)
    args = case.args(np.random.default_rng(case.length))
    want = eval_program(prog, args)
    got = eval_program(low, args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    _, code = _run_source(prog, args, CodeWriter)
    _, plain = _run_source(prog, args, Unpromoted)
    for g, p, w in zip(code, plain, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(p, w)


@pytest.mark.parametrize("a,step,after", list(itertools.product(
    (0, 1, 2), (1, -1), ("none", "low", "sum", "high"))))
def test_stores_nothing_reads_again_are_dropped(a, step, after):
    """A carry a step only reads and stores 0.0 into at ``k + a``
    (``r = A[k + a]; A[k + a] = 0.0; s += r * w[k]``): its stores are
    dropped exactly where nothing after the loop reads a position they
    wrote ("none": the array unread; "low": ``A[0]`` below ``a``), and the
    values are the Program's bit for bit, in the code as well."""
    length = 8
    vec = Aval((length,), np.float64)

    def body(k, w, A, s):
        pa = k + a if a else k
        r = getitem(A, (pa,))
        return [index_set(A, 0.0, (pa,)), s + r * getitem(w, (k,))]

    loop_body, _ = stage_loop(body, ForParams, lead=[I64], consts=[vec],
                              carry=[vec, Aval((), np.float64)], name="body")

    def outer(w, A0):
        A, s = for_loop(5, loop_body, [w], [A0 * 1.0, 0.0], reverse=step < 0)
        if after == "none":
            return [s]
        if after == "low":
            return [s + getitem(A, (0,))]
        if after == "sum":
            return [s * A]
        return [s + getitem(A, (a,))]

    prog = stage(outer, [vec, vec], name="loop")
    low = lower(prog).program
    dead = after == "none" or (after == "low" and a > 0)
    assert _stores(low) == _stores(prog) - dead, str(low)
    rng = np.random.default_rng(a)
    args = [rng.standard_normal(length), rng.standard_normal(length)]
    want = eval_program(prog, args)
    for got in (eval_program(low, args), _run_source(prog, args, CodeWriter)[1]):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_a_loop_of_no_steps_touches_no_element():
    """n = 0 and an array too short for the write-back's position: the
    promoted loop writes nothing back (the original touched nothing)."""
    case = Case(3, 2, -1, True, 0, True, "sum")
    case.length = 2
    prog = case.program()
    args = case.args(np.random.default_rng(0))
    want = eval_program(prog, args)
    src, got = _run_source(prog, args, CodeWriter)
    assert "-0.0" in src
    np.testing.assert_array_equal(got[0], want[0])


def test_a_position_out_of_bounds_still_raises():
    """The last step's addition reaches the array in the write-back: out of
    bounds, it raises as the original did."""
    case = Case(1, 0, -1, True, 4, True, "sum")
    prog = case.program()
    args = case.args(np.random.default_rng(0))
    args[2] = case.length          # k + a reaches the length at the first step
    with pytest.raises(IndexError):
        eval_program(prog, args)
    with pytest.raises(IndexError):
        eval_program(lower(prog).program, args)
    with pytest.raises(IndexError):
        _run_source(prog, args, CodeWriter)


@pytest.mark.numba
@pytest.mark.parametrize("case", [c for c in CASES if c.promotable][::3]
                         + [c for c in CASES if c.extra or c.two_d][:2], ids=repr)
def test_numba_code_with_and_without_the_step(case):
    pytest.importorskip("numba")
    prog = case.program()
    args = case.args(np.random.default_rng(case.length))
    want = eval_program(prog, args)
    from wengert.backends.numba.codegen import NumbaWriter

    class NumbaUnpromoted(NumbaWriter):
        LOWERING = {**NumbaWriter.LOWERING, "loops": False}

    _, got = _run_source(prog, args, NumbaWriter, jit=True)
    _, plain = _run_source(prog, args, NumbaUnpromoted, jit=True)
    for g, p, w in zip(got, plain, want):
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
        np.testing.assert_allclose(p, w, rtol=1e-15, atol=0)


# --- gradients of user loops ---------------------------------------------------------
def make_shifted_products(p, q, lo, before):
    """``out[i + p] = out[i + q] * x[i]`` for i in range(lo, n - 2): its
    reverse sweep reads ``ct_out[k + lo + p]``, stores 0.0 there and adds
    to ``ct_out[k + lo + q]`` (promotable iff q = p - 1). ``before``: how
    ``out`` starts, which is what reads ``ct_out`` after the reverse loop
    ("sets": ``out[0]``, ``out[1]``; "dense": a slice of it)."""
    def shifted(x):
        n = len(x)
        out = np.zeros(n + 2)
        if before == "sets":
            out[0] = x[0]
            out[1] = x[1] * 0.5
        else:
            out[:n] = x * 0.5
        for i in range(lo, n - 2):
            out[i + p] = out[i + q] * x[i] + 0.25
        return np.sum(out * out)
    return shifted


SHIFTS = [(1, 0, 0, "sets"), (1, 0, 1, "sets"), (2, 1, 0, "sets"), (2, 1, 1, "dense"),
          (1, 0, 1, "dense"), (2, 0, 0, "sets"), (1, 1, 0, "sets"), (0, 1, 1, "sets"),
          (3, 1, 0, "sets"), (3, 2, 0, "dense")]


def _program_of(fn, args, argnums=0):
    api_codes.clear()
    g = wg.grad(fn, argnums=argnums, engine="source")
    got = g(*args)
    return g, got, simplify(g.last.program, copies=True)


def _check_grad(fn, args, got):
    rng = np.random.default_rng(1)
    t = rng.standard_normal(np.shape(args[0]))
    d = fd_jvp(lambda v: fn(v, *args[1:]), (args[0],), (t,))
    assert np.isclose(np.sum(np.asarray(got) * t), d, rtol=1e-6, atol=1e-8)


def _first_loop(text):
    """The code before the reverse sweep's first loop ends (its ``for`` and its body): the
    write-back after it is not part of it."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("    for "))
    end = next((k for k in range(start + 1, len(lines))
                if lines[k].strip() and not lines[k].startswith("        ")), len(lines))
    return "\n".join(lines[:end])


@pytest.mark.parametrize("shift", SHIFTS, ids=lambda s: "p%d-q%d-lo%d-%s" % s)
def test_prefix_family_gradients(shift):
    p, q, lo, before = shift
    fn = make_shifted_products(p, q, lo, before)
    x = 1 + np.random.default_rng(p + 3 * q).uniform(-0.3, 0.3, 9)
    g, got, prog = _program_of(fn, (x,))
    _check_grad(fn, (x,), got)
    src, code = _run_source(prog, [x], CodeWriter)
    _, plain = _run_source(prog, [x], Unpromoted)
    np.testing.assert_array_equal(code[0], got)
    np.testing.assert_allclose(plain[0], got, rtol=1e-14, atol=0)
    reverse = src.split("# reverse sweep")[1]
    assert ("-0.0" in reverse) == (q == p - 1), reverse
    loop = _first_loop(reverse)
    # the stores of 0.0 are dead where after the loop only ct_out[0] and
    # ct_out[1] are read, below every position the loop read (lo + p)
    dead = q == p - 1 and before == "sets" and lo + p >= 2
    assert ("] = 0.0" not in loop) == dead, loop


def make_stencil():
    def stencil(u):
        v = u * 1.0
        for i in range(1, len(u) - 1):
            v[i] = u[i] + 0.2 * (u[i - 1] - 2.0 * u[i] + u[i + 1]) + u[i] * 0.5
        return np.sum(v * v)
    return stencil


def test_two_additions_to_one_element_are_merged():
    fn = make_stencil()
    u = np.random.default_rng(3).standard_normal(12)
    g, got, prog = _program_of(fn, (u,))
    _check_grad(fn, (u,), got)
    src, code = _run_source(prog, [u], CodeWriter)
    _, plain = _run_source(prog, [u], Unpromoted)
    np.testing.assert_allclose(code[0], got, rtol=1e-14)
    np.testing.assert_allclose(plain[0], got, rtol=1e-14)
    loop = src.split("# reverse sweep")[1]
    loop_plain = generate_source(lower(prog, **Unpromoted.LOWERING), None,
                                 writer=Unpromoted)[0].split("# reverse sweep")[1]
    adds = [line.split("]")[0].strip() for line in loop.splitlines() if "] +=" in line
            or ("] = " in line and ".item(" in line)]
    adds_plain = [line.split("]")[0].strip() for line in loop_plain.splitlines()
                  if "] +=" in line or ("] = " in line and ".item(" in line)]
    assert len(adds) == len(set(adds)), loop
    assert len(adds_plain) > len(set(adds_plain)), loop_plain


@pytest.mark.numba
@pytest.mark.parametrize("shift", SHIFTS[:4], ids=lambda s: "p%d-q%d-lo%d-%s" % s)
def test_prefix_family_gradients_numba(shift):
    pytest.importorskip("numba")
    p, q, lo, before = shift
    fn = make_shifted_products(p, q, lo, before)
    x = 1 + np.random.default_rng(p + 3 * q).uniform(-0.3, 0.3, 9)
    g = wg.grad(fn, engine="source", backend="numba", fallback=False)
    got = g(x)
    _check_grad(fn, (x,), got)
    want = wg.grad(fn, engine="source")(x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert ("-0.0" in g.source.split("# reverse sweep")[1]) == (q == p - 1), g.source
