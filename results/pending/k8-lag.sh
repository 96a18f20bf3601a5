#!/usr/bin/env bash
# Session 36's K = 8 tail question: is a repetition's submit -> retired tail
# the device's queue or tandem's retirement? BM_SustainedLoad/8 alone in a
# process, as many processes as fit in BUDGET seconds, with
# TANDEM_BENCH_SUSTAINED_BACKLOG=1 (backlog_peak, device_lag_max_ms,
# retire_stall_max_ms, sample_gap_max_ms: bench/backlog_sampler.hpp) and TANDEM_RETIRE_PROFILE=1.
# With SLICES_AFTER=<s>, the K = 8 runs stop with s seconds left for the slices below.
# REV=<literal rev>. Packs $OUT/k.tgz after each process.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/k; mkdir -p $O
pack() { (cd $OUT && tar czf k.tgz k); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
left() { echo $(( ${BUDGET:-280} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1; el "build rc=$?"
B=build-gpu/bench/tandem_bench
i=0
while [[ $(left) -gt ${SLICES_AFTER:-14} ]]; do
  i=$((i + 1))
  TANDEM_BENCH_SUSTAINED_BACKLOG=1 TANDEM_RETIRE_PROFILE=1 $B --benchmark_filter='^BM_SustainedLoad/8/' \
    --benchmark_out=$O/k8-$i.json --benchmark_out_format=json > $O/k8-$i.txt 2>&1; el "k8 $i rc=$?"; pack
done
# Then, where SLICES_AFTER=<s> left time for it: K = 1 and 2 pairs in 10 alternating slices and in one
# (the default), one process each: does slicing cancel the drift that made K = 1's worst pair 0.755?
if [[ ${SLICES_AFTER:-0} -gt 14 ]]; then
  for sl in 10 1; do
    TANDEM_BENCH_SUSTAINED_SLICES=$sl $B --benchmark_filter='^BM_SustainedLoad/(1|2)/' \
      --benchmark_out=$O/slices-$sl.json --benchmark_out_format=json > $O/slices-$sl.txt 2>&1; el "slices $sl rc=$?"; pack
  done
fi
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, sys
o = sys.argv[1]
for f in sorted(glob.glob(o + "/k8-*.json"), key=lambda f: int(f.split("-")[-1][:-5])) + sorted(glob.glob(o + "/slices-*.json")):
    try: bs = json.load(open(f))["benchmarks"]
    except Exception as e: print(f, "unreadable", e); continue
    for b in bs:
        if b.get("run_type") == "iteration" and "raw_iterations_per_s" in b:
            g = lambda k: b.get(k, -1)
            print(f.split("/")[-1], g("repetition_index"), "ratio %.2f" % g("ratio"),
                  "trk %.0f raw %.0f" % (g("iterations_per_s"), g("raw_iterations_per_s")),
                  "p99 %.1f max %.1f ms" % (g("retire_p99_us") / 1e3, g("retire_max_us") / 1e3),
                  "| backlog %d @%.0f | lag %.1f ms @%.0f | stall %.1f ms @%.0f | gap %.1f ms @%.0f" % (
                      g("backlog_peak"), g("backlog_peak_at_ms"), g("device_lag_max_ms"), g("device_lag_max_at_ms"),
                      g("retire_stall_max_ms"), g("retire_stall_max_at_ms"), g("sample_gap_max_ms"),
                      g("sample_gap_max_at_ms")))
PY
pack; el total
