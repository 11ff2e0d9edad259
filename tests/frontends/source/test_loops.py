"""The loops of converted code (``wengert/frontends/source/loops.py``): a
Python loop runs as Python when nothing it depends on is traced, and is a
structured ``for_loop`` / ``while_loop`` otherwise.

* loops stay structured (nested, with branches), a Python loop's counter is
  not recorded, a structured loop's counter is an integer input;
* loops over ``range(start, stop, step)`` (``range_cases``): the source
  frontend runs ``for i in range(start, stop, step)`` as a loop over a
  counter ``k`` with ``i = start + k * step``; the user's ``x[i - 1]`` then
  reads ``(1 + k) - 1``. ``simplify`` (for generated code) composes int
  offsets by literals (``Algebra.offset``): ``(1 + k) - 1`` is ``k``,
  ``(1 + k) + 1`` is ``k + 2``. Checked for the whole family (positive,
  negative and odd starts and steps, empty ranges, nested loops, a loop that
  writes in place): the derivative's Program (simplified as the code
  generator sees it) holds no int offset of an int offset; gradients against
  finite differences, and the source engine against the trace engine where
  the program has no in-place write (which the trace engine does not
  accept) and against the same mathematics written with lists where it has;
* a loop's index is a Python int, weakly typed (NEP 50): ``x[i] * i`` of a
  float32 ``x`` is float32 in NumPy. The source engine held a ``range``
  loop's counter as an int64 array value, so ``s = s + x[i] * i`` became
  float64, the loop's carry was widened and the value (and its gradient's
  dtype) differed from NumPy's with no error;
* Hessians through loops that store values of run-time length are right or
  a typed refusal (once a raw error from inside wengert).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.api import codes as api_codes
from wengert.backends.interpret import interpret
from wengert.core.errors import UnsupportedSyntax
from wengert.core.ir import Lit, sub_programs, verify
from wengert.transforms.simplify import simplify

import source_cases as C
from checks import FD_EPS_F32_OUTPUT, JVP_RTOL_F32, assert_close, fd_jvp
from range_cases import MAKERS, N, RANGES, make_nested, make_prefix, make_prefix_list, make_scan
from source_corpus import A23, X3, X4, Y3


# --- loops over range(start, stop, step): no index arithmetic that cancels ----------
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


# --- a loop's index is weakly typed (NEP 50) --------------------------------------
def times_index(x):
    s = x[0]
    for i in range(1, x.shape[0]):
        s = s + x[i] * i
    return s


def plus_index(x):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s = s + (x[i] + i) ** 2
    return s


def over_index(x):
    s = x[0]
    for i in range(2, x.shape[0], 2):
        s = s + x[i] / (i + 1)
    return s


def reversed_index(x):
    n = x.shape[0]
    s = x[0] * 0
    for i in range(n - 1, -1, -1):
        s = s * 0.5 + x[i] * (n - i)
    return s


def while_index(x):
    s = x[0]
    i = 1
    while i < x.shape[0]:
        s = s + x[i] * i
        i += 1
    return s


def array_times_index(x):
    acc = x * 0
    for i in range(3):
        acc = acc + x * i
    return np.sum(acc)


PROGRAMS = [times_index, plus_index, over_index, reversed_index, while_index,
            array_times_index]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_index_is_weakly_typed(f, dtype):
    x = np.array([0.1, 0.5, -0.3, 0.7, 0.25, 1.5], dtype)
    want = f(x.copy())
    value, grad = wg.value_and_grad(f, engine="source")(x.copy())
    assert np.asarray(value).dtype == np.asarray(want).dtype == dtype
    assert value == want                                   # bit for bit
    t_value, t_grad = wg.value_and_grad(f, engine="trace")(x.copy())
    assert grad.dtype == t_grad.dtype == dtype
    assert_close(grad, t_grad, rtol=1e-6 if dtype is np.float32 else 1e-13)
    x64 = x.astype(np.float64)
    eps = FD_EPS_F32_OUTPUT if dtype is np.float32 else 1e-6
    fd = np.array([(f((x64 + eps * e).astype(dtype)) - f((x64 - eps * e).astype(dtype)))
                   / (2 * eps) for e in np.eye(len(x))], dtype=np.float64)
    assert_close(grad, fd, rtol=JVP_RTOL_F32 * 20 if dtype is np.float32 else 1e-6)


# --- structure: control flow stays structured, integers stay Python --------------------
def _structure(prog):
    """Structured equations, nested: ``for_loop{cond{...}}``."""
    out = []
    for e in prog.eqns:
        subs = list(sub_programs(e))
        if subs:
            inner = [s for sub in subs for s in _structure(sub)]
            out.append(e.prim.name + ("{" + ",".join(inner) + "}" if inner else ""))
    return out


@pytest.mark.parametrize("fn, args, want", [
    (C.if_traced, (X3,), ["cond{cond}"]),
    (C.for_range_n, (X3, 4), ["for_loop"]),
    (C.for_range_len, (X3,), ["for_loop"]),
    (C.for_over_array, (A23,), ["for_loop"]),
    (C.for_enumerate, (X3,), ["for_loop"]),
    (C.for_zip, (X3, Y3), ["for_loop"]),
    (C.while_newton, (2.0,), ["while_loop"]),
    (C.break_in_for, (X4,), ["while_loop"]),
    (C.nested_loops, (A23,), ["for_loop{for_loop}"]),
    (C.loop_with_branch, (X3,), ["for_loop{cond}"]),
    (C.for_over_list, (X3,), []),
], ids=["if-elif", "range-n", "range-len", "array", "enumerate", "zip", "while", "break",
        "nested", "loop-with-branch", "python-list"])
def test_control_flow_stays_structured(fn, args, want):
    # an entry without braces names the structured equation only, not its insides
    got = _structure(verify(wg.make_program(fn, *args, engine="source")))
    assert [g if "{" in w else g.split("{")[0] for g, w in zip(got, want)] == want, got
    assert len(got) == len(want), got


def test_python_loop_counter_is_not_recorded():
    # for c in [0.5, 1.0, 1.5]: k = k + 2 -- the loop runs as Python, k stays an int
    prog = verify(wg.make_program(C.python_counter, X3, engine="source"))
    assert _structure(prog) == []
    for e in prog.eqns:
        for v in e.outputs:
            assert v.aval.dtype == np.float64, f"an integer was recorded: {e}"
    adds = [e for e in prog.eqns if e.prim.name == "add"]
    assert [e.inputs[1].val for e in adds] == [2, 4, 6]
    assert all(type(e.inputs[1].val) is int for e in adds)
    assert prog.eqns[-1].prim.name == "mul" and prog.eqns[-1].inputs[1].val == 6
    assert interpret(prog, X3)[0] == pytest.approx(C.python_counter(X3), rel=1e-14)


@pytest.mark.parametrize("fn, args", [(C.loop_trip, (X3, 5)), (C.for_range_len, (X3,))],
                         ids=["range-n", "range-len"])
def test_structured_loop_counter_is_an_integer_input(fn, args):
    prog = verify(wg.make_program(fn, *args, engine="source"))
    loops = [e for e in prog.eqns if e.prim.name == "for_loop"]
    assert len(loops) == 1
    body = loops[0].params["body"]
    assert body.inputs[0].aval.shape == () and body.inputs[0].aval.dtype == np.int64
    assert all(v.aval.dtype == np.float64 for v in body.inputs[1:])
    assert loops[0].inputs[0].val == (len(X3) if fn is C.for_range_len else 5)


# --- Hessians through loops that store values of run-time length ----------------------
def _load_program(tmp_path, seed):
    import importlib.util
    from robust_hessian_programs import PROGRAMS
    path = tmp_path / f"hessian_prog_{seed}.py"
    path.write_text(PROGRAMS[seed])
    spec = importlib.util.spec_from_file_location(f"hessian_prog_{seed}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", [124, 190, 328, 334])
def test_hessian_through_loops_is_right_or_a_typed_refusal(tmp_path, seed):
    """Once a raw ValueError/TypeError from inside wengert. The source
    engine gives the Hessian or refuses with ``UnsupportedSyntax``; ``auto``
    gives it either way; both against differences of the gradient."""
    mod = _load_program(tmp_path, seed)
    rng = np.random.default_rng(seed)
    x = float(rng.uniform(-1.5, 1.5))
    v = rng.uniform(-1.0, 1.0, 4)
    draws = int(rng.integers(0, 2 ** 31))

    def at(fn, u):
        mod.RS.seed(draws)
        return fn(u)

    def f_v(u):
        return mod.f(x, u.copy())
    grad_v = wg.grad(f_v, engine="source")
    fd = np.array([(at(grad_v, v + 1e-6 * e) - at(grad_v, v - 1e-6 * e)) / 2e-6
                   for e in np.eye(4)])
    try:
        h = at(wg.hessian(f_v, engine="source"), v)
    except UnsupportedSyntax as err:
        assert "engine='trace'" in str(err)
    else:
        assert_close(h, fd, 1e-4, 1e-5, what="source Hessian")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # auto may say it falls back
        h = at(wg.hessian(f_v), v)
    assert_close(h, fd, 1e-4, 1e-5, what="auto Hessian")
