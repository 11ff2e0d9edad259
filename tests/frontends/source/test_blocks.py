"""A user's block staged over the variables it assigns
(``wengert/frontends/source/blocks.py``): ordinary code the source engine
once refused (issue 11).

Each construct (``robust_source_cases``: tuples and dicts through traced
branches and loops, labels, early returns, breaks in list and dict loops,
methods) is differentiated by the source engine in every mode (grad,
value_and_grad, jvp, vjp with a Python float cotangent, linearize, jacfwd,
jacrev, hessian) and checked against central differences, the trace engine,
and the other modes; where a value cannot be carried (a Python value read
after the loop or carried between steps, tuples of another structure on
each path, a container changed in place in a traced block, a value unknown
after a traced branch) the refusal is a typed error that names the variable
and its line.
"""
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
    with pytest.raises(UnsupportedSyntax,
                       match="changed in place|not an array or a number|another structure"):
        wg.grad(f, engine="source")(x)
    assert_close(wg.grad(f, engine="trace")(x), _fd_grad(f, x), 1e-6, 1e-7)
    g = wg.grad(f)                                   # auto: falls back to trace, right
    with pytest.warns(UserWarning):
        assert_close(g(x), _fd_grad(f, x), 1e-6, 1e-7)


@pytest.mark.parametrize("y0", [2.0, 0.3])
def test_while_inside_a_traced_if_reverse_mode(y0):
    f = rc.while_in_traced_if
    x, y = np.array([0.3, 0.2]), np.array([y0, 0.2])
    for engine in ("source", "trace"):
        gx, gy = wg.grad(f, argnums=(0, 1), engine=engine)(x, y)
        assert_close(gx, _fd_grad(lambda u: f(u, y), x), 1e-6, 1e-7, what=f"{engine} d/dx")
        assert_close(gy, _fd_grad(lambda u: f(x, u), y), 1e-6, 1e-7, what=f"{engine} d/dy")


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
