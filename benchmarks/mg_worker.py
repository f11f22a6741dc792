#!/usr/bin/env python
"""multigrove's side of the peer benchmark: the same data, settings and metrics as
../shared/bench/peers.py, printed as one JSON line of the same shape.

Matched settings: learning rate 0.1, lambda_l2 1, 255 bins, 32 leaves leaf-wise (as LightGBM),
2 threads, no sampling, fixed rounds.  Run by compare.py in its own subprocess.
"""
import argparse
import time

from _common import RoundTimer, emit, import_peers, maxrss_mb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True)
    ap.add_argument("--n-rows", type=int, required=True)
    ap.add_argument("--n-features", type=int, default=50)
    ap.add_argument("--n-outputs", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--strategy", default="multi_output")
    ap.add_argument("--sketch", default="none")
    ap.add_argument("--sketch-k", type=int, default=5)
    ap.add_argument("--leaf-sparsity", type=int, default=0)
    ap.add_argument("--name", default=None)
    ap.add_argument("--cache-dir", default="/tmp/peers_cache")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    peers = import_peers()
    Xtr, Xte, Ytr, Yte, info = peers.get_data(a)
    import multigrove as mg

    d = a.n_outputs
    params = dict(learning_rate=0.1, num_leaves=32, max_depth=-1, lambda_l2=1.0, max_bin=255,
                  num_threads=a.threads, seed=a.seed, multi_strategy=a.strategy, sketch=a.sketch,
                  sketch_k=a.sketch_k, leaf_sparsity=a.leaf_sparsity, verbosity=-1)
    if a.task == "multiclass":
        params.update(objective="multiclass", num_class=d)
    elif a.task == "multilabel":
        params.update(objective="multilabel" if d > 1 else "binary")
    else:
        params.update(objective="regression")
    # compile once on a small slice so that compile time stays out of the figures
    warm = mg.Dataset(Xtr[:2000], Ytr[:2000])
    mg.train(dict(params, num_class=d) if a.task == "multiclass" else params, warm, 2)
    rss_base = maxrss_mb()
    timer = RoundTimer()
    t0 = time.perf_counter()
    ds = mg.Dataset(Xtr, Ytr)
    ds.construct(mg.Params(seed=a.seed, multi_strategy=a.strategy), n_outputs=d)  # bins as train() would
    bin_s = time.perf_counter() - t0
    timer.t0 = time.perf_counter()
    bst = mg.train(params, ds, num_boost_round=a.rounds, callbacks=[timer])
    fit_s = time.perf_counter() - t0
    rss_fit = maxrss_mb()
    t1 = time.perf_counter()
    P = bst.predict(Xte)
    pred_s = time.perf_counter() - t1
    name = a.name or ("mg" if a.strategy == "multi_output" else "mg_ova")
    rec = dict(status="ok", system=name, version=mg.__version__, task=a.task, n_rows=a.n_rows,
               n_features=a.n_features, n_outputs=d, n_train=int(len(Xtr)), n_test=int(len(Xte)),
               threads=a.threads, rounds_requested=a.rounds, rounds_done=bst.current_iteration(),
               fit_s=round(fit_s, 4), s_per_round=round(fit_s / max(1, bst.current_iteration()), 5),
               s_per_round_steady=round(timer.steady(), 5), first_round_s=round(timer.ts[0] - timer.t0, 4),
               bin_s=round(bin_s, 4), predict_s=round(pred_s, 4), rss_base_mb=round(rss_base, 1),
               rss_fit_mb=round(rss_fit, 1), rss_peak_mb=round(maxrss_mb(), 1), data_info=info)
    rec.update(peers.metrics(a.task, Yte, P, d))
    emit(rec, a.out)


if __name__ == "__main__":
    main()
