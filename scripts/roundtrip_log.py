#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""roundtrip_log.py — where a tracked launch -> freed round trip spends its
time, from the driver call log of one BM_RoundTripPhases run.

    TANDEM_BENCH_DRIVER_TIMING=1 TANDEM_BENCH_DRIVER_LOG=/tmp/rt.log \\
        build/release/bench/tandem_bench --benchmark_filter='^BM_RoundTripPhases'
    scripts/roundtrip_log.py /tmp/rt.log [--show 3] [--skip 100]

Prints a few trips call by call (µs from the launch call; M = the benchmark
thread, R = another thread: retirement; ! = a query that found the event
complete), then medians over the trips: when the launch returned, when
retirement first found the work complete, how many queries it asked, what a
query costs (not ready and complete), the free, the retired and freed marks.
Exit status 2 on a log with no trips in it.
"""
import argparse
import statistics
import sys

CALLS = {0: "launch", 1: "record", 2: "query", 3: "wait", 10: "free", 11: "alloc",
         100: "call", 101: "launched", 102: "retired", 103: "freed"}
TRIP_START, LAUNCHED, RETIRED, FREED = 100, 101, 102, 103
QUERY, FREE = 2, 10


def read(path):
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            if len(parts) != 5:
                raise SystemExit(f"{path}:{n}: expected 5 columns (t0 t1 call main status), found {len(parts)}")
            entries.append(tuple(int(x) for x in parts))
    return entries


def trips_of(entries):
    trips, cur = [], None
    for e in entries:
        if e[2] == TRIP_START:
            if cur:
                trips.append(cur)
            cur = [e]
        elif cur is not None:
            cur.append(e)
    if cur:
        trips.append(cur)
    return trips


def show(trip):
    t0 = trip[0][0]
    parts = []
    for a, b, call, main, status in trip[1:]:
        mark = "!" if call == QUERY and status == 0 else ""
        dur = f"+{(b - a) / 1e3:.2f}" if call < TRIP_START else ""
        parts.append(f"{CALLS.get(call, call)}{'M' if main else 'R'} {(a - t0) / 1e3:.2f}{dur}{mark}")
    print("  " + " | ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", help="the file TANDEM_BENCH_DRIVER_LOG named")
    ap.add_argument("--show", type=int, default=3, help="trips to print call by call (default 3)")
    ap.add_argument("--skip", type=int, default=100, help="first trips left out as warm-up (default 100)")
    args = ap.parse_args()
    trips = trips_of(read(args.log))[args.skip:]
    if not trips:
        print(f"{args.log}: no round trips after the first {args.skip}", file=sys.stderr)
        return 2
    print(f"{len(trips)} trips; {min(args.show, len(trips))} of them call by call (µs from the call):")
    for t in trips[len(trips) // 2: len(trips) // 2 + args.show]:
        show(t)
    cols = {}
    for t in trips:
        t0 = t[0][0]
        row = {}
        queries = [e for e in t if e[2] == QUERY and not e[3]]
        done = [e for e in queries if e[4] == 0]
        row["queries a trip"] = len(queries)
        if done:
            row["first complete query starts"] = (done[0][0] - t0) / 1e3
        for a, b, call, main, status in t:
            if call in (LAUNCHED, RETIRED, FREED):
                row[CALLS[call]] = (a - t0) / 1e3
            elif call == FREE:
                row["free call"] = (b - a) / 1e3
        for name, v in row.items():
            cols.setdefault(name, []).append(v)
        for a, b, call, main, status in queries:
            cols.setdefault("query, complete" if status == 0 else "query, not ready", []).append((b - a) / 1e3)
    print("medians:")
    for name, v in cols.items():
        print(f"  {name:28} {statistics.median(v):8.2f}  ({len(v)} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
