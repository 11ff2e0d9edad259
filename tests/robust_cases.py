"""Functions for api/test_pickling.py, test_source.py and test_checks.py, importable by a
worker process (a pickled transformed function names its function by module and name), and
the worker's entry points. Line numbers of some defs are asserted by the tests
(through ``__code__.co_firstlineno``, never written as numbers)."""
import pickle
import random
import sys

import numpy as np

import wengert as wg


# --- functions that travel (pickled, run in another process) ---------------
def f_scalar(x):
    return np.sum(np.sin(x) * x) + x[0] * x[1]


def f_two(x, y):
    return np.sum(np.tanh(x) * y) + np.sum(y ** 2)


def f_vec(x):
    return np.stack([np.sum(x ** 2), np.prod(np.cos(x)), x[0] * x[-1]])


def f_1d(x):
    return np.sin(x) * x ** 3


def f_loop(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s


def f_aux(x):
    y = np.sum(np.exp(x))
    return y, {"norm": np.sum(x ** 2)}


@wg.custom_jvp
def cj(x):
    return np.sin(x)


@cj.defjvp
def _cj_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return np.sin(x), np.cos(x) * t


@wg.custom_vjp
def cv(x):
    return np.exp(x)


def _cv_fwd(x):
    return np.exp(x), np.exp(x)


def _cv_bwd(e, g):
    return (e * g,)


cv.defvjp(_cv_fwd, _cv_bwd)


@wg.checkpoint
def ck(x):
    return np.tanh(x) * x


def f_custom(x):
    return np.sum(cj(x) * cv(x) + ck(x))


def refused(x):
    """The source engine refuses the ``with``; auto falls back to tracing."""
    with np.errstate(all="ignore"):
        y = np.sin(x) * x
    return np.sum(y)


@wg.grad
def decorated_grad(x):
    return x ** 3 * np.cos(x)


def run_pickled(blob, args):
    """In the worker: the unpickled function's value at ``args``, and where
    ``wengert`` was imported from there."""
    g = pickle.loads(blob)
    return g(*args), sys.modules["wengert"].__file__


def jvp_at(f, x, t, engine):
    return wg.jvp(f, (x,), (t,), engine=engine)


def vjp_at(f, x, ct, engine):
    out, pullback = wg.vjp(f, x, engine=engine)
    return out, pullback(ct)[0]


def linearize_at(f, x, t, engine):
    out, linear = wg.linearize(f, x, engine=engine)
    return out, linear(t)


def run_transform(blob):
    """In the worker: an unpickled call (a transform at a point, e.g.
    ``(wg.jvp, f, primals, tangents)``) made."""
    fn, *args = pickle.loads(blob)
    return fn(*args)


# --- deep structures ---------------------------------------------------------
def top_of_dict(t):
    """Reads the top two levels of ``{"a": {"a": ..., "b": v}, "b": v}``."""
    return t["b"] * t["a"]["b"] ** 2 + np.sin(t["b"])


def top_of_list(t):
    """Reads the top two levels of ``[[..., v], v]`` (lists or tuples)."""
    return t[1] ** 3 * t[0][1] + np.cos(t[0][1])


# --- effects before a construct the source engine refuses mid-function -------
RS = np.random.RandomState(0)
GEN = np.random.default_rng(0)
PRINTED = "robust-cases-printed"


def _refused_helper(x):
    with np.errstate(all="ignore"):     # a construct the source engine refuses
        return x * 2.0


def draws_rs_then_refused(x):
    a = RS.normal()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def draws_np_then_refused(x):
    a = np.random.normal()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def draws_gen_then_refused(x):
    a = GEN.standard_normal(2)
    return np.sum(_refused_helper(x) * a[0] + np.sin(x) * a[1])


def draws_random_then_refused(x):
    a = random.random()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def prints_then_refused(x):
    print(PRINTED)
    return np.sum(_refused_helper(x) + np.sin(x))


def draws_rs_then_traced_index(x):
    a = RS.normal()
    k = int(x[0] > 0)                   # a traced integer
    return np.sum(np.sin(x) * a) + [1.0, 2.0][k] * x[1]


def draws_gen_then_traced_index(x):
    a = GEN.standard_normal()
    k = int(x[0] > 0)
    return np.sum(np.sin(x) * a) + [1.0, 2.0][k] * x[1]


# --- one name, two functions (the fallback warning is per function) -----------
def twin(x):
    with np.errstate(all="ignore"):     # refused: auto falls back
        return np.sin(x)


twin_first = twin


def twin(x):       # noqa: F811 -- the same name on purpose, a second function
    with np.errstate(all="ignore"):
        return np.cos(x)


twin_second = twin


def make_refused_closure(c):
    def closure(x):
        with np.errstate(all="ignore"):
            return np.sin(x) * c
    return closure


# --- bad functions and outputs -----------------------------------------------
def simple(x):
    return np.sum(np.sin(x) * x)


def yields(x):
    yield np.sin(x)


def aux_one(x):
    return np.sum(np.sin(x))


def aux_three(x):
    return np.sum(np.sin(x)), 1.0, 2.0


def vector_out(x):
    return np.sin(x) * 2.0


# --- a custom rule that differs from the function's own derivative -------------
@wg.custom_jvp
def doubled_rule(x):
    """Its rule says 2 cos(x): a transform that went around the rule (to the
    function's own derivative, cos(x)) shows."""
    return np.sin(x)


@doubled_rule.defjvp
def _doubled_rule_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return np.sin(x), 2.0 * np.cos(x) * t
