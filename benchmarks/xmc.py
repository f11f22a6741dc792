"""Label trees side by side: multigrove's LabelTreeClassifier vs Omikuji (Bonsai-like settings and its
Parabel default) and napkinXC (PLT), on the Mulan XMC sets and a synthetic power-law problem.

Each (data set, system) pair runs in its own subprocess, so its peak RSS is its own.  Reported:
P@1/3/5, PSP@1/3/5 (Jain et al. propensities from the training labels, A = 0.55, B = 1.5),
coverage@5, training time, prediction time per row, model size on disk, peak RSS.  Every system
uses 2 threads.  multigrove compiles its kernels in a warm-up fit on 200 rows first (Numba caches
them), so compile time is not in its figures.

    python benchmarks/xmc.py --datasets bibtex delicious corel5k enron synthetic --out benchmarks/results/xmc.jsonl

The boosted systems: ``mg_gbdt_sparse`` is ``GroveClassifier(objective="sparse_hinge")`` with its defaults (early
stopping included), ``mg_gbdt_sparse_exact`` the same with splits scored exactly by GBDT-Sparse eq. 20 instead
of on a random projection of the sparse gradients, ``mg_gbdt_dense`` the dense-leaf multi-label model on the dense
indicator (see GBDT).

``--resplit 1 2 3`` also runs every pair on random 80/20 re-splits of train + test (one per seed), to
see how much a difference between systems moves from one split to another.  ``--repeats N`` runs each
pair N times: multigrove with ``random_state`` 0..N-1, napkinXC with ``seed`` 0..N-1, Omikuji (which
has no seed and whose multi-threaded training is not deterministic) simply again.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, maxrss_mb, run_worker  # noqa: E402

SYSTEMS = ("mg", "mg_bonsai", "mg_joint", "mg_log", "omikuji_bonsai", "omikuji_parabel", "napkinxc_plt",
           "mg_gbdt_sparse", "mg_gbdt_sparse_exact", "mg_gbdt_sparse_200", "mg_gbdt_dense")
#: boosted multi-output trees: GBDT-Sparse (sparse_hinge, k-sparse leaves, CSR scores) with its defaults, and
#: for reference the dense-leaf multi-label model (one sigmoid per label, scores n x L), as issue 19 quotes it:
#: random projection k = 5, 300 rounds
GBDT = {"mg_gbdt_sparse": {"objective": "sparse_hinge"},
        "mg_gbdt_sparse_exact": {"objective": "sparse_hinge", "sketch": "none"},  # splits by eq. 20 (Alg. 1 on bins)
        "mg_gbdt_sparse_200": {"objective": "sparse_hinge", "n_estimators": 200, "early_stopping": False},
        "mg_gbdt_dense": {"sketch_k": 5, "n_estimators": 300, "early_stopping": False}}
# multigrove variants: label representation, loss, and Bonsai's training rows without hard negatives
MG_PARAMS = {"mg": {}, "mg_bonsai": {"hard_negatives": False}, "mg_joint": {"representation": "joint"},
             "mg_log": {"loss": "log"}}
REAL = ("bibtex", "delicious", "corel5k", "enron")


def load(name: str, synthetic_rows: int, resplit: int = 0):
    """Train/test CSR matrices: the set's own split (resplit 0), or a random 80/20 split of all its rows
    drawn with seed ``resplit``."""
    import numpy as np
    import scipy.sparse as sp

    from multigrove import datasets
    if name == "synthetic":
        X, Y = datasets.make_extreme_multilabel(n_rows=synthetic_rows, n_features=50_000, n_labels=20_000, seed=0)
        cut = int(0.8 * X.shape[0])
        Xtr, Ytr, Xte, Yte = X[:cut], Y[:cut], X[cut:], Y[cut:]
    else:
        f = lambda M: sp.csr_matrix(M, dtype=np.float32)  # noqa: E731
        Xtr, Ytr, Xte, Yte = map(f, datasets.load_multi_label(name, sparse=True))
    if resplit:
        X, Y = sp.vstack([Xtr, Xte], format="csr"), sp.vstack([Ytr, Yte], format="csr")
        perm = np.random.default_rng(resplit).permutation(X.shape[0])
        cut = int(0.8 * X.shape[0])
        Xtr, Ytr, Xte, Yte = X[perm[:cut]], Y[perm[:cut]], X[perm[cut:]], Y[perm[cut:]]
    return Xtr, Ytr, Xte, Yte


def dir_size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def worker(dataset: str, system: str, synthetic_rows: int, resplit: int = 0, rep: int = 0) -> dict:
    import numpy as np

    from multigrove.xmc import io as xio
    from multigrove.xmc import metrics as M
    Xtr, Ytr, Xte, Yte = load(dataset, synthetic_rows, resplit)
    tmp = tempfile.mkdtemp()
    rss_data = maxrss_mb()
    rounds = None
    try:
        if system in GBDT:
            from multigrove import GroveClassifier
            Ytr_fit = Ytr if system.startswith("mg_gbdt_sparse") else Ytr.toarray()
            compile_run = GroveClassifier(**{**GBDT[system], "n_estimators": 2}).fit(Xtr[:300], Ytr_fit[:300])
            compile_run.predict_top_k(Xte[:5], 5)
            t = time.perf_counter()
            model = GroveClassifier(seed=rep, **GBDT[system]).fit(Xtr, Ytr_fit)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            idx, sc = model.predict_top_k(Xte, 5)
            pred_s = time.perf_counter() - t
            path = os.path.join(tmp, "model.json")
            model.booster_.save_model(path)
            rounds = model.n_estimators_
        elif system.startswith("mg"):
            from multigrove.xmc import LabelTreeClassifier
            params = MG_PARAMS[system]
            LabelTreeClassifier(n_trees=1, **params).fit(Xtr[:200], Ytr[:200]).predict(Xte[:10])  # compile
            t = time.perf_counter()
            model = LabelTreeClassifier(random_state=rep, **params).fit(Xtr, Ytr)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            idx, sc = model.predict(Xte, top_k=5)
            pred_s = time.perf_counter() - t
            path = os.path.join(tmp, "model.npz")
            model.save(path)
        elif system.startswith("omikuji"):
            import omikuji
            train_path = os.path.join(tmp, "train.txt")
            xio.write_xmc(train_path, Xtr, Ytr)  # Omikuji trains from a file; writing it is not timed
            hp = omikuji.Model.default_hyper_param()
            if system == "omikuji_bonsai":  # Omikuji's documented Bonsai-like settings
                hp.cluster_k = 100
                hp.cluster_balanced = False
                hp.max_depth = 3
            t = time.perf_counter()
            model = omikuji.Model.train_on_data(train_path, hp, n_threads=2)
            fit_s = time.perf_counter() - t
            model.init_prediction_thread_pool(1)
            Xn = Xte.copy()
            t = time.perf_counter()
            idx = np.full((Xte.shape[0], 5), -1, np.int64)
            sc = np.zeros((Xte.shape[0], 5))
            for i in range(Xte.shape[0]):
                s, e = Xn.indptr[i], Xn.indptr[i + 1]
                out = model.predict(list(zip(Xn.indices[s:e].tolist(), Xn.data[s:e].tolist())), beam_size=10, top_k=5)
                for j, (lab, v) in enumerate(out):
                    idx[i, j], sc[i, j] = lab, v
            pred_s = time.perf_counter() - t
            path = os.path.join(tmp, "omikuji_model")
            model.save(path)
        elif system == "napkinxc_plt":
            from napkinxc.models import PLT
            path = os.path.join(tmp, "plt")
            model = PLT(path, seed=rep, threads=2)
            Ylist = [Ytr.indices[Ytr.indptr[i]:Ytr.indptr[i + 1]].tolist() for i in range(Ytr.shape[0])]
            t = time.perf_counter()
            model.fit(Xtr, Ylist)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            preds = model.predict_proba(Xte, top_k=5)
            pred_s = time.perf_counter() - t
            idx = np.full((Xte.shape[0], 5), -1, np.int64)
            sc = np.zeros((Xte.shape[0], 5))
            for i, row in enumerate(preds):
                for j, (lab, v) in enumerate(row[:5]):
                    idx[i, j], sc[i, j] = lab, v
        else:
            raise ValueError(system)
        size = dir_size(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    q = M.inverse_propensity(Ytr)
    r = M.evaluate(Yte, (idx, sc), k=5, inv_propensity=q)
    keep = ("P@1", "P@3", "P@5", "PSP@1", "PSP@3", "PSP@5", "coverage@5")
    return {"dataset": dataset, "system": system, "split": resplit or "shipped", "rep": rep, "n_train": Xtr.shape[0],
            "n_test": Xte.shape[0],
            "n_features": Xtr.shape[1], "n_labels": Ytr.shape[1], **{k: round(r[k], 5) for k in keep},
            "fit_s": round(fit_s, 3), "predict_ms_per_row": round(1000 * pred_s / Xte.shape[0], 4),
            "model_mb": round(size / 2**20, 3), "peak_rss_mb": round(maxrss_mb(), 1),
            "rss_after_data_mb": round(rss_data, 1), **({"rounds": rounds} if rounds is not None else {})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(REAL) + ["synthetic"])
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--synthetic-rows", type=int, default=125_000, help="rows before the 80/20 split")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per (data set, system) run")
    ap.add_argument("--resplit", nargs="+", type=int, default=[], metavar="SEED",
                    help="also run on random 80/20 re-splits of train + test, one per seed (> 0)")
    ap.add_argument("--shipped", action=argparse.BooleanOptionalAction, default=True,
                    help="run on the data set's own split (default; --no-shipped with --resplit skips it)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of every (data set, split, system)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--worker", nargs=4, metavar=("DATASET", "SYSTEM", "SPLIT", "REP"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.repeats < 1:
        ap.error("--repeats must be at least 1")
    if any(r <= 0 for r in a.resplit):
        ap.error("--resplit seeds must be positive integers (0 is the shipped split)")
    if a.worker:
        result = worker(a.worker[0], a.worker[1], a.synthetic_rows, int(a.worker[2]), int(a.worker[3]))
        print(json.dumps(result), flush=True)
        return
    splits = ([0] if a.shipped else []) + list(a.resplit)
    if not splits:
        ap.error("nothing to run: --no-shipped needs --resplit")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip()
    for ds in a.datasets:
        for split in splits:
            for rep in range(a.repeats):
                for system in a.systems:
                    rec, err = run_worker([__file__, "--worker", ds, system, str(split), str(rep),
                                           "--synthetic-rows", str(a.synthetic_rows)], timeout=a.timeout)
                    if rec is None:
                        emit({"dataset": ds, "system": system, "split": split or "shipped", "rep": rep,
                              "error": err.strip().splitlines()[-1:], "commit": commit}, a.out)
                        continue
                    rec["commit"] = commit
                    emit(rec, a.out)


if __name__ == "__main__":
    main()
