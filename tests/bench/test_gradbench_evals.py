"""The GradBench eval modules (bench/gradbench/evals/) on small inputs from
their ``make_input``: every derivative against central differences of the
module's own objective, for each engine; the engines against each other; each
objective against a direct reading of the eval's definition.

``SMALL`` names the evals checked here and their sizes; ``GRADIENTS`` says
which function is the derivative of which, with respect to which input fields.
"""
import importlib
import itertools
import math

import numpy as np
import pytest

from checks import AD_VS_AD_RTOL_F64, FD_EPS, PROGRAM_RTOL_F64, REF_RTOL_F64, assert_close

ENGINES = ("source", "trace")
TINY = 1e-300       # assert_close's floor: judge relative to the largest entry, however small

SMALL = {
    "hello": {"x": 0.7},
    "lse": {"n": 7},
    "llsq": {"n": 9, "m": 4},
    "det": {"ell": 4},
    "kmeans": {"k": 3, "n": 15, "d": 2},
    "gmm": {"d": 3, "k": 2, "n": 6, "m": 2, "gamma": 1.3},
    "ode": {"n": 6, "s": 4},
}

# eval: (derivative, objective, fields differentiated (None: the input itself),
#        the objective's output -> the number differentiated)
GRADIENTS = {
    "hello": ("double", "square", None, float),
    "lse": ("gradient", "primal", ("x",), float),
    "llsq": ("gradient", "primal", ("x",), float),
    "det": ("gradient", "primal", ("A",), float),
    "gmm": ("jacobian", "objective", ("alpha", "mu", "q", "l"), float),
    "ode": ("gradient", "primal", ("x",), lambda y: y[-1]),
}


def load(name):
    return importlib.import_module(f"bench.gradbench.evals.{name}")


def small_input(name):
    return load(name).make_input(**SMALL[name])


def with_field(input, field, value):
    return value if field is None else {**input, field: value.tolist()}


def central_difference(objective, input, field, eps=FD_EPS):
    """d objective(input) / d input[field], entry by entry, shaped like the field."""
    x = np.array(input if field is None else input[field], dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (objective(with_field(input, field, up))
                   - objective(with_field(input, field, down))) / (2 * eps)
    return grad


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_derivative_matches_central_differences(name, engine):
    derivative, objective, fields, number = GRADIENTS[name]
    functions = load(name).functions(engine=engine)
    input = small_input(name)
    got = functions[derivative](input)

    def f(input):
        return number(functions[objective](input))

    if fields is None or len(fields) == 1:
        field = None if fields is None else fields[0]
        got, want = np.array(got), central_difference(f, input, field)
    else:
        got = {field: np.array(got[field]) for field in fields}
        want = {field: central_difference(f, input, field) for field in fields}
    assert_close(got, want, PROGRAM_RTOL_F64, floor=TINY, what=f"{name}.{derivative}")


@pytest.mark.parametrize("engine", ENGINES)
def test_kmeans_dir_is_gradient_over_hessian_diagonal(engine):
    functions = load("kmeans").functions(engine=engine)
    input = small_input("kmeans")

    def cost(input):
        return functions["cost"](input)

    J = central_difference(cost, input, "centroids")
    # the cost is quadratic in each centroid while no point changes cluster:
    # the second difference is exact up to rounding
    C, h = np.array(input["centroids"]), 1e-3
    H = np.zeros_like(C)
    for i in np.ndindex(C.shape):
        up, down = C.copy(), C.copy()
        up[i] += h
        down[i] -= h
        H[i] = (cost(with_field(input, "centroids", up)) - 2 * cost(input)
                + cost(with_field(input, "centroids", down))) / h ** 2
    got = np.array(functions["dir"](input))
    assert_close(got, J / H, PROGRAM_RTOL_F64, floor=TINY, what="kmeans.dir")
    # and the closed form: each centroid minus the mean of its cluster
    P = np.array(input["points"])
    nearest = np.argmin(((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=2), axis=1)
    want = np.array([C[j] - P[nearest == j].mean(axis=0) for j in range(len(C))])
    assert_close(got, want, REF_RTOL_F64, floor=TINY, what="kmeans.dir closed form")


@pytest.mark.parametrize("name", sorted(SMALL))
def test_engines_agree(name):
    input = small_input(name)
    by_source = load(name).functions(engine="source")
    by_trace = load(name).functions(engine="trace")
    assert set(by_source) == set(by_trace)
    for function in by_source:
        got, want = by_trace[function](input), by_source[function](input)
        if isinstance(want, dict):
            got = {k: np.array(v) for k, v in got.items()}
            want = {k: np.array(v) for k, v in want.items()}
        assert_close(np.array(got) if isinstance(got, list) else got,
                     np.array(want) if isinstance(want, list) else want,
                     AD_VS_AD_RTOL_F64, floor=TINY, what=f"{name}.{function}")


# --- the objectives against the evals' definitions, written out directly ------
def direct_lse(input):
    return math.log(sum(math.exp(v) for v in input["x"]))


def direct_llsq(input):
    n, x = input["n"], input["x"]
    total = 0.0
    for i in range(n):
        t = -1 + i * 2 / (n - 1)
        r = (t > 0) - (t < 0) - sum(xj * t ** j for j, xj in enumerate(x))
        total += r * r
    return total / 2


def direct_det(input):
    ell = input["ell"]
    A = np.array(input["A"]).reshape(ell, ell)
    # the Leibniz formula: a sum over all permutations
    total = 0.0
    for perm in itertools.permutations(range(ell)):
        inversions = sum(perm[a] > perm[b] for a in range(ell) for b in range(a + 1, ell))
        total += (-1) ** inversions * math.prod(A[i, perm[i]] for i in range(ell))
    return total


def direct_kmeans(input):
    P, C = np.array(input["points"]), np.array(input["centroids"])
    return sum(min(float(np.sum((p - c) ** 2)) for c in C) for p in P)


def direct_gmm(input):
    """log(likelihood * prior) from the densities, as the eval's README defines them."""
    d, m, gamma = input["d"], input["m"], input["gamma"]
    x, alpha = np.array(input["x"]), np.array(input["alpha"])
    phi = np.exp(alpha) / np.sum(np.exp(alpha))
    precisions = []
    for q, l in zip(input["q"], input["l"]):
        Q, entries = np.diag(np.exp(q)), iter(l)
        for j in range(d):              # the strictly lower part, column by column
            for i in range(j + 1, d):
                Q[i, j] = next(entries)
        precisions.append(Q.T @ Q)
    log_likelihood = 0.0
    for xi in x:
        density = 0.0
        for phik, mu, P in zip(phi, input["mu"], precisions):
            r = xi - np.array(mu)
            density += phik * math.exp(-0.5 * r @ P @ r) / math.sqrt((2 * math.pi) ** d
                                                                      / np.linalg.det(P))
        log_likelihood += math.log(density)
    dof = d + m + 1
    log_multigamma = d * (d - 1) / 4 * math.log(math.pi) + sum(
        math.lgamma(dof / 2 + (1 - j) / 2) for j in range(1, d + 1))
    V = np.eye(d) / gamma ** 2
    log_prior = sum((dof - d - 1) / 2 * math.log(np.linalg.det(P))
                    - np.trace(np.linalg.inv(V) @ P) / 2
                    - dof * d / 2 * math.log(2) - dof / 2 * math.log(np.linalg.det(V))
                    - log_multigamma for P in precisions)
    return log_likelihood + log_prior


def direct_ode(input):
    x, s = input["x"], input["s"]
    n, h = len(x), 2.0 / s

    def f(y):
        return [x[0]] + [x[i] * y[i - 1] for i in range(1, n)]

    y = [0.0] * n
    for _ in range(s):
        k1 = f(y)
        k2 = f([y[i] + h * k1[i] / 2 for i in range(n)])
        k3 = f([y[i] + h * k2[i] / 2 for i in range(n)])
        k4 = f([y[i] + h * k3[i] for i in range(n)])
        y = [y[i] + h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) / 6 for i in range(n)]
    return y


DIRECT = {"lse": ("primal", direct_lse), "llsq": ("primal", direct_llsq),
          "det": ("primal", direct_det), "kmeans": ("cost", direct_kmeans),
          "gmm": ("objective", direct_gmm), "ode": ("primal", direct_ode)}


@pytest.mark.parametrize("name", sorted(DIRECT))
def test_objective_matches_definition(name):
    function, direct = DIRECT[name]
    input = small_input(name)
    got = load(name).functions()[function](input)
    assert_close(np.array(got), np.array(direct(input)), REF_RTOL_F64, floor=TINY,
                 what=f"{name}.{function}")


@pytest.mark.parametrize("ell", [1, 2, 3, 5])
def test_det_by_minors_every_small_size(ell):
    input = load("det").make_input(ell=ell)
    got = load("det").functions()["primal"](input)
    assert got == pytest.approx(direct_det(input), rel=REF_RTOL_F64)
