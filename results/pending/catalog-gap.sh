#!/usr/bin/env bash
# Issue 22: where kernels::launch's extra cost on the GPU comes from. On the H100 the paired
# kernels::launch overhead sat 40-86 ns (a62f46f, c70af80 on session 40's machine) and up to
# 216 ns (session 39's machine) above tandem::launch's with prepared parameters; on the
# host-only backend with 64 KiB touched per launch (TANDEM_BENCH_HOST_TOUCH_KB=64, emulating
# the driver's cache footprint) the same two differ by 8-12 ns, before and after ed98eb6.
# So either the gap comes with the order the suite runs them in, or from the driver's side.
# Each process runs ONE of the two paired rows (no suite before it), alternating, 3 rounds,
# plain and with TANDEM_BENCH_DRIVER_TIMING=1 (the driver's launch and record split out).
# REV=<literal HEAD>; about 150 s with the build. In the checkout's root:
#     REV=<HEAD> timeout 300 bash results/pending/catalog-gap.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/gap; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
t0=$(date +%s)
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null \
   && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1
echo "build rc=$? after $(( $(date +%s) - t0 )) s"
B=build-gpu/bench/tandem_bench
for round in 1 2 3; do
  for timing in 0 1; do
    for row in 'Paired(Simt|Tile)Launch' 'PairedCatalog(Simt|Tile)Launch'; do
      n=$(echo "$row" | tr -dc 'A-Za-z')-t$timing-r$round
      TANDEM_BENCH_DRIVER_TIMING=$timing $B --benchmark_filter="^BM_$row/" \
        --benchmark_out=$O/$n.json --benchmark_out_format=json > $O/$n.txt 2>&1 || echo "$n rc=$?"
    done
  done
done
echo "done after $(( $(date +%s) - t0 )) s"
python3 - "$O" <<'PY' | tee $O/summary.txt
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for b in json.load(open(f))["benchmarks"]:
        keys = ("ratio", "overhead_ns", "raw_ns", "tracked_ns", "drv_launch_ns", "drv_own_ns")
        print(f.split("/")[-1][:-5], b["name"].split("/")[0],
              " ".join(f"{k}={b[k]:.1f}" for k in keys if k in b))
PY
(cd $OUT && tar czf gap.tgz gap)
