#!/usr/bin/env bash
# Session 35's device call, one call on whichever card comes (about 560 s):
#   build; scripts/bench (the judged figures, sustained load included) into
#   $OUT/b; churn 53/54 x10 each; then, while time is left, BM_SustainedLoad/8
#   with the new default and with TANDEM_DRY_SHARE_RUN=64 (the rule before),
#   alternating, TANDEM_RETIRE_PROFILE=1 (event creations on the submit path in
#   each .txt's tandem-retire-profile line); prints a summary.
# REV=<literal rev>. Packs $OUT/c9.tgz after each step (bench.* stay in $OUT/b).
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/c9; mkdir -p $O/churn
pack() { (cd $OUT && tar czf c9.tgz c9); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"; tail -n1 $O/build.log
B=build-gpu/bench/tandem_bench
mkdir -p $OUT/b; TANDEM_GIT_REV=$REV timeout $(( $(left) - 60 )) bash scripts/bench $OUT/b --build build-gpu > $O/bench.log 2>&1; el "bench rc=$?"
(cd $OUT/b && tar czf ../b-extra.tgz --exclude=bench.json --exclude=bench.md --exclude=peers.json . 2>/dev/null); pack
for k in 1 2 3 4 5 6 7 8 9 10; do for c in 53-stress-churn-8-threads:c8 54-stress-churn-16-threads:c16; do
  [[ $(left) -gt 25 ]] || break 2
  build-gpu/src/cli/tandem run --quiet --out $O/churn/${c#*:}-$k.json scenarios/${c%%:*}.json 2>$O/churn/${c#*:}-$k.err || echo "churn ${c#*:} $k rc=$?"
done; done; el churn; pack
sustained() {  # name [env...]
  local name=$1; shift
  env TANDEM_RETIRE_PROFILE=1 "$@" $B --benchmark_filter='^BM_SustainedLoad/8/' \
    --benchmark_out=$O/sustained-$name-$SECONDS.json --benchmark_out_format=json > $O/sustained-$name-$SECONDS.txt 2>&1
  el "sustained $name rc=$?"
}
while [[ $(left) -gt 40 ]]; do
  sustained new-k8; pack
  [[ $(left) -gt 20 ]] && sustained dry64-k8 TANDEM_DRY_SHARE_RUN=64; pack
done
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, re, sys
o = sys.argv[1]
for f in sorted(glob.glob(o + "/sustained-*.json")):
    try: bs = json.load(open(f))["benchmarks"]
    except Exception as e: print(f, "unreadable", e); continue
    for b in bs:
        if b.get("run_type") == "iteration" and "raw_iterations_per_s" in b:
            print(f.split("/")[-1], b["name"].split("/")[1], "ratio %.3f" % (b["iterations_per_s"] / b["raw_iterations_per_s"]),
                  "p99 %.0f max %.0f us" % (b.get("retire_p99_us", -1), b.get("retire_max_us", -1)))
    txt = open(f[:-5] + ".txt").read()
    for m in re.findall(r'"event_create": \{[^}]*\}', txt): print("  ", m)
for c in ("c8", "c16"):
    rows = []
    for f in sorted(glob.glob(o + "/churn/%s-*.json" % c)):
        r = json.load(open(f)); h = r["throughput"].get("retire_latency_us") or {}
        rows.append((r["duration_s"], h.get("p99", -1), h.get("max", -1), r["status"]))
    if rows:
        d = [x[0] for x in rows]
        print(c, "n", len(rows), "dur %.3f-%.3f (%.2fx)" % (min(d), max(d), max(d) / min(d)),
              "p99 max %.0f us" % max(x[1] for x in rows), "max %.0f us" % max(x[2] for x in rows), "status", sorted(set(x[3] for x in rows)))
PY
grep -E "FAILED|Targets" $OUT/b/bench.md 2>/dev/null
pack; el total
