#!/usr/bin/env bash
# Session 37: the bound on the device's queue (ContextOptions::max_queued_per_stream, default
# 256) against none (TANDEM_MAX_QUEUED=0), one build, alternating processes:
#   1. BM_SustainedLoad/8 (TANDEM_BENCH_SUSTAINED_BACKLOG=1), while time is left for 2 and 3;
#   2. the paired launch rows (BM_Paired(Simt|Tile)Launch, BM_PairedCatalog*, 3 repetitions),
#      LAUNCH_N (3) processes each;
#   3. BM_SustainedLoad/(1|2|4) and BM_PairedLaunchThreads/8, one process each.
# REV=<literal rev>. Packs $OUT/q.tgz after each process.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/q; mkdir -p $O
pack() { (cd $OUT && tar czf q.tgz q); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
left() { echo $(( ${BUDGET:-420} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1; el "build rc=$?"
B=build-gpu/bench/tandem_bench
run() {  # name max_queued filter [extra args...]
  local name=$1 q=$2 f=$3; shift 3
  local e=(); [ "$q" != default ] && e=(TANDEM_MAX_QUEUED=$q)
  env "${e[@]}" TANDEM_BENCH_SUSTAINED_BACKLOG=1 $B --benchmark_filter="$f" "$@" \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1; el "$name rc=$?"; pack
}
i=0
while [[ $(left) -gt ${TAIL_S:-150} ]]; do
  i=$((i + 1))
  run k8-bound-$i default '^BM_SustainedLoad/8/'
  run k8-none-$i 0 '^BM_SustainedLoad/8/'
done
for i in $(seq 1 ${LAUNCH_N:-3}); do for q in default 0; do
  n=bound; [ $q = 0 ] && n=none
  run launch-$n-$i $q '^BM_Paired(Catalog)?(Simt|Tile)Launch/' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
done; done
for q in default 0; do
  n=bound; [ $q = 0 ] && n=none
  [[ $(left) -gt 20 ]] && run k124-$n $q '^BM_SustainedLoad/(1|2|4)/'
  [[ $(left) -gt 10 ]] && run threads-$n $q '^BM_PairedLaunchThreads/8/' --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
done
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, statistics, sys
o = sys.argv[1]
def rows(f):
    try: return json.load(open(f))["benchmarks"]
    except Exception as e: print(f, "unreadable", e); return []
for side in ("bound", "none"):
    p99s = []
    for f in sorted(glob.glob(o + "/k8-%s-*.json" % side), key=lambda f: int(f.split("-")[-1][:-5])):
        for b in rows(f):
            if b.get("run_type") != "iteration" or "raw_iterations_per_s" not in b: continue
            g = lambda k: b.get(k, -1); p99s.append(g("retire_p99_us") / 1e3)
            print(f.split("/")[-1], g("repetition_index"), "it/s %.0f ratio %.2f" % (g("iterations_per_s"), g("ratio")),
                  "p99 %.2f max %.2f ms backlog %d waits %d held %.0f KiB" % (g("retire_p99_us") / 1e3, g("retire_max_us") / 1e3,
                  g("backlog_peak"), g("queue_waits"), g("held_bytes_peak") / 1024))
    if p99s: print("k8", side, "reps", len(p99s), "p99>5ms", sum(p > 5 for p in p99s), "worst p99 %.1f ms" % max(p99s))
for side in ("bound", "none"):
    med = {}
    for f in sorted(glob.glob(o + "/launch-%s-*.json" % side)):
        for b in rows(f):
            if b.get("aggregate_name") == "median" and "ratio" in b:
                med.setdefault(b["run_name"].split("/")[0], []).append(b["ratio"])
    for k, v in sorted(med.items()): print("launch", side, k, " ".join("%.3f" % x for x in v), "median %.3f" % statistics.median(v))
    for f in glob.glob(o + "/k124-%s.json" % side) + glob.glob(o + "/threads-%s.json" % side):
        for b in rows(f):
            if b.get("run_type") == "iteration" and "retire_p99_us" in b:
                print(f.split("/")[-1], b["name"].split("/")[1], "ratio %.3f p99 %.2f max %.2f ms waits %d" % (b.get("ratio", -1),
                      b["retire_p99_us"] / 1e3, b["retire_max_us"] / 1e3, b.get("queue_waits", -1)))
            elif b.get("aggregate_name") == "median" and "ratio" in b:
                print(f.split("/")[-1], b["run_name"], "median ratio %.3f" % b["ratio"])
PY
pack; el total
