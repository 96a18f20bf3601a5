#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/compare on fixture files: Google Benchmark JSON, reports, bench.json with the
noise bands and the A/A runs under results/ (no GPU needed).

    python3 tests/scripts/compare_test.py [TestClass ...]
"""

import copy
import json
import os
import unittest

from scripts_support import BAND, H100_AA, H100_AA_RUNS, H100_BAND, ROOT, SCRIPTS, TempDir, compare, compare_fixture, fixture, run


class CompareGbenchTest(TempDir):
    def test_identical_files_pass(self):
        r = compare(fixture("gbench_base.json"), fixture("gbench_base.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 regressed", r.stdout)

    def test_regression_beyond_noise_fails_and_names_the_benchmark(self):
        r = compare(fixture("gbench_base.json"), fixture("gbench_regressed.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        row = [line for line in r.stdout.splitlines() if line.startswith("BM_TrackedSimtLaunch ")]
        self.assertTrue(row and "REGRESSED" in row[0], r.stdout)

    def test_change_within_the_threshold_passes(self):
        r = compare(fixture("gbench_base.json"), fixture("gbench_regressed.json"), "--threshold", "0.6")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_improvement_passes(self):
        r = compare(fixture("gbench_regressed.json"), fixture("gbench_base.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("improved", r.stdout)

    def test_leak_counter_fails(self):
        r = compare(fixture("gbench_base.json"), fixture("gbench_leak.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("BM_TrackedRoundTrip: leaked_allocations = 1", r.stdout)

    def test_errored_benchmark_fails(self):
        with open(fixture("gbench_base.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:
            if b["run_name"].startswith("BM_RawLaunch/"):
                b.update(error_occurred=True, error_message="no CUDA device")
        r = compare(fixture("gbench_base.json"), self.write("error.json", doc))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("BM_RawLaunch: no CUDA device", r.stdout)

    def test_missing_benchmark_fails_unless_allowed(self):
        with open(fixture("gbench_base.json"), encoding="utf-8") as f:
            doc = json.load(f)
        doc["benchmarks"] = [b for b in doc["benchmarks"] if not b["run_name"].startswith("BM_RawRoundTrip")]
        path = self.write("missing.json", doc)
        self.assertEqual(compare(fixture("gbench_base.json"), path).returncode, 1)
        self.assertEqual(compare(fixture("gbench_base.json"), path, "--allow-missing").returncode, 0)

    def test_noisy_figures_need_a_larger_move(self):
        # cv of ~20 % on both sides: a 30 % move is within 3 sigma of the combined noise.
        with open(fixture("gbench_base.json"), encoding="utf-8") as f:
            doc = json.load(f)
        noisy = copy.deepcopy(doc)
        for b in noisy["benchmarks"]:
            if b["run_name"].startswith("BM_RawLaunch/"):
                b["real_time"] = [3000, 4000, 5000][b["repetition_index"]]
        slower = copy.deepcopy(noisy)
        for b in slower["benchmarks"]:
            if b["run_name"].startswith("BM_RawLaunch/"):
                b["real_time"] *= 1.3
        r = compare(self.write("noisy.json", noisy), self.write("slower.json", slower))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_different_formats_are_a_usage_error(self):
        r = compare(fixture("gbench_base.json"), fixture("report_base.json"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_unreadable_file_is_a_usage_error(self):
        r = compare(fixture("gbench_base.json"), os.path.join(self.tmp.name, "absent.json"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)


class CompareReportTest(unittest.TestCase):
    def test_identical_reports_pass(self):
        r = compare(fixture("report_base.json"), fixture("report_base.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_slower_report_fails(self):
        r = compare(fixture("report_base.json"), fixture("report_regressed.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("throughput.launches_per_s", r.stdout)
        self.assertIn("throughput.submit_ns.p50", r.stdout)

    def test_leaking_report_fails(self):
        r = compare(fixture("report_base.json"), fixture("report_leak.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("leaks.live_allocations = 2", r.stdout)
        self.assertIn("vram", r.stdout)
        self.assertIn("status 'fail'", r.stdout)


class CompareBandTest(TempDir):
    """scripts/compare across machines (issue 23, item 4): the committed noise band, absolute figures over the
    run's raw launch, and a planted 10 % launch slowdown (tests/scripts/compare_fixtures/README.md)."""

    AA = ("aa-50d1681.bench.json", "aa-55c6aee.bench.json")

    def test_same_launch_path_on_two_machines_passes_with_the_band(self):
        r = compare(compare_fixture(self.AA[0]), compare_fixture(self.AA[1]), "--band", BAND)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 regressed", r.stdout)
        self.assertIn("PROVISIONAL", r.stdout)
        self.assertIn("(/ raw launch)", r.stdout)  # absolute ns figures normalised

    def test_the_committed_band_is_the_default_for_the_h200(self):
        r = compare(compare_fixture(self.AA[0]), compare_fixture(self.AA[1]))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("noise band:", r.stdout)

    def test_the_default_band_is_the_one_for_the_runs_card(self):
        # Two committed bands, one card each: runs of the H100 take the H100's, and a card with none takes none.
        bands = os.path.join(self.tmp.name, "results")
        with open(BAND, encoding="utf-8") as f:
            h200 = json.load(f)
        h100 = dict(copy.deepcopy(h200), device="NVIDIA H100 80GB HBM3", note="the H100's")
        for card, band in (("h200", h200), ("h100", h100)):
            os.makedirs(os.path.join(bands, card))
            self.write(os.path.join("results", card, "noise-band.json"), band)

        def on(card, name):
            with open(compare_fixture(name), encoding="utf-8") as f:
                doc = json.load(f)
            doc["device"]["name"] = card
            return self.write(f"{card}-{name}", doc)

        r = compare(on("NVIDIA H100 80GB HBM3", self.AA[0]), on("NVIDIA H100 80GB HBM3", self.AA[1]),
                    "--band-dir", bands)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(f"noise band: {os.path.join(bands, 'h100', 'noise-band.json')}", r.stdout)
        r = compare(on("NVIDIA A100", self.AA[0]), on("NVIDIA A100", self.AA[1]), "--band-dir", bands)
        self.assertIn("no noise band: no committed band is for NVIDIA A100", r.stdout)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # without a band the machine move is flagged
        r = compare(on("NVIDIA H100 80GB HBM3", self.AA[0]), compare_fixture(self.AA[1]), "--band-dir", bands)
        self.assertIn("no noise band: the runs' devices differ", r.stdout)

    def test_without_a_band_the_machine_move_is_flagged(self):
        # What compare said before the band: the drop's max moved 11x with the machine.
        r = compare(compare_fixture(self.AA[0]), compare_fixture(self.AA[1]), "--no-band")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("absolute.drop_max_ns", r.stdout)

    def assert_fails_naming_the_launch_rows(self, base, planted, *extra):
        r = compare(base, planted, *extra)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        regressed = [line for line in r.stdout.splitlines() if line.startswith("regressed:")]
        self.assertTrue(regressed, r.stdout)
        for row in ("ratios.launch_simt_paired", "ratios.launch_tile_paired"):
            self.assertIn(row, regressed[0], base)

    def test_a_planted_ten_percent_launch_slowdown_fails_and_names_the_launch_rows(self):
        for base in self.AA:  # against the other machine's run and against its own source
            self.assert_fails_naming_the_launch_rows(compare_fixture(base),
                                                     compare_fixture("planted-55c6aee.bench.json"), "--band", BAND)

    def test_a_real_planted_launch_slowdown_on_the_h100_fails_from_every_aa_run(self):
        # A -DTANDEM_PLANT_LAUNCH_SLOWDOWN=ON build on a lent H100, the launch rows only.
        planted = os.path.join(H100_AA, "planted", "bench.json")
        for base in H100_AA_RUNS:
            self.assert_fails_naming_the_launch_rows(base, planted, "--band", H100_BAND, "--allow-missing")

    def test_any_two_h100_aa_runs_and_a_held_out_pair_pass_with_the_h100_band(self):
        held_out = [os.path.join(ROOT, "results", "h100", "s38-ae97fb3", d, "bench.json")
                    for d in ("gpu-check-366ec4e", "bench-ae97fb3")]
        pairs = [(a, b) for a in H100_AA_RUNS for b in H100_AA_RUNS if a != b] + [tuple(held_out)]
        for base, new in pairs:
            r = compare(base, new, "--band", H100_BAND)
            self.assertEqual(r.returncode, 0, f"{base} -> {new}\n" + r.stdout + r.stderr)
            self.assertIn(" 0 regressed", r.stdout)

    def test_rows_a_filtered_run_never_measured_are_missing_not_regressed(self):
        with open(compare_fixture(self.AA[1]), encoding="utf-8") as f:
            doc = json.load(f)
        for key in ("alloc_free", "round_trip_p50"):  # what bench_report writes for a row with no figure
            doc["ratios"][key].update(value=None, status="absent")
        path = self.write("filtered.json", doc)
        r = compare(compare_fixture(self.AA[0]), path, "--band", BAND)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("0 regressed", r.stdout)
        self.assertIn("ratios.alloc_free (no value in NEW)", r.stdout)
        r = compare(compare_fixture(self.AA[0]), path, "--band", BAND, "--allow-missing")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("2 missing", r.stdout)

    def test_absolute_ns_figures_are_compared_over_the_runs_raw_launch(self):
        with open(compare_fixture(self.AA[1]), encoding="utf-8") as f:
            doc = json.load(f)
        slower = copy.deepcopy(doc)  # a machine 30 % slower: the raw launch and uniqueness both move
        slower["ratios"]["launch_simt"]["raw_value"] *= 1.3
        slower["absolute"]["uniqueness_ns"]["value"] *= 1.3
        only = copy.deepcopy(doc)  # uniqueness alone 30 % slower: a regression
        only["absolute"]["uniqueness_ns"]["value"] *= 1.3
        base = self.write("base.json", doc)
        r = compare(base, self.write("slower.json", slower), "--no-band")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = compare(base, self.write("only.json", only), "--no-band")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("absolute.uniqueness_ns", r.stdout)
        r = compare(base, self.write("slower.json", slower), "--no-band", "--no-normalise")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)

    def test_leave_one_out_judges_each_run_by_a_band_that_never_saw_it(self):
        a, b = compare_fixture(self.AA[0]), compare_fixture(self.AA[1])
        with open(b, encoding="utf-8") as f:
            doc = json.load(f)
        doc["absolute"]["uniqueness_ns"]["value"] *= 3  # a third machine three times slower at this one figure
        odd = self.write("odd.json", doc)
        out = os.path.join(self.tmp.name, "band.json")
        r = run(os.path.join(SCRIPTS, "compare"), "--fit-band", a, b, odd, "--out", out, "--leave-one-out")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)  # information, not a verdict
        with open(out, encoding="utf-8") as f:
            folds = json.load(f)["leave_one_out"]
        self.assertEqual(len(folds), 6)  # each of 3 runs left out, judged from each of the other 2
        for fold in folds:
            if fold["left_out"] == odd:  # the band of the other two never saw it
                self.assertEqual(fold["regressed"], ["absolute.uniqueness_ns"], fold)
            else:
                self.assertNotIn("absolute.uniqueness_ns", fold["regressed"], fold)
        # 50d1681 left out: its round trip was 10 % slower than 55c6aee's (which changed retirement), and a
        # band of 55c6aee and its copy has not seen that move.
        self.assertIn("leave-one-out (2 of 6 checks passed", r.stdout)
        r = run(os.path.join(SCRIPTS, "compare"), "--fit-band", a, b, "--out", out, "--leave-one-out")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("at least three runs", r.stderr)

    def test_fit_band_from_aa_runs_and_check_a_held_out_pair(self):
        out = os.path.join(self.tmp.name, "band.json")
        a, b = compare_fixture(self.AA[0]), compare_fixture(self.AA[1])
        r = run(os.path.join(SCRIPTS, "compare"), "--fit-band", a, b, "+", b, a, "--out", out, "--factor", "2",
                "--floor", "0.05", "--check", a, b)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out, encoding="utf-8") as f:
            band = json.load(f)
        self.assertEqual(band["format"], "tandem.noise-band/1")
        self.assertEqual(band["device"], "NVIDIA H200")
        e = band["figures"]["ratios.launch_simt_paired"]
        self.assertEqual(e["pairs"], 2)
        self.assertAlmostEqual(e["tolerance"], 0.05)  # the two runs agree to 0.1 %: the floor
        self.assertGreater(band["figures"]["ratios.graph_replay_1"]["tolerance"], 0.5)  # 1.25 -> 1.00, x 2
        r = run(os.path.join(SCRIPTS, "compare"), "--fit-band", a, b, "--out", out, "--check", a,
                compare_fixture("planted-55c6aee.bench.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        r = run(os.path.join(SCRIPTS, "compare"), "--fit-band", a, "--out", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)  # one run is no A/A pair

    def test_an_unreadable_band_is_a_usage_error(self):
        r = compare(compare_fixture(self.AA[0]), compare_fixture(self.AA[1]), "--band",
                    compare_fixture(self.AA[0]))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_help_explains_normalisation_band_and_exit_status(self):
        r = run(os.path.join(SCRIPTS, "compare"), "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for words in ("raw launch median", "noise band", "--fit-band", "Exit status", "held-out"):
            self.assertIn(words, r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
