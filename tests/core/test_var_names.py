"""Variable names and roles (``wengert/core/atoms.py``'s ``Var``,
``wengert/core/ir.py``'s ``label`` and ``derive``).

A variable's user name and its role are two fields (``Var.name``,
``Var.role``), and every printed or generated name is derived from both
(``label``): in reverse mode the cotangent of the user's ``p`` is ``ct_p``,
in forward mode its tangent is ``d_p`` (seed 000), and a value with no user
name gets its role's prefix and a counter. These tests read the names of
generated code and of Programs after every transform.
"""
import ast
import re

import numpy as np
import pytest

import wengert as wg
from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.demo import seed000
from wengert.core.ir import Lit, Role, derive, label, programs_in, verify
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.partial_eval import linearize_program
from wengert.transforms.simplify import simplify
from wengert.transforms.transpose import transpose_program
from wengert.transforms.vjp import vjp_program


# --- the programs: source-engine functions of several float inputs -----------------------
def mlp(w, x):
    h = np.tanh(w @ x)
    loss = np.sum(h * h)
    return loss


def branch(x, y):
    if x > 0:
        z = x * y
    else:
        z = np.exp(x) + y
    w = z * z
    return w


def loop(x, c):
    s = c
    for i in range(3):
        s = s * x + np.sin(s)
    return s


def newton(a, y0):
    y = y0
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def _helper(u, v):
    prod = u * v
    return np.sin(prod)


def calls(x, y):
    z = _helper(x, y)
    out = z * x
    return out


def _user_names(*fns):
    """Every name the user's code binds (parameters and locals)."""
    return {n for f in fns for n in f.__code__.co_varnames}


CASES = {
    "seed000": (seed000, (2.0, 3.0), _user_names(seed000)),
    "mlp": (mlp, (np.linspace(-0.5, 0.5, 6).reshape(2, 3), np.array([0.3, -0.2, 0.7])),
            _user_names(mlp)),
    "branch": (branch, (0.5, 2.0), _user_names(branch)),
    "branch_else": (branch, (-0.5, 2.0), _user_names(branch)),
    "loop": (loop, (0.3, 0.2), _user_names(loop)),
    "newton": (newton, (2.0, 1.0), _user_names(newton)),
    "calls": (calls, (0.4, 1.3), _user_names(calls, _helper)),
}
IDS = list(CASES)

# names a variable with no user name gets: a role or position prefix and a counter
NAMELESS = {"reverse": r"(v|x|ct|r)\d+", "forward": r"(v|x|t|r)\d+"}
# the symbolic lengths, named at the code's entry (``python.emit.Emitter.dim``):
# ``w_shape0 = w.shape[0]``, ``size = w_shape0 - 1``
LENGTH = r"\w+_shape\d+(_\d+)?|size(_\d+)?"
PREFIX = {"reverse": "ct_", "forward": "d_"}


def _assigned(source):
    """The names the generated function binds: parameters, assignment and
    loop targets."""
    tree = ast.parse(source)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _base(name):
    """A name without the ``_1``, ``_2``... that made it unique."""
    return re.sub(r"_\d+$", "", name)


def _check_names(source, user, mode):
    """Every name in ``source`` is a user's name, a derivative name of this
    mode (``ct_<user name>`` in reverse, ``d_<user name>`` in forward) or a
    nameless temporary; returns the derivative names' user names."""
    prefix, nameless = PREFIX[mode], NAMELESS[mode]
    derived = set()
    for name in _assigned(source):
        if re.fullmatch(nameless, name) or re.fullmatch(LENGTH, name):
            continue
        base = name if name in user else _base(name)
        if base in user:
            continue
        assert base.startswith(prefix) and base[len(prefix):] in user, (
            f"{name!r} is neither a user name, {prefix}<user name> nor a temporary:\n{source}")
        derived.add(base[len(prefix):])
    return derived


def _params(fn):
    return fn.__code__.co_varnames[:fn.__code__.co_argcount]


@pytest.mark.parametrize("case", IDS)
def test_grad_source_names_cotangents_after_the_user(case):
    fn, args, user = CASES[case]
    g = wg.grad(fn, argnums=tuple(range(len(args))), engine="source")
    got = g(*args)
    derived = _check_names(g.source, user, "reverse")
    # each input's cotangent is named after it
    assert set(_params(fn)) <= derived, g.source
    # and the code with these names computes the gradient
    want = wg.grad(fn, argnums=tuple(range(len(args))), engine="trace")(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", IDS)
def test_forward_source_names_tangents_after_the_user(case):
    fn, args, user = CASES[case]
    _, lin = wg.linearize(fn, *args, engine="source")
    prog = wg.make_program(fn, *args, engine="source")
    sources = [lin.source, python_function(jvp_program(prog)).source,
               python_function(simplify(jvp_program(prog))).source]
    for source in sources:
        derived = _check_names(source, user, "forward")
        assert set(_params(fn)) <= derived, source
    # the linear function's named code is the jvp: compare it with the jvp program
    tangents = [np.full(np.shape(a), 0.5) for a in args]
    want = interpret(jvp_program(prog), *args, *tangents)[len(prog.outputs):]
    got = lin(*tangents)
    np.testing.assert_allclose(got, want[0], rtol=1e-12, atol=1e-14)


def test_jacfwd_and_hessian_sources_follow_the_user():
    fn, args, user = CASES["seed000"]
    j = wg.jacfwd(fn, argnums=(0, 1), engine="source")
    j(*args)
    assert {"q", "v"} <= _check_names(j.source, user, "forward")
    h = wg.hessian(fn, argnums=0, engine="source")
    h(*args)
    # forward over reverse: the tangent of the cotangent of x is d_ct_x
    assert re.search(r"^\s+d_ct_x = ", h.source, re.M), h.source


# --- name and role through every transform ----------------------------------------------
def _defined(prog):
    """Every variable a Program defines, its sub-programs' included."""
    out = list(prog.inputs)
    for eqn in prog.eqns:
        for sub in programs_in(eqn.params):
            out += _defined(sub)
        out += list(eqn.outputs)
    return out


def _labels(vs):
    return [(v.name, v.role) for v in vs if not isinstance(v, Lit)]


def _check_program(prog, user, roles):
    verify(prog)
    for v in _defined(prog):
        assert v.name in user or v.name == "", (v, str(prog))
        assert v.role in roles, (v, str(prog))


@pytest.mark.parametrize("case", IDS)
def test_name_and_role_survive_every_transform(case):
    fn, args, user = CASES[case]
    user = user | {""}
    prog = wg.make_program(fn, *args, engine="source")
    params = list(_params(fn))
    ins = [(p, Role.VALUE) for p in params]
    outs = _labels(prog.outputs)
    assert _labels(prog.inputs) == ins
    _check_program(prog, user, {Role.VALUE})

    fwd = jvp_program(prog)
    assert _labels(fwd.inputs) == ins + [(p, Role.TANGENT) for p in params]
    assert _labels(fwd.outputs) == outs + [(n, Role.TANGENT) for n, _ in outs]
    _check_program(fwd, user, {Role.VALUE, Role.TANGENT})
    assert "d_" + params[0] in str(fwd)

    mask = [True] * len(params)
    known, lin = linearize_program(prog, mask)[:2]
    nres = len(lin.inputs) - len(params)
    assert _labels(lin.inputs[nres:]) == [(p, Role.TANGENT) for p in params]
    assert all(v.role is Role.RESIDUAL for v in lin.inputs[:nres])
    assert _labels(lin.outputs) == [(n, Role.TANGENT) for n, _ in outs]
    _check_program(known, user, {Role.VALUE})
    _check_program(lin, user, {Role.VALUE, Role.TANGENT, Role.RESIDUAL})

    rev = transpose_program(lin, [False] * nres + mask)
    assert _labels(rev.inputs) == _labels(lin.inputs[:nres]) + [
        (n, Role.COTANGENT) for n, _ in outs]
    assert _labels(rev.outputs) == [(p, Role.COTANGENT) for p in params]
    _check_program(rev, user, {Role.VALUE, Role.COTANGENT, Role.RESIDUAL})

    both = vjp_program(prog)
    assert _labels(both.inputs) == ins + [(n, Role.COTANGENT) for n, _ in outs]
    assert _labels(both.outputs) == outs + [(p, Role.COTANGENT) for p in params]
    _check_program(both, user, {Role.VALUE, Role.COTANGENT, Role.RESIDUAL})
    assert "ct_" + params[0] in str(both)

    for p in (fwd, lin, rev, both):
        simple = simplify(p)
        # simplify keeps the inputs; a variable it keeps or makes has a
        # name and role of the program's (an output may become the variable
        # it copies)
        assert _labels(simple.inputs) == _labels(p.inputs)
        assert set(_labels(_defined(simple))) <= set(_labels(_defined(p)))


def test_explicit_dup_numbers_the_copies_and_keeps_the_role():
    prog = jvp_program(wg.make_program(seed000, 2.0, 3.0, engine="source"))
    dup = verify(explicit_dup(prog))
    names = {label(v.name, v.role) for v in _defined(dup)}
    # x and p are used twice, and so are their tangents (seed 000's dup form)
    assert {"x1", "x2", "p1", "p2", "d_x1", "d_x2", "d_p1", "d_p2"} <= names
    assert interpret(dup, 2.0, 3.0, 1.0, 0.5) == interpret(prog, 2.0, 3.0, 1.0, 0.5)


# --- the one naming function ------------------------------------------------------------
@pytest.mark.parametrize("role, printed", [
    (Role.VALUE, "p"), (Role.TANGENT, "d_p"), (Role.COTANGENT, "ct_p"), (Role.RESIDUAL, "p"),
], ids=lambda x: getattr(x, "name", x))
def test_label(role, printed):
    assert label("p", role) == printed
    assert label("", role) == ""        # nameless: the role prefix and a counter at print time


@pytest.mark.parametrize("role, new, want", [
    (Role.VALUE, Role.TANGENT, ("p", Role.TANGENT)),
    (Role.VALUE, Role.COTANGENT, ("p", Role.COTANGENT)),
    (Role.TANGENT, Role.COTANGENT, ("p", Role.COTANGENT)),     # transpose: d_p -> ct_p
    (Role.TANGENT, Role.TANGENT, ("d_p", Role.TANGENT)),       # second order: d_d_p
    (Role.COTANGENT, Role.TANGENT, ("ct_p", Role.TANGENT)),    # forward over reverse: d_ct_p
    (Role.VALUE, Role.RESIDUAL, ("p", Role.RESIDUAL)),
], ids=lambda x: getattr(x, "name", None))
def test_derive(role, new, want):
    assert derive("p", role, new) == want
    assert derive("", role, new) == ("", new)


def test_nameless_values_get_role_prefixes():
    """A traced function has no user names but its parameters': the body is
    ``v``, tangents ``t``, cotangents ``ct``, residuals ``r``."""
    def f(x):
        return np.sin(x) * np.cos(x)

    prog = wg.make_program(f, 0.5, engine="trace")
    known, lin = linearize_program(prog, [True])[:2]
    text = str(lin)
    assert re.search(r"\br\d+: f64\[\]", text) and re.search(r"\bt\d+ = ", text), text
    rev = str(vjp_program(prog))
    assert re.search(r"\bct\d+ = ", rev) and "ct_x" in rev, rev
    assert re.search(r"\bv\d+ = ", str(jvp_program(prog)))
