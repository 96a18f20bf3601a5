#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
#
# 1. The K = 8 fix measured, on whichever card comes (about 300 s):
#      REV=<HEAD> BUDGET=260 SLICES_AFTER=0 bash results/pending/k8-lag.sh
#    Wanted: no event made by retirement in any process's profile, no sweep over ~3 ms, and
#    for each repetition with p99 > 5 ms its sample_gap_max_ms beside its device_lag_max_ms
#    (a lag longer than the gap is the device's queue; a stall is retirement's).
#    An A/B in the same call: the tree before the fix is e960d89 (git archive e960d89 as .base;
#    its profile counts event creations too).
# 2. The issue 21/22 figures at HEAD on an H200 (about 420 s):
#      REV=<HEAD> BUDGET=420 bash results/h100/dry-cover-34d348d/run.sh
#    then ctest -L gpu through `tandem devices --ctest-resources` and, with .base = git archive
#    634a9f0, results/h100/diag-51af965/diag.sh (memcheck, the paired launch A/B, ctest).
# 3. Issue 23's A/A runs 2 and 3 on freshly started H200s, and the planted run
#    (git archive -o aa-src.tgz c70af80 in the checkout first; about 350 s each):
#      MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
#      MODE=planted timeout 570 bash results/h200/aa-c70af80/run.sh
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
