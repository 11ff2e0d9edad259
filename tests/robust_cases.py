"""Functions for test_robust_api.py. Line numbers of some defs are asserted
by the tests (through ``__code__.co_firstlineno``, never written as numbers)."""
import random

import numpy as np


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
    try:
        return x * 2.0
    except ValueError:
        return x


def draws_rs_then_try(x):
    a = RS.normal()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def draws_np_then_try(x):
    a = np.random.normal()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def draws_gen_then_try(x):
    a = GEN.standard_normal(2)
    return np.sum(_refused_helper(x) * a[0] + np.sin(x) * a[1])


def draws_random_then_try(x):
    a = random.random()
    return np.sum(_refused_helper(x) * a + np.sin(x))


def prints_then_try(x):
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
    try:
        return np.sin(x)
    except ValueError:
        return x


twin_first = twin


def twin(x):       # noqa: F811 -- the same name on purpose, a second function
    try:
        return np.cos(x)
    except ValueError:
        return x


twin_second = twin


def make_refused_closure(c):
    def closure(x):
        try:
            return np.sin(x) * c
        except ValueError:
            return x
    return closure
