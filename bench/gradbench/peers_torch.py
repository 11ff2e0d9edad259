"""PyTorch implementations of the GradBench evals that GradBench's own PyTorch tool implements.

The comparison bench (``python -m bench.gradbench_compare``) times these against wengert,
in float64 on the CPU. Each eval uses the derivative strategy of GradBench's PyTorch tool
(eager autograd, reverse mode), written here without its per-element Python loops where
the computation is independent per element:

  ba      reverse mode, one backward pass per row of each observation's 2 x 15 block, the
          observations batched (the tool loops over them, one pair of passes each); the
          blocks are then laid out in the eval's sparse (CSR) form
  gmm     one backward pass of the log posterior
  ht      the dense Jacobian by reverse mode, one vector-Jacobian product per output row
          (batched with ``vectorize=True``; the tool runs them one by one), then the eval's
          [us-part | theta-part] layout
  kmeans  gradient by one backward pass, the Hessian's diagonal (the Hessian is diagonal)
          as a Hessian-vector product with ones (reverse over reverse); returns J / H
  lse     one backward pass of the max-shifted log-sum-exp
  lstm    one backward pass through the loop over the sequence and the layers

Leaves that need gradients are made in ``prepare`` (untimed) as GradBench's tool does;
gradients are taken with ``torch.autograd.grad``, so nothing accumulates across runs.
``functions(eval_name)`` returns ``{gradbench_function_name: Function}`` or ``None``.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from bench.gradbench.common import Function

NAME = "torch"
VERSION = torch.__version__
F64 = torch.float64


def _tensor(data, requires_grad=False):
    return torch.tensor(np.asarray(data, dtype=np.float64), dtype=F64, requires_grad=requires_grad)


def _tolist(t):
    return t.detach().numpy().tolist()


def _float(t):
    return float(t.detach())


# --- ba -------------------------------------------------------------------
BA_NCAM = 11   # rotation (3), centre (3), focal length, principal point (2), radial (2)


def ba_rotate(rot, pts):
    """Rodrigues' rotation of each row of ``pts`` by the angle-axis row of ``rot``."""
    sq_angle = torch.sum(rot * rot, dim=1, keepdim=True)
    nonzero = sq_angle != 0.0
    # a zero angle takes the first-order formula; the safe angle keeps its gradient finite
    angle = torch.sqrt(torch.where(nonzero, sq_angle, torch.ones_like(sq_angle)))
    axis = rot / angle
    cos, sin = torch.cos(angle), torch.sin(angle)
    along = torch.sum(axis * pts, dim=1, keepdim=True) * (1.0 - cos)
    rotated = pts * cos + torch.linalg.cross(axis, pts) * sin + axis * along
    return torch.where(nonzero, rotated, pts + torch.linalg.cross(rot, pts))


def ba_reproj_err(cams, pts, w, feats):
    """Weighted reprojection errors, one row per observation: (p, 2)."""
    in_cam = ba_rotate(cams[:, 0:3], pts - cams[:, 3:6])
    proj = in_cam[:, 0:2] / in_cam[:, 2:3]
    rsq = torch.sum(proj * proj, dim=1, keepdim=True)
    distort = 1.0 + cams[:, 9:10] * rsq + cams[:, 10:11] * rsq * rsq
    return w[:, None] * (proj * distort * cams[:, 6:7] + cams[:, 7:9] - feats)


def ba_w_err(w):
    return 1.0 - w * w


def _ba_prepare(inp):
    n, m, p = int(inp["n"]), int(inp["m"]), int(inp["p"])
    cams = _tensor(np.tile(np.asarray(inp["cam"], dtype=np.float64), (n, 1)))
    pts = _tensor(np.tile(np.asarray(inp["x"], dtype=np.float64), (m, 1)))
    w = _tensor(np.full(p, float(inp["w"])))
    feats = _tensor(np.tile(np.asarray(inp["feat"], dtype=np.float64), (p, 1)))
    obs = np.arange(p)
    cam_idx = torch.from_numpy(obs % n)
    pt_idx = torch.from_numpy(obs % m)
    return cams, pts, w, feats, cam_idx, pt_idx


def _ba_objective(cams, pts, w, feats, cam_idx, pt_idx):
    reproj = ba_reproj_err(cams[cam_idx], pts[pt_idx], w, feats)
    return reproj.reshape(-1), ba_w_err(w)


def _ba_jacobian(cams, pts, w, feats, cam_idx, pt_idx):
    n, m, p = cams.shape[0], pts.shape[0], w.shape[0]
    # each observation's error depends only on its own copies: reverse passes over the
    # summed first (second) error components give every block's first (second) row
    leaves = (cams[cam_idx].requires_grad_(), pts[pt_idx].requires_grad_(),
              w.detach().clone().requires_grad_())
    reproj = ba_reproj_err(*leaves, feats)
    block_rows = []
    for row in range(2):
        d_cam, d_pt, d_w = torch.autograd.grad(reproj[:, row].sum(), leaves, retain_graph=row == 0)
        block_rows.append(torch.cat([d_cam, d_pt, d_w[:, None]], dim=1))     # (p, 15)
    w_leaf = w.detach().clone().requires_grad_()
    d_w_err, = torch.autograd.grad(ba_w_err(w_leaf).sum(), w_leaf)
    # CSR layout of the eval: 2p rows of 15 entries (camera, point, weight), then p rows of 1
    vals = torch.cat([torch.stack(block_rows, dim=1).reshape(-1), d_w_err])
    block_cols = np.concatenate([
        BA_NCAM * cam_idx.numpy()[:, None] + np.arange(BA_NCAM),
        BA_NCAM * n + 3 * pt_idx.numpy()[:, None] + np.arange(3),
        (BA_NCAM * n + 3 * m + np.arange(p))[:, None]], axis=1)
    cols = np.concatenate([np.repeat(block_cols, 2, axis=0).reshape(-1),
                           BA_NCAM * n + 3 * m + np.arange(p)])
    rows = np.concatenate([15 * np.arange(2 * p + 1), 30 * p + np.arange(1, p + 1)])
    return rows, cols, vals


def _ba_objective_output(result):
    reproj, w_err = (t.detach().numpy() for t in result)
    return {"reproj_error": {"elements": reproj[:2].tolist(), "repeated": len(reproj) // 2},
            "w_err": {"element": float(w_err[0]), "repeated": len(w_err)}}


def _ba_jacobian_output(result):
    rows, cols, vals = result
    vals = vals.detach().numpy()

    def ends(a):
        return a[:30].tolist() + [a[-1].item()]
    return {"rows": [int(r) for r in ends(rows)], "cols": [int(c) for c in ends(cols)],
            "vals": [float(v) for v in ends(vals)]}


def ba_functions():
    return {"objective": Function(_ba_prepare, _ba_objective, _ba_objective_output),
            "jacobian": Function(_ba_prepare, _ba_jacobian, _ba_jacobian_output)}


# --- gmm ------------------------------------------------------------------
from .evals.gmm import log_multigamma  # noqa: E402  (a constant: plain Python)


def gmm_objective(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = alpha.shape[0]
    cols, rows = np.triu_indices(d, 1)          # Q's lower part, filled column by column
    lower = torch.zeros((k, d, d), dtype=l.dtype)
    lower[:, torch.from_numpy(rows), torch.from_numpy(cols)] = l
    diag = torch.exp(q)
    sum_q = torch.sum(q, dim=1)
    centred = x[:, None, :] - mu[None, :, :]
    qx = diag * centred + torch.einsum("kij,nkj->nki", lower, centred)
    beta = alpha + sum_q - 0.5 * torch.sum(qx * qx, dim=2)
    likelihood = (-n * d * 0.5 * math.log(2.0 * math.pi)
                  + torch.sum(torch.logsumexp(beta, dim=1)) - n * torch.logsumexp(alpha, dim=0))
    dof = d + m + 1
    frobenius = torch.sum(diag * diag) + torch.sum(l * l)
    prior = (k * (dof * d * math.log(gamma / math.sqrt(2.0)) - log_multigamma(0.5 * dof, d))
             - 0.5 * gamma * gamma * frobenius + m * torch.sum(sum_q))
    return likelihood + prior


def _gmm_prepare(inp):
    return (_tensor(inp["alpha"], True), _tensor(inp["mu"], True), _tensor(inp["q"], True),
            _tensor(inp["l"], True), _tensor(inp["x"]), int(inp["m"]), float(inp["gamma"]))


def _gmm_jacobian(alpha, mu, q, l, x, m, gamma):
    return torch.autograd.grad(gmm_objective(alpha, mu, q, l, x, m, gamma), (alpha, mu, q, l))


def gmm_functions():
    return {
        "objective": Function(_gmm_prepare, gmm_objective, _float),
        "jacobian": Function(_gmm_prepare, _gmm_jacobian,
                             lambda g: dict(zip(("alpha", "mu", "q", "l"), map(_tolist, g)))),
    }


# --- ht -------------------------------------------------------------------
def ht_pose_params(theta, n_bones):
    """(n_bones + 3, 3): global rotation, scale (ones), translation, then per-bone angles."""
    rows = [theta[0:3], torch.ones(3, dtype=theta.dtype), theta[3:6]]
    zero = torch.zeros((), dtype=theta.dtype)
    rows += [torch.zeros(3, dtype=theta.dtype)] * 2
    i = 6
    for _finger in range(5):
        rows.append(torch.stack([theta[i], theta[i + 1], zero]))   # the finger's base: 2 angles
        rows.append(torch.stack([theta[i + 2], zero, zero]))
        rows.append(torch.stack([theta[i + 3], zero, zero]))
        rows.append(torch.zeros(3, dtype=theta.dtype))
        i += 4
    pose = torch.stack(rows)
    return pose[: n_bones + 3]


def ht_euler_to_rotation(angles):
    """R = Rz @ Ry @ Rx for each row (x, z, y) of ``angles``: (b, 3, 3)."""
    tx, tz, ty = angles[:, 0], angles[:, 1], angles[:, 2]
    one, zero = torch.ones_like(tx), torch.zeros_like(tx)
    rx = torch.stack([one, zero, zero, zero, torch.cos(tx), -torch.sin(tx),
                      zero, torch.sin(tx), torch.cos(tx)], dim=1).reshape(-1, 3, 3)
    ry = torch.stack([torch.cos(ty), zero, -torch.sin(ty), zero, one, zero,
                      torch.sin(ty), zero, torch.cos(ty)], dim=1).reshape(-1, 3, 3)
    rz = torch.stack([torch.cos(tz), -torch.sin(tz), zero, torch.sin(tz), torch.cos(tz), zero,
                      zero, zero, one], dim=1).reshape(-1, 3, 3)
    return rz @ ry @ rx


def ht_angle_axis_to_rotation(aa):
    angle = torch.sqrt(torch.sum(aa * aa))
    if angle < 1e-4:
        return torch.eye(3, dtype=aa.dtype)
    x, y, z = aa / angle
    s, c = torch.sin(angle), torch.cos(angle)
    return torch.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]).reshape(3, 3)


def ht_vertices(theta, model):
    n_bones = model["n_bones"]
    pose = ht_pose_params(theta, n_bones)
    rot = ht_euler_to_rotation(pose[3:])
    posed = torch.zeros((n_bones, 4, 4), dtype=theta.dtype)
    posed[:, :3, :3] = rot
    posed[:, 3, 3] = 1.0
    relatives = model["base_relatives"] @ posed
    absolutes = []
    for i, parent in enumerate(model["parents"]):
        absolutes.append(relatives[i] if parent < 0 else absolutes[parent] @ relatives[i])
    transforms = torch.stack(absolutes) @ model["inverse_base_absolutes"]   # (b, 4, 4)
    moved = transforms[:, :3, :] @ model["base_positions"].T                 # (b, 3, v)
    skinned = torch.einsum("bkv,vb->vk", moved, model["weights"])           # (v, 3)
    glob = ht_angle_axis_to_rotation(pose[0]) * pose[1]                      # scale columns
    return skinned @ glob.T + pose[2]


def ht_objective(params, model):
    points, corr = model["points"], model["correspondences"]
    if model["triangles_of_points"] is None:
        return (points - ht_vertices(params, model)[corr]).reshape(-1)
    npts = points.shape[0]
    us = params[: 2 * npts].reshape(npts, 2)
    verts = ht_vertices(params[2 * npts:], model)
    tri = model["triangles_of_points"]                                       # (npts, 3)
    hand = (us[:, 0:1] * verts[tri[:, 0]] + us[:, 1:2] * verts[tri[:, 1]]
            + (1.0 - us[:, 0:1] - us[:, 1:2]) * verts[tri[:, 2]])
    return (points - hand).reshape(-1)


def _ht_prepare(inp):
    data = inp["data"]
    mod = data["model"]
    corr = torch.as_tensor(np.asarray(data["correspondences"], dtype=np.int64))
    us = np.asarray(inp.get("us") or [], dtype=np.float64).reshape(-1)
    model = {
        "n_bones": int(mod["bone_count"]),
        "parents": [int(p) for p in mod["parents"]],
        "base_relatives": _tensor(mod["base_relatives"]),
        "inverse_base_absolutes": _tensor(mod["inverse_base_absolutes"]),
        "base_positions": _tensor(mod["base_positions"]),
        "weights": _tensor(mod["weights"]),
        "points": _tensor(data["points"]),
        "correspondences": corr,
        "triangles_of_points": None,
    }
    theta = np.asarray(inp["theta"], dtype=np.float64)
    if us.size:
        triangles = torch.as_tensor(np.asarray(mod["triangles"], dtype=np.int64))
        model["triangles_of_points"] = triangles[corr]
        params = _tensor(np.concatenate([us, theta]), True)
    else:
        params = _tensor(theta, True)
    return params, model


def _ht_objective(params, model):
    return ht_objective(params, model)


def _ht_jacobian(params, model):
    jac = torch.autograd.functional.jacobian(lambda p: ht_objective(p, model), params,
                                             vectorize=True, strategy="reverse-mode")
    if model["triangles_of_points"] is None:
        return jac
    npts = model["points"].shape[0]
    # keep each point's 3 x 2 block of the us-part (block diagonal), then the theta-part
    point = torch.arange(3 * npts) // 3
    us_part = torch.stack([jac[torch.arange(3 * npts), 2 * point],
                           jac[torch.arange(3 * npts), 2 * point + 1]], dim=1)
    return torch.cat([us_part, jac[:, 2 * npts:]], dim=1)


def ht_functions():
    return {"objective": Function(_ht_prepare, _ht_objective, _tolist),
            "jacobian": Function(_ht_prepare, _ht_jacobian, _tolist)}


# --- kmeans ---------------------------------------------------------------
def kmeans_cost(points, centroids):
    sq_dist = (torch.sum(points * points, dim=1)[:, None] + torch.sum(centroids * centroids, dim=1)
               - 2.0 * points @ centroids.T)
    return torch.sum(torch.min(sq_dist, dim=1).values)


def _kmeans_prepare(inp):
    return _tensor(inp["points"]), _tensor(inp["centroids"], True)


def _kmeans_dir(points, centroids):
    jac, = torch.autograd.grad(kmeans_cost(points, centroids), centroids, create_graph=True)
    hess_diag, = torch.autograd.grad(jac, centroids, grad_outputs=torch.ones_like(centroids))
    return jac.detach() / hess_diag


def kmeans_functions():
    return {"cost": Function(_kmeans_prepare, kmeans_cost, _float),
            "dir": Function(_kmeans_prepare, _kmeans_dir, _tolist)}


# --- lse ------------------------------------------------------------------
def lse_objective(x):
    top = torch.max(x)
    return top + torch.log(torch.sum(torch.exp(x - top)))


def _lse_gradient(x):
    return torch.autograd.grad(lse_objective(x), x)[0]


def _lse_prepare(inp):
    return (_tensor(inp["x"], True),)


def lse_functions():
    return {"primal": Function(_lse_prepare, lse_objective, _float),
            "gradient": Function(_lse_prepare, _lse_gradient, _tolist)}


# --- lstm -----------------------------------------------------------------
def lstm_cell(weight, bias, hidden, cell, inp):
    """One layer: the ADBench LSTM, whose weight matrices are diagonal."""
    h = hidden.shape[0]
    gates = torch.cat((inp, hidden, inp, hidden)) * weight + bias
    forget = torch.sigmoid(gates[0:h])
    ingate = torch.sigmoid(gates[h:2 * h])
    outgate = torch.sigmoid(gates[2 * h:3 * h])
    change = torch.tanh(gates[3 * h:])
    cell = cell * forget + ingate * change
    return outgate * torch.tanh(cell), cell


def lstm_objective(main_params, extra_params, state, sequence):
    layers = state.shape[0] // 2
    hidden = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra_params[0]
        for i in range(layers):
            hidden[i], cell[i] = lstm_cell(main_params[2 * i], main_params[2 * i + 1],
                                           hidden[i], cell[i], x)
            x = hidden[i]
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - torch.log(torch.sum(torch.exp(ypred)) + 2.0)
        total = total + torch.sum(sequence[t + 1] * ynorm)
    return -total / ((sequence.shape[0] - 1) * sequence.shape[1])


def _lstm_prepare(inp):
    return (_tensor(inp["main_params"], True), _tensor(inp["extra_params"], True),
            _tensor(inp["state"]), _tensor(inp["sequence"]))


def _lstm_jacobian(main_params, extra_params, state, sequence):
    grads = torch.autograd.grad(lstm_objective(main_params, extra_params, state, sequence),
                                (main_params, extra_params))
    return torch.cat([g.reshape(-1) for g in grads])


def lstm_functions():
    return {"objective": Function(_lstm_prepare, lstm_objective, _float),
            "jacobian": Function(_lstm_prepare, _lstm_jacobian, _tolist)}


EVALS = {"ba": ba_functions, "gmm": gmm_functions, "ht": ht_functions,
         "kmeans": kmeans_functions, "lse": lse_functions, "lstm": lstm_functions}


def functions(eval_name):
    """``{gradbench_function_name: Function}`` for ``eval_name``, or None if not implemented."""
    make = EVALS.get(eval_name)
    return None if make is None else make()
