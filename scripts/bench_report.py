#!/usr/bin/env python3
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

Python 3 stdlib only. Exit status: 0 written; 1 written, but with --strict a
benchmark failed or leaked; 2 bad input (nothing written).
"""

import argparse
import json
import math
import os
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
    Ratio("launch_simt_catalog", "SIMT launch via kernels::launch (checks + packing per call)",
          "BM_CatalogSimtLaunch", "BM_RawLaunch"),
    Ratio("launch_tile_catalog", "Tile launch via kernels::launch (checks + packing per call)",
          "BM_CatalogTileLaunch", "BM_RawTileLaunch"),
    Paired("round_trip_p50", "launch -> memory freed vs raw launch -> event complete, median (paired)",
           "BM_PairedRoundTrip", "raw_p50_us", "tracked_p50_us", "p50_us", "<=", 2.0),
    Ratio("round_trip_p50_separate", "launch -> memory freed vs raw launch -> event complete: separate medians",
          "BM_TrackedRoundTrip", "BM_RawRoundTrip", "p50_us"),
    Paired("alloc_free", "allocate + free, 1 MiB, vs cuMemAllocAsync + cuMemFreeAsync (paired)",
           "BM_PairedAllocFree", "raw_ns", "tracked_ns", "time_ns", "<=", 1.25),
    Ratio("alloc_free_separate", "allocate + free, 1 MiB: separate medians",
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
]

ABSOLUTES = [
    Absolute("round_trip_p99_us", "launch -> memory freed, p99", "BM_TrackedRoundTrip", "p99_us", "us", "<=", 100),
    Absolute("drop_p50_ns", "drop with work in flight, median (calling thread)", "BM_DropInFlight", "p50_ns", "ns",
             "<=", 200),
    Absolute("drop_max_ns", "drop with work in flight, max", "BM_DropInFlight", "max_ns", "ns", "<=", 50000,
             worst=True),
    Absolute("uniqueness_ns", "uniqueness check", "BM_UniquenessCheck", TIME, "ns", "<=", 50),
    Absolute("tensor_buffer_ns", "tensor <-> buffer round trip", "BM_TensorBufferRoundTrip", TIME, "ns", "<=", 200),
    Absolute("per_allocation_bytes", "tracker memory per allocation", "BM_TrackerFootprint", "per_allocation_bytes",
             "B", "<=", 256),
    Absolute("per_lease_bytes", "tracker memory per lease", "BM_TrackerFootprint", "per_lease_bytes", "B", "<=", 64),
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
]


def judge(value, op, target):
    if op is None:
        return "info"
    if value is None:
        return "absent"
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
    else:
        value, tv, wv = f.median(r.ratio_counter), f.median(r.tracked_counter), f.median(r.raw_counter)
        if value is None:
            why = f.label or f"{r.bench} reports no {r.ratio_counter}"
    e.update({"tracked_value": clean(tv), "raw_value": clean(wv), "value": clean(value),
              "noise": clean(f.cv(r.ratio_counter)) if value is not None else None,
              "status": judge(value, r.op, r.target)})
    if why:
        e["why"] = why
    return e


def ratio_entry(r, figures):
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
    value = tv / wv if tv is not None and wv else None
    if value is None and not why:
        why.append(f"no {e['metric']} in {r.tracked} or {r.raw}")
    e.update({"tracked_value": clean(tv), "raw_value": clean(wv), "value": clean(value),
              "noise": clean(noise_of(t.cv(r.metric), w.cv(r.metric))) if value is not None else None,
              "status": judge(value, r.op, r.target)})
    if why:
        e["why"] = "; ".join(why)
    return e


def absolute_entry(a, figures):
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


def git_revision(explicit, context):
    if explicit:
        return explicit
    if os.environ.get("TANDEM_GIT_REV"):
        return os.environ["TANDEM_GIT_REV"]
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        rev = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if rev:
            return rev
    except (OSError, subprocess.SubprocessError):
        pass
    return context.get("tandem_git", "unknown")


def build(bench_path, peers_path, git, bench_rc, host_path=None):
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
    ratios = {r.key: ratio_entry(r, figures) for r in RATIOS}
    absolute = {a.key: absolute_entry(a, figures) for a in ABSOLUTES}
    judged = [e["status"] for e in list(ratios.values()) + list(absolute.values()) if e["status"] != "info"]
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
                    "peers": os.path.basename(peers_path) if peers is not None else None},
        "summary": {s: judged.count(s) for s in ("pass", "miss", "absent")},
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
    if metric == "launches_per_s":
        return f"{value / 1000:.0f} k/s"
    return f"{value:.4g}"


def fmt_abs(e):
    v, u = e["value"], e["unit"]
    if v is None:
        return "—"
    if u == "ns":
        return fmt(v, "time_ns")
    if u == "us":
        return f"{v:.1f} µs"
    if u == "x":
        return f"{v:.3f}×"
    return f"{v:.0f} {u}"


def target_text(t, unit=""):
    if not t:
        return ""
    op, value = t.split()
    sym = "≤" if op == "<=" else "≥"
    if unit == "ns" and float(value) >= 1000:
        return f"{sym} {float(value) / 1000:g} µs"
    suffix = {"ns": " ns", "us": " µs", "B": " B", "x": "×"}.get(unit, "×" if not unit else "")
    return f"{sym} {value}{suffix}"


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
    lines += ["| figure | raw | tandem | ratio | target | |", "|---|---|---|---|---|---|"]
    for e in doc["ratios"].values():
        ratio = f"{e['value']:.3f}×" if e["value"] is not None else "—"
        status = e["status"] if e["status"] != "info" else ""
        lines.append(f"| {e['title']} | {fmt(e['raw_value'], e['metric'])} | {fmt(e['tracked_value'], e['metric'])} "
                     f"| {ratio} | {target_text(e['target'])} | {status} |")
    lines += ["", "| figure | value | target | |", "|---|---|---|---|"]
    for e in doc["absolute"].values():
        status = e["status"] if e["status"] != "info" else ""
        lines.append(f"| {e['title']} | {fmt_abs(e)} | {target_text(e['target'], e['unit'])} | {status} |")
    lines += peers_markdown(doc)
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


def peers_markdown(doc):
    """tandem beside the Python launchers, each against the raw driver launch of its own process."""
    p = doc.get("peers")
    rows = []
    launch = doc["ratios"].get("launch_simt", {})
    if launch.get("raw_value") is not None:
        rows.append(("raw `cuLaunchKernel` (C++, tandem_bench)", launch["raw_value"] / 1000, 1.0))
    if launch.get("tracked_value") is not None:
        rows.append(("tandem tracked SIMT launch (C++)", launch["tracked_value"] / 1000, launch["value"]))
    tile = doc["ratios"].get("launch_tile", {})
    if tile.get("tracked_value") is not None:
        rows.append(("tandem tracked Tile launch (C++)", tile["tracked_value"] / 1000, tile["value"]))
    notes = []
    if p:
        for name, e in p.get("peers", {}).items():
            if e.get("status") == "ok":
                rows.append((e.get("title", name), e["per_launch_us"]["median"], e.get("ratio_vs_raw")))
            else:
                notes.append(f"- {e.get('title', name)}: {e.get('status')} ({e.get('reason', '')})")
    if not rows and not notes:
        return []
    out = ["", "Launch cost beside peers (each against the raw driver launch measured in its own process; "
           "peers: scripts/peers.py, one empty kernel or a one-element op, submit + drain):", "",
           "| launcher | per launch | vs raw driver |", "|---|---|---|"]
    for title, us, ratio in rows:
        out.append(f"| {title} | {us:.2f} µs | {f'{ratio:.2f}×' if ratio is not None else '—'} |")
    if notes:
        out += ["", "Peers not measured:", ""] + notes
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="tandem_bench --benchmark_out JSON")
    ap.add_argument("--peers", help="scripts/peers.py output (optional)")
    ap.add_argument("--host-bench", help="the same benchmarks on the host-only backend (optional)")
    ap.add_argument("--out", required=True, help="bench.json to write")
    ap.add_argument("--md", help="bench.md to write")
    ap.add_argument("--git", help="git revision (default: $TANDEM_GIT_REV, git rev-parse, the binary's)")
    ap.add_argument("--bench-rc", type=int, help="tandem_bench's exit status (non-zero: leak at the end)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a benchmark failed or leaked")
    args = ap.parse_args()
    try:
        doc = build(args.bench, args.peers, args.git, args.bench_rc, args.host_bench)
    except (OSError, ValueError, KeyError) as ex:
        print(f"bench_report: {ex}", file=sys.stderr)
        return 2
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(markdown(doc))
    if args.strict and (doc["failures"] or doc["leaks"]):
        print(f"bench_report: {len(doc['failures'])} benchmarks failed, {len(doc['leaks'])} leaks "
              f"(see {args.md or args.out})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
