#!/usr/bin/env bash
# The next device call (prepared in session 32; move this folder to results/<device>/verify-<rev>/ with what it wrote). The verify call of
# results/h100/verify-b9874a4 (round trip,
# the paired launch rows x3 (runtime and catalog, the scenario step), the host-only
# scenario step, sustained load, churn 53/54 x10, ctest -L gpu through the CTest resource spec, memcheck of the
# runtime GPU tests, then record -> replay of the GPU-label scenarios (issue 24). REV=<rev>; no carry. Packs
# $OUT/c4.tgz after each step.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/c4; mkdir -p $O/churn
pack() { (cd $OUT && tar czf c4.tgz c4); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
git describe --always --dirty --abbrev=12 --exclude="*" >> $O/env.txt 2>&1  # the device's .git may be stale: REV must be a literal
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
gb() {  # name filter [env...]
  local n=$1 f=$2; shift 2
  env "$@" $B --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_display_aggregates_only=true \
    --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
gb roundtrip '^BM_(Raw|Tracked|Paired)RoundTrip/|^BM_RoundTripPhases/|^BM_DropInFlight'
pack
for i in 1 2 3; do gb launch-$i '^BM_Paired(Simt|Tile|CatalogSimt|CatalogTile)Launch/|^BM_PairedLaunchThreads/(1|2)/|^BM_ScenarioLaunchStep/|^BM_(Raw|Tracked|Catalog)(Simt|Tile)Launch/'; done
gb host '^BM_ScenarioLaunchStep/|^BM_(Tracked|Catalog)(Simt|Tile)Launch/' TANDEM_BENCH_BACKEND=host
pack
TANDEM_BENCH_SUSTAINED_SPLIT=1 $B --benchmark_filter='Sustained' --benchmark_out=$O/sustained.json --benchmark_out_format=json > $O/sustained.txt 2>&1; el "sustained rc=$?"
pack
for i in $(seq 1 10); do for c in 53-stress-churn-8-threads:c8 54-stress-churn-16-threads:c16; do
  build-gpu/src/cli/tandem run --quiet --out $O/churn/${c#*:}-$i.json scenarios/${c%%:*}.json 2>$O/churn/${c#*:}-$i.err || echo "churn ${c#*:} $i rc=$?"
done; done; el churn
pack
build-gpu/src/cli/tandem devices --ctest-resources > $O/gpus.json 2>&1; cat $O/gpus.json
ctest --test-dir build-gpu -L gpu -E record_replay -j4 --resource-spec-file $O/gpus.json --output-on-failure > $O/ctest-gpu-resources.log 2>&1; el "ctest -L gpu --resource-spec-file rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Insufficient" $O/ctest-gpu-resources.log | head
pack
timeout 100 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 build-gpu/tests/gpu/runtime_gpu_test > $O/memcheck-runtime.txt 2>&1; el "memcheck runtime_gpu_test rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck-runtime.txt | sort | uniq -c
# Issue 21's safety scenarios under memcheck (a buffer dropped behind another stream's slow kernel, its memory reused).
for f in 55-stress-safety-reuse-on-the-birth-stream 56-stress-safety-reuse-on-the-using-stream 57-stress-safety-reuse-after-reads-on-two-streams; do
  timeout 60 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 build-gpu/src/cli/tandem run --quiet --out $O/memcheck-$f.json scenarios/$f.json > $O/memcheck-$f.txt 2>&1; el "memcheck $f rc=$?"
done
pack
# Issue 24: record -> replay on the GPU (scenario.gpu.record_replay.*, each file recorded and replayed), last: whatever time is left.
timeout 120 ctest --test-dir build-gpu -R '^scenario[.]gpu[.]record_replay[.]' -j2 --output-on-failure > $O/record-replay-gpu.log 2>&1; el "record-replay gpu rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/record-replay-gpu.log | head
# Issue 21/23: the sustained pairing method's own spread (the raw loop against itself), and the pairs in 10 alternating slices.
TANDEM_BENCH_SUSTAINED_AA=1 $B --benchmark_filter='^BM_SustainedLoadAA/(1|2)/' --benchmark_out=$O/sustained-aa.json --benchmark_out_format=json > $O/sustained-aa.txt 2>&1; el "sustained A/A rc=$?"
TANDEM_BENCH_SUSTAINED_AA=1 TANDEM_BENCH_SUSTAINED_SLICES=10 $B --benchmark_filter='^BM_SustainedLoad(AA)?/(1|2)/' --benchmark_out=$O/sustained-sliced.json --benchmark_out_format=json > $O/sustained-sliced.txt 2>&1; el "sustained sliced rc=$?"
pack; el total
