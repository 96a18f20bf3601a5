#!/usr/bin/env bash
# Session 41's last device call (about 390 s of budget left, a fresh machine). On an H200:
# A/A run 2 of c70af80 (results/h200/aa-c70af80/run.sh, aa-src.tgz in the checkout). On an
# H100: the judged launch rows in three processes of their own at REV (what scripts/bench now
# does after its suite), twice, each trio reported by bench_report.py --process-bench.
#     REV=<HEAD> timeout 370 bash results/pending/s41-last-call.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
if [[ "$gpu" == *H200* ]]; then
  MODE=plain timeout 360 bash results/h200/aa-c70af80/run.sh
  exit
fi
O=$OUT/proc; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
t0=$(date +%s)
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null \
   && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1
echo "build rc=$? after $(( $(date +%s) - t0 )) s"
for trio in a b; do
  args=()
  for p in 1 2 3; do
    timeout 100 build-gpu/bench/tandem_bench --benchmark_filter='^BM_(Raw(Tile)?Launch|Paired(Catalog)?(Simt|Tile)Launch)/' \
      --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_display_aggregates_only=true \
      --benchmark_out=$O/$trio-launch-process-$p.json --benchmark_out_format=json > $O/$trio-$p.txt 2>&1
    echo "trio $trio process $p rc=$? after $(( $(date +%s) - t0 )) s"
    args+=(--process-bench $O/$trio-launch-process-$p.json)
  done
  python3 scripts/bench_report.py --bench $O/$trio-launch-process-1.json "${args[@]}" --git $REV \
    --out $O/$trio-bench.json --md $O/$trio-bench.md > /dev/null 2>&1
  grep -A10 "processes of their own (" $O/$trio-bench.md
done
(cd $OUT && tar czf proc.tgz proc)
