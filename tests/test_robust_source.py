"""Issue 11: ordinary code the source engine once refused. Each construct
(``robust_source_cases``) is differentiated by the source engine in every
mode (grad, value_and_grad, jvp, vjp with a Python float cotangent,
linearize, jacfwd, jacrev, hessian) and checked against central
differences, the trace engine, and the other modes; where a value cannot be
carried the refusal is a typed error that names the variable and its line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import UnsupportedSyntax

import robust_source_cases as rc
from checks import assert_close


def _fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


# every case at a point away from its branch switches
POINTS = {
    "early_return_pair": [np.array([0.9, 0.3, -0.2, 0.4]), np.array([0.1, 0.3, -0.2, 0.4])],
    "tuple_in_branches": [np.array([0.9, 0.3, -0.2, 0.4]), np.array([0.1, -0.3, -0.2, 0.1])],
    "tuple_carried": [np.array([0.7, 0.3, -0.2, 0.4])],
    "fixed_point": [np.array([0.5, 0.2, 0.0, 0.0]), np.array([-0.3, 1.1, 0.0, 0.0])],
    "counted_break": [np.array([1.3, 0.9, 0.0, 0.0]), np.array([0.5, 0.3, 0.0, 0.0])],
    "label_in_loop": [np.array([0.7, 0.3, 0.0, 0.0])],
    "one_path_in_loop": [np.array([0.7, 0.3, 0.0, 0.0]), np.array([2.5, 0.2, 0.0, 0.0])],
    "list_per_step": [np.array([0.7, 0.3, 0.0, 0.0])],
    "dict_loops": [np.array([0.7, 0.3, -0.2, 0.4])],
    "break_in_list_loop": [np.array([0.3, 1.1, 0.0, 0.0]), np.array([0.9, 1.3, 0.0, 0.0])],
    "break_in_dict_loop": [np.array([0.2, 0.3, 0.2, 0.4]), np.array([0.9, 0.3, 0.2, 0.4])],
    "dict_inside_a_branch": [np.array([0.7, 0.3, -0.2, 0.4]), np.array([-0.7, 0.3, 0.2, 0.4])],
    "label_per_path": [np.array([0.7, 0.3, -0.2, 0.4]), np.array([-0.7, 0.3, 0.2, 0.4])],
    "float32_carry_given_a_python_float": [np.array([0.7, 0.3, 0.0, 0.0])],
}
CASES = [(name, k) for name, pts in POINTS.items() for k in range(len(pts))]


@pytest.mark.parametrize("name,k", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_every_mode(name, k):
    f, x = getattr(rc, name), POINTS[name][k]
    _check_every_mode(f, x)


def _check_every_mode(f, x):
    plain = f(x.copy())
    fd = _fd_grad(f, x)
    src = dict(engine="source")
    value, g = wg.value_and_grad(f, **src)(x)
    assert_close(value, plain, 1e-13, 1e-13, what="value")
    assert_close(g, fd, 1e-6, 1e-7, what="grad against finite differences")
    assert_close(wg.grad(f, engine="trace")(x), g, 1e-11, 1e-12, what="source against trace")
    t = np.random.default_rng(0).normal(size=x.size)
    out, tan = wg.jvp(f, (x,), (t,), **src)
    assert_close(out, plain, 1e-13, 1e-13, what="jvp's value")
    assert_close(tan, g @ t, 1e-10, 1e-12, what="jvp against grad")
    out, pullback = wg.vjp(f, x, **src)
    (ct,) = pullback(1.0)                # a Python float cotangent
    assert_close(ct, g, 1e-12, 1e-13, what="vjp against grad")
    _, lin = wg.linearize(f, x, **src)
    assert_close(lin(t), tan, 1e-12, 1e-13, what="linearize against jvp")
    assert_close(wg.jacfwd(f, **src)(x), g, 1e-11, 1e-12, what="jacfwd against grad")
    assert_close(wg.jacrev(f, **src)(x), g, 1e-12, 1e-13, what="jacrev against grad")
    h = wg.hessian(f, **src)(x)
    grad_src = wg.grad(f, **src)
    fd_h = np.array([(grad_src(x + 1e-6 * e) - grad_src(x - 1e-6 * e)) / 2e-6
                     for e in np.eye(x.size)])
    assert_close(h, fd_h, 1e-5, 1e-6, what="hessian against differences of the gradient")
    assert_close(h, wg.hessian(f, engine="trace")(x), 1e-9, 1e-10, what="hessian: engines")


def test_tuple_output_jvp_and_vjp():
    """A function whose output is the tuple returned early in a traced if."""
    for x in POINTS["early_return_pair"]:
        t = np.random.default_rng(1).normal(size=4)
        (s, y), (ds, dy) = wg.jvp(rc._pair, (x,), (t,), engine="source")
        (s2, y2), (ds2, dy2) = wg.jvp(rc._pair, (x,), (t,), engine="trace")
        assert_close(s, s2, 1e-14, 0.0)
        assert_close(y, y2, 1e-14, 0.0)
        assert_close(ds, ds2, 1e-12, 1e-14)
        assert_close(dy, dy2, 1e-12, 1e-14)
        _, pullback = wg.vjp(rc._pair, x, engine="source")
        cs, cy = 0.7, np.arange(4.0)
        (cx,) = pullback((cs, cy))
        # the dot-product test: <ct, J t> == <J^T ct, t>
        assert_close(cs * ds + cy @ dy, cx @ t, 1e-12, 1e-13, what="dot-product test")


def test_a_method_in_every_mode():
    model = rc.Model(np.array([0.5, -1.0, 2.0]))
    x = np.array([0.3, 0.2, 0.4])
    _check_every_mode(model.loss, x)
    g = wg.grad(model.loss, engine="source")
    before = g(x)
    model.w[0] = 3.0                          # the object's array changed in place
    assert_close(g(x), _fd_grad(model.loss, x), 1e-6, 1e-7, what="after self.w changed")
    assert not np.allclose(g(x), before)
    model.w = np.array([1.0, 1.0, 1.0])       # and rebound
    assert_close(g(x), _fd_grad(model.loss, x), 1e-6, 1e-7, what="after self.w rebound")


def test_auto_takes_the_source_engine_for_a_method():
    model = rc.Model(np.array([0.5, -1.0, 2.0]))
    g = wg.grad(model.loss)                   # engine="auto"
    x = np.array([0.3, 0.2, 0.4])
    assert_close(g(x), _fd_grad(model.loss, x), 1e-6, 1e-7)
    assert "def " in g.source                 # generated code: the source engine ran


def test_a_python_value_read_after_the_loop_is_a_typed_error():
    with pytest.raises(UnsupportedSyntax) as err:
        wg.grad(rc.label_read_after, engine="source")(np.array([0.7, 0.3]))
    msg = str(err.value)
    assert "'label'" in msg and "robust_source_cases.py" in msg and "cannot be carried" in msg


def test_a_python_value_carried_between_steps_is_a_typed_error():
    def grows(x):
        s = x[0]
        parts = []
        while s < 10.0:
            parts.append(s)            # needs last step's list: cannot be carried
            s = s * 2.0
        return s
    with pytest.raises(UnsupportedSyntax, match="'parts'"):
        wg.grad(grows, engine="source")(np.array([0.7, 0.3]))


def test_tuples_of_another_structure_on_each_path_are_a_typed_error():
    def ragged(x):
        if x[0] > 0.0:
            p = (x[0], x[1])
        else:
            p = (x[0], x[1], x[0])
        return p[0]
    with pytest.raises(UnsupportedSyntax, match="structure"):
        wg.grad(ragged, engine="source")(np.array([0.7, 0.3]))


def _append_in_if(x):
    parts = [x[1]]
    if x[0] > 0.0:
        parts.append(x[0] * 2.0)
    return parts[-1]


def _extend_in_while(x):
    s = x[0]
    parts = [x[1]]
    while s < 10.0:
        parts.extend([s])
        s = s * 2.0
    return s + parts[-1]


def _update_in_if(x):
    d = {"a": x[0]}
    if x[1] > 0.0:
        d.update(a=x[1] * 3.0)
    return d["a"]


def _iadd_in_if(x):
    parts = [x[1]]
    if x[0] > 0.0:
        parts += [x[0] * 2.0]
    return parts[-1]


def _pop_in_while(x):
    s = x[0]
    parts = [x[1], x[1] * 2.0, x[1] * 3.0]
    while s < 10.0:
        y = parts.pop()
        s = s * 2.0 + y
    return s


@pytest.mark.parametrize("f", [_append_in_if, _extend_in_while, _update_in_if, _iadd_in_if,
                               _pop_in_while], ids=lambda f: f.__name__)
def test_a_container_changed_in_place_in_a_traced_block_is_a_typed_error(f):
    """Staging both branches (or one step for every step) would make both
    changes, or one: a silent wrong value before. The trace engine, which
    runs the path taken, stays right."""
    x = np.array([0.7, 0.3])
    with pytest.raises(UnsupportedSyntax, match="changed in place|not an array or a number"):
        wg.grad(f, engine="source")(x)
    assert_close(wg.grad(f, engine="trace")(x), _fd_grad(f, x), 1e-6, 1e-7)
    g = wg.grad(f)                                   # auto: falls back to trace, right
    with pytest.warns(UserWarning):
        assert_close(g(x), _fd_grad(f, x), 1e-6, 1e-7)


def test_keyword_arguments_at_the_call():
    """Keyword arguments are inputs like positional ones: an int picks its
    own code, a float or an array is read at each call (never baked in)."""
    f = rc.with_keywords
    x, y = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -0.5])
    for name in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        src = getattr(wg, name)(f, engine="source")
        trc = getattr(wg, name)(f, engine="trace")
        for kw in ({"k": 3}, {"k": 3, "scale": 0.5}, {"scale": 2.0, "w": np.arange(3.0)},
                   {"w": np.ones(3)}, {"w": -np.ones(3), "k": 5}):
            got, want = src(x, y, **kw), trc(x, y, **kw)
            assert_close(np.asarray(got if name != "value_and_grad" else got[1]),
                         np.asarray(want if name != "value_and_grad" else want[1]),
                         1e-11, 1e-12, what=f"{name} {kw}")
    g = wg.grad(f, argnums=1, engine="source")
    w = np.array([0.5, 0.5, 0.5])
    fd = _fd_grad(lambda yy: f(x, yy, k=4, w=w), y)
    assert_close(g(x, y, k=4, w=w), fd, 1e-6, 1e-7)
    w[:] = 7.0                                   # the same array, changed in place
    g0 = wg.grad(f, argnums=0, engine="source")
    assert_close(g0(x, y, w=w), _fd_grad(lambda xx: f(xx, y, w=w), x), 1e-6, 1e-7)
    w2 = np.array([1.0, -2.0, 3.0])               # another array by keyword
    assert_close(g0(x, y, w=w2), _fd_grad(lambda xx: f(xx, y, w=w2), x), 1e-6, 1e-7)


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


@pytest.mark.parametrize("name", ["sum_and_mean", "broadcast_rows", "mean_of_maximum"])
@pytest.mark.parametrize("outer", ["source", "trace"])
def test_a_gradient_replayed_under_jvp(name, outer):
    """jvp of a source-engine gradient (a Hessian-vector product): the
    gradient's Program is replayed into the outer transformation, so it must
    be a valid Program (``verify``), not only valid NumPy code."""
    from wengert.core.ir import verify
    f = getattr(rc, name)
    rng = np.random.default_rng(3)
    W, T = rng.normal(size=(2, 45)), rng.normal(size=(2, 45))
    g = wg.grad(f, engine="source")
    g(W)
    verify(g.program)
    _, hvp = wg.jvp(lambda y: g(y), (W,), (T,), engine=outer)
    g_trace = wg.grad(f, engine="trace")
    fd = (g_trace(W + 1e-6 * T) - g_trace(W - 1e-6 * T)) / 2e-6
    assert_close(hvp, fd, 1e-5, 1e-7, what="Hessian-vector product")


@pytest.mark.parametrize("y0", [2.0, 0.3])
def test_while_inside_a_traced_if_reverse_mode(y0):
    f = rc.while_in_traced_if
    x, y = np.array([0.3, 0.2]), np.array([y0, 0.2])
    for engine in ("source", "trace"):
        gx, gy = wg.grad(f, argnums=(0, 1), engine=engine)(x, y)
        assert_close(gx, _fd_grad(lambda u: f(u, y), x), 1e-6, 1e-7, what=f"{engine} d/dx")
        assert_close(gy, _fd_grad(lambda u: f(x, u), y), 1e-6, 1e-7, what=f"{engine} d/dy")


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("x", [0.5, 1.5])
def test_float_constants_in_selects_under_jvp_and_grad(engine, x):
    """``1.0 if x > 1.0 else ...`` and ``np.where(x > 1.0, 1.0, x)``: a Python
    float branch has a zero tangent (once a raw AttributeError)."""
    f = rc.conditional_expression
    out, t = wg.jvp(f, (x,), (1.0,), engine=engine)
    assert_close(t, (f(x + 1e-6) - f(x - 1e-6)) / 2e-6, 1e-6, 1e-8)
    v = np.array([0.5, 1.5, 0.9]) * x
    g = rc.where_with_a_float
    assert_close(wg.grad(g, engine=engine)(v), _fd_grad(g, v), 1e-6, 1e-8)
    out, t = wg.jvp(g, (v,), (np.ones(3),), engine=engine)
    assert_close(t, _fd_grad(g, v).sum(), 1e-6, 1e-8)


def test_a_callable_object_is_called_once_per_call():
    """Found the result's shape on a copy: generating code calls nothing."""
    rc.COUNTER.calls = 0
    g = wg.grad(rc.calls_a_counter, engine="source")
    x = np.ones(3)
    for k in (1, 2, 3):
        assert_close(g(x), np.full(3, 2.0 * k), 0.0, 0.0, what=f"call {k}")
        assert rc.COUNTER.calls == k


def test_an_io_call_is_refused_by_the_source_engine_and_made_once_by_auto(tmp_path):
    import os
    path = tmp_path / "out.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(UnsupportedSyntax, match="I/O call"):
            wg.grad(rc.writes_to_a_file_descriptor, engine="source")(np.ones(2), fd)
        assert path.read_bytes() == b""             # refused before writing
        g = wg.grad(rc.writes_to_a_file_descriptor)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(3):
                assert_close(g(np.ones(2), fd), np.full(2, 2.0), 0.0, 0.0)
    finally:
        os.close(fd)
    assert path.read_bytes() == b"www"              # one write per call


@pytest.mark.parametrize("engine", ["source", "trace", "auto"])
def test_a_shape_from_a_traced_value_is_a_concretization_error(engine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(wg.ConcretizationError, match="robust_source_cases.py"):
            wg.grad(rc.zeros_of_a_traced_length, engine=engine)(np.ones(3))


def test_a_trace_gradient_inside_a_source_function_says_what_to_do():
    """The trace engine's ``if`` on a value the source engine stages is a
    typed error naming the user's line and the way out; ``auto`` traces."""
    W, T = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -1.0])
    g_trace = wg.grad(rc.branchy_sum, engine="trace")
    with pytest.raises(wg.ConcretizationError, match="engine='source'") as err:
        wg.jvp(lambda y: g_trace(y), (W,), (T,), engine="source")
    assert "robust_source_cases.py" in str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, hvp = wg.jvp(lambda y: g_trace(y), (W,), (T,))
    fd = (g_trace(W + 1e-6 * T) - g_trace(W - 1e-6 * T)) / 2e-6
    assert_close(hvp, fd, 1e-6, 1e-8)
    g_source = wg.grad(rc.branchy_sum, engine="source")     # the way out
    _, hvp = wg.jvp(lambda y: g_source(y), (W,), (T,), engine="source")
    assert_close(hvp, fd, 1e-6, 1e-8)


def test_caches_stay_bounded():
    """Converting many distinct functions (made at run time, as a loop that
    builds lambdas does) and many matmul shapes keeps the caches at their
    bounds, so converted functions and their modules are not kept alive."""
    import functools as ft
    from wengert.frontends.source import converted as source_convert
    from wengert.primitives import linalg
    for cache in (source_convert._converted_code, linalg._concrete_matmul_aval):
        assert isinstance(cache, ft._lru_cache_wrapper) and cache.cache_info().maxsize
    bound = linalg._concrete_matmul_aval.cache_info().maxsize
    for n in range(1, bound + 50):
        wg.grad(lambda a: np.sum(a @ np.ones((n, 1))), engine="trace")(np.ones((1, n)))
    assert linalg._concrete_matmul_aval.cache_info().currsize <= bound


def test_a_float32_carry_stays_float32():
    f = rc.float32_carry_given_a_python_float
    x = np.array([0.7, 0.3, 0.0, 0.0], np.float32)
    for name in ("grad", "jacrev", "jacfwd"):
        g = getattr(wg, name)(f, engine="source")(x)
        assert g.dtype == np.float32, name
        assert_close(g, getattr(wg, name)(f, engine="trace")(x), 1e-6, 1e-7)


# every way of reading a value that differs between a traced branch's paths
_READS = {
    "==": "return s if lbl == 'up' else -s",
    "!=": "return s if lbl != 'up' else -s",
    "is": "return s if lbl is None else -s",
    "is not": "return s if lbl is not None else -s",
    "in": "return s if 'u' in lbl else -s",
    "isinstance": "return s if isinstance(lbl, str) else -s",
    "type": "return s if type(lbl) is str else -s",
    "len": "return s * len(lbl)",
    "str": "return s if str(lbl) == 'up' else -s",
    "method": "return s if lbl.startswith('u') else -s",
    "key": "return s * {'up': 1.0, 'down': 2.0}[lbl]",
    "bool": "return s if lbl else -s",
    "call": "return s * float(len(lbl))",
}


@pytest.mark.parametrize("how", list(_READS), ids=list(_READS))
def test_a_value_unknown_after_a_traced_branch_is_never_read_silently(how, tmp_path):
    """``lbl`` is 'up' or 'down' by a traced test: after the branch the source
    engine cannot know which, so every read of it is the typed error (an
    ``==`` that answered False would pick a path silently)."""
    import importlib.util
    path = tmp_path / f"unknown_{abs(hash(how))}.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    s = x[0] * 1.0\n"
                    "    if x[0] > 0.0:\n        lbl = 'up'\n    else:\n        lbl = 'down'\n"
                    f"    {_READS[how]}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.array([0.5, 0.2])
    with pytest.raises(UnsupportedSyntax, match="'lbl'"):
        wg.grad(mod.f, engine="source")(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(wg.grad(mod.f)(x), _fd_grad(mod.f, x), 1e-6, 1e-8)   # auto: traced


def test_a_loop_whose_test_is_read_at_each_call():
    """Its operands are constants, but its test reads a global (or draws):
    it is made at each call (it was computed while the code was generated,
    and failed there)."""
    g = wg.grad(rc.loop_on_a_global_test, engine="source")
    x = np.array([0.5, 1.0])
    try:
        assert_close(g(x), np.array([8.0, 0.0]), 0.0, 0.0)
        rc.LIMIT[:] = 10.0                         # in place: the loop now stops at once
        assert_close(g(x), np.array([1.0, 0.0]), 0.0, 0.0)
    finally:
        rc.LIMIT[:] = [1.0, 2.0]
    d = wg.grad(rc.loop_on_a_drawn_test, engine="source")
    for seed in range(5):
        rc.DRAWS.seed(seed)
        got = d(x)
        after = rc.DRAWS.rand()
        rc.DRAWS.seed(seed)
        want = wg.grad(rc.loop_on_a_drawn_test, engine="trace")(x)
        assert_close(got, want, 0.0, 0.0, what=f"seed {seed}")
        assert rc.DRAWS.rand() == after          # the same draws as the plain call


@pytest.mark.parametrize("name", ["draw_after_or", "draw_in_a_conditional_expression"])
@pytest.mark.parametrize("x0", [0.5, -0.5])
def test_a_draw_on_one_path_of_an_expression(name, x0):
    """``a or draw()`` and ``y if c else draw()`` on a traced test: the draw
    is made on its path only, as in the plain call."""
    f = getattr(rc, name)
    x = np.array([x0, 0.0])
    for seed in range(4):
        rc.DRAWS.seed(seed)
        got = wg.grad(f, engine="source")(x)
        after = rc.DRAWS.rand()
        rc.DRAWS.seed(seed)
        want = wg.grad(f, engine="trace")(x)
        assert rc.DRAWS.rand() == after
        assert_close(got, want, 0.0, 0.0, what=f"seed {seed}")


@pytest.mark.parametrize("x0", [0.1, 2.0])
def test_two_equal_branches_that_draw_are_not_merged(x0):
    """Common-subexpression elimination once merged two equal branches that
    draw, so one draw stood for two (a silent wrong value and stream)."""
    f = rc.the_same_drawing_branch_twice
    x = np.array([x0, 0.3])
    for engine in ("source", "trace"):
        rc.DRAWS.seed(7)
        want, after = f(x), rc.DRAWS.rand()
        rc.DRAWS.seed(7)
        value, g = wg.value_and_grad(f, engine=engine)(x)
        assert value == want and rc.DRAWS.rand() == after, engine


@pytest.mark.parametrize("x0", [3.5, 0.01])
def test_nested_conditional_expressions_with_a_draw_are_looked_at_once(x0):
    """Twelve nested ``x if c else y`` ending in a draw: right values and
    draws, and the first look for draws is not repeated at each level (it
    cost 2 ** depth draws staged: 4.9 s where it now takes 0.1 s)."""
    from wengert.core.trace import effects_made
    f = rc.nested_conditional_expressions
    x = np.array([x0, 0.0])
    rc.DRAWS.seed(3)
    before = effects_made()
    got = wg.grad(f, engine="source")(x)
    staged = effects_made() - before
    after = rc.DRAWS.rand()
    rc.DRAWS.seed(3)
    assert_close(got, wg.grad(f, engine="trace")(x), 0.0, 0.0)
    assert rc.DRAWS.rand() == after
    assert staged < 64, staged
