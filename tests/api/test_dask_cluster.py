"""Data-parallel gradients on a ``dask.distributed`` cluster of two workers (threads, to keep
the suite quick): ``wg.grad(loss)(w, X)`` of a chunked ``X`` equals NumPy's gradient, its task
graph grows linearly with the number of chunks (the sum over chunks is one tree reduction),
and ``client.map`` of a gradient over shards, summed, equals it too (the gradient function
travels to the workers: ``api/pickling.py``).
"""
import numpy as np
import pytest

import wengert as wg

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install wengert[dask])")
distributed = pytest.importorskip("distributed",
                                  reason="dask.distributed is not installed (wengert[dask])")


def loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def _data(n=400, d=6):
    rng = np.random.default_rng(0)
    return rng.normal(size=d), rng.normal(size=(n, d)), np.sign(rng.normal(size=n))


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_grad_of_chunked_data_on_the_cluster_equals_numpys(client, engine):
    w, X, y = _data()
    g = wg.grad(loss, argnums=1, engine=engine)(w, da.from_array(X, chunks=(50, 6)),
                                                da.from_array(y, chunks=50))
    gw = wg.grad(loss, engine=engine)(w, da.from_array(X, chunks=(50, 6)),
                                      da.from_array(y, chunks=50))
    got_x, got_w = client.compute([g, gw], sync=True)
    np.testing.assert_allclose(got_x, wg.grad(loss, argnums=1)(w, X, y), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_w, wg.grad(loss)(w, X, y), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("engine", ["source", "trace"])
def test_the_graph_grows_linearly_with_the_number_of_chunks(engine):
    w, X, y = _data(n=800)
    sizes = {}
    for rows in (200, 100, 50):         # 4, 8 and 16 chunks
        g = wg.grad(loss, engine=engine)(w, da.from_array(X, chunks=(rows, 6)),
                                         da.from_array(y, chunks=rows))
        sizes[800 // rows] = len(dict(g.__dask_graph__()))
    per_chunk = (sizes[16] - sizes[8]) / 8
    assert per_chunk > 0
    assert sizes[8] - sizes[4] == pytest.approx(4 * per_chunk, rel=0.25)    # linear
    assert per_chunk <= 30              # a few tasks per chunk, not per element


def test_client_map_of_a_gradient_over_shards_summed(client):
    w, X, y = _data()
    g = wg.grad(loss)
    shards = [(w, X[k:k + 100], y[k:k + 100]) for k in range(0, 400, 100)]
    futures = client.map(lambda s: g(*s) * len(s[1]), shards)
    total = sum(client.gather(futures)) / len(X)
    np.testing.assert_allclose(total, g(w, X, y), rtol=1e-12)
