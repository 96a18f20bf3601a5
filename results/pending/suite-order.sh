#!/usr/bin/env bash
# Issue 23 / 22: why the judged launch rows cost about 100 ns more inside the suite than in a
# process of their own (session 41's H100: prepared 290 / 322 ns in the suite, 176 / 207 ns
# alone; the raw launch 0.3-0.5 us slower in the suite too). Each process runs one family of
# the suite, then the launch rows (raw separate + the four paired), so the family that leaves
# the slowdown behind shows; "none" is the launch rows alone. About 200 s with the build.
#     REV=<HEAD> timeout 300 bash results/pending/suite-order.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=$OUT/order; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
t0=$(date +%s)
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null \
   && cmake --build build-gpu -j16 --target tandem_bench) > $O/build.log 2>&1
echo "build rc=$? after $(( $(date +%s) - t0 )) s"
L='Raw(Tile)?Launch|Paired(Catalog)?(Simt|Tile)Launch'
for before in none 'RawLaunchThreads|TrackedLaunchThreads' 'LaneDetail|RawLaunchThreadsEvents' \
              'RawRoundTrip|TrackedRoundTrip|PairedRoundTrip|DropInFlight' 'RawGraphReplay|TrackedGraphReplay' \
              'DriverMemcpy_1GiB|TandemCopy_1GiB|TileCopy.*|TileTranspose.*' none; do
  n=$(echo "$before" | tr -dc 'A-Za-z' | cut -c1-24)
  f="^BM_($L)/"; [[ $before == none ]] || f="^BM_($before|$L)/"
  build-gpu/bench/tandem_bench --benchmark_filter="$f" --benchmark_repetitions=3 --benchmark_min_time=0.2 \
    --benchmark_display_aggregates_only=true --benchmark_out=$O/$n-$(date +%s).json --benchmark_out_format=json \
    > /dev/null 2>&1
  echo "$before: rc=$? after $(( $(date +%s) - t0 )) s"
done
(cd $OUT && tar czf order.tgz order)
