"""NumPy's ufuncs on traced values (``wengert/numpy/ufuncs.py``): every
mapped ufunc takes its keywords (``dtype=`` computes in that dtype,
``where=`` and ``out=`` are refused with the user's line where dropping them
would change the values), and a ufunc of Python floats gives NumPy's scalar,
whatever wengert's wrapper is written with.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors
from wengert.core.pytree import flatten
from wengert.numpy import library

import robust_prims_cases as rc
from checks import assert_close, fd_jvp, rtol


ENGINES = ("trace", "source")
CASES = os.path.basename(rc.__file__)       # where the cases' own lines are

# every ufunc of the library table, SciPy's included where SciPy is installed
library.load_scipy()
UFUNC_LIST = sorted(library.UFUNCS, key=library.display_name)
# the ufuncs the keyword test draws 1-d operands for (np.matvec and np.vecmat take a matrix:
# their cases are in fn_cases_editing.py)
KEYWORD_UFUNCS = [u for u in UFUNC_LIST if u not in (np.matvec, np.vecmat)]


def _held(ufunc, args):
    """SciPy's ufuncs lead with orders and shape parameters (``jv(v, x)``,
    ``gammainc(a, x)``), in some of which no derivative is implemented (a
    tangent there is refused): they are held fixed, and the last operand is
    differentiated. ``(g, differentiated operands)``."""
    k = ufunc.nin - 1 if library.display_name(ufunc).startswith("scipy.") else 0

    def g(f):
        def held(*d):
            return f(*args[:k], *d)
        return held
    return g, args[k:]


def _numpy_refuses(f, args):
    """Whether NumPy itself refuses the call (a keyword this ufunc does not
    take, a dtype it has no loop for): wengert must refuse it as NumPy does."""
    try:
        f(*args)
    except TypeError:
        return True
    return False


@pytest.mark.filterwarnings("ignore:'where' used without 'out'")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ufunc", KEYWORD_UFUNCS,
                         ids=[library.display_name(u) for u in KEYWORD_UFUNCS])
def test_ufunc_keywords(ufunc, engine):
    """Every mapped ufunc: ``dtype=`` computes in that dtype (NumPy's value
    and dtype, the tangent against FD), ``where=`` and ``out=`` (a write in
    place) are refused with the user's line: dropping them would give other
    values than NumPy."""
    rng = np.random.default_rng(5)
    hold, args = _held(ufunc, tuple(rng.uniform(0.2, 0.8, 3) for _ in range(ufunc.nin)))
    ones = tuple(np.ones(3) for _ in args)
    name = library.display_name(ufunc)
    outs = np.zeros(3) if ufunc.nout == 1 else tuple(np.zeros(3) for _ in range(ufunc.nout))
    for key, val, err in (("where", np.array([True, False, True]), errors.NoDerivativeRule),
                          ("out", outs, errors.InPlaceUpdateError)):
        f = hold(rc.ufunc_functions(ufunc, **{key: val}))
        # NumPy refuses where= for a gufunc (matmul) only; it is not asked, as
        # SciPy 1.17's ufuncs corrupt the heap when called with where=
        refused = (ufunc.signature is not None if key == "where"
                   else _numpy_refuses(f, args))
        if refused:
            with pytest.raises(TypeError):          # NumPy itself refuses the keyword
                wg.jvp(f, args, ones, engine=engine)
            continue
        with pytest.raises(err, match=rf"{CASES}:\d+: {re.escape(name)}\(\.\.\., {key}="):
            wg.jvp(f, args, ones, engine=engine)
    f = hold(rc.ufunc_functions(ufunc, dtype=np.float32, casting="same_kind"))
    if _numpy_refuses(f, args):           # no float32 loop (comparisons, float_power)
        with pytest.raises(TypeError):
            wg.jvp(f, args, ones, engine=engine)
        return
    want = f(*args)
    t = tuple(rng.standard_normal(3) for _ in args)
    out, tan = wg.jvp(f, args, t, engine=engine)
    for leaves in (flatten(out)[0], flatten(want)[0], flatten(tan)[0]):   # nout >= 1
        assert all(np.asarray(v).dtype == np.float32 for v in leaves), (out, want, tan)
    assert_close(out, want, rtol("ref", np.float32), what=f"{name} value")
    assert_close(tan, fd_jvp(f, args, t), rtol("jvp", np.float32), what=f"{name} tangent")


def _kind(v):
    """What NumPy's promotion sees: a Python scalar's type (weakly typed), else the dtype."""
    if type(v) in (bool, int, float, complex):
        return f"python {type(v).__name__}"
    return np.asarray(v).dtype.name


# matmul and NumPy 2's vector gufuncs take no scalars; ldexp takes integer exponents; modf,
# frexp and divmod give two results (tested in fn_cases_editing.py)
SCALAR_UFUNCS = [u for u in UFUNC_LIST if u.signature is None and u.nout == 1
                 and u is not np.ldexp]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ufunc", SCALAR_UFUNCS, ids=[u.__name__ for u in SCALAR_UFUNCS])
def test_ufunc_of_python_floats_is_numpys(ufunc, engine):
    """A ufunc of Python floats gives a NumPy scalar (``np.sin(0.5)`` is an
    np.float64, ``np.add(0.5, 0.25)`` too), whatever wengert's wrapper is
    written with: the result then promotes a float32 array it meets."""
    def times_v32(*xs):
        return ufunc(*xs) * rc.V32

    f, args = _held(ufunc, (0.4, 0.7, 0.3)[:ufunc.nin])
    f = f(times_v32)
    want = f(*args)
    out, _ = wg.jvp(f, args, tuple(1.0 for _ in args), engine=engine)
    assert _kind(out) == _kind(want), (_kind(out), _kind(want))
    assert_close(out, want, rtol("ref", want), what=ufunc.__name__)


# --- a ufunc without a derivative rule --------------------------------------
# scipy.special.struve has no rule. On values nothing differentiates (a weight computed
# from data, a custom_vjp's backward rule) it is a call the code makes when it runs, in both
# engines; a derivative through it raises NoDerivativeRule naming the user's line. Before,
# the source engine refused it at staging: the custom_vjp pattern its own error message
# recommends failed there.
scipy_special = pytest.importorskip("scipy.special")
STRUVE_LINE = {}


def _weighted(x, y):
    return np.sum(x * scipy_special.struve(0, y))    # STRUVE_LINE["weighted"]


STRUVE_LINE["weighted"] = _weighted.__code__.co_firstlineno + 1


def _struve0_plain(x):
    return scipy_special.struve(0, x)


_struve0 = wg.custom_vjp(_struve0_plain)
STRUVE_LINE["primal"] = _struve0_plain.__code__.co_firstlineno + 1


def _struve0_bwd(x, ct):
    return (ct * (2 / np.pi - scipy_special.struve(1, x)),)   # d H0/dx = 2/pi - H1


_struve0.defvjp(lambda x: (_struve0(x), x), _struve0_bwd)
STRUVE_LINE["bwd"] = _struve0_bwd.__code__.co_firstlineno + 1


def _struve_loss(x):
    return np.sum(np.sin(x) * _struve0(x))


@pytest.mark.parametrize("engine", ENGINES + ("auto",))
def test_a_ufunc_without_rule_runs_on_values_not_differentiated(engine):
    """grad with respect to x of sum(x * struve(0, y)) is struve(0, y), and its jvp the
    matching product; with respect to y it is refused at the struve line."""
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4)
    assert_close(wg.grad(_weighted, engine=engine)(x, y), scipy_special.struve(0, y),
                 rtol("exact", np.float64))
    t = rng.standard_normal(4)
    _, tan = wg.jvp(lambda x: _weighted(x, y), (x,), (t,), engine=engine)
    assert_close(tan, fd_jvp(lambda x: _weighted(x, y), (x,), (t,)), rtol("jvp", np.float64))
    with pytest.raises(wg.NoDerivativeRule, match=rf"{os.path.basename(__file__)}:"
                       rf"{STRUVE_LINE['weighted']}: scipy\.special\.struve has no derivative"):
        wg.grad(_weighted, argnums=1, engine=engine)(x, y)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_custom_vjp_backward_rule_may_call_a_ufunc_without_rule(engine):
    """The escape hatch the no-rule error recommends: the gradient matches finite
    differences in both engines; a second derivative, which would differentiate the
    backward rule's struve(1, x) or the primal's struve(0, x), raises at one of those lines
    instead of returning zero there."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 3.0, 5)
    g = wg.grad(_struve_loss, engine=engine)(x)
    for k in range(3):
        t = rng.standard_normal(5)
        assert_close(np.dot(g, t), fd_jvp(_struve_loss, (x,), (t,)), rtol("jvp", np.float64))
    lines = f"({STRUVE_LINE['bwd']}|{STRUVE_LINE['primal']})"
    with pytest.raises(wg.NoDerivativeRule, match=rf"{os.path.basename(__file__)}:{lines}: "
                       r"scipy\.special\.struve has no derivative rule"):
        wg.hessian(_struve_loss, engine=engine)(x)


def test_a_ufunc_without_rule_is_called_by_the_generated_code_at_each_call():
    """The call is in the code (not a value folded in at generation): new values of y
    give new gradients from the same code."""
    g = wg.grad(_weighted, engine="source")
    x = np.ones(3)
    for y in (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])):
        assert_close(g(x, y), scipy_special.struve(0, y), rtol("exact", np.float64))
    assert "scipy.special.struve(0, y)" in g.source      # spelled as the user wrote it
