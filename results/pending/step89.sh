#!/usr/bin/env bash
# Session 49's first call: steps 8 and 9 of results/pending/run.sh on one machine (about 450 s).
# Usage: [ROUNDS=N] bash results/pending/step89.sh REV (N help on/off rounds, 2)
set -u
export PATH=/usr/local/cuda/bin:$PATH
REV=$1
T0=$(date +%s)
RUNS=10 KEEP=1 bash results/pending/churn-hog.sh $REV plain profile reserve > $OUT/churn-console.txt 2>&1
RUNS=10 TAG=2 bash results/pending/churn-hog.sh $REV profile reserve >> $OUT/churn-console.txt 2>&1
echo "churn done at $(( $(date +%s) - T0 )) s" >> $OUT/times.txt
nvcc -O2 -std=c++17 -o /tmp/pool-probe results/pending/pool-probe.cu > $OUT/probe.txt 2>&1
for pg in 0 0 64 64 0 256; do timeout 30 /tmp/pool-probe 8 2000 16 $pg >> $OUT/probe.txt 2>&1; done
timeout 30 /tmp/pool-probe 16 2000 16 0 >> $OUT/probe.txt 2>&1
timeout 30 /tmp/pool-probe 16 2000 16 64 >> $OUT/probe.txt 2>&1
echo "probe done at $(( $(date +%s) - T0 )) s" >> $OUT/times.txt
mkdir -p $OUT/help
for r in $(seq ${ROUNDS:-2}); do for h in 200 -1; do
  TANDEM_RETIRE_HELP_US=$h timeout 70 build-gpu/bench/tandem_bench \
    --benchmark_filter='^BM_Paired(Catalog)?(Simt|Tile)Launch/|^BM_PairedLaunchThreads/|^BM_PairedRoundTrip' \
    --benchmark_out=$OUT/help/help-$h-$r.json --benchmark_out_format=json > $OUT/help/help-$h-$r.txt 2>&1
  echo "help $h $r rc $? at $(( $(date +%s) - T0 )) s" >> $OUT/times.txt
done; done
(cd $OUT && tar czf help.tgz help && rm -rf help)
