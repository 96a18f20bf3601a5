#!/usr/bin/env bash
# Issue 21's churn across processes, on one machine, with the host quiet and with the host busy:
# session 47's first H100 missed p99 <= 5 ms in 3 of 3 process-runs (worst 18-33 ms) while a
# second H100 passed, and the misses came with submissions and host-only checks stalled for
# milliseconds (results/h100/s47-efdd7e6). Busy-loop hogs on every core reproduce a busy host on
# purpose; --retire-profile says where retirement's time went (session 47: sweeps waiting for a
# preempted submitter's stream lock, `stream_lock`, results/h100/s47-0b5511d).
# Usage, in the checkout's root: [RUNS=N] [KEEP=1] bash results/pending/churn-hog.sh REV [way ...]
#   ways: plain profile hog8 hog16 hog16-plain, and hogN-unbounded-wait (TANDEM_RETIRE_LOCK_WAIT_US=-1,
#   where the knob exists: 078ff01 on), hogN-no-help (TANDEM_RETIRE_HELP_US=-1: waiters never sweep),
#   hogN-old (both: the rule before 078ff01); default: plain profile hog8 hog16 hog16-plain
#   hog16-unbounded-wait hog8-unbounded-wait. A knob missing at REV skips its way. KEEP=1 keeps the
#   runs' reports (timelines; deleted by default). TAG=x writes hogx/ and hogx.tgz (a second round).
#   Way `reserve`: quiet, profiled, the pool grown by RESERVE_MIB (64) at context creation.
# Short form for a call with little device time (about 120 s):
#   RUNS=5 bash results/pending/churn-hog.sh REV hog16 hog16-unbounded-wait
set -u
export PATH=/usr/local/cuda/bin:$PATH
REV=$1; shift
WAYS=${*:-plain profile hog8 hog16 hog16-plain hog16-unbounded-wait hog8-unbounded-wait}
if [ ! -x build-gpu/src/cli/tandem ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null &&
    cmake --build build-gpu -j16 --target tandem tandem_bench >/dev/null || { echo "build failed"; exit 3; }
fi
D=$OUT/hog${TAG:-}; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv; echo "git: $REV"; nproc; uptime; } > $D/env.txt 2>&1
P=(scripts/process-runs --runs ${RUNS:-10} --backend cuda --tandem build-gpu/src/cli/tandem
   scenarios/53-stress-churn-8-threads.json scenarios/54-stress-churn-16-threads.json)
hogs() { for _ in $(seq "$1"); do (while :; do :; done) & done; }
one() {  # name, hog count, extra args
  local name=$1 n=$2; shift 2
  hogs "$n"
  timeout 120 "${P[@]}" --out $D/$name "$@" > $D/$name.txt 2> $D/$name.log
  echo "== $name ($n hogs $*): rc $?"; tail -n 3 $D/$name.txt | head -n 2
  [ "$n" -gt 0 ] && { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; }
  [ -n "${KEEP:-}" ] || rm -f $D/$name/*.report.json
}
has() { grep -rq "$1" src/runtime/src; }
for way in $WAYS; do
  case $way in
    plain) one plain 0 ;;
    profile) one profile 0 --retire-profile ;;
    hog8 | hog16) one $way ${way#hog} --retire-profile ;;
    hog16-plain) one hog16-plain 16 ;;
    reserve)  # the pool grown at context creation (TANDEM_POOL_RESERVE_MIB, RESERVE_MIB or 64)
      if has TANDEM_POOL_RESERVE_MIB; then
        (export TANDEM_POOL_RESERVE_MIB=${RESERVE_MIB:-64}; one reserve 0 --retire-profile)
      else echo "== reserve: skipped (no TANDEM_POOL_RESERVE_MIB at $REV)"; fi ;;
    hog*-unbounded-wait | hog*-no-help | hog*-old)
      n=${way#hog}; n=${n%%-*}; knobs=()
      case $way in
        *-unbounded-wait) knobs=(TANDEM_RETIRE_LOCK_WAIT_US=-1) ;;
        *-no-help) knobs=(TANDEM_RETIRE_HELP_US=-1) ;;
        *-old) knobs=(TANDEM_RETIRE_LOCK_WAIT_US=-1 TANDEM_RETIRE_HELP_US=-1) ;;
      esac
      missing=; for k in "${knobs[@]}"; do has "${k%%=*}" || missing="$missing ${k%%=*}"; done
      if [ -z "$missing" ]; then (export "${knobs[@]}"; one $way $n --retire-profile)
      else echo "== $way: skipped (no$missing at $REV)"; fi ;;
    *) echo "unknown way: $way"; exit 2 ;;
  esac
done
(cd $OUT && tar czf hog${TAG:-}.tgz hog${TAG:-} && rm -rf hog${TAG:-})
