#!/usr/bin/env bash
# Every benchmark behind BENCHMARKS.md, in order; results land in benchmarks/results/*.jsonl.
set -eu
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p benchmarks/results
$PY benchmarks/compare.py --task regression --n-rows 1250000 --n-outputs 1 --systems mg,lgbm --repeats 5 \
    --out benchmarks/results/single_output.jsonl
$PY benchmarks/compare.py --task regression --n-rows 50000 --n-outputs 16 64 \
    --systems mg,mg_ova,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/multitarget.jsonl
$PY benchmarks/compare.py --task multiclass --n-rows 100000 --n-outputs 10 50 \
    --systems mg,mg_ova,lgbm,xgb_1pt,xgb_mot,catboost --out benchmarks/results/multiclass.jsonl
$PY benchmarks/otto.py --systems mg,mg_ova,lgbm,xgb --out benchmarks/results/otto.jsonl
