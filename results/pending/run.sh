#!/usr/bin/env bash
# The next session's first device call (prepared in session 34), whichever card comes:
#   the K = 8 retired-max question of same-stream reuse: BM_SustainedLoad (all K) with
#   TANDEM_STREAM_EVENTS=64 / 256 / 64 / 256 and TANDEM_RETIRE_PROFILE=1 (event creations on the
#   submit path, in each .txt's tandem-retire-profile line), then churn 53/54 x5 each, then the
#   round-trip and launch rows once. About 330 s. REV=<literal rev>. Packs $OUT/c8.tgz after each step.
# Chain on the same warm machine right after (within 30 s):
#   mkdir -p $OUT/b && TANDEM_GIT_REV=<rev> timeout 450 bash scripts/bench $OUT/b --build build-gpu
# and on an H200, issue 23's A/A run (git archive -o aa-src.tgz c70af80 in the checkout first):
#   MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/c8; mkdir -p $O/churn
pack() { (cd $OUT && tar czf c8.tgz c8); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
for n in 64 256 64 256; do
  TANDEM_RETIRE_PROFILE=1 TANDEM_STREAM_EVENTS=$n $B --benchmark_filter='^BM_SustainedLoad/' \
    --benchmark_out=$O/sustained-events$n-$SECONDS.json --benchmark_out_format=json > $O/sustained-events$n-$SECONDS.txt 2>&1
  el "sustained events=$n rc=$?"; pack
done
for k in 1 2 3 4 5; do for c in 53-stress-churn-8-threads:c8 54-stress-churn-16-threads:c16; do
  build-gpu/src/cli/tandem run --quiet --out $O/churn/${c#*:}-$k.json scenarios/${c%%:*}.json 2>$O/churn/${c#*:}-$k.err || echo "churn ${c#*:} $k rc=$?"
done; done; el churn; pack
$B --benchmark_filter='^BM_(Raw|Tracked|Paired)RoundTrip/|^BM_DropInFlight|^BM_Paired(Simt|Tile|CatalogSimt|CatalogTile)Launch/' \
  --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_display_aggregates_only=true \
  --benchmark_out=$O/rows.json --benchmark_out_format=json > $O/rows.txt 2>&1; el "rows rc=$?"
# One line per repetition, for deciding on the next call within the warm machine's 30 s.
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, re, sys
for f in sorted(glob.glob(sys.argv[1] + "/sustained-events*.json")):
    for b in json.load(open(f))["benchmarks"]:
        if b.get("run_type") == "iteration":
            print(f.split("/")[-1], b["name"].split("/")[1], "ratio %.3f" % (b["iterations_per_s"] / b["raw_iterations_per_s"]),
                  "p99 %.0f max %.0f us" % (b["retire_p99_us"], b["retire_max_us"]))
    txt = open(f[:-5] + ".txt").read()
    for m in re.findall(r'"event_create": \{[^}]*\}', txt): print("  ", m)
PY
pack; el total
