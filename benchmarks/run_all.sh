#!/usr/bin/env bash
# Every benchmark behind BENCHMARKS.md, in order; results land in benchmarks/results/*.jsonl.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p benchmarks/results
# issue 2: the engine
$PY benchmarks/compare.py --task regression --n-rows 1250000 --n-outputs 1 --systems mg,lgbm --repeats 4 \
    --out benchmarks/results/single_output.jsonl
$PY benchmarks/compare.py --task regression --n-rows 50000 --n-outputs 16 64 --fit-budget 90 \
    --systems mg,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/multitarget.jsonl
$PY benchmarks/compare.py --task multiclass --n-rows 100000 --n-outputs 10 50 --fit-budget 90 \
    --systems mg,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/multiclass.jsonl
$PY benchmarks/otto.py --systems mg,lgbm,xgb --out benchmarks/results/otto.jsonl
# issue 3: sketches and sparse leaves
$PY benchmarks/compare.py --task multiclass --n-rows 100000 --n-outputs 10 50 200 --rounds 15 --fit-budget 45 \
    --systems mg,mg_rp5,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/scaling_multiclass.jsonl
$PY benchmarks/compare.py --task multilabel --n-rows 50000 --n-features 100 --n-outputs 20 100 500 --rounds 15 \
    --fit-budget 45 --systems mg,mg_rp5,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/scaling_multilabel.jsonl
$PY benchmarks/time_to_loss.py --datasets otto,scm20d,rf1 --budget 240 --out benchmarks/results/ttl.jsonl
$PY benchmarks/time_to_loss.py --datasets delicious --systems mg_full,mg_rp5,mg_rs5,mg_top5,lgbm,xgb --budget 240 \
    --out benchmarks/results/ttl.jsonl
$PY benchmarks/sparse_leaves.py --out benchmarks/results/sparse_leaves.jsonl
# issue 4: label trees vs Omikuji and napkinXC (the synthetic set takes tens of minutes per system)
$PY benchmarks/xmc.py --datasets bibtex delicious corel5k enron synthetic --out benchmarks/results/xmc.jsonl
