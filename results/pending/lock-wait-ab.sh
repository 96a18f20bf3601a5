#!/usr/bin/env bash
# The short form of churn-hog.sh's A/B (for a call with little device time): the churn files under 16
# busy-loop hogs, 5 processes each, with the bounded lock wait (078ff01's default) and without bound (-1).
set -u
export PATH=/usr/local/cuda/bin:$PATH
REV=$1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_GIT_REV=$REV >/dev/null &&
  cmake --build build-gpu -j16 --target tandem >/dev/null || { echo "build failed"; exit 3; }
D=$OUT/lw; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv; echo "git: $REV"; } > $D/env.txt 2>&1
for round in 1 2; do
  for w in 50 -1; do
    for _ in $(seq 16); do (while :; do :; done) & done
    TANDEM_RETIRE_LOCK_WAIT_US=$w timeout 60 scripts/process-runs --runs 5 --backend cuda --retire-profile \
      --tandem build-gpu/src/cli/tandem --out $D/w$w-$round scenarios/53-stress-churn-8-threads.json \
      scenarios/54-stress-churn-16-threads.json > $D/w$w-$round.txt 2> $D/w$w-$round.log
    kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
    rm -f $D/w$w-$round/*.report.json
    echo "== wait $w round $round"; grep "^| 5" $D/w$w-$round.txt
  done
done
(cd $OUT && tar czf lw.tgz lw && rm -rf lw)
