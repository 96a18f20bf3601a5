#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/bench_report.py on Google Benchmark fixtures: the pairs, the targets, the
sustained-load and big-buffer rules, the figures that hold (no GPU needed).

    python3 tests/scripts/bench_report_test.py [TestClass ...]
"""

import json
import os
import subprocess
import sys
import unittest

from scripts_support import ROOT, ReportCase, SCRIPTS, compare, fixture, run


class BenchReportTest(ReportCase):

    def test_pairs_raw_and_tracked_from_one_run(self):
        doc, md, _ = self.report(fixture("gbench_base.json"))
        self.assertEqual(doc["format"], "tandem.bench/1")
        self.assertEqual(doc["git"], "fixture-rev")
        self.assertEqual(doc["device"]["name"], "NVIDIA H200")
        launch = doc["ratios"]["launch_simt"]
        self.assertAlmostEqual(launch["value"], 4300 / 4000)
        self.assertEqual(launch["status"], "info")  # separate medians: shown, not judged
        paired = doc["ratios"]["launch_simt_paired"]
        self.assertAlmostEqual(paired["value"], 1.05)  # the median of the per-run pair ratios
        self.assertEqual(paired["raw_value"], 4000)
        self.assertEqual(paired["tracked_value"], 4200)
        self.assertEqual(paired["status"], "pass")  # <= 1.10
        self.assertEqual(doc["ratios"]["launch_tile_paired"]["status"], "absent")
        rt = doc["ratios"]["round_trip_p50_separate"]
        self.assertAlmostEqual(rt["value"], 14.0 / 8.8)
        self.assertEqual(rt["status"], "info")  # judged on BM_PairedRoundTrip, absent from this fixture
        self.assertEqual(doc["ratios"]["round_trip_p50"]["status"], "absent")
        self.assertEqual(doc["ratios"]["alloc_free"]["status"], "absent")
        self.assertEqual(doc["absolute"]["round_trip_p99_us"]["value"], 22.0)
        self.assertEqual(doc["ratios"]["threads_4_paired"]["status"], "absent")  # no paired threads figure
        self.assertEqual(doc["absolute"]["per_lease_bytes"]["status"], "info")  # sizeof: judged by measurement
        self.assertIn("| SIMT launch, 1 read + 1 write view, future dropped (paired) |", md)
        self.assertEqual(doc["leaks"], [])

    @staticmethod
    def runs(name, times, iterations=20000, **counters):
        """Google Benchmark iteration entries of `name`, one per time; each counter is a list, one per run."""
        suffix = f"iterations:{iterations}/" + ("manual_time" if iterations == 1 else "real_time")
        return [dict({"name": f"{name}/{suffix}", "run_name": f"{name}/{suffix}", "run_type": "iteration",
                      "repetitions": len(times), "repetition_index": i, "threads": 1, "iterations": iterations,
                      "real_time": t, "cpu_time": t, "time_unit": "ns"},
                     **{k: v[i] for k, v in counters.items()})
                for i, t in enumerate(times)]

    def write_bench(self, name, backend, entries):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"context": {"tandem_backend": backend}, "benchmarks": entries}, f)
        return path

    def test_host_bench_figures_join_under_their_prefix(self):
        # The host-only run's paired loaded/empty benchmark becomes the
        # own-path rows; the GPU run's figures of the same names stay as they were.
        host = self.write_bench("host.json", "host", self.runs(
            "BM_PairedSimtLaunchLoaded", [1e6, 1e6, 1e6], 1, ratio=[1.1, 1.2, 1.15],
            empty_ns=[200, 210, 190], loaded_ns=[230, 250, 220]))
        doc, md, _ = self.report(fixture("gbench_base.json"), "--host-bench", host)
        own = doc["ratios"]["own_loaded_vs_empty_simt"]
        self.assertAlmostEqual(own["value"], 1.15)
        self.assertEqual(own["raw_value"], 200)
        self.assertEqual(own["status"], "info")
        self.assertEqual(doc["ratios"]["own_loaded_vs_empty_tile"]["value"], None)
        self.assertAlmostEqual(doc["ratios"]["launch_simt"]["value"], 4300 / 4000)  # the GPU run's, not the host's
        self.assertEqual(doc["sources"]["host_benchmarks"], "host.json")
        self.assertIn("host-only backend: SIMT launch, loaded vs empty (paired)", md)

    def test_loaded_against_empty_is_judged_by_its_paired_benchmark(self):
        # The separate benchmarks disagree (1.5x) with the pairs (1.1x): the
        # pairs are judged, the separate medians only shown.
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedSimtLaunchLoaded", [1e6, 1e6, 1e6], 1, ratio=[1.1, 1.3, 1.05], empty_ns=[4000, 4100, 3900],
            loaded_ns=[4400, 5300, 4100], raw_ratio=[1.02, 1.2, 0.99], raw_empty_ns=[3500] * 3,
            raw_loaded_ns=[3600] * 3) + self.runs(
            "BM_PairedTileLaunchLoaded", [1e6, 1e6, 1e6], 1, ratio=[1.25, 1.3, 1.21], empty_ns=[4000] * 3,
            loaded_ns=[5000] * 3) + self.runs(
            "BM_TrackedSimtLaunchLoaded", [6000, 6000, 6000]) + self.runs("BM_TrackedSimtLaunch", [4000, 4000, 4000]))
        doc, _, _ = self.report(bench)
        simt, tile = doc["ratios"]["loaded_vs_empty_simt"], doc["ratios"]["loaded_vs_empty_tile"]
        self.assertAlmostEqual(simt["value"], 1.1)
        self.assertEqual((simt["raw_value"], simt["tracked_value"]), (4000, 4400))
        self.assertEqual(simt["status"], "pass")
        self.assertEqual(tile["status"], "miss")  # 1.25 > 1.2
        self.assertAlmostEqual(doc["ratios"]["raw_loaded_vs_empty"]["value"], 1.02)
        separate = doc["ratios"]["loaded_vs_empty_simt_separate"]
        self.assertAlmostEqual(separate["value"], 1.5)
        self.assertEqual(separate["status"], "info")

    def test_round_trip_and_allocation_are_judged_by_their_paired_benchmarks(self):
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedRoundTrip", [1e6, 1e6, 1e6], 1, ratio=[1.6, 2.2, 1.7], raw_p50_us=[10, 11, 9],
            tracked_p50_us=[16, 24, 15]) + self.runs(
            "BM_PairedAllocFree", [1e6, 1e6, 1e6], 1, ratio=[1.3, 1.26, 1.28], raw_ns=[650] * 3,
            tracked_ns=[830] * 3))
        doc, md, _ = self.report(bench)
        rt, alloc = doc["ratios"]["round_trip_p50"], doc["ratios"]["alloc_free"]
        self.assertAlmostEqual(rt["value"], 1.7)
        self.assertEqual((rt["raw_value"], rt["tracked_value"]), (10, 16))
        self.assertEqual(rt["status"], "pass")
        self.assertAlmostEqual(alloc["value"], 1.28)
        self.assertEqual(alloc["status"], "miss")  # > 1.25
        self.assertIn("allocate + free, 1 MiB, vs cuMemAllocFromPoolAsync + cuMemFreeAsync from a pool with tandem's "
                      "settings (paired)", md)

    def test_a_paired_figure_with_no_pairs_is_absent_and_strict_fails(self):
        # The C++ median of an empty pair list reads 0: it must come out absent, never 0 (which passes
        # "<= 1.10"), and --strict must exit non-zero and name it.
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedSimtLaunch", [1e6, 1e6, 1e6], 1, ratio=[0, 0, 0], raw_ns=[0, 0, 0], tracked_ns=[0, 0, 0],
            pairs=[0, 0, 0]) + self.runs(
            "BM_PairedTileLaunch", [1e6, 1e6, 1e6], 1, ratio=[1.02, 0, 1.03], raw_ns=[4000, 0, 4000],
            tracked_ns=[4100, 0, 4100], pairs=[31, 0, 31]) + self.runs(
            "BM_PairedAllocFree", [1e6, 1e6, 1e6], 1, ratio=[0, 0, 0], raw_ns=[650] * 3, tracked_ns=[0] * 3)
            + self.runs("BM_TrackedSimtLaunch", [0, 0, 0]) + self.runs("BM_RawLaunch", [4000, 4000, 4000]))
        out, md = os.path.join(self.tmp.name, "bench.json"), os.path.join(self.tmp.name, "bench.md")
        r = run(os.path.join(SCRIPTS, "bench_report.py"), "--strict", "--bench", bench, "--out", out, "--md", md,
                "--git", "x")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        for key in ("launch_simt_paired", "launch_tile_paired", "alloc_free"):
            self.assertEqual(doc["ratios"][key]["status"], "absent", key)
            self.assertIsNone(doc["ratios"][key]["value"], key)
        self.assertIn("measured no pairs", doc["ratios"]["launch_simt_paired"]["why"])
        self.assertIn("1 of 3 repetitions", doc["ratios"]["launch_tile_paired"]["why"])
        self.assertIn("no pairs measured", doc["ratios"]["alloc_free"]["why"])  # no `pairs` counter, ratio 0
        self.assertIsNone(doc["ratios"]["launch_simt"]["value"])  # a tracked time of 0 is no ratio
        self.assertIn("launch_simt_paired", doc["summary"]["absent_keys"])
        with open(md, encoding="utf-8") as f:
            text = f.read()
        failed = [line for line in text.splitlines() if "FAILED:" in line]
        self.assertTrue(failed, text)
        self.assertIn("absent launch_simt_paired, launch_tile_paired", failed[0])
        self.assertIn("FAILED:", r.stderr)
        # Without --strict the report is written and the exit is 0.
        r = run(os.path.join(SCRIPTS, "bench_report.py"), "--bench", bench, "--out", out, "--git", "x")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_strict_fails_on_a_missed_target(self):
        def strict(ratio):
            bench = self.write_bench("gpu.json", "cuda", self.runs(
                "BM_PairedSimtLaunch", [1e6] * 3, 1, ratio=[ratio] * 3, raw_ns=[4000] * 3, tracked_ns=[4400] * 3,
                pairs=[31] * 3))
            out = os.path.join(self.tmp.name, "bench.json")
            r = run(os.path.join(SCRIPTS, "bench_report.py"), "--strict", "--bench", bench, "--out", out,
                    "--git", "x")
            with open(out, encoding="utf-8") as f:
                return r, json.load(f)
        r, doc = strict(1.2)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("missed launch_simt_paired", r.stderr)
        self.assertEqual(doc["ratios"]["launch_simt_paired"]["status"], "miss")
        # Every other judged target is absent from this one-benchmark file: still a failure.
        self.assertIn("absent", r.stderr)

    def test_identical_bench_json_compares_clean_and_a_leak_shows(self):
        _, _, out = self.report(fixture("gbench_base.json"))
        r = compare(out, out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        leak = os.path.join(self.tmp.name, "leak.json")
        r = run(os.path.join(SCRIPTS, "bench_report.py"), "--bench", fixture("gbench_leak.json"), "--out", leak,
                "--git", "x")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = compare(out, leak)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)

    def test_regressed_ratio_fails_compare(self):
        _, _, base = self.report(fixture("gbench_base.json"))
        new = os.path.join(self.tmp.name, "new.json")
        r = run(os.path.join(SCRIPTS, "bench_report.py"), "--bench", fixture("gbench_regressed.json"), "--out", new,
                "--git", "x")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = compare(base, new)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("ratios.launch_simt_paired", r.stdout)
        self.assertIn("target pass -> miss", r.stdout)


class SustainedReportTest(ReportCase):
    """Issue 21's sustained-load and big-buffer targets (fixtures gbench_sustained.json, peers_big_buffer.json):
    K = 1 meets every rule in every repetition; K = 2 misses each rule in one repetition only (its medians would
    pass); K = 4 lacks the latency in one repetition and the held bytes in all; K = 8 has 3 repetitions of 5."""

    def sustained(self, *extra):
        return self.report(fixture("gbench_sustained.json"), *extra)

    def test_every_repetition_meeting_every_rule_passes(self):
        doc, _, _ = self.sustained("--peers", fixture("peers_big_buffer.json"))
        r, a = doc["ratios"], doc["absolute"]
        paired = r["sustained_1_paired"]
        self.assertEqual(paired["status"], "pass")
        self.assertAlmostEqual(paired["value"], 0.92)  # the worst pair is judged
        self.assertAlmostEqual(paired["median_ratio"], 0.95)
        self.assertEqual(paired["per_repetition"], [0.95, 0.93, 0.97, 0.92, 0.96])
        self.assertEqual(a["sustained_1_retire_p99_us"]["value"], 1000)
        self.assertEqual(a["sustained_1_retire_max_us"]["value"], 7000)
        self.assertAlmostEqual(a["sustained_1_spread"]["value"], 97e3 / 101e3)
        self.assertAlmostEqual(a["sustained_1_held_bytes"]["value"], 30000 / 16384)
        for key in ("retire_p99_us", "retire_max_us", "spread", "held_bytes"):
            self.assertEqual(a[f"sustained_1_{key}"]["status"], "pass", key)
        self.assertEqual(r["sustained_1_separate"]["status"], "info")  # separate medians: shown, not judged

    def test_one_bad_repetition_misses_though_the_medians_pass(self):
        doc, md, _ = self.sustained("--peers", fixture("peers_big_buffer.json"))
        r, a = doc["ratios"], doc["absolute"]
        self.assertEqual(a["sustained_2_retire_p99_us"]["value"], 6500)
        self.assertEqual(a["sustained_2_retire_p99_us"]["status"], "miss")
        self.assertEqual(a["sustained_2_retire_max_us"]["status"], "pass")
        self.assertAlmostEqual(r["sustained_2_paired"]["value"], 0.85)
        self.assertAlmostEqual(r["sustained_2_paired"]["median_ratio"], 0.94)
        self.assertEqual(r["sustained_2_paired"]["status"], "miss")
        self.assertAlmostEqual(a["sustained_2_spread"]["value"], 0.75)
        self.assertEqual(a["sustained_2_spread"]["status"], "miss")
        # The paired raw loop's own spread is shown beside it, never judged: here the raw loop's slow
        # repetition (161 k against 224 k) says the machine moved too.
        self.assertAlmostEqual(a["sustained_2_spread"]["raw_value"], 161290.32258064515 / 223529.41176470587)
        self.assertEqual(len(a["sustained_2_spread"]["raw_per_repetition"]), 5)
        self.assertIn("| 0.750× (raw loop 0.722×) | ≥ 0.8× | miss |", md)
        self.assertAlmostEqual(a["sustained_2_held_bytes"]["value"], 3.0)
        self.assertEqual(a["sustained_2_held_bytes"]["status"], "miss")
        self.assertIn("| sustained load, 2 threads: submit -> retired p99 (worst of 5) | 6.50 ms | ≤ 5 ms | miss |", md)
        self.assertIn("0.850× (median 0.940×)", md)

    def test_an_absent_figure_is_absent_never_a_pass(self):
        doc, md, _ = self.sustained("--peers", fixture("peers_big_buffer.json"))
        r, a = doc["ratios"], doc["absolute"]
        for key in ("sustained_4_retire_p99_us", "sustained_4_retire_max_us", "sustained_4_held_bytes"):
            self.assertEqual(a[key]["status"], "absent", key)
            self.assertIsNone(a[key]["value"], key)
        self.assertIn("4 of 5 repetitions of BM_SustainedLoad/4", a["sustained_4_retire_p99_us"]["why"])
        self.assertIn("0 of 5 repetitions", a["sustained_4_held_bytes"]["why"])
        self.assertEqual(a["sustained_4_spread"]["status"], "pass")  # the figures it does have are judged
        # 3 repetitions where 5 are needed: every rule absent, though each of the 3 would pass.
        self.assertEqual(r["sustained_8_paired"]["status"], "absent")
        for key in ("retire_p99_us", "retire_max_us", "spread", "held_bytes"):
            self.assertEqual(a[f"sustained_8_{key}"]["status"], "absent", key)
        self.assertIn("3 of 3 repetitions of BM_SustainedLoad/8 report it, 5 needed", md)
        judged = [e["status"] for sec in ("ratios", "absolute") for e in doc[sec].values() if e["status"] != "info"]
        self.assertEqual(doc["summary"]["absent"], judged.count("absent"))

    def test_without_the_raw_pair_the_ratio_is_absent(self):
        # A sim or host-only run: no raw driver, so no pair; the label says why.
        with open(fixture("gbench_sustained.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:
            if b["run_name"].startswith("BM_SustainedLoad/1/"):
                for c in ("ratio", "raw_iterations_per_s", "raw_first"):
                    b.pop(c)
                b["label"] = "no raw pair: the raw driver baseline needs the cuda backend"
        out, _, _ = self.report(self.write("sim.json", doc))
        paired = out["ratios"]["sustained_1_paired"]
        self.assertEqual(paired["status"], "absent")
        self.assertIn("no raw pair", paired["why"])
        self.assertEqual(out["absolute"]["sustained_1_retire_p99_us"]["status"], "pass")

    def test_big_buffer_loop_against_cuda_core(self):
        doc, md, _ = self.sustained("--peers", fixture("peers_big_buffer.json"))
        r, a = doc["ratios"], doc["absolute"]
        self.assertEqual(a["big_buffer_passes"]["status"], "pass")
        self.assertAlmostEqual(a["big_buffer_passes"]["value"], 0.25)
        core = r["big_buffer_vs_cuda_core"]
        self.assertAlmostEqual(core["value"], 0.25 / 0.2)
        self.assertEqual(core["status"], "pass")  # <= 1.5
        self.assertEqual(r["big_buffer_vs_torch"]["status"], "info")
        self.assertAlmostEqual(r["big_buffer_vs_raw"]["value"], 0.25 / 0.17)
        self.assertIn("| cuda.core: Device.allocate / launch / Buffer.close(stream) | 0.200 s | 3 trials |", md)

    def test_big_buffer_slower_than_cuda_core_misses(self):
        with open(fixture("peers_big_buffer.json"), encoding="utf-8") as f:
            peers = json.load(f)
        peers["big_buffer"]["loops"]["cuda_core"]["loop_s"]["median"] = 0.1
        doc, _, _ = self.sustained("--peers", self.write("peers.json", peers))
        self.assertAlmostEqual(doc["ratios"]["big_buffer_vs_cuda_core"]["value"], 2.5)
        self.assertEqual(doc["ratios"]["big_buffer_vs_cuda_core"]["status"], "miss")

    def test_big_buffer_without_peers_is_information_marked_not_judged(self):
        doc, md, _ = self.sustained()
        core = doc["ratios"]["big_buffer_vs_cuda_core"]
        self.assertEqual(core["status"], "info")
        self.assertIsNone(core["value"])
        self.assertIn("not judged", core["not_judged"])
        self.assertIn("not judged: no peers.json", md)
        self.assertEqual(doc["absolute"]["big_buffer_passes"]["status"], "pass")  # judged on its own

    def test_failed_big_buffer_loop_is_a_miss_with_its_error(self):
        with open(fixture("gbench_sustained.json"), encoding="utf-8") as f:
            doc = json.load(f)
        error = ("big-buffer loop failed at iteration 2 of 10 (80.20 GiB each, 133.70 GiB free before the loop): "
                 "out_of_memory: allocating 86114467840 bytes: 34734080 of 150109880320 bytes free")
        for b in doc["benchmarks"]:
            if b["run_name"].startswith("BM_BigBufferLoop/") and b["repetition_index"] == 1:
                b.update(error_occurred=True, error_message=error)
        out, md, _ = self.report(self.write("oom.json", doc), "--peers", fixture("peers_big_buffer.json"))
        passes = out["absolute"]["big_buffer_passes"]
        self.assertEqual(passes["status"], "miss")
        self.assertIn("out_of_memory", passes["why"])
        self.assertEqual(out["ratios"]["big_buffer_vs_cuda_core"]["status"], "absent")  # no time to compare
        self.assertIn({"benchmark": "BM_BigBufferLoop", "error": error}, out["failures"])
        self.assertIn("| tandem (C++) | failed |", md)

    def test_big_buffer_not_run_is_absent(self):
        with open(fixture("gbench_sustained.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:
            if b["run_name"].startswith("BM_BigBufferLoop/"):
                b.update(error_occurred=True, error_message="no device for the benchmarks: no CUDA driver")
        out, _, _ = self.report(self.write("nodev.json", doc))
        self.assertEqual(out["absolute"]["big_buffer_passes"]["status"], "absent")
        doc["benchmarks"] = [b for b in doc["benchmarks"] if not b["run_name"].startswith("BM_BigBufferLoop/")]
        out, _, _ = self.report(self.write("gone.json", doc))
        self.assertEqual(out["absolute"]["big_buffer_passes"]["status"], "absent")
        self.assertIn("not in this run", out["absolute"]["big_buffer_passes"]["why"])


class FiguresThatHoldTest(ReportCase):
    """Issue 23's rows: launch overhead against the separate raw launch, the measured host bytes, the fair
    allocation baseline, the peer table from tandem's paired figures."""

    runs = staticmethod(BenchReportTest.runs)
    write_bench = BenchReportTest.write_bench

    def test_the_readme_states_every_judged_target(self):
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_report.py"), "--targets-md"],
                             capture_output=True, text=True, check=True).stdout
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        begin, end = "<!-- judged-targets:begin -->\n", "<!-- judged-targets:end -->"
        self.assertIn(begin, readme)
        block = readme.split(begin, 1)[1].split(end, 1)[0]
        self.assertEqual(block, out, "README.md's judged targets differ from bench_report.py's rows: "
                         "paste `scripts/bench_report.py --targets-md` between the markers")
        self.assertIn("`launch_simt_paired`", out)
        self.assertIn("`host_bytes_per_submission`", out)

    def test_launch_overhead_is_judged_against_a_tenth_of_the_separate_raw_launch(self):
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedSimtLaunch", [1e6] * 3, 1, ratio=[1.07] * 3, raw_ns=[4400] * 3, tracked_ns=[4710] * 3,
            overhead_ns=[300, 320, 310]) + self.runs(
            "BM_PairedTileLaunch", [1e6] * 3, 1, ratio=[1.09] * 3, raw_ns=[4090] * 3, tracked_ns=[4480] * 3,
            overhead_ns=[390, 400, 410]) + self.runs(
            "BM_RawLaunch", [3300, 3400, 3500]) + self.runs("BM_RawTileLaunch", [3400, 3400, 3400]))
        doc, md, _ = self.report(bench)
        simt, tile = doc["absolute"]["launch_simt_overhead"], doc["absolute"]["launch_tile_overhead"]
        self.assertEqual(simt["value"], 310)  # the median of the pairs' overheads
        self.assertEqual(simt["yardstick"], {"bench": "BM_RawLaunch", "raw_ns": 3400, "fraction": 0.1})
        self.assertEqual(simt["target"], "<= 340.0")
        self.assertEqual(simt["status"], "pass")
        self.assertEqual(tile["status"], "miss")  # 400 > 0.1 x 3400
        self.assertEqual(doc["ratios"]["launch_tile_paired"]["status"], "pass")  # the ratio alone would pass
        # kernels::launch paired is absent from this run: absent, never a pass
        cat = doc["absolute"]["launch_simt_catalog_overhead"]
        self.assertEqual(cat["status"], "absent")
        self.assertIn("BM_PairedCatalogSimtLaunch not in this run", cat["why"])
        self.assertIn("| SIMT launch: overhead per launch, tracked - raw (paired)", md)
        self.assertIn("| 310.0 ns | ≤ 340.0 ns | pass |", md)

    def process_bench(self, name, simt_ratio, tile_overhead, raw_tile_ns):
        """The launch benchmarks alone, as one of scripts/bench's processes writes them."""
        return self.write_bench(name, "cuda", self.runs(
            "BM_PairedSimtLaunch", [1e6] * 3, 1, ratio=[simt_ratio] * 3, raw_ns=[3000] * 3,
            tracked_ns=[3000 * simt_ratio] * 3, overhead_ns=[200] * 3) + self.runs(
            "BM_PairedTileLaunch", [1e6] * 3, 1, ratio=[1.05] * 3, raw_ns=[3000] * 3, tracked_ns=[3150] * 3,
            overhead_ns=[tile_overhead] * 3) + self.runs(
            "BM_PairedCatalogSimtLaunch", [1e6] * 3, 1, ratio=[1.07] * 3, raw_ns=[3000] * 3, tracked_ns=[3210] * 3,
            overhead_ns=[210] * 3) + self.runs(
            "BM_PairedCatalogTileLaunch", [1e6] * 3, 1, ratio=[1.07] * 3, raw_ns=[3000] * 3, tracked_ns=[3210] * 3,
            overhead_ns=[220] * 3) + self.runs("BM_RawLaunch", [3000] * 3) + self.runs(
            "BM_RawTileLaunch", [raw_tile_ns] * 3))

    def test_each_launch_row_is_judged_in_every_process_against_that_processs_own_raw_launch(self):
        # Process 2's Tile overhead (280 ns) passes against 0.1 x its 3000 ns raw launch; process 3's smaller
        # one (250 ns) misses against its own faster raw launch (2400 ns: <= 240 ns).
        procs = [self.process_bench("p1.json", 1.06, 200, 3000), self.process_bench("p2.json", 1.09, 280, 3000),
                 self.process_bench("p3.json", 1.08, 250, 2400)]
        extra = [a for p in procs for a in ("--process-bench", p)]
        doc, md, _ = self.report(fixture("gbench_base.json"), *extra)
        simt = doc["ratios"]["launch_simt_paired_processes"]
        self.assertEqual(simt["status"], "pass")
        self.assertAlmostEqual(simt["value"], 1.09)  # the worst process
        self.assertEqual([round(p["value"], 2) for p in simt["processes"]], [1.06, 1.09, 1.08])
        self.assertIn("process 2", simt["title"])
        tile = doc["absolute"]["launch_tile_overhead_processes"]
        self.assertEqual(tile["status"], "miss")
        self.assertEqual([p["status"] for p in tile["processes"]], ["pass", "pass", "miss"])
        self.assertEqual((tile["value"], tile["target"]), (250, "<= 240.0"))  # the worst against its own bound
        self.assertIn("launch_tile_overhead_processes", doc["summary"]["miss_keys"])
        self.assertEqual(doc["absolute"]["launch_tile_catalog_overhead_processes"]["status"], "pass")  # 220 <= 240
        self.assertEqual(doc["absolute"]["launch_simt_catalog_overhead_processes"]["status"], "pass")
        self.assertEqual(doc["sources"]["process_benchmarks"], ["p1.json", "p2.json", "p3.json"])
        self.assertIn("Launch rows in processes of their own (3 processes", md)
        self.assertIn("| 250.0 ns ≤ 240.0 ns miss |", md)

    def test_a_process_that_wrote_nothing_makes_its_rows_absent(self):
        procs = [self.process_bench("p1.json", 1.06, 200, 3000), os.path.join(self.tmp.name, "never-written.json")]
        doc, md, _ = self.report(fixture("gbench_base.json"), *[a for p in procs for a in ("--process-bench", p)])
        e = doc["ratios"]["launch_simt_paired_processes"]
        self.assertEqual(e["status"], "absent")
        self.assertIn("process 2: never-written.json", e["why"])
        self.assertEqual(e["processes"][0]["status"], "pass")
        self.assertIn("launch_simt_paired_processes", doc["summary"]["absent_keys"])

    def test_without_process_runs_the_rows_are_not_written_and_bench_md_says_so(self):
        doc, md, _ = self.report(fixture("gbench_base.json"))
        self.assertNotIn("launch_simt_paired_processes", doc["ratios"])
        self.assertIn("Launch rows in processes of their own: not run", md)

    def test_overhead_without_the_separate_raw_launch_is_absent(self):
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedSimtLaunch", [1e6] * 3, 1, ratio=[1.0] * 3, raw_ns=[4400] * 3, tracked_ns=[4400] * 3,
            overhead_ns=[1, 2, 3]))
        doc, _, _ = self.report(bench)
        e = doc["absolute"]["launch_simt_overhead"]
        self.assertEqual(e["value"], 2)
        self.assertEqual(e["status"], "absent")
        self.assertIn("BM_RawLaunch not in this run", e["why"])

    def test_thread_overhead_uses_the_time_per_launch_on_its_thread(self):
        # 4 raw lanes at 500 k launches/s together: 8 us per launch on each thread, so 800 ns is the limit.
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedLaunchThreads/4", [1e6] * 3, 1, ratio=[0.95] * 3, raw_launches_per_s=[5e5] * 3,
            tracked_launches_per_s=[4.75e5] * 3, overhead_ns=[700, 750, 900]) + self.runs(
            "BM_RawLaunchThreads/4", [1e6] * 3, 1, launches_per_s=[5e5] * 3) + self.runs(
            "BM_PairedLaunchThreadsLoaded/2", [1e6] * 3, 1, ratio=[0.9] * 3, raw_launches_per_s=[3e5] * 3,
            tracked_launches_per_s=[2.7e5] * 3, overhead_ns=[800] * 3) + self.runs(
            "BM_RawLaunchThreadsLoaded/2", [1e6] * 3, 1, launches_per_s=[4e5] * 3))
        doc, _, _ = self.report(bench)
        t4 = doc["absolute"]["threads_4_overhead"]
        self.assertAlmostEqual(t4["yardstick"]["raw_ns"], 8000)
        self.assertEqual((t4["value"], t4["status"]), (750, "pass"))
        loaded = doc["absolute"]["threads_2_loaded_overhead"]
        self.assertAlmostEqual(loaded["yardstick"]["raw_ns"], 5000)  # 2 / 400 k/s
        self.assertEqual(loaded["status"], "miss")  # 800 > 500

    def test_host_bytes_are_judged_from_the_host_run_and_sizeof_is_information(self):
        host = self.write_bench("host.json", "host", self.runs(
            "BM_HostBytesPerAllocation", [0.0], 1, bytes_per_allocation=[160.0], blocks_per_allocation=[1.0]) +
            self.runs("BM_HostBytesPerSubmission", [0.0], 1, bytes_per_submission=[272.0]))
        gpu = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_TrackerFootprint", [0.0], 1, per_allocation_bytes=[144.0], per_lease_bytes=[48.0]) + self.runs(
            "BM_HostBytesPerSubmission", [0.0], 1, bytes_per_submission=[9999.0]))  # not the host run's
        doc, md, _ = self.report(gpu, "--host-bench", host)
        a, s = doc["absolute"]["host_bytes_per_allocation"], doc["absolute"]["host_bytes_per_submission"]
        self.assertEqual((a["value"], a["status"], a["target"]), (160.0, "pass", "<= 256"))
        self.assertEqual((s["value"], s["status"]), (272.0, "miss"))
        self.assertEqual(s["bench"], "host:BM_HostBytesPerSubmission")
        self.assertEqual(doc["absolute"]["per_allocation_bytes"]["value"], 144.0)
        self.assertEqual(doc["absolute"]["per_allocation_bytes"]["status"], "info")
        self.assertEqual(doc["absolute"]["per_lease_bytes"]["status"], "info")
        self.assertIn("| 272 B | ≤ 256 B | miss |", md)

    def test_host_bytes_not_measured_are_absent(self):
        host = self.write_bench("host.json", "host", self.runs("BM_HostBytesPerAllocation", [0.0], 1))
        doc, _, _ = self.report(fixture("gbench_base.json"), "--host-bench", host)
        self.assertEqual(doc["absolute"]["host_bytes_per_allocation"]["status"], "absent")
        self.assertEqual(doc["absolute"]["host_bytes_per_submission"]["status"], "absent")

    def test_allocation_is_judged_against_the_own_pool_and_the_default_pool_is_information(self):
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedAllocFree", [1e6] * 3, 1, ratio=[1.2] * 3, raw_ns=[580] * 3, tracked_ns=[700] * 3) + self.runs(
            "BM_PairedAllocFreeDefaultPool", [1e6] * 3, 1, ratio=[1.06] * 3, raw_ns=[660] * 3, tracked_ns=[700] * 3))
        doc, _, _ = self.report(bench)
        self.assertEqual(doc["ratios"]["alloc_free"]["status"], "pass")
        self.assertAlmostEqual(doc["ratios"]["alloc_free"]["value"], 1.2)
        dp = doc["ratios"]["alloc_free_default_pool"]
        self.assertAlmostEqual(dp["value"], 1.06)
        self.assertEqual(dp["status"], "info")

    def test_peer_table_uses_tandems_paired_figures_and_says_who_tracks_memory(self):
        bench = self.write_bench("gpu.json", "cuda", self.runs(
            "BM_PairedSimtLaunch", [1e6] * 3, 1, ratio=[1.07] * 3, raw_ns=[4400] * 3, tracked_ns=[4710] * 3) +
            self.runs("BM_PairedCatalogSimtLaunch", [1e6] * 3, 1, ratio=[1.2] * 3, raw_ns=[4400] * 3,
                      tracked_ns=[5280] * 3) +
            self.runs("BM_RawLaunch", [3370] * 3) + self.runs("BM_TrackedSimtLaunch", [3630] * 3))
        peers = self.write("peers.json", {"format": "tandem.peers/1", "peers": {
            "raw_driver_bindings": {"title": "raw cuLaunchKernel (Python cuda.bindings)", "status": "ok",
                                    "per_launch_us": {"median": 4.1}, "ratio_vs_raw": 1.0, "tracks_accesses": False,
                                    "holds_memory_until_complete": False, "memory_note": "the driver"},
            "torch_add_one": {"title": "PyTorch add_", "status": "ok", "per_launch_us": {"median": 7.0},
                              "ratio_vs_raw": 1.7, "tracks_accesses": False, "holds_memory_until_complete": False,
                              "memory_note": "caching allocator"},
            "cupy_rawkernel": {"title": "CuPy RawKernel", "status": "skipped", "reason": "no cupy"}}})
        _, md, _ = self.report(bench, "--peers", peers)
        table = md[md.index("Launch cost beside peers"):]
        self.assertIn("| raw `cuLaunchKernel` (C++, tandem_bench's paired raw segments) | 4.40 µs | 1.00× | no | no |",
                      table)
        self.assertIn("| tandem::launch, SIMT copy, 2 views (C++, paired) | 4.71 µs | 1.07× | yes | yes |", table)
        self.assertIn("| tandem kernels::launch, SIMT copy, 2 views (C++, paired) | 5.28 µs | 1.20× | yes | yes |", table)
        self.assertIn("| PyTorch add_ | 7.00 µs | 1.70× | no | no | caching allocator |", table)
        self.assertNotIn("3.63 µs", table)  # the separate median is not tandem's row
        self.assertIn("CuPy RawKernel: skipped (no cupy)", table)


if __name__ == "__main__":
    unittest.main(verbosity=2)
