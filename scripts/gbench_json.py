# SPDX-License-Identifier: Apache-2.0
"""Google Benchmark JSON (--benchmark_format=json / --benchmark_out) as one
figure per benchmark: the median over its repetitions, their coefficient of
variation (the measured noise), the worst repetition, and any error.

Used by scripts/bench_report.py and scripts/compare. Python 3 stdlib only.

A benchmark's key is its run name without Google Benchmark's own suffixes
("BM_RawLaunchThreads/4/iterations:1/manual_time" -> "BM_RawLaunchThreads/4"),
so keys stay stable when iteration counts or timing modes change.
"""

import json
import math
import re
import statistics

# Parts of a run name that Google Benchmark adds, not the benchmark's own arguments.
_SUFFIX = re.compile(r"^(iterations|repeats|min_time|min_warmup_time|threads):|^(real_time|manual_time|process_time)$")
# Keys of a run entry that are not user counters.
_STANDARD = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
    "aggregate_unit", "error_occurred", "error_message", "label", "skipped", "skip_message",
}
_NS_PER = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

TIME = "time"  # the metric name of a run's real (or manual) time per iteration, in ns


def key_of(run_name):
    return "/".join(p for p in run_name.split("/") if not _SUFFIX.match(p))


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class Figure:
    """One benchmark: its repetitions' metrics (time in ns, and counters)."""

    def __init__(self, key):
        self.key = key
        self.runs = []        # one dict metric -> value per repetition
        self.aggregates = {}  # aggregate name -> dict metric -> value (when only aggregates were written)
        self.error = None
        self.label = ""

    def metrics(self):
        names = set()
        for r in self.runs:
            names.update(r)
        for a in self.aggregates.values():
            names.update(a)
        return sorted(names)

    def values(self, metric):
        return [r[metric] for r in self.runs if _finite(r.get(metric))]

    def median(self, metric=TIME):
        v = self.values(metric)
        if v:
            return statistics.median(v)
        x = self.aggregates.get("median", {}).get(metric)
        return x if _finite(x) else None

    def worst(self, metric, higher_is_worse=True):
        v = self.values(metric)
        if v:
            return max(v) if higher_is_worse else min(v)
        return self.median(metric)

    def cv(self, metric=TIME):
        """Relative noise of the metric over the repetitions; None when unmeasured."""
        v = self.values(metric)
        if len(v) >= 2:
            m = statistics.mean(v)
            return statistics.stdev(v) / abs(m) if m else None
        mean = self.aggregates.get("mean", {}).get(metric)
        sd = self.aggregates.get("stddev", {}).get(metric)
        if _finite(mean) and _finite(sd) and mean:
            return sd / abs(mean)
        return None

    def repetitions(self):
        return len(self.runs)


def load(path):
    """Returns (context dict, {key: Figure}) in the file's order."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "benchmarks" not in doc:
        raise ValueError(f"{path}: not Google Benchmark JSON (no 'benchmarks')")
    figures = {}
    for b in doc["benchmarks"]:
        key = key_of(b.get("run_name") or b.get("name", "?"))
        fig = figures.setdefault(key, Figure(key))
        if b.get("error_occurred"):
            fig.error = b.get("error_message") or "error"
            continue
        if b.get("label"):
            fig.label = b["label"]
        scale = _NS_PER.get(b.get("time_unit", "ns"), 1.0)
        m = {TIME: b["real_time"] * scale} if _finite(b.get("real_time")) else {}
        for k, v in b.items():
            if k not in _STANDARD and _finite(v):
                m[k] = float(v)
        if b.get("run_type") == "aggregate":
            name = b.get("aggregate_name", "")
            if name == "cv" or b.get("aggregate_unit") == "percentage":
                continue  # recomputed from mean and stddev
            fig.aggregates[name] = m
        else:
            fig.runs.append(m)
    return doc.get("context", {}), figures
