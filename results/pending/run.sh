#!/usr/bin/env bash
# The next session's device calls (a plan, not a script: read it). Chain the calls within
# 30 s of each other; pass revisions as literals (check `git rev-parse --short HEAD` first).
# Sessions 35-38 got only H100s whatever the call named: plan for either card, and keep each
# card's figures in its own results/<card>/ directory.
#
# 1. The session's first call is always a fresh machine: issue 23's A/A run of c70af80
#    (git archive -o aa-src.tgz c70af80 in the checkout first; about 330 s):
#      MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
#    H100: move $OUT/aa/plain-*/ to results/h100/aa-c70af80/run-2/ (run-1 is session 38's);
#    H200: to results/h200/aa-c70af80/run-2/. Three runs of one card fit its band.
# 2. scripts/gpu-check at HEAD on the warm machine (about 430 s; it fit one call at 366ec4e):
#      TANDEM_GIT_REV=<HEAD> TANDEM_SANITIZER_BUDGET_S=200 timeout 540 scripts/gpu-check $OUT/g \
#        > $OUT/g-console.txt 2>&1; cd $OUT && tar czf g.tgz g g-console.txt
#    Wanted: every judged row present and passing (at ae97fb3 on an H100: sustained K = 1
#    pairs 0.865 / 0.882, allocate + free 1.274 and the scenario launch step 1.116 missed).
# 3. With what is left: the sustained K = 1 pairs with the step split, 3 processes
#    (TANDEM_BENCH_SUSTAINED_SPLIT=1 build-gpu/bench/tandem_bench
#     --benchmark_filter='^BM_SustainedLoad/1/'): where tandem's K = 1 iteration spends its
#    time against the raw loop's, on a machine where the worst pair is under 0.9.
# results/h100/s38-ae97fb3/run.sh is the three-build launch A/B (634a9f0, a base, HEAD) with
# scripts/bench and churn; k8-ab.sh, k8-floor.sh and bound-ab.sh are there for the K = 8 questions.
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
