#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-43 got only H100s whatever the call named. A failed start costs 70-180 s
# (session 42 lost about 270 s to two) and the tool then refuses for 2-10 minutes: wait out
# the stated time; each refused call still costs 15 s.
#
# Session 43 got one H100 call of about 250 s after eighteen that got no machine (about 1,490 s of
# device time; results/h100/s43-4c635ba): the K = 1 slices probe (40 slices: every pair 0.988-1.054;
# 10 slices: 0.807-1.175; the raw A/A did not tighten) and the launch rows in three processes
# (every row missed in at least one). Steps 1-3 below did not run. Space failed tries 10+ minutes
# apart: session 43's tries at 5-minute gaps each cost 90-180 s and got nothing.
#
# Session 44: eleven calls between 05:40 and 07:57 UTC got no machine (eight failed starts at
# 90-180 s each, three refusals at 15 s; about 1,320 s), kinds nvidia-h200 and nvidia-h100-x1
# alike, spaced 10-13 minutes apart. The twelfth (08:05) got an H100 with about 400 s: the launch
# rows in three processes (22 of 24 checks passed) and the sustained loops at 40 / 10 / 40 slices
# (every target passed at both; results/h100/s44-f1b4b41). Steps 1-3 below did not run; step 4
# ran on that machine without deciding the default. HEAD's code since 3c0f3e5 moved only
# tests/scenario (the program generator split), so a bench at HEAD measures the same runtime.
#
# Session 45: the first call (09:04 UTC, kind nvidia-h200) got an H100 at once. Steps 2-4 ran on it
# (A/A run 6: 0 of 103 regressed from each of runs 1-5, band refitted on six runs; the bench at 936ea49:
# 63 of 66; sustained at 40 and 10 slices: every target passed at both; results/h100/s45-936ea49), and a
# second fresh H100 ran gpu-check (no bench) at 9e74897, all passed (results/h100/s45-9e74897). About
# 1,713 s used, no failed start. Still to come: step 1 (any H200), and step 2 again only to add runs.
#
# Session 46 (12:20-14:21 UTC): no machine at all. Nine failed starts (90-180 s each, 1,351 s) and three
# refusals (15 s each), kinds nvidia-h200 and nvidia-h100-x1 alike, tries spaced 10-20 minutes apart; the
# refusals said sessions beside this one were getting none either. With 404 s left the tool would not start
# one. Nothing below ran; HEAD abcaca1 is unchanged since session 45 but for this plan, so every step stands
# as written. When the budget is under about 600 s, make the call short: step 5 alone (build only the
# tandem target) fits in about 150 s.
#
# Session 47: the first call (15:50 UTC, kind nvidia-h200) got an H100 at once. Step 5 ran for the first
# time: the p99 rule missed in 3 of 3 process-runs on that machine (worst 18-33 ms; host stalls: slowest
# submissions 3-8 ms, a host-only check of 25 ms) and passed on a second fresh H100 (16 threads at
# 4.5-4.9 ms: no margin); results/h100/s47-efdd7e6. Step 3's bench was cut at 400 s (no bench.md).
# New steps, before the others on any machine (H100 or H200), each about 200 s with the build:
#   6. bash results/pending/churn-hog.sh <HEAD>: process-runs quiet, with --retire-profile, and with 8 and
#      16 busy-loop hogs (does a busy host reproduce machine A's misses, and is retirement off the CPU?);
#   7. bash results/pending/gap-ab.sh 2 (after 6, same machine): the paired launch ratios with the sweep
#      gap at 1 ms, 250 us and 100 us, to price a shorter gap against the churn's latency.
#   Steps 6 and 7 ran on a third H100 (results/h100/s47-0b5511d): hogs reproduce the misses, and the profile
#   put them in sweeps waiting for a preempted submitter's stream lock (up to 83 ms). 078ff01 bounds that
#   wait at 50 us for a waiter; it has not run on a GPU. Next session, first: step 6 at HEAD (it now also
#   runs the hogs with TANDEM_RETIRE_LOCK_WAIT_US=-1, the old rule, on the same machine; its header has a
#   short form), then step 5 /
#   scripts/bench at HEAD (the sustained rows and launch ratios with the change).
#
# Session 48 (19:18-22:18 UTC): one failed start (91 s) and five refused calls, then one fresh H100
# (19:33) held for five calls (results/h100/s48-a49ab2a): step 6 at a49ab2a with the same-machine A/B
# ways (078ff01's bounded lock wait cut the hog p99 about 5x; waiters' help, new in a49ab2a, halved it
# again with 8 hogs in two rounds, nothing with 16, where the submitters' own stalls are the p99);
# scripts/bench at a49ab2a (54 of 66, on a machine whose raw rows ran 10-24 % slower than s45's: no A/B);
# ctest -L gpu all passed. Next, first: (8) below, then step 1 if an H200 comes, else step 3's bench.
#   8. The launch rows with help on and off, paired, in one call (help must cost the launch path
#      nothing; it only runs in waits):
#        for r in 1 2; do for h in 200 -1; do TANDEM_RETIRE_HELP_US=$h timeout 90 build-gpu/bench/tandem_bench \
#          --benchmark_filter='^BM_Paired(Catalog)?(Simt|Tile)Launch/|^BM_PairedLaunchThreads/|^BM_PairedRoundTrip' \
#          --benchmark_out=$OUT/help-$h-$r.json --benchmark_out_format=json > $OUT/help-$h-$r.txt 2>&1; done; done
#      (after churn-hog.sh's build; then `cmake --build build-gpu -j16 && ctest --test-dir build-gpu -L gpu`:
#      d905650 moved a settle's counters before its outcomes and has run on no GPU),
#      then `RUNS=10 bash results/pending/churn-hog.sh <HEAD> plain profile`
#      on the same machine: a quiet machine's p99 with margin is still missing (s48's quiet runs: medians
#      1.6 / 2.2 ms, one run in ten at 5-7 ms with a 4.5-6.6 ms submission in it).
#   9. The pool's growth: every profiled run (s48) had 10 pool allocations (`alloc`) of up to 17-82 ms on
#      the submitting threads. Find when they happen (since 2b1278b each profile part's `max_at_ms` says
#      when its longest ended; a report's timeline too: churn-hog.sh deletes the reports) and whether
#      other threads' submissions stall behind them.
#
# Session 49 (22:39 UTC-): step 8 and 9 in one call, `bash results/pending/step89.sh <HEAD>` (about 450 s
# with the build): churn-hog plain + profile with KEEP=1 (reports kept), results/pending/pool-probe.cu (the
# churn's allocation pattern on a raw pool, 8 and 16 threads, with and without the pool grown first: are
# the 17-82 ms allocations the pool's first growth, and do launches and event queries stall behind
# them?), then the help on/off launch rows. Then ctest -L gpu on the full build.
# Session 49: eight calls between 22:40 and 00:50 UTC got no machine (failed starts of 90-180 s, refusals
# of 15 s; about 1,300 s), the ninth (00:51) a fresh H100 with about 500 s left: step 9 (pool-probe and
# the churn with TANDEM_POOL_RESERVE_MIB=64: the slow allocations are the pool's first growth, once, before
# any submission; nothing waits behind them; the reserve stays off), step 8's help rows (three rounds: no
# cost), ctest -L gpu (all passed; two free-memory tests failed only under -j4); results/h100/s49-d530834.
# The quiet churn passed in all 40 runs (worst p99 1.69 / 2.13 ms). Next: step 1 if an H200 comes, else
# step 3's bench at HEAD and RUNS=10 churn-hog `plain hog8` (a second quiet machine with margin?).
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
#    Its sustained pairs carry slice_ratio_min/median/max (first run in s43: single slices stall):
#    read K = 1's worst pair with them.
# 4. With what is left (about 200 s without the build): the sustained loops at 40 slices for every K,
#    beside step 3's default (10), to decide the default (bench/sustained_bench.cpp, sustained_slices):
#      TANDEM_BENCH_SUSTAINED_SLICES=40 build-gpu/bench/tandem_bench --benchmark_filter='^BM_(Raw)?SustainedLoad/' \
#        --benchmark_out=$OUT/s40.json --benchmark_out_format=json > $OUT/s40.txt 2>&1
# 5. New in session 45, not yet run on a GPU: scripts/process-runs (the churn files in 10 processes each,
#    issue 21's p99 <= 5 ms and slowest <= 1.5 x fastest), also a step of scripts/gpu-check now. About 30 s:
#      scripts/process-runs --runs 10 --backend cuda --tandem build-gpu/src/cli/tandem --out $OUT/pr \
#        scenarios/53-stress-churn-8-threads.json scenarios/54-stress-churn-16-threads.json > $OUT/pr.txt 2>&1
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
