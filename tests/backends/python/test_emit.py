"""Python text for one equation's pieces (``wengert/backends/python/emit.py``).

* Cheap spellings, for whole classes of rows, each checked in the text and
  in its values against the interpreter: array methods
  (``x.reshape(s)``, ``x.sum(axis=...)``), C calls, in place of NumPy's
  Python wrappers (``np.reshape``, ``np.sum``), and the wrapper kept where
  the operand may be a Python scalar, which has no methods; no
  ``broadcast_to`` where the operator that reads it broadcasts
  (``simplify(copies=True)``: the rows' ``algebra.expands`` and
  ``broadcasts``), and the broadcast kept where the other operand does not
  have the result's shape or dtype; gradients through both, against finite
  differences.
* Symbolic lengths (``Emitter.dim``): each input length is read once, at the
  function's entry (``x_shape0 = x.shape[0]``), a sum of multiples of
  lengths is named there too, in its simplest form (``3 * n - 2 * n`` is
  ``n``), and a loop reads the names rather than doing the attribute lookups
  and arithmetic at every step. A length with a division stays where it is
  used, over the named lengths. For programs whose lengths take each form:
  the text (each ``.shape[k]`` read once, none inside a loop), one code for
  several lengths, and the gradients against the trace engine and finite
  differences at each length.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.core.ir import Aval, Eqn, Program, Var
from wengert.primitives import PRIMITIVES
from wengert.transforms.simplify import simplify

from checks import (AD_VS_AD_RTOL_F64, PROGRAM_RTOL_F64, assert_close, check_two_argument_grad,
                    fd_jvp)


# --- cheap spellings --------------------------------------------------------------
F64, F32 = np.dtype("float64"), np.dtype("float32")


def _same(prog, args):
    """The generated code's values equal the interpreter's; its source."""
    want = interpret(prog, *args)
    gen = python_function(prog)
    got = gen(*args)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, \
            gen.source
        np.testing.assert_array_equal(g, w, err_msg=gen.source)
    return gen.source


# --- array methods ---------------------------------------------------------------------
# (row, params, operand shape, the method's name): every row spelled as a method
METHODS = [
    ("reshape", {"shape": (3, 2)}, (6,), "reshape"),
    ("reshape", {"shape": (2, 1, 3)}, (3, 2), "reshape"),
    ("reduce_sum", {"axes": (0,)}, (4, 3), "sum"),
    ("reduce_sum", {"axes": (0, 1)}, (4, 3), "sum"),
    ("reduce_max", {"axes": (1,)}, (4, 3), "max"),
    ("reduce_min", {"axes": (0,)}, (4, 3), "min"),
    ("reduce_prod", {"axes": (1,)}, (4, 3), "prod"),
    ("argmax", {"axis": 1}, (4, 3), "argmax"),
    ("argmin", {"axis": None}, (4, 3), "argmin"),
]


def _one(row, params, aval):
    x = Var(aval, "x")
    out_aval = PRIMITIVES[row].abstract_eval(aval, **params)
    v = Var(out_aval, "v")
    return Program([x], [Eqn(PRIMITIVES[row], [x], [v], params)], [v], name=row)


@pytest.mark.parametrize("row, params, shape, method", METHODS,
                         ids=[f"{m[0]}-{m[2]}" for m in METHODS])
def test_rows_are_spelled_as_array_methods(row, params, shape, method):
    x = np.random.default_rng(0).standard_normal(shape)
    src = _same(_one(row, params, Aval(shape, F64)), [x])
    assert f"x.{method}(" in src and f"np.{method}(" not in src, src


SCALAR_OPERAND = [("reshape", {"shape": (1,)}, "reshape"), ("reduce_sum", {"axes": ()}, "sum"),
                  ("reduce_max", {"axes": ()}, "max"), ("argmax", {"axis": None}, "argmax")]


@pytest.mark.parametrize("row, params, method", SCALAR_OPERAND, ids=[m[0] for m in SCALAR_OPERAND])
def test_a_python_scalar_keeps_the_numpy_call(row, params, method):
    """A Python float has no methods: an operand that may be one (a scalar
    input) is passed to the NumPy function."""
    src = _same(_one(row, params, Aval((), F64, weak=True)), [2.5])
    assert f"np.{method}(x" in src, src


# --- broadcasts folded into the operator -------------------------------------------------
BINARY = ["add", "sub", "mul", "div"]


def _broadcast_then(op, left, s_aval, y_aval, out_shape):
    """``b = broadcast_to(s, out_shape); v = op(b, y)`` (``op(y, b)`` unless
    ``left``), simplified as for generated code."""
    s, y = Var(s_aval, "s"), Var(y_aval, "y")
    b = Var(Aval(out_shape, s_aval.dtype), "b")
    ins = [b, y] if left else [y, b]
    out = PRIMITIVES[op].abstract_eval(*[x.aval for x in ins])
    v = Var(out, "v")
    prog = Program([s, y], [Eqn(PRIMITIVES["broadcast_to"], [s], [b], {"shape": out_shape}),
                            Eqn(PRIMITIVES[op], ins, [v], {})], [v], name=op)
    return simplify(prog, copies=True)


@pytest.mark.parametrize("left", [True, False], ids=["bcast_left", "bcast_right"])
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("s_shape", [(), (1,), (5,)], ids=["scalar", "one", "full"])
def test_a_broadcast_that_the_operator_makes_is_dropped(op, left, s_shape):
    rng = np.random.default_rng(1)
    prog = _broadcast_then(op, left, Aval(s_shape, F64), Aval((3, 5), F64), (3, 5))
    assert [e.prim.name for e in prog.eqns] == [op], str(prog)
    s, y = rng.standard_normal(s_shape) + 2.0, rng.standard_normal((3, 5)) + 2.0
    src = _same(prog, [s, y])
    assert "broadcast_to" not in src and "np.full" not in src, src
    b = np.broadcast_to(s, (3, 5))
    want = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
            "div": np.divide}[op](*((b, y) if left else (y, b)))
    np.testing.assert_array_equal(interpret(prog, s, y)[0], want)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("case", ["other_smaller", "other_float32", "both_broadcast"])
def test_a_broadcast_the_operator_needs_is_kept(op, case):
    """Where the other operand does not have the result's shape or dtype,
    dropping the broadcast would change the result: it stays."""
    rng = np.random.default_rng(2)
    if case == "other_smaller":
        prog = _broadcast_then(op, True, Aval((), F64), Aval((5,), F64), (3, 5))
        args = [np.float64(1.5), rng.standard_normal(5) + 2.0]
    elif case == "other_float32":
        prog = _broadcast_then(op, True, Aval((), F64), Aval((3, 5), F32), (3, 5))
        args = [np.float64(1.5), (rng.standard_normal((3, 5)) + 2.0).astype(F32)]
    else:           # both operands broadcasts: one of them must stay
        s, t = Var(Aval((), F64), "s"), Var(Aval((), F64), "t")
        b, c = Var(Aval((4,), F64), "b"), Var(Aval((4,), F64), "c")
        v = Var(Aval((4,), F64), "v")
        bt = PRIMITIVES["broadcast_to"]
        prog = simplify(Program([s, t], [Eqn(bt, [s], [b], {"shape": (4,)}),
                                         Eqn(bt, [t], [c], {"shape": (4,)}),
                                         Eqn(PRIMITIVES[op], [b, c], [v], {})], [v]), copies=True)
        args = [np.float64(1.5), np.float64(2.5)]
    assert "broadcast_to" in [e.prim.name for e in prog.eqns], str(prog)
    out = interpret(prog, *args)[0]
    assert out.shape == (4,) if case == "both_broadcast" else out.shape == (3, 5)
    assert out.dtype == F64
    _same(prog, args)


# --- gradients through both spellings ---------------------------------------------------
def _reduce_then_scale(x, w):
    # the transpose of the sum broadcasts its cotangent, which the product reads
    return np.sum(w * np.sum(x * x)) + np.sum(np.reshape(x, (2, 3)).max(axis=1))


def _stacked_rows(x, w):
    rows = [x[0:3] * w[0], x[3:6] * w[1]]
    return np.sum(np.stack(rows).reshape(6) ** 2) / np.sum(x ** 2)


@pytest.mark.parametrize("fn", [_reduce_then_scale, _stacked_rows])
def test_gradients_through_the_spellings(fn):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(6), rng.standard_normal(6)
    g = wg.grad(fn, argnums=(0, 1), engine="source")
    got = g(x, w)
    src = g.source
    code = "\n".join(line.split("#")[0] for line in src.splitlines())   # (comments quote)
    assert "np.reshape(" not in code and "np.broadcast_to(" not in code, src
    for k, arg in enumerate((x, w)):
        t = rng.standard_normal(arg.shape)

        def along(a, k=k):
            args = [x, w]
            args[k] = a
            return fn(*args)

        assert_close(float(np.sum(got[k] * t)), fd_jvp(along, (arg,), (t,)), PROGRAM_RTOL_F64)
    want = wg.grad(fn, argnums=(0, 1), engine="trace")(x, w)
    assert_close(got, want, AD_VS_AD_RTOL_F64)


# --- symbolic lengths (Emitter.dim) -----------------------------------------------
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
    code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))
    reads = re.findall(r"\w+\.shape\[\d+\]", code)
    assert reads and len(reads) == len(set(reads)), src        # each length read once
    body = code.split("\n")              # (comments quote the user's lines)
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


# --- every row has a spelling (issue 27) -----------------------------------------------
def _rows_with_cases():
    from cases import SPECS
    return sorted(n for n in PRIMITIVES if n in SPECS and SPECS[n].cases)


@pytest.mark.parametrize("name", _rows_with_cases())
def test_no_row_is_called_through_its_impl(name):
    """Each row's code is NumPy (or SciPy) text, or a function the file defines with
    NumPy alone (``DefinedCall``): the header binds no ``PRIMITIVES[...].impl``. Before,
    33 rows did (``np.fft``'s, ``np.linalg.eig``'s, ``scipy.linalg.expm``'s...). The
    values are the interpreter's (``backends/python/test_codegen.py``)."""
    from cases import SPECS
    from codegen_checks import one_equation
    prim = PRIMITIVES[name]
    for case in SPECS[name].cases:
        prog = one_equation(prim, case.operands(name), case.params, False)
        src = python_function(prog).source
        assert "PRIMITIVES[" not in src, src
        assert not re.search(r"^#   \w+ = (?!numpy$|module |constant )", src, re.M), src
