#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`tandem devices --ctest-resources` and the GPU tests' CTest resource groups
(issue 25): the spec is CTest's format with one slot per CUDA device here,
and with it `ctest --resource-spec-file` skips a GPU test that this machine
cannot run (exit 4), never fails it for want of resources.
Usage: ctest_resources_test.py TANDEM CTEST BUILD_DIR (Python 3 stdlib only)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

TANDEM = CTEST = BUILD = None
# One single-GPU scenario and one two-GPU scenario of the library.
ONE_GPU = r"^scenario\.gpu\.01-handles-identity$"
TWO_GPUS = r"^scenario\.gpu\.multigpu\.01-peer-copy-ping-pong$"


def cuda_devices():
    p = subprocess.run([TANDEM, "devices", "--backend", "cuda", "--json"], capture_output=True, text=True)
    return len(json.loads(p.stdout)["devices"]) if p.returncode == 0 else 0


def ctest(spec, regex, gpus_env=None):
    env = dict(os.environ)
    env.pop("TANDEM_CTEST_GPUS", None)
    if gpus_env is not None:
        env["TANDEM_CTEST_GPUS"] = str(gpus_env)
    p = subprocess.run([CTEST, "--test-dir", BUILD, "-R", regex, "--resource-spec-file", spec, "--output-on-failure"],
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


class CtestResourcesTest(unittest.TestCase):
    def test_the_spec_offers_one_slot_per_cuda_device(self):
        p = subprocess.run([TANDEM, "devices", "--ctest-resources"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        spec = json.loads(p.stdout)
        self.assertEqual(spec["version"], {"major": 1, "minor": 0})
        gpus = spec["local"][0]["gpus"]
        self.assertEqual([g["id"] for g in gpus], [str(i) for i in range(cuda_devices())])
        self.assertTrue(all(g["slots"] == 1 for g in gpus))

    def test_gpu_tests_this_machine_cannot_run_are_skipped_not_failed_with_its_spec(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = os.path.join(tmp, "gpus.json")
            with open(spec, "w") as f:
                subprocess.run([TANDEM, "devices", "--ctest-resources"], stdout=f, check=True)
            n = cuda_devices()
            for regex, needs in ((ONE_GPU, 1), (TWO_GPUS, 2)):
                rc, out = ctest(spec, regex)
                self.assertEqual(rc, 0, out)
                self.assertNotIn("Insufficient resources", out)
                self.assertIn("out of 1", out)  # the one test ran (or skipped), not zero
                if n < needs:
                    self.assertIn("Skipped", out)

    def test_a_two_gpu_test_on_a_one_gpu_spec_is_skipped_and_a_miscounted_spec_is_what_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = os.path.join(tmp, "one.json")
            with open(spec, "w") as f:
                json.dump({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": 1}]}]}, f)
            rc, out = ctest(spec, TWO_GPUS, gpus_env=1)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("Insufficient resources", out)
            # The groups are real: told of two GPUs, the test asks for two, and a one-GPU spec cannot meet it.
            rc, out = ctest(spec, TWO_GPUS, gpus_env=2)
            self.assertNotEqual(rc, 0, out)
            self.assertIn("Insufficient resources", out)


if __name__ == "__main__":
    TANDEM, CTEST, BUILD = sys.argv[1:4]
    del sys.argv[1:4]
    unittest.main(verbosity=2)
