# SPDX-License-Identifier: Apache-2.0
"""bench_rows.py — the judged rows of scripts/bench_report.py: what each ratio and
absolute figure of bench.json is (the benchmarks it reads, its target), and how a
run's figures judge it (pass, miss, absent, info). scripts/bench_markdown.py
renders them; bench_report.py builds bench.json from them. Python 3 stdlib only.
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gbench_json import TIME  # noqa: E402


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
