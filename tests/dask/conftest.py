"""One 2-process LocalCluster (one thread per worker) for every Dask test."""
import pytest


@pytest.fixture(scope="session")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
