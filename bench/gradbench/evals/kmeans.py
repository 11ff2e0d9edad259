"""GradBench ``kmeans``: the k-means cost, and the Newton direction J / H.

``cost`` is the sum over points of the squared distance to the nearest
centroid. ``dir`` needs its gradient J with respect to the centroids and its
Hessian H, which is diagonal (each coordinate of each centroid only meets
itself), so diag(H) = H 1: one forward-mode derivative of the gradient along
a tangent of ones gives both J and diag(H). ``make_input()`` gives the largest
size the eval sends by default (k = 1000, n = 10000, d = 16).
"""
import numpy as np
import wengert as wg

from ..common import Function, ad_options, compiled


def cost(points, centroids):
    # |p - c|^2 = |p|^2 + (|c|^2 - 2 p.c): the nearest c minimises the bracket (n x k)
    closest = np.min(np.sum(centroids ** 2, axis=1) - 2.0 * points @ centroids.T, axis=1)
    return np.sum(points ** 2) + np.sum(closest)


def _prepare(input):
    return (np.array(input["points"], dtype=np.float64),
            np.array(input["centroids"], dtype=np.float64))


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    cost_grad = wg.grad(cost, argnums=1, **ad)

    def direction(points, centroids):
        J, H_diag = wg.jvp(lambda c: cost_grad(points, c), (centroids,),
                           (np.ones_like(centroids),), **ad)
        return J / H_diag

    return {
        "cost": Function(_prepare, compiled(cost, backend), float),
        "dir": Function(_prepare, direction, np.ndarray.tolist),
    }


def make_input(k=1000, n=10000, d=16, seed=0):
    points = np.random.default_rng(seed).random((n, d))
    centroids = points[-k:]          # as the eval does: no cluster is empty
    return {"points": points.tolist(), "centroids": centroids.tolist(),
            "min_runs": 1, "min_seconds": 0.0}
