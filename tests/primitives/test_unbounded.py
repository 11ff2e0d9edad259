"""``primitives/unbounded.py``: a derivative that may be infinite where the
function is finite (the slope of ``sqrt``, ``cbrt``, ``x ** 0.5`` at 0, of
``arcsin``/``arccos`` at +-1, of ``arccosh`` at 1) meets a primal factor that is
exactly zero: the composite is constant there and its derivative 0, in every
engine and mode, and programs without such a function keep plain products.

Once: ``make fuzz`` seed 7286, ``np.cbrt(np.maximum(v * s, 0.0))`` with ``v``
masked to exact zeros, had gradient nan in ``s`` from the trace engine (an
infinite cotangent times ``v = 0`` in ``mul``'s transpose); and ``np.sqrt(x) *
y`` at ``x = y = 0`` had a nan tangent in ``x`` in both engines' forward mode
(reverse gave 0); a wild tangent carried around a loop the source engine stages into a
product that comes before ``sqrt`` in the body gave nan in forward mode (the body's
carries started tame), 0 in reverse mode and in the trace engine.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from checks import assert_close, fd_jvp

ENGINES = ("source", "trace")

pytestmark = pytest.mark.usefixtures("quiet_singular")


def masked_cbrt(s, v):
    v = np.where(v > 0.5, v, 0.0) * 1.0
    return np.sum(np.cbrt(np.maximum(v * s, 0.0)))


def looped_sqrt(s, v):
    u = np.where(v > 0.5, v, 0.0)
    for i in range(3):
        u = np.sqrt(np.maximum(u * s, 0.0)) + 0.5 * u
    return np.sum(u)


V = np.array([0.2, 0.9, 1.3, 0.1])


@pytest.mark.parametrize("fun", [masked_cbrt, looped_sqrt], ids=lambda f: f.__name__)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_masked_factor_keeps_the_infinite_slope_out(fun, engine):
    """d/ds and d/dv in reverse (grad) and forward (jvp) mode against central
    differences: the masked entries are 0 for every s near 1.5."""
    gs = wg.grad(fun, argnums=0, engine=engine)(1.5, V)
    gv = wg.grad(fun, argnums=1, engine=engine)(1.5, V)
    assert np.isfinite(gs) and np.all(np.isfinite(gv)), (gs, gv)
    assert_close(gs, fd_jvp(lambda s: fun(s, V), (1.5,), (1.0,)), 1e-6, what="d/ds")
    t = np.array([0.3, -0.2, 0.5, 0.7])
    assert_close(np.dot(gv, t), fd_jvp(lambda v: fun(1.5, v), (V,), (t,)), 1e-6, what="d/dv")
    _, tangent = wg.jvp(fun, (1.5, V), (1.0, np.zeros(4)), engine=engine)
    assert_close(tangent, gs, 1e-10, what="jvp against grad")


# each: f(x, y) with f finite at x0, its slope in x infinite there, y0 = 0 in entry 0
SINGULAR = {
    "sqrt": (lambda x, y: np.sqrt(x) * y, 0.0),
    "cbrt": (lambda x, y: np.cbrt(x) * y, 0.0),
    "pow_half": (lambda x, y: x ** 0.5 * y, 0.0),
    "pow_traced_exponent": (lambda x, y: x ** (0.5 + 0.0 * y) * y, 0.0),
    "arcsin": (lambda x, y: np.arcsin(x) * y, 1.0),
    "arccos": (lambda x, y: np.arccos(x) * y, 1.0),
    "arccosh": (lambda x, y: np.arccosh(x) * y, 1.0),
    "norm": (lambda x, y: np.linalg.norm(x - x0_of(x)) * y, 0.0),
}


def x0_of(x):
    return np.array([0.0, 0.0]) if np.ndim(x) else 0.0


@pytest.mark.parametrize("name", sorted(SINGULAR))
@pytest.mark.parametrize("engine", ENGINES)
def test_every_mode_agrees_where_the_factor_is_zero(name, engine):
    """At entry 0 the function is y0 * (finite) with y0 = 0: constant in x, its
    Jacobian column 0; entry 1 (x away from the point, y = 2) against central
    differences. jvp, jacfwd, jacrev and grad give the same finite numbers."""
    fun, x0 = SINGULAR[name]
    x = np.array([x0, 0.5 if x0 == 0.0 else (0.5 if name != "arccosh" else 1.5)])
    y = np.array([0.0, 2.0])
    if name == "norm":
        x = np.array([0.0, 0.0])
    jf = wg.jacfwd(fun, engine=engine)(x, y)
    jr = wg.jacrev(fun, engine=engine)(x, y)
    assert np.all(np.isfinite(jf)) and np.all(np.isfinite(jr)), (jf, jr)
    assert_close(jf, jr, 1e-12, what="jacfwd against jacrev")
    _, t = wg.jvp(fun, (x, y), (np.array([1.0, 0.0]), np.zeros(2)), engine=engine)
    assert_close(np.reshape(t, -1), np.reshape(jf, (np.size(t), -1))[:, 0], 1e-12,
                 what="jvp along x0")
    if name == "norm":
        # |x| * y with y = [0, 2]: constant 0 in the y = 0 entry
        assert np.all(np.reshape(jf, (2, -1))[0] == 0.0), jf
        return
    assert jf[0, 0] == 0.0
    h = 1e-6
    away = (fun(x + [0.0, h], y) - fun(x - [0.0, h], y)) / (2 * h)
    assert_close(jf[1, 1], away[1], 1e-6, what="slope away from the point")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_genuinely_infinite_slope_stays_infinite(engine):
    """Only an exact zero factor stops it: sqrt(x) * 2 at 0 has slope inf."""
    g = wg.grad(lambda x: np.sum(np.sqrt(x) * np.array([2.0, 1.0])), engine=engine)
    got = g(np.array([0.0, 4.0]))
    assert got[0] == np.inf and got[1] == 0.25


def smooth(x, y):
    return np.sum(np.tanh(x) * y + x * x * np.exp(y))


@pytest.mark.parametrize("transform", ["grad", "jacfwd"])
def test_without_an_unbounded_slope_the_products_stay_plain(transform):
    """The guard costs nothing where nothing is unbounded: the generated code
    of a program of tanh, exp and products has no
    guard (no nan test ``(s := t.sum()) != s``, no select), and the trace
    engine's values."""
    x, y = np.array([0.3, -1.2]), np.array([0.5, 2.0])
    make = wg.grad if transform == "grad" else wg.jacfwd
    g = make(smooth, engine="source")
    got = g(x, y)
    assert ":=" not in g.source and "where" not in g.source, g.source
    assert_close(got, make(smooth, engine="trace")(x, y), 1e-12, what="source against trace")


def carried_into_a_product(x, y, n):
    # the tangent of t is infinite after the first step (sqrt at 0); the next step
    # multiplies it by y = 0 before sqrt runs again
    t = x
    u = x * 0.0
    for i in range(n):
        u = y * t
        t = np.sqrt(x)
    return u


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wild_tangent_carried_around_a_loop_meets_a_zero_factor(engine):
    """u = y sqrt(x) is 0 along y = 0 for every x: its derivative there is (0, 0), and
    forward mode (the body's tangents wild from its first step) says so as reverse does."""
    x, y = np.float64(0.0), np.float64(0.0)
    grad = wg.grad(carried_into_a_product, (0, 1), engine=engine)(x, y, 3)
    assert grad == (0.0, 0.0)
    for tangent in ((1.0, 0.0), (0.0, 1.0), (2.0, -3.0)):
        dot = wg.jvp(lambda x, y: carried_into_a_product(x, y, 3), (x, y), tangent,
                     engine=engine)[1]
        assert dot == 0.0, (tangent, dot)
    # away from the singular point, the loop's forward mode against finite differences
    x1, y1 = np.float64(0.7), np.float64(0.4)
    dot = wg.jvp(lambda x, y: carried_into_a_product(x, y, 3), (x1, y1), (1.0, -0.5),
                 engine=engine)[1]
    assert_close(dot, fd_jvp(lambda x, y: carried_into_a_product(x, y, 3), (x1, y1),
                             (1.0, -0.5)), 1e-7)
