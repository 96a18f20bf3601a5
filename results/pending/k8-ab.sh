#!/usr/bin/env bash
# Session 37's K = 8 A/B. HEAD against B (default: .base = HEAD with
# src/runtime/src/retirement.{cpp,hpp} from 8c234ee~1, only the marker fix differs), or, with
# B_ENV="VAR=value ...", HEAD against itself under that environment (no .base build).
# BM_SustainedLoad/8 alone in a process, head and base
# alternating, TANDEM_BENCH_SUSTAINED_BACKLOG=1 and TANDEM_RETIRE_PROFILE=1 (each .txt's
# tandem-retire-profile line counts retirement's event creations, its naps' oversleep and its gaps between sweeps). REV=<literal rev>.
# Packs $OUT/k.tgz after each process.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/k; mkdir -p $O
pack() { (cd $OUT && tar czf k.tgz k); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
left() { echo $(( ${BUDGET:-300} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV; base: ${B_ENV:-$REV less the retirement change of 8c234ee}" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j8 --target tandem_bench) > $O/build.log 2>&1 &
[[ -n ${B_ENV:-} ]] || (cd .base && cmake -S . -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV-base >/dev/null && cmake --build build-base -j8 --target tandem_bench) > $O/build-base.log 2>&1
el "base build rc=$?"; wait; el "build done"
i=0
while [[ $(left) -gt 16 ]]; do
  i=$((i + 1))
  for side in head base; do
    b=build-gpu/bench/tandem_bench; e=()
    if [ $side = base ]; then if [[ -n ${B_ENV:-} ]]; then read -ra e <<< "$B_ENV"; else b=.base/build-base/bench/tandem_bench; fi; fi
    env "${e[@]}" TANDEM_BENCH_SUSTAINED_BACKLOG=1 TANDEM_RETIRE_PROFILE=1 $b --benchmark_filter='^BM_SustainedLoad/8/' \
      --benchmark_out=$O/$side-$i.json --benchmark_out_format=json > $O/$side-$i.txt 2>&1; el "$side $i rc=$?"; pack
  done
done
python3 - "$O" <<'PY' 2>&1 | tee $O/summary.txt
import glob, json, re, sys
o = sys.argv[1]
for side in ("head", "base"):
    p99s = []
    for f in sorted(glob.glob(o + "/%s-*.json" % side), key=lambda f: int(f.split("-")[-1][:-5])):
        try: bs = json.load(open(f))["benchmarks"]
        except Exception as e: print(f, "unreadable", e); continue
        txt = open(f[:-5] + ".txt").read()
        ec = re.findall(r'"event_create": \{"count": (\d+), "ms": ([\d.]+), "max_us": ([\d.]+)', txt)
        sw = re.findall(r'"sweep": \{"count": \d+, "ms": [\d.]+, "max_us": ([\d.]+)', txt)
        nap = re.findall(r'"(nap_over|between)": \{"count": (\d+), "ms": [\d.]+, "max_us": ([\d.]+)', txt)
        print(f.split("/")[-1], "event_create", ec, "sweep max_us", sw, "nap_over/between (count, max_us)", nap)
        for b in bs:
            if b.get("run_type") == "iteration" and "raw_iterations_per_s" in b:
                g = lambda k: b.get(k, -1); p99s.append(g("retire_p99_us") / 1e3)
                print("  ", g("repetition_index"), "ratio %.2f" % g("ratio"),
                      "p99 %.1f max %.1f ms" % (g("retire_p99_us") / 1e3, g("retire_max_us") / 1e3),
                      "| backlog %d @%.0f | lag %.1f @%.0f | stall %.1f @%.0f | gap %.1f @%.0f" % (
                          g("backlog_peak"), g("backlog_peak_at_ms"), g("device_lag_max_ms"), g("device_lag_max_at_ms"),
                          g("retire_stall_max_ms"), g("retire_stall_max_at_ms"), g("sample_gap_max_ms"), g("sample_gap_max_at_ms")))
    if p99s: print(side, "reps", len(p99s), "p99>5ms", sum(p > 5 for p in p99s), "worst p99 %.1f ms" % max(p99s))
PY
pack; el total
