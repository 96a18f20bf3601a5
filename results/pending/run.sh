#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-40 got only H100s whatever the call named. A failed start costs about 180 s
# (session 39 lost 720 s to four, session 40 360 s to two) and the tool then refuses for
# 5-10 minutes: wait out the stated time, and plan the calls for what is left.
#
# 1. Fresh machine (the first call), issue 23's REAL planted run of the launch rows (about
#    150 s; git archive -o aa-src.tgz c70af80 in the checkout first, delete it after):
#      timeout 225 bash results/h100/aa-c70af80/planted-launch.sh
#    Here: scripts/compare --allow-missing results/h100/aa-c70af80/run-{1,2,3}/bench.json
#    <planted>/bench.json must exit 1 naming ratios.launch_simt_paired / launch_tile_paired;
#    commit it as results/h100/aa-c70af80/planted/ and point tests/scripts/compare_fixtures
#    at it beside the synthetic H200 file (its README says how).
#    If an H200 comes instead: MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh first
#    (H200 A/A run 2), the planted run after it.
# 2. scripts/bench at HEAD on the warm machine (about 345 s with the build), its own command:
#      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=<HEAD> >/dev/null \
#        && cmake --build build-gpu -j16 >/dev/null && TANDEM_GIT_REV=<HEAD> timeout 480 scripts/bench \
#        $OUT/b --build build-gpu > $OUT/b-console.txt 2>&1; cd $OUT && tar czf b.tgz b b-console.txt
#    Wanted: the kernels::launch rows after ed98eb6 (a repeat's frame 2.6 KB -> 184 B, 324 -> 253
#    own instructions on the host): their overhead minus the prepared rows' overhead, against
#    a62f46f's 60 / 41 ns (results/h100/s40-a62f46f) and c70af80's 86 / 69 ns on that machine.
# 3. The kernels::launch gap, one paired row a process (about 150 s): REV=<HEAD> timeout 300 bash
#    results/pending/catalog-gap.sh (why: its header). Before the gpu-check if time is short.
# 4. With what is left (about 360 s): TANDEM_GPU_CHECK_BENCH=0 TANDEM_GIT_REV=<HEAD>
#    TANDEM_SANITIZER_BUDGET_S=200 timeout 560 scripts/gpu-check $OUT/g (as session 40 did).
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
