"""JAX implementations of the GradBench evals that GradBench's own JAX tool implements.

The comparison bench (``python -m bench.gradbench_compare``) times these against wengert.
Each eval follows the derivative strategy of GradBench's JAX tool, so that the comparison
is the one GradBench itself makes:

  gmm      ``jit(grad)`` of the log posterior (reverse mode, one pass)
  kmeans   ``jit`` of ``jvp(grad(cost), ones)``: the gradient and the Hessian's diagonal
           (the Hessian is diagonal) in one forward-over-reverse pass; returns J / H
  llsq     ``jit(grad)`` of the vectorised least-squares sum
  lse      ``jit(grad)`` of the max-shifted log-sum-exp
  ode      ``jit(grad)`` of the last component of an RK4 solve written with ``lax.scan``

Everything runs in float64 (``jax_enable_x64``) on the CPU. ``run`` waits for the result
(``block_until_ready``), since JAX dispatches asynchronously. The first call of ``run``
compiles; the bench makes one untimed call first, as it does for every tool.

``functions(eval_name)`` returns ``{gradbench_function_name: Function}`` for an eval this
module implements and ``None`` otherwise; ``Function`` is the one of ``common.py``, so the
bench treats every tool alike (``prepare`` untimed, ``run`` timed, ``output`` to JSON).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from bench.gradbench.common import Function

jax.config.update("jax_enable_x64", True)

NAME = "jax"
VERSION = jax.__version__


def _ready(result):
    return jax.block_until_ready(result)


def _tolist(a):
    return np.asarray(a).tolist()


def _array(data):
    return jnp.asarray(np.asarray(data, dtype=np.float64))


# --- gmm ------------------------------------------------------------------
from .evals.gmm import log_multigamma  # noqa: E402  (a constant: plain Python)


def gmm_objective(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = alpha.shape[0]
    # Q's strictly lower part is filled column by column: (1,0), (2,0), ..., (2,1), ...
    cols, rows = np.triu_indices(d, 1)
    lower = jnp.zeros((k, d, d), dtype=l.dtype).at[:, rows, cols].set(l)
    diag = jnp.exp(q)                                        # (k, d)
    sum_q = jnp.sum(q, axis=1)                               # (k,)
    centred = x[:, None, :] - mu[None, :, :]                 # (n, k, d)
    qx = diag * centred + jnp.einsum("kij,nkj->nki", lower, centred)
    beta = alpha + sum_q - 0.5 * jnp.sum(qx * qx, axis=2)    # (n, k)
    likelihood = (-n * d * 0.5 * math.log(2.0 * math.pi)
                  + jnp.sum(logsumexp(beta, axis=1)) - n * logsumexp(alpha))
    dof = d + m + 1
    frobenius = jnp.sum(diag * diag) + jnp.sum(l * l)
    prior = (k * (dof * d * math.log(gamma / math.sqrt(2.0)) - log_multigamma(0.5 * dof, d))
             - 0.5 * gamma * gamma * frobenius + m * jnp.sum(sum_q))
    return likelihood + prior


_gmm_value = jax.jit(gmm_objective, static_argnames=("m", "gamma"))
_gmm_grad = jax.jit(jax.grad(gmm_objective, argnums=(0, 1, 2, 3)), static_argnames=("m", "gamma"))


def _gmm_prepare(inp):
    return (_array(inp["alpha"]), _array(inp["mu"]), _array(inp["q"]), _array(inp["l"]),
            _array(inp["x"]), int(inp["m"]), float(inp["gamma"]))


def _gmm_grad_output(grads):
    return {name: _tolist(g) for name, g in zip(("alpha", "mu", "q", "l"), grads)}


def _gmm_run_value(alpha, mu, q, l, x, m, gamma):
    return _ready(_gmm_value(alpha, mu, q, l, x, m=m, gamma=gamma))


def _gmm_run_grad(alpha, mu, q, l, x, m, gamma):
    return _ready(_gmm_grad(alpha, mu, q, l, x, m=m, gamma=gamma))


def gmm_functions():
    return {"objective": Function(_gmm_prepare, _gmm_run_value, float),
            "jacobian": Function(_gmm_prepare, _gmm_run_grad, _gmm_grad_output)}


# --- kmeans ---------------------------------------------------------------
def kmeans_cost(points, centroids):
    sq_dist = (jnp.sum(points * points, axis=1)[:, None] + jnp.sum(centroids * centroids, axis=1)
               - 2.0 * points @ centroids.T)                # (n, k)
    return jnp.sum(jnp.min(sq_dist, axis=1))


@jax.jit
def _kmeans_dir(points, centroids):
    gradient = partial(jax.grad(kmeans_cost, argnums=1), points)
    jac, hess_diag = jax.jvp(gradient, (centroids,), (jnp.ones_like(centroids),))
    return jac / hess_diag


def _kmeans_prepare(inp):
    return _array(inp["points"]), _array(inp["centroids"])


def kmeans_functions():
    cost = jax.jit(kmeans_cost)
    return {
        "cost": Function(_kmeans_prepare, lambda p, c: _ready(cost(p, c)), float),
        "dir": Function(_kmeans_prepare, lambda p, c: _ready(_kmeans_dir(p, c)), _tolist),
    }


# --- llsq -----------------------------------------------------------------
def llsq_objective(x, n):
    m = x.shape[0]
    t = -1.0 + 2.0 * jnp.arange(n, dtype=x.dtype) / (n - 1.0)
    # t_i ** j for j = 0 .. m-1, as a running product
    powers = jnp.cumprod(jnp.concatenate(
        [jnp.ones((n, 1), x.dtype), jnp.broadcast_to(t[:, None], (n, m - 1))], axis=1), axis=1)
    residual = jnp.sign(t) - powers @ x
    return 0.5 * jnp.sum(residual * residual)


_llsq_value = jax.jit(llsq_objective, static_argnums=1)
_llsq_grad = jax.jit(jax.grad(llsq_objective), static_argnums=1)


def _llsq_prepare(inp):
    return _array(inp["x"]), int(inp["n"])


def llsq_functions():
    return {
        "primal": Function(_llsq_prepare, lambda x, n: _ready(_llsq_value(x, n)), float),
        "gradient": Function(_llsq_prepare, lambda x, n: _ready(_llsq_grad(x, n)), _tolist),
    }


# --- lse ------------------------------------------------------------------
def lse_objective(x):
    top = jnp.max(x)
    return top + jnp.log(jnp.sum(jnp.exp(x - top)))


def _lse_prepare(inp):
    return (_array(inp["x"]),)


def lse_functions():
    value = jax.jit(lse_objective)
    gradient = jax.jit(jax.grad(lse_objective))
    return {
        "primal": Function(_lse_prepare, lambda x: _ready(value(x)), float),
        "gradient": Function(_lse_prepare, lambda x: _ready(gradient(x)), _tolist),
    }


# --- ode ------------------------------------------------------------------
def ode_rhs(x, y):
    """dy_0/dt = x_0, dy_i/dt = x_i * y_{i-1}."""
    return x * jnp.concatenate([jnp.ones((1,), y.dtype), y[:-1]])


def ode_solve(x, s):
    """Classical RK4 from y(0) = 0 to t = 2 in s steps; the final state."""
    h = 2.0 / s

    def step(y, _):
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + 0.5 * h * k1)
        k3 = ode_rhs(x, y + 0.5 * h * k2)
        k4 = ode_rhs(x, y + h * k3)
        return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None

    y, _ = jax.lax.scan(step, jnp.zeros_like(x), None, length=s)
    return y


_ode_value = jax.jit(ode_solve, static_argnums=1)
_ode_grad = jax.jit(jax.grad(lambda x, s: ode_solve(x, s)[-1]), static_argnums=1)


def _ode_prepare(inp):
    return _array(inp["x"]), int(inp["s"])


def ode_functions():
    return {
        "primal": Function(_ode_prepare, lambda x, s: _ready(_ode_value(x, s)), _tolist),
        "gradient": Function(_ode_prepare, lambda x, s: _ready(_ode_grad(x, s)), _tolist),
    }


EVALS = {"gmm": gmm_functions, "kmeans": kmeans_functions, "llsq": llsq_functions,
         "lse": lse_functions, "ode": ode_functions}


def functions(eval_name):
    """``{gradbench_function_name: Function}`` for ``eval_name``, or None if not implemented."""
    make = EVALS.get(eval_name)
    return None if make is None else make()
