#!/usr/bin/env bash
# The next session's device call: on an H200, issue 23's A/A run first (git
# archive -o aa-src.tgz c70af80 in the checkout before the call, delete after):
#   MODE=plain timeout 570 bash results/h200/aa-c70af80/run.sh
# then, on whichever card, the figures of the current revision with the K = 8
# first-repetition question and memcheck (results/h100/dry-cover-34d348d/run.sh
# is the last one: bench first, churn, the sustained K = 8 runs):
#   REV=<literal rev> BUDGET=540 bash results/h100/dry-cover-34d348d/run.sh
#   then TANDEM_BENCH_SUSTAINED_BACKLOG=1 build-gpu/bench/tandem_bench --benchmark_filter='^BM_SustainedLoad/8/'
#   alone in a process, x3 with CUDA_MODULE_LOADING=EAGER and x3 without, to tell whether a process's
#   first K = 8 repetition's tail is a backlog of its first moments and whether lazy loading makes it,
#   and compute-sanitizer --tool memcheck --leak-check full on runtime_gpu_test and
#   tandem run --backend cuda of scenarios 51, 52, 55-57.
echo "results/pending/run.sh is a plan, not a script: read it" >&2; exit 2
