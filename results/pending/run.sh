#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-41 got only H100s whatever the call named. A failed start costs 70-180 s
# (session 41 lost 340 s to three) and the tool then refuses for 2-10 minutes: wait out the
# stated time. Naming kind nvidia-h100-x1 after a failure got a machine in session 41.
#
# Done in session 41: the real planted run (results/h100/aa-c70af80/planted), A/A run 4
# (not a fresh machine), bench + gpu-check at aeb7b94, the launch rows in two trios of own
# processes and the suite-order probe (results/h100/s41-*).
#
# 1. If an H200 comes: MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh (H200 A/A
#    run 2; git archive -o aa-src.tgz c70af80 in the checkout first, delete it after), then
#    scripts/bench at HEAD (below): the first H200 figures since session 33, with the launch
#    rows' three own processes (scripts/bench now runs them; bench.md lists each).
# 2. On an H100, a fresh machine's first call: A/A run 5 of c70af80 (same command; about
#    365 s), checked against results/h100/noise-band.json BEFORE it is added (the rule in
#    results/h100/aa-c70af80/README.md), then the band refitted on five runs.
# 3. scripts/bench at HEAD on the warm machine (about 420 s with the build and the three
#    launch processes), its own command:
#      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=<HEAD> >/dev/null \
#        && cmake --build build-gpu -j16 >/dev/null && TANDEM_GIT_REV=<HEAD> timeout 540 scripts/bench \
#        $OUT/b --build build-gpu > $OUT/b-console.txt 2>&1; cd $OUT && tar czf b.tgz b b-console.txt
# 4. With what is left: REV=<HEAD> timeout 300 bash results/h100/s41-b8dd656/suite-order/run.sh once more on
#    another machine (session 41: after the thread families the paired rows sat at 1.10 and
#    343-369 ns; otherwise 88-433 ns: a suite effect suspected, not established).
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
