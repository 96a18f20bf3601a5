#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/gpu-check --dry-run: the sanitizers' plan over the scenario library (no GPU needed).

    python3 tests/scripts/gpu_check_test.py [TestClass ...]
"""

import os
import subprocess
import unittest

from scripts_support import SCRIPTS


class GpuCheckTest(unittest.TestCase):
    """scripts/gpu-check --dry-run: which scenario files each sanitizer runs or skips (no GPU needed)."""

    def test_dry_run_plans_the_sanitizers_over_the_scenario_library(self):
        r = subprocess.run(["bash", os.path.join(SCRIPTS, "gpu-check"), "--dry-run"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        plan = {}
        for line in r.stdout.splitlines():
            tool, path = line.split()[:2]
            plan.setdefault(path, []).append((tool, line))
        for stress in ("50-stress-big-buffer-loop", "55-stress-safety-reuse-on-the-birth-stream",
                       "56-stress-safety-reuse-on-the-using-stream"):
            (tool, line), = plan[f"scenarios/{stress}.json"]
            self.assertEqual(tool, "skip")
            self.assertIn("fraction_of_free", line)
        self.assertIn(("memcheck", "memcheck scenarios/40-pipeline-rowsum-one-stream.json"),
                      plan["scenarios/40-pipeline-rowsum-one-stream.json"])
        self.assertIn(("racecheck", "racecheck scenarios/40-pipeline-rowsum-one-stream.json"),
                      plan["scenarios/40-pipeline-rowsum-one-stream.json"])
        self.assertTrue(any(p.startswith("scenarios/multi-gpu/") and t == "memcheck"
                            for p, v in plan.items() for t, _ in v))


if __name__ == "__main__":
    unittest.main(verbosity=2)
