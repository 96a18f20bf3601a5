#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""plant.py IN.bench.json OUT.bench.json [--factor 1.10] — a bench.json whose
tracked launches are FACTOR slower, made from a real one until a run of a
-DTANDEM_PLANT_LAUNCH_SLOWDOWN=ON build exists (README.md here).

Every figure of a launch through tandem::launch or kernels::launch is
scaled as a uniform slowdown of the tracked launch would scale it:
- launch rows (tracked / raw time: paired, separate, via the catalog): the
  ratio and the tracked time x FACTOR;
- thread rows (tracked / raw launches/s, idle and loaded, paired and
  separate): the ratio and the tracked rate / FACTOR;
- loaded against empty (both sides tracked launches): both times x FACTOR,
  the ratio unchanged; the host-only own-path rows likewise;
- the per-benchmark figures of the tracked launch benchmarks likewise.
Left as they are: raw driver figures, the round trip (a launch is about a
quarter of it), allocation, graphs, memory, Tile bandwidth, sustained load.
Statuses are judged again. Python 3 stdlib only.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import bench_report  # noqa: E402

LAUNCH = re.compile(r"^launch_(simt|tile)(_paired|_catalog)?$")
THREADS = re.compile(r"^threads_\d+(_loaded)?(_paired)?$")
BOTH_TRACKED = re.compile(r"^(own_)?loaded_vs_empty_(simt|tile)(_separate)?$")
TIME_FIGURES = re.compile(r"^(host:)?BM_(Tracked|Catalog)(Simt|Tile)Launch(Loaded)?(/.*)?$")
PAIRED_TIME = re.compile(r"^(host:)?BM_Paired(Simt|Tile)Launch(Loaded)?$")
RATE_FIGURES = re.compile(r"^BM_(TrackedLaunchThreads|PairedLaunchThreads)(Loaded)?/\d+$")


def scale_stats(stats, k):
    for x in ("median", "min", "max"):
        if isinstance(stats.get(x), (int, float)):
            stats[x] *= k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--factor", type=float, default=1.10)
    a = ap.parse_args()
    f = a.factor
    with open(a.inp, encoding="utf-8") as fh:
        doc = json.load(fh)
    for key, e in doc["ratios"].items():
        if e.get("value") is None:
            continue
        if LAUNCH.match(key):
            e["value"] *= f
            e["tracked_value"] *= f
        elif THREADS.match(key):
            e["value"] /= f
            e["tracked_value"] /= f
        elif BOTH_TRACKED.match(key):
            e["tracked_value"] *= f
            e["raw_value"] *= f
        else:
            continue
        op, target = (e.get("target") or " ").split(" ") if e.get("target") else (None, None)
        e["status"] = bench_report.judge(e["value"], op, float(target) if target else None)
    for name, fig in doc["figures"].items():
        if TIME_FIGURES.match(name):
            scale_stats(fig.get("time_ns") or {}, f)
        elif PAIRED_TIME.match(name):
            for c in ("tracked_ns", "loaded_ns", "empty_ns"):
                scale_stats(fig.get(c) or {}, f)
            if "Loaded" not in name:
                scale_stats(fig.get("ratio") or {}, f)
        elif RATE_FIGURES.match(name):
            for c in ("launches_per_s", "tracked_launches_per_s"):
                scale_stats(fig.get(c) or {}, 1 / f)
            if name.startswith("BM_Paired"):
                scale_stats(fig.get("ratio") or {}, 1 / f)
    judged = [e["status"] for s in ("ratios", "absolute") for e in doc[s].values() if e["status"] != "info"]
    doc["summary"].update({s: judged.count(s) for s in ("pass", "miss", "absent")})
    for s in ("miss", "absent"):
        doc["summary"][f"{s}_keys"] = [k for sec in ("ratios", "absolute") for k, e in doc[sec].items()
                                       if e["status"] == s]
    doc["planted"] = {"synthetic": True, "from": os.path.basename(a.inp), "tracked_launch_factor": f,
                      "how": "tests/scripts/compare_fixtures/plant.py"}
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
