#!/bin/bash
# Issue 43's and 44's figures on the lent device machine (16 cores, one GPU), in one call of the `device` tool.
#
#   bash benchmarks/device_session.sh prepare        # here: fill .dev/ (git-ignored) with what travels
#   device run, carry [".dev"], command:
#   BUDGET=540 bash benchmarks/device_session.sh run [STEP ...]
#
# `prepare` puts in .dev/: the LightGBM and Py-Boost wheels for the machine's Python 3.12, the stubs of
# Py-Boost's CPU-inference imports, the shared harness (peers.py) and Otto's, rf1's and scm20d's files (../shared
# does not travel; ../shared/bench/device/README.md).  `run` installs the wheels, compiles every kernel into Numba's cache in 16
# processes (a fresh machine otherwise compiles inside the first timed task: 59 s at stop 61), then runs the
# steps in order, each under `timeout` within one deadline of BUDGET seconds; each step writes its records
# to $OUT as soon as it has them, so a step cut short leaves what it measured.  Steps (default: all, in this
# order): compile gpu_check scaling batches ahead_ab ahead_dense groups_ab rank_share cpu_share blas otto_cpu gpu gpu_full otto_gpu
# profile_cpu profile_gpu splits python gaps.  cpu_share reads Otto's serial share at 16 threads from the CPU time of each thread,
# its waiting threads asleep (OMP_WAIT_POLICY=passive; benchmarks/alternate.py, stop 68), and what a region costs
# there with its threads asleep and after a gap of Python (benchmarks/region_cost.py).  blas times Otto's rounds at 16 threads with a 12,376-row validation set, and GroveRegressor's
# defaults on 200,000 rows (20,000 held out), their metric's sums without BLAS against a BLAS dot product whose
# pool then spins beside the kernels (benchmarks/blas_threads.py, stop 67).  ahead_ab alternates Otto's fits at
# 16 threads one split at a time, 16 and 4 ahead in one process (benchmarks/alternate.py, stop 66); ahead_dense the
# same for rf1's and scm20d's dense stores (at two threads their batches are 7-9 % slower, stop 73); groups_ab the
# batches by feature groups on and off, and the groups' index of the CSR entries on and off (stop 71).  rank_share
# alternates Otto's fits at 16 threads with leaves split ahead from any rank within the splits left and from the
# first 40 % of them (benchmarks/splits_ahead.py, stop 69).  profile_gpu profiles GPU rounds, and Otto's leaf-wise
# rounds on the GPU with one split a builder call and with 16 (CudaBuilder.splits_ahead, stop 70).
# gpu_check compares the CUDA trees with the CPU's on the card (benchmarks/gpu_check.py), and compiles the CUDA
# kernels into the cache before the timed GPU steps.  splits times Otto's splits by node size at 16 threads and a
# small node's split in one call against two (benchmarks/split_sizes.py, split_step.py: stop 63's schedules on 16
# cores).  python times the grower's Python a split at 16 threads, in batches, and a scan's reads after sweeps of
# the cache (benchmarks/split_python.py, stop 66).  scaling runs Otto's store three ways: the defaults (sparse
# threshold 0.5), 0.8 and every feature dense; which shares out best on 16 threads is what this 2-core host could
# not tell (stop 64, benchmarks/store_threshold.py).  gaps counts the kernel calls of a 1,000,000-row regression's
# round at 16 threads and times the Python between them, and single operations after a sweep of the cache
# (benchmarks/kernel_gaps.py, stop 74).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

prepare() {
    local shared=${MULTIGROVE_SHARED:-$here/../shared}
    grep -qx '/.dev/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo /.dev/ >> .git/info/exclude; }
    mkdir -p .dev/whl .dev/shared/bench .dev/shared/data/otto
    cp "$shared/bench/peers.py" "$shared/bench/limits.py" .dev/shared/bench/
    cp "$shared/data/README.md" .dev/shared/data/  # the data loaders look for it
    cp "$shared/data/otto/otto_train.csv.gz" "$shared/data/otto/SOURCE.md" .dev/shared/data/otto/
    for name in rf1 scm20d; do  # the dense stores of the ahead_dense step (2 MB)
        mkdir -p ".dev/shared/data/$name" && cp "$shared/data/$name/"* ".dev/shared/data/$name/"
    done
    cp -r "$shared/bench/device/stubs" .dev/
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .dev/whl lightgbm==4.7.0
    python3 -m pip download -q --no-deps -d .dev/whl py-boost==0.5.2
    du -sh .dev
}

step() {  # step CAP NAME COMMAND...: run COMMAND for at most CAP seconds, and never past the deadline
    local cap=$1 name=$2
    shift 2
    local left=$((deadline - $(date +%s)))
    local limit=$((cap < left ? cap : left))
    if [ "$limit" -lt 15 ]; then
        echo "== $name skipped: ${left} s left" | tee -a "$OUT/steps.txt"
        return
    fi
    local start
    start=$(date +%s)
    echo "== $name (limit $limit s) at $((start - t0)) s" | tee -a "$OUT/steps.txt"
    timeout "$limit" "$@" 2>&1 | grep -v "NumbaPerformanceWarning\|warn(errors" > "$OUT/$name.txt"
    echo "== $name rc=${PIPESTATUS[0]} took $(($(date +%s) - start)) s" | tee -a "$OUT/steps.txt"
}

run() {
    t0=$(date +%s)
    deadline=$((t0 + ${BUDGET:-540}))
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .dev/whl/*.whl && cp -r .dev/stubs/* /tmp/site/ || exit 1
    export PYTHONPATH=$here/src:$here/benchmarks:/tmp/site MULTIGROVE_SHARED=$here/.dev/shared \
        MULTIGROVE_DATA=$here/.dev/shared/data PYTHONUNBUFFERED=1
    { nvidia-smi -L; lscpu | grep -E "Model name|^CPU\(s\)|NUMA node0"; python3 -c "import numba, numpy; \
from importlib.metadata import version; print('numba', numba.__version__, 'numba-cuda', version('numba-cuda'), \
'numpy', numpy.__version__)"; } > "$OUT/machine.txt" 2>&1
    local steps=("$@")
    [ ${#steps[@]} -eq 0 ] && steps=(compile gpu_check scaling batches ahead_ab ahead_dense groups_ab rank_share cpu_share blas otto_cpu \
                                     gpu gpu_full otto_gpu profile_cpu profile_gpu splits python gaps)
    for s in "${steps[@]}"; do
        case $s in
            compile) step 150 compile python3 -m multigrove compile --processes 16 ;;
            gpu_check) step 90 gpu_check python3 benchmarks/gpu_check.py --rows 4000 --rounds 5 ;;
            scaling) step 240 scaling python3 benchmarks/scaling.py --tasks otto otto_narrow otto_dense single \
                         targets16 c200 c200_sklearn --budget 0.5 --out "$OUT/scaling.jsonl" ;;
            batches) step 60 batches bash -c "python3 benchmarks/scaling.py --tasks otto --threads 4 8 16 --budget 0.5 \
                         --splits-ahead 1 --out $OUT/scaling.jsonl && NUMBA_NUM_THREADS=16 python3 \
                         benchmarks/split_batch.py --trials 60 --label device16 --out $OUT/split_batch.jsonl" ;;
            ahead_ab) step 60 ahead_ab python3 benchmarks/alternate.py --threads 16 --splits-ahead 1 16 4 \
                          --fits 8 --label device16 --out "$OUT/alternate.jsonl" ;;
            ahead_dense) step 60 ahead_dense bash -c "python3 benchmarks/alternate.py --task rf1 --threads 16 \
                             --splits-ahead 1 16 --fits 6 --label device16 --out $OUT/alternate.jsonl && python3 \
                             benchmarks/alternate.py --task scm20d --threads 16 --splits-ahead 1 16 --fits 4 \
                             --label device16 --out $OUT/alternate.jsonl" ;;
            groups_ab) step 60 groups_ab python3 benchmarks/alternate.py --threads 16 --batch-groups on off \
                           --group-index on off --fits 6 --label device16 --out "$OUT/alternate.jsonl" ;;
            rank_share) step 45 rank_share python3 benchmarks/splits_ahead.py --task otto --threads 16 --shares 1.0 0.4 \
                            --time --fits 4 --rounds 15 --label device16 --out "$OUT/splits_ahead.jsonl" ;;
            cpu_share) step 50 cpu_share bash -c "OMP_WAIT_POLICY=passive python3 benchmarks/alternate.py --threads 1 16 \
                           --fits 3 --label device16_passive --out $OUT/alternate.jsonl && python3 benchmarks/region_cost.py \
                           --threads 16 --calls 500 --out $OUT/region_cost.jsonl" ;;
            blas) step 75 blas bash -c "python3 benchmarks/blas_threads.py --threads 16 --fits 3 --rounds 20 \
                      --label device16 --out $OUT/blas_threads.jsonl && python3 benchmarks/blas_threads.py --threads 16 \
                      --task regression_defaults --rounds 60 --fits 2 --label device16 --out $OUT/blas_threads.jsonl" ;;
            otto_cpu) step 60 otto_cpu python3 benchmarks/otto_time_to_target.py --systems lgbm,mg --repeats 1 \
                          --threads 16 --out "$OUT/otto_cpu.jsonl" ;;
            gpu) step 130 gpu python3 benchmarks/gpu.py --rounds 10 --tasks c200_sketch single targets16 \
                     --out "$OUT/gpu.jsonl" ;;
            gpu_full) step 60 gpu_full python3 benchmarks/gpu.py --rounds 4 --tasks c200_full --out "$OUT/gpu.jsonl" ;;
            otto_gpu) step 90 otto_gpu python3 benchmarks/gpu.py --tasks otto --otto-growth depthwise \
                          --out "$OUT/gpu.jsonl" ;;
            profile_cpu) step 60 profile_cpu python3 benchmarks/round_profile.py --task otto --threads 1 16 \
                             --repeats 1 --warm 5 --rounds 20 --label device16 --out "$OUT/round_profile.jsonl" ;;
            profile_gpu) step 70 profile_gpu bash -c "python3 benchmarks/gpu_profile.py c200_sketch single && python3 \
                             benchmarks/gpu_profile.py otto --splits-ahead 1 16 --rounds 5" ;;
            splits) step 45 splits bash -c "python3 benchmarks/split_sizes.py --threads 16 --rounds 20 --label device16 \
                        --out $OUT/split_sizes.jsonl && python3 benchmarks/split_step.py --trials 100 --label device16 \
                        --out $OUT/split_step.jsonl" ;;
            python) step 40 python bash -c "python3 benchmarks/split_python.py --part in_situ --threads 16 --rounds 15 \
                        --label device16 --out $OUT/split_python.jsonl && python3 benchmarks/split_python.py --part cache \
                        --label device16 --out $OUT/split_python.jsonl" ;;
            gaps) step 60 gaps bash -c "python3 benchmarks/kernel_gaps.py --task regression --threads 16 --rounds 10 \
                      --label device16 --out $OUT/kernel_gaps.jsonl && python3 benchmarks/kernel_gaps.py --part cold \
                      --label device16 --out $OUT/kernel_gaps.jsonl" ;;
            *) echo "unknown step $s" >&2; exit 2 ;;
        esac
    done
    echo "total $(($(date +%s) - t0)) s"
}

case ${1:-} in
    prepare) prepare ;;
    run) shift; run "$@" ;;
    *) echo "usage: $0 prepare | run [STEP ...]" >&2; exit 2 ;;
esac
