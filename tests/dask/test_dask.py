"""Distributed training on a 2-process LocalCluster: the same trees as one process, on the same bins."""
import numpy as np
import pytest

import multigrove as mg

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
mgd = pytest.importorskip("multigrove.dask")


def _data(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    Y = np.column_stack([Z[:, 0] + Z[:, 1] ** 2, np.sin(Z[:, 2]), Z[:, 3] * Z[:, 4]])
    return X, Y


def _same_model(dist, local, X):
    assert dist.num_trees() == local.num_trees()
    for a, b in zip(dist.trees, local.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_allclose(dist.predict(X), local.predict(X), rtol=1e-6, atol=1e-6)


def _labels(kind, Y):
    if kind == "regression":
        return Y
    if kind == "multiclass":
        return (Y[:, 0] > 0.5).astype(float) + (Y[:, 1] > 0.3)
    return (Y > np.median(Y, axis=0)).astype(float)


CASES = [
    ("regression", {}),
    ("regression", {"sketch": "random_projection", "sketch_k": 2}),
    ("regression", {"growth_policy": "depthwise", "max_depth": 4}),
    ("multiclass", {"num_class": 3}),
    ("multiclass", {"num_class": 3, "sketch": "top_outputs", "sketch_k": 2, "growth_policy": "depthwise"}),
    ("multilabel", {}),
    ("multilabel", {"leaf_sparsity": 2}),
    ("regression", {"multi_strategy": "one_vs_all"}),
    ("regression", {"histogram_pool_size": 0}),  # dropped histograms built again on every worker
    ("regression", {"min_data_in_bin": 40}),  # the global bins merge rare values as one process does
]


@pytest.mark.parametrize("objective,extra", CASES)
def test_same_trees_as_one_process(client, objective, extra):
    X, Y = _data()
    y = _labels(objective, Y)
    params = {"objective": objective, "num_leaves": 12, **extra}
    dist = mgd.train(client, params, da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500), 8)
    _same_model(dist, mg.train(params, mg.Dataset(X, y), 8), X)
    assert dist.dask_traffic["round_trips"] > 0 and dist.dask_traffic["bytes_in"] > 0


def test_uneven_empty_and_misaligned_partitions_weights_and_validation(client):
    X, Y = _data(seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2, size=X.shape[0])
    chunks = (1700, 0, 100, 600)  # uneven, one empty
    dX = da.from_array(X, chunks=(chunks, 6))
    dy = da.from_array(Y, chunks=(800, 3))  # other boundaries: realigned to X's
    dw = da.from_array(w, chunks=1200)
    Xv, Yv = _data(n=600, seed=3)
    result, local_result = {}, {}
    params = {"num_leaves": 10, "metric": "l2", "bagging_fraction": 1.0}
    dist = mgd.train(client, params, dX, dy, 12, sample_weight=dw,
                     valid_sets=[(da.from_array(Xv, chunks=(250, 6)), da.from_array(Yv, chunks=(250, 3)))],
                     callbacks=[mg.record_evaluation(result), mg.early_stopping(5, verbose=False, per_output=False)])
    train = mg.Dataset(X, Y, weight=w)
    local = mg.train(params, train, 12, valid_sets=[mg.Dataset(Xv, Yv, reference=train)],
                     callbacks=[mg.record_evaluation(local_result), mg.early_stopping(5, verbose=False,
                                                                                      per_output=False)])
    _same_model(dist, local, X)
    np.testing.assert_allclose(result["valid_0"]["l2"], local_result["valid_0"]["l2"], rtol=1e-9)
    assert dist.best_iteration == local.best_iteration


def test_ranking_metrics_with_global_propensities(client):
    """PSP@k's propensities come from every worker's label counts: the same values as one process."""
    X, Y = _data(seed=4)
    y = _labels("multilabel", Y)
    Xv, Yv = _data(n=600, seed=5)
    yv = _labels("multilabel", Yv)
    params = {"objective": "multilabel", "num_leaves": 8, "metric": ["precision_at_k", "psprecision_at_k"],
              "eval_at": [1, 2]}
    result, local_result = {}, {}
    mgd.train(client, params, da.from_array(X, chunks=(700, 6)), da.from_array(y, chunks=700), 5,
              valid_sets=[(da.from_array(Xv, chunks=(300, 6)), da.from_array(yv, chunks=300))],
              callbacks=[mg.record_evaluation(result)])
    train = mg.Dataset(X, y)
    mg.train(params, train, 5, valid_sets=[mg.Dataset(Xv, yv, reference=train)],
             callbacks=[mg.record_evaluation(local_result)])
    for name in ("precision@2", "psp@1", "psp@2"):
        np.testing.assert_allclose(result["valid_0"][name], local_result["valid_0"][name], rtol=1e-9)


def test_estimators_fit_predict_and_to_local(client):
    import pickle
    X, Y = _data(seed=4)
    dX = da.from_array(X, chunks=(800, 6))
    reg = mgd.DaskGroveRegressor(n_estimators=6, num_leaves=8).fit(dX, da.from_array(Y, chunks=(800, 3)))
    local = mg.GroveRegressor(n_estimators=6, num_leaves=8, early_stopping=False).fit(X, Y)
    pred = reg.predict(dX)
    assert isinstance(pred, da.Array)
    assert reg.validation_indices_ is reg.cv_results_ is reg.cv_candidates_ is reg.validation_candidates_ is None
    np.testing.assert_allclose(pred.compute(), local.predict(X), rtol=1e-6, atol=1e-6)
    plain = reg.to_local()
    assert type(plain) is mg.GroveRegressor
    np.testing.assert_allclose(plain.predict(X), local.predict(X), rtol=1e-6, atol=1e-6)
    assert pickle.loads(pickle.dumps(reg)).predict(X).shape == (X.shape[0], 3)
    labels = np.where(Y[:, 0] > 0.5, "high", "low")
    clf = mgd.DaskGroveClassifier(n_estimators=6, num_leaves=8).fit(dX, da.from_array(labels, chunks=800))
    local_clf = mg.GroveClassifier(n_estimators=6, num_leaves=8, early_stopping=False).fit(X, labels)
    assert list(clf.classes_) == ["high", "low"]
    np.testing.assert_array_equal(clf.predict(dX).compute(), local_clf.predict(X))
    np.testing.assert_allclose(clf.predict_proba(dX).compute(), local_clf.predict_proba(X), rtol=1e-6, atol=1e-6)
    assert type(clf.to_local()) is mg.GroveClassifier
    with pytest.raises(ValueError, match="eval_set y holds label mid, not among the training classes"):
        mgd.DaskGroveClassifier(n_estimators=2).fit(dX, da.from_array(labels, chunks=800),
                                                    eval_set=[(dX, da.from_array(np.full(len(X), "mid"), chunks=800))])


def test_dataframes(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, Y = _data(seed=5)
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"c{i}" for i in range(6)]), npartitions=3)
    target = dd.from_pandas(pd.Series(Y[:, 0]), npartitions=3)
    dist = mgd.train(client, {"num_leaves": 8}, frame, target, 5)
    _same_model(dist, mg.train({"num_leaves": 8}, mg.Dataset(X, Y[:, 0]), 5), X)


def test_bad_input_and_a_dead_worker(client):
    X, Y = _data(n=600)
    dX = da.from_array(X, chunks=(200, 6))
    with pytest.raises(ValueError, match="X has 600 rows but y has 500"):
        mgd.train(client, {}, dX, da.from_array(Y[:500], chunks=(250, 3)), 2)
    with pytest.raises(ValueError, match="named objective"):
        mgd.train(client, {"objective": lambda p, d: (p, p)}, dX, da.from_array(Y, chunks=(200, 3)), 2)
    with pytest.raises(TypeError, match="dask array or dataframe"):
        mgd.train(client, {}, X, Y, 2)
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        mgd.train(client, {"bogus": 1}, dX, da.from_array(Y, chunks=(200, 3)), 2)

    labels = (Y[:, 0] > 0).astype(float)
    labels[450] = 2.0  # checked on the worker that holds row 450: its error reaches the client as it is
    with pytest.raises(ValueError, match=r"must be 0 or 1, got 2 at row .* counts the training rows of the worker"):
        mgd.train(client, {"objective": "binary"}, dX, da.from_array(labels, chunks=200), 2)

    # weights: each worker checks its own values, the client their sum over the workers (before, a NaN weight
    # trained a model of NaN predictions, a negative one trained, and all zeros "diverged")
    dY = da.from_array(Y, chunks=(200, 3))
    weight = np.ones(600)
    weight[450] = np.nan
    with pytest.raises(ValueError, match=r"sample_weight must be finite, got nan at row .* counts the training rows"):
        mgd.train(client, {}, dX, dY, 2, sample_weight=da.from_array(weight, chunks=200))
    weight[450] = -1.0
    with pytest.raises(ValueError, match=r"sample_weight must be >= 0, got -1.0 at row .* counts the training rows"):
        mgd.train(client, {}, dX, dY, 2, sample_weight=da.from_array(weight, chunks=200))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum, got all zeros"):
        mgd.train(client, {}, dX, dY, 2, sample_weight=da.zeros(600, chunks=200))
    with pytest.raises(ValueError, match=r"valid_sets\[0\] sample_weight must have a positive sum"):
        mgd.train(client, {}, dX, dY, 2, valid_sets=[(dX, dY, da.zeros(600, chunks=200))])
    # X's values are checked on the workers as one process checks them, its width over them on the client (before,
    # an inf was binned as the largest value, and a validation set of other features failed with an IndexError)
    infinite = np.nan_to_num(X)
    infinite[450, 2] = np.inf
    with pytest.raises(ValueError, match=r"X must not contain \+-inf .* got inf at row .* counts the training rows"):
        mgd.train(client, {}, da.from_array(infinite, chunks=(200, 6)), dY, 2)
    with pytest.raises(ValueError, match=r"valid_sets\[0\] X must not contain \+-inf .* counts the validation rows"):
        mgd.train(client, {}, dX, dY, 2, valid_sets=[(da.from_array(infinite, chunks=(200, 6)), dY)])
    with pytest.raises(ValueError, match=r"valid_sets\[0\] X has 5 features, but the training X has 6"):
        mgd.train(client, {}, dX, dY, 2, valid_sets=[(dX[:, :5], dY)])
    some = np.zeros(600)
    some[:200] = 1.0  # the first partition's rows weighted: a worker whose rows all weigh 0 trains beside it
    mgd.train(client, {}, dX, dY, 2, sample_weight=da.from_array(some, chunks=200))

    import os
    import signal
    pids = client.run(os.getpid)

    def kill_a_worker(env):
        if env.iteration == 2:
            os.kill(pids[sorted(pids)[0]], signal.SIGKILL)
    with pytest.raises(RuntimeError, match="a worker failed"):
        mgd.train(client, {"num_leaves": 8}, dX, da.from_array(Y, chunks=(200, 3)), 50, callbacks=[kill_a_worker])
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the next tests


def test_a_worker_without_data(client):
    X, Y = _data(n=800, seed=6)
    one_partition = da.from_array(X, chunks=(800, 6))  # one block: one of the two workers holds nothing
    dist = mgd.train(client, {"num_leaves": 8}, one_partition, da.from_array(Y, chunks=(800, 3)), 5)
    _same_model(dist, mg.train({"num_leaves": 8}, mg.Dataset(X, Y), 5), X)


def test_through_the_scheduler_when_the_client_says_so(client):
    """A client made with direct_to_workers=False reaches the actors through the scheduler: same model."""
    X, Y = _data(n=800, seed=7)
    dX, dY = da.from_array(X, chunks=(200, 6)), da.from_array(Y, chunks=(200, 3))
    direct = mgd.train(client, {"num_leaves": 8}, dX, dY, 4)
    assert direct.dask_traffic["direct"] is True
    with distributed.Client(client.scheduler.address, direct_to_workers=False, set_as_default=False) as proxied:
        through = mgd.train(proxied, {"num_leaves": 8}, dX, dY, 4)
    assert through.dask_traffic["direct"] is False
    _same_model(through, direct, X)


def test_workers_the_client_cannot_reach_are_asked_through_the_scheduler(client, monkeypatch):
    """The probe of direct connections gives up (and training goes through the scheduler) when a
    worker address does not answer."""
    monkeypatch.setattr(mgd, "DIRECT_PROBE_SECONDS", 0.5)
    workers = list(client.scheduler_info()["workers"])
    assert mgd.ShardActors(client, [], workers).direct is True
    assert mgd.ShardActors(client, [], workers + ["tcp://127.0.0.1:1"]).direct is False  # nothing listens on port 1


def test_a_worker_whose_partitions_are_all_empty(client):
    """A worker holding only an empty training partition (where the scheduler happened to put it) takes
    no part after the summaries; the model is the one process's."""
    X, Y = _data(n=800, seed=8)
    first, second = sorted(client.scheduler_info()["workers"])
    config = mg.Params.from_dict({"num_leaves": 8})
    placed = {first: [(X, Y, None)], second: [(X[:0], Y[:0], None)]}
    run = mgd._prepare(config, mgd._start_actors(client, config, placed, []))
    assert run.rows.actors.addresses == [first] and run.everyone.actors.addresses == [first]
    dist = mgd._train_on(config, mgd._start_actors(client, config, placed, []), [], 0, 5, [])
    _same_model(dist, mg.train({"num_leaves": 8}, mg.Dataset(X, Y), 5), X)


def test_split_requests_on_the_workers_threads(client):
    """Shards above INLINE_SPLIT_ROWS answer the split loop from a thread instead of the event loop: same model."""
    def set_inline_rows(rows):
        import multigrove.dask
        multigrove.dask.INLINE_SPLIT_ROWS = rows
        return multigrove.dask.INLINE_SPLIT_ROWS

    X, Y = _data(n=800, seed=9)
    assert set(client.run(set_inline_rows, 0).values()) == {0}  # every worker's shard is now "large"
    try:
        dist = mgd.train(client, {"num_leaves": 8}, da.from_array(X, chunks=(200, 6)),
                         da.from_array(Y, chunks=(200, 3)), 4)
    finally:
        client.run(set_inline_rows, mgd.INLINE_SPLIT_ROWS)
    _same_model(dist, mg.train({"num_leaves": 8}, mg.Dataset(X, Y), 4), X)


def test_an_asynchronous_client_is_refused(client):
    import asyncio

    async def train_with_an_asynchronous_client():
        async with distributed.Client(client.scheduler.address, asynchronous=True, set_as_default=False) as aclient:
            with pytest.raises(ValueError, match="needs a synchronous distributed.Client"):
                mgd.train(aclient, {}, da.zeros((10, 2), chunks=5), da.zeros(10, chunks=5), 2)
    asyncio.run(train_with_an_asynchronous_client())


def test_categorical_frames_make_the_same_trees_as_one_process(client):
    """A dask DataFrame's category columns (and an integer-coded column named by categorical_feature): the same
    category lists, sets and predictions as one process; validation sets and predictions are encoded by value."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(3)
    n = 3000
    names = [f"c{i}" for i in range(20)]
    effect = rng.normal(size=20)
    df = pd.DataFrame({"x": rng.normal(size=n), "city": pd.Categorical(rng.choice(names, n), categories=names),
                       "code": rng.integers(0, 9, n).astype(float)})
    y = df["x"].to_numpy() + effect[df["city"].cat.codes.to_numpy()] * 2 + (df["code"] % 3 == 0).to_numpy()
    params = {"num_leaves": 8, "categorical_feature": ["code"], "deterministic": True, "verbosity": -1}
    local = mg.train(params, mg.Dataset(df, y), 8)
    ddf = dd.from_pandas(df, npartitions=3)
    valid = dd.from_pandas(df.assign(city=df["city"].cat.reorder_categories(names[::-1])), npartitions=2)
    rec = {}
    dist = mgd.train(client, params, ddf, da.from_array(y, chunks=1000), 8,
                     valid_sets=[(valid, da.from_array(y, chunks=1500))], callbacks=[mg.record_evaluation(rec)])
    assert dist.categories == local.categories == {1: names, 2: None}
    assert dist.feature_names == ["x", "city", "code"]
    for a, b in zip(dist.trees, local.trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.cat_codes, b.cat_codes)
    np.testing.assert_allclose(dist.predict(df), local.predict(df), rtol=1e-9, atol=1e-9)
    assert rec["valid_0"]["l2"][-1] == pytest.approx(np.mean((local.predict(df) - y) ** 2), rel=1e-9)
    reg = mgd.DaskGroveRegressor(n_estimators=5, num_leaves=8).fit(ddf, da.from_array(y, chunks=1000))
    np.testing.assert_allclose(reg.predict(ddf).compute(), reg.booster_.predict(df), rtol=1e-12)
    with pytest.raises(ValueError, match="unknown categories: call X.categorize()"):
        mgd.train(client, params, ddf.assign(city=ddf["city"].cat.as_unknown()), da.from_array(y, chunks=1000), 1)
    with pytest.raises(ValueError, match="cat_encoding='statistics' is not available in multigrove.dask.train"):
        mgd.train(client, {**params, "cat_encoding": "statistics"}, ddf, da.from_array(y, chunks=1000), 1)


def test_splits_ahead_of_their_turn_save_round_trips(client, monkeypatch):
    """Leaf-wise growth sends the workers several splits a round trip, those after the first ahead of their turn
    (DistributedRows.splits_ahead; the commits ride with the next request): the same model as one split a round
    trip, validation rows followed on the workers included, in fewer round trips."""
    X, Y = _data(n=3000, seed=4)
    Xv, Yv = _data(n=600, seed=5)
    params = {"num_leaves": 24, "min_data_in_leaf": 5, "metric": "l2"}

    def fit():
        result = {}
        booster = mgd.train(client, params, da.from_array(X, chunks=(750, 6)), da.from_array(Y, chunks=(750, 3)),
                            6, valid_sets=[(da.from_array(Xv, chunks=(300, 6)), da.from_array(Yv, chunks=(300, 3)))],
                            callbacks=[mg.record_evaluation(result)])
        return booster, result["valid_0"]["l2"]

    assert mgd.DistributedRows.splits_ahead > 1
    ahead, ahead_l2 = fit()
    monkeypatch.setattr(mgd.DistributedRows, "splits_ahead", 1)
    one, one_l2 = fit()
    _same_model(ahead, one, X)  # the sums' order may follow which worker got which chunks: trees, not bits
    np.testing.assert_allclose(ahead_l2, one_l2, rtol=1e-9)  # the validation rows' leaves: the workers' partitions
    assert ahead.dask_traffic["round_trips"] < 0.8 * one.dask_traffic["round_trips"]
