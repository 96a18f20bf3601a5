#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-39 got only H100s whatever the call named. Session 39 lost 720 s of its 1,800 to
# four failed starts (about 180 s each): when a start fails, wait out the "later means" time
# before the next try, and plan the calls for what is left.
#
# 1. The session's first call is a fresh machine: issue 23's A/A run 3 of c70af80
#    (git archive -o aa-src.tgz c70af80 in the checkout first; about 370 s):
#      MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
#    H100: move $OUT/aa/plain-*/ to results/h100/aa-c70af80/run-3/ (runs 1 and 2 are sessions
#    38's and 39's), then fit results/h100/noise-band.json on run-1..3 alone (not provisional),
#    holding one pair out (--check), as results/h200/aa-c70af80/README.md says.
# 2. scripts/bench at HEAD on the warm machine (about 340 s with the build), as its own command:
#      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=<HEAD> >/dev/null \
#        && cmake --build build-gpu -j16 >/dev/null && TANDEM_GIT_REV=<HEAD> timeout 500 scripts/bench \
#        $OUT/b --build build-gpu > $OUT/b-console.txt 2>&1; cd $OUT && tar czf b.tgz b b-console.txt
#    Wanted: HEAD has session 39's allocate + drop change (16 -> 9 locked instructions, 582 -> 502
#    instructions on the host): BM_PairedAllocFree's ratio and overhead against 242d4f3's 1.197 /
#    results/h100/s39-242d4f3. Then the launch rows and kernels::launch overheads.
# 3. scripts/gpu-check without its bench on the same machine (about 360 s; the whole check ran
#    past 540 s in session 39):
#      TANDEM_GPU_CHECK_BENCH=0 TANDEM_GIT_REV=<HEAD> TANDEM_SANITIZER_BUDGET_S=200 timeout 560 \
#        scripts/gpu-check $OUT/g > $OUT/g-console.txt 2>&1; cd $OUT && tar czf g.tgz g g-console.txt
# 4. With what is left: results/h100/s39-242d4f3/k1-run.sh (REV=<HEAD>; about 200 s): the
#    sustained K = 1 step split and the retirement-gap / share-run variants.
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
