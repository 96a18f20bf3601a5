#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_report.py — tandem_bench's Google Benchmark JSON (and peers.json)
-> bench.json (device, driver, git revision, every raw and tracked figure,
`ratios` and `absolute` with their targets) and a short bench.md beside it.

Every ratio pairs two benchmarks of the same run (same process): absolute
figures move by up to 25 % between runs on the H200, ratios much less.

    scripts/bench_report.py --bench OUT/tandem_bench.json [--peers OUT/peers.json]
                            [--host-bench OUT/tandem_bench_host.json]
                            --out OUT/bench.json --md OUT/bench.md

--host-bench: the same benchmarks run on the host-only backend (no driver
cost); their figures join under the prefix `host:`.

Sustained load and the big-buffer loop (issue 21; bench/sustained_bench.cpp, bench/big_buffer_bench.cpp)
are judged per repetition: a rule that must hold "in every one of 5
repetitions" is judged on the worst of them, and a benchmark with fewer than
5 repetitions carrying the figure is absent, never a pass. The big-buffer
loop's time is judged against the cuda.core loop of --peers; without it that
row is information only (marked "not judged").

No median of nothing is judged: a paired figure whose benchmark measured no
pairs (counter `pairs` 0 in any repetition: its C++ median of an empty list
reads 0) and any judged value that is not a finite number is `absent`, never
0 (which would pass a "<=" target). bench.md's summary line says
"FAILED: N miss, M absent: <keys>" when any judged target missed or is absent.

--process-bench FILE (repeatable; scripts/bench passes 3): the launch
benchmarks alone, each file from a process of its own. Every judged launch
row (the paired SIMT and Tile ratios, the four launch overhead rows) is then
judged again as `<key>_processes`: its figure in each process against that
process's own target (the overhead against that process's separate raw
launch), passing only when every process passes; the row shows the worst
process, and bench.md lists each. A file that is missing, unreadable or
lacks the figure makes the row absent. Without the option these rows are not
written, and bench.md says they were not run.

--strict (scripts/bench passes it): exit 1 when a benchmark failed or leaked,
or a judged target missed or is absent; without it those are recorded only.
Python 3 stdlib only. Exit status: 0 written (with --strict: and every judged
target passed, nothing failed or leaked); 1 written, but with --strict a
benchmark failed or leaked, or a judged target missed or is absent; 2 bad
input (nothing written).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gbench_json  # noqa: E402
from gbench_json import TIME  # noqa: E402

FORMAT = "tandem.bench/1"


class Ratio:
    """tracked / raw of one metric, both from this run."""

    def __init__(self, key, title, tracked, raw, metric=TIME, op=None, target=None, better=None):
        self.key, self.title, self.tracked, self.raw, self.metric = key, title, tracked, raw, metric
        self.op, self.target = op, target
        # time: lower is better; a rate (launches/s): higher is better
        self.better = better or ("higher" if op == ">=" else "lower")


class Paired:
    """tracked / raw measured in alternation inside one benchmark (bench/paired_bench.cpp): the
    median of per-pair ratios, counter `ratio` (or `ratio_counter`); the raw and tracked medians
    are its counters. BM_Paired*LaunchLoaded pairs loaded against empty the same way."""

    def __init__(self, key, title, bench, raw, tracked, metric, op=None, target=None, ratio_counter="ratio"):
        self.key, self.title, self.bench, self.raw_counter, self.tracked_counter = key, title, bench, raw, tracked
        self.metric, self.op, self.target, self.ratio_counter = metric, op, target, ratio_counter
        self.better = "higher" if op == ">=" else "lower"


class Absolute:
    """One figure against a fixed target."""

    def __init__(self, key, title, bench, metric, unit, op=None, target=None, worst=False, better="lower"):
        self.key, self.title, self.bench, self.metric, self.unit = key, title, bench, metric, unit
        self.op, self.target, self.worst, self.better = op, target, worst, better


THREADS = (1, 2, 4, 8)
HOST = "host:"  # figures from --host-bench
SUSTAINED_REPETITIONS = 5  # BM_SustainedLoad/K: every rule holds in each of 5 repetitions
BIG_BUFFER_FAILED = "big-buffer loop failed"  # the prefix of BM_*BigBufferLoop's error when the loop failed


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def counter(name):
    """A repetition's counter, or None; None too for a paired repetition that measured no pairs (its
    counters are the C++ median of an empty list, 0)."""
    def get(run):
        pairs = run.get("pairs")
        return None if _finite(pairs) and pairs <= 0 else run.get(name)
    return get


def no_pairs(f):
    """Why a paired benchmark's figure is no figure: a repetition (or, with only aggregates written, the
    median) measured no pairs; None when it has pairs or says nothing about them."""
    pairs = f.values("pairs")
    if not pairs:
        agg = f.aggregates.get("median", {}).get("pairs")
        pairs = [agg] if _finite(agg) else []
    empty = sum(1 for p in pairs if p <= 0)
    return f"{empty} of {len(pairs)} repetitions of {f.key} measured no pairs" if empty else None


def per_repetition(figures, bench, per_run, need):
    """(values, None): one figure per repetition of `bench`, from per_run(run); or (None, why) when the
    benchmark is missing or failed, or fewer than `need` repetitions (or not every one) carry the figure."""
    f = figures.get(bench)
    if f is None:
        return None, f"{bench} not in this run"
    if f.error:
        return None, f"{bench}: {f.error}"
    values = [per_run(r) for r in f.runs]
    have = [v for v in values if _finite(v)]
    if len(have) < need or len(have) < len(values):
        why = f"{len(have)} of {len(values)} repetitions of {bench} report it, {need} needed"
        return None, f"{f.label}; {why}" if f.label else why
    return have, None


def spread_of(values):
    """Relative noise (coefficient of variation) of per-repetition figures; None for fewer than 2."""
    if values is None or len(values) < 2:
        return None
    m = statistics.mean(values)
    return statistics.stdev(values) / abs(m) if m else None


class EveryRepetition:
    """A target that every repetition of one benchmark must meet: the value is the worst repetition's
    (the highest for "<=", the lowest for ">="); absent unless `need` repetitions carry it."""

    section = "absolute"

    def __init__(self, key, title, bench, metric, unit, op, target, per_run=None, need=SUSTAINED_REPETITIONS):
        self.key, self.title, self.bench, self.metric, self.unit = key, title, bench, metric, unit
        self.op, self.target, self.need = op, target, need
        self.per_run = per_run or counter(metric)
        self.better = "higher" if op == ">=" else "lower"

    def entry(self, figures, peers):
        values, why = per_repetition(figures, self.bench, self.per_run, self.need)
        value = None if values is None else (min(values) if self.op == ">=" else max(values))
        e = {"title": self.title, "bench": self.bench, "metric": self.metric, "unit": self.unit,
             "better": self.better, "target": f"{self.op} {self.target}", "per_repetition": values,
             "value": clean(value), "noise": clean(spread_of(values)), "status": judge(value, self.op, self.target)}
        if why:
            e["why"] = why
        return e


def slowest_over_fastest(values):
    return min(values) / max(values) if values and max(values) > 0 else None


class RepetitionSpread(EveryRepetition):
    """The slowest repetition's figure over the fastest's (higher is better). With `raw`, the paired raw
    loop's own spread over the same repetitions is shown beside it (information: where the raw loop
    spreads as much, the machine moved, not tandem)."""

    def __init__(self, key, title, bench, metric, target, raw=None, need=SUSTAINED_REPETITIONS):
        super().__init__(key, title, bench, metric, "x", ">=", target, need=need)
        self.raw = raw

    def entry(self, figures, peers):
        values, why = per_repetition(figures, self.bench, self.per_run, self.need)
        value = slowest_over_fastest(values)
        if values and value is None:
            why = f"{self.bench}: {self.metric} is 0 in every repetition"
        e = {"title": self.title, "bench": self.bench, "metric": f"{self.metric} slowest/fastest", "unit": "x",
             "better": "higher", "target": f">= {self.target}", "per_repetition": values, "value": clean(value),
             "noise": None, "status": judge(value, ">=", self.target)}
        if self.raw:
            raw_values, _ = per_repetition(figures, self.bench, counter(self.raw), self.need)
            e.update(raw_per_repetition=raw_values, raw_value=clean(slowest_over_fastest(raw_values)))
        if why:
            e["why"] = why
        return e


class PairedEveryRepetition:
    """Raw and tracked runs paired inside each repetition of one benchmark (BM_SustainedLoad/K: counter
    `ratio`, the pair's tracked / raw): the worst pair is judged (every repetition must meet the target);
    the median pair ratio is shown beside it."""

    section = "ratios"

    def __init__(self, key, title, bench, raw, tracked, metric, op, target, ratio_counter="ratio",
                 need=SUSTAINED_REPETITIONS):
        self.key, self.title, self.bench, self.raw_counter, self.tracked_counter = key, title, bench, raw, tracked
        self.metric, self.op, self.target, self.ratio_counter, self.need = metric, op, target, ratio_counter, need
        self.better = "higher" if op == ">=" else "lower"

    def entry(self, figures, peers):
        values, why = per_repetition(figures, self.bench, counter(self.ratio_counter), self.need)
        value = None if values is None else (min(values) if self.op == ">=" else max(values))
        f = figures.get(self.bench)
        ok = values is not None
        e = {"title": self.title, "tracked": self.bench, "raw": self.bench, "metric": self.metric,
             "better": self.better, "target": f"{self.op} {self.target}", "paired": True, "worst_of_pairs": True,
             "tracked_value": clean(f.median(self.tracked_counter)) if ok else None,
             "raw_value": clean(f.median(self.raw_counter)) if ok else None,
             "median_ratio": clean(statistics.median(values)) if ok else None, "per_repetition": values,
             "value": clean(value), "noise": clean(spread_of(values)), "status": judge(value, self.op, self.target)}
        if why:
            e["why"] = why
        return e


def big_buffer_seconds(figures, bench):
    """(median loop seconds, None), or (None, why); a failed loop's why starts with BIG_BUFFER_FAILED."""
    f = figures.get(bench)
    if f is None:
        return None, f"{bench} not in this run"
    if f.error:
        return None, f"{bench}: {f.error}"
    v = f.median("loop_s")
    return (v, None) if v is not None else (None, f.label or f"{bench} reports no loop_s")


def peer_big_buffer(peers, name):
    """(median loop seconds of the peer's big-buffer loop, None), or (None, why)."""
    if not peers:
        return None, "no peers.json"
    loops = (peers.get("big_buffer") or {}).get("loops") or {}
    e = loops.get(name)
    if not e:
        return None, f"peers.json has no {name} big-buffer loop"
    if e.get("status") != "ok":
        return None, f"{name} big-buffer loop {e.get('status')}: {e.get('reason', '')}"
    v = (e.get("loop_s") or {}).get("median")
    return (v, None) if _finite(v) else (None, f"{name} big-buffer loop has no loop_s")


class BigBufferPasses:
    """The big-buffer loop ran all its iterations in every repetition: a loop that failed (out of memory) is
    a miss with its error, a benchmark that did not run (no device) absent."""

    section = "absolute"

    def __init__(self, key, title, bench):
        self.key, self.title, self.bench = key, title, bench

    def entry(self, figures, peers):
        value, why = big_buffer_seconds(figures, self.bench)
        f = figures.get(self.bench)
        if value is not None and all(r.get("passed") == 1 for r in f.runs) and f.runs:
            status = "pass"
        elif f is not None and f.error and f.error.startswith(BIG_BUFFER_FAILED):
            status = "miss"
        else:
            status = "absent"
            why = why or f"{self.bench} does not say it passed"
        e = {"title": self.title, "bench": self.bench, "metric": "loop_s", "unit": "s", "better": "lower",
             "target": "passes", "value": clean(value), "noise": clean(f.cv("loop_s")) if value is not None else None,
             "status": status}
        if why:
            e["why"] = why
        return e


class BigBufferVsPeer:
    """tandem's big-buffer loop time over a peer's (peers.json) from the same check. Without the peer's
    figure the row is information only, marked not judged; without tandem's it is absent."""

    section = "ratios"

    def __init__(self, key, title, bench, peer, op=None, target=None):
        self.key, self.title, self.bench, self.peer, self.op, self.target = key, title, bench, peer, op, target
        self.better = "lower"

    def entry(self, figures, peers):
        tv, twhy = big_buffer_seconds(figures, self.bench)
        pv, pwhy = peer_big_buffer(peers, self.peer)
        value = tv / pv if tv is not None and pv else None
        e = {"title": self.title, "tracked": self.bench, "raw": f"peers:big_buffer.{self.peer}", "metric": "loop_s",
             "better": self.better, "target": f"{self.op} {self.target}" if self.op else None,
             "tracked_value": clean(tv), "raw_value": clean(pv), "value": clean(value), "noise": None}
        if twhy:
            e.update(status=judge(None, self.op, self.target), why=twhy)
        elif pwhy:
            e.update(status="info", why=pwhy)
            if self.op:
                e["not_judged"] = f"not judged: {pwhy}"
        else:
            e["status"] = judge(value, self.op, self.target)
        return e


def held_over_inflight(run):
    held, inflight = run.get("held_bytes_peak"), run.get("inflight_bytes")
    return held / inflight if _finite(held) and _finite(inflight) and inflight > 0 else None


def sustained_rows(k):
    """BM_SustainedLoad/K against issue 21's "Done when": every rule in every one of 5 repetitions."""
    bench = f"BM_SustainedLoad/{k}"
    where = f"sustained load, {k} thread{'s' if k > 1 else ''}"
    return {
        "ratios": [
            PairedEveryRepetition(f"sustained_{k}_paired", f"{where}: iterations/s vs raw loop (worst of 5 pairs)",
                                  bench, "raw_iterations_per_s", "iterations_per_s", "iterations_per_s", ">=", 0.9),
            Ratio(f"sustained_{k}_separate", f"{where}: iterations/s, separate medians", bench,
                  f"BM_RawSustainedLoad/{k}", "iterations_per_s", better="higher"),
        ],
        "absolute": [
            EveryRepetition(f"sustained_{k}_retire_p99_us", f"{where}: submit -> retired p99 (worst of 5)", bench,
                            "retire_p99_us", "us", "<=", 5000),
            EveryRepetition(f"sustained_{k}_retire_max_us", f"{where}: submit -> retired max (worst of 5)", bench,
                            "retire_max_us", "us", "<=", 100000),
            RepetitionSpread(f"sustained_{k}_spread", f"{where}: slowest / fastest repetition, iterations/s", bench,
                             "iterations_per_s", 0.8, raw="raw_iterations_per_s"),
            EveryRepetition(f"sustained_{k}_held_bytes", f"{where}: peak held bytes / loop's in-flight bytes "
                            "(worst of 5)", bench, "held_bytes_peak/inflight_bytes", "x", "<=", 2,
                            per_run=held_over_inflight),
        ],
    }


OVERHEAD_FRACTION = 0.10  # a launch's overhead (tracked - raw, paired) against the separately timed raw launch


def raw_launch_ns(figures, bench, threads=None):
    """(ns per launch of the separately timed raw launch benchmark, None), or (None, why). For a K-thread
    benchmark (counter launches_per_s, aggregate) the time per launch on its thread: K / launches_per_s."""
    f = figures.get(bench)
    if f is None:
        return None, f"{bench} not in this run"
    if f.error:
        return None, f"{bench}: {f.error}"
    if threads is None:
        v = f.median(TIME)
        return (v, None) if v else (None, f"{bench} reports no time")
    rate = f.median("launches_per_s")
    return (threads * 1e9 / rate, None) if rate else (None, f"{bench} reports no launches_per_s")


class LaunchOverhead:
    """tandem's absolute overhead per launch, tracked - raw ns, from the pairs of a paired benchmark (counter
    `overhead_ns`: the median over the pairs), judged against OVERHEAD_FRACTION x the separately timed raw
    launch (`raw_bench`'s median; for K threads, K / launches_per_s). The yardstick is the separate raw
    launch, not the paired raw segments: the paired method slows the raw side (segments from an idle
    runtime run 0.5-1.0 us slower than the separately timed raw launch on the H200), so a fraction of the
    paired raw figure would be a looser target."""

    section = "absolute"

    def __init__(self, key, title, bench, raw_bench, threads=None, fraction=OVERHEAD_FRACTION):
        self.key, self.title, self.bench, self.raw_bench = key, title, bench, raw_bench
        self.threads, self.fraction = threads, fraction

    def entry(self, figures, peers):
        f = figures.get(self.bench)
        value, why = None, None
        if f is None:
            why = f"{self.bench} not in this run"
        elif f.error:
            why = f"{self.bench}: {f.error}"
        else:
            value = f.median("overhead_ns")
            if value is None:
                why = f.label or f"{self.bench} reports no overhead_ns"
        raw, raw_why = raw_launch_ns(figures, self.raw_bench, self.threads)
        limit = self.fraction * raw if raw is not None else None
        e = {"title": self.title, "bench": self.bench, "metric": "overhead_ns", "unit": "ns", "better": "lower",
             "target": f"<= {limit:.1f}" if limit is not None else f"<= {self.fraction} x {self.raw_bench}",
             "yardstick": {"bench": self.raw_bench, "raw_ns": clean(raw), "fraction": self.fraction},
             "value": clean(value), "noise": clean(f.cv("overhead_ns")) if value is not None else None}
        if value is not None and limit is not None:
            e["status"] = judge(value, "<=", limit)
        else:
            e["status"] = "absent"
            why = "; ".join(w for w in (why, raw_why) if w)
        if why:
            e["why"] = why
        return e


def launch_overhead_rows():
    """The overhead rule for every judged launch figure: the paired SIMT/Tile launches, kernels::launch
    paired, and the K-thread pairs idle and loaded."""
    fr = f"<= {OVERHEAD_FRACTION:g} x separate raw launch"
    rows = [
        LaunchOverhead("launch_simt_overhead", f"SIMT launch: overhead per launch, tracked - raw (paired), {fr}",
                       "BM_PairedSimtLaunch", "BM_RawLaunch"),
        LaunchOverhead("launch_tile_overhead", f"Tile launch: overhead per launch, tracked - raw (paired), {fr}",
                       "BM_PairedTileLaunch", "BM_RawTileLaunch"),
        LaunchOverhead("launch_simt_catalog_overhead",
                       f"SIMT launch via kernels::launch: overhead per launch (paired), {fr}",
                       "BM_PairedCatalogSimtLaunch", "BM_RawLaunch"),
        LaunchOverhead("launch_tile_catalog_overhead",
                       f"Tile launch via kernels::launch: overhead per launch (paired), {fr}",
                       "BM_PairedCatalogTileLaunch", "BM_RawTileLaunch"),
    ]
    for suffix, where, bench in (("", "own streams", ""), ("_loaded", "loaded", "Loaded")):
        for k in THREADS:
            rows.append(LaunchOverhead(
                f"threads_{k}{suffix}_overhead",
                f"{k} host thread{'s' if k > 1 else ''}, {where}: overhead per launch on its thread (paired), {fr}",
                f"BM_PairedLaunchThreads{bench}/{k}", f"BM_RawLaunchThreads{bench}/{k}", threads=k))
    return rows


def thread_rows(suffix, where, bench):
    """K-thread aggregate launches/s, idle (suffix "") or under the load ("_loaded"): the paired
    benchmark is judged (>= 0.9), the separate medians are information."""
    def threads(k):
        return f"{k} host thread{'s' if k > 1 else ''}, {where}"
    return [
        Paired(f"threads_{k}{suffix}_paired", f"{threads(k)}: aggregate launches/s (paired)",
               f"BM_PairedLaunchThreads{bench}/{k}", "raw_launches_per_s", "tracked_launches_per_s",
               "launches_per_s", ">=", 0.9)
        for k in THREADS
    ] + [
        Ratio(f"threads_{k}{suffix}", f"{threads(k)}: separate medians",
              f"BM_TrackedLaunchThreads{bench}/{k}", f"BM_RawLaunchThreads{bench}/{k}", "launches_per_s")
        for k in THREADS
    ]

RATIOS = [
    Paired("launch_simt_paired", "SIMT launch, 1 read + 1 write view, future dropped (paired)",
           "BM_PairedSimtLaunch", "raw_ns", "tracked_ns", "time_ns", "<=", 1.10),
    Paired("launch_tile_paired", "Tile launch, 1 read + 1 write view, future dropped (paired)",
           "BM_PairedTileLaunch", "raw_ns", "tracked_ns", "time_ns", "<=", 1.10),
    Ratio("launch_simt", "SIMT launch, separate medians",
          "BM_TrackedSimtLaunch", "BM_RawLaunch"),
    Ratio("launch_tile", "Tile launch, separate medians",
          "BM_TrackedTileLaunch", "BM_RawTileLaunch"),
    Paired("launch_simt_catalog_paired", "SIMT launch via kernels::launch (checks + packing per call; paired)",
           "BM_PairedCatalogSimtLaunch", "raw_ns", "tracked_ns", "time_ns"),
    Paired("launch_tile_catalog_paired", "Tile launch via kernels::launch (checks + packing per call; paired)",
           "BM_PairedCatalogTileLaunch", "raw_ns", "tracked_ns", "time_ns"),
    Ratio("launch_simt_catalog", "SIMT launch via kernels::launch (checks + packing per call)",
          "BM_CatalogSimtLaunch", "BM_RawLaunch"),
    Ratio("launch_tile_catalog", "Tile launch via kernels::launch (checks + packing per call)",
          "BM_CatalogTileLaunch", "BM_RawTileLaunch"),
    Paired("round_trip_p50", "launch -> memory freed vs raw launch -> event complete, median (paired)",
           "BM_PairedRoundTrip", "raw_p50_us", "tracked_p50_us", "p50_us", "<=", 2.0),
    Ratio("round_trip_p50_separate", "launch -> memory freed vs raw launch -> event complete: separate medians",
          "BM_TrackedRoundTrip", "BM_RawRoundTrip", "p50_us"),
    Paired("alloc_free", "allocate + free, 1 MiB, vs cuMemAllocFromPoolAsync + cuMemFreeAsync from a pool "
           "with tandem's settings (paired)", "BM_PairedAllocFree", "raw_ns", "tracked_ns", "time_ns", "<=", 1.25),
    Paired("alloc_free_default_pool", "allocate + free, 1 MiB, vs cuMemAllocAsync from the device's default pool "
           "(release threshold 0, emptied at every settle; paired)", "BM_PairedAllocFreeDefaultPool", "raw_ns",
           "tracked_ns", "time_ns"),
    Ratio("alloc_free_separate", "allocate + free, 1 MiB: separate medians (raw from a pool with tandem's settings)",
          "BM_TrackedAllocFree", "BM_RawAllocFree"),
] + [
    row
    for suffix, where, bench in (("", "own streams", ""), ("_loaded", "loaded", "Loaded"))
    for row in thread_rows(suffix, where, bench)
] + [
    # Loaded against empty: paired in one benchmark (bench/loaded_bench.cpp), judged; the same
    # from two separate benchmarks stays as information.
    Paired("loaded_vs_empty_simt", "SIMT tracked launch, 100k live + 10k in flight vs empty (paired)",
           "BM_PairedSimtLaunchLoaded", "empty_ns", "loaded_ns", "time_ns", "<=", 1.2),
    Paired("loaded_vs_empty_tile", "Tile tracked launch, 100k live + 10k in flight vs empty (paired)",
           "BM_PairedTileLaunchLoaded", "empty_ns", "loaded_ns", "time_ns", "<=", 1.2),
    Paired("raw_loaded_vs_empty", "raw launch with the same load vs empty (the driver's share, paired)",
           "BM_PairedSimtLaunchLoaded", "raw_empty_ns", "raw_loaded_ns", "time_ns", ratio_counter="raw_ratio"),
    Paired("own_loaded_vs_empty_simt", "tandem's own path, host-only backend: SIMT launch, loaded vs empty (paired)",
           f"{HOST}BM_PairedSimtLaunchLoaded", "empty_ns", "loaded_ns", "time_ns"),
    Paired("own_loaded_vs_empty_tile", "tandem's own path, host-only backend: Tile launch, loaded vs empty (paired)",
           f"{HOST}BM_PairedTileLaunchLoaded", "empty_ns", "loaded_ns", "time_ns"),
    Ratio("loaded_vs_empty_simt_separate", "SIMT tracked launch, loaded vs idle: separate medians",
          "BM_TrackedSimtLaunchLoaded", "BM_TrackedSimtLaunch"),
    Ratio("loaded_vs_empty_tile_separate", "Tile tracked launch, loaded vs idle: separate medians",
          "BM_TrackedTileLaunchLoaded", "BM_TrackedTileLaunch"),
    Ratio("raw_loaded_vs_empty_separate", "raw launch, loaded vs idle: separate medians",
          "BM_RawLaunchLoaded", "BM_RawLaunch"),
    Ratio("graph_replay_1", "graph replay, 1 node", "BM_TrackedGraphReplay/1", "BM_RawGraphReplay/1"),
    Ratio("graph_replay_8", "graph replay, 8 nodes", "BM_TrackedGraphReplay/8", "BM_RawGraphReplay/8"),
    Ratio("raw_event_record", "raw launch + event record vs raw launch (a tracked launch's driver work)",
          "BM_RawLaunchEventRecord", "BM_RawLaunch"),
] + [row for k in THREADS for row in sustained_rows(k)["ratios"]] + [
    BigBufferVsPeer("big_buffer_vs_cuda_core", "big-buffer loop (10 x 60 % of free, 1 ms kernel) vs cuda.core",
                    "BM_BigBufferLoop", "cuda_core", "<=", 1.5),
    BigBufferVsPeer("big_buffer_vs_torch", "big-buffer loop vs PyTorch", "BM_BigBufferLoop", "torch"),
    Ratio("big_buffer_vs_raw", "big-buffer loop vs the raw driver loop (C++)", "BM_BigBufferLoop",
          "BM_RawBigBufferLoop", "loop_s"),
    # Memory leased on several streams (docs/runtime.md, "Several streams"): the release stream against
    # host-proven release, same run, not judged until an H200 measurement settles the default.
    Ratio("multi_stream_release_iterations", "buffer read on two streams, dropped, reallocated: release_stream / "
          "host_proven iterations/s", "BM_MultiStreamRelease/release_stream", "BM_MultiStreamRelease/host_proven",
          "iterations_per_s", better="higher"),
]

def multi_stream_release_rows(mode):
    """BM_MultiStreamRelease/<mode> (bench/release_bench.cpp), information only: a buffer read on two streams by
    20 us kernels, dropped while they run, the same size allocated again (60 % of free memory on the GPU)."""
    bench = f"BM_MultiStreamRelease/{mode}"
    return [
        Absolute(f"multi_stream_release_{mode}_iterations_per_s", f"multi-stream release, {mode}: loop iterations/s",
                 bench, "iterations_per_s", "1/s", better="higher"),
        Absolute(f"multi_stream_release_{mode}_reuse_p50_us", f"multi-stream release, {mode}: drop -> same-size "
                 "allocation returned, median", bench, "p50_reuse_us", "us"),
        Absolute(f"multi_stream_release_{mode}_reuse_p99_us", f"multi-stream release, {mode}: drop -> same-size "
                 "allocation returned, p99", bench, "p99_reuse_us", "us"),
    ]


ABSOLUTES = [
    Absolute("round_trip_p99_us", "launch -> memory freed, p99", "BM_TrackedRoundTrip", "p99_us", "us", "<=", 100),
    Absolute("drop_p50_ns", "drop with work in flight, median (calling thread)", "BM_DropInFlight", "p50_ns", "ns",
             "<=", 200),
    Absolute("drop_max_ns", "drop with work in flight, max", "BM_DropInFlight", "max_ns", "ns", "<=", 50000,
             worst=True),
    Absolute("uniqueness_ns", "uniqueness check", "BM_UniquenessCheck", TIME, "ns", "<=", 50),
    Absolute("tensor_buffer_ns", "tensor <-> buffer round trip", "BM_TensorBufferRoundTrip", TIME, "ns", "<=", 200),
    # Judged by measurement on the host-only backend (bench/host_bytes_bench.cpp: tandem's heap counted
    # through the allocator, the driver's calls excluded); the declared sizeof figures are information.
    # The scenario engine's launch step against the same kernels::launch in one process (issue 22;
    # bench/scenario_bench.cpp): the step's p50 over the direct launch's p50 on the GPU, and its cost over the
    # direct loop's on the host-only backend (the engine's own CPU path).
    Absolute("scenario_launch_step_p50_ratio", "scenario launch step p50 / direct kernels::launch p50",
             "BM_ScenarioLaunchStep", "p50_ratio", "x", "<=", 1.10),
    Absolute("scenario_launch_step_overhead_host", "scenario launch step - direct kernels::launch, per launch "
             "(host-only backend)", f"{HOST}BM_ScenarioLaunchStep", "overhead_ns", "ns", "<=", 250),
    Absolute("host_bytes_per_allocation", "tandem's host heap per live allocation, 1 view (measured, host-only "
             "backend, driver excluded)", f"{HOST}BM_HostBytesPerAllocation", "bytes_per_allocation", "B", "<=", 256),
    Absolute("host_bytes_per_submission", "tandem's host heap per in-flight submission, 2 leases (measured, "
             "host-only backend, driver excluded)", f"{HOST}BM_HostBytesPerSubmission", "bytes_per_submission", "B",
             "<=", 256),
    Absolute("per_allocation_bytes", "tracker memory per allocation (declared: sizeof)", "BM_TrackerFootprint",
             "per_allocation_bytes", "B"),
    Absolute("per_lease_bytes", "tracker memory per lease (declared: sizeof)", "BM_TrackerFootprint",
             "per_lease_bytes", "B"),
    Absolute("heap_per_allocation_bytes", "host heap per live allocation (measured; driver's included)",
             "BM_LoadedHeap", "heap_per_allocation_bytes", "B"),
    Absolute("heap_per_submission_bytes", "host heap per in-flight submission, 2 leases (measured)",
             "BM_LoadedHeap", "heap_per_submission_bytes", "B"),
    Absolute("tile_copy_rank1_vs_memcpy", "Tile copy 1 GiB f32, rank 1, vs driver memcpy bandwidth",
             "BM_TileCopy_Rank1_4096_1GiB", "ratio_vs_memcpy", "x", ">=", 0.8, better="higher"),
    Absolute("tile_copy_rank2_vs_memcpy", "Tile copy 1 GiB f32, 64x64, vs driver memcpy bandwidth",
             "BM_TileCopy_Rank2_64x64_1GiB", "ratio_vs_memcpy", "x", ">=", 0.8, better="higher"),
    Absolute("tile_transpose_vs_memcpy", "Tile transpose 1 GiB f32, 64x64, vs driver memcpy bandwidth",
             "BM_TileTranspose_64x64_1GiB", "ratio_vs_memcpy", "x", ">=", 0.8, better="higher"),
] + [row for m in ("host_proven", "release_stream") for row in multi_stream_release_rows(m)] + \
    launch_overhead_rows() + [row for k in THREADS for row in sustained_rows(k)["absolute"]] + [
    BigBufferPasses("big_buffer_passes", "big-buffer loop: 10 x 60 % of free memory, 1 ms kernel at each drop",
                    "BM_BigBufferLoop"),
]


def judge(value, op, target):
    if op is None:
        return "info"
    if not _finite(value):
        return "absent"  # None, NaN or inf: no figure, never a pass
    return "pass" if (value <= target if op == "<=" else value >= target) else "miss"


def clean(x):
    """JSON-safe number (no NaN/inf)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def noise_of(*cvs):
    if any(c is None for c in cvs):
        return None
    return math.sqrt(sum(c * c for c in cvs))


def figure_entry(fig):
    out = {"repetitions": fig.repetitions(), "error": fig.error}
    if fig.label:
        out["label"] = fig.label
    for m in fig.metrics():
        name = "time_ns" if m == TIME else m
        out[name] = {"median": clean(fig.median(m)), "cv": clean(fig.cv(m))}
        vals = fig.values(m)
        if vals:
            out[name]["min"], out[name]["max"] = min(vals), max(vals)
    return out


def paired_entry(r, figures):
    f = figures.get(r.bench)
    e = {"title": r.title, "tracked": r.bench, "raw": r.bench, "metric": r.metric, "better": r.better,
         "target": f"{r.op} {r.target}" if r.op else None, "paired": True}
    value = tv = wv = None
    why = None
    if f is None:
        why = f"{r.bench} not in this run"
    elif f.error:
        why = f"{r.bench}: {f.error}"
    elif no_pairs(f):
        why = no_pairs(f)
    else:
        value, tv, wv = f.median(r.ratio_counter), f.median(r.tracked_counter), f.median(r.raw_counter)
        if value is None:
            why = f.label or f"{r.bench} reports no {r.ratio_counter}"
        elif value == 0:  # a ratio of 0 is the median of no pairs, not a figure
            value, why = None, f"{r.bench}: {r.ratio_counter} is 0 (no pairs measured)"
    e.update({"tracked_value": clean(tv), "raw_value": clean(wv), "value": clean(value),
              "noise": clean(f.cv(r.ratio_counter)) if value is not None else None,
              "status": judge(value, r.op, r.target)})
    if why:
        e["why"] = why
    return e


def ratio_entry(r, figures, peers=None):
    if hasattr(r, "entry"):
        return r.entry(figures, peers)
    if isinstance(r, Paired):
        return paired_entry(r, figures)
    t, w = figures.get(r.tracked), figures.get(r.raw)
    e = {"title": r.title, "tracked": r.tracked, "raw": r.raw,
         "metric": "time_ns" if r.metric == TIME else r.metric, "better": r.better,
         "target": f"{r.op} {r.target}" if r.op else None}
    why = []
    for name, f in (("tracked", t), ("raw", w)):
        if f is None:
            why.append(f"{name} benchmark {getattr(r, name)} not in this run")
        elif f.error:
            why.append(f"{getattr(r, name)}: {f.error}")
    tv = t.median(r.metric) if t and not t.error else None
    wv = w.median(r.metric) if w and not w.error else None
    value = tv / wv if tv and wv else None  # a tracked figure of 0 measured nothing: no ratio
    if value is None and not why:
        why.append(f"no {e['metric']} in {r.tracked} or {r.raw}" if not (tv == 0 or wv == 0)
                   else f"{e['metric']} is 0 in {r.tracked if tv == 0 else r.raw}")
    e.update({"tracked_value": clean(tv), "raw_value": clean(wv), "value": clean(value),
              "noise": clean(noise_of(t.cv(r.metric), w.cv(r.metric))) if value is not None else None,
              "status": judge(value, r.op, r.target)})
    if why:
        e["why"] = "; ".join(why)
    return e


def absolute_entry(a, figures, peers=None):
    if hasattr(a, "entry"):
        return a.entry(figures, peers)
    f = figures.get(a.bench)
    e = {"title": a.title, "bench": a.bench, "metric": "time_ns" if a.metric == TIME else a.metric,
         "unit": a.unit, "better": a.better, "target": f"{a.op} {a.target}" if a.op else None}
    value, why = None, None
    if f is None:
        why = f"{a.bench} not in this run"
    elif f.error:
        why = f"{a.bench}: {f.error}"
    else:
        value = f.worst(a.metric) if a.worst else f.median(a.metric)
        if value is None:
            why = f.label or f"{a.bench} reports no {a.metric}"
    e.update({"value": clean(value), "noise": clean(f.cv(a.metric)) if value is not None else None,
              "status": judge(value, a.op, a.target)})
    if why:
        e["why"] = why
    return e


# The judged launch rows measured again in processes of their own (--process-bench): in the suite they run
# after other benchmarks in one long process; a user's program launches from a fresh one. Both are judged.
PROCESS_ROW_KEYS = ("launch_simt_paired", "launch_tile_paired", "launch_simt_overhead", "launch_tile_overhead",
                    "launch_simt_catalog_overhead", "launch_tile_catalog_overhead")
PROCESS_SUFFIX = "_processes"


def target_bound(target):
    """(op, number) of a target string such as "<= 1.1" or "<= 312.7", or (None, None)."""
    parts = (target or "").split()
    if len(parts) != 2:
        return None, None
    try:
        return parts[0], float(parts[1])
    except ValueError:
        return None, None


def process_entry(row, section, per_process):
    """One launch row judged in each process: per_process holds, for each --process-bench file, its figures
    or the reason it has none. The entry is the worst process's (the largest excess over its own bound,
    or the process with no figure), with every process's value, target and status under `processes`."""
    entries = []
    for i, (figures, why) in enumerate(per_process, 1):
        e = ratio_entry(row, figures or {}) if section == "ratios" else absolute_entry(row, figures or {})
        if figures is None:
            e["why"] = why  # the file, not the benchmark, is what is missing
        entries.append((i, e))

    def excess(item):
        e = item[1]
        op, bound = target_bound(e.get("target"))
        if e["status"] == "absent" or bound is None:
            return math.inf
        return (e["value"] - bound) if op == "<=" else (bound - e["value"])
    worst_i, worst = max(entries, key=excess)
    out = {k: v for k, v in worst.items() if k != "why"}
    n = len(entries)
    out["title"] = f"{row.title}, in each of {n} processes of its own (the worst, process {worst_i})"
    out["processes"] = [{"value": clean(e.get("value")), "target": e.get("target"), "status": e["status"],
                         **({"why": e["why"]} if e.get("why") else {})} for _, e in entries]
    statuses = [e["status"] for _, e in entries]
    out["status"] = "absent" if "absent" in statuses else ("miss" if "miss" in statuses else "pass")
    whys = [f"process {i}: {e['why']}" for i, e in entries if e["status"] == "absent" and e.get("why")]
    if whys:
        out["why"] = "; ".join(whys)
    return out


def process_rows(paths):
    """({key: entry} for `ratios`, the same for `absolute`) from the --process-bench files."""
    per_process = []
    for path in paths:
        try:
            per_process.append((gbench_json.load(path)[1], None))
        except (OSError, ValueError, KeyError) as ex:
            per_process.append((None, f"{os.path.basename(path)}: {ex}"))
    rows = {r.key: ("ratios", r) for r in RATIOS}
    rows.update({a.key: ("absolute", a) for a in ABSOLUTES})
    out = {"ratios": {}, "absolute": {}}
    for key in PROCESS_ROW_KEYS:
        section, row = rows[key]
        out[section][key + PROCESS_SUFFIX] = process_entry(row, section, per_process)
    return out["ratios"], out["absolute"]


def git_revision(explicit, context):
    if explicit:
        return explicit
    if os.environ.get("TANDEM_GIT_REV"):
        return os.environ["TANDEM_GIT_REV"]
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # --dirty: a copied checkout whose .git is stale (the lent GPU machine's) must not claim its HEAD.
        rev = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty", "--abbrev=40", "--exclude=*"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        if rev:
            return rev
    except (OSError, subprocess.SubprocessError):
        pass
    return context.get("tandem_git", "unknown")


def build(bench_path, peers_path, git, bench_rc, host_path=None, process_paths=()):
    context, figures = gbench_json.load(bench_path)
    if host_path:
        _, host_figures = gbench_json.load(host_path)
        figures.update({HOST + k: f for k, f in host_figures.items()})
    failures = [{"benchmark": k, "error": f.error} for k, f in figures.items() if f.error]
    leaks = []
    for k, f in figures.items():
        for m in f.metrics():
            if m.startswith(("leak", "quarantined")):
                worst = f.worst(m)
                if worst:
                    leaks.append({"benchmark": k, "counter": m, "value": worst})
    if bench_rc not in (None, 0):
        leaks.append({"benchmark": "tandem_bench", "counter": "exit_status", "value": bench_rc})
    peers = None
    if peers_path and os.path.exists(peers_path):
        with open(peers_path, encoding="utf-8") as f:
            peers = json.load(f)
    ratios = {r.key: ratio_entry(r, figures, peers) for r in RATIOS}
    absolute = {a.key: absolute_entry(a, figures, peers) for a in ABSOLUTES}
    if process_paths:
        in_processes = process_rows(process_paths)
        ratios.update(in_processes[0])
        absolute.update(in_processes[1])
    judged = [e["status"] for e in list(ratios.values()) + list(absolute.values()) if e["status"] != "info"]
    summary = {s: judged.count(s) for s in ("pass", "miss", "absent")}
    for s in ("miss", "absent"):  # which targets, by key, for the FAILED line and --strict
        summary[f"{s}_keys"] = [k for sec in (ratios, absolute) for k, e in sec.items() if e["status"] == s]
    return {
        "format": FORMAT,
        "git": git_revision(git, context),
        "date": context.get("date"),
        "device": {
            "backend": context.get("tandem_backend"),
            "name": context.get("tandem_device"),
            "compute_capability": context.get("tandem_compute_capability"),
            "driver": context.get("tandem_driver"),
            "error": context.get("tandem_device_error"),
        },
        "host": {"cpus": context.get("num_cpus"), "mhz_per_cpu": context.get("mhz_per_cpu"),
                 "benchmark_library_build": context.get("library_build_type")},
        "sources": {"benchmarks": os.path.basename(bench_path),
                    "host_benchmarks": os.path.basename(host_path) if host_path else None,
                    "peers": os.path.basename(peers_path) if peers is not None else None,
                    "process_benchmarks": [os.path.basename(p) for p in process_paths]},
        "summary": summary,
        "ratios": ratios,
        "absolute": absolute,
        "failures": failures,
        "leaks": leaks,
        "figures": {k: figure_entry(f) for k, f in figures.items()},
        "peers": peers,
    }


# --- markdown -----------------------------------------------------------------------------

def fmt(value, metric):
    if value is None:
        return "—"
    if metric in ("time_ns", "p50_ns", "p99_ns", "max_ns") or metric.endswith("_ns"):
        return f"{value / 1000:.2f} µs" if value >= 1000 else f"{value:.1f} ns"
    if metric.endswith("_us"):
        return f"{value:.2f} µs"
    if metric in ("launches_per_s", "iterations_per_s"):
        return f"{value / 1000:.0f} k/s" if value >= 10000 else f"{value:.0f} /s"
    if metric == "loop_s":
        return f"{value:.3f} s"
    return f"{value:.4g}"


def fmt_abs(e):
    v, u = e["value"], e["unit"]
    if v is None:
        return "—"
    if u == "ns":
        return fmt(v, "time_ns")
    if u == "us":
        return f"{v / 1000:.2f} ms" if v >= 1000 else f"{v:.1f} µs"
    if u == "s":
        return f"{v:.3f} s"
    if u == "x":
        return f"{v:.3f}×"
    return f"{v:.0f} {u}"


def target_text(t, unit=""):
    if not t:
        return ""
    if len(t.split()) != 2:
        return t  # a target in words ("passes")
    op, value = t.split()
    sym = "≤" if op == "<=" else "≥"
    if unit == "ns" and float(value) >= 1000:
        return f"{sym} {float(value) / 1000:g} µs"
    if unit == "us" and float(value) >= 1000:
        return f"{sym} {float(value) / 1000:g} ms"
    suffix = {"ns": " ns", "us": " µs", "B": " B", "x": "×"}.get(unit, "×" if not unit else "")
    return f"{sym} {value}{suffix}"


def failed_line(doc):
    """"FAILED: N miss, M absent: <keys>" (and failed or leaking benchmarks), or None when all is well."""
    s = doc["summary"]
    miss, absent = s.get("miss_keys", []), s.get("absent_keys", [])
    if not (miss or absent or doc["failures"] or doc["leaks"]):
        return None
    keys = [f"{what} {', '.join(ks)}" for what, ks in (("missed", miss), ("absent", absent)) if ks]
    line = f"FAILED: {len(miss)} miss, {len(absent)} absent" + (f": {'; '.join(keys)}" if keys else "")
    if doc["failures"] or doc["leaks"]:
        line += f"; {len(doc['failures'])} benchmarks failed, {len(doc['leaks'])} leaks"
    return line


def markdown(doc):
    d = doc["device"]
    lines = [f"# tandem benchmarks: {d.get('name') or 'no device'}"]
    lines.append("")
    lines.append(f"Driver {d.get('driver') or '?'}, backend {d.get('backend') or '?'}, git {doc['git'][:12]}, "
                 f"{doc.get('date') or '?'}; {doc['host'].get('cpus')} CPUs. Ratios pair two benchmarks of "
                 "this one run (medians of the repetitions), or, marked (paired), raw and tracked segments "
                 "measured in alternation inside one benchmark (the median of the pair ratios: the VM's drift "
                 "cancels); absolute figures move by up to 25 % between runs.")
    if d.get("backend") == "sim":
        lines += ["", "**Simulated device: these figures measure the simulator, not tandem on a GPU.**"]
    if d.get("error"):
        lines += ["", f"**No device:** {d['error']}"]
    s = doc["summary"]
    lines += ["", f"Targets: {s['pass']} pass, {s['miss']} miss, {s['absent']} absent.", ""]
    verdict = failed_line(doc)
    if verdict:
        lines[-1:] = ["", f"**{verdict}**", ""]
    lines += ["| figure | raw | tandem | ratio | target | |", "|---|---|---|---|---|---|"]
    for e in doc["ratios"].values():
        ratio = f"{e['value']:.3f}×" if e["value"] is not None else "—"
        if e.get("worst_of_pairs") and e.get("median_ratio") is not None:
            ratio += f" (median {e['median_ratio']:.3f}×)"
        status = e["status"] if e["status"] != "info" else e.get("not_judged", "")
        lines.append(f"| {e['title']} | {fmt(e['raw_value'], e['metric'])} | {fmt(e['tracked_value'], e['metric'])} "
                     f"| {ratio} | {target_text(e['target'])} | {status} |")
    lines += ["", "| figure | value | target | |", "|---|---|---|---|"]
    for e in doc["absolute"].values():
        status = e["status"] if e["status"] != "info" else ""
        value = fmt_abs(e)
        if e.get("raw_value") is not None:
            value += f" (raw loop {e['raw_value']:.3f}×)"
        lines.append(f"| {e['title']} | {value} | {target_text(e['target'], e['unit'])} | {status} |")
    absent = [e for section in ("ratios", "absolute") for e in doc[section].values()
              if e["status"] == "absent" or e.get("not_judged")]
    if absent:
        lines += ["", "Targets not judged (absent, or information only) and why:", ""]
        lines += [f"- {e['title']}: {e.get('why', 'no figure')}" for e in absent]
    lines += processes_markdown(doc)
    lines += peers_markdown(doc)
    lines += big_buffer_markdown(doc)
    if doc["failures"]:
        lines += ["", "Failed benchmarks:", ""]
        by_error = {}
        for f in doc["failures"]:
            by_error.setdefault(f["error"], []).append(f["benchmark"])
        for error, names in by_error.items():
            shown = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            lines.append(f"- {shown}: {error}")
    if doc["leaks"]:
        lines += ["", "Leaks:", ""]
        lines += [f"- `{x['benchmark']}`: {x['counter']} = {x['value']}" for x in doc["leaks"]]
    return "\n".join(lines) + "\n"


def processes_markdown(doc):
    """Each judged launch row in every process of its own (--process-bench), or that they were not run."""
    rows = [e for sec in ("ratios", "absolute") for k, e in doc[sec].items() if k.endswith(PROCESS_SUFFIX)]
    if not rows:
        return ["", "Launch rows in processes of their own: not run (scripts/bench runs them; "
                "bench_report.py --process-bench)."]
    n = max(len(e["processes"]) for e in rows)
    out = ["", f"Launch rows in processes of their own ({n} processes, each only the launch benchmarks; "
           "each process judged against its own target):", "",
           "| row | " + " | ".join(f"process {i}" for i in range(1, n + 1)) + " | |",
           "|---|" + "---|" * n + "---|"]
    for e in rows:
        unit = e.get("unit", "")

        def cell(p):
            v = p["value"]
            if v is None:
                return "— (absent)"
            shown = fmt(v, "time_ns") if unit == "ns" else f"{v:.3f}×"
            return f"{shown} {target_text(p['target'], unit)} {p['status']}"
        out.append(f"| {e['title'].split(', in each of')[0]} | " + " | ".join(cell(p) for p in e["processes"]) +
                   f" | {e['status']} |")
    return out


# What a launch through each launcher does besides launching (the peers' own entries carry theirs).
TANDEM_MEMORY_NOTE = "tracks each view's accesses (leases); memory held until the work is proven complete"


def peers_markdown(doc):
    """tandem beside the Python launchers, each against the raw driver launch measured in its own process with
    the same method: tandem's rows are its judged paired figures (runtime launch and kernels::launch, raw and
    tracked segments in alternation in tandem_bench), each peer's ratio is against the raw ctypes/bindings
    launch of the peers' process, trial by trial (scripts/peers.py)."""
    p = doc.get("peers")
    rows = []  # (launcher, per launch us, ratio, tracks accesses, holds memory, note)
    ratios = doc["ratios"]
    for key, title in (("launch_simt_paired", "tandem::launch, SIMT copy, 2 views (C++, paired)"),
                       ("launch_simt_catalog_paired", "tandem kernels::launch, SIMT copy, 2 views (C++, paired)"),
                       ("launch_tile_paired", "tandem::launch, Tile copy, 2 views (C++, paired)"),
                       ("launch_tile_catalog_paired", "tandem kernels::launch, Tile copy, 2 views (C++, paired)")):
        e = ratios.get(key, {})
        if e.get("tracked_value") is None:
            continue
        if not rows:
            rows.append(("raw `cuLaunchKernel` (C++, tandem_bench's paired raw segments)", e["raw_value"] / 1000,
                         1.0, False, False, "the driver"))
        rows.append((title, e["tracked_value"] / 1000, e["value"], True, True, TANDEM_MEMORY_NOTE))
    notes = []
    if p:
        for name, e in p.get("peers", {}).items():
            if e.get("status") == "ok":
                rows.append((e.get("title", name), e["per_launch_us"]["median"], e.get("ratio_vs_raw"),
                             e.get("tracks_accesses"), e.get("holds_memory_until_complete"), e.get("memory_note", "")))
            else:
                notes.append(f"- {e.get('title', name)}: {e.get('status')} ({e.get('reason', '')})")
    if not rows and not notes:
        return []

    def yes_no(x):
        return "—" if x is None else ("yes" if x else "no")

    out = ["", "Launch cost beside peers, each against the raw driver launch measured in its own process with the "
           "same method: tandem's rows are its judged paired figures (raw and tracked segments in alternation; "
           "the paired raw segments run slower than a separately timed raw launch), each peer's ratio is the "
           "median over interleaved rounds of its trial over the raw Python launch's trial (scripts/peers.py: "
           "an empty kernel or a one-element op, N launches + one synchronize). Only tandem tracks accesses and "
           "holds memory until the work completes:", "",
           "| launcher | per launch | vs raw driver (own process) | tracks accesses | holds memory until complete | "
           "memory |", "|---|---|---|---|---|---|"]
    for title, us, ratio, tracks, holds, note in rows:
        out.append(f"| {title} | {us:.2f} µs | {f'{ratio:.2f}×' if ratio is not None else '—'} | {yes_no(tracks)} "
                   f"| {yes_no(holds)} | {note} |")
    if notes:
        out += ["", "Peers not measured:", ""] + notes
    return out


def big_buffer_markdown(doc):
    """The big-buffer loop beside the same loop in C++ on the raw driver and in the Python peers."""
    rows = []
    fig = doc["figures"]
    for name, title in (("BM_BigBufferLoop", "tandem (C++)"), ("BM_RawBigBufferLoop", "raw driver pool (C++)")):
        f = fig.get(name)
        if f is None:
            continue
        if f.get("error"):
            rows.append((title, "failed", f["error"]))
        else:
            v = (f.get("loop_s") or {}).get("median")
            rows.append((title, f"{v:.3f} s" if v is not None else "—", f"{f.get('repetitions')} repetitions"))
    loops = ((doc.get("peers") or {}).get("big_buffer") or {}).get("loops") or {}
    for e in loops.values():
        if e.get("status") == "ok":
            t = e.get("loop_s") or {}
            rows.append((e.get("title", "?"), f"{t.get('median', 0):.3f} s", f"{len(e.get('trials_s') or [])} trials"))
        else:
            rows.append((e.get("title", "?"), e.get("status", "?"), e.get("reason", "")))
    if not rows:
        return []
    out = ["", "Big-buffer loop (10 × 60 % of free memory, a 1 ms kernel on each buffer, dropped/freed behind it; "
           "timed from the first allocation to the stream drained; median):", "",
           "| loop | time | |", "|---|---|---|"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return out


def targets_markdown():
    """Every judged target as a markdown table (README.md's "Judged targets" block, checked by
    tests/scripts/readme_targets_test.py): the entries of a run that measured nothing, so each row
    says its target as bench.md does."""
    figures = {}
    rows = [("ratios", r.key, ratio_entry(r, figures)) for r in RATIOS] + \
           [("absolute", a.key, absolute_entry(a, figures)) for a in ABSOLUTES]
    rows += [(section, key + PROCESS_SUFFIX, dict(e, title=f"{e['title']}, in each of 3 processes of its own "
                                                       "(scripts/bench)"))
             for section, key, e in rows if key in PROCESS_ROW_KEYS]
    lines = ["| figure | target | key |", "|---|---|---|"]
    for _, key, e in rows:
        if not e.get("target") or e["status"] == "info":
            continue
        target = e["target"]
        if e.get("yardstick"):
            y = e["yardstick"]
            target = f"≤ {y['fraction']:g} × {y['bench']} (separately timed raw launch)"
        else:
            target = target_text(target, e.get("unit", "x" if e.get("metric") != "time_ns" else ""))
        lines.append(f"| {e['title']} | {target} | `{key}` |")
    return "\n".join(lines) + "\n"


def main():
    if sys.argv[1:] == ["--targets-md"]:
        sys.stdout.write(targets_markdown())
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="bench_report.py --targets-md prints every judged target as a markdown "
                                        "table (README.md's) and exits.")
    ap.add_argument("--bench", required=True, help="tandem_bench --benchmark_out JSON")
    ap.add_argument("--peers", help="scripts/peers.py output (optional)")
    ap.add_argument("--host-bench", help="the same benchmarks on the host-only backend (optional)")
    ap.add_argument("--process-bench", action="append", default=[], metavar="FILE",
                    help="the launch benchmarks alone, from a process of their own (repeatable; scripts/bench "
                         "passes 3): each judged launch row is judged again in every one (<key>_processes)")
    ap.add_argument("--out", required=True, help="bench.json to write")
    ap.add_argument("--md", help="bench.md to write")
    ap.add_argument("--git", help="git revision (default: $TANDEM_GIT_REV, git rev-parse, the binary's)")
    ap.add_argument("--bench-rc", type=int, help="tandem_bench's exit status (non-zero: leak at the end)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when a benchmark failed or leaked, or a judged target missed or is absent")
    args = ap.parse_args()
    try:
        doc = build(args.bench, args.peers, args.git, args.bench_rc, args.host_bench, args.process_bench)
    except (OSError, ValueError, KeyError) as ex:
        print(f"bench_report: {ex}", file=sys.stderr)
        return 2
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(markdown(doc))
    verdict = failed_line(doc)
    if verdict:
        print(f"bench_report: {verdict} (see {args.md or args.out})", file=sys.stderr)
    return 1 if args.strict and verdict else 0


if __name__ == "__main__":
    sys.exit(main())
