#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/peers.py failing soft and pairing with its raw baseline (no GPU needed).

    python3 tests/scripts/peers_test.py [TestClass ...]
"""

import importlib.util
import json
import os
import unittest

from scripts_support import SCRIPTS, TempDir, run


class PeersTest(TempDir):
    def load_peers(self):
        spec = importlib.util.spec_from_file_location("peers", os.path.join(SCRIPTS, "peers.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def test_runs_without_gpu_or_modules_and_says_why(self):
        out = os.path.join(self.tmp.name, "peers.json")
        r = run(os.path.join(SCRIPTS, "peers.py"), "--out", out, "--launches", "10", "--trials", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["format"], "tandem.peers/1")
        self.assertEqual(set(doc["peers"]), {"raw_driver_ctypes", "raw_driver_bindings", "cupy_rawkernel",
                                             "cuda_core_launch", "torch_add_one"})
        for e in doc["peers"].values():
            if e["status"] != "ok":
                self.assertTrue(e.get("reason"), e)

    def test_ratios_divide_by_the_cheapest_raw_launch_of_the_same_run(self):
        peers = self.load_peers()
        calls = {"n": 0}

        def fake(cost_us):
            def setup():
                def launch():
                    calls["n"] += 1
                return launch, (lambda: None), {"version": "fake", "cost": cost_us}
            return setup

        def broken():
            raise RuntimeError("driver said no")

        def missing():
            raise peers.Skip("no module named fake")

        peers.PEERS = [("raw_driver_ctypes", "raw ctypes", fake(1)), ("raw_driver_bindings", "raw bindings", fake(1)),
                       ("cupy_rawkernel", "cupy", fake(2)), ("cuda_core_launch", "core", broken),
                       ("torch_add_one", "torch", missing)]
        times = iter([2.0, 1.0, 3.0] * 10)
        peers.trial = lambda launch, sync, n, detail: next(times)
        results, baseline = peers.measure(launches=5, trials=2)
        self.assertEqual(baseline, "raw_driver_bindings")
        self.assertAlmostEqual(results["raw_driver_bindings"]["ratio_vs_raw"], 1.0)
        self.assertAlmostEqual(results["cupy_rawkernel"]["ratio_vs_raw"], 3.0)
        self.assertEqual(results["cuda_core_launch"]["status"], "error")
        self.assertIn("driver said no", results["cuda_core_launch"]["reason"])
        self.assertEqual(results["torch_add_one"]["status"], "skipped")

    def test_each_launcher_is_paired_with_the_raw_launch_round_by_round(self):
        # The raw baseline drifts from 1.0 to 2.0 between rounds and cupy with it: the per-round ratio is 1.5
        # every round, while the ratio of the medians would say 1.5 only by chance of the medians.
        peers = self.load_peers()

        def fake():
            return (lambda: None), (lambda: None), {}

        peers.PEERS = [("raw_driver_bindings", "raw bindings", fake), ("cupy_rawkernel", "cupy", fake)]
        # warm-up trials, then 3 rounds of (raw, cupy)
        times = iter([1.0, 1.0, 1.0, 1.5, 2.0, 3.0, 1.2, 1.8])
        peers.trial = lambda launch, sync, n, detail: next(times)
        results, baseline = peers.measure(launches=5, trials=3)
        self.assertEqual(baseline, "raw_driver_bindings")
        cupy = results["cupy_rawkernel"]
        self.assertAlmostEqual(cupy["ratio_vs_raw"], 1.5)
        self.assertAlmostEqual(cupy["overhead_vs_raw_us"], 0.6)  # median of 0.5, 1.0, 0.6
        self.assertEqual(cupy["paired_rounds"], 3)
        self.assertAlmostEqual(cupy["ratio_vs_raw_medians"], 1.8 / 1.2)
        self.assertIs(cupy["tracks_accesses"], False)
        self.assertIs(cupy["holds_memory_until_complete"], False)
        self.assertTrue(cupy["memory_note"])

    def test_big_buffer_loops_fail_soft_and_report_the_median_trial(self):
        peers = self.load_peers()
        given_back = []

        def loop(times):
            def setup():
                it = iter(times)

                def once():
                    t = next(it)
                    if isinstance(t, Exception):
                        raise t
                    return t, 60 << 20, 100 << 20
                return once, (lambda: given_back.append(1)), {"version": "fake"}
            return setup

        def missing():
            raise peers.Skip("no module named torch")

        peers.BIG_LOOPS = [("cuda_core", "core", loop([0.3, 0.2, 0.25])),
                           ("oom", "fails", loop([0.5, RuntimeError("iteration 2 of 10 (0.06 GiB): out of memory")])),
                           ("torch", "torch", missing)]
        results = peers.measure_big(trials=3)
        core = results["cuda_core"]
        self.assertEqual(core["status"], "ok")
        self.assertEqual(core["loop_s"], {"median": 0.25, "min": 0.2, "max": 0.3})
        self.assertEqual(core["buffer_bytes"], [60 << 20] * 3)
        self.assertEqual(results["oom"]["status"], "error")
        self.assertIn("iteration 2 of 10", results["oom"]["reason"])
        self.assertNotIn("loop_s", results["oom"])  # a loop that failed has no time
        self.assertEqual(results["torch"]["status"], "skipped")
        self.assertEqual(len(given_back), 2 + 3 + 2)  # after each setup, and after every trial

    def test_big_buffer_bytes_are_60_percent_of_free_in_whole_mib(self):
        peers = self.load_peers()
        self.assertEqual(peers.big_buffer_bytes(100 << 20), 60 << 20)
        self.assertEqual(peers.big_buffer_bytes((100 << 20) + 12345) % (1 << 20), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
