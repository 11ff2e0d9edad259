"""The source engine's side of the public API (``wengert/api/source.py``).

* ``engine="auto"`` falling back to tracing: with one warning per function
  (not per name, once for the closures of one def, remembered in a bounded
  table), drawing and printing what one plain call does;
* nested source-engine derivatives (third and fourth order, through
  helpers), and jvp and vjp of a source-engine gradient (Hessian-vector
  products; the gradient's Program replayed into the outer transformation
  must be a valid Program);
* the trace engine's ``if`` inside a source-engine function says what to do;
* keyword arguments at the call are inputs like positional ones.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import random
import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.api import fallback as api_fallback, source as api_source
from wengert.core import errors

import robust_cases as R
import robust_source_cases as rc
import source_cases as C
import trust_cases as tc
from checks import AD_VS_AD_RTOL_F64, EXACT_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jvp, rtol


# --- engine="auto" falling back mid-function ----------------------------------------
TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian")


def derivative(transform, fn, x, engine, **kw):
    """One call of ``transform`` of ``fn`` at ``x``: its values."""
    # a tangent of ones (x itself where x is not an array: a bad argument)
    tangent = np.ones_like(x) if isinstance(x, np.ndarray) else x
    if transform == "jvp":
        return wg.jvp(fn, (x,), (tangent,), engine=engine, **kw)
    if transform == "vjp":
        out, pullback = wg.vjp(fn, x, engine=engine, **kw)[:2]
        return out, pullback(1.0)
    if transform == "linearize":
        out, linear = wg.linearize(fn, x, engine=engine, **kw)
        return out, linear(tangent)
    return getattr(wg, transform)(fn, engine=engine, **kw)(x)


def _reseed():
    R.RS.seed(7)
    np.random.seed(7)
    R.GEN.bit_generator.state = np.random.default_rng(7).bit_generator.state
    random.seed(7)


def _after():
    """Where every generator is left, and what was printed, after a call."""
    return (R.RS.random_sample(), np.random.random_sample(), R.GEN.random(), random.random())


def _run(call):
    _reseed()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = call()
    return value, _after(), out.getvalue().count(R.PRINTED)


EFFECTS = ["draws_rs_then_refused", "draws_np_then_refused", "draws_gen_then_refused",
           "draws_random_then_refused", "prints_then_refused", "draws_rs_then_traced_index",
           "draws_gen_then_traced_index"]


@pytest.mark.filterwarnings("ignore:wengert.*trace engine:UserWarning")
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", EFFECTS)
def test_auto_fallback_mid_function_draws_and_prints_what_one_plain_call_does(name, transform):
    fn = getattr(R, name)
    x = np.array([0.3, -0.7])
    # the source engine refuses it after the draw or print (so auto falls back)
    with pytest.raises((errors.UnsupportedSyntax, errors.ConcretizationError)):
        _run(lambda: derivative(transform, fn, x, "source"))
    _, plain_after, plain_printed = _run(lambda: fn(x))
    got, after, printed = _run(lambda: derivative(transform, fn, x, "auto"))
    assert after == plain_after, "the generators are not where one plain call leaves them"
    assert printed == plain_printed == (name == "prints_then_refused")
    # the same draws as the trace engine's one run: the same derivative
    want, _, _ = _run(lambda: derivative(transform, fn, x, "trace"))
    assert_close(got, want, EXACT_RTOL_F64, what=f"{transform} of {name}")


def _fallback_warnings(calls):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = [call() for call in calls]
    return values, [str(w.message) for w in caught
                    if issubclass(w.category, UserWarning) and "trace engine" in str(w.message)]


def test_auto_fallback_warns_once_per_function_even_with_one_name():
    first, second = R.twin_first, R.twin_second
    assert first.__qualname__ == second.__qualname__ and first is not second
    for fn in (first, second):
        api_fallback.WARNED.discard(api_fallback.fallback_key(fn))
    values, messages = _fallback_warnings([
        lambda: wg.grad(first)(0.3), lambda: wg.grad(first)(0.5),
        lambda: wg.jvp(first, (0.3,), (1.0,))[1], lambda: wg.grad(second)(0.3),
        lambda: wg.vjp(second, 0.3)[1](1.0)[0]])
    assert len(messages) == 2, messages
    for message, fn in zip(messages, (first, second)):
        # each names its own function's try, at its own line
        assert f"robust_cases.py:{fn.__code__.co_firstlineno + 1}" in message, message
    assert_close(values, [np.cos(0.3), np.cos(0.5), np.cos(0.3), -np.sin(0.3), -np.sin(0.3)],
                 EXACT_RTOL_F64)


def test_auto_fallback_warns_once_for_the_closures_of_one_def():
    a, b = R.make_refused_closure(2.0), R.make_refused_closure(3.0)
    api_fallback.WARNED.discard(api_fallback.fallback_key(a))
    values, messages = _fallback_warnings([lambda: wg.grad(a)(0.3), lambda: wg.grad(b)(0.3)])
    assert len(messages) == 1, messages
    assert_close(values, [2.0 * np.cos(0.3), 3.0 * np.cos(0.3)], EXACT_RTOL_F64)


def test_fallback_warnings_are_remembered_in_a_bounded_table():
    seen = api_fallback.Seen(3)
    assert [seen.add(k) for k in "abca"] == [True, True, True, False]
    seen.add("d")           # "b" is now the oldest: forgotten
    assert len(seen) == 3 and "b" not in seen and {"a", "c", "d"} <= {k for k in "acd" if k in seen}
    assert seen.add("b") and "c" not in seen
    assert api_fallback.WARNED.size >= 1000      # large enough never to repeat in practice
    key = api_fallback.fallback_key(R.twin_first)
    assert key == (R.__file__, R.twin_first.__code__.co_firstlineno, "twin")


# --- auto falls back on a construct the source engine refuses ---------------------
UNSUPPORTED = [
    (C.uses_with, "with", "with "),
    (C.uses_del, "delete", "del "),
    (C.uses_import, "import", "import "),
    (C.uses_class, "class definition", "class "),
    (C.uses_yield, "yield", "yield "),
    (C.uses_async, "async def", "async def "),
    (C.uses_walrus, "assignment expression (:=)", "y := "),
    (C.uses_set, "set", "{1, 2, 2}"),
    (C.uses_for_else, "for-else", "for "),
    (C.uses_while_else, "while-else", "while "),
    (C.uses_decorated_def, "decorated nested function", "def inner"),
]
UNSUPPORTED_IDS = [fn.__name__.removeprefix("uses_").replace("<lambda>", "lambda_continued")
                   for fn, _, _ in UNSUPPORTED]


def _marked_line(fn):
    """The file line of ``fn`` marked ``# unsupported``."""
    lines, first = inspect.getsourcelines(fn)
    k, = [k for k, line in enumerate(lines) if "# unsupported" in line]
    return first + k


@pytest.mark.parametrize("fn, construct, token", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_auto_engine_falls_back_with_one_warning(fn, construct, token):
    x = 0.4
    want = fd_jvp(fn, (x,), (1.0,))
    import wengert.api.fallback as api_fallback
    api_fallback.WARNED.discard(api_fallback.fallback_key(fn))    # one warning per function and process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g1 = wg.grad(fn)(x)
        g2 = wg.grad(fn)(x)
        _, t = wg.jvp(fn, (x,), (1.0,))
        _, pullback = wg.vjp(fn, x)
        ct = pullback(1.0)[0]
    user = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(user) == 1, [str(w.message) for w in user]
    message = str(user[0].message)
    assert f"uses {construct} at " in message and f"source_cases.py:{_marked_line(fn)}" in message
    assert "trace engine" in message
    for got in (g1, g2, t, ct):
        assert_close(got, want, PROGRAM_RTOL_F64, what=f"{fn.__name__} after fallback")
    assert_close(g1, wg.grad(fn, engine="trace")(x), EXACT_RTOL_F64)


# constructs the source engine once refused (issue 25): try/except (the body
# staged, the handler taken where the plain call takes it), a raise under a
# condition on Python values, global and nonlocal, an attribute of an object
# the function made, a lambda on a later line of a statement
SUPPORTED_NOW = [C.uses_try, C.uses_raise, C.uses_global, C.uses_nonlocal,
                 C.uses_attribute_store, C.uses_lambda_continued]


@pytest.mark.parametrize("fn", SUPPORTED_NOW,
                         ids=lambda fn: fn.__name__.replace("<lambda>", "lambda_continued"))
def test_once_refused_constructs_run_in_the_source_engine(fn):
    x = 0.4
    want = fd_jvp(fn, (x,), (1.0,))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)     # no fallback
        got = wg.grad(fn, engine="auto")(x)
    assert_close(got, want, PROGRAM_RTOL_F64)
    assert_close(wg.grad(fn, engine="source")(x), wg.grad(fn, engine="trace")(x), EXACT_RTOL_F64)


# --- nested source-engine derivatives ---------------------------------------------
def _fd(f, x, eps=1e-5):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_third_derivative_nested_source():
    """Issue 10: a third derivative by nested source-engine grads, against its closed form."""
    g3 = wg.grad(wg.grad(wg.grad(tc.entropy_like, engine="source"), engine="source"),
                 engine="source")
    exact = -np.sum(1.0 / (tc.R + 1.0) ** 2)          # -(1/4 + 1/25 + 1/64)
    assert_close(g3(1.0), exact, rtol("exact", np.float64))


def test_fourth_derivative_nested_source_helpers():
    """Issue 10: a fourth derivative through helpers, against its closed form and
    differences of the third."""
    x = np.array([0.5])
    d4 = wg.grad(tc.d3_sum_logistic, engine="source")(x)
    e = np.exp(0.5)
    s = 1 / (1 + e)
    # d^4/dx^4 of s = 1/(1+e^x), with s' = s^2 - s: s - 15 s^2 + 50 s^3 - 60 s^4 + 24 s^5
    exact = (s - 15 * s ** 2 + 50 * s ** 3 - 60 * s ** 4 + 24 * s ** 5)
    assert_close(d4, np.array([exact]), rtol("exact", np.float64) * 100)
    d3 = wg.grad(tc.d2_sum_logistic, engine="source")
    assert_close(d4, _fd(lambda t: d3(t), x), rtol("jvp2", np.float64))


# --- a source-engine gradient under another transformation; keyword arguments -----
def _fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


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


@pytest.mark.parametrize("engine", ["source", "auto"])
def test_jvp_and_vjp_of_a_source_gradient_compose_the_transforms(engine):
    # jvp(grad(f)) and vjp(grad(f)) are Hessian-vector products: against the trace engine's
    x = np.array([0.3, -0.5, 0.9])
    v = np.array([1.0, 0.5, -2.0])
    g = wg.grad(C.for_enumerate, engine=engine)
    hv = wg.hessian(C.for_enumerate, engine="trace")(x) @ v
    _, t = wg.jvp(g, (x,), (v,), engine=engine)
    _, pullback = wg.vjp(g, x, engine=engine)
    assert_close(t, hv, AD_VS_AD_RTOL_F64, what="jvp of grad")
    assert_close(pullback(v)[0], hv, AD_VS_AD_RTOL_F64, what="vjp of grad (symmetric Hessian)")


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
