#!/usr/bin/env python
"""Sparse inputs, exclusive feature bundling and GOSS, side by side with LightGBM.

Every figure comes from a subprocess per system and repeat (repeats interleaved); common settings:
learning rate 0.1, 32 leaves, lambda_l2 1, 255 bins, 2 threads; Numba compiled outside the clock.

    python benchmarks/sparse_inputs.py delicious --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py bibtex    --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py onehot --repeats 3 --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py counts --repeats 3 --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py wide --repeats 2 --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py wide --repeats 2 --min-data-in-bin 3 --out benchmarks/results/sparse_inputs.jsonl
    python benchmarks/sparse_inputs.py goss --repeats 3 --out benchmarks/results/sparse_inputs.jsonl

delicious: a full (unsketched, dense-leaf) 983-output tree from CSR X against the dense path (the same
    X densified, sparse storage and bundling off): seconds per round and whether the trees are equal;
    LightGBM's round is 983 binary models of one tree each on one constructed Dataset.
bibtex: 159 labels; multigrove's multi-output model at its defaults (and with num_leaves=31) against 159
    LightGBM binary models,
    both early-stopped (50 rounds) on 10 % of train; test P@1 and seconds per round.
onehot: 500,000 rows, 20 one-hot categorical columns of 50-200 levels plus 10 dense columns, regression:
    seconds per round (40 rounds) and the memory of the constructed Dataset (growth of the resident set
    over Dataset construction, freed heap returned first; X itself is held before and after).
counts: 500,000 rows x 100 features of small counts at density 0.1 (CSR, 5 M non-zeros; every feature in
    multigrove's CSR part), a linear target, regression: as onehot.
wide: 200,000 rows x 100,000 features, 20 M uniform values at uniform positions (about 200 a column, like
    the tf-idf of the XMC sets), a target from 50 of them, regression: as onehot over 10 rounds.
--min-data-in-bin N gives both libraries the same min_data_in_bin (onehot, counts, wide; without it each
    keeps its own default: LightGBM's 3; multigrove's 1, or 3 where the bins would number over 2^20, as on wide).
goss: top_rate 0.2, other_rate 0.1 on 500k and 1M x 50 regression (../shared/bench data) and Otto, each
    with and without GOSS, for multigrove and LightGBM: seconds per round, the test metric after the same
    rounds, and the time until the GOSS model reaches the no-GOSS model's final test loss (within 0.5 %).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import emit, regression_data  # noqa: E402

BASE = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2)


def _stamps():
    stamps = []
    return stamps, (lambda env: stamps.append(time.perf_counter()))


def _per_round(stamps, t0):
    return float(np.median(np.diff([t0] + stamps)))


# ---------------------------------------------------------------- Delicious
def delicious_worker(system):
    from multigrove import datasets
    Xtr, Ytr, _, _ = datasets.load_multi_label("delicious", sparse=True)
    Ytr = Ytr.toarray()
    rounds = 4
    if system == "lgbm":
        import lightgbm as lgb
        ds = lgb.Dataset(Xtr.astype(np.float32), Ytr[:, 0], params=dict(max_bin=255, verbose=-1), free_raw_data=False)
        ds.construct()
        t0 = time.perf_counter()
        for label in range(Ytr.shape[1]):
            ds.set_label(Ytr[:, label])
            lgb.train(dict(BASE, objective="binary", verbose=-1), ds, rounds)
        return dict(s_per_round=(time.perf_counter() - t0) / rounds)
    import multigrove as mg
    dense = system == "mg_dense_path"
    X = Xtr.toarray() if dense else Xtr
    params = dict(BASE, objective="multilabel", sketch="none", verbosity=-1)
    if dense:
        params.update(is_enable_sparse=False, enable_bundle=False)
    mg.train(params, mg.Dataset(X[:500], Ytr[:500]), 1)
    ds = mg.Dataset(X, Ytr)
    stamps, cb = _stamps()
    t0 = time.perf_counter()
    bst = mg.train(params, ds, rounds, callbacks=[cb])
    return dict(s_per_round=_per_round(stamps, t0),
                splits=[[int(f) for f in t.split_feature] for t in bst.trees])


def delicious(a):
    got = {s: _run("delicious", s) for s in ("mg_sparse", "mg_dense_path", "lgbm")}
    same = got["mg_sparse"]["splits"] == got["mg_dense_path"]["splits"]
    emit(dict(bench="delicious_full_tree", sparse_s_per_round=round(got["mg_sparse"]["s_per_round"], 3),
              dense_path_s_per_round=round(got["mg_dense_path"]["s_per_round"], 3),
              lgbm_983_models_s_per_round=round(got["lgbm"]["s_per_round"], 3),
              speedup_vs_dense_path=round(got["mg_dense_path"]["s_per_round"] / got["mg_sparse"]["s_per_round"], 2),
              same_split_features=same), a.out)


# ---------------------------------------------------------------- bibtex
def _p_at_1(scores, Y):
    return float(Y[np.arange(len(Y)), scores.argmax(1)].mean())


def bibtex_worker(system):
    from sklearn.model_selection import train_test_split

    from multigrove import datasets
    Xtr, Ytr, Xte, Yte = datasets.load_multi_label("bibtex", sparse=True)
    Ytr, Yte = Ytr.toarray(), Yte.toarray()
    Xfit, Xva, Yfit, Yva = train_test_split(Xtr, Ytr, test_size=0.1, random_state=0)
    t0 = time.perf_counter()
    if system == "lgbm":
        import lightgbm as lgb
        scores, rounds, round_s = np.zeros(Yte.shape), [], 0.0
        fit = lgb.Dataset(Xfit.astype(np.float32), Yfit[:, 0], params=dict(max_bin=255, verbose=-1),
                          free_raw_data=False)
        for label in range(Ytr.shape[1]):
            fit_l = lgb.Dataset(Xfit.astype(np.float32), Yfit[:, label], reference=fit)
            va = lgb.Dataset(Xva.astype(np.float32), Yva[:, label], reference=fit)
            started = time.perf_counter()
            bst = lgb.train(dict(BASE, objective="binary", verbose=-1), fit_l, 3000, valid_sets=[va],
                            callbacks=[lgb.early_stopping(50, verbose=False)])
            round_s += (time.perf_counter() - started) / bst.current_iteration()  # one round: a tree per label
            scores[:, label] = bst.predict(Xte.astype(np.float32), raw_score=True)
            rounds.append(bst.best_iteration)
        seconds = time.perf_counter() - t0
        return dict(p_at_1=_p_at_1(scores, Yte), seconds=seconds, rounds=int(np.max(rounds)), s_per_round=round_s)
    import multigrove as mg
    params = dict(objective="multilabel", num_threads=2, verbosity=-1)
    if system == "mg_31_leaves":
        params.update(num_leaves=31)
    mg.train(params, mg.Dataset(Xfit[:500], Yfit[:500]), 1)
    t0 = time.perf_counter()
    ds = mg.Dataset(Xfit, Yfit)
    stamps, cb = _stamps()
    bst = mg.train(params, ds, 3000, valid_sets=[mg.Dataset(Xva, Yva, reference=ds)],
                   callbacks=[mg.early_stopping(50, verbose=False), cb])
    seconds = time.perf_counter() - t0
    return dict(p_at_1=_p_at_1(bst.predict(Xte, raw_score=True), Yte), seconds=seconds,
                rounds=int(bst.best_iteration), s_per_round=_per_round(stamps, t0))


def bibtex(a):
    for system in ("mg", "mg_31_leaves", "lgbm"):
        got = _run("bibtex", system)
        emit(dict(bench="bibtex_p_at_1", system=system, **{k: round(v, 4) if isinstance(v, float) else v
                                                            for k, v in got.items()}), a.out)


# ---------------------------------------------------------------- one-hot
def make_onehot(n=500_000, seed=0):
    """20 categorical columns of 50-200 levels (Zipf-distributed) one-hot encoded, plus 10 dense columns."""
    rng = np.random.default_rng(seed)
    levels = rng.integers(50, 201, 20)
    cats = [rng.zipf(1.3, n) % k for k in levels]
    dense = rng.normal(size=(n, 10))
    effects = [rng.normal(size=k) for k in levels]
    y = sum(e[c] for e, c in zip(effects[:10], cats[:10])) + dense[:, :5] @ rng.normal(size=5) + rng.normal(size=n)
    blocks = [sp.csr_matrix(dense)] + [sp.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, k))
                                       for c, k in zip(cats, levels)]
    return sp.hstack(blocks, format="csr"), y


def resident_mb():
    """The process's resident memory now, after handing freed heap pages back to the system."""
    import ctypes
    import gc
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def make_counts(n=500_000, n_features=100, density=0.1, seed=0):
    """A CSR matrix of small counts (1-19) at the given density, and a linear target of them plus noise."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, n_features, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.integers(1, 20, k).astype(float))
    return X, X @ rng.normal(size=n_features) + rng.normal(size=n)


def make_wide(n=200_000, n_features=100_000, nnz=20_000_000, seed=0):
    """A CSR matrix of nnz uniform values at uniform positions, and a target: the sum of the first 50 columns
    plus noise."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, n_features, nnz))),
                      shape=(n, n_features))
    X.sum_duplicates()
    return X, np.asarray(X[:, :50].sum(axis=1)).ravel() + rng.normal(scale=0.1, size=n)


def onehot_worker(system, binning):
    return _regression_worker(*make_onehot(), system, binning)


def counts_worker(system, binning):
    return _regression_worker(*make_counts(), system, binning)


def wide_worker(system, binning):
    return _regression_worker(*make_wide(), system, binning, rounds=10)


def _regression_worker(X, y, system, binning, rounds=40):
    if system == "lgbm":
        import lightgbm as lgb
        before = resident_mb()
        ds = lgb.Dataset(X, y, params=dict(max_bin=255, verbose=-1, **binning))
        ds.construct()
        memory_mb = resident_mb() - before
        stamps, cb = _stamps()
        t0 = time.perf_counter()
        lgb.train(dict(BASE, objective="regression", verbose=-1), ds, rounds, callbacks=[cb])
        return dict(s_per_round=_per_round(stamps, t0), dataset_mb=memory_mb)
    import multigrove as mg
    mg.train({"num_leaves": 4, "verbosity": -1}, mg.Dataset(X[:3000], y[:3000]), 2)
    before = resident_mb()
    ds = mg.Dataset(X, y, params=binning)
    ds.construct(mg.Params())
    memory_mb = resident_mb() - before
    stamps, cb = _stamps()
    t0 = time.perf_counter()
    mg.train(dict(BASE, objective="regression", verbosity=-1), ds, rounds, callbacks=[cb])
    return dict(s_per_round=_per_round(stamps, t0), dataset_mb=memory_mb)


def onehot(a):
    _versus_lgbm(a, "onehot", "onehot_500k")


def counts(a):
    _versus_lgbm(a, "counts", "counts_500k")


def wide(a):
    _versus_lgbm(a, "wide", "wide_200k_x_100k")


def _versus_lgbm(a, bench, name):
    ratios = []
    extra = [] if a.min_data_in_bin is None else ["--min-data-in-bin", str(a.min_data_in_bin)]
    for repeat in range(a.repeats):
        got = {s: _run(bench, s, extra) for s in ("mg", "lgbm")}
        ratios.append(got["mg"]["s_per_round"] / got["lgbm"]["s_per_round"])
        emit(dict(bench=name, repeat=repeat, min_data_in_bin=a.min_data_in_bin, mg=got["mg"], lgbm=got["lgbm"],
                  time_ratio=round(ratios[-1], 3),
                  memory_ratio=round(got["mg"]["dataset_mb"] / got["lgbm"]["dataset_mb"], 3)), a.out)
    print(f"{bench} s/round ratio: median {np.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})")


# ---------------------------------------------------------------- GOSS
def goss_data(name):
    if name == "otto":
        from sklearn.model_selection import train_test_split

        from multigrove.datasets import load_otto
        X, y = load_otto()
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
        return Xtr, Xte, ytr, yte, "multiclass"
    Xtr, Xte, ytr, yte = regression_data(int(name))
    return Xtr, Xte, np.ravel(ytr), np.ravel(yte), "regression"


def _test_loss(raw, y, task):
    if task == "multiclass":
        from scipy.special import softmax
        prob = softmax(raw, axis=1)
        return float(-np.log(np.clip(prob[np.arange(len(y)), y], 1e-15, None)).mean())
    return float(np.mean((np.ravel(raw) - y) ** 2))


def goss_worker(spec):
    system, name, strategy, rounds = spec.split(":")
    rounds = int(rounds)
    Xtr, Xte, ytr, yte, task = goss_data(name)
    obj = dict(objective="multiclass", num_class=9) if task == "multiclass" else dict(objective="regression")
    sampling = dict(data_sample_strategy="goss", top_rate=0.2, other_rate=0.1) if strategy == "goss" else {}
    stamps, cb = _stamps()
    if system == "lgbm":
        import lightgbm as lgb
        t0 = time.perf_counter()
        bst = lgb.train(dict(BASE, **obj, **sampling, verbose=-1), lgb.Dataset(Xtr, ytr), rounds, callbacks=[cb])
    else:
        import multigrove as mg
        params = dict(BASE, **obj, **sampling, verbosity=-1)
        if task == "multiclass":
            params.update(sketch="none")  # the tree of the engine benchmarks: every output scored
        mg.train(params, mg.Dataset(Xtr[:5000], ytr[:5000]), 12)
        t0 = time.perf_counter()
        bst = mg.train(params, mg.Dataset(Xtr, ytr), rounds, callbacks=[cb])
    clock = np.array(stamps) - t0
    raw = np.zeros((len(yte), 1))
    curve = []
    for i in range(rounds):  # both Boosters: what round i adds (round 0 with the start score)
        raw = raw + bst.predict(Xte, raw_score=True, start_iteration=i, num_iteration=1).reshape(len(yte), -1)
        curve.append(_test_loss(raw, yte, task))
    r2 = None if task == "multiclass" else 1.0 - curve[-1] / float(np.var(yte))
    steady = float(np.median(np.diff(clock[len(clock) // 4:])))
    return dict(clock=clock.tolist(), curve=curve, r2=r2, s_per_round=steady)


def goss(a):
    sets = {"625000": 100, "1250000": 100, "otto": 300}
    for repeat in range(a.repeats):
        for name, rounds in sets.items():
            for system in ("mg", "lgbm"):
                full = _run("goss", f"{system}:{name}:full:{rounds}")
                sampled = _run("goss", f"{system}:{name}:goss:{2 * rounds}")
                target = full["curve"][-1] * 1.005
                hit = np.flatnonzero(np.array(sampled["curve"]) <= target)
                time_ratio = sampled["clock"][hit[0]] / full["clock"][-1] if hit.size else None
                same_rounds = sampled["curve"][rounds - 1]
                emit(dict(bench="goss", repeat=repeat, data=name, system=system,
                          s_per_round_full=round(full["s_per_round"], 4),
                          s_per_round_goss=round(sampled["s_per_round"], 4),
                          round_ratio=round(sampled["s_per_round"] / full["s_per_round"], 3),
                          test_loss_full=round(full["curve"][-1], 5), test_loss_goss_same_rounds=round(same_rounds, 5),
                          r2_full=None if full["r2"] is None else round(full["r2"], 5),
                          r2_goss_same_rounds=None if full["r2"] is None
                          else round(1 - same_rounds / (full["curve"][-1] / (1 - full["r2"])), 5),
                          time_to_full_loss_ratio=None if time_ratio is None else round(time_ratio, 3)), a.out)


# ---------------------------------------------------------------- plumbing
WORKERS = {"delicious": delicious_worker, "bibtex": bibtex_worker, "onehot": onehot_worker, "counts": counts_worker,
           "wide": wide_worker, "goss": goss_worker}


#: the benches whose workers take the binning parameters (--min-data-in-bin)
BINNING_BENCHES = ("onehot", "counts", "wide")


def _run(bench, system, extra=()):
    done = subprocess.run([sys.executable, __file__, bench, "--worker", system, *extra], capture_output=True,
                          text=True)
    if done.returncode:
        sys.exit(f"{bench} {system} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", choices=sorted(WORKERS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--min-data-in-bin", type=int, default=None,
                    help="min_data_in_bin for both libraries (onehot, counts, wide); default: each its own")
    a = ap.parse_args()
    if a.min_data_in_bin is not None and a.bench not in BINNING_BENCHES:
        ap.error(f"--min-data-in-bin applies to {', '.join(BINNING_BENCHES)}")
    if a.worker:
        if a.bench in BINNING_BENCHES:
            binning = {} if a.min_data_in_bin is None else {"min_data_in_bin": a.min_data_in_bin}
            print(json.dumps(WORKERS[a.bench](a.worker, binning)))
        else:
            print(json.dumps(WORKERS[a.bench](a.worker)))
        return
    benches = {"delicious": delicious, "bibtex": bibtex, "onehot": onehot, "counts": counts, "wide": wide, "goss": goss}
    benches[a.bench](a)


if __name__ == "__main__":
    main()
