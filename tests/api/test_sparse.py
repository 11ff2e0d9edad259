"""Sparse derivatives (``api/sparsity.py``, ``api/sparse.py``): ``jacobian_sparsity`` and
``hessian_sparsity`` hold every nonzero of the dense ``jacfwd``/``hessian`` at random points
other than the one they were read at (loops with known and data-dependent trip counts,
branches on values, ``fori_loop``, ``where``, constant banded matrices); ``sparse_jacfwd``,
``sparse_jacrev`` (plain and ``bidirectional``) and ``sparse_hessian`` equal the dense
``jacfwd``/``jacrev``/``hessian`` to rounding on every program of ``sparse_programs.py``, with
both engines; patterns are exact where nothing decides a value (a stencil, a band); a
``local`` pattern follows the branch taken; plans are cached per kind of arguments."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse

import wengert as wg

import sparse_programs as SP

RNG = np.random.default_rng(31)


def _points(shape, k=3):
    return [RNG.normal(size=shape) * s for s in (0.3, 1.0, 2.0)][:k]


def _dense_jac(f, x):
    y = np.asarray(f(x))
    return np.asarray(wg.jacfwd(f)(x)).reshape(y.size, x.size)


@pytest.mark.parametrize("name", sorted(SP.JACOBIANS))
def test_jacobian_sparsity_holds_the_jacobian_everywhere(name):
    f, shape = SP.JACOBIANS[name]
    x0 = RNG.normal(size=shape)
    pattern = wg.jacobian_sparsity(f, x0)
    assert isinstance(pattern, scipy.sparse.csr_array) and pattern.dtype == bool
    allowed = pattern.toarray()
    seen = np.zeros_like(allowed)
    for x in _points(shape) + [x0]:
        nz = _dense_jac(f, x) != 0
        assert not (nz & ~allowed).any(), (
            f"{name}: the pattern misses {np.argwhere(nz & ~allowed)[:5].tolist()}")
        seen |= nz
    assert allowed.sum() <= 2 * max(seen.sum(), 1) + allowed.shape[0]


@pytest.mark.parametrize("engine", ["source", "trace"])
@pytest.mark.parametrize("name", sorted(SP.JACOBIANS))
def test_sparse_jacobians_equal_dense(name, engine):
    f, shape = SP.JACOBIANS[name]
    fwd = wg.sparse_jacfwd(f, engine=engine)
    rev = wg.sparse_jacrev(f, engine=engine)
    both = wg.sparse_jacfwd(f, bidirectional=True, engine=engine)
    for x in _points(shape):
        want = _dense_jac(f, x)
        want_rev = np.asarray(wg.jacrev(f)(x)).reshape(want.shape)
        for d, ref in ((fwd, want), (rev, want_rev), (both, want)):
            got = d(x)
            assert isinstance(got, scipy.sparse.csr_array) and got.shape == want.shape
            np.testing.assert_allclose(got.toarray(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SP.HESSIANS))
def test_sparse_hessian_equals_dense(name):
    f, shape = SP.HESSIANS[name]
    pattern = wg.hessian_sparsity(f, RNG.normal(size=shape)).toarray()
    assert (pattern == pattern.T).all()
    h = wg.sparse_hessian(f)
    for x in _points(shape):
        want = np.asarray(wg.hessian(f)(x))
        assert not ((want != 0) & ~pattern).any(), f"{name}: pattern misses a nonzero"
        got = h(x)
        assert isinstance(got, scipy.sparse.csr_array)
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-11, atol=1e-11)


def test_stencil_pattern_is_exact_and_few_colors():
    """The 1-D three-point stencil's pattern is the band itself, and its column coloring has
    3 colors; the 2-D five-point stencil's has 5 (the chromatic number of its graph)."""
    x = np.ones(8)
    p = wg.jacobian_sparsity(SP.stencil, x).toarray()
    want = np.zeros((6, 8), bool)
    for i in range(6):
        want[i, i:i + 3] = True
    assert (p == want).all()
    d = wg.sparse_jacfwd(SP.stencil)
    assert d.plan(x).colors == 3
    lap = wg.sparse_jacfwd(SP.laplace2d)
    assert lap.plan(np.ones(20)).colors == 5
    assert wg.sparse_jacrev(SP.laplace2d).plan(np.ones(20)).colors == 5


def test_constant_zeros_are_structural():
    """A product with a constant matrix's zeros depends on nothing there: the pattern of
    ``band @ tanh(x)`` is the band, where ``band`` is made in the function from constants; a
    global array is read again at each call (it may change), so its zeros do not count."""
    p = wg.jacobian_sparsity(SP.banded_matmul, np.ones(6)).toarray()
    assert (p == (SP.BAND != 0)).all()
    assert wg.jacobian_sparsity(SP.global_matmul, np.ones(6)).toarray().all()


def test_branch_union_and_local_pattern():
    """Globally, a branch on a value gives the union of both branches' patterns; with
    ``local=True`` the branch taken at the point."""
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    glob = wg.jacobian_sparsity(SP.branches, x).toarray()
    here = wg.jacobian_sparsity(SP.branches, x, local=True).toarray()
    assert (here == np.eye(5, dtype=bool)).all()
    neg = wg.jacobian_sparsity(SP.branches, -x, local=True).toarray()
    assert (glob == (here | neg)).all()


def test_while_loop_fixed_point():
    """A loop whose trip count depends on the data: the fixed point of the state's pattern
    is lower triangular (each element reads its left neighbour), valid for any trip count."""
    p = wg.jacobian_sparsity(SP.data_while, np.ones(6)).toarray()
    assert (p == np.tril(np.ones((6, 6), bool))).all()


def test_argnums_tuple_columns_in_order():
    x, y = RNG.normal(size=6), RNG.normal(size=4)
    p = wg.jacobian_sparsity(SP.two_args, x, y, argnums=(0, 1)).toarray()
    jx, jy = wg.jacfwd(SP.two_args, argnums=(0, 1))(x, y)
    dense = np.concatenate([jx, jy], axis=1)
    assert p.shape == (3, 10) and not ((dense != 0) & ~p).any()
    got = wg.sparse_jacfwd(SP.two_args, argnums=(0, 1))(x, y).toarray()
    np.testing.assert_allclose(got, dense, rtol=1e-13)
    got = wg.sparse_jacrev(SP.two_args, argnums=(1, 0))(x, y).toarray()
    np.testing.assert_allclose(got, np.concatenate([jy, jx], axis=1), rtol=1e-13)


def test_plan_cached_per_kind_of_arguments():
    d = wg.sparse_jacfwd(SP.stencil)
    a = d.plan(np.ones(8))
    assert d.plan(RNG.normal(size=8)) is a
    assert d.plan(np.ones(10)) is not a and d.plan(np.ones(10)).pattern.shape == (8, 10)


def test_arrowhead_hessian_takes_few_colors():
    """A star coloring uses the symmetry: the arrowhead Hessian (a dense row and column)
    takes at most 3 colors where a column coloring takes n."""
    h = wg.sparse_hessian(SP.arrowhead)
    assert h.plan(np.ones(7)).colors <= 3


def test_sparse_derivative_pickles():
    d = wg.sparse_jacfwd(SP.stencil)
    back = pickle.loads(pickle.dumps(d))
    x = RNG.normal(size=8)
    np.testing.assert_allclose(back(x).toarray(), d(x).toarray())


def test_errors_are_typed():
    with pytest.raises(wg.NonDifferentiableInputError):
        wg.jacobian_sparsity(SP.stencil, np.arange(8))
    with pytest.raises(wg.NonScalarOutputError):
        wg.sparse_hessian(SP.stencil)(np.ones(8))
