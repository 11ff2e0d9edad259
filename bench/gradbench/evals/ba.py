"""GradBench ``ba``: bundle adjustment (ADBench), objective and sparse Jacobian.

The objective is the reprojection error of every observation, written with
NumPy over all observations at once (column ``i`` of every array is
observation ``i``), and the weight error ``1 - w**2``.

Observation ``i``'s two residuals depend only on its own camera column,
point column and weight, so the Jacobian is block-sparse: a 2 x 15 block per
observation and a 1 x 1 block per weight. ``jacrev`` computes all blocks at
once, from the residuals summed over the observations: the gradient of the
sum of residual ``k`` with respect to camera column ``i`` is the derivative
of observation ``i``'s residual ``k`` alone, since no other observation
reads that column (Jacobian compression by a seed matrix). That is two
reverse passes, batched (one per residual component), over arrays of length
``p``, and the gradient of the summed weight errors. The blocks are then laid
out in GradBench's CSR form (``rows`` is the row-pointer array).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import wengert as wg

from ..common import Function, ad_options, compiled, data_folder

N_CAM_PARAMS = 11
# GradBench's data files ($GRADBENCH_DATA, or shared/ beside the repository)
DATA = data_folder("ba")


# --- the objective, as a NumPy user writes it --------------------------------
# Arrays hold one observation per column: a camera is a column of 11
# parameters ``[r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2]``, a point a column of 3
# coordinates, so that each parameter is one contiguous row.
def rodrigues_rotate_point(rot, pt):
    """Rotate each column of ``pt`` by the angle-axis vector in the same column of ``rot``."""
    sqtheta = np.sum(rot * rot, axis=0)
    nonzero = sqtheta != 0.0
    # keep sqrt and the division away from 0 in columns that use the other formula
    theta = np.sqrt(np.where(nonzero, sqtheta, 1.0))
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    w = rot / theta
    w_cross_pt = cross(w, pt)
    tmp = np.sum(w * pt, axis=0) * (1.0 - costheta)
    rotated = pt * costheta + w_cross_pt * sintheta + w * tmp
    small = pt + cross(rot, pt)
    return np.where(nonzero, rotated, small)


def cross(a, b):
    """Column-wise cross product of two (3, n) arrays."""
    return np.stack([a[1] * b[2] - a[2] * b[1],
                     a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def radial_distort(rad_params, proj):
    rsq = np.sum(proj * proj, axis=0)
    return proj * (1.0 + rad_params[0] * rsq + rad_params[1] * rsq * rsq)


def project(cam, x):
    """Camera columns applied to point columns: (2, n) image positions."""
    xcam = rodrigues_rotate_point(cam[0:3], x - cam[3:6])
    distorted = radial_distort(cam[9:11], xcam[0:2] / xcam[2])
    return distorted * cam[6] + cam[7:9]


def reproj_error(cam, x, w, feat):
    """(2, p) residuals: observation ``i`` sees point ``x[:, i]`` with camera ``cam[:, i]``."""
    return w * (project(cam, x) - feat)


def w_error(w):
    return 1.0 - w * w


def objective(cams, points, w, obs, feats):
    """The GradBench objective: residuals of all observations (observation
    by observation), and weight errors."""
    err = reproj_error(cams[:, obs[:, 0]], points[:, obs[:, 1]], w, feats)
    return err.T.reshape(-1), w_error(w)


def summed_reproj_error(cam, x, w, feat):
    """The two residuals, each summed over the observations: their
    reverse-mode Jacobian holds every 2 x 15 block of the sparse one."""
    return np.sum(reproj_error(cam, x, w, feat), axis=1)


def summed_w_error(w):
    """The weight errors summed: its gradient is the diagonal of their Jacobian."""
    return np.sum(w_error(w))


# --- GradBench glue ----------------------------------------------------------
def expand(input):
    """The full problem from GradBench's description: one camera, point,
    weight and feature repeated; observation ``i`` pairs camera ``i % n``
    with point ``i % m``."""
    n, m, p = input["n"], input["m"], input["p"]
    cams = np.tile(np.asarray(input["cam"], float)[:, None], (1, n))
    points = np.tile(np.asarray(input["x"], float)[:, None], (1, m))
    w = np.full(p, float(input["w"]))
    feats = np.tile(np.asarray(input["feat"], float)[:, None], (1, p))
    idx = np.arange(p)
    obs = np.stack([idx % n, idx % m], axis=1)
    return cams, points, w, obs, feats


def objective_output(result):
    reproj, werr = result
    return {"reproj_error": {"elements": reproj[:2].tolist(), "repeated": len(reproj) // 2},
            "w_err": {"element": float(werr[0]), "repeated": len(werr)}}


def sparse_jacobian(n, m, obs, j_cam, j_x, j_w, j_werr):
    """GradBench's CSR layout: for observation ``i``, rows ``2i`` and ``2i+1``
    hold 11 camera, 3 point and 1 weight entries; then one row per weight."""
    p = len(obs)
    per_row = N_CAM_PARAMS + 3 + 1
    cols = np.empty((p, 2, per_row), np.int64)
    cols[:, :, :N_CAM_PARAMS] = (N_CAM_PARAMS * obs[:, 0])[:, None, None] + np.arange(N_CAM_PARAMS)
    cols[:, :, N_CAM_PARAMS:N_CAM_PARAMS + 3] = (N_CAM_PARAMS * n + 3 * obs[:, 1])[:, None, None] \
        + np.arange(3)
    cols[:, :, -1] = (N_CAM_PARAMS * n + 3 * m + np.arange(p))[:, None]
    vals = np.concatenate([j_cam, j_x, j_w[:, :, None]], axis=2)
    w_cols = N_CAM_PARAMS * n + 3 * m + np.arange(p)
    rows = np.concatenate([np.arange(2 * p + 1) * per_row,
                           2 * p * per_row + np.arange(1, p + 1)])
    return rows, np.concatenate([cols.reshape(-1), w_cols]), np.concatenate(
        [vals.reshape(-1), j_werr])


def jacobian_output(mat):
    rows, cols, vals = mat

    def head_and_last(a):
        return a[:30].tolist() + [a[-1].item()]
    return {"rows": head_and_last(rows), "cols": head_and_last(cols),
            "vals": head_and_last(vals)}


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    jac_reproj = wg.jacrev(summed_reproj_error, argnums=(0, 1, 2), **ad)
    grad_w = wg.grad(summed_w_error, **ad)

    def prepare(input):
        return (input["n"], input["m"]) + expand(input)

    run = compiled(objective, backend)

    def run_objective(n, m, cams, points, w, obs, feats):
        return run(cams, points, w, obs, feats)

    def run_jacobian(n, m, cams, points, w, obs, feats):
        j_cam, j_x, j_w = jac_reproj(cams[:, obs[:, 0]], points[:, obs[:, 1]], w, feats)
        # (2, k, p) -> (p, 2, k): observation i's block
        return sparse_jacobian(n, m, obs, j_cam.transpose(2, 0, 1), j_x.transpose(2, 0, 1),
                               j_w.T, grad_w(w))

    return {"objective": Function(prepare, run_objective, objective_output),
            "jacobian": Function(prepare, run_jacobian, jacobian_output)}


def read(path):
    """A GradBench ba description file: ``n m p``, then one camera, point,
    weight and feature."""
    lines = Path(path).read_text().split("\n")
    n, m, p = (int(v) for v in lines[0].split())
    return {"n": n, "m": m, "p": p, "cam": [float(v) for v in lines[1].split()],
            "x": [float(v) for v in lines[2].split()], "w": float(lines[3]),
            "feat": [float(v) for v in lines[4].split()]}


def make_input(n=None, m=None, p=None, instance=1, seed=0):
    """GradBench's input: the data file ``ba{instance}`` (the eval's first,
    by default); with ``n, m, p`` a small random problem of that size."""
    if n is None:
        return read(next(DATA.glob(f"ba{instance}_*.txt")))
    rng = np.random.default_rng(seed)
    cam = np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), [rng.uniform(200, 400)],
                          rng.uniform(-10, 10, 2), rng.uniform(-1e-2, 1e-2, 2)])
    return {"n": n, "m": m, "p": p, "cam": cam.tolist(),
            "x": rng.uniform(5, 10, 3).tolist(),
            "w": float(rng.uniform(0.5, 1.5)), "feat": rng.uniform(-50, 50, 2).tolist()}
