#!/usr/bin/env python
"""Side-by-side speed/accuracy run: multigrove and its peers on the same synthetic data.

For each configuration, every system runs in its own subprocess (peers through
../shared/bench/peers.py, multigrove through mg_worker.py), `--repeats` times, interleaved,
so that a noisy neighbour hits all systems alike; the table reports the median seconds per
round (steady state) and each system's ratio to multigrove, with the test metric reached.

    python benchmarks/compare.py --task regression --n-rows 1250000 --n-outputs 1 \
        --systems lgbm,mg --repeats 3 --out benchmarks/results/single.jsonl
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _common import import_peers, shared_dir

HERE = Path(__file__).resolve().parent
#: multigrove variants: system name -> worker arguments
MG = {"mg": [], "mg_ova": ["--strategy", "one_vs_all"],
      "mg_rp5": ["--sketch", "random_projection", "--sketch-k", "5"],
      "mg_top5": ["--sketch", "top_outputs", "--sketch-k", "5"],
      "mg_rs5": ["--sketch", "random_sampling", "--sketch-k", "5"],
      "mg_svd5": ["--sketch", "svd", "--sketch-k", "5"]}
NAMES = {"mg": "multigrove full multi-output tree", "mg_ova": "multigrove one_vs_all",
         "mg_rp5": "multigrove random_projection k=5", "mg_top5": "multigrove top_outputs k=5",
         "mg_rs5": "multigrove random_sampling k=5", "mg_svd5": "multigrove svd k=5", "lgbm": "LightGBM",
         "xgb_1pt": "XGBoost one tree/output", "xgb_mot": "XGBoost multi_output_tree",
         "catboost": "CatBoost (symmetric d6)", "sk_hgb": "sklearn HGB"}
METRIC = {"multiclass": ("accuracy", "log_loss"), "multilabel": ("p_at_1", "mean_log_loss"),
          "regression": ("mean_r2", "rmse")}


def run_one(a, system, rounds, out):
    common = ["--task", a.task, "--n-rows", str(a.n_rows), "--n-features", str(a.n_features),
              "--n-outputs", str(a.n_outputs), "--rounds", str(rounds), "--threads", str(a.threads),
              "--seed", str(a.seed), "--cache-dir", a.cache_dir, "--out", out]
    if system in MG:
        cmd = [sys.executable, str(HERE / "mg_worker.py"), *common, *MG[system], "--name", system]
    else:
        cmd = [sys.executable, str(shared_dir() / "bench" / "peers.py"), *common, "--systems", system,
               "--timeout", str(a.timeout)]
        if a.fit_budget:
            cmd += ["--fit-budget", str(a.fit_budget)]
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    subprocess.run(cmd, env=env, check=False, timeout=a.timeout + 120, stdout=subprocess.DEVNULL)


def table(recs, task):
    good, loss = METRIC[task]
    rows = {}
    for r in recs:
        if r.get("status") == "ok":
            rows.setdefault((r["n_outputs"], r["system"]), []).append(r)
    lines = [f"| d | system | s/round (median) | runs | vs multigrove | {good} | {loss} | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|"]
    for d in sorted({k[0] for k in rows}):
        mg = rows.get((d, "mg"))
        mg_t = np.median([x["s_per_round_steady"] or x["s_per_round"] for x in mg]) if mg else None
        for sys_ in [*MG, "lgbm", "xgb_1pt", "xgb_mot", "catboost", "sk_hgb"]:
            rs = rows.get((d, sys_))
            if not rs:
                continue
            t = float(np.median([x["s_per_round_steady"] or x["s_per_round"] for x in rs]))
            ratio = f"{t / mg_t:.2f}x" if mg_t else "-"
            r0 = rs[-1]
            lines.append(f"| {d} | {NAMES[sys_]} | {t:.4f} | {len(rs)} ({r0['rounds_done']} rounds) | {ratio} | "
                         f"{r0[good]:.4f} | {r0[loss]:.4f} | {max(x['rss_peak_mb'] for x in rs):.0f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", required=True, choices=["multiclass", "multilabel", "regression"])
    ap.add_argument("--n-rows", type=int, default=100000)
    ap.add_argument("--n-features", type=int, default=50)
    ap.add_argument("--n-outputs", type=int, nargs="+", default=[10])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--fit-budget", type=float, default=None,
                    help="peers: stop boosting once fit time exceeds this many seconds (steady s/round stays valid)")
    ap.add_argument("--systems", default="mg,lgbm,xgb_1pt,xgb_mot,catboost")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--cache-dir", default="/tmp/peers_cache")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    peers = import_peers()
    outputs = a.n_outputs
    for d in outputs:
        a.n_outputs = d
        peers.get_data(a)  # generate and cache once
        for _ in range(a.repeats):
            for s in a.systems.split(","):
                run_one(a, s, a.rounds, a.out)
    recs = [json.loads(line) for line in open(a.out) if line.strip()]
    recs = [r for r in recs if r.get("task") == a.task and r.get("n_rows") == a.n_rows
            and r.get("n_outputs") in outputs]
    print(table(recs, a.task))


if __name__ == "__main__":
    main()
