#!/usr/bin/env python
"""Distributed training's overhead: a 2-worker LocalCluster (one thread each) against one process with
2 threads, on the same machine and data (so the ratio measures the protocol, not extra cores).

multigrove on 1,000,000 x 50 with 16 targets (defaults: random projection sketch k = 3; and
sketch="none"), and one target; LightGBM's lightgbm.dask against lightgbm on the one-target task for
the peer's own overhead.  Steady seconds per round (median over the rounds after a warm-up), round trips
and bytes the workers sent back per tree.

    python benchmarks/dask_scaling.py --out benchmarks/results/dask_scaling.jsonl
    python benchmarks/dask_scaling.py --only defaults --repeats 5   # the goal's case, interleaved repeats
    python benchmarks/dask_scaling.py --only defaults --splits-ahead 0 1 --repeats 3   # splits a round trip: A/B
    python benchmarks/dask_scaling.py --rows 300000 --only defaults --rank-shares 1.0 0.4   # leaves sent ahead: A/B
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit  # noqa: E402


class Clock:
    def __init__(self):
        self.stamps = []

    def __call__(self, env):
        self.stamps.append(time.perf_counter())

    def steady(self, warm: int) -> float:
        return float(np.median(np.diff(self.stamps[warm:])))


def run_multigrove(client, X, Y, params, rounds, warm, label, out):
    import dask.array as da

    import multigrove as mg
    import multigrove.dask as mgd
    from multigrove.boosting import grower
    local_clock, dist_clock = Clock(), Clock()
    mg.train({**params, "num_threads": 2}, mg.Dataset(X, Y), rounds, callbacks=[local_clock])
    chunks = (X.shape[0] // 4,)
    dX = client.persist(da.from_array(X, chunks=chunks + (X.shape[1],)))
    dY = client.persist(da.from_array(Y, chunks=chunks + Y.shape[1:]))
    booster = mgd.train(client, {**params, "num_threads": 1}, dX, dY, rounds, callbacks=[dist_clock])
    traffic = booster.dask_traffic
    local, dist = local_clock.steady(warm), dist_clock.steady(warm)
    emit({"benchmark": "dask_scaling", "library": "multigrove", "task": label, "rows": X.shape[0],
          "splits_ahead": mgd.DistributedRows.splits_ahead, "ahead_rank_share": grower.AHEAD_RANK_SHARE,
          "outputs": 1 if Y.ndim == 1 else Y.shape[1], "params": params, "local_s_per_round": local,
          "dask_s_per_round": dist, "ratio": dist / local,
          "round_trips_per_tree": traffic["round_trips"] / booster.num_trees(),
          "kbytes_per_tree": traffic["bytes_in"] / booster.num_trees() / 1e3}, out)


class Echo:
    """A trivial actor: the cost of one call to every worker, empty or carrying a histogram back."""

    def ping(self):
        return None

    def histogram(self, n):
        return np.ones(n)


def actor_latency(client, out, calls: int = 200):
    """One call to every worker, empty or carrying a 512 KB histogram back, three ways: through the actor
    handles (each future waited on in turn, through the scheduler unless the client says direct), and as
    training sends its requests (multigrove.dask.ShardActors: one coroutine, directly and through the
    scheduler)."""
    from multigrove.dask import ShardActors
    workers = sorted(client.scheduler_info()["workers"])
    futures = [client.submit(Echo, actor=True, workers=[w]) for w in workers]
    handles = [f.result() for f in futures]
    ways = {"actor_handles": lambda name, *args: [f.result() for f in [getattr(a, name)(*args) for a in handles]],
            "direct": ShardActors(client, futures, workers, direct=True).ask,
            "through_scheduler": ShardActors(client, futures, workers, direct=False).ask}
    record = {"benchmark": "dask_actor_latency", "workers": len(workers)}
    for way, call in ways.items():
        for name, args in (("ping", ()), ("histogram", (64_000,))):  # 64,000 float64: 512 KB, a sketch histogram
            for _ in range(20):
                call(name, *args)
            t0 = time.perf_counter()
            for _ in range(calls):
                call(name, *args)
            record[f"{way}_{name}_ms"] = (time.perf_counter() - t0) / calls * 1e3
    emit(record, out)


def run_lightgbm(client, X, y, rounds, warm, out):
    import dask.array as da
    import lightgbm as lgb
    params = dict(n_estimators=rounds, learning_rate=0.1, num_leaves=31, verbose=-1)
    t0 = time.perf_counter()
    lgb.LGBMRegressor(**params, n_jobs=2).fit(X, y)
    local = (time.perf_counter() - t0) / rounds
    dX = client.persist(da.from_array(X, chunks=(X.shape[0] // 4, X.shape[1])))
    dy = client.persist(da.from_array(y, chunks=X.shape[0] // 4))
    t0 = time.perf_counter()
    lgb.DaskLGBMRegressor(**params, n_jobs=1, client=client).fit(dX, dy)
    dist = (time.perf_counter() - t0) / rounds
    emit({"benchmark": "dask_scaling", "library": "lightgbm", "task": "one target", "rows": X.shape[0],
          "outputs": 1, "local_s_per_round": local, "dask_s_per_round": dist, "ratio": dist / local,
          "note": "whole fit time / rounds (LightGBM's Dask fit has no per-round callback on the client)"}, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--repeats", type=int, default=1,
                    help="interleaved repeats of each multigrove case (one process, then the cluster)")
    ap.add_argument("--only", choices=["defaults", "depthwise"],
                    help="run only the defaults case (16 targets) or only the depth-wise case")
    ap.add_argument("--splits-ahead", type=int, nargs="+", default=[0],
                    help="DistributedRows.splits_ahead, each in turn within a repeat (0: its default; 1: a split a "
                         "round trip)")
    ap.add_argument("--rank-shares", type=float, nargs="+", default=[0.0],
                    help="grower.AHEAD_RANK_SHARE, each in turn within a repeat (0: its default): the leaves split "
                         "ahead of their turn come from ranks within that share of the splits left")
    a = ap.parse_args()
    from distributed import Client, LocalCluster

    from multigrove.datasets import make_multioutput_regression
    X, Y = make_multioutput_regression(a.rows, 50, 16, seed=0)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        actor_latency(client, a.out)
        cases = [({}, "16 targets, defaults (sketch k=3)", Y),
                 ({"sketch": "none"}, "16 targets, sketch none", Y),
                 ({"growth_policy": "depthwise", "max_depth": 7},
                  "16 targets, depthwise depth 7 (one round trip per level)", Y),
                 ({}, "one target", Y[:, 0])]
        if a.only:
            cases = [cases[0] if a.only == "defaults" else cases[2]]
        import multigrove.dask as mgd
        from multigrove.boosting import grower
        default_ahead, default_share = mgd.DistributedRows.splits_ahead, grower.AHEAD_RANK_SHARE
        for params, label, targets in cases:
            for _ in range(a.repeats):
                for ahead in a.splits_ahead:
                    for share in a.rank_shares:
                        mgd.DistributedRows.splits_ahead = ahead or default_ahead
                        grower.AHEAD_RANK_SHARE = share or default_share
                        run_multigrove(client, X, targets, params, a.rounds, a.warm, label, a.out)
        if not a.only:
            run_lightgbm(client, X, Y[:, 0], a.rounds, a.warm, a.out)


if __name__ == "__main__":
    main()
