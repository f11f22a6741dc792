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
# issue 17: the engine, second wave
$PY benchmarks/engine_profile.py
$PY benchmarks/engine_profile.py --params '{"data_sample_strategy": "goss"}'
for n in 625000 1250000; do
    $PY benchmarks/compare.py --task regression --n-rows $n --n-outputs 1 --systems mg,lgbm --repeats 3 \
        --out benchmarks/results/single_output_w2.jsonl
done
$PY benchmarks/small_data.py --repeats 3 --out benchmarks/results/small_data.jsonl
$PY benchmarks/otto_time_to_target.py --repeats 3 --out benchmarks/results/otto_ttt.jsonl
$PY benchmarks/compare.py --task multiclass --n-rows 100000 --n-outputs 10 50 200 --rounds 15 --fit-budget 60 \
    --systems mg,mg_rp5,lgbm --repeats 2 --out benchmarks/results/scaling_multiclass_w2.jsonl
$PY benchmarks/multitarget_accuracy.py --out benchmarks/results/multitarget_accuracy.jsonl
# issue 18: sparse inputs, EFB, GOSS
$PY benchmarks/sparse_inputs.py delicious --out benchmarks/results/sparse_inputs.jsonl
$PY benchmarks/sparse_inputs.py bibtex --out benchmarks/results/sparse_inputs.jsonl
$PY benchmarks/sparse_inputs.py onehot --repeats 3 --out benchmarks/results/sparse_inputs.jsonl
$PY benchmarks/sparse_inputs.py goss --repeats 2 --out benchmarks/results/sparse_inputs.jsonl
$PY benchmarks/goss_rounds.py --repeats 6 --out benchmarks/results/goss_rounds.jsonl
$PY benchmarks/dataset_construct.py --repeats 5 --out benchmarks/results/dataset_construct.jsonl
# issue 21: SHAP speed against LightGBM
$PY benchmarks/shap_speed.py --repeats 3 --out benchmarks/results/shap_speed.jsonl
# issue 22: peak memory at 1M x 50 x 100 outputs, the cost of deterministic=True
$PY benchmarks/peak_memory.py --library multigrove --out benchmarks/results/peak_memory.jsonl
$PY benchmarks/peak_memory.py --library xgboost --out benchmarks/results/peak_memory.jsonl
$PY benchmarks/determinism.py --repeats 3 --out benchmarks/results/determinism.jsonl
# issue 20: distributed training on a 2-worker LocalCluster vs one process (and lightgbm.dask)
$PY -m pip install --quiet -e ".[dask]"
$PY benchmarks/dask_scaling.py --out benchmarks/results/dask_scaling.jsonl
# issue 19 (part): top-k prediction on Delicious
$PY benchmarks/top_k_predict.py --repeats 3 --out benchmarks/results/top_k_predict.jsonl
# issue 23: accuracy at every library's defaults, the ablation, symmetric trees, Otto time to quality again
$PY benchmarks/accuracy_panel.py --mode defaults --out benchmarks/results/accuracy_panel.jsonl
$PY benchmarks/accuracy_panel.py --ablation all --threads 1 --out benchmarks/results/accuracy_ablation.jsonl
$PY benchmarks/symmetric_trees.py --repeats 3 --out benchmarks/results/symmetric_trees.jsonl
$PY benchmarks/otto_time_to_target.py --systems lgbm,mg --repeats 3 --out benchmarks/results/otto_ttt_issue23.jsonl
# issue 18 (stop 37): what sample weights (a third statistic column) cost a regression round, beside LightGBM
$PY benchmarks/weighted_rounds.py --repeats 3 --out benchmarks/results/weighted_rounds.jsonl
$PY benchmarks/weighted_rounds.py --threads 1 --rows 500000 --repeats 3 --out benchmarks/results/weighted_rounds.jsonl
# issue 46 (stop 58): the log loss's round pass against its three passes, Delicious' shape
$PY benchmarks/round_pass.py --out benchmarks/results/round_pass.jsonl
# issue 46 (stop 58): the held-out log loss kernel at Delicious' held-out shape
$PY benchmarks/logloss_rows.py --out benchmarks/results/logloss_rows.jsonl
