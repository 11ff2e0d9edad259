"""User functions of the batching tests (``api/test_vmap.py``, ``control/test_batched.py``,
``api/test_tree.py``): module-level, so the source engine reads their source and a pickled
``wg.vmap`` of one finds it by name."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

import wengert as wg


# --- per-example losses -------------------------------------------------------------
def mlp_loss(params, x, y):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.sum((out - y) ** 2)


def logistic_loss(w, x, y):
    z = x @ w
    return np.logaddexp(0.0, z) - y * z


def pair(x, y):
    return np.sin(x) * y + np.sum(x ** 2)


def scalar_of(x):
    return np.sum(np.tanh(x) ** 2) + x[0] * x[1]


def elementwise(x):
    return np.sin(x) * x


# --- control flow on batched values ---------------------------------------------------
def safe_sqrt(x):
    """sqrt where positive, else a line: the untaken branch's derivative is NaN or inf
    where the other is taken (sqrt at -1, at 0)."""
    if x > 0:
        y = np.sqrt(x)
    else:
        y = -2.0 * x
    return y


def three_way(x):
    if x < -1.0:
        y = x * x
    elif x < 1.0:
        y = np.sin(x)
    else:
        y = np.log(x)
    return y


def newton_sqrt(a):
    """Newton's iteration for sqrt(a): each example stops at its own step."""
    x = 1.0 + a
    step = 1.0
    while abs(step) > 1e-12:
        step = (x * x - a) / (2.0 * x)
        x = x - step
    return x


def halvings(a):
    """How many halvings bring a below 1, times the last value: a count per example."""
    x = a
    k = 0
    while x > 1.0:
        x = x / 2.0
        k = k + 1
    return x * k


def powers(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x) * i
    return s


def draws_in_branch(x):
    if x > 0:
        y = x + np.random.standard_normal()
    else:
        y = x
    return y


def fori_with_count(x, n):
    return wg.fori_loop(n, lambda i, c: c * 0.9 + np.sin(c) * i, x).sum()


def fori_checkpointed(x):
    return wg.fori_loop(6, lambda i, c: c * 0.9 + np.sin(c), x, checkpoint="ctz").sum()


@wg.checkpoint
def region(x):
    return np.sin(np.cos(x)) * x


def uses_region(x):
    return np.sum(region(x) ** 2)


@wg.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    dx, = tangents
    return softplus(x), dx / (1.0 + np.exp(-x))


@wg.custom_vjp
def clipped_gradient(x):
    return x * 1.0


def clipped_fwd(x):
    return x * 1.0, None


def clipped_bwd(res, ct):
    return (np.clip(ct, -0.5, 0.5),)


clipped_gradient.defvjp(clipped_fwd, clipped_bwd)


def uses_custom(x):
    return np.sum(softplus(x) * clipped_gradient(x))


@wg.custom_vjp
def scaled(x, w):
    return x * w


def scaled_fwd(x, w):
    return x * w, (x, w)


def scaled_bwd(res, ct):
    x, w = res
    return ct * w, np.sum(ct * x) * np.ones_like(w)


scaled.defvjp(scaled_fwd, scaled_bwd)


def uses_scaled(w, x):
    return np.sum(scaled(x, w) ** 2)


# --- pytrees ------------------------------------------------------------------------
@wg.tree.register_dataclass
@dataclasses.dataclass
class Params:
    W: np.ndarray
    b: np.ndarray
    name: str = dataclasses.field(default="layer", metadata={"static": True})


class Point(NamedTuple):
    x: np.ndarray
    y: float


class Opaque:
    """A class nobody registered."""

    def __init__(self, w):
        self.w = w


def layer_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def layer_loss_aux(p, x):
    return layer_loss(p, x), Params(p.W * 2.0, p.b, p.name)


def layer_loop(p, x):
    for i in range(3):
        p = Params(p.W * 0.9, p.b + 0.1, p.name)
    return layer_loss(p, x)


def layer_fori(p, x):
    return layer_loss(wg.fori_loop(3, lambda i, q: Params(q.W * 0.5, q.b, q.name), p), x)


def point_norm(pt):
    return np.sum(pt.x ** 2) * pt.y


def ordered_product(d):
    return np.sum(d["a"] * d["b"])


def opaque_sum(o):
    return np.sum(o.w)


def returns_opaque(x):
    return Opaque(x)


def abs_or_root(x):
    """Only ``api/test_vmap.py``'s warning test batches it (the trace engine warns once per
    function)."""
    if x > 0:
        return np.sqrt(x)
    return -x


def dict_pair(d):
    return pair(d["x"], d["y"])


RNG_FOR_DRAWS = np.random.default_rng(0)


def noisy(x):
    """A draw whose mean is the example (a call made when the code runs: ``host_call``)."""
    return RNG_FOR_DRAWS.normal(x, 1.0) + x


def masked_sums(w, x):
    """A value selected by a mask (a length known only at run time in the source engine)."""
    m = x[x > 0]
    return np.sum(w * m) + np.mean(m) * w + np.sum(w * m ** 2)
