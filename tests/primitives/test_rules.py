"""The primitive table, row by row (STYLE.md section 6).

Every test is parametrized over ``sorted(PRIMITIVES)`` (restricted to the
primitives a property applies to) with the primitive name as the test id, and
runs each case of ``cases.SPECS[name]``; a failure names the case.

* completeness: impl, abstract_eval, jvp present; transpose a rule or
  NOT_LINEAR; a cases.py entry exists;
* impl vs a NumPy reference; abstract_eval vs impl's shape and dtype;
* jvp rule vs finite differences; jvp of jvp (nested ``wengert.jvp``);
* linear primitives: the dot-product test on the transpose rule;
* a staged jvp (and vjp) of the primitive passes ``verify`` and computes the
  rule's values;
* through the public wrapper: ``check_grads`` to order 2, both modes;
* batching: every row has a batch rule (completeness), and on a batch of operands (all
  batched, and each alone, the others shared by the batch) ``wg.vmap`` of the row gives
  the values and dtypes of a loop over the batch, and the jvp of the batched row is the
  loop of the examples' jvps (``batch_checks``).
"""
from __future__ import annotations

import traceback
import zlib

import numpy as np
import pytest

import wengert
from wengert.core.ir import aval_of, verify
from wengert.primitives import PRIMITIVES
from wengert.core.primitive import BY_IMPL, NOT_LINEAR, Linear, Zero
from wengert.core.trace import bind, eval_program
from wengert.testing import check_grads
from wengert.transforms.jvp import jvp_program
from wengert.transforms.vjp import vjp_program

from cases import API, DIFF, NONDIFF, SPECS, STOPPED, ZERO_DERIV
from checks import (assert_close, dot_product_check, fd_jvp, instantiate, is_f32, random_like,
                    rtol, upcast)
from batch_checks import assert_batched, assert_batched_jvp

ALL_NAMES = sorted(PRIMITIVES)


def _names(*modes, linear=None):
    """Primitives whose spec has one of ``modes`` (and, if given, whose
    transpose is a rule), sorted; a primitive without a spec is left to the
    completeness test, which fails for it."""
    out = []
    for name in ALL_NAMES:
        spec = SPECS.get(name)
        if spec is None or spec.mode not in modes:
            continue
        if linear is not None and PRIMITIVES[name].linear != linear:
            continue
        out.append(name)
    return out


def by_name(names):
    return pytest.mark.parametrize("name", names, ids=names)


def for_each_case(name, check, modes=None):
    """Run ``check(name, prim, spec, case, operands)`` on every case of
    ``name`` whose mode is in ``modes``; report all failing cases at once."""
    spec = SPECS[name]
    prim = PRIMITIVES[name]
    failures, ran = [], 0
    for case in spec.cases:
        if modes is not None and spec.mode_of(case) not in modes:
            continue
        ran += 1
        try:
            check(name, prim, spec, case, case.operands(name))
        except Exception as e:  # noqa: BLE001 - each failing case is reported with its id
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-4))
            failures.append(f"--- {name} / {case.id} ---\n{tb}")
    assert ran > 0, f"{name}: no case of modes {modes} in cases.py"
    if failures:
        pytest.fail(f"{len(failures)} of {ran} cases failed:\n" + "\n".join(failures),
                    pytrace=False)


def _merge(case, operands, diff_vals):
    """The operand list with the differentiated positions replaced."""
    full = list(operands)
    for i, v in zip(case.diff_positions, diff_vals):
        full[i] = v
    return full


def _applied(prim, case, operands):
    """The primitive as a function of its differentiated operands only."""
    def f(*diff_vals):
        return bind(prim, *_merge(case, operands, diff_vals), **case.params)
    f.__name__ = prim.name
    return f


def _via_wrapper(spec, case, operands):
    def f(*diff_vals):
        return spec.wrapper(*_merge(case, operands, diff_vals), **case.wrapper_params)
    return f


def _seed(*parts):
    """A stable seed (crc32; ``hash`` of a string changes between runs)."""
    return zlib.crc32(":".join(map(str, parts)).encode())


def _tangents(name, case, operands, salt):
    """Random tangents of the differentiated operands, made admissible
    (symmetric for cholesky) by the case."""
    rng = np.random.default_rng(_seed(name, case.id, salt))
    ts = [random_like(operands[i], rng) for i in case.diff_positions]
    return list(case.tangent(ts)) if case.tangent else ts


def _diff(case, operands):
    return [operands[i] for i in case.diff_positions]


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


# --- completeness --------------------------------------------------------------
@by_name(ALL_NAMES)
def test_completeness(name):
    prim = PRIMITIVES[name]
    assert name in SPECS, (f"primitive {name!r} has no entry in tests/cases.py SPECS: add its "
                           "cases (operands, domain, params), a NumPy reference and its wrapper")
    spec = SPECS[name]
    assert prim.name == name
    assert callable(prim.impl), f"{name}: impl missing"
    assert prim.transpose is NOT_LINEAR or callable(prim.transpose), \
        f"{name}: transpose must be a rule or NOT_LINEAR, got {prim.transpose!r}"
    assert prim.batch is not None, (
        f"{name}: no batch rule: give the row's constructor batch= (a rule, BROADCASTING for "
        "a row that maps over its operands' leading axes, PER_LANE for one that runs once "
        "per example), so wg.vmap and Jacobians can batch it")
    if spec.mode == API:
        assert spec.reason, f"{name}: an API-tested primitive needs a reason"
        assert callable(prim.jvp) or prim.jvp is BY_IMPL
        assert prim.inline or callable(prim.abstract_eval), \
            f"{name}: only inline primitives may lack abstract_eval"
        return
    assert callable(prim.abstract_eval), f"{name}: abstract_eval missing"
    assert spec.cases, f"{name}: no cases"
    assert callable(spec.reference) and callable(spec.wrapper)
    if spec.mode == NONDIFF:
        assert prim.differentiable is False, \
            f"{name}: listed as not differentiable, but its row says it is"
        assert prim.transpose is NOT_LINEAR
    elif spec.mode == ZERO_DERIV and not prim.differentiable:
        pass        # constant almost everywhere: its outputs carry no tangent
    else:
        assert prim.differentiable is True
        assert callable(prim.jvp) or prim.jvp is BY_IMPL, \
            f"{name}: differentiable but has no jvp rule"
    # the spec's linear operands and the row's transpose agree
    declares_linear = any(spec.linear_groups(c) for c in spec.cases)
    assert declares_linear == prim.linear, \
        (f"{name}: transpose is {'a rule' if prim.linear else 'NOT_LINEAR'} but cases.py "
         f"{'declares' if declares_linear else 'does not declare'} linear operands")


def test_no_stale_specs():
    stale = sorted(set(SPECS) - set(PRIMITIVES))
    assert not stale, f"cases.py describes primitives that are not registered: {stale}"


# --- impl and abstract_eval ------------------------------------------------------
def _check_impl(name, prim, spec, case, ops):
    out = prim.impl(*ops, **case.params)
    want = spec.reference(*ops, **case.wrapper_params)
    if prim.multiple_results:
        assert isinstance(out, tuple) and len(out) == len(want)
    got_leaves, want_leaves = _leaves(out), _leaves(want)
    for g, w in zip(got_leaves, want_leaves):
        if np.asarray(w).dtype.kind in "biu":
            assert np.array_equal(np.asarray(g), np.asarray(w)), f"{g} != {w}"
            assert np.asarray(g).dtype.kind == np.asarray(w).dtype.kind
    floats = [(g, w) for g, w in zip(got_leaves, want_leaves)
              if np.asarray(w).dtype.kind in "fc"]
    if floats:
        assert_close([g for g, _ in floats], [w for _, w in floats],
                     rtol("ref", case.dtype), what="impl vs reference")


@by_name(_names(DIFF, ZERO_DERIV, NONDIFF, STOPPED))
def test_impl_matches_numpy_reference(name):
    for_each_case(name, _check_impl)


def _check_abstract_eval(name, prim, spec, case, ops):
    out = prim.impl(*ops, **case.params)
    avals = prim.abstract_eval(*[aval_of(o) for o in ops], **case.params)
    outs = list(out) if prim.multiple_results else [out]
    avals = list(avals) if prim.multiple_results else [avals]
    assert len(avals) == len(outs)
    for a, o in zip(avals, outs):
        # a None is a length known only at run time (np.nonzero): any length matches it
        assert len(a.shape) == np.ndim(o) and all(
            d is None or d == n for d, n in zip(a.shape, np.shape(o))), \
            f"abstract_eval shape {a.shape}, impl {np.shape(o)}"
        assert a.dtype == np.asarray(o).dtype, f"abstract_eval dtype {a.dtype}, impl {np.asarray(o).dtype}"
        if case.dtype == np.float32 and np.asarray(o).dtype.kind == "f" and "dtype" not in case.params:
            assert a.dtype == np.float32, "float32 operands must give a float32 result"


@by_name(_names(DIFF, ZERO_DERIV, NONDIFF, STOPPED))
def test_abstract_eval_matches_impl(name):
    for_each_case(name, _check_abstract_eval)


# --- jvp rules ---------------------------------------------------------------------
def _rule_jvp(prim, case, ops, tans):
    """The row's jvp rule at ``ops``; for a row whose outputs carry no tangent
    (``differentiable=False``), forward mode's (``JVPTrace``) over the row."""
    if not prim.differentiable:
        return wengert.jvp(_applied(prim, case, ops), tuple(_diff(case, ops)), tuple(tans),
                           engine="trace")
    full_t = [Zero(aval_of(o)) for o in ops]
    for i, t in zip(case.diff_positions, tans):
        full_t[i] = t
    return prim.jvp(tuple(ops), tuple(full_t), **case.params)


def _check_jvp(name, prim, spec, case, ops):
    tans = _tangents(name, case, ops, "jvp")
    out, out_dot = _rule_jvp(prim, case, ops, tans)
    assert_close(out, prim.impl(*ops, **case.params), rtol("exact", case.dtype),
                 what="jvp primal output vs impl")
    want = fd_jvp(_applied(prim, case, ops), _diff(case, ops), tans)
    if spec.mode_of(case) in (ZERO_DERIV, STOPPED):
        for t in _leaves(out_dot):
            assert isinstance(t, Zero) or not np.any(t), f"zero-derivative jvp gave {t}"
        if spec.mode_of(case) == ZERO_DERIV:
            assert_close(want, np.zeros_like(want), 0.0,
                         what="finite differences of a step function")
        return
    assert_close(instantiate(out_dot), want, rtol("jvp", case.dtype, out), what="jvp rule vs FD")
    for o, t in zip(_leaves(out), _leaves(out_dot)):
        if not isinstance(t, Zero):
            # float32 stays float32: a tangent has its primal's dtype
            assert np.asarray(t).dtype == np.asarray(o).dtype, \
                f"tangent dtype {np.asarray(t).dtype} differs from output dtype {np.asarray(o).dtype}"


@by_name(_names(DIFF, ZERO_DERIV, STOPPED))
def test_jvp_rule_matches_finite_differences(name):
    """(``stop_gradient``, ``STOPPED``: a zero tangent, whatever the finite differences.)"""
    for_each_case(name, _check_jvp, modes=(DIFF, ZERO_DERIV, STOPPED))


def _check_jvp_of_jvp(name, prim, spec, case, ops):
    f = _applied(prim, case, ops)
    v = tuple(_tangents(name, case, ops, "v"))
    w = tuple(_tangents(name, case, ops, "w"))

    def f_dot(*xs):
        return wengert.jvp(f, xs, v)[1]

    x = tuple(_diff(case, ops))
    _, f_ddot = wengert.jvp(f_dot, x, w)
    want = fd_jvp(f_dot, x, w)
    assert_close(f_ddot, want, rtol("jvp2", case.dtype, f_ddot), what="jvp of jvp vs FD of jvp")


@by_name(_names(DIFF, ZERO_DERIV, STOPPED))
def test_jvp_of_jvp_matches_finite_differences(name):
    for_each_case(name, _check_jvp_of_jvp, modes=(DIFF, ZERO_DERIV, STOPPED))


# --- transpose rules of linear primitives -------------------------------------------
def _check_transpose(name, prim, spec, case, ops):
    groups = spec.linear_groups(case)
    for group in groups:
        rng = np.random.default_rng(_seed(name, case.id, group))
        t = [random_like(ops[i], rng) for i in group]

        def apply(*ts):
            full = list(ops)
            for i, ti in zip(group, ts):
                full[i] = ti
            return prim.impl(*full, **case.params)

        # the operands outside the group are held fixed, so t -> apply(t) may
        # be affine (add(t, y)); its linear part is apply(t) - apply(0)
        offset = apply(*[np.zeros_like(ti) for ti in t])
        lin_t = [np.asarray(a) - np.asarray(b) for a, b in zip(_leaves(apply(*t)), _leaves(offset))]
        lin_t = tuple(lin_t) if prim.multiple_results else lin_t[0]
        ct = random_like(lin_t, rng)
        markers = [Linear(aval_of(o)) if i in group else o for i, o in enumerate(ops)]
        cts = prim.transpose(ct, *markers, **case.params)
        assert len(cts) == len(ops), f"{len(cts)} cotangents for {len(ops)} operands"
        for i, c in enumerate(cts):
            if i not in group:
                assert c is None, f"operand {i} is not linear but received a cotangent"
                continue
            c = instantiate(c)
            assert np.shape(c) == np.shape(ops[i]), \
                f"cotangent of operand {i} has shape {np.shape(c)}, operand {np.shape(ops[i])}"
            assert np.asarray(c).dtype == np.asarray(ops[i]).dtype, \
                f"cotangent of operand {i} has dtype {np.asarray(c).dtype}"
        dot_product_check(ct, lin_t, [cts[i] for i in group], t,
                          rtol("exact", case.dtype, lin_t), what=f"transpose in operands {group}")
        if not prim.multiple_results and np.shape(lin_t) == () and lin_t.dtype == np.float64:
            # a scalar cotangent reaches a rule as a Python float too (a
            # transposed branch's 0.0, grad's seed 1.0): same cotangents
            py_cts = prim.transpose(float(ct), *markers, **case.params)
            for i in group:
                assert_close(py_cts[i], cts[i], 1e-15,
                             what=f"transpose of a Python-float cotangent, operand {i}")


@by_name(_names(DIFF, ZERO_DERIV, linear=True))
def test_transpose_rule_dot_product(name):
    spec = SPECS[name]
    assert any(spec.linear_groups(c) for c in spec.cases), f"{name}: no linear case"
    for_each_case(name, _check_transpose)


@by_name(_names(DIFF, ZERO_DERIV, NONDIFF, STOPPED, linear=False))
def test_nonlinear_primitive_declares_no_linear_operands(name):
    spec = SPECS[name]
    assert PRIMITIVES[name].transpose is NOT_LINEAR
    assert not any(spec.linear_groups(c) for c in spec.cases)


# --- staging: jvp and vjp of a one-equation program ---------------------------------
def _check_staged(name, prim, spec, case, ops):
    f = _applied(prim, case, ops)
    x = _diff(case, ops)
    prog = verify(wengert.make_program(f, *x, engine="trace"))
    assert [e.prim.name for e in prog.eqns] == [name]
    n_out = len(prog.outputs)

    jprog = verify(jvp_program(prog))
    tans = _tangents(name, case, ops, "stage")
    got = eval_program(jprog, x + tans)
    want_out, want_dot = _rule_jvp(prim, case, ops, tans)
    tol = rtol("exact", case.dtype, want_out)
    assert_close(got[:n_out], _leaves(want_out), tol, what="staged jvp: outputs")
    assert_close(got[n_out:], _leaves(instantiate(want_dot)), tol, what="staged jvp: tangents")

    vprog = verify(vjp_program(prog))
    rng = np.random.default_rng(_seed(name, case.id, "ct"))
    outs = _leaves(want_out)
    float_outs = [np.asarray(o).dtype.kind in "fc" for o in outs]
    cts = [random_like(o, rng) if fl else np.zeros(np.shape(o), np.asarray(o).dtype)
           for o, fl in zip(outs, float_outs)]
    res = eval_program(vprog, x + cts)
    assert_close(res[:n_out], outs, tol, what="staged vjp: outputs")
    in_cts = res[n_out:]
    assert len(in_cts) == len(x)
    # reverse (staged vjp) against forward (the rule): <ct, J t> == <J^T ct, t>
    dots = [d for d, fl in zip(_leaves(instantiate(want_dot)), float_outs) if fl]
    if any(np.any(d) for d in dots):
        dot_product_check([c for c, fl in zip(cts, float_outs) if fl], dots, in_cts, tans, tol,
                          what="staged vjp vs jvp rule")
    else:
        assert_close(in_cts, [np.zeros_like(t) for t in tans], 0.0, what="zero cotangents")


@by_name(_names(DIFF, ZERO_DERIV, STOPPED))
def test_staged_jvp_and_vjp_verify_and_agree(name):
    for_each_case(name, _check_staged, modes=(DIFF, ZERO_DERIV, STOPPED))


# --- the public wrapper, both modes, second order -----------------------------------
def _check_wrapper(name, prim, spec, case, ops):
    f = _via_wrapper(spec, case, ops)
    x = _diff(case, ops)
    prog = wengert.make_program(f, *x)
    assert name in [e.prim.name for e in prog.eqns], \
        f"the wrapper does not apply {name}: {[e.prim.name for e in prog.eqns]}"
    out = f(*x)
    assert_close(_leaves(out), _leaves(spec.reference(*ops, **case.wrapper_params)),
                 rtol("ref", case.dtype), what="wrapper vs reference")
    if is_f32(out) and not is_f32(x):
        # check_grads picks its step from the inputs' dtype only (see
        # test_check_grads_float32_output_of_float64_inputs); give the float32 one
        check_grads(f, tuple(x), order=2, modes=("fwd", "rev"), eps=1e-3, rtol=2e-2)
    else:
        check_grads(f, tuple(x), order=2, modes=("fwd", "rev"))
    # forward mode keeps each output's dtype (float32 stays float32)
    _, out_dot = wengert.jvp(f, tuple(x), tuple(_tangents(name, case, ops, "wrapper")))
    for o, t in zip(_leaves(out), _leaves(out_dot)):
        assert np.asarray(t).dtype == np.asarray(o).dtype, \
            f"wengert.jvp: tangent dtype {np.asarray(t).dtype} for an output of {np.asarray(o).dtype}"


@by_name(_names(DIFF, ZERO_DERIV))
def test_wrapper_check_grads_both_modes_order_2(name):
    for_each_case(name, _check_wrapper, modes=(DIFF, ZERO_DERIV))


def test_check_grads_float32_output_of_float64_inputs():
    """wengert.testing.check_grads on a correct derivative whose function
    returns float32 for float64 inputs (``x.astype(np.float32)``): its step
    (1e-6, chosen from the inputs' dtype) divides the output's float32 rounding
    (6e-8) into errors of ~5e-2, so it reports a false failure."""
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3) + 0.123

    def f(x):
        return np.sin(x).astype(np.float32)

    out, out_dot = wengert.jvp(f, (x,), (np.ones_like(x),))
    assert out.dtype == np.float32
    assert_close(out_dot, np.cos(x), 1e-6, what="jvp of astype(float32)")
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))


# --- non-differentiable primitives ---------------------------------------------------
def _float_operands(ops):
    """Positions of float array operands (Python scalars stay constants)."""
    return [i for i, o in enumerate(ops)
            if isinstance(o, np.ndarray) and o.dtype.kind == "f"]


def _check_zero_tangent(name, prim, spec, case, ops):
    floats = _float_operands(ops)
    assert floats, "needs a float operand"

    def f(*xs):
        full = list(ops)
        for i, xi in zip(floats, xs):
            full[i] = xi
        return bind(prim, *full, **case.params)

    x = tuple(upcast(ops[i]) for i in floats)
    v = tuple(np.ones_like(xi) for xi in x)
    out, out_dot = wengert.jvp(f, x, v)
    want = prim.impl(*[upcast(o) for o in ops], **case.params)
    for o, t, w in zip(_leaves(out), _leaves(out_dot), _leaves(want)):   # several results
        assert np.shape(t) == np.shape(o)
        assert not np.any(t), f"tangent of a non-differentiable output: {t}"
        np.testing.assert_array_equal(o, w)


# comparisons, argmax, isfinite: a jvp can be taken with respect to their operands
_NONDIFF_ON_FLOATS = [n for n in _names(NONDIFF)
                      if all(_float_operands(c.operands(n)) for c in SPECS[n].cases)]


@by_name(_NONDIFF_ON_FLOATS)
def test_nondifferentiable_output_has_zero_tangent(name):
    for_each_case(name, _check_zero_tangent)


# --- batching: a batch of operands against a loop over it ----------------------------
_BATCH = 3


def _batch_patterns(ops):
    """Which operands are batched: every array operand, then each alone."""
    arrays = tuple(i for i, o in enumerate(ops) if isinstance(o, np.ndarray))
    return [arrays] + ([(i,) for i in arrays] if len(arrays) > 1 else [])


# rows whose result's length depends on the values (bincount: where no length is given):
# each example of a batch may have its own, so the batch rule refuses with a typed error
_VALUE_SHAPED = {"nonzero", "unique_positions", "bincount", "bincount_weights"}


def _value_shaped(name, case):
    return name in _VALUE_SHAPED and case.params.get("length", None) is None


def _check_batch(name, prim, spec, case, ops):
    examples = []
    for b in range(_BATCH):
        rng = np.random.default_rng(_seed(name, case.id, "example", b))
        examples.append([a.draw(rng, case.dtype) for a in case.args])

    def fn(*xs):
        return bind(prim, *xs, **case.params)
    fn.__name__ = name
    tol = rtol("batch", case.dtype)
    for pattern in _batch_patterns(ops):
        args = [np.stack([e[i] for e in examples]) if i in pattern else o
                for i, o in enumerate(ops)]
        in_axes = [0 if i in pattern else None for i in range(len(ops))]
        what = f"operands {pattern} batched"
        if _value_shaped(name, case):
            with pytest.raises(wengert.ShapeMismatchError, match="examples of a batch"):
                wengert.vmap(fn, in_axes=tuple(in_axes))(*args)
            continue
        assert_batched(fn, args, in_axes, tol, what=what)
        diff = case.diff_positions
        if spec.mode_of(case) in (DIFF, ZERO_DERIV) and diff:
            rng = np.random.default_rng(_seed(name, case.id, "batch-tangent", pattern))
            tangents = [random_like(args[i], rng) for i in diff]
            assert_batched_jvp(fn, args, in_axes, diff, tangents, tol, what=f"jvp, {what}")


@by_name(_names(DIFF, ZERO_DERIV, NONDIFF))
def test_batch_rule_matches_a_loop_over_the_batch(name):
    for_each_case(name, _check_batch)
