"""The aliasing checks made on values while staging
(``wengert/frontends/source/alias_check.py``): 0-d arrays written in place,
against NumPy.

NumPy gives a 0-d *array* from ``x.copy()`` of one, ``np.copy``, ``np.array``,
``np.asarray``, ``x.reshape(())``, ``np.where``, ``np.zeros(())``, ``x[...]``,
``np.full_like``, and a *scalar* from ufuncs, reductions and ``v[i]``.
``y += v`` and ``y[...] = v`` write into a 0-d array (every name of it sees
the change) and rebind a scalar. The source engine turns every write into a
new value, so where a name that shares the 0-d array is read after the write
it must raise ``InPlaceUpdateError`` at the write's line; where nothing shares
it, and for scalars, it gives NumPy's value and derivative. The trace engine
gives NumPy's value and derivative or a typed error.

The programs are written into a module file (the source engine reads source),
one per producer x write x alias form.
"""
import importlib.util
import itertools

import numpy as np
import pytest

import wengert as wg
from wengert.numpy import library
from wengert.core.errors import ConcretizationError, InPlaceUpdateError, WengertError

from checks import assert_close

X0 = 0.7
W = np.array([0.5, -1.5, 2.0])

# how y, a 0-d array made from the 0-d array argument x, is made
PRODUCERS = {
    "copy_method": "x.copy()",
    "np_copy": "np.copy(x)",
    "np_array": "np.array(x)",
    "np_asarray": "np.asarray(x * 2.0)",
    "reshape": "x.reshape(())",
    "np_where": "np.where(x > 0, x, 0.0)",
    "np_zeros": "np.zeros(())",
    "ellipsis": "x[...]",
    "full_like": "np.full_like(x, 1.5)",
    "copy_of_scalar": "np.copy(x * 2.0)",
    "ellipsis_of_scalar": "(x * 2.0)[...]",
    "T_attribute": "x.T",
    "real_attribute": "x.real",
    "astype_method": "x.astype(np.float64)",
    "squeeze_method": "x.squeeze()",
}

# how y is written in place (v depends on x)
WRITES = {
    "iadd": "{y} += v",
    "isub": "{y} -= v",
    "imul": "{y} *= v",
    "idiv": "{y} /= v",
    "ellipsis_set": "{y}[...] = v",
    "empty_tuple_set": "{y}[()] = v",
}

# another way to reach y's array, made before the write and read after it
# (None: written inside the helper ``bump_<write>``, which writes its parameter)
ALIASES = {
    "name": ("z = y", "z"),
    "list": ("zs = [y]", "zs[0]"),
    "tuple": ("zs = (y,)", "zs[0]"),
    "dict": ("zs = {'k': y}", "zs['k']"),
    "view": ("z = y[...]", "z"),
    "closure": ("z = y\n    def get():\n        return z", "get()"),
    "helper": None,
}


def _program(producer, write, alias):
    """(source, line of the write) of one program of the class."""
    lines = ["def f(x):", "    v = x * 0.5 + 1.0", f"    y = {PRODUCERS[producer]}"]
    if ALIASES[alias] is None:
        lines.append(f"    bump_{write}(y, v)")
        lines.append("    return y * 3.0 + x")
        return "\n".join(lines), None
    made, read = ALIASES[alias]
    lines += ["    " + ln if not ln.startswith("    ") else ln for ln in made.split("\n")]
    lines.append("    " + WRITES[write].format(y="y"))
    at = len(lines) - 1          # the write's index
    lines.append(f"    return {read} * 3.0 + x")
    return "\n".join(lines), at


def _unaliased(producer, write):
    """The same write with no other name of y: nothing can see the difference."""
    return "\n".join(["def f(x):", "    v = x * 0.5 + 1.0", f"    y = {PRODUCERS[producer]}",
                      "    " + WRITES[write].format(y="y"), "    w = y * 2.0",
                      "    " + WRITES[write].format(y="y"), "    return y * w"])


# the common scalar patterns: ``old = s; s += step`` rebinds s in NumPy
SCALARS = {
    "arithmetic": "s = x * 2.0\n    old = s\n    s += v",
    "reduction": "s = np.sum(W * x)\n    old = s\n    s += v",
    "max": "s = np.max(W * x)\n    old = s\n    s *= v",
    "dot": "s = np.dot(W, W * x)\n    old = s\n    s -= v",
    "index": "s = (W * x)[1]\n    old = s\n    s += v",
    "float": "s = float(x * 2.0)\n    old = s\n    s += v",
    "python_float": "s = 1.5\n    old = s\n    s += v",
    "for_carry": ("s = x * 2.0\n    acc = 0.0\n    for i in range(3):\n"
                  "        old = s\n        s += v\n        acc = acc + old * s\n"
                  "    old = acc"),
    "while_carry": ("s = np.sum(W * x)\n    k = 0\n    acc = 0.0\n    while s < 4.0:\n"
                    "        old = s\n        s += v\n        acc = acc + old * s\n"
                    "        k += 1\n    old = acc + k"),
    "branch": ("if x > 0:\n        s = x * 2.0\n    else:\n        s = np.sum(W * x)\n"
               "    old = s\n    s += v"),
    "never_aliased": "s = x.copy()\n    s += v\n    s *= v\n    old = s * 1.0",
}


# 0-d arrays reaching a write through control flow, a second write, or a
# parameter: the source engine must raise at the write (its line marked)
THROUGH = {
    # from the second step on, s is np.where's 0-d array, which s += v writes
    "loop_made_array": ("def f(x):\n    v = x * 0.5 + 1.0\n    s = x * 2.0\n    acc = 0.0\n"
                        "    for i in range(3):\n        old = s\n        s += v  # write\n"
                        "        acc = acc + old * s\n        s = np.where(s > 0, s, 0.0)\n"
                        "    return acc"),
    "branch_array": ("def f(x):\n    v = x * 0.5 + 1.0\n    if x > 0:\n"
                     "        s = np.where(x > 0, x, 0.0)\n    else:\n        s = x * 2.0\n"
                     "    old = s\n    s += v  # write\n    return old * s"),
    # y stays the same 0-d array after its first write
    "second_write": ("def f(x):\n    v = x * 0.5 + 1.0\n    y = x.copy()\n    y += v\n"
                     "    z = y\n    y += v  # write\n    return z * 3.0"),
    # the caller's 0-d array: ``old`` is it, and sees the write
    "array_argument": "def f(x):\n    old = x\n    x += 1.0  # write\n    return old * x",
}


# NumPy scalars from functions that may give either kind (their operand's,
# or a scalar where a 0-d array goes in): ``y += v`` rebinds y, z keeps the
# old value
EITHER_KIND = {
    "squeeze_of_scalar": "np.squeeze(x * 2.0)",
    "reshape_of_scalar": "np.reshape(x * 2.0, ())",
    "transpose_of_scalar": "np.transpose(x * 2.0)",
    "real_of_scalar": "np.real(x * 2.0)",
    "copy_method_of_scalar": "(x * 2.0).copy()",
    "reshape_method_of_scalar": "(x * 2.0).reshape(())",
    "sum_of_array": "np.sum(x)",
    "flip_of_array": "np.flip(x)",
    "nan_to_num_of_array": "np.nan_to_num(x)",
}


# NumPy scalars from a 0-d array: ufuncs and operators (``+x`` too), the
# reduction methods; ``y += v`` rebinds y, and the source engine knows it
SCALARS_OF_ARRAYS = {
    "sum_method": "x.sum()",
    "mean_method": "x.mean()",
    "clip_method": "x.clip(-5.0, 5.0)",
    "round_method": "x.round(3)",
    "unary_plus": "+x",
    "np_positive": "np.positive(x)",
    "abs_builtin": "abs(x)",
    "np_maximum": "np.maximum(x, 0.0)",
    "np_sum": "np.sum(x)",
    "np_interp": "np.interp(x, np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0]))",
    "np_sinc": "np.sinc(x)",
    "np_vdot": "np.vdot(W, W * x)",
    "np_average": "np.average(W * x)",
    "np_det": "np.linalg.det(x * np.eye(2) + 1.0)",
    "np_nanmean": "np.nanmean(W * x)",
}


def _either_program(name):
    made = {**EITHER_KIND, **SCALARS_OF_ARRAYS}[name]
    return "\n".join(["def f(x):", "    v = x * 0.5 + 1.0", f"    y = {made}",
                      "    z = y", "    y += v", "    return z * 3.0 + y"])


def _scalar_program(name):
    return "\n".join(["def f(x):", "    v = x * 0.5 + 1.0", "    " + SCALARS[name],
                      "    return old * s + x"])


def _helper(write):
    """``bump_<write>``: a user's function writing into its parameter."""
    return [f"def bump_{write}(a, v):", "    " + WRITES[write].format(y="a"), "    return None",
            ""]


CASES = list(itertools.product(PRODUCERS, WRITES, ALIASES))


def _library_cases():
    """(name, operand) of every NumPy function and ufunc of the library table
    that gives a 0-d float from a 0-d array ``x`` or a scalar ``x * 2.0``:
    NumPy's answer is a scalar or an array, by function and operand."""
    out = []
    for name, _, kind in library.entries():
        if kind == "call" or not name.startswith("np."):
            continue
        for operand in ("x", "x * 2.0"):
            try:
                with np.errstate(all="ignore"):
                    r = eval(f"{name}({operand})", {"np": np, "x": np.array(X0)})
            except Exception:
                continue
            if not isinstance(r, (np.ndarray, np.generic)) or r.ndim or r.dtype.kind != "f":
                continue
            # finite, and an array NumPy can write into (not np.imag's read-only zeros)
            if np.isfinite(r) and (isinstance(r, np.generic) or r.flags.writeable):
                out.append((name, operand))
    return out


LIBRARY = _library_cases()


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    """Every program of this file in one module (``f_<id>``), each with the
    line of its write."""
    text = ["import numpy as np", f"W = np.{W!r}", ""]
    helper_at = {}
    for write in WRITES:
        helper_at[write] = len(text) + 2        # its write, the line after the def
        text.extend(_helper(write))
    lines = {}

    def add(name, src, at):
        start = len(text)
        text.extend(src.replace("def f(", f"def f_{name}(", 1).split("\n") + [""])
        if name.endswith("__helper"):
            lines[name] = helper_at[name.split("__")[1]]
        elif at is not None:
            lines[name] = start + at + 1
        else:
            marked = [k for k, ln in enumerate(src.split("\n")) if "# write" in ln]
            if marked:
                lines[name] = start + marked[0] + 1
    for p, w, a in CASES:
        add(f"{p}__{w}__{a}", *_program(p, w, a))
    for p, w in itertools.product(PRODUCERS, WRITES):
        add(f"unaliased__{p}__{w}", _unaliased(p, w), None)
    for name in SCALARS:
        add(f"scalar__{name}", _scalar_program(name), None)
    for name, src in THROUGH.items():
        add(f"through__{name}", src, None)
    for name in [*EITHER_KIND, *SCALARS_OF_ARRAYS]:
        add(f"either__{name}", _either_program(name), None)
    for k, (name, operand) in enumerate(LIBRARY):
        add(f"library__{k}", "\n".join([
            "def f(x):", "    v = x * 0.5 + 1.0", f"    y = {name}({operand})", "    z = y",
            "    y += v", "    return z * 3.0 + y"]), None)
    path = tmp_path_factory.mktemp("zero_d") / "zero_d_programs.py"
    path.write_text("\n".join(text))
    spec = importlib.util.spec_from_file_location("zero_d_programs", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m.write_lines, m.path = lines, str(path)
    return m


def _numpy(f, x):
    """NumPy's value and the central difference of it (fresh arrays: the
    programs may write into their argument, as NumPy does)."""
    h = 1e-6
    fd = (f(np.array(x + h)) - f(np.array(x - h))) / (2 * h)
    return f(np.array(x)), fd


def _right(f, engine, x=X0):
    want, fd = _numpy(f, x)
    got, g = wg.value_and_grad(f, engine=engine)(np.array(x))
    assert_close(got, want, 1e-12, 1e-12, what=f"{engine} value")
    assert_close(g, fd, 1e-6, 1e-7, what=f"{engine} gradient")


def _refused_at(mod, name, call):
    with pytest.raises(InPlaceUpdateError) as err:
        call()
    line = mod.write_lines[name]
    assert err.value.filename == mod.path and err.value.lineno == line, str(err.value)
    assert f"{mod.path}:{line}" in str(err.value)


@pytest.mark.parametrize("producer,write,alias", CASES,
                         ids=["-".join(c) for c in CASES])
def test_source_refuses_a_write_another_name_of_the_0d_array_sees(mod, producer, write, alias):
    """Every case raises: y is a 0-d array (NumPy writes into it), and a name
    read after the write (z, a container's entry, a view, a closure's
    variable) or the caller of a helper writing its parameter is that same
    array, so NumPy's value shows the write there, which a functional
    update cannot. The error names the write's line."""
    name = f"{producer}__{write}__{alias}"
    f = getattr(mod, f"f_{name}")
    assert type(eval(PRODUCERS[producer], {"np": np, "x": np.array(X0)})) is np.ndarray
    _refused_at(mod, name, lambda: wg.value_and_grad(f, engine="source")(np.array(X0)))


@pytest.mark.parametrize("producer,write,alias", CASES,
                         ids=["-".join(c) for c in CASES])
def test_trace_engine_is_right_or_refuses(mod, producer, write, alias):
    """The trace engine follows the write on the tracer itself (``become``):
    NumPy's value and derivative, or a typed error (a view, ``np.asarray``
    of a traced value, ``y[...] = v`` on a traced array)."""
    f = getattr(mod, f"f_{producer}__{write}__{alias}")
    try:
        _right(f, "trace")
    except WengertError:
        pass


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("producer,write", list(itertools.product(PRODUCERS, WRITES)),
                         ids=["-".join(c) for c in itertools.product(PRODUCERS, WRITES)])
def test_unaliased_writes_are_right(mod, engine, producer, write):
    """Two writes into a 0-d array no other name holds: NumPy's value and
    derivative (the trace engine may refuse a write it cannot follow)."""
    f = getattr(mod, f"f_unaliased__{producer}__{write}")
    if engine == "source":
        _right(f, engine)
        return
    try:
        _right(f, engine)
    except WengertError:
        pass


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("name", list(SCALARS))
def test_scalar_patterns_are_right_without_refusal(mod, engine, name):
    """``old = s; s += v`` where s is a scalar (arithmetic, a reduction,
    ``v[i]``, ``float()``, a Python float, a loop carry, a branch of
    scalars) rebinds s: old keeps its value, and no error. (The trace
    engine refuses ``float()`` of a traced value: it would drop the
    derivative.)"""
    f = getattr(mod, f"f_scalar__{name}")
    if engine == "trace" and name == "float":
        with pytest.raises(ConcretizationError):
            wg.value_and_grad(f, engine=engine)(np.array(X0))
        return
    _right(f, engine)


@pytest.mark.parametrize("name", list(THROUGH))
def test_source_refuses_0d_arrays_through_loops_branches_and_arguments(mod, name):
    """A carry that a step makes a 0-d array, a branch result that is one on
    one path, a 0-d array after its first write, the caller's 0-d array:
    the name read after the write is the written array in NumPy, so the
    source engine raises at the write; the trace engine is right."""
    f = getattr(mod, f"f_through__{name}")
    _refused_at(mod, f"through__{name}",
                lambda: wg.value_and_grad(f, engine="source")(np.array(X0)))
    _right(f, "trace")


@pytest.mark.parametrize("arg", [X0, np.float64(X0)], ids=["float", "np_float64"])
def test_a_scalar_argument_is_rebound(mod, arg):
    """The same function given a Python float or an np.float64 (``x += 1``
    rebinds; old keeps its value) is right, and its code is not the code of
    a 0-d array argument, which raises (``test_source_refuses_...``)."""
    f = mod.f_through__array_argument
    g = wg.value_and_grad(f, engine="source")
    want = f(arg)
    h = 1e-6
    fd = (f(arg + h) - f(arg - h)) / (2 * h)
    got, d = g(arg)
    assert_close(got, want, 1e-12, 1e-12)
    assert_close(d, fd, 1e-6, 1e-7)
    with pytest.raises(InPlaceUpdateError):
        g(np.array(X0))
    got, d = g(arg)             # the scalar's code, still
    assert_close(got, want, 1e-12, 1e-12)


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("name", list(EITHER_KIND))
def test_scalars_from_functions_of_either_kind(mod, engine, name):
    """NumPy answers these with a scalar, which ``y += v`` rebinds (z keeps
    the old value): NumPy's value and derivative, or a typed refusal (the
    source engine does not know the kind of a reshape, squeeze... of a
    staged value and refuses the write that z would see were it an array;
    the trace engine refuses a write into what may be a view). Never a
    write that z sees."""
    assert isinstance(eval(EITHER_KIND[name], {"np": np, "x": np.array(X0)}), np.generic)
    f = getattr(mod, f"f_either__{name}")
    try:
        _right(f, engine)
    except (InPlaceUpdateError if engine == "source" else WengertError):
        pass


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("name", list(SCALARS_OF_ARRAYS))
def test_scalars_of_0d_arrays_are_rebound(mod, engine, name):
    """A ufunc, an operator or a reduction method of a 0-d array gives a
    NumPy scalar: ``y += v`` rebinds y, z keeps the old value, in both
    engines, and the source engine does not refuse it."""
    assert isinstance(eval(SCALARS_OF_ARRAYS[name], {"np": np, "x": np.array(X0), "W": W}),
                      np.generic)
    _right(getattr(mod, f"f_either__{name}"), engine)


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("k", range(len(LIBRARY)),
                         ids=[f"{n}({o})" for n, o in LIBRARY])
def test_library_functions_give_numpys_kind_at_0d(mod, engine, k):
    """``y = f(x); z = y; y += v`` for every library function with a 0-d
    result: where NumPy answers with a scalar, z keeps the old value; with
    an array, z sees the write. Each engine gives NumPy's value and
    derivative or a typed refusal (the source engine refuses what may be an
    array: a function it does not classify, a view; and a function whose result's
    dtype depends on the values, ``np.lib.scimath``'s, with a ConcretizationError),
    never the other kind's value."""
    f = getattr(mod, f"f_library__{k}")
    with np.errstate(all="ignore"):
        try:
            _right(f, engine)
        except ((InPlaceUpdateError, ConcretizationError) if engine == "source"
                else WengertError):
            pass


def _plain_then_aliased(x):
    acc = np.zeros(())
    acc += 1.0          # a concrete write: acc is still the 0-d array
    b = acc
    acc += x            # NumPy writes into it: b sees the write
    return b * x


def test_a_plain_0d_array_stays_one_after_a_concrete_write():
    """``y op= v`` of a concrete 0-d array with a concrete value (``np.zeros(())
    + 1.0`` is a NumPy scalar) kept the scalar, so a later write with an alias
    read afterwards passed the check and gave 2.0 where NumPy gives 6.0."""
    assert _plain_then_aliased(np.float64(2.0)) == 6.0
    with pytest.raises(InPlaceUpdateError):
        wg.value_and_grad(_plain_then_aliased, engine="source")(2.0)
