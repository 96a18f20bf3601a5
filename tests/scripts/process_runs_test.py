#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/process-runs on the simulated device: runs that hold every rule pass;
a bound no run meets, a failed run and a figure no run reports each fail; bad
input is refused before anything runs (no GPU needed).

    python3 tests/scripts/process_runs_test.py TANDEM_BINARY [TestClass ...]
"""

import json
import os
import sys
import unittest

from scripts_support import ROOT, SCRIPTS, TempDir, run, schema_errors

TANDEM = None  # the binary under test (argv[1])
SCENARIO = os.path.join(ROOT, "scenarios", "04-leases-order-two-streams.json")


def scenario(steps):
    return {"format": "tandem.scenario/1", "name": "process-runs-fixture", "backend": "sim",
            "streams": ["s0"], "steps": steps}


class ProcessRunsTest(TempDir):
    def process_runs(self, *args):
        out = os.path.join(self.tmp.name, "out")
        r = run(os.path.join(SCRIPTS, "process-runs"), "--tandem", TANDEM, "--backend", "sim", "--out", out, *args)
        summary = os.path.join(out, "process-runs.json")
        doc = None
        if os.path.exists(summary):
            with open(summary, encoding="utf-8") as f:
                doc = json.load(f)
            self.assertEqual(schema_errors("process-runs-1", doc), [], "process-runs wrote what its schema rejects")
        return r, doc, out

    def test_runs_that_hold_every_rule_pass_with_a_report_per_process(self):
        r, doc, out = self.process_runs("--runs", "3", "--p99-ms", "1e6", "--spread", "1e6", SCENARIO)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        (f,) = doc["files"]
        self.assertEqual([x["status"] for x in f["rules"].values()], ["pass"] * 3)
        self.assertEqual(f["rules"]["passed"]["value"], 3)
        for i, x in enumerate(f["runs"], 1):
            self.assertEqual((x["exit"], x["status"]), (0, "pass"))
            self.assertTrue(os.path.exists(os.path.join(out, f"04-leases-order-two-streams-{i}.report.json")))
            self.assertGreater(x["retire_p99_ms"], 0)
            self.assertGreater(x["submit_max_ms"], 0)
            self.assertNotIn("retire_profile", x)  # the diagnostic only when asked for
        self.assertFalse(doc["retire_profile"])
        self.assertIn("run 3/3: pass", r.stderr)  # a line per run as it ends
        self.assertIn("process-runs: pass (1 file x 3 processes", r.stdout)

    def test_retire_profile_keeps_each_runs_profile_and_names_the_longest_gap(self):
        r, doc, _ = self.process_runs("--runs", "2", "--p99-ms", "1e6", "--spread", "1e6", "--retire-profile",
                                      SCENARIO)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(doc["retire_profile"])
        for x in doc["files"][0]["runs"]:
            prof = x["retire_profile"]
            self.assertIsNotNone(prof, "a run under --retire-profile printed no profile")
            self.assertGreater(prof["sweep"]["count"], 0)  # the retirement thread swept, timed
            self.assertGreater(prof["sweep"]["max_at_ms"], 0)  # and says when its longest sweep ended
            self.assertIn("between", prof)
        self.assertIn("retirement's longest gap", r.stderr)

    def test_a_latency_bound_no_run_meets_fails_and_names_the_worst_run(self):
        r, doc, _ = self.process_runs("--runs", "2", "--p99-ms", "0", "--spread", "1e6", SCENARIO)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        p99 = doc["files"][0]["rules"]["p99"]
        self.assertEqual(p99["status"], "miss")
        self.assertEqual(p99["value"], max(x["retire_p99_ms"] for x in doc["files"][0]["runs"]))
        self.assertEqual(doc["status"], "fail")

    def test_a_run_whose_check_fails_fails_the_file(self):
        path = self.write("fails.json", scenario([
            {"op": "alloc", "id": "a", "dtype": "f32", "len": 16, "init": "zero"},
            {"op": "check", "what": "views", "of": "a", "value": 2}]))
        r, doc, _ = self.process_runs("--runs", "2", "--p99-ms", "1e6", "--spread", "1e6", path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        passed = doc["files"][0]["rules"]["passed"]
        self.assertEqual((passed["status"], passed["value"], passed["failed_runs"]), ("miss", 0, [1, 2]))

    def test_a_run_without_latency_samples_is_absent_never_a_pass(self):
        path = self.write("quiet.json", scenario([{"op": "alloc", "id": "a", "dtype": "f32", "len": 16},
                                                  {"op": "drop", "id": "a"}]))
        r, doc, _ = self.process_runs("--runs", "2", "--p99-ms", "1e6", "--spread", "1e6", path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        p99 = doc["files"][0]["rules"]["p99"]
        self.assertEqual((p99["status"], p99["value"]), ("absent", None))

    def test_a_run_past_the_timeout_is_killed_and_fails(self):
        path = self.write("slow.json", scenario([{"op": "sleep", "us": 20000000}]))  # 20 s on the host
        r, doc, _ = self.process_runs("--runs", "2", "--timeout", "0.5", path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        runs = doc["files"][0]["runs"]
        self.assertEqual([x["exit"] for x in runs], [124, 124])
        self.assertIn("did not end within 0.5 s", runs[0]["why"])
        self.assertEqual(doc["files"][0]["rules"]["passed"]["failed_runs"], [1, 2])

    def test_bad_input_is_refused_before_anything_runs(self):
        for args, words in ((["--runs", "1", SCENARIO], "at least 2 runs"),
                            ([os.path.join(self.tmp.name, "nosuch.json")], "no such scenario file"),
                            (["--spread", "0.5", SCENARIO], "spread >= 1"),
                            (["--timeout", "0", SCENARIO], "must be positive")):
            r, doc, _ = self.process_runs(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(words, r.stderr)
            self.assertIsNone(doc)
        r = run(os.path.join(SCRIPTS, "process-runs"), "--tandem", os.path.join(self.tmp.name, "none"), SCENARIO)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no tandem binary", r.stderr)


if __name__ == "__main__":
    TANDEM = sys.argv.pop(1)
    unittest.main(verbosity=2)
