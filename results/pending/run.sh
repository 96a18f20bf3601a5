#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-42 got only H100s whatever the call named. A failed start costs 70-180 s
# (session 42 lost about 270 s to two) and the tool then refuses for 2-10 minutes: wait out
# the stated time; each refused call still costs 15 s.
#
# Done in session 42 (results/h100/s42-455e917, aa-c70af80/run-5): A/A run 5 on a fresh H100
# and the band refitted on five runs; scripts/bench at 455e917 with the launch rows in three
# processes of their own (every one missed on that machine); a kernels::launch prefetch A/B
# (no effect, not kept); the suite-order probe on a second machine (no thread-family effect).
#
# 1. If an H200 comes: MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh (H200 A/A
#    run 2; git archive -o aa-src.tgz c70af80 in the checkout first, delete it after), then
#    scripts/bench at HEAD (below): the first H200 figures since session 33.
# 2. On an H100, a fresh machine's first call: A/A run 6 of c70af80 (same command; about
#    365 s), checked against results/h100/noise-band.json BEFORE it is added, then refitted.
# 3. scripts/bench at HEAD on the warm machine (about 420 s), its own command:
#      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=<HEAD> >/dev/null \
#        && cmake --build build-gpu -j16 >/dev/null && TANDEM_GIT_REV=<HEAD> timeout 540 scripts/bench \
#        $OUT/b --build build-gpu > $OUT/b-console.txt 2>&1; cd $OUT && tar czf b.tgz b b-console.txt
#    Its sustained pairs now carry slice_ratio_min/median/max (705c93a, not yet run on a GPU):
#    read K = 1's worst pair with them.
# 4. With what is left (about 150 s with the build): the sustained K = 1 method's own spread at
#    10 and 40 slices, one process each (session 42 ran out of device time before it):
#      TANDEM_BENCH_SUSTAINED_AA=1 TANDEM_BENCH_SUSTAINED_SLICES=<10|40> build-gpu/bench/tandem_bench \
#        --benchmark_filter='^BM_Sustained(Load|LoadAA)/1/' --benchmark_out=$OUT/s<N>.json --benchmark_out_format=json
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
