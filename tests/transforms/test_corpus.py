"""The transforms (``wengert/transforms/``: jvp, partial_eval, transpose,
vjp) on the corpus of cases.py, traced (trace frontend) and evaluated by the
NumPy interpreter.

* grad / vjp / jvp against finite differences;
* the dot-product test on ``linearize``'s linear function against ``vjp``;
* Autodidax's commuting diagram: ``vjp == linear_transpose(linearize)`` and
  ``jvp == linearize applied``;
* ``verify`` after every Program -> Program transform, and the transformed
  programs compute what the API computes;
* ``jacfwd == jacrev == FD``; ``hessian`` against FD of the gradient;
* linearize's program holds linear primitives only.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import aval_of, verify
from wengert.core.pytree import flatten
from wengert.core.trace import eval_program
from wengert.frontends.trace import flat_function
from wengert.transforms.jvp import jvp_program
from wengert.transforms.partial_eval import linearize_flat
from wengert.transforms.transpose import transpose_program
from wengert.transforms.vjp import vjp_program

from cases import CORPUS
from checks import (assert_close, dot_product_check, fd_jacobian, fd_jvp, inner, instantiate,
                    jacobian_matrix, random_like, rtol)


NAMES = sorted(CORPUS)
SCALAR = [n for n in NAMES if CORPUS[n].scalar]


def by_name(names):
    return pytest.mark.parametrize("name", names, ids=names)


def _rng(name, salt):
    return np.random.default_rng(zlib.crc32(f"{name}:{salt}".encode()))


def _setup(name):
    """(fn, args, tangent v, output, output cotangent u)."""
    prog = CORPUS[name]
    args = prog.args
    v = random_like(args, _rng(name, "v"))
    out = prog.fn(*args)
    u = random_like(out, _rng(name, "u"))
    return prog.fn, args, v, out, u


def _leaves(tree):
    return flatten(tree)[0]


def _argnums(args):
    return tuple(range(len(args)))


# --- against finite differences ----------------------------------------------
@by_name(NAMES)
def test_jvp_matches_finite_differences(name):
    fn, args, v, out, _ = _setup(name)
    out_ad, out_dot = wg.jvp(fn, args, v)
    assert_close(out_ad, out, rtol("exact", args), what="jvp primal output")
    assert_close(out_dot, fd_jvp(fn, args, v), rtol("program", args), what="jvp vs FD")


@by_name(NAMES)
def test_vjp_matches_finite_differences(name):
    fn, args, v, out, u = _setup(name)
    out_ad, pullback = wg.vjp(fn, *args)
    assert_close(out_ad, out, rtol("exact", args), what="vjp primal output")
    ct = pullback(u)
    assert isinstance(ct, tuple) and len(ct) == len(args)
    for c, a in zip(_leaves(ct), _leaves(args)):
        assert np.shape(c) == np.shape(a)
    lhs = inner(ct, v)
    rhs = inner(u, fd_jvp(fn, args, v))
    tol = rtol("program", args)
    assert abs(lhs - rhs) <= tol * max(1.0, abs(lhs), abs(rhs)), \
        f"<vjp(u), v> = {lhs!r}, <u, FD jvp(v)> = {rhs!r}"


@by_name(SCALAR)
def test_grad_matches_finite_differences(name):
    fn, args, v, out, _ = _setup(name)
    value, g = wg.value_and_grad(fn, argnums=_argnums(args))(*args)
    assert_close(value, out, rtol("exact", args), what="value")
    assert isinstance(g, tuple) and len(g) == len(args)
    for gl, a in zip(_leaves(g), _leaves(args)):
        assert np.shape(gl) == np.shape(a)
        assert np.asarray(gl).dtype == np.asarray(a).dtype or not isinstance(a, np.ndarray)
    fd = float(np.sum(fd_jvp(fn, args, v)))
    got = inner(g, v)
    tol = rtol("program", args)
    assert abs(got - fd) <= tol * max(1.0, abs(fd)), f"<grad, v> = {got!r}, FD = {fd!r}"
    # grad is the pullback of 1
    _, pullback = wg.vjp(fn, *args)
    assert_close(g, pullback(np.ones((), np.asarray(out).dtype)), rtol("exact", args),
                 what="grad vs pullback(1)")


# --- linearize, transpose and the commuting diagram ------------------------------
@by_name(NAMES)
def test_linearize_dot_product_against_vjp(name):
    fn, args, v, out, u = _setup(name)
    out_lin, lin = wg.linearize(fn, *args)
    assert_close(out_lin, out, rtol("exact", args), what="linearize primal output")
    _, pullback = wg.vjp(fn, *args)
    dot_product_check(u, lin(*v), pullback(u), v, rtol("exact", args),
                      what="<u, linearize(v)> vs <vjp(u), v>")


@by_name(NAMES)
def test_vjp_equals_transpose_of_linearize(name):
    fn, args, v, out, u = _setup(name)
    _, lin = wg.linearize(fn, *args)
    lin_t = wg.linear_transpose(lin, *args)
    _, pullback = wg.vjp(fn, *args)
    assert_close(lin_t(u), pullback(u), rtol("exact", args), what="transpose(linearize) vs vjp")
    dot_product_check(u, lin(*v), lin_t(u), v, rtol("exact", args),
                      what="linear_transpose dot-product test")


@by_name(NAMES)
def test_jvp_equals_linearize_applied(name):
    fn, args, v, out, _ = _setup(name)
    _, lin = wg.linearize(fn, *args)
    _, out_dot = wg.jvp(fn, args, v)
    assert_close(lin(*v), out_dot, rtol("exact", args), what="linearize(v) vs jvp")


# --- Program -> Program transforms: verify, and the same values ---------------------
@by_name(NAMES)
def test_program_transforms_verify_and_agree_with_the_api(name):
    fn, args, v, out, u = _setup(name)
    leaves = _leaves(args)
    v_leaves = _leaves(v)
    u_leaves = _leaves(u)
    tol = rtol("exact", args)
    prog = verify(wg.make_program(fn, *args))
    assert_close(eval_program(prog, leaves), _leaves(out), tol, what="traced program")

    jprog = verify(jvp_program(prog))
    _, out_dot = wg.jvp(fn, args, v)
    got = eval_program(jprog, leaves + v_leaves)
    n = len(prog.outputs)
    assert_close(got[:n], _leaves(out), tol, what="jvp_program outputs")
    assert_close(got[n:], _leaves(out_dot), tol, what="jvp_program tangents")

    vprog = verify(vjp_program(prog))
    _, pullback = wg.vjp(fn, *args)
    want_ct = _leaves(pullback(u))
    got = eval_program(vprog, leaves + u_leaves)
    assert_close(got[:n], _leaves(out), tol, what="vjp_program outputs")
    assert_close(instantiate(got[n:]), want_ct, tol, what="vjp_program cotangents")

    flat, flat_leaves, _, _ = flat_function(fn, args)
    outs, lin = linearize_flat(flat, flat_leaves)
    verify(lin)
    assert_close(eval_program(lin, v_leaves), _leaves(out_dot), tol, what="linear program")
    tprog = verify(transpose_program(lin))
    assert_close(eval_program(tprog, u_leaves), want_ct, tol, what="transposed linear program")

    # second order, staged: forward over reverse and reverse over forward
    verify(jvp_program(vprog))
    verify(vjp_program(jprog))


@by_name(NAMES)
def test_transforms_do_not_mutate_their_input(name):
    fn, args, _, _, _ = _setup(name)
    prog = wg.make_program(fn, *args)
    text, eqns = str(prog), list(prog.eqns)
    jvp_program(prog)
    vjp_program(prog)
    assert str(prog) == text and prog.eqns == eqns
    flat, flat_leaves, _, _ = flat_function(fn, args)
    _, lin = linearize_flat(flat, flat_leaves)
    lin_text = str(lin)
    transpose_program(lin)
    assert str(lin) == lin_text


@by_name(NAMES)
def test_linear_program_holds_only_transposable_primitives(name):
    fn, args, _, _, _ = _setup(name)
    flat, leaves, _, _ = flat_function(fn, args)
    for reverse in (True, False):
        _, lin = linearize_flat(flat, leaves, reverse=reverse)
        assert lin.eqns, "a differentiable program has a non-empty linear program"
        bad = sorted({e.prim.name for e in lin.eqns if not e.prim.linear})
        assert not bad, f"linear program (reverse={reverse}) holds non-linear primitives {bad}:\n{lin}"


# --- Jacobians and Hessians ---------------------------------------------------------
def _in_avals(args):
    return [aval_of(x) for x in _leaves(args)]


def _out_avals(out):
    return [aval_of(x) for x in _leaves(out)]


@by_name(NAMES)
def test_jacfwd_equals_jacrev_equals_finite_differences(name):
    fn, args, _, out, _ = _setup(name)
    nums = _argnums(args)
    j_fwd = jacobian_matrix(wg.jacfwd(fn, nums)(*args), _out_avals(out), _in_avals(args))
    j_rev = jacobian_matrix(wg.jacrev(fn, nums)(*args), _out_avals(out), _in_avals(args))
    j_fd = fd_jacobian(fn, args)
    assert j_fwd.shape == j_fd.shape
    assert_close(j_fwd, j_rev, rtol("ad", args), what="jacfwd vs jacrev")
    assert_close(j_fwd, j_fd, rtol("program", args), what="jacfwd vs FD")
    assert_close(j_rev, j_fd, rtol("program", args), what="jacrev vs FD")


@by_name(SCALAR)
def test_hessian_matches_finite_differences_of_the_gradient(name):
    fn, args, _, _, _ = _setup(name)
    nums = _argnums(args)
    grad_fn = wg.grad(fn, argnums=nums)
    g = grad_fn(*args)
    h = jacobian_matrix(wg.hessian(fn, nums)(*args), _out_avals(g), _in_avals(args))
    h_fd = fd_jacobian(grad_fn, args)
    assert_close(h, h_fd, rtol("hessian", args), what="hessian vs FD of grad")
    assert_close(h, h.T, rtol("ad", args), what="hessian symmetry")
