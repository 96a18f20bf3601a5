#!/usr/bin/env bash
# Retirement's throughput gap against the paired launch ratios today (results/h200/retire-gap-4b3aef6
# chose 1 ms at 4b3aef6 on the H200; session 47's churn had p99 1.1-1.3 ms at 16 threads with
# 100 µs against 4.5-4.9 ms with 1 ms). Rounds of BM_Paired* per gap, in turn, on one machine.
# Usage, in the checkout's root (after churn-hog.sh built build-gpu): bash results/pending/gap-ab.sh [rounds]
set -u
ROUNDS=${1:-2}
D=$OUT/gap; mkdir -p $D
B=build-gpu/bench/tandem_bench
[ -x $B ] || { echo "no $B"; exit 3; }
for r in $(seq "$ROUNDS"); do
  for g in 2,1000 2,250 2,100; do
    TANDEM_RETIRE_GAP_US=$g timeout 90 $B --benchmark_filter='^BM_Paired(Catalog)?(Simt|Tile)Launch/|^BM_PairedLaunchThreads/' \
      --benchmark_out=$D/paired-$g-$r.json --benchmark_out_format=json > $D/paired-$g-$r.txt 2>&1
    echo "gap $g round $r: rc $?"
  done
done
(cd $OUT && tar czf gap.tgz gap && rm -rf gap)
