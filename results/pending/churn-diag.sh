#!/usr/bin/env bash
# Issue 21's churn rule across processes missed on an H100 (session 47: retire p99 worst 18-33 ms
# in 3 of 3 process-runs; the report timelines show pending submissions climbing for 15-20 ms, then
# collapsing: retirement stalled while the device kept up). This runs the churn files with
# TANDEM_RETIRE_PROFILE=1 (where the retirement thread's time went, and the longest stall of each
# part) in variants, 10 processes each, and tabulates them. Usage, in the checkout's root:
#     bash results/pending/churn-diag.sh REV [variant ...]   (variants: base notl eager gapL,T)
set -u
export PATH=/usr/local/cuda/bin:$PATH
REV=$1; shift
VARIANTS=${*:-base notl eager}
if [ ! -x build-gpu/src/cli/tandem ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null &&
    cmake --build build-gpu -j16 --target tandem >/dev/null || { echo "build failed"; exit 3; }
fi
T=build-gpu/src/cli/tandem
D=$OUT/diag; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv; echo "git: $REV"; nproc; which perf nsys; } > $D/env.txt 2>&1
for v in $VARIANTS; do
  extra=(); envs=(TANDEM_RETIRE_PROFILE=1)
  case $v in
    notl) extra=(--no-timeline) ;;
    eager) envs+=(CUDA_MODULE_LOADING=EAGER) ;;
    gap*) envs+=(TANDEM_RETIRE_GAP_US=${v#gap}) ;;
  esac
  for f in 53-stress-churn-8-threads 54-stress-churn-16-threads; do
    for i in $(seq 1 10); do
      env "${envs[@]}" $T run --quiet --backend cuda "${extra[@]}" --out $D/$v-$f-$i.json scenarios/$f.json 2> $D/$v-$f-$i.err
    done
  done
done
python3 - "$D" > $D/summary.txt <<'PY'
import glob, json, os, sys
d = sys.argv[1]
parts = ["between", "nap_over", "sweep", "query", "settle", "stream_lock", "marker", "drain", "event_create", "alloc", "submitter_drain"]
print("run p99_ms max_ms body_s | max_us of: " + " ".join(parts))
for rep in sorted(glob.glob(os.path.join(d, "*.json"))):
    r = json.load(open(rep)); lat = r["throughput"]["retire_latency_us"]
    prof = {}
    for line in open(rep[:-5] + ".err"):
        if line.startswith("tandem-retire-profile "): prof = json.loads(line.split(" ", 1)[1])
    print(os.path.basename(rep)[:-5], "%.2f %.2f %.3f |" % (lat["p99"] / 1e3, lat["max"] / 1e3, r["body_s"]),
          " ".join("%.0f" % prof.get(p, {}).get("max_us", -1) for p in parts))
PY
column -t $D/summary.txt | tail -n 90
(cd $OUT && tar czf diag.tgz diag && rm -rf diag)
