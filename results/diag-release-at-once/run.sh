#!/usr/bin/env bash
# Issue 21: the round trip with the free queued at the first sweep (TANDEM_RELEASE_AT_ONCE=1, the new default)
# against the quiet-time rule (=0), A/B in one process pair each, twice; the driver call log of each; then the
# sustained load (K = 1, 2 both rules; K = 4, 8 the default) with the retirement profile, and K = 1 under two
# pacing knobs (throughput gap 10 ms; share run 32) to see what the K = 1 gap is made of. REV=<literal>; no carry.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/d; mkdir -p $O
pack() { (cd $OUT && tar czf d.tgz d); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
nproc >> $O/env.txt; which perf >> $O/env.txt 2>&1
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
gb() {  # name filter [env...]
  local n=$1 f=$2; shift 2
  env "$@" $B --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_display_aggregates_only=true \
    --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
for i in 1 2; do for v in 1 0; do
  gb rt-$v-$i '^BM_(Raw|Tracked|Paired)RoundTrip/|^BM_RoundTripPhases/|^BM_DropInFlight' TANDEM_RELEASE_AT_ONCE=$v
  TANDEM_RELEASE_AT_ONCE=$v TANDEM_BENCH_DRIVER_TIMING=1 TANDEM_BENCH_DRIVER_LOG=$O/rtlog-$v-$i.txt $B --benchmark_filter='^BM_RoundTripPhases/' > $O/rtphases-$v-$i.txt 2>&1
  python3 scripts/roundtrip_log.py $O/rtlog-$v-$i.txt --show 3 > $O/rtsummary-$v-$i.txt 2>&1; gzip -f $O/rtlog-$v-$i.txt
done; done
el roundtrip; pack
sus() {  # name filter [env...]
  local n=$1 f=$2; shift 2
  env TANDEM_RETIRE_PROFILE=1 "$@" $B --benchmark_filter="$f" --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
sus sus-default '^BM_SustainedLoad/(1|2|4|8)/'
pack
sus sus-quiet '^BM_SustainedLoad/(1|2)/' TANDEM_RELEASE_AT_ONCE=0
sus sus-gap10ms '^BM_SustainedLoad/1/' TANDEM_RETIRE_GAP_US=2,10000
sus sus-share32 '^BM_SustainedLoad/1/' TANDEM_SHARE_RUN=32
pack; el total
