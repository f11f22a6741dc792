#!/usr/bin/env python
"""Time to reach the same test loss on real data: multigrove (full and each sketch) vs LightGBM and XGBoost.

Data (from ../shared/data): Otto (9 classes; stratified 80/20 split, seed 0), Delicious (983 labels;
Mulan's train/test split), scm20d (16 targets) and rf1 (8 targets) (80/20 split, seed 0; targets
standardised on the training part).  10% of the training part (seed 0) is held out for early stopping.
All systems: learning rate 0.1, lambda_l2 1, 255 bins, 32 leaves (XGBoost: depth 6), 2 threads,
early stopping after 30 rounds without improvement of the validation loss, at most --max-rounds
rounds and --budget seconds of training.  Test loss: multi-class log loss (Otto), mean per-label
log loss (Delicious), RMSE in the original target units (scm20d, rf1) — the SketchBoost supplement's
Table 6 metrics.

Per system we record the wall time at the end of every round and evaluate the test loss on a grid
of rounds afterwards; "time to target" is the first time a system's test loss is within the target,
the target being the worst of all systems' best test losses, so that every system reaches it.
LightGBM trains one model per output for multi-label / multi-target data (no per-round curve across
models): it reports its total time and final loss only.

    python benchmarks/time_to_loss.py --datasets otto,scm20d,rf1,delicious --out benchmarks/results/ttl.jsonl
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_worker  # noqa: E402

SEED = 0
MG = {"mg_full": ("none", 0), "mg_top5": ("top_outputs", 5), "mg_rs5": ("random_sampling", 5),
      "mg_rp5": ("random_projection", 5), "mg_svd5": ("svd", 5), "mg_rp1": ("random_projection", 1),
      "mg_top1": ("top_outputs", 1)}


def load(name):
    from sklearn.model_selection import train_test_split

    from multigrove import datasets
    if name == "otto":
        X, y = datasets.load_otto()
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=SEED)
        task, scale = "multiclass", None
    elif name == "delicious":
        Xtr, ytr, Xte, yte = datasets.load_multi_label("delicious")
        task, scale = "multilabel", None
    else:
        X, Y = datasets.load_multi_target(name)
        Xtr, Xte, ytr, yte = train_test_split(X, Y, test_size=0.2, random_state=SEED)
        mu, sd = ytr.mean(0), ytr.std(0)
        ytr, yte = (ytr - mu) / sd, (yte - mu) / sd
        task, scale = "regression", sd
    strat = ytr if task == "multiclass" else None
    Xtr, Xva, ytr, yva = train_test_split(Xtr, ytr, test_size=0.1, stratify=strat, random_state=SEED)
    return task, scale, (np.ascontiguousarray(Xtr, dtype=np.float32), ytr, np.ascontiguousarray(Xva, dtype=np.float32),
                         yva, np.ascontiguousarray(Xte, dtype=np.float32), yte)


def test_loss(task, scale, Y, P):
    if task == "multiclass":
        from sklearn.metrics import log_loss
        return float(log_loss(Y, np.clip(P, 1e-15, 1), labels=np.arange(P.shape[1])))
    if task == "multilabel":
        P = np.clip(P, 1e-15, 1 - 1e-15)
        return float(-(Y * np.log(P) + (1 - Y) * np.log(1 - P)).mean())
    return float(np.sqrt((((P - Y) * scale) ** 2).mean()))


def grid(n):
    return sorted(set(np.unique(np.linspace(1, n, min(n, 25)).astype(int)).tolist() + [n]))


def run(system, dataset, max_rounds, budget):
    task, scale, (Xtr, ytr, Xva, yva, Xte, yte) = load(dataset)
    d = 9 if task == "multiclass" else ytr.shape[1]
    stamps = []
    curve = None
    if system.startswith("mg"):
        import multigrove as mg
        sketch, k = MG[system]
        params = dict(objective=task, learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2,
                      seed=SEED, sketch=sketch, sketch_k=max(k, 1), verbosity=-1)
        mg.train(params, mg.Dataset(Xtr[:2000], ytr[:2000]), 2)  # compile outside the timing
        t0 = time.perf_counter()

        def stamp(env):
            stamps.append(time.perf_counter() - t0)
            if stamps[-1] > budget:
                raise mg.EarlyStopException(env.iteration, env.evaluation_result_list)
        ds = mg.Dataset(Xtr, ytr)
        bst = mg.train(params, ds, max_rounds, valid_sets=[mg.Dataset(Xva, yva, reference=ds)],
                       callbacks=[mg.early_stopping(30, verbose=False), stamp])
        fit_s = time.perf_counter() - t0
        curve = [(stamps[i - 1], test_loss(task, scale, yte, bst.predict(Xte, num_iteration=i)))
                 for i in grid(bst.best_iteration)]
        best = bst.best_iteration
    elif system == "xgb":
        import xgboost as xgb
        obj = {"multiclass": "multi:softprob", "multilabel": "binary:logistic", "regression": "reg:squarederror"}[task]
        params = dict(objective=obj, eta=0.1, max_depth=6, reg_lambda=1.0, max_bin=256, tree_method="hist",
                      nthread=2, seed=SEED, multi_strategy="one_output_per_tree")
        if task == "multiclass":
            params["num_class"] = 9

        class CB(xgb.callback.TrainingCallback):
            def after_iteration(self, model, epoch, evals_log):
                stamps.append(time.perf_counter() - t0)
                return stamps[-1] > budget
        t0 = time.perf_counter()
        dtr = xgb.QuantileDMatrix(Xtr, ytr, max_bin=256)
        bst = xgb.train(params, dtr, max_rounds, evals=[(xgb.DMatrix(Xva, yva), "valid")],
                        early_stopping_rounds=30, verbose_eval=False, callbacks=[CB()])
        fit_s = time.perf_counter() - t0
        best = bst.best_iteration + 1
        dte = xgb.DMatrix(Xte)
        curve = [(stamps[i - 1],
                  test_loss(task, scale, yte, bst.predict(dte, iteration_range=(0, i)).reshape(len(Xte), -1)))
                 for i in grid(best)]
    elif system == "lgbm":
        import lightgbm as lgb
        base = dict(learning_rate=0.1, num_leaves=32, lambda_l2=1.0, max_bin=255, num_threads=2, seed=SEED,
                    verbose=-1)
        t0 = time.perf_counter()
        if task == "multiclass":
            dtr = lgb.Dataset(Xtr, ytr)

            def cb(env):
                stamps.append(time.perf_counter() - t0)
                if stamps[-1] > budget:
                    raise lgb.callback.EarlyStopException(env.iteration, env.evaluation_result_list)
            bst = lgb.train(dict(base, objective="multiclass", num_class=9), dtr, max_rounds,
                            valid_sets=[lgb.Dataset(Xva, yva, reference=dtr)],
                            callbacks=[lgb.early_stopping(30, verbose=False), cb])
            fit_s = time.perf_counter() - t0
            best = bst.best_iteration
            curve = [(stamps[i - 1], test_loss(task, scale, yte, bst.predict(Xte, num_iteration=i)))
                     for i in grid(best)]
        else:
            obj = "binary" if task == "multilabel" else "regression"
            dtr = lgb.Dataset(Xtr, ytr[:, 0], free_raw_data=False).construct()
            dva = lgb.Dataset(Xva, yva[:, 0], reference=dtr).construct()
            P, bests = np.zeros(yte.shape), []
            for j in range(d):
                if time.perf_counter() - t0 > budget:
                    break
                dtr.set_label(ytr[:, j])
                dva.set_label(yva[:, j])
                b = lgb.train(dict(base, objective=obj), dtr, max_rounds, valid_sets=[dva],
                              callbacks=[lgb.early_stopping(30, verbose=False)])
                P[:, j] = b.predict(Xte, num_iteration=b.best_iteration)
                bests.append(b.best_iteration)
            fit_s = time.perf_counter() - t0
            done = len(bests)
            if done < d:  # budget hit: the remaining outputs get the training mean (the prevalence for labels)
                P[:, done:] = ytr[:, done:].mean(0)
            best = int(np.mean(bests)) if bests else 0
            curve = [(fit_s, test_loss(task, scale, yte, P))]
            return dict(system=system, dataset=dataset, fit_s=round(fit_s, 2), best_iteration=best,
                        models_trained=done, outputs=d, curve=curve, best_loss=curve[-1][1])
    else:
        raise ValueError(system)
    return dict(system=system, dataset=dataset, fit_s=round(fit_s, 2), best_iteration=int(best), outputs=d,
                curve=curve, best_loss=min(c[1] for c in curve), budget_hit=bool(stamps and stamps[-1] > budget))


def summarize(recs):
    lines = []
    for ds in dict.fromkeys(r["dataset"] for r in recs):
        rs = [r for r in recs if r["dataset"] == ds]
        target = max(r["best_loss"] for r in rs)
        lines += [f"\n**{ds}** (target test loss = worst best loss = {target:.4f})\n",
                  "| system | best test loss | rounds | train s | time to target s |", "|---|---|---|---|---|"]
        for r in rs:
            ttt = next((t for t, loss in r["curve"] if loss <= target + 1e-12), None)
            note = f" ({r['models_trained']}/{r['outputs']} models)" if "models_trained" in r else ""
            note += " (time budget hit)" if r.get("budget_hit") else ""
            lines.append(f"| {r['system']}{note} | {r['best_loss']:.4f} | {r['best_iteration']} | {r['fit_s']} | "
                         f"{'-' if ttt is None else round(ttt, 2)} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="otto,scm20d,rf1,delicious")
    ap.add_argument("--systems", default="mg_full,mg_top5,mg_rs5,mg_rp5,mg_svd5,lgbm,xgb")
    ap.add_argument("--max-rounds", type=int, default=3000)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds of training per system and data set")
    ap.add_argument("--out", required=True)
    ap.add_argument("--worker", nargs=2, default=None)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(run(a.worker[0], a.worker[1], a.max_rounds, a.budget)), flush=True)
        return
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    for ds in a.datasets.split(","):
        for s in a.systems.split(","):
            r, err = run_worker([__file__, "--worker", s, ds, "--max-rounds", str(a.max_rounds),
                                 "--budget", str(a.budget), "--out", a.out])
            if r is None:
                print(f"{s} on {ds} failed:\n{err}", file=sys.stderr)
                continue
            with open(a.out, "a") as f:
                f.write(json.dumps(r) + "\n")
            print(f"{ds} {s}: best loss {r['best_loss']:.4f} in {r['fit_s']} s", flush=True)
    print(summarize([json.loads(line) for line in open(a.out)]))


if __name__ == "__main__":
    main()
