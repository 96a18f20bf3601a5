#!/usr/bin/env bash
# A/B of TANDEM_SHARE_RUN on the paired launch rows, alternating processes
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >$OUT/build.log 2>&1 && cmake --build build-gpu -j16 --target tandem_bench >>$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
B=build-gpu/bench/tandem_bench
for round in ${ROUNDS:-1 2}; do
  for n in ${SHARES:-8 32 64}; do
    TANDEM_SHARE_RUN=$n timeout 120 $B --benchmark_filter='^BM_Paired(Simt|Tile)Launch/|^BM_PairedLaunchThreads/[12]/' --benchmark_out=$OUT/share-$n-$round.json --benchmark_out_format=json >/dev/null 2>&1
    echo "share=$n round=$round rc=$? at $(( $(date +%s)-t0 )) s"
    python3 - $OUT/share-$n-$round.json <<'PY'
import json,sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    print("  %-50s ratio=%.4f" % (b["name"], b.get("ratio", float("nan"))), " ".join("%s=%.0f" % (k, b[k]) for k in ("raw_ns","tracked_ns") if k in b))
PY
  done
done
