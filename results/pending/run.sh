#!/usr/bin/env bash
# The next session's first device call (prepared in session 33), whichever card comes:
#   H200: issue 23's A/A run of the pinned revision c70af80 (results/h200/aa-c70af80/run.sh, MODE=plain);
#         chain MODE=planted on the same warm machine right after.
#   H100: the allocation bin A/B with 10 alternating slices (K = 1, 2; bin 1/0/1/0), churn 53/54 x5 each,
#         then scripts/bench (about 480 s in all), at the checkout's revision (REV=<literal>).
# Before the call, in the checkout's root: git archive -o aa-src.tgz c70af80 (needed on an H200 only;
# it travels as an untracked file: delete it after).
set -u
export PATH=/usr/local/cuda/bin:$PATH
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
case "$card" in
  *H200*) MODE=plain exec bash results/h200/aa-c70af80/run.sh ;;
esac
O=$OUT/c6; mkdir -p $O/churn
pack() { (cd $OUT && tar czf c6.tgz c6); }
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1; echo "git: $REV" >> $O/env.txt
(cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null && cmake --build build-gpu -j16) > $O/build.log 2>&1; el "build rc=$?"
B=build-gpu/bench/tandem_bench
for v in 1 0 1 0; do
  TANDEM_ALLOCATION_BIN=$v TANDEM_BENCH_SUSTAINED_SLICES=10 $B --benchmark_filter='^BM_SustainedLoad/(1|2)/' \
    --benchmark_out=$O/sliced-bin$v-$SECONDS.json --benchmark_out_format=json > $O/sliced-bin$v-$SECONDS.txt 2>&1
  el "sliced bin=$v rc=$?"; pack
done
for i in 1 2 3 4 5; do for c in 53-stress-churn-8-threads:c8 54-stress-churn-16-threads:c16; do
  build-gpu/src/cli/tandem run --quiet --out $O/churn/${c#*:}-$i.json scenarios/${c%%:*}.json 2>$O/churn/${c#*:}-$i.err || echo "churn ${c#*:} $i rc=$?"
done; done; el churn
pack
TANDEM_GIT_REV=$REV timeout 330 bash scripts/bench $O/bench --build build-gpu > $O/bench.log 2>&1; el "scripts/bench rc=$? (1 = a target missed)"
grep -E "^Targets|FAILED" $O/bench/bench.md | head -3
pack; el total
