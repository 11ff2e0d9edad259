"""Function-table cases for the functions that move, insert, drop, select and write entries
(``wengert/numpy/editing.py``, ``writes.py``), NumPy 2's vector gufuncs, a number's parts
and signs (``parts.py``: ``fmod``, ``divmod``, ``modf``, ``frexp``, ``ldexp``,
``copysign``, ``heaviside``, ``np.lib.scimath``) and ``scipy.optimize``'s Rosenbrock
functions. Each is drawn where it is smooth (away from the jumps of the parts, from zero
for the signs)."""
from __future__ import annotations

import numpy as np
import scipy.optimize

from cases import F64, Arg, away, frac, pos, real
from fn_cases import FnCase


def _mask(values):
    arr = np.asarray(values, bool)
    return Arg(lambda rng, dt: arr.copy(), f"mask{arr.shape}", diff=False)


# --- moving entries ---------------------------------------------------------------------
def insert_(x, v):
    return np.insert(x, [1, 3, 3], v)


def insert_axis(x, v):
    return np.insert(x, 1, v, axis=1)


def delete_(x):
    return np.delete(x, [0, 2])


def delete_axis(x):
    return np.delete(x, slice(0, 1), axis=0)


def extract_(x):
    return np.extract(x > 0.0, x)


def compress_(m, x):
    return np.compress(m, x, axis=1)


def choose_(a, b):
    return np.choose([[0, 1, 1], [1, 0, 1]], [a, b])


def diagflat_(v):
    return np.diagflat(v, 1)


def ediff1d_(x, b):
    return np.ediff1d(x, to_end=[1.0, -2.0], to_begin=b)


def broadcast_arrays_(x, y):
    return np.broadcast_arrays(x, y)


def sliding_window_view_(x):
    return np.lib.stride_tricks.sliding_window_view(x, (2, 2))


def _row_stats(r):
    return np.stack([r[0] * r[-1], np.sum(r ** 2)])


def apply_along_axis_(x):
    return np.apply_along_axis(_row_stats, 1, x)


def unwrap_(x):
    return np.unwrap(np.cumsum(x) * 3.0)


# --- writes (NumPy's in-place functions, on a traced array of the function's own) --------
def put_(x, v):
    a = x * 1.0
    np.put(a, [0, 4, 2], v)
    return a


def put_along_axis_(x, v):
    a = x * 1.0
    np.put_along_axis(a, np.array([[1], [0]]), v, axis=1)
    return a


def putmask_(x, v):
    a = x * 1.0
    np.putmask(a, np.array([True, False, True, True, False]), v)
    return a


def place_(x, v):
    a = x * 1.0
    np.place(a, np.array([False, True, True, False, True]), v)
    return a


def copyto_(x, y):
    a = x * 1.0
    np.copyto(a, y, where=np.array([True, False, True]))
    return a


def fill_diagonal_(x, v):
    a = x * 1.0
    np.fill_diagonal(a, v)
    return a


# --- vector gufuncs ---------------------------------------------------------------------
def vecdot_(x, y):
    return np.vecdot(x, y)


def matvec_(a, x):
    return np.matvec(a, x)


def vecmat_(x, a):
    return np.vecmat(x, a)


# --- parts and signs --------------------------------------------------------------------
def fmod_(x, y):
    return np.fmod(x, y)


def divmod_(x):
    return np.divmod(x, 0.75)


def modf_(x):
    return np.modf(x)


def frexp_(x):
    return np.frexp(x)


def ldexp_(x):
    return np.ldexp(x, np.array([1, -2, 3]))


def copysign_(x, y):
    return np.copysign(x, y)


def heaviside_(h0):
    return np.heaviside(np.array([-1.0, 0.0, 2.0, 0.0]), h0)


def scimath_sqrt(x):
    return np.lib.scimath.sqrt(x)


def scimath_log(x):
    return np.lib.scimath.log(x)


def scimath_log10(x):
    return np.lib.scimath.log10(x)


def scimath_log2(x):
    return np.lib.scimath.log2(x)


def scimath_logn(x):
    return np.lib.scimath.logn(3.0, x)


def scimath_power(x):
    return np.lib.scimath.power(x, 0.5)


def scimath_arccos(x):
    return np.lib.scimath.arccos(x)


def scimath_arcsin(x):
    return np.lib.scimath.arcsin(x)


def scimath_arctanh(x):
    return np.lib.scimath.arctanh(x)


# --- scipy.optimize's Rosenbrock functions ---------------------------------------------
def rosen_(x):
    return scipy.optimize.rosen(x)


def rosen_der_(x):
    return scipy.optimize.rosen_der(x)


def rosen_hess_(x):
    return scipy.optimize.rosen_hess(x)


def rosen_hess_prod_(x, p):
    return scipy.optimize.rosen_hess_prod(x, p)


def _mixed_signs(n):
    """Entries of either sign, away from 0 and from the branch points (|x| = 1)."""
    values = np.array([-2.5, 0.4, -0.7, 1.6, 0.3, -1.3])[:n]
    return Arg(lambda rng, dt: np.asarray(values + rng.uniform(-0.05, 0.05, n), dt),
               f"mixed({n})")


def _in_unit(n):
    values = np.array([0.3, -0.6, 0.45, -0.2])[:n]
    return Arg(lambda rng, dt: np.asarray(values + rng.uniform(-0.05, 0.05, n), dt),
               f"unit({n})")


def _scaled_fraction(n):
    """Between 1.1 and 1.9 times a power of two: frexp's mantissa has no jump near."""
    def draw(rng, dt):
        return np.asarray(rng.uniform(1.1, 1.9, n) * 2.0 ** rng.integers(-2, 3, n)
                          * rng.choice([-1.0, 1.0], n), dt)
    return Arg(draw, f"fraction({n})")


# the writes follow the trace engine's value of the written array: the source engine
# does not follow a write through a call and refuses (UnsupportedSyntax, naming the
# functional form), and engine="auto" then takes the trace engine
WRITES = ("trace",)
# a np.lib.scimath function's dtype depends on the values (complex where an entry is out of
# the real domain): the source engine refuses (ConcretizationError), "auto" takes the trace
SCIMATH = ("trace",)
# scipy.optimize converts its argument with np.asarray before a rule can see the call:
# the source engine calls the rule in its place, the trace engine cannot
OPTIMIZE = ("source",)

CASES = [
    FnCase("np.insert", insert_, (real((5,)), real((3,)))),
    FnCase("np.insert", insert_axis, (real((2, 3)), real(())), "axis"),
    FnCase("np.delete", delete_, (real((5,)),)),
    FnCase("np.delete", delete_axis, (real((3, 2)),), "axis"),
    FnCase("np.extract", extract_, (away((6,)),)),
    FnCase("np.compress", compress_, (_mask([True, False, True]), real((2, 3)))),
    FnCase("np.choose", choose_, (real((2, 3)), real((3,)))),
    FnCase("np.diagflat", diagflat_, (real((2, 2)),)),
    FnCase("np.ediff1d", ediff1d_, (real((2, 3)), real(()))),
    FnCase("np.broadcast_arrays", broadcast_arrays_, (real((3,)), real((2, 1)))),
    FnCase("np.lib.stride_tricks.sliding_window_view", sliding_window_view_, (real((3, 4)),)),
    FnCase("np.apply_along_axis", apply_along_axis_, (real((3, 4)),)),
    FnCase("np.unwrap", unwrap_, (real((6,)),)),
    FnCase("np.put", put_, (real((5,)), real((2,))), engines=WRITES),
    FnCase("np.put_along_axis", put_along_axis_, (real((2, 3)), real((2, 1))), engines=WRITES),
    FnCase("np.putmask", putmask_, (real((5,)), real((2,))), engines=WRITES),
    FnCase("np.place", place_, (real((5,)), real((2,))), engines=WRITES),
    FnCase("np.copyto", copyto_, (real((3,)), real(())), engines=WRITES),
    FnCase("np.fill_diagonal", fill_diagonal_, (real((3, 3)), real((3,))), engines=WRITES),
    FnCase("np.vecdot", vecdot_, (real((2, 3)), real((3,)))),
    FnCase("np.matvec", matvec_, (real((2, 3)), real((3,)))),
    FnCase("np.vecmat", vecmat_, (real((3,)), real((3, 2)))),
    FnCase("np.fmod", fmod_, (real((4,), -0.9, 0.9), pos((4,), 1.1, 2.0))),
    FnCase("np.divmod", divmod_, (frac((5,), 0.1, 0.6, unit=0.75),)),
    FnCase("np.modf", modf_, (frac((2, 3), 0.2, 0.8),)),
    FnCase("np.frexp", frexp_, (_scaled_fraction(4),)),
    FnCase("np.ldexp", ldexp_, (real((3,)),)),
    FnCase("np.copysign", copysign_, (away((4,)), away((4,)))),
    FnCase("np.heaviside", heaviside_, (real(()),), dtypes=(F64,)),
    FnCase("np.lib.scimath.sqrt", scimath_sqrt, (_mixed_signs(5),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.log", scimath_log, (_mixed_signs(4),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.log10", scimath_log10, (_mixed_signs(3),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.log2", scimath_log2, (_mixed_signs(3),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.logn", scimath_logn, (_mixed_signs(3),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.power", scimath_power, (_mixed_signs(4),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.arccos", scimath_arccos, (_in_unit(4),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.arcsin", scimath_arcsin, (_in_unit(4),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("np.lib.scimath.arctanh", scimath_arctanh, (_in_unit(4),), dtypes=(F64,),
           engines=SCIMATH),
    FnCase("scipy.optimize.rosen", rosen_, (real((5,)),), dtypes=(F64,), engines=OPTIMIZE),
    FnCase("scipy.optimize.rosen_der", rosen_der_, (real((5,)),), dtypes=(F64,),
           engines=OPTIMIZE),
    FnCase("scipy.optimize.rosen_hess", rosen_hess_, (real((4,)),), dtypes=(F64,),
           engines=OPTIMIZE),
    FnCase("scipy.optimize.rosen_hess_prod", rosen_hess_prod_, (real((4,)), real((4,))),
           dtypes=(F64,), engines=OPTIMIZE),
]

