#!/usr/bin/env bash
# Issue 21/22: what the shared-event run length (TANDEM_SHARE_RUN, default 8) costs the sustained loop and
# the paired launch rows. In the first diagnostic call (release-at-once, H200) the sustained K = 1 loop ran
# 108-113 k iterations/s in 4 of 5 repetitions with 32 against 87-99 k with 8. Values in rotating order
# (8 32 16 64, then 32 8); one event per submission (TANDEM_SHARE_RUN=1) once as the far end. REV=<literal>.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/s; mkdir -p $O
pack() { (cd $OUT && tar czf s.tgz s); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
run() {  # name filter reps [env...]
  local n=$1 f=$2 r=$3; shift 3
  env "$@" $B --benchmark_filter="$f" --benchmark_repetitions=$r --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
for round in 1 2; do
  vs="8 32 16 64"; [ $round = 2 ] && vs="32 8"
  for v in $vs; do
    run sus-$v-$round '^BM_SustainedLoad/(1|2)/' 1 TANDEM_SHARE_RUN=$v
    run launch-$v-$round '^BM_Paired(Simt|Tile|CatalogSimt|CatalogTile)Launch/|^BM_PairedLaunchThreads/(1|2)/' 1 TANDEM_SHARE_RUN=$v
  done
  pack
done
run sus-own-events '^BM_SustainedLoad/1/' 1 TANDEM_SHARE_RUN=1
run launch-own-events '^BM_Paired(Simt|CatalogSimt)Launch/' 1 TANDEM_SHARE_RUN=1
pack; el total
