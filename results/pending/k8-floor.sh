#!/usr/bin/env bash
# Session 37: is the K = 8 tail (p99 16-19 ms with 7,500-9,300 submissions pending, retirement
# sweeping every millisecond) the device's own queue at this rate? BM_RawLaunchFloor/8 (the
# same two kernels on the raw driver, no allocation, probe events polled by a spinning thread;
# TANDEM_BENCH_SUSTAINED_FLOOR=1) and BM_SustainedLoad/8 (TANDEM_BENCH_SUSTAINED_BACKLOG=1,
# TANDEM_RETIRE_PROFILE=1) in alternating processes. REV=<literal rev>. Packs $OUT/f.tgz.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/f; mkdir -p $O
pack() { (cd $OUT && tar czf f.tgz f); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
left() { echo $(( ${BUDGET:-240} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1; el "build rc=$?"
B=build-gpu/bench/tandem_bench
i=0
while [[ $(left) -gt 20 ]]; do
  i=$((i + 1))
  TANDEM_BENCH_SUSTAINED_FLOOR=1 $B --benchmark_filter="^BM_RawLaunchFloor/${FLOOR_K:-8}/" \
    --benchmark_out=$O/floor-$i.json --benchmark_out_format=json > $O/floor-$i.txt 2>&1; el "floor $i rc=$?"
  TANDEM_BENCH_SUSTAINED_BACKLOG=1 TANDEM_RETIRE_PROFILE=1 $B --benchmark_filter='^BM_SustainedLoad/8/' \
    --benchmark_out=$O/k8-$i.json --benchmark_out_format=json > $O/k8-$i.txt 2>&1; el "k8 $i rc=$?"; pack
done
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, sys
o = sys.argv[1]
for kind in ("floor", "k8"):
    p99s = []
    for f in sorted(glob.glob(o + "/%s-*.json" % kind), key=lambda f: int(f.split("-")[-1][:-5])):
        try: bs = json.load(open(f))["benchmarks"]
        except Exception as e: print(f, "unreadable", e); continue
        for b in bs:
            if b.get("run_type") != "iteration": continue
            if b.get("error_occurred"): print(f, "error", b.get("error_message")); continue
            g = lambda k: b.get(k, -1)
            if kind == "floor":
                p99s.append(g("probe_p99_us") / 1e3)
                print(f.split("/")[-1], g("repetition_index"), "it/s %.0f" % g("iterations_per_s"),
                      "probe p50 %.2f p99 %.2f max %.2f ms" % (g("probe_p50_us") / 1e3, g("probe_p99_us") / 1e3, g("probe_max_us") / 1e3),
                      "probes %d skipped %d outstanding %d" % (g("probes"), g("probes_skipped"), g("outstanding_peak")))
            else:
                p99s.append(g("retire_p99_us") / 1e3)
                print(f.split("/")[-1], g("repetition_index"), "it/s %.0f" % g("iterations_per_s"),
                      "p99 %.2f max %.2f ms backlog %d" % (g("retire_p99_us") / 1e3, g("retire_max_us") / 1e3, g("backlog_peak")))
    if p99s: print(kind, "reps", len(p99s), "p99>5ms", sum(p > 5 for p in p99s), "worst p99 %.1f ms" % max(p99s))
PY
pack; el total
