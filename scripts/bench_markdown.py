# SPDX-License-Identifier: Apache-2.0
"""bench_markdown.py — bench.md from a bench.json document (scripts/bench_report.py
writes both), and README.md's table of judged targets (--targets-md). Python 3
stdlib only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rows import ABSOLUTES, PROCESS_ROW_KEYS, PROCESS_SUFFIX, RATIOS, absolute_entry, ratio_entry  # noqa: E402


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

