#!/usr/bin/env bash
# Issue 21's churn across processes, on one machine, with the host quiet and with the host busy:
# session 47's first H100 missed p99 <= 5 ms in 3 of 3 process-runs (worst 18-33 ms) while a
# second H100 passed, and the misses came with submissions and host-only checks stalled for
# milliseconds (results/h100/s47-efdd7e6). Busy-loop hogs on every core reproduce a busy host on
# purpose; --retire-profile says whether the retirement thread was off the CPU (`between`, `nap_over`).
# Usage, in the checkout's root: bash results/pending/churn-hog.sh REV
set -u
export PATH=/usr/local/cuda/bin:$PATH
REV=$1
if [ ! -x build-gpu/src/cli/tandem ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null &&
    cmake --build build-gpu -j16 --target tandem tandem_bench >/dev/null || { echo "build failed"; exit 3; }
fi
D=$OUT/hog; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv; echo "git: $REV"; nproc; uptime; } > $D/env.txt 2>&1
P=(scripts/process-runs --runs 10 --backend cuda --tandem build-gpu/src/cli/tandem
   scenarios/53-stress-churn-8-threads.json scenarios/54-stress-churn-16-threads.json)
hogs() { for _ in $(seq "$1"); do (while :; do :; done) & done; }
one() {  # name, hog count, extra args
  local name=$1 n=$2; shift 2
  hogs "$n"
  timeout 120 "${P[@]}" --out $D/$name "$@" > $D/$name.txt 2> $D/$name.log
  echo "== $name ($n hogs $*): rc $?"; tail -n 3 $D/$name.txt | head -n 2
  [ "$n" -gt 0 ] && { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; }
  rm -f $D/$name/*.report.json
}
one plain 0
one profile 0 --retire-profile
one hog8 8 --retire-profile
one hog16 16 --retire-profile
one hog16-plain 16
# Since 078ff01 a sweep waits for a busy stream's lock at most 50 µs for a waiter; -1 is the rule before
# it, for the A/B on this same machine (skipped at revisions before 078ff01, where the knob is unknown).
if grep -q TANDEM_RETIRE_LOCK_WAIT_US src/runtime/src/retirement.cpp; then
  TANDEM_RETIRE_LOCK_WAIT_US=-1 one hog16-unbounded-wait 16 --retire-profile
  TANDEM_RETIRE_LOCK_WAIT_US=-1 one hog8-unbounded-wait 8 --retire-profile
fi
(cd $OUT && tar czf hog.tgz hog && rm -rf hog)
