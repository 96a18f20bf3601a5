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
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gbench_json  # noqa: E402
from bench_markdown import failed_line, markdown, targets_markdown  # noqa: E402
from bench_rows import (ABSOLUTES, HOST, PROCESS_ROW_KEYS, PROCESS_SUFFIX, RATIOS, absolute_entry,  # noqa: E402
                        clean, figure_entry, ratio_entry)

FORMAT = "tandem.bench/1"

# The judged launch rows measured again in processes of their own (--process-bench): bench_rows.py's
# PROCESS_ROW_KEYS, each judged in every process against that process's own target.


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
