#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
#
# 1. The queue bound on an H200, and its launch cost resolved (about 560 s):
#      REV=<HEAD> BUDGET=560 TAIL_S=330 LAUNCH_N=8 bash results/pending/bound-ab.sh
#    Wanted: BM_SustainedLoad/8 with the bound p99 <= 5 ms in every repetition; the paired
#    launch rows' bound - none inside +0.02 with 8 processes a side (at 06db8c0 on the H100,
#    3 a side: +0.023/+0.006/+0.021/0.000, inside the processes' own spread).
# 2. The issue 21/22 figures at HEAD on an H200 (about 420 s):
#      REV=<HEAD> BUDGET=420 bash results/h100/dry-cover-34d348d/run.sh
#    then ctest -L gpu through `tandem devices --ctest-resources` and, with .base = git archive
#    634a9f0 (less results/ and docs/: 64 MiB carry limit), results/h100/diag-51af965/diag.sh
#    (memcheck, the paired launch A/B against the revision before issue 21, ctest).
# 3. Issue 23's A/A runs 2 and 3 on freshly started H200s, and the planted run
#    (git archive -o aa-src.tgz c70af80 in the checkout first; about 350 s each):
#      MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
#      MODE=planted timeout 570 bash results/h200/aa-c70af80/run.sh
# k8-ab.sh (an A/B of two builds or two environments at K = 8) and k8-floor.sh (the raw floor
# against tandem) are there for the K = 8 questions.
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
