"""GBDT-Sparse (objective="sparse_hinge"): the cost of a boosting round as the number of labels grows.

The same rows, features and labels per row; only L changes (1,000 -> 10,000 -> 50,000), so nnz(Y) is the
same.  A sparse-output round touches only non-zeros (gradients on the union of labels and scores, the
projection G Pi, k-sparse leaves), so its cost should stay flat up to those terms; the dense multi-label
objective ("multilabel", n x L scores) is run beside it where it fits in memory.  Each (L, objective) runs
in its own process (peak RSS is its own); steady seconds per round is the median of the per-round times
after the first two rounds (compile time excluded: a warm-up fit runs first).

    python benchmarks/sparse_outputs.py --out benchmarks/results/sparse_outputs.jsonl

``--delicious SPEC [SPEC ...]`` instead fits ``GroveClassifier(objective="sparse_hinge", early_stopping=False, SPEC)``
on Delicious (SPEC: keyword arguments, e.g. ``"n_estimators=300,sketch_k=10"``) with an eval_set and prints the
eval-set P@1/3/5 after 50, 100, 200, 300, 500 rounds: on an 80/20 split of the training rows (seed 0), or on the
shipped test rows with ``--test``.  This is how the settings in CHANGELOG.md (issue 19) were compared.  A SPEC
with ``objective="sparse_squared"`` (the squared loss on sparse targets, which the classifier does not take)
trains through ``multigrove.train`` with the same metrics instead.
``--delicious-estimators SPEC [SPEC ...]`` fits ``GroveClassifier(objective="sparse_hinge", SPEC)`` with early
stopping as a user would (SPEC "" for the defaults) and prints the shipped test rows' P@1/3/5 and seconds.
``--delicious-alternatives`` tries, on the shipped test rows, what lies beyond the booster's settings: extra
features (a truncated SVD of X, a LEML projection of X, the row's length) beside X's own, rows scaled to unit
length, the mean of boosters seeded 0..3, and
blends of the booster's scores with our label trees' and with a 50-nearest-neighbour vote.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RoundTimer, emit, maxrss_mb, run_worker  # noqa: E402


def problem(n_rows: int, n_labels: int, labels_per_row: int, seed: int = 0):
    """X (n, 50) dense; labels tied to the features: row i's labels are hashes of its quantised features,
    spread over n_labels (so every L has the same nnz(Y) and the same amount of signal)."""
    import numpy as np
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 50)).astype(np.float32)
    codes = np.floor(X[:, :labels_per_row] * 4).astype(np.int64) + 1000 * np.arange(labels_per_row)
    cols = (codes * 2654435761) % n_labels
    Y = sp.csr_matrix((np.ones(cols.size, np.float32), (np.repeat(np.arange(n_rows), labels_per_row), cols.ravel())),
                      shape=(n_rows, n_labels))
    Y.sum_duplicates()
    Y.data[:] = 1.0
    return X, Y


def worker(n_labels: int, objective: str, n_rows: int, rounds: int) -> dict:
    import multigrove as mg
    X, Y = problem(n_rows, n_labels, 5)
    Ytr = Y if objective == "sparse_hinge" else Y.toarray()
    params = {"objective": objective, "verbosity": -1, "num_threads": 2}
    mg.train(params, mg.Dataset(X[:500], Ytr[:500]), 2)  # compile
    timer = RoundTimer()
    rss_data = maxrss_mb()
    mg.train(params, mg.Dataset(X, Ytr), rounds, callbacks=[timer])
    per_round = sorted(b - a for a, b in zip(timer.ts[1:], timer.ts[2:]))
    return {"bench": "round_cost_vs_labels", "objective": objective, "n_rows": n_rows, "n_labels": n_labels,
            "nnz_y": int(Y.nnz), "rounds": rounds, "s_per_round": round(per_round[len(per_round) // 2], 4),
            "s_per_round_range": [round(per_round[0], 4), round(per_round[-1], 4)],
            "peak_rss_mb": round(maxrss_mb(), 1), "rss_after_data_mb": round(rss_data, 1)}


def delicious_curves(specs: list[str], test: bool) -> None:
    import numpy as np

    from multigrove import GroveClassifier, datasets
    Xtr, Ytr, Xte, Yte = datasets.load_multi_label("delicious", sparse=True)
    if not test:
        perm = np.random.default_rng(0).permutation(Xtr.shape[0])
        cut = int(0.8 * perm.size)
        Xtr, Ytr, Xte, Yte = Xtr[perm[:cut]], Ytr[perm[:cut]], Xtr[perm[cut:]], Ytr[perm[cut:]]
    for spec in specs:
        kw = {"n_estimators": 300, **eval(f"dict({spec})")}  # noqa: S307 - the command line's own keywords
        started = time.perf_counter()
        if kw.get("objective", "sparse_hinge") == "sparse_hinge":
            model = GroveClassifier(**{"objective": "sparse_hinge", "early_stopping": False, "verbosity": -1, **kw})
            model.fit(Xtr, Ytr, eval_set=[(Xte, Yte)])
            r = model.evals_result_["valid_0"]
        else:
            r = _train_curves(kw, Xtr, Ytr, Xte, Yte)
        seconds = time.perf_counter() - started
        at = [i for i in (50, 100, 200, 300, 500, 800) if i <= len(r["precision@1"])]
        print(spec, " ".join(f"{i}: " + "/".join(f"{r[f'precision@{k}'][i - 1]:.4f}" for k in (1, 3, 5)) for i in at),
              f"fit {seconds:.1f} s", flush=True)


def _train_curves(kw: dict, Xtr, Ytr, Xte, Yte) -> dict:
    """The eval set's P@1/3/5 after every round of ``multigrove.train`` (objectives the classifier does not take)."""
    import multigrove as mg
    rounds = kw.pop("n_estimators")
    params = {"verbosity": -1, "num_threads": 2, "metric": ["precision"], "eval_at": [1, 3, 5], **kw}
    train_set = mg.Dataset(Xtr, Ytr)
    results: dict = {}
    mg.train(params, train_set, rounds, valid_sets=[mg.Dataset(Xte, Yte, reference=train_set)],
             callbacks=[mg.record_evaluation(results)])
    return results["valid_0"]


def delicious_estimators(specs: list[str]) -> None:
    """Fit ``GroveClassifier(objective="sparse_hinge", SPEC)`` as a user would (early stopping on its own
    validation fraction of the training rows) and print the shipped test rows' P@1/3/5 and the seconds of
    fit + predict_top_k."""
    from multigrove import GroveClassifier, datasets
    from multigrove.xmc.metrics import precision_at_k
    Xtr, Ytr, Xte, Yte = datasets.load_multi_label("delicious", sparse=True)
    GroveClassifier(objective="sparse_hinge", n_estimators=2, early_stopping=False).fit(Xtr[:300], Ytr[:300])  # compile
    for spec in specs:
        kw = eval(f"dict({spec})")  # noqa: S307 - the command line's own keywords
        started = time.perf_counter()
        model = GroveClassifier(objective="sparse_hinge", verbosity=-1, **kw).fit(Xtr, Ytr)
        top = model.predict_top_k(Xte, 5)
        seconds = time.perf_counter() - started
        p = precision_at_k(Yte, top, 5)
        print(spec or "(defaults)", "rounds", model.n_estimators_, "test P@1/3/5",
              " / ".join(f"{p[i]:.4f}" for i in (0, 2, 4)), f"{seconds:.1f} s", flush=True)


def delicious_alternatives() -> None:
    """See the module docstring: test P@1/3/5 of each alternative beside the estimator's defaults."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.decomposition import TruncatedSVD
    from sklearn.neighbors import NearestNeighbors
    from sklearn.preprocessing import normalize

    from multigrove import GroveClassifier, datasets
    from multigrove.xmc.embedding import LEMLProjection
    from multigrove.xmc.metrics import precision_at_k
    from multigrove.xmc.model import LabelTreeClassifier
    Xtr, Ytr, Xte, Yte = datasets.load_multi_label("delicious", sparse=True)
    GroveClassifier(objective="sparse_hinge", n_estimators=2, early_stopping=False).fit(Xtr[:300], Ytr[:300])  # compile

    def show(name, scores):
        p = precision_at_k(Yte, scores, 5)
        print(f"{name}: test P@1/3/5", " / ".join(f"{p[i]:.4f}" for i in (0, 2, 4)), flush=True)

    def dense_scores(pair):  # a top-k pair as an (n, L) matrix, zero off the top
        idx, val = pair
        return sp.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, idx.size + 1, idx.shape[1])),
                             shape=Yte.shape).toarray()

    def booster(A, B, seed=0):
        model = GroveClassifier(objective="sparse_hinge", verbosity=-1, seed=seed).fit(A, Ytr)
        return dense_scores(model.predict_top_k(B, 100))

    base = booster(Xtr, Xte)
    show("defaults", base)
    for name, projection in (("truncated SVD 64", TruncatedSVD(64, random_state=0)), ("LEML 32", LEMLProjection(32)),
                             ("LEML 64", LEMLProjection(64))):
        projection.fit(Xtr, Ytr)
        show(f"X + {name}", booster(sp.hstack([Xtr, projection.transform(Xtr)]).tocsr(),
                                    sp.hstack([Xte, projection.transform(Xte)]).tocsr()))
    def with_row_length(A):  # the row's number of words as one more feature
        return sp.hstack([A, sp.csr_matrix(np.diff(A.indptr).astype(np.float64)[:, None])]).tocsr()

    show("X + row length", booster(with_row_length(Xtr), with_row_length(Xte)))
    # rows scaled to unit length: trees see a word's weight relative to the row
    show("rows scaled to unit length", booster(normalize(Xtr), normalize(Xte)))
    mean = base.copy()
    for seed in (1, 2, 3):
        mean += booster(Xtr, Xte, seed)
        show(f"mean of seeds 0..{seed}", mean)
    trees = dense_scores(LabelTreeClassifier().fit(Xtr, Ytr).predict(Xte, 100))
    distance, neighbours = NearestNeighbors(n_neighbors=50, metric="cosine").fit(Xtr).kneighbors(Xte)
    similarity = 1.0 - distance
    votes = np.stack([np.asarray(Ytr[neighbours[i]].T @ similarity[i]).ravel() / max(similarity[i].sum(), 1e-12)
                      for i in range(Xte.shape[0])])
    show("label trees", trees)
    show("50-nearest-neighbour vote", votes)
    for weight in (0.1, 0.2, 0.3):
        show(f"defaults + {weight} label trees", (1 - weight) * base + weight * trees)
        show(f"defaults + {weight} neighbour vote", (1 - weight) * base + weight * votes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", nargs="+", type=int, default=[1_000, 10_000, 50_000])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--dense-up-to", type=int, default=10_000, help="run the dense multilabel objective up to this L")
    ap.add_argument("--out", default=None)
    ap.add_argument("--delicious", nargs="+", metavar="SPEC", help="compare settings on Delicious (see above)")
    ap.add_argument("--test", action="store_true", help="with --delicious: evaluate on the shipped test rows")
    ap.add_argument("--delicious-estimators", nargs="+", metavar="SPEC",
                    help="fit the estimator with early stopping per SPEC, report test P@k (see above)")
    ap.add_argument("--delicious-alternatives", action="store_true",
                    help="features, seed means and blends beyond the booster's settings (see above)")
    ap.add_argument("--worker", nargs=2, metavar=("N_LABELS", "OBJECTIVE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.delicious:
        delicious_curves(a.delicious, a.test)
        return
    if a.delicious_alternatives:
        delicious_alternatives()
        return
    if a.delicious_estimators:
        delicious_estimators(a.delicious_estimators)
        return
    if a.worker:
        print(json.dumps(worker(int(a.worker[0]), a.worker[1], a.rows, a.rounds)), flush=True)
        return
    for n_labels in a.labels:
        for objective in ("sparse_hinge", "multilabel"):
            if objective == "multilabel" and n_labels > a.dense_up_to:
                continue
            rec, err = run_worker([__file__, "--worker", str(n_labels), objective, "--rows", str(a.rows),
                                   "--rounds", str(a.rounds)])
            emit(rec if rec is not None else {"n_labels": n_labels, "objective": objective,
                                              "error": err.strip().splitlines()[-1:]}, a.out)


if __name__ == "__main__":
    main()
