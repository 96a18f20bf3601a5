#!/usr/bin/env bash
# Issue 21: which of tandem's steps makes the sustained K = 1 loop 0.87 of raw (TANDEM_BENCH_SUSTAINED_SPLIT=1:
# each step of both loops timed on the looping thread), K = 1 and 2, twice; and the paired launch rows with
# the driver calls timed (tandem's own part of a runtime and a catalog launch). REV=<literal>; no carry.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/p; mkdir -p $O
pack() { (cd $OUT && tar czf p.tgz p); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
run() {  # name filter [env...]
  local n=$1 f=$2; shift 2
  env "$@" $B --benchmark_filter="$f" --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
for i in 1 2; do
  run split-$i '^BM_SustainedLoad/(1|2)/' TANDEM_BENCH_SUSTAINED_SPLIT=1
  run drv-$i '^BM_Paired(Simt|Tile|CatalogSimt|CatalogTile)Launch/' TANDEM_BENCH_DRIVER_TIMING=1
  pack
done
el total
