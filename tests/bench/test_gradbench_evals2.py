"""The GradBench evals ba, ht, lstm, particle and saddle (bench/gradbench/evals/)
on small inputs: every derivative the tool reports against central differences
of the eval's own objective, and the source and trace engines against each
other.

ba and ht report sparse or compressed Jacobians: the tests expand them to
dense matrices and compare with the full finite-difference Jacobian. particle
and saddle report the result of a descent; their derivatives (the nested ones
included) are checked where the descent calls them, and one variant of each
runs to GradBench's expected answer.
"""
import numpy as np
import pytest

from checks import AD_VS_AD_RTOL_F64, PROGRAM_RTOL_F64, assert_close, fd_jacobian

from bench.gradbench.evals import ba, ht, lstm, particle, saddle

ENGINES = ("source", "trace")
# GradBench's reference answers (its particle and saddle evals compare with these)
PARTICLE_W = 0.2071918746486116
SADDLE_XY = 8.246324826140356e-06


# --- ba ----------------------------------------------------------------------
def ba_args(seed=0):
    """A small problem in GradBench's format, then with every camera, point,
    weight and feature perturbed, so that no two Jacobian blocks are equal."""
    fn = ba.functions("trace")["objective"]
    n, m, cams, points, w, obs, feats = fn.prepare(ba.make_input(n=3, m=4, p=7, seed=seed))
    rng = np.random.default_rng(seed)
    cams = cams * (1 + 0.1 * rng.standard_normal(cams.shape))
    points = points + 0.1 * rng.standard_normal(points.shape)
    w = w + 0.1 * rng.standard_normal(w.shape)
    feats = feats + rng.standard_normal(feats.shape)
    return n, m, cams, points, w, obs, feats


def dense(rows, cols, vals, shape):
    """A CSR matrix (``rows`` the row pointers) as a dense one."""
    out = np.zeros(shape)
    for r in range(shape[0]):
        for k in range(rows[r], rows[r + 1]):
            out[r, cols[k]] += vals[k]
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_ba_jacobian_matches_finite_differences(engine):
    n, m, cams, points, w, obs, feats = args = ba_args()
    p = len(w)
    rows, cols, vals = ba.functions(engine)["jacobian"].run(*args)
    assert len(rows) == 3 * p + 1 and len(cols) == len(vals) == 31 * p
    got = dense(rows, cols, vals, (3 * p, 11 * n + 3 * m + p))

    def errors(cams_by_row, points_by_row, w):
        # GradBench numbers the columns camera by camera, point by point
        reproj, werr = ba.objective(cams_by_row.T, points_by_row.T, w, obs, feats)
        return np.concatenate([reproj, werr])
    assert_close(got, fd_jacobian(errors, (cams.T, points.T, w)), PROGRAM_RTOL_F64,
                 what="ba Jacobian")


def test_ba_engines_agree():
    args = ba_args(seed=1)
    src = ba.functions("source")["jacobian"].run(*args)
    trace = ba.functions("trace")["jacobian"].run(*args)
    for a, b in zip(src, trace):
        assert_close(a, b, AD_VS_AD_RTOL_F64, what="ba source vs trace")


def test_ba_outputs_follow_gradbench_layout():
    fns = ba.functions("source")
    input = ba.make_input(n=3, m=4, p=7)
    obj = fns["objective"](input)
    assert obj["reproj_error"]["repeated"] == 7 and obj["w_err"]["repeated"] == 7
    assert obj["w_err"]["element"] == pytest.approx(1 - input["w"] ** 2)
    jac = fns["jacobian"](input)
    assert jac["rows"][:4] == [0, 15, 30, 45] and jac["rows"][-1] == 31 * 7
    # observation 0 sees camera 0 and point 0; the last entry is the last weight's
    assert jac["cols"][:15] == list(range(11)) + [33, 34, 35, 33 + 12]
    assert jac["cols"][-1] == 33 + 12 + 6
    assert jac["vals"][-1] == pytest.approx(-2 * input["w"])


def test_ba_objective_is_the_rodrigues_projection():
    # one observation, with the rotation written as a matrix:
    # R = I + sin(t) K + (1 - cos(t)) K^2 for the unit axis's cross-product matrix K
    n, m, cams, points, w, obs, feats = ba_args(seed=2)
    reproj, werr = ba.objective(cams, points, w, obs, feats)
    i = 5
    cam, x = cams[:, obs[i, 0]], points[:, obs[i, 1]]
    theta = np.linalg.norm(cam[0:3])
    k = cam[0:3] / theta
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    rot = np.eye(3) + np.sin(theta) * kx + (1 - np.cos(theta)) * kx @ kx
    y = rot @ (x - cam[3:6])
    proj = y[:2] / y[2]
    proj = proj * (1 + cam[9] * (proj @ proj) + cam[10] * (proj @ proj) ** 2)
    want = w[i] * (proj * cam[6] + cam[7:9] - feats[:, i])
    assert_close(reproj[2 * i:2 * i + 2], want, 1e-12, what="ba residual")
    assert werr[i] == pytest.approx(1 - w[i] ** 2, rel=1e-15)


# --- ht ----------------------------------------------------------------------
def ht_jacobian_reference(input):
    """The eval's Jacobian by central differences: rows 3i..3i+2 of point i;
    columns d/du[i, 0], d/du[i, 1] (complicated inputs), then d/dtheta."""
    fn = ht.functions("trace")["objective"]
    theta, us, model, index, points = fn.prepare(input)
    if us is None:
        return fd_jacobian(lambda t: fn.run(t, None, model, index, points), (theta,))
    full = fd_jacobian(lambda t, u: fn.run(t, u, model, index, points), (theta, us))
    n = len(points)
    j_theta, j_us = full[:, :26], full[:, 26:].reshape(n, 3, n, 2)
    # only point i's own u reaches point i's rows: the compression's premise
    off_block = j_us.copy()
    off_block[np.arange(n), :, np.arange(n), :] = 0.0
    assert np.all(off_block == 0.0)
    own = j_us[np.arange(n), :, np.arange(n), :].reshape(3 * n, 2)
    return np.concatenate([own, j_theta], axis=1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("complicated", [True, False], ids=["complicated", "simple"])
def test_ht_jacobian_matches_finite_differences(engine, complicated):
    input = ht.make_input(points=5, vertices=12, complicated=complicated)
    got = np.array(ht.functions(engine)["jacobian"](input))
    assert got.shape == (15, 28 if complicated else 26)
    assert_close(got, ht_jacobian_reference(input), PROGRAM_RTOL_F64, what="ht Jacobian")


def test_ht_engines_agree_on_a_larger_model():
    # the shipped hand data lies outside the repository (../shared), so a random model
    input = ht.make_input(points=60, vertices=80, complicated=True, seed=4)
    src = ht.functions("source")["jacobian"](input)
    trace = ht.functions("trace")["jacobian"](input)
    assert_close(np.array(src), np.array(trace), AD_VS_AD_RTOL_F64, what="ht source vs trace")


@pytest.mark.parametrize("mirrored", [False, True], ids=["plain", "mirrored"])
def test_ht_objective_at_rest_pose(mirrored):
    # theta = 0: no rotation anywhere and unit scale, so each bone's transform
    # is its chain of base transforms times its inverse base absolute, and a
    # simple input's residual is its point minus the skinned vertex
    input = ht.make_input(points=4, vertices=6, complicated=False)
    input["theta"] = [0.0] * 26
    model = input["data"]["model"]
    model["is_mirrored"] = mirrored
    rel = np.array(model["base_relatives"])
    absolute = []
    for i, parent in enumerate(model["parents"]):
        absolute.append(rel[i] if parent == -1 else absolute[parent] @ rel[i])
    transforms = [a @ inv for a, inv in zip(absolute, np.array(model["inverse_base_absolutes"]))]
    verts = []
    for pos, weights in zip(np.array(model["base_positions"]), np.array(model["weights"])):
        v = sum(wb * (t @ pos)[:3] for wb, t in zip(weights, transforms))
        verts.append(v * ([-1, 1, 1] if mirrored else 1))
    want = np.array(input["data"]["points"]) - np.array(verts)[input["data"]["correspondences"]]
    got = np.array(ht.functions("source")["objective"](input)).reshape(-1, 3)
    assert_close(got, want, 1e-12, what="ht residuals at rest")


# --- lstm --------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_lstm_gradient_matches_finite_differences(engine):
    input = lstm.make_input(l=2, c=5, b=3)
    main, extra, state, sequence = lstm.prepare(input)
    got = np.array(lstm.functions(engine)["jacobian"](input))
    want = fd_jacobian(lambda a, b: lstm.loss(a, b, state, sequence), (main, extra))
    assert_close(got, want.reshape(-1), PROGRAM_RTOL_F64, what="lstm gradient")


def test_lstm_engines_agree():
    input = lstm.make_input(l=3, c=20, b=4, seed=3)
    src = lstm.functions("source")["jacobian"](input)
    trace = lstm.functions("trace")["jacobian"](input)
    assert_close(np.array(src), np.array(trace), AD_VS_AD_RTOL_F64, what="lstm source vs trace")


def test_lstm_objective_is_the_adbench_loss():
    # one layer, two characters: the loss written out by hand
    input = lstm.make_input(l=1, c=2, b=2, seed=5)
    w, e, s, seq = lstm.prepare(input)
    x = seq[0] * e[0]
    g = np.concatenate([x, s[0], x, s[0]]) * w[0] + w[1]
    sig = 1 / (1 + np.exp(-g))
    cell = s[1] * sig[0:2] + sig[2:4] * np.tanh(g[6:8])
    y = sig[4:6] * np.tanh(cell) * e[1] + e[2]
    want = -np.sum(seq[1] * (y - np.log(2 + np.sum(np.exp(y))))) / 2
    assert lstm.functions("source")["objective"](input) == pytest.approx(want, rel=1e-12)


# --- particle and saddle: the nested derivatives of the source engine are
# checked against finite differences, the trace engine's against the source
# engine's

# --- particle ------------------------------------------------------------------
def fd_gradient_of_potential(x0, x1, w, eps=1e-5):
    """The inner derivative by central differences, for a reference cost."""
    p = particle.potential
    return ((p(x0 + eps, x1, w) - p(x0 - eps, x1, w)) / (2 * eps),
            (p(x0, x1 + eps, w) - p(x0, x1 - eps, w)) / (2 * eps))


@pytest.mark.parametrize("variant", ["ff", "fr", "rf", "rr"])
def test_particle_nested_gradient_matches_finite_differences(variant):
    grad_x = saddle.gradient(particle.potential, variant[1], "source", argnums=(0, 1))
    grad_w = saddle.gradient(particle.naive_euler, variant[0], "source")
    assert_close(grad_x(1.5, 6.0, 0.3), fd_gradient_of_potential(1.5, 6.0, 0.3),
                 PROGRAM_RTOL_F64, what="d potential / dx")
    # the cost's derivative in w, through the simulation and its inner
    # derivative, against differences of a cost that uses no AD at all
    ws = np.array([0.3])
    want = fd_jacobian(lambda v: particle.naive_euler(v, fd_gradient_of_potential), (ws,))
    assert_close(grad_w(ws, grad_x), want.reshape(1), PROGRAM_RTOL_F64, what="d cost / dw")


@pytest.mark.parametrize("variant", ["ff", "fr", "rf", "rr"])
def test_particle_engines_agree(variant):
    ws = np.array([0.1])
    got = [saddle.gradient(particle.naive_euler, variant[0], e)(
        ws, saddle.gradient(particle.potential, variant[1], e, argnums=(0, 1)))
        for e in ENGINES]
    assert_close(got[0], got[1], AD_VS_AD_RTOL_F64, what="particle source vs trace")


def test_particle_finds_gradbench_answer():
    assert particle.functions("source")["rr"](particle.make_input()) == pytest.approx(
        PARTICLE_W, rel=1e-9)


# --- saddle --------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["ff", "fr", "rf", "rr"])
def test_saddle_nested_gradient_matches_finite_differences(variant):
    engine = "source"     # the trace engine is checked against it below
    start = np.array([1.0, 1.0])
    grad_y = saddle.gradient(saddle.neg_f, variant[1], engine)
    grad_x = saddle.gradient(saddle.max_f, variant[0], engine)
    x, y = np.array([0.4, -0.7]), np.array([0.2, 0.9])
    assert_close(grad_y(y, x), fd_jacobian(saddle.neg_f, (y, x))[0, :2], PROGRAM_RTOL_F64,
                 what="d(-f)/dy")
    inner = (start, grad_y)
    want = fd_jacobian(lambda v: saddle.max_f(v, inner), (x,)).reshape(2)
    assert_close(grad_x(x, inner), want, PROGRAM_RTOL_F64, what="d max_y f / dx")


@pytest.mark.parametrize("variant", ["ff", "fr", "rf", "rr"])
def test_saddle_engines_agree(variant):
    x, start = np.array([0.4, -0.7]), np.array([1.0, 1.0])
    got = [saddle.gradient(saddle.max_f, variant[0], e)(
        x, (start, saddle.gradient(saddle.neg_f, variant[1], e))) for e in ENGINES]
    assert_close(got[0], got[1], AD_VS_AD_RTOL_F64, what="saddle source vs trace")


def test_saddle_finds_gradbench_answer():
    got = saddle.functions("source")["rr"](saddle.make_input())
    assert_close(np.array(got), np.full(4, SADDLE_XY), 1e-9, floor=1e-300)
