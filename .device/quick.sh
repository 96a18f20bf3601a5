#!/usr/bin/env bash
# quick check of the paired loaded benchmark on the GPU
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >$OUT/build.log 2>&1 && cmake --build build-gpu -j16 --target tandem_bench >>$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
B=build-gpu/bench/tandem_bench
timeout 300 $B --benchmark_filter='^BM_Paired(Simt|Tile)LaunchLoaded/|^BM_TrackedSimtLaunch/|^BM_TrackedSimtLaunchLoaded/|^BM_RawLaunch/|^BM_RawLaunchLoaded/' --benchmark_repetitions=2 --benchmark_min_time=0.2 --benchmark_out=$OUT/gpu.json --benchmark_out_format=json 2>&1 | grep -v "^tandem_" | cut -c1-330 | tee $OUT/gpu.txt
echo "gpu rc=${PIPESTATUS[0]} at $(( $(date +%s)-t0 )) s"
TANDEM_BENCH_BACKEND=host timeout 120 $B --benchmark_filter='^BM_Paired(Simt|Tile)LaunchLoaded/' --benchmark_out=$OUT/host.json --benchmark_out_format=json 2>&1 | grep "BM_" | cut -c1-330
echo "host rc=${PIPESTATUS[0]} at $(( $(date +%s)-t0 )) s"
