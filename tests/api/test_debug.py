"""``api/debug.py`` and ``core/debug.py``: ``wg.debug_nans``, a context and an
option, raises ``FloatingPointError`` at the first nan produced in the value,
a tangent or a cotangent, naming the user's line whose value or derivative
produced it, in both engines; off, nothing is checked and the source engine
runs its generated code again. ``wg.nan_safe`` (on by default) keeps exact
zeros through singular functions' rules; off, the plain products (and nan at
a masked singular point) are generated, each setting with its own code.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg
from wengert.core.debug import NANS

ENGINES = ("source", "trace")
HERE = __file__


@pytest.fixture(autouse=True)
def _quiet_and_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
    assert not NANS.on, "a test left debug_nans on"
    assert NANS.safe, "a test left nan_safe off"


def _line(fn, text):
    """The line number of ``text`` in ``fn``'s source."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


def nan_in_value(x):
    y = np.sqrt(x)
    z = y * np.log(x)
    return np.sum(z)


def nan_in_cotangent(x):
    a = x - x
    b = np.sqrt(a)
    return np.sum(b * x)


def nan_in_tangent(x):
    a = x[0]
    # inf - inf: (sqrt(a) * 0.0 once, whose tangent is now 0: unbounded.py)
    return np.sqrt(a) - np.sqrt(2.0 * a) + x[1]


def masked(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_nan_in_the_value_names_its_line(engine):
    with wg.debug_nans():
        with pytest.raises(FloatingPointError) as info:
            wg.grad(nan_in_value, engine=engine)(np.array([0.0, 1.0]))
    msg = str(info.value)
    assert f"{HERE}:{_line(nan_in_value, 'z = y')}: the first nan: mul" in msg, msg
    assert "the value of this line" in msg


@pytest.mark.parametrize("engine", ENGINES)
def test_a_nan_in_the_reverse_sweep_names_the_line_it_differentiates(engine):
    # d sqrt(a) at a = 0 is inf; x - x sends inf - inf to x
    with wg.debug_nans():
        with pytest.raises(FloatingPointError) as info:
            wg.grad(nan_in_cotangent, engine=engine)(np.array([1.0, 2.0]))
    msg = str(info.value)
    assert f"{HERE}:{_line(nan_in_cotangent, 'a = x - x')}:" in msg, msg
    assert "cotangent" in msg


@pytest.mark.parametrize("engine", ENGINES)
def test_a_nan_in_forward_mode_names_its_line(engine):
    with wg.debug_nans():
        with pytest.raises(FloatingPointError) as info:
            wg.jacfwd(nan_in_tangent, engine=engine)(np.array([0.0, 2.0]))
    assert f"{HERE}:{_line(nan_in_tangent, 'np.sqrt(a)')}:" in str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_off_nothing_is_checked(engine):
    g = wg.grad(nan_in_cotangent, engine=engine)(np.array([1.0, 2.0]))
    assert np.all(np.isnan(g))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_masked_singular_branch_raises_nothing_and_gives_the_same_gradient(engine):
    x = np.array([0.0, 4.0])
    plain = wg.grad(masked, engine=engine)(x)
    with wg.debug_nans():
        checked = wg.grad(masked, engine=engine)(x)
        _, t = wg.jvp(masked, (x,), (np.array([1.0, 1.0]),), engine=engine)
    np.testing.assert_array_equal(plain, checked)
    assert t == 0.25


def test_the_context_restores_and_the_option_holds():
    assert not wg.debug_nans.enabled()
    with wg.debug_nans():
        assert wg.debug_nans.enabled()
        with wg.debug_nans(False):
            assert not wg.debug_nans.enabled()
        assert wg.debug_nans.enabled()
    assert not wg.debug_nans.enabled()
    wg.debug_nans()
    try:
        assert wg.debug_nans.enabled()
        with pytest.raises(FloatingPointError):
            wg.grad(nan_in_value, engine="trace")(np.array([0.0, 1.0]))
    finally:
        wg.debug_nans(False)
    assert not wg.debug_nans.enabled()


def masked_log(x):
    return np.sum(np.where(x > 0, np.log(np.abs(x)), 0.0))


def test_the_source_engine_runs_its_code_again_when_off():
    g = wg.grad(masked_log, engine="source")
    x = np.array([0.0, 4.0])
    with wg.debug_nans():
        g(x)
    assert g.generations == 0           # checked: interpreted, no code made
    g(x)
    assert g.generations == 1 and ".sum()) != " in g.source


def test_it_is_public():
    assert "debug_nans" in wg.__all__ and "nan_safe" in wg.__all__


# --- wg.nan_safe: the guarded products, on by default -------------------------------

def sqrt_sum(x):
    return np.sum(np.sqrt(x))


def tril_sqrt(x):
    return np.sum(np.tril(np.sqrt((x[:, None] - x[None, :]) ** 2), -1))


@pytest.mark.parametrize("engine", ENGINES)
def test_nan_safe_on_by_default_off_gives_the_plain_products_nan(engine):
    """Off, the masked diagonal's 0 * inf is nan again (JAX's answer); on
    (the default, and again after the block) the one-sided [1, -1]."""
    x = np.array([1.5, -0.7])
    g = wg.grad(tril_sqrt, engine=engine)
    assert wg.nan_safe.enabled()
    np.testing.assert_array_equal(g(x), [1.0, -1.0])
    with wg.nan_safe(False):
        assert not wg.nan_safe.enabled()
        assert np.all(np.isnan(g(x)))
        assert np.all(np.isnan(wg.grad(tril_sqrt, engine=engine)(x)))
        # forward mode: a zero tangent at sqrt's singular point
        _, t = wg.jvp(sqrt_sum, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),),
                      engine=engine)
        assert np.isnan(t)
    assert wg.nan_safe.enabled()
    np.testing.assert_array_equal(g(x), [1.0, -1.0])
    _, t = wg.jvp(sqrt_sum, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),), engine=engine)
    assert t == 0.25


def test_nan_safe_off_generates_the_plain_product_rule():
    """The Program holds the guarded products on (sqrt's: ``unbounded_div``),
    mul/div off; each setting keeps its own generated code (neither is run
    under the other)."""
    x = np.array([1.5, -0.7])
    on = wg.make_program(wg.grad(tril_sqrt), x)
    with wg.nan_safe(False):
        off = wg.make_program(wg.grad(tril_sqrt), x)
    assert "unbounded_div" in str(on), str(on)
    assert "safe_" not in str(off) and "unbounded_" not in str(off), str(off)
    g = wg.grad(tril_sqrt, engine="source")
    g(x)
    assert ".sum()) != " in g.source
    with wg.nan_safe(False):
        g(x)
        assert ".sum()) != " not in g.source and "np.where" not in g.source, g.source
    assert g.generations == 1               # the shared table of the setting that is on
    g(x)
    assert ".sum()) != " in g.source


def test_nan_safe_the_context_restores_and_the_option_holds():
    with wg.nan_safe(False):
        with wg.nan_safe():
            assert wg.nan_safe.enabled()
        assert not wg.nan_safe.enabled()
    assert wg.nan_safe.enabled()
    wg.nan_safe(False)
    try:
        assert not wg.nan_safe.enabled()
        assert np.isnan(wg.grad(masked, engine="trace")(np.array([0.0, 4.0]))[0])
    finally:
        wg.nan_safe(True)
    assert wg.nan_safe.enabled()


@pytest.mark.parametrize("bad", ["off", 0, None])
@pytest.mark.parametrize("setting, default", [("nan_safe", True), ("debug_nans", False)])
def test_settings_refuse_a_value_that_is_not_a_bool(setting, default, bad):
    """``wg.nan_safe("off")`` once read as on (a truthy string): a setting that is not a
    bool is a TypeError naming the setting, and the setting before stays."""
    with pytest.raises(TypeError, match=f"wg.{setting} takes True or False"):
        getattr(wg, setting)(bad)
    assert getattr(wg, setting).enabled() is default


@pytest.mark.parametrize("engine", ENGINES)
def test_a_block_in_one_thread_leaves_the_others_alone(engine):
    """``with wg.nan_safe(False)`` / ``with wg.debug_nans()`` held open in one
    thread: another thread's gradient of the masked ``tril(sqrt)`` is still
    ``[1, -1]`` and raises nothing; the option form (no ``with``) holds in every
    thread until it is changed back. (Once a process-wide switch: a block in
    one thread gave the other thread nan, or its FloatingPointError.)"""
    import threading
    x = np.array([1.5, -0.7])
    for setting in (lambda: wg.nan_safe(False), lambda: wg.debug_nans()):
        inside, done, got = threading.Event(), threading.Event(), []

        def hold(setting=setting):
            with setting():
                inside.set()
                done.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        inside.wait(30)
        try:
            worker = threading.Thread(target=lambda: got.append(
                wg.grad(tril_sqrt, engine=engine)(x)))
            worker.start()
            worker.join(60)
        finally:
            done.set()
            holder.join(30)
        assert len(got) == 1, "the other thread's gradient raised"
        np.testing.assert_array_equal(got[0], [1.0, -1.0])
    wg.nan_safe(False)
    try:
        other = []
        worker = threading.Thread(target=lambda: other.append(wg.grad(tril_sqrt, engine=engine)(x)))
        worker.start()
        worker.join(60)
        assert np.all(np.isnan(other[0])), other
    finally:
        wg.nan_safe(True)
