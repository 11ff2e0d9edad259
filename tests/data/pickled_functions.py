"""Functions whose transforms were pickled by wengert 0.1.0 before its modules moved
(issue 24): ``tests/data/pickles_before_move.pkl`` holds them, and the pickling tests load
them with the current package (their functions by reference, from this module)."""
import numpy as np

import wengert as wg


def f(x):
    return np.sum(np.sin(x) * x)


def g(x, y):
    return np.sum(x * y ** 2)


@wg.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return softplus(x), t / (1.0 + np.exp(-x))


@wg.checkpoint
def block(x):
    return np.sum(np.tanh(x) ** 2)


# decorator objects not reachable under their function's name: pickled as their state,
# which names their class by its module path
def _cube(x):
    return x ** 3


def _cube_jvp(primals, tangents):
    x, = primals
    return _cube(x), 3.0 * x ** 2 * tangents[0]


cube = wg.custom_jvp(_cube)
cube.defjvp(_cube_jvp)


def _blocked(x):
    return np.sum(np.cos(x) * x)


blocked = wg.checkpoint(_blocked)
