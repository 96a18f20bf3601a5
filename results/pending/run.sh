#!/usr/bin/env bash
# Session 33's device call: the allocation bin A/B on the sustained loop (judged flow, bin on / off / on),
# held bytes after the one-count fix, round trip and launch rows once, then ctest -L gpu through the
# resource spec, memcheck of the runtime GPU tests and GPU record -> replay (issues 24, 25 on an H200).
# REV=<rev> (a literal); no carry. Packs $OUT/c5.tgz after each step.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/c5; mkdir -p $O
pack() { (cd $OUT && tar czf c5.tgz c5); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
git describe --always --dirty --abbrev=12 --exclude="*" >> $O/env.txt 2>&1
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
gb() {  # name filter [env...]
  local n=$1 f=$2; shift 2
  env "$@" $B --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_display_aggregates_only=true \
    --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1; el "$n rc=$?"
}
gb roundtrip '^BM_(Raw|Tracked|Paired)RoundTrip/|^BM_RoundTripPhases/|^BM_DropInFlight'
gb launch '^BM_Paired(Simt|Tile|CatalogSimt|CatalogTile)Launch/|^BM_ScenarioLaunchStep/'
pack
for v in 1 0 1; do
  TANDEM_ALLOCATION_BIN=$v $B --benchmark_filter='^BM_(Raw)?SustainedLoad/' --benchmark_out=$O/sustained-bin$v-$SECONDS.json \
    --benchmark_out_format=json > $O/sustained-bin$v-$SECONDS.txt 2>&1; el "sustained bin=$v rc=$?"; pack
done
build-gpu/src/cli/tandem devices --ctest-resources > $O/gpus.json 2>&1
ctest --test-dir build-gpu -L gpu -E record_replay -j4 --resource-spec-file $O/gpus.json --output-on-failure > $O/ctest-gpu-resources.log 2>&1; el "ctest -L gpu --resource-spec-file rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Insufficient" $O/ctest-gpu-resources.log | head
pack
timeout 100 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 build-gpu/tests/gpu/runtime_gpu_test > $O/memcheck-runtime.txt 2>&1; el "memcheck runtime_gpu_test rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck-runtime.txt | sort | uniq -c
timeout 120 ctest --test-dir build-gpu -R '^scenario[.]gpu[.]record_replay[.]' -j2 --output-on-failure > $O/record-replay-gpu.log 2>&1; el "record-replay gpu rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/record-replay-gpu.log | head
pack; el total
