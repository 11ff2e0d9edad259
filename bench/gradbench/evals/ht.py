"""GradBench ``ht``: hand tracking (ADBench), objective and dense Jacobian.

The objective poses a skinned hand model with 26 parameters ``theta`` and
returns the distance of each observed point to its corresponding vertex
("simple" inputs), or to a point of its corresponding triangle at
barycentric coordinates ``us`` ("complicated" inputs, where ``us`` are
parameters too).

The Jacobian has ``3 * len(points)`` rows and ``2 + 26`` columns for
complicated inputs (26 for simple ones): the first two columns are the
derivatives with respect to the point's own ``u[0]`` and ``u[1]`` (no
other point depends on them), the rest those with respect to ``theta``.
``jacfwd`` computes all of it in one pass of 28 forward-mode directions: 26
for ``theta`` and two for one shift added to every row of ``us``, whose
column for ``d_us[k]`` holds, in point ``i``'s rows, the derivative with
respect to ``us[i, k]`` (Jacobian compression by a seed matrix).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import wengert as wg

from ..common import Function, ad_options, compiled, data_folder

# GradBench's data files ($GRADBENCH_DATA, or shared/ beside the repository)
DATA = data_folder("ht")
N_FINGERS = 5


# --- the objective, as a NumPy user writes it --------------------------------
def to_pose_params(theta):
    """(25, 3): global rotation, scale, translation, then one row of Euler
    angles per bone (wrist, five fingers of four bones, forearm). A finger's
    first bone stays fixed; its second takes two parameters, its third and
    fourth one each."""
    zero = np.zeros(3)
    rows = [theta[0:3], np.ones(3), theta[3:6], zero, zero]
    i = 6
    for finger in range(N_FINGERS):
        rows.append(np.stack([theta[i], theta[i + 1], 0.0]))
        rows.append(np.stack([theta[i + 2], 0.0, 0.0]))
        rows.append(np.stack([theta[i + 3], 0.0, 0.0]))
        rows.append(zero)       # the next finger's first bone; the forearm after the last
        i += 4
    return np.stack(rows)


def euler_angles_to_rotation_matrices(xzy):
    """Rotation matrices Rz @ Ry @ Rx, one per row of angles ``(x, z, y)``."""
    cx, sx = np.cos(xzy[:, 0]), np.sin(xzy[:, 0])
    cz, sz = np.cos(xzy[:, 1]), np.sin(xzy[:, 1])
    cy, sy = np.cos(xzy[:, 2]), np.sin(xzy[:, 2])
    rows = [np.stack([cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx], axis=1),
            np.stack([sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx], axis=1),
            np.stack([-sy, cy * sx, cy * cx], axis=1)]
    return np.stack(rows, axis=1)


def angle_axis_to_rotation_matrix(angle_axis):
    norm = np.sqrt(np.sum(angle_axis * angle_axis))
    if norm < 0.0001:
        return np.eye(3)
    x, y, z = angle_axis[0] / norm, angle_axis[1] / norm, angle_axis[2] / norm
    s, c = np.sin(norm), np.cos(norm)
    return np.stack([
        np.stack([x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]),
        np.stack([x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]),
        np.stack([x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c])])


def get_skinned_vertex_positions(pose, parents, base_relatives, inverse_base_absolutes,
                                 base_positions, weights, mirror):
    """(n_vertices, 3): every bone's transform applied to the base positions,
    blended by the skinning weights, mirrored (``mirror`` is (-1, 1, 1) for a
    mirrored model, ones otherwise), then the global rotation, scale and
    translation."""
    n_bones = len(parents)
    rot = euler_angles_to_rotation_matrices(pose[3:])
    # each bone's base transform, rotated by its pose (translation kept)
    relatives = np.concatenate([base_relatives[:, :, 0:3] @ rot, base_relatives[:, :, 3:4]],
                               axis=2)
    absolutes = []
    for i in range(n_bones):
        if parents[i] == -1:
            absolutes.append(relatives[i])
        else:
            absolutes.append(absolutes[parents[i]] @ relatives[i])
    transforms = np.stack(absolutes) @ inverse_base_absolutes
    # blend the bones' transforms per vertex, then apply them to its position
    blended = (weights @ transforms.reshape(n_bones, 16)).reshape(-1, 4, 4)
    positions = np.sum(blended[:, 0:3, :] * base_positions[:, None, :], axis=2) * mirror
    rotation = angle_axis_to_rotation_matrix(pose[0]) * pose[1]
    return positions @ rotation.T + pose[2]


def objective_simple(theta, model, correspondences, points):
    pose = to_pose_params(theta)
    vertices = get_skinned_vertex_positions(pose, *model)
    return points - vertices[correspondences]


def objective_complicated(theta, us, model, triangles, points):
    """``triangles`` holds the vertices of each point's triangle."""
    pose = to_pose_params(theta)
    vertices = get_skinned_vertex_positions(pose, *model)
    u0 = us[:, 0:1]
    u1 = us[:, 1:2]
    hand_points = (u0 * vertices[triangles[:, 0]] + u1 * vertices[triangles[:, 1]]
                   + (1.0 - u0 - u1) * vertices[triangles[:, 2]])
    return points - hand_points


def residuals_of(us, model, index, points):
    """The residuals as a function of the parameters, for fixed data: of
    ``theta`` alone for simple inputs, of ``theta`` and one shift added to
    every row of ``us`` for complicated ones. (Integer index arrays enter the
    differentiated code as known values, through the closure.)"""
    if us is None:
        def residuals(theta):
            return objective_simple(theta, model, index, points)
    else:
        def residuals(theta, d_us):
            return objective_complicated(theta, us + d_us, model, index, points)
    return residuals


# --- GradBench glue ----------------------------------------------------------
def prepare(input):
    """(theta, us or None, model, correspondences or their triangles, points)."""
    data, m = input["data"], input["data"]["model"]
    model = (tuple(int(p) for p in m["parents"]), np.asarray(m["base_relatives"], float),
             np.asarray(m["inverse_base_absolutes"], float),
             np.asarray(m["base_positions"], float), np.asarray(m["weights"], float),
             np.array([-1.0 if m["is_mirrored"] else 1.0, 1.0, 1.0]))
    corr = np.asarray(data["correspondences"], np.int64)
    us = np.asarray(input["us"], float)
    points = np.asarray(data["points"], float)
    if us.size == 0:
        return np.asarray(input["theta"], float), None, model, corr, points
    triangles = np.asarray(m["triangles"], np.int64)[corr]
    return np.asarray(input["theta"], float), us.reshape(-1, 2), model, triangles, points


def functions(engine="auto", backend="python"):
    ad = ad_options(engine, backend)
    def prepare_jacobian(input):
        theta, us, model, index, points = prepare(input)
        residuals = residuals_of(us, model, index, points)
        if us is None:
            return wg.jacfwd(residuals, **ad), theta, None
        return wg.jacfwd(residuals, argnums=(0, 1), **ad), theta, np.zeros(2)

    simple = compiled(objective_simple, backend)
    complicated = compiled(objective_complicated, backend)

    def run_objective(theta, us, model, index, points):
        if us is None:
            return simple(theta, model, index, points)
        return complicated(theta, us, model, index, points)

    def run_jacobian(jacobian, theta, zero_shift):
        if zero_shift is None:
            return jacobian(theta).reshape(-1, len(theta))
        j_theta, j_us = jacobian(theta, zero_shift)
        return np.concatenate([j_us.reshape(-1, 2), j_theta.reshape(-1, len(theta))], axis=1)

    return {"objective": Function(prepare, run_objective, lambda r: r.reshape(-1).tolist()),
            "jacobian": Function(prepare_jacobian, run_jacobian, lambda r: r.tolist())}


# --- inputs ------------------------------------------------------------------
def read_model(folder):
    """The model files of an ADBench hand model folder, as GradBench's ``HTModel``."""
    folder = Path(folder)
    bones = [line.split(":") for line in (folder / "bones.txt").read_text().splitlines()
             if line.strip()]
    n_bones = len(bones)
    vertices = [line.split(":") for line in (folder / "vertices.txt").read_text().splitlines()
                if line.strip()]
    positions = np.ones((len(vertices), 4))
    weights = np.zeros((len(vertices), n_bones))
    for k, v in enumerate(vertices):
        positions[k, :3] = [float(a) for a in v[:3]]
        for j in range(int(v[8])):
            weights[k, int(v[9 + 2 * j])] = float(v[10 + 2 * j])
    triangles = [[int(a) for a in line.split(":")]
                 for line in (folder / "triangles.txt").read_text().splitlines() if line.strip()]
    return {"bone_count": n_bones, "bone_names": [b[0] for b in bones],
            "parents": [int(b[1]) for b in bones],
            "base_relatives": [np.asarray(b[2:18], float).reshape(4, 4).tolist() for b in bones],
            "inverse_base_absolutes": [np.asarray(b[18:34], float).reshape(4, 4).tolist()
                                       for b in bones],
            "base_positions": positions.tolist(), "weights": weights.tolist(),
            "triangles": triangles, "is_mirrored": False}


def read_instance(model_folder, path, complicated):
    """An ADBench hand instance file (points, then ``us`` if complicated, then theta)."""
    lines = Path(path).read_text().splitlines()
    n_points, n_theta = (int(a) for a in lines[0].split())
    rows = [line.split() for line in lines[1:1 + n_points]]
    at = 1 + n_points
    us = []
    if complicated:
        us = [[float(a) for a in line.split()] for line in lines[at:at + n_points]]
        at += n_points
    theta = [float(lines[at + k]) for k in range(n_theta)]
    return {"theta": theta, "us": us,
            "data": {"model": read_model(model_folder),
                     "correspondences": [int(r[0]) for r in rows],
                     "points": [[float(a) for a in r[1:4]] for r in rows]}}


def random_model(n_vertices, rng, n_bones=22):
    """A model with the hand's bone hierarchy (a wrist, five four-bone
    fingers, a forearm) and random transforms, vertices and weights."""
    parents = [-1] + [0 if k % 4 == 0 else k for k in range(20)] + [0]

    def rigid():
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        m = np.eye(4)
        m[:3, :3], m[:3, 3] = q, rng.normal(scale=0.1, size=3)
        return m
    weights = rng.uniform(size=(n_vertices, n_bones)) * (rng.uniform(size=(n_vertices, n_bones))
                                                         < 0.2)
    weights[:, 0] += 0.1
    weights /= weights.sum(axis=1, keepdims=True)
    positions = np.ones((n_vertices, 4))
    positions[:, :3] = rng.normal(scale=0.1, size=(n_vertices, 3))
    triangles = rng.integers(0, n_vertices, size=(2 * n_vertices, 3))
    return {"bone_count": n_bones, "bone_names": [f"bone{k}" for k in range(n_bones)],
            "parents": parents,
            "base_relatives": [rigid().tolist() for _ in range(n_bones)],
            "inverse_base_absolutes": [rigid().tolist() for _ in range(n_bones)],
            "base_positions": positions.tolist(), "weights": weights.tolist(),
            "triangles": triangles.tolist(), "is_mirrored": False}


def make_input(points=None, vertices=20, complicated=True, instance=1, seed=0):
    """GradBench's input: instance ``hand{instance}`` of the shipped
    ``complicated_small`` (or ``simple_small``) data, the eval's first by
    default; with ``points`` a random model of ``vertices`` vertices and that
    many correspondences."""
    if points is None:
        folder = DATA / ("complicated_small" if complicated else "simple_small")
        return read_instance(folder / "model", next(folder.glob(f"hand{instance}_*.txt")),
                             complicated)
    rng = np.random.default_rng(seed)
    model = random_model(vertices, rng)
    n_corr = len(model["triangles"]) if complicated else vertices
    return {"theta": rng.normal(scale=0.5, size=26).tolist(),
            "us": rng.uniform(0, 0.5, size=(points, 2)).tolist() if complicated else [],
            "data": {"model": model,
                     "correspondences": rng.integers(0, n_corr, size=points).tolist(),
                     "points": rng.normal(scale=0.2, size=(points, 3)).tolist()}}
